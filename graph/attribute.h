// Node attributes, with ONNX's attribute kinds.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched {

using Attribute = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>, Tensor>;

// "int", "float", "string", "ints", "floats", "tensor".
std::string_view attribute_kind_name(const Attribute& a);

class Attributes {
 public:
  void set(std::string name, Attribute value) { map_[std::move(name)] = std::move(value); }
  bool has(const std::string& name) const { return map_.count(name) != 0; }
  const Attribute* find(const std::string& name) const;
  void erase(const std::string& name) { map_.erase(name); }
  const std::map<std::string, Attribute>& all() const { return map_; }
  size_t size() const { return map_.size(); }

  // Typed getters. A present attribute of the wrong kind is an error; an
  // absent one yields `fallback`. An int attribute is accepted where a float
  // is asked for (ONNX writers sometimes do that).
  Result<int64_t> get_int(const std::string& name, int64_t fallback) const;
  Result<float> get_float(const std::string& name, float fallback) const;
  Result<std::string> get_string(const std::string& name, std::string fallback) const;
  Result<std::vector<int64_t>> get_ints(const std::string& name, std::vector<int64_t> fallback) const;
  Result<std::vector<float>> get_floats(const std::string& name, std::vector<float> fallback) const;
  // Required variants: absence is an error naming the attribute.
  Result<int64_t> require_int(const std::string& name) const;
  Result<std::vector<int64_t>> require_ints(const std::string& name) const;

 private:
  std::map<std::string, Attribute> map_;
};

}  // namespace hetsched
