// Shape variants: one model compiled ahead of time for several sets of input
// shapes (say sequence length 1 and 128), each a whole Program, kept together
// in one .hsp file (program_file.h). `hetsched compile` makes them from an
// input's repeated --input-shape; a run picks the variant whose input shapes
// are the ones it is given.
//
// Each variant has its own islands, compiled for its shapes: the variants of
// a model share nothing at run time (weights are packed once per variant).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "graph/shape_inference.h"
#include "hetsched/status.h"
#include "scheduler/program.h"

namespace hetsched {

// "x=1x128, mask=1x128": the variant's input shapes, in input order.
std::string input_shapes_label(const Program& program);
// "x=1x1; x=1x128": every variant's, in order.
std::string shape_variants_label(std::span<const Program> variants);

// The variants are one model: at least one; the same input and output names
// and dtypes in the same order; no two with the same input shapes.
// kInvalidArgument naming the first difference.
Status check_shape_variants(std::span<const Program> variants);

// The variant whose inputs have the shapes in `shapes`. Every name must be an
// input; inputs not named match any shape; no shapes at all pick the first
// variant. kInvalidArgument when none matches or (with inputs left out)
// several do, listing the variants.
Result<size_t> find_shape_variant(std::span<const Program> variants, const InputShapes& shapes);

}  // namespace hetsched
