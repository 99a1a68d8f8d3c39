#include "graph/attribute.h"

namespace hetsched {

std::string_view attribute_kind_name(const Attribute& a) {
  static constexpr std::string_view kNames[] = {"int", "float", "string", "ints", "floats", "tensor"};
  return kNames[a.index()];
}

const Attribute* Attributes::find(const std::string& name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

namespace {
template <typename T>
Result<T> get_as(const Attributes& attrs, const std::string& name, std::string_view want, T fallback) {
  const Attribute* a = attrs.find(name);
  if (!a) return fallback;
  if (const T* v = std::get_if<T>(a)) return *v;
  return invalid_argument("attribute '" + name + "' is " + std::string(attribute_kind_name(*a)) + ", expected " +
                          std::string(want));
}
}  // namespace

Result<int64_t> Attributes::get_int(const std::string& name, int64_t fallback) const {
  return get_as<int64_t>(*this, name, "int", fallback);
}

Result<float> Attributes::get_float(const std::string& name, float fallback) const {
  if (const Attribute* a = find(name))
    if (const int64_t* i = std::get_if<int64_t>(a)) return static_cast<float>(*i);
  return get_as<float>(*this, name, "float", fallback);
}

Result<std::string> Attributes::get_string(const std::string& name, std::string fallback) const {
  return get_as<std::string>(*this, name, "string", std::move(fallback));
}

Result<std::vector<int64_t>> Attributes::get_ints(const std::string& name, std::vector<int64_t> fallback) const {
  return get_as<std::vector<int64_t>>(*this, name, "ints", std::move(fallback));
}

Result<std::vector<float>> Attributes::get_floats(const std::string& name, std::vector<float> fallback) const {
  return get_as<std::vector<float>>(*this, name, "floats", std::move(fallback));
}

Result<int64_t> Attributes::require_int(const std::string& name) const {
  if (!has(name)) return invalid_argument("missing required attribute '" + name + "'");
  return get_int(name, 0);
}

Result<std::vector<int64_t>> Attributes::require_ints(const std::string& name) const {
  if (!has(name)) return invalid_argument("missing required attribute '" + name + "'");
  return get_ints(name, {});
}

}  // namespace hetsched
