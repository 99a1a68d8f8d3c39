// Checking YAML by hand, shared by the profile loader (profile_yaml.cc) and
// the costs file (costs_file.cc), so both word their mistakes the same way:
//
//   "<file>:<line>: <key.path>: <what is wrong> (accepted: <values>)"
//
// yaml-cpp only builds the node tree; every rule of a schema is checked here,
// value by value, before it is read. Internal to profile/: YAML never leaves
// this folder.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hetsched/status.h"

namespace hetsched::yaml_fields {

using Names = std::span<const std::string_view>;

std::string join(Names names);
std::string join(const std::vector<std::string>& names);
bool contains(Names names, std::string_view s);

// "a map", "a list", "a scalar", "nothing".
std::string_view kind_of(const YAML::Node& node);

// Plain scalars are untyped in YAML; a quoted one is a string even when it
// spells a number, so `threads: "2"` is refused rather than guessed at.
bool is_quoted(const YAML::Node& node);

// A value with what is needed to point at it: its key path and its line.
struct Field {
  YAML::Node node;
  std::string path;  // "partition.pin[0].delegate"; "" for the document itself
  int line = 1;      // 1-based
};

// yaml-cpp marks an empty value (`threads:` with nothing after it) at the next
// token, often on a later line, so such values borrow the line of their key.
int line_of(const YAML::Node& node, int fallback);

// A map's or list's own mark is its first entry; what is said about the whole
// block (e.g. "no delegate is enabled") belongs on the line of its key.
Field child(const Field& parent, std::string key, const YAML::Node& node, int key_line);

enum class IntParse { kOk, kNotInteger, kOutOfRange };
// Decimal only, with an optional sign: what counts and indices need.
IntParse to_int(std::string_view s, int64_t& v);

using Entries = std::vector<std::pair<std::string, Field>>;

// Reads values of one document named `source` (the file, or "<string>") and
// turns every mistake into one kInvalidArgument line.
class FieldChecker {
 public:
  explicit FieldChecker(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }

  Status error(const Field& at, const std::string& what, std::string_view accepted) const;
  Status error_at(int line, const std::string& path, const std::string& what, std::string_view accepted) const;

  // The entries of a map in document order, after checking that every key is
  // one of `keys` and appears once. An empty value (`partition:`) reads as an
  // empty map, so a block can be opened with its defaults.
  Result<Entries> entries(const Field& map, Names keys) const;
  // The same for a map whose keys are data (any name, each once);
  // `accepted` describes them in errors.
  Result<Entries> open_entries(const Field& map, std::string_view accepted) const;
  static const Field* find(const Entries& entries, std::string_view key);
  // `key` of a block that must have it: "missing key <key>" on the block's line.
  Result<const Field*> require(const Field& map, const Entries& entries, std::string_view key, Names keys) const;

  Result<std::string> scalar(const Field& f, std::string_view expected, std::string_view accepted) const;
  Result<std::string> non_empty_string(const Field& f, std::string_view accepted) const;
  Result<std::string> choice(const Field& f, Names choices, std::string_view what) const;
  Result<bool> boolean(const Field& f) const;
  Result<int64_t> integer(const Field& f, int64_t min, int64_t max, std::string_view accepted) const;
  // A finite decimal number (`40`, `1.5`, `2e-3`), above `min` (or equal to
  // it when `min_inclusive`). YAML's .inf and .nan, and numbers beyond a
  // double, are refused by name.
  Result<double> number(const Field& f, double min, bool min_inclusive, std::string_view accepted) const;

 private:
  Result<Entries> entries(const Field& map, const Names* keys, std::string_view accepted) const;
  std::string source_;
};

// YAML::Load, its exceptions turned into "<source>:<line>: invalid YAML: <why>".
Result<YAML::Node> load_yaml(const std::string& text, const std::string& source_name);

// A whole file as text. Errors read "failed to read <what> '<path>': <strerror>"
// (kNotFound when it is missing, kInvalidArgument otherwise).
Result<std::string> read_text_file(const std::string& path, std::string_view what);

}  // namespace hetsched::yaml_fields
