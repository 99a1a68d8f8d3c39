// Loads a Profile from YAML and validates it.
//
// yaml-cpp only builds the node tree here; every rule of the schema is checked
// by hand so that each mistake becomes one line naming the file, the line, the
// key path and what would have been accepted. yaml-cpp's exceptions stop at
// parse_profile(); nothing outside this file sees YAML.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <span>

#include "profile/profile.h"

namespace hetsched {
namespace {

using Names = std::span<const std::string_view>;

constexpr std::string_view kTopKeys[] = {"name", "delegates", "partition", "sync", "scheduler", "logging"};
constexpr std::string_view kDelegateKeys[] = {"cpu", "vulkan", "vgf"};
constexpr std::string_view kCpuKeys[] = {"enabled", "engine", "threads"};
constexpr std::string_view kGpuKeys[] = {"enabled", "device", "shared_gpu"};
constexpr std::string_view kSharedGpuKeys[] = {"token", "group", "mode"};
constexpr std::string_view kPartitionKeys[] = {"prefer", "min_partition_size", "retry_pruned", "pin", "fallback"};
constexpr std::string_view kPinKeys[] = {"op", "node", "delegate"};
constexpr std::string_view kSyncKeys[] = {"mode"};
constexpr std::string_view kSchedulerKeys[] = {"max_in_flight"};
constexpr std::string_view kLoggingKeys[] = {"level", "trace"};

constexpr std::string_view kEngines[] = {"xnnpack", "portable"};
constexpr std::string_view kPolicies[] = {"auto", "vgf_first", "vulkan_first", "cpu_first"};
// Every value of the two enums, to list in messages under the names their
// owners give them (profile.h for shared-context modes, sync/ for sync modes).
constexpr SharedContextMode kSharedContextModes[] = {SharedContextMode::kLookupOnly, SharedContextMode::kLookupOrCreate,
                                                     SharedContextMode::kCreateOnly, SharedContextMode::kDisabled};
constexpr SyncMode kSyncModes[] = {SyncMode::kTimeline, SyncMode::kQueueWaitIdle, SyncMode::kNone};
constexpr std::string_view kFallbacks[] = {"cpu", "error"};
constexpr std::string_view kLogLevels[] = {"error", "warn", "info", "debug"};

constexpr std::string_view kPolicyAccepted =
    "auto, vgf_first, vulkan_first, cpu_first, or a list of delegates";

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

template <typename Enum, size_t N>
std::string join_names(const Enum (&values)[N], std::string_view (*name)(Enum)) {
  std::string out;
  for (Enum v : values) {
    if (!out.empty()) out += ", ";
    out += name(v);
  }
  return out;
}

bool contains(Names names, std::string_view s) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

std::string_view kind_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    default: return "nothing";
  }
}

// Plain scalars are untyped in YAML; a quoted one is a string even when it
// spells a number, so `threads: "2"` is refused rather than guessed at.
bool is_quoted(const YAML::Node& node) { return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str"; }

// A value with what is needed to point at it: its key path and its line.
struct Field {
  YAML::Node node;
  std::string path;  // "partition.pin[0].delegate"; "" for the document itself
  int line = 1;      // 1-based
};

// yaml-cpp marks an empty value (`threads:` with nothing after it) at the next
// token, often on a later line, so such values borrow the line of their key.
int line_of(const YAML::Node& node, int fallback) {
  if (!node.IsDefined() || node.IsNull() || node.Mark().is_null()) return fallback;
  return node.Mark().line + 1;
}

enum class IntParse { kOk, kNotInteger, kOutOfRange };

// Decimal only, with an optional sign: what a profile's counts and indices need.
IntParse to_int(std::string_view s, int64_t& v) {
  std::string_view digits = s;
  if (digits.starts_with('+')) digits.remove_prefix(1);
  if (digits.empty()) return IntParse::kNotInteger;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc::result_out_of_range) return IntParse::kOutOfRange;
  if (ec != std::errc() || end != digits.data() + digits.size()) return IntParse::kNotInteger;
  return IntParse::kOk;
}

// A map's or list's own mark is its first entry; what is said about the whole
// block (e.g. "no delegate is enabled") belongs on the line of its key.
Field child(const Field& parent, std::string key, const YAML::Node& node, int key_line) {
  std::string path = parent.path.empty() ? std::move(key) : parent.path + "." + key;
  return Field{node, std::move(path), node.IsScalar() ? line_of(node, key_line) : key_line};
}

class ProfileParser {
 public:
  explicit ProfileParser(std::string source) : source_(std::move(source)) {}

  Result<Profile> parse(const YAML::Node& root);

 private:
  // "<file>:<line>: <key.path>: <what> (accepted: <accepted>)"
  Status error(const Field& at, const std::string& what, std::string_view accepted) const {
    return error_at(at.line, at.path, what, accepted);
  }
  Status error_at(int line, const std::string& path, const std::string& what, std::string_view accepted) const {
    std::string m = source_ + ":" + std::to_string(line) + ": ";
    if (!path.empty()) m += path + ": ";
    m += what;
    if (!accepted.empty()) m += " (accepted: " + std::string(accepted) + ")";
    return invalid_argument(std::move(m));
  }

  // The entries of a map in document order, after checking that every key is
  // one of `keys` and appears once. An empty value (`partition:`) reads as an
  // empty map, so a block can be opened with its defaults.
  Result<std::vector<std::pair<std::string, Field>>> entries(const Field& map, Names keys) const;
  static const Field* find(const std::vector<std::pair<std::string, Field>>& entries, std::string_view key);

  Result<std::string> scalar(const Field& f, std::string_view expected, std::string_view accepted) const;
  Result<std::string> non_empty_string(const Field& f, std::string_view accepted) const;
  Result<std::string> choice(const Field& f, Names choices, std::string_view what) const;
  Result<bool> boolean(const Field& f) const;
  Result<int64_t> integer(const Field& f, int64_t min, int64_t max, std::string_view accepted) const;

  Status parse_delegates(const Field& f, Profile& p) const;
  Status parse_cpu(const Field& f, DelegateProfile& d) const;
  Status parse_gpu(const Field& f, DelegateProfile& d) const;
  Status parse_shared_gpu(const Field& f, SharedGpuKeys& keys) const;
  Result<std::string> parse_device(const Field& f) const;
  Status parse_partition(const Field& f, Profile& p) const;
  Status parse_prefer(const Field& f, PartitionProfile& partition) const;
  Result<PinRule> parse_pin(const Field& f, const Profile& p) const;
  Status parse_sync(const Field& f, Profile& p) const;
  Status parse_scheduler(const Field& f, Profile& p) const;
  Status parse_logging(const Field& f, Profile& p) const;

  std::string source_;
};

Result<std::vector<std::pair<std::string, Field>>> ProfileParser::entries(const Field& map, Names keys) const {
  std::vector<std::pair<std::string, Field>> out;
  if (map.node.IsNull()) return out;
  if (!map.node.IsMap()) {
    std::string got(kind_of(map.node));
    if (map.node.IsScalar()) got += " ('" + map.node.Scalar() + "')";
    return error(map, "expected a map, got " + got, join(keys));
  }
  for (auto it = map.node.begin(); it != map.node.end(); ++it) {
    // A copy: yaml-cpp's iterator yields a temporary pair, so a reference to
    // its key dangles after this statement (AddressSanitizer:
    // stack-use-after-scope on every profile load).
    const YAML::Node key = it->first;
    int key_line = line_of(key, map.line);
    if (!key.IsScalar()) {
      return error_at(key_line, map.path, "a key must be a name, got " + std::string(kind_of(key)), join(keys));
    }
    Field f = child(map, key.Scalar(), it->second, key_line);
    if (!contains(keys, key.Scalar())) return error_at(key_line, f.path, "unknown key", join(keys));
    if (find(out, key.Scalar()) != nullptr) return error_at(key_line, f.path, "duplicate key", "each key once");
    out.emplace_back(key.Scalar(), std::move(f));
  }
  return out;
}

const Field* ProfileParser::find(const std::vector<std::pair<std::string, Field>>& entries, std::string_view key) {
  for (const auto& [k, f] : entries) {
    if (k == key) return &f;
  }
  return nullptr;
}

Result<std::string> ProfileParser::scalar(const Field& f, std::string_view expected, std::string_view accepted) const {
  if (!f.node.IsScalar()) {
    return error(f, "expected " + std::string(expected) + ", got " + std::string(kind_of(f.node)), accepted);
  }
  return f.node.Scalar();
}

Result<std::string> ProfileParser::non_empty_string(const Field& f, std::string_view accepted) const {
  HS_ASSIGN_OR_RETURN(std::string s, scalar(f, "a string", accepted));
  if (s.empty()) return error(f, "must not be empty", accepted);
  return s;
}

Result<std::string> ProfileParser::choice(const Field& f, Names choices, std::string_view what) const {
  HS_ASSIGN_OR_RETURN(std::string s, scalar(f, what, join(choices)));
  if (!contains(choices, s)) return error(f, "'" + s + "' is not " + std::string(what), join(choices));
  return s;
}

Result<bool> ProfileParser::boolean(const Field& f) const {
  constexpr std::string_view kAccepted = "true, false";
  HS_ASSIGN_OR_RETURN(std::string s, scalar(f, "a boolean", kAccepted));
  if (is_quoted(f.node)) return error(f, "expected a boolean, got the string '" + s + "'", kAccepted);
  // YAML 1.2's core schema; yes/no/on/off are left out on purpose, since
  // YAML 1.1 and 1.2 readers disagree about them.
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return error(f, "'" + s + "' is not a boolean", kAccepted);
}

Result<int64_t> ProfileParser::integer(const Field& f, int64_t min, int64_t max, std::string_view accepted) const {
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

Result<Profile> ProfileParser::parse(const YAML::Node& root) {
  Field doc{root, "", 1};
  if (!root.IsDefined() || root.IsNull()) return error(doc, "the profile is empty", join(kTopKeys));
  if (!root.IsMap()) return error(doc, "expected a map, got " + std::string(kind_of(root)), join(kTopKeys));
  HS_ASSIGN_OR_RETURN(auto top, entries(doc, kTopKeys));

  Profile p = default_profile();
  p.source = source_;
  if (const Field* f = find(top, "name")) {
    HS_ASSIGN_OR_RETURN(p.name, non_empty_string(*f, "a non-empty string"));
  }
  if (const Field* f = find(top, "delegates")) HS_RETURN_IF_ERROR(parse_delegates(*f, p));
  // Pins name delegates, so the partition is read after every delegate is known.
  if (const Field* f = find(top, "partition")) HS_RETURN_IF_ERROR(parse_partition(*f, p));
  if (const Field* f = find(top, "sync")) HS_RETURN_IF_ERROR(parse_sync(*f, p));
  if (const Field* f = find(top, "scheduler")) HS_RETURN_IF_ERROR(parse_scheduler(*f, p));
  if (const Field* f = find(top, "logging")) HS_RETURN_IF_ERROR(parse_logging(*f, p));
  return p;
}

Status ProfileParser::parse_delegates(const Field& f, Profile& p) const {
  HS_ASSIGN_OR_RETURN(auto blocks, entries(f, kDelegateKeys));
  for (const auto& [name, block] : blocks) {
    DelegateProfile& d = p.delegates[name];
    // Writing a block means wanting the delegate; `enabled: false` keeps its
    // settings in the file while switching it off.
    d.enabled = true;
    if (name == "cpu") {
      HS_RETURN_IF_ERROR(parse_cpu(block, d));
    } else {
      HS_RETURN_IF_ERROR(parse_gpu(block, d));
    }
  }
  if (p.enabled_delegates_in_order().empty()) {
    return error(f, "no delegate is enabled", "at least one of cpu, vulkan, vgf with enabled: true");
  }
  return Status::ok();
}

Status ProfileParser::parse_cpu(const Field& f, DelegateProfile& d) const {
  HS_ASSIGN_OR_RETURN(auto fields, entries(f, kCpuKeys));
  for (const auto& [key, v] : fields) {
    if (key == "enabled") {
      HS_ASSIGN_OR_RETURN(d.enabled, boolean(v));
    } else if (key == "engine") {
      HS_ASSIGN_OR_RETURN(d.engine, choice(v, kEngines, "an engine"));
    } else if (key == "threads") {
      HS_ASSIGN_OR_RETURN(int64_t threads,
                          integer(v, 0, std::numeric_limits<int>::max(), "an integer >= 0; 0 = all cores"));
      d.threads = static_cast<int>(threads);
    }
  }
  return Status::ok();
}

Status ProfileParser::parse_gpu(const Field& f, DelegateProfile& d) const {
  HS_ASSIGN_OR_RETURN(auto fields, entries(f, kGpuKeys));
  for (const auto& [key, v] : fields) {
    if (key == "enabled") {
      HS_ASSIGN_OR_RETURN(d.enabled, boolean(v));
    } else if (key == "device") {
      HS_ASSIGN_OR_RETURN(d.device, parse_device(v));
    } else if (key == "shared_gpu") {
      HS_RETURN_IF_ERROR(parse_shared_gpu(v, d.shared_gpu));
    }
  }
  return Status::ok();
}

Result<std::string> ProfileParser::parse_device(const Field& f) const {
  constexpr std::string_view kAccepted = "auto, a device index >= 0, or a device name substring";
  HS_ASSIGN_OR_RETURN(std::string s, non_empty_string(f, kAccepted));
  // Anything spelled as a number is an index: no device name is all digits,
  // and "-1" reads as a mistake rather than as a name.
  if (s.find_first_not_of("+-0123456789") != std::string::npos) return s;
  int64_t index = 0;
  if (to_int(s, index) != IntParse::kOk || index < 0 || index > std::numeric_limits<int>::max()) {
    return error(f, "'" + s + "' is not a device index", kAccepted);
  }
  return std::to_string(index);
}

Status ProfileParser::parse_shared_gpu(const Field& f, SharedGpuKeys& keys) const {
  HS_ASSIGN_OR_RETURN(auto fields, entries(f, kSharedGpuKeys));
  for (const auto& [key, v] : fields) {
    if (key == "token") {
      HS_ASSIGN_OR_RETURN(keys.token, non_empty_string(v, "a non-empty string"));
    } else if (key == "group") {
      HS_ASSIGN_OR_RETURN(keys.group, integer(v, 0, std::numeric_limits<int64_t>::max(), "an integer >= 0"));
    } else if (key == "mode") {
      std::string accepted = join_names(kSharedContextModes, shared_context_mode_name);
      HS_ASSIGN_OR_RETURN(std::string mode, scalar(v, "a shared-context mode", accepted));
      std::optional<SharedContextMode> parsed = parse_shared_context_mode(mode);
      if (!parsed) return error(v, "'" + mode + "' is not a shared-context mode", accepted);
      keys.mode = *parsed;
    }
  }
  return Status::ok();
}

Status ProfileParser::parse_partition(const Field& f, Profile& p) const {
  PartitionProfile& partition = p.partition;
  HS_ASSIGN_OR_RETURN(auto fields, entries(f, kPartitionKeys));
  for (const auto& [key, v] : fields) {
    if (key == "prefer") {
      HS_RETURN_IF_ERROR(parse_prefer(v, partition));
    } else if (key == "min_partition_size") {
      HS_ASSIGN_OR_RETURN(int64_t size, integer(v, 1, std::numeric_limits<int>::max(), "an integer >= 1"));
      partition.min_partition_size = static_cast<int>(size);
    } else if (key == "retry_pruned") {
      HS_ASSIGN_OR_RETURN(partition.retry_pruned, boolean(v));
    } else if (key == "pin") {
      if (v.node.IsNull()) continue;
      if (!v.node.IsSequence()) {
        return error(v, "expected a list, got " + std::string(kind_of(v.node)),
                     "a list of {op: <type>, delegate: <name>} or {node: <name>, delegate: <name>}");
      }
      for (size_t i = 0; i < v.node.size(); ++i) {
        Field item{v.node[i], v.path + "[" + std::to_string(i) + "]", line_of(v.node[i], v.line)};
        HS_ASSIGN_OR_RETURN(PinRule rule, parse_pin(item, p));
        partition.pins.push_back(std::move(rule));
      }
    } else if (key == "fallback") {
      HS_ASSIGN_OR_RETURN(partition.fallback, choice(v, kFallbacks, "a fallback"));
    }
  }
  return Status::ok();
}

Status ProfileParser::parse_prefer(const Field& f, PartitionProfile& partition) const {
  if (!f.node.IsSequence()) {
    HS_ASSIGN_OR_RETURN(std::string policy, scalar(f, "a policy or a list of delegates", kPolicyAccepted));
    if (!contains(kPolicies, policy)) return error(f, "'" + policy + "' is not a policy", kPolicyAccepted);
    partition.prefer = policy;
    partition.order.clear();
    return Status::ok();
  }
  if (f.node.size() == 0) return error(f, "the list of delegates is empty", kPolicyAccepted);
  std::vector<std::string> order;
  for (size_t i = 0; i < f.node.size(); ++i) {
    Field item{f.node[i], f.path + "[" + std::to_string(i) + "]", line_of(f.node[i], f.line)};
    HS_ASSIGN_OR_RETURN(std::string name, choice(item, kDelegateKeys, "a delegate"));
    if (std::find(order.begin(), order.end(), name) != order.end()) {
      return error(item, "'" + name + "' is listed twice", "each delegate at most once");
    }
    order.push_back(std::move(name));
  }
  partition.prefer = "list";
  partition.order = std::move(order);
  return Status::ok();
}

Result<PinRule> ProfileParser::parse_pin(const Field& f, const Profile& p) const {
  if (f.node.IsNull()) return error(f, "expected a map, got nothing", join(kPinKeys));
  HS_ASSIGN_OR_RETURN(auto fields, entries(f, kPinKeys));
  const Field* op = find(fields, "op");
  const Field* node = find(fields, "node");
  const Field* delegate = find(fields, "delegate");
  constexpr std::string_view kOneOf = "exactly one of op, node";
  if (op != nullptr && node != nullptr) return error(f, "names both op and node", kOneOf);
  if (op == nullptr && node == nullptr) return error(f, "names neither op nor node", kOneOf);
  // The op is not checked against the op set: an op the graph never uses
  // simply pins nothing, and the partition preview reports every pin it applied.
  PinRule rule;
  if (op != nullptr) {
    HS_ASSIGN_OR_RETURN(rule.op, non_empty_string(*op, "an op type, e.g. Softmax"));
  } else {
    HS_ASSIGN_OR_RETURN(rule.node, non_empty_string(*node, "a node name"));
  }

  std::vector<std::string> enabled = p.enabled_delegates_in_order();
  if (delegate == nullptr) return error(f, "missing key delegate", join(enabled));
  HS_ASSIGN_OR_RETURN(rule.delegate, choice(*delegate, kDelegateKeys, "a delegate"));
  if (!p.delegate_enabled(rule.delegate)) {
    return error(*delegate, "'" + rule.delegate + "' is not enabled in this profile", join(enabled));
  }
  return rule;
}

Status ProfileParser::parse_sync(const Field& f, Profile& p) const {
  HS_ASSIGN_OR_RETURN(auto fields, entries(f, kSyncKeys));
  if (const Field* v = find(fields, "mode")) {
    std::string accepted = join_names(kSyncModes, sync_mode_name);
    HS_ASSIGN_OR_RETURN(std::string mode, scalar(*v, "a sync mode", accepted));
    Result<SyncMode> parsed = parse_sync_mode(mode);
    if (!parsed.is_ok()) return error(*v, "'" + mode + "' is not a sync mode", accepted);
    p.sync = *parsed;
  }
  return Status::ok();
}

Status ProfileParser::parse_scheduler(const Field& f, Profile& p) const {
  HS_ASSIGN_OR_RETURN(auto fields, entries(f, kSchedulerKeys));
  if (const Field* v = find(fields, "max_in_flight")) {
    HS_ASSIGN_OR_RETURN(int64_t n, integer(*v, 1, std::numeric_limits<int>::max(), "an integer >= 1"));
    p.max_in_flight = static_cast<int>(n);
  }
  return Status::ok();
}

Status ProfileParser::parse_logging(const Field& f, Profile& p) const {
  HS_ASSIGN_OR_RETURN(auto fields, entries(f, kLoggingKeys));
  if (const Field* v = find(fields, "level")) {
    HS_ASSIGN_OR_RETURN(p.log_level, choice(*v, kLogLevels, "a log level"));
  }
  if (const Field* v = find(fields, "trace")) {
    HS_ASSIGN_OR_RETURN(p.trace_path, scalar(*v, "a path", "a file path, or \"\" for no trace"));
  }
  return Status::ok();
}

}  // namespace

Result<Profile> parse_profile(const std::string& yaml_text, const std::string& source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    int line = e.mark.is_null() ? 1 : e.mark.line + 1;
    return invalid_argument(source_name + ":" + std::to_string(line) + ": invalid YAML: " + e.msg);
  }
  // The parser checks every node's type before reading it, so a throw here is
  // a missed check; it still leaves as a Status, never as an exception.
  try {
    return ProfileParser(source_name).parse(root);
  } catch (const YAML::Exception& e) {
    return internal_error("failed to read profile '" + source_name + "': " + e.what());
  }
}

Result<Profile> load_profile(const std::string& path) {
  auto fail = [&](int err) {
    std::string m = "failed to read profile '" + path + "': " + std::strerror(err);
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
  return parse_profile(text, path);
}

}  // namespace hetsched
