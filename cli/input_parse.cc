#include "cli/input_parse.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "graph/tensor_size.h"

namespace hetsched::cli {

Result<std::vector<InputShapes>> parse_shape_variants(const std::vector<std::string>& specs) {
  std::map<std::string, std::vector<Shape>> by_name;  // each input's shapes, in the order given
  std::vector<std::string> order;
  for (const std::string& spec : specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument("--input-shape '" + spec + "' must be NAME=DIMS, e.g. x=1x3x224x224");
    auto shape = parse_shape(spec.substr(eq + 1));
    if (!shape.is_ok()) return shape.status().with_context("--input-shape '" + spec + "': ");
    const std::string name = spec.substr(0, eq);
    if (!by_name.count(name)) order.push_back(name);
    by_name[name].push_back(std::move(shape).value());
  }
  // The k-th variant takes each input's k-th shape, or its only one.
  size_t count = 1;
  for (const std::string& name : order) {
    const size_t n = by_name[name].size();
    if (n == 1) continue;
    if (count > 1 && n != count)
      return invalid_argument("--input-shape gives '" + name + "' " + std::to_string(n) + " shapes but another input " +
                              std::to_string(count) + "; inputs with several shapes (shape variants) need as many each");
    count = n;
  }
  std::vector<InputShapes> variants(count);
  for (const std::string& name : order)
    for (size_t k = 0; k < count; ++k) variants[k][name] = by_name[name][by_name[name].size() == 1 ? 0 : k];
  return variants;
}

Result<InputShapes> parse_input_shapes(const std::vector<std::string>& specs) {
  HS_ASSIGN_OR_RETURN(std::vector<InputShapes> variants, parse_shape_variants(specs));
  if (variants.size() > 1)
    return invalid_argument("--input-shape names an input more than once; several shapes for one input make shape "
                            "variants, which only `hetsched compile` builds (a run takes one shape per input)");
  return std::move(variants.front());
}

Result<Tensor> read_raw_tensor(std::istream& in, const std::string& input_name, const TensorType& type,
                               const std::string& path) {
  const std::optional<size_t> needed = checked_byte_size(type);
  if (!needed || !has_representable_size(type))
    return invalid_argument("failed to read input '" + input_name + "' from '" + path + "': " + type.to_string() +
                            " has no valid byte size (a negative dimension, or 2^63 bytes or more)");
  // Reads at most the bytes the input needs, plus one to tell a longer file
  // (or an endless one: /dev/zero) from an exact one. Read in chunks into a
  // buffer that grows with what arrives: allocating `needed` up front would
  // let a mistyped --input-shape (1000000x1000000) exhaust memory before the
  // file's size is even looked at.
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<char> bytes;
  while (bytes.size() <= *needed) {
    const size_t want = std::min(kChunk, *needed + 1 - bytes.size());
    const size_t old = bytes.size();
    bytes.resize(old + want);
    in.read(bytes.data() + old, static_cast<std::streamsize>(want));
    bytes.resize(old + static_cast<size_t>(in.gcount()));
    if (static_cast<size_t>(in.gcount()) < want) break;
  }
  if (bytes.size() != *needed)
    return invalid_argument("input '" + input_name + "' file '" + path + "' has " +
                            (bytes.size() > *needed ? "more than " + std::to_string(*needed)
                                                    : std::to_string(bytes.size())) +
                            " bytes, but " + type.to_string() + " needs " + std::to_string(*needed) +
                            " (raw little-endian, no header)");
  Tensor t = Tensor::uninitialized(type);
  if (*needed) std::memcpy(t.raw(), bytes.data(), *needed);
  return t;
}

}  // namespace hetsched::cli
