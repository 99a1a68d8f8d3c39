// ONNX Einsum's equation, read once for shape inference, the portable
// kernel and the lowering to MatMul (passes/lower_einsum.h), so the three
// can never read one equation differently.
//
// Each subscript letter (a-z, A-Z) and each dim an ellipsis ("...") stands
// for gets an id; spaces are ignored. Ellipsis dims are aligned from the
// right across operands and broadcast as numpy does; a letter's dims must
// be equal, or 1 where the letter's size is larger (broadcast). Without
// "->" the output is the ellipsis dims, then the letters that appear once,
// in alphabetical order (numpy's implicit mode).
#pragma once

#include <string>
#include <vector>

#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched {

struct EinsumSpec {
  std::vector<std::vector<int>> operands;  // per input, the id of each of its dims
  std::vector<int> output;                 // the id of each output dim
  std::vector<int64_t> sizes;              // per id: its size (the largest of its dims)
  int num_ids() const { return static_cast<int>(sizes.size()); }
};

// The equation read against the inputs' shapes; an error names what is
// wrong (an unknown character, a rank that does not match the subscripts,
// an output letter no input has, dims that cannot broadcast...).
Result<EinsumSpec> parse_einsum(const std::string& equation, const std::vector<Shape>& shapes);

}  // namespace hetsched
