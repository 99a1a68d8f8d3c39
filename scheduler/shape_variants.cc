#include "scheduler/shape_variants.h"

namespace hetsched {

namespace {
const ProgramTensor& input(const Program& p, size_t i) { return p.tensors[static_cast<size_t>(p.inputs[i])]; }
const ProgramTensor& output(const Program& p, size_t i) { return p.tensors[static_cast<size_t>(p.outputs[i])]; }

std::string dims(const Shape& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + (shape[i] < 0 ? "?" : std::to_string(shape[i]));
  return s.empty() ? "scalar" : s;
}

// Names and dtypes of `list` (inputs or outputs) agree between two variants.
Status same_interface(const Program& a, const Program& b, size_t b_index, bool inputs) {
  const char* what = inputs ? "input" : "output";
  const size_t n = inputs ? a.inputs.size() : a.outputs.size();
  const size_t m = inputs ? b.inputs.size() : b.outputs.size();
  if (n != m)
    return invalid_argument("shape variant " + std::to_string(b_index) + " has " + std::to_string(m) + " " + what +
                            "s, variant 0 has " + std::to_string(n));
  for (size_t i = 0; i < n; ++i) {
    const ProgramTensor& x = inputs ? input(a, i) : output(a, i);
    const ProgramTensor& y = inputs ? input(b, i) : output(b, i);
    if (x.name != y.name || x.type.dtype != y.type.dtype)
      return invalid_argument("shape variant " + std::to_string(b_index) + "'s " + what + " " + std::to_string(i) +
                              " is '" + y.name + "' (" + y.type.to_string() + "), variant 0's is '" + x.name + "' (" +
                              x.type.to_string() + "): variants must be one model");
  }
  return Status::ok();
}

bool same_input_shapes(const Program& a, const Program& b) {
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if (input(a, i).type.shape != input(b, i).type.shape) return false;
  return true;
}
}  // namespace

std::string input_shapes_label(const Program& program) {
  std::string s;
  for (size_t i = 0; i < program.inputs.size(); ++i)
    s += (i ? ", " : "") + input(program, i).name + "=" + dims(input(program, i).type.shape);
  return s;
}

std::string shape_variants_label(std::span<const Program> variants) {
  std::string s;
  for (size_t i = 0; i < variants.size(); ++i) s += (i ? "; " : "") + input_shapes_label(variants[i]);
  return s;
}

Status check_shape_variants(std::span<const Program> variants) {
  if (variants.empty()) return invalid_argument("no program to hold (shape variants need at least one)");
  for (size_t v = 1; v < variants.size(); ++v) {
    HS_RETURN_IF_ERROR(same_interface(variants[0], variants[v], v, /*inputs=*/true));
    HS_RETURN_IF_ERROR(same_interface(variants[0], variants[v], v, /*inputs=*/false));
    for (size_t w = 0; w < v; ++w)
      if (same_input_shapes(variants[w], variants[v]))
        return invalid_argument("shape variants " + std::to_string(w) + " and " + std::to_string(v) +
                                " have the same input shapes (" + input_shapes_label(variants[v]) + ")");
  }
  return Status::ok();
}

Result<size_t> find_shape_variant(std::span<const Program> variants, const InputShapes& shapes) {
  if (variants.empty()) return invalid_argument("no shape variant to pick from");
  const Program& first = variants.front();
  for (const auto& [name, shape] : shapes) {
    bool known = false;
    for (size_t i = 0; i < first.inputs.size(); ++i) known = known || input(first, i).name == name;
    if (!known) return invalid_argument("input shape for '" + name + "': the model has no input of that name");
  }
  std::vector<size_t> matches;
  for (size_t v = 0; v < variants.size(); ++v) {
    bool match = true;
    for (size_t i = 0; i < variants[v].inputs.size() && match; ++i) {
      auto it = shapes.find(input(variants[v], i).name);
      match = it == shapes.end() || it->second == input(variants[v], i).type.shape;
    }
    if (match) matches.push_back(v);
  }
  if (matches.size() == 1 || (shapes.empty() && !matches.empty())) return matches.front();
  std::string given;
  for (const auto& [name, shape] : shapes) given += (given.empty() ? "" : ", ") + name + "=" + dims(shape);
  if (matches.empty())
    return invalid_argument("input shapes " + given + " match none of the compiled shape variants (" +
                            shape_variants_label(variants) + ")");
  return invalid_argument("input shapes " + given + " match " + std::to_string(matches.size()) +
                          " of the compiled shape variants (" + shape_variants_label(variants) +
                          "); give every input's shape");
}

}  // namespace hetsched
