#include "profile/yaml_fields.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

namespace hetsched::yaml_fields {

std::string join(Names names) {
  std::string out;
  for (std::string_view n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

bool contains(Names names, std::string_view s) { return std::find(names.begin(), names.end(), s) != names.end(); }

std::string_view kind_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    default: return "nothing";
  }
}

bool is_quoted(const YAML::Node& node) { return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str"; }

int line_of(const YAML::Node& node, int fallback) {
  if (!node.IsDefined() || node.IsNull() || node.Mark().is_null()) return fallback;
  return node.Mark().line + 1;
}

Field child(const Field& parent, std::string key, const YAML::Node& node, int key_line) {
  std::string path = parent.path.empty() ? std::move(key) : parent.path + "." + key;
  return Field{node, std::move(path), node.IsScalar() ? line_of(node, key_line) : key_line};
}

IntParse to_int(std::string_view s, int64_t& v) {
  std::string_view digits = s;
  if (digits.starts_with('+')) digits.remove_prefix(1);
  if (digits.empty()) return IntParse::kNotInteger;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc::result_out_of_range) return IntParse::kOutOfRange;
  if (ec != std::errc() || end != digits.data() + digits.size()) return IntParse::kNotInteger;
  return IntParse::kOk;
}

Status FieldChecker::error(const Field& at, const std::string& what, std::string_view accepted) const {
  return error_at(at.line, at.path, what, accepted);
}

Status FieldChecker::error_at(int line, const std::string& path, const std::string& what,
                              std::string_view accepted) const {
  std::string m = source_ + ":" + std::to_string(line) + ": ";
  if (!path.empty()) m += path + ": ";
  m += what;
  if (!accepted.empty()) m += " (accepted: " + std::string(accepted) + ")";
  return invalid_argument(std::move(m));
}

Result<Entries> FieldChecker::entries(const Field& map, Names keys) const {
  return entries(map, &keys, join(keys));
}

Result<Entries> FieldChecker::open_entries(const Field& map, std::string_view accepted) const {
  return entries(map, nullptr, accepted);
}

Result<Entries> FieldChecker::entries(const Field& map, const Names* keys, std::string_view accepted) const {
  Entries out;
  if (map.node.IsNull()) return out;
  if (!map.node.IsMap()) {
    std::string got(kind_of(map.node));
    if (map.node.IsScalar()) got += " ('" + map.node.Scalar() + "')";
    return error(map, "expected a map, got " + got, accepted);
  }
  for (auto it = map.node.begin(); it != map.node.end(); ++it) {
    // A copy: yaml-cpp's iterator yields a temporary pair, so a reference to
    // its key dangles after this statement (AddressSanitizer:
    // stack-use-after-scope on every profile load).
    const YAML::Node key = it->first;
    int key_line = line_of(key, map.line);
    if (!key.IsScalar()) {
      return error_at(key_line, map.path, "a key must be a name, got " + std::string(kind_of(key)), accepted);
    }
    Field f = child(map, key.Scalar(), it->second, key_line);
    if (keys && !contains(*keys, key.Scalar())) return error_at(key_line, f.path, "unknown key", accepted);
    if (find(out, key.Scalar()) != nullptr) return error_at(key_line, f.path, "duplicate key", "each key once");
    out.emplace_back(key.Scalar(), std::move(f));
  }
  return out;
}

const Field* FieldChecker::find(const Entries& entries, std::string_view key) {
  for (const auto& [k, f] : entries) {
    if (k == key) return &f;
  }
  return nullptr;
}

Result<const Field*> FieldChecker::require(const Field& map, const Entries& entries, std::string_view key,
                                           Names keys) const {
  const Field* f = find(entries, key);
  if (f == nullptr) return error(map, "missing key " + std::string(key), join(keys));
  return f;
}

Result<std::string> FieldChecker::scalar(const Field& f, std::string_view expected, std::string_view accepted) const {
  if (!f.node.IsScalar()) {
    return error(f, "expected " + std::string(expected) + ", got " + std::string(kind_of(f.node)), accepted);
  }
  return f.node.Scalar();
}

Result<std::string> FieldChecker::non_empty_string(const Field& f, std::string_view accepted) const {
  HS_ASSIGN_OR_RETURN(std::string s, scalar(f, "a string", accepted));
  if (s.empty()) return error(f, "must not be empty", accepted);
  return s;
}

Result<std::string> FieldChecker::choice(const Field& f, Names choices, std::string_view what) const {
  HS_ASSIGN_OR_RETURN(std::string s, scalar(f, what, join(choices)));
  if (!contains(choices, s)) return error(f, "'" + s + "' is not " + std::string(what), join(choices));
  return s;
}

Result<bool> FieldChecker::boolean(const Field& f) const {
  constexpr std::string_view kAccepted = "true, false";
  HS_ASSIGN_OR_RETURN(std::string s, scalar(f, "a boolean", kAccepted));
  if (is_quoted(f.node)) return error(f, "expected a boolean, got the string '" + s + "'", kAccepted);
  // YAML 1.2's core schema; yes/no/on/off are left out on purpose, since
  // YAML 1.1 and 1.2 readers disagree about them.
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return error(f, "'" + s + "' is not a boolean", kAccepted);
}

Result<int64_t> FieldChecker::integer(const Field& f, int64_t min, int64_t max, std::string_view accepted) const {
  HS_ASSIGN_OR_RETURN(std::string s, scalar(f, "an integer", accepted));
  if (is_quoted(f.node)) return error(f, "expected an integer, got the string '" + s + "'", accepted);
  int64_t v = 0;
  switch (to_int(s, v)) {
    case IntParse::kNotInteger: return error(f, "'" + s + "' is not an integer", accepted);
    case IntParse::kOutOfRange: return error(f, "'" + s + "' is out of range", accepted);
    case IntParse::kOk: break;
  }
  if (v < min || v > max) return error(f, "'" + s + "' is out of range", accepted);
  return v;
}

Result<double> FieldChecker::number(const Field& f, double min, bool min_inclusive, std::string_view accepted) const {
  HS_ASSIGN_OR_RETURN(std::string s, scalar(f, "a number", accepted));
  if (is_quoted(f.node)) return error(f, "expected a number, got the string '" + s + "'", accepted);
  std::string_view text = s;
  if (text.starts_with('+')) text.remove_prefix(1);
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.starts_with('-')) lower.erase(0, 1);
  // YAML spells them .inf and .nan; from_chars would also take inf and nan.
  if (lower == ".inf" || lower == ".nan" || lower == "inf" || lower == "nan" || lower == "infinity") {
    return error(f, "'" + s + "' is not a finite number", accepted);
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) return error(f, "'" + s + "' is out of range", accepted);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return error(f, "'" + s + "' is not a number", accepted);
  }
  if (!std::isfinite(v)) return error(f, "'" + s + "' is not a finite number", accepted);
  char min_text[32];
  const auto printed = std::to_chars(min_text, min_text + sizeof min_text, min);
  const std::string bound = (min_inclusive ? ">= " : "> ") + std::string(min_text, printed.ptr);
  if (min_inclusive ? v < min : v <= min) return error(f, "'" + s + "' must be " + bound, accepted);
  return v;
}

Result<YAML::Node> load_yaml(const std::string& text, const std::string& source_name) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    return invalid_argument(source_name + ":" + std::to_string(line) + ": invalid YAML: " + e.msg);
  }
}

Result<std::string> read_text_file(const std::string& path, std::string_view what) {
  auto fail = [&](int err) {
    std::string m = "failed to read " + std::string(what) + " '" + path + "': " + std::strerror(err);
    return err == ENOENT ? not_found(std::move(m)) : invalid_argument(std::move(m));
  };
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return fail(errno);
  std::string text;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, file.get())) > 0) text.append(buf, n);
  // A directory opens fine and fails on the first read (EISDIR).
  if (std::ferror(file.get())) return fail(errno);
  return text;
}

}  // namespace hetsched::yaml_fields
