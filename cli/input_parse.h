// What the command line says about model inputs, parsed without touching a
// model or a session: --input-shape specs and the bytes of raw tensor files.
// Kept apart from cli_common.h (CLI11, sessions) so that the fuzz target
// test/fuzz/cli_input_fuzz.cc can call exactly what `hetsched run` calls.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "graph/shape_inference.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched::cli {

// "--input-shape NAME=DIMS" (repeatable) → shapes by input name, one shape
// per input (a name given twice is an error that points at `compile`).
Result<InputShapes> parse_input_shapes(const std::vector<std::string>& specs);
// --input-shape for `compile`: an input named k times gives k shape variants,
// the k-th taking each input's k-th shape (or its only one); inputs named
// more than once must be named equally often.
Result<std::vector<InputShapes>> parse_shape_variants(const std::vector<std::string>& specs);

// A raw tensor file (little-endian, no header) for input `input_name` of
// `type`, read from `in`; `path` names it in errors. The file must hold
// exactly the type's bytes. Memory grows with the bytes actually read, so a
// huge --input-shape with a small file (or a type whose size overflows) is
// an error, not an allocation of the declared size.
Result<Tensor> read_raw_tensor(std::istream& in, const std::string& input_name, const TensorType& type,
                               const std::string& path);

}  // namespace hetsched::cli
