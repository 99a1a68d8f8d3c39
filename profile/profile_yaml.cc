// Loads a Profile from YAML and validates it.
//
// yaml-cpp only builds the node tree here; every rule of the schema is checked
// by hand (with the value checks of yaml_fields.h) so that each mistake
// becomes one line naming the file, the line, the key path and what would
// have been accepted. yaml-cpp's exceptions stop at parse_profile(); nothing
// outside profile/ sees YAML.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <limits>

#include "profile/profile.h"
#include "profile/yaml_fields.h"

namespace hetsched {
namespace {

using namespace yaml_fields;

constexpr std::string_view kTopKeys[] = {"name", "delegates", "partition", "sync", "scheduler", "logging", "limits"};
constexpr std::string_view kLimitsKeys[] = {"max_tensor_bytes", "max_arena_bytes"};
constexpr std::string_view kDelegateKeys[] = {"cpu", "vulkan", "vgf"};
constexpr std::string_view kCpuKeys[] = {"enabled", "engine", "threads"};
constexpr std::string_view kGpuKeys[] = {"enabled", "device", "shared_gpu", "precision", "storage"};
// What convolutions and matrix products multiply in on both GPU delegates
// (`precision`; they check it again against shared_gpu/precision.h's list,
// as API users pass it without a profile).
constexpr std::string_view kPrecisions[] = {"fp32", "fp16", "auto"};
// The type of the tensors between their kernels (`storage`, checked again
// by the delegates: the VGF delegate refuses fp16).
constexpr std::string_view kStorages[] = {"auto", "fp32", "fp16"};
constexpr std::string_view kSharedGpuKeys[] = {"token", "group", "mode"};
constexpr std::string_view kPartitionKeys[] = {"prefer", "min_partition_size", "retry_pruned", "pin", "fallback",
                                               "costs"};
constexpr std::string_view kPinKeys[] = {"op", "node", "delegate"};
constexpr std::string_view kSyncKeys[] = {"mode"};
constexpr std::string_view kSchedulerKeys[] = {"max_in_flight", "gpu_wait_timeout_ms"};
constexpr std::string_view kLoggingKeys[] = {"level", "trace", "profile_ops"};

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

template <typename Enum, size_t N>
std::string join_names(const Enum (&values)[N], std::string_view (*name)(Enum)) {
  std::string out;
  for (Enum v : values) {
    if (!out.empty()) out += ", ";
    out += name(v);
  }
  return out;
}

// The profile's schema on top of the shared value checks (yaml_fields.h).
class ProfileParser : private FieldChecker {
 public:
  explicit ProfileParser(std::string source) : FieldChecker(std::move(source)) {}

  Result<Profile> parse(const YAML::Node& root);

 private:
  Status parse_delegates(const Field& f, Profile& p) const;
  Status parse_cpu(const Field& f, DelegateProfile& d) const;
  Status parse_gpu(const Field& f, const std::string& name, DelegateProfile& d) const;
  Status parse_shared_gpu(const Field& f, SharedGpuKeys& keys) const;
  Result<std::string> parse_device(const Field& f) const;
  Status parse_partition(const Field& f, Profile& p) const;
  Status parse_prefer(const Field& f, PartitionProfile& partition) const;
  Result<PinRule> parse_pin(const Field& f, const Profile& p) const;
  Status parse_sync(const Field& f, Profile& p) const;
  Status parse_scheduler(const Field& f, Profile& p) const;
  Status parse_logging(const Field& f, Profile& p) const;
  Status parse_limits(const Field& f, Profile& p) const;
};

Result<Profile> ProfileParser::parse(const YAML::Node& root) {
  Field doc{root, "", 1};
  if (!root.IsDefined() || root.IsNull()) return error(doc, "the profile is empty", join(kTopKeys));
  if (!root.IsMap()) return error(doc, "expected a map, got " + std::string(kind_of(root)), join(kTopKeys));
  HS_ASSIGN_OR_RETURN(auto top, entries(doc, kTopKeys));

  Profile p = default_profile();
  p.source = source();
  if (const Field* f = find(top, "name")) {
    HS_ASSIGN_OR_RETURN(p.name, non_empty_string(*f, "a non-empty string"));
  }
  if (const Field* f = find(top, "delegates")) HS_RETURN_IF_ERROR(parse_delegates(*f, p));
  // Pins name delegates, so the partition is read after every delegate is known.
  if (const Field* f = find(top, "partition")) HS_RETURN_IF_ERROR(parse_partition(*f, p));
  if (const Field* f = find(top, "sync")) HS_RETURN_IF_ERROR(parse_sync(*f, p));
  if (const Field* f = find(top, "scheduler")) HS_RETURN_IF_ERROR(parse_scheduler(*f, p));
  if (const Field* f = find(top, "logging")) HS_RETURN_IF_ERROR(parse_logging(*f, p));
  if (const Field* f = find(top, "limits")) HS_RETURN_IF_ERROR(parse_limits(*f, p));
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
      HS_RETURN_IF_ERROR(parse_gpu(block, name, d));
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

Status ProfileParser::parse_gpu(const Field& f, const std::string& name, DelegateProfile& d) const {
  HS_ASSIGN_OR_RETURN(auto fields, entries(f, kGpuKeys));
  for (const auto& [key, v] : fields) {
    if (key == "enabled") {
      HS_ASSIGN_OR_RETURN(d.enabled, boolean(v));
    } else if (key == "device") {
      HS_ASSIGN_OR_RETURN(d.device, parse_device(v));
    } else if (key == "shared_gpu") {
      HS_RETURN_IF_ERROR(parse_shared_gpu(v, d.shared_gpu));
    } else if (key == "precision") {
      HS_ASSIGN_OR_RETURN(d.precision, choice(v, kPrecisions, "a precision"));
    } else if (key == "storage") {
      HS_ASSIGN_OR_RETURN(d.storage, choice(v, kStorages, "a storage type"));
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
    } else if (key == "costs") {
      // Only the path: the file is read when a plan is made, so a profile
      // loads (and previews) even where its costs file is not yet written.
      HS_ASSIGN_OR_RETURN(partition.costs,
                          non_empty_string(v, "a costs file path (hetsched calibrate -o), relative to the profile"));
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

Status ProfileParser::parse_limits(const Field& f, Profile& p) const {
  HS_ASSIGN_OR_RETURN(auto fields, entries(f, kLimitsKeys));
  constexpr std::string_view kBytes = "an integer >= 0 (bytes; 0 = this machine's memory)";
  if (const Field* v = find(fields, "max_tensor_bytes")) {
    HS_ASSIGN_OR_RETURN(int64_t n, integer(*v, 0, std::numeric_limits<int64_t>::max(), kBytes));
    p.limits.max_tensor_bytes = static_cast<uint64_t>(n);
  }
  if (const Field* v = find(fields, "max_arena_bytes")) {
    HS_ASSIGN_OR_RETURN(int64_t n, integer(*v, 0, std::numeric_limits<int64_t>::max(), kBytes));
    p.limits.max_arena_bytes = static_cast<uint64_t>(n);
  }
  return Status::ok();
}

Status ProfileParser::parse_scheduler(const Field& f, Profile& p) const {
  HS_ASSIGN_OR_RETURN(auto fields, entries(f, kSchedulerKeys));
  if (const Field* v = find(fields, "max_in_flight")) {
    HS_ASSIGN_OR_RETURN(int64_t n, integer(*v, 1, std::numeric_limits<int>::max(), "an integer >= 1"));
    p.max_in_flight = static_cast<int>(n);
  }
  if (const Field* v = find(fields, "gpu_wait_timeout_ms")) {
    // A day at most: the milliseconds must fit a wait's nanoseconds.
    HS_ASSIGN_OR_RETURN(p.gpu_wait_timeout_ms, integer(*v, 1, 86'400'000, "an integer from 1 to 86400000 (ms)"));
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
  if (const Field* v = find(fields, "profile_ops")) {
    HS_ASSIGN_OR_RETURN(p.profile_ops, boolean(*v));
  }
  return Status::ok();
}

}  // namespace

Result<Profile> parse_profile(const std::string& yaml_text, const std::string& source_name) {
  HS_ASSIGN_OR_RETURN(YAML::Node root, load_yaml(yaml_text, source_name));
  // The parser checks every node's type before reading it, so a throw here is
  // a missed check; it still leaves as a Status, never as an exception.
  try {
    return ProfileParser(source_name).parse(root);
  } catch (const YAML::Exception& e) {
    return internal_error("failed to read profile '" + source_name + "': " + e.what());
  }
}

Result<Profile> load_profile(const std::string& path) {
  HS_ASSIGN_OR_RETURN(std::string text, read_text_file(path, "profile"));
  HS_ASSIGN_OR_RETURN(Profile profile, parse_profile(text, path));
  // A profile and its costs file travel together (configs/x.yaml beside
  // configs/x.costs.yaml), so a relative path means "next to the profile",
  // wherever the command runs from.
  std::string& costs = profile.partition.costs;
  if (!costs.empty() && std::filesystem::path(costs).is_relative()) {
    costs = (std::filesystem::path(path).parent_path() / costs).string();
  }
  return profile;
}

}  // namespace hetsched
