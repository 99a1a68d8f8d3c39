// Deployment profiles: how a model is deployed (which delegates, partition
// policy, shared-GPU keys, sync, scheduler, logging), loaded from YAML.
//
// Core code sees only the typed Profile; YAML never leaves profile/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hetsched/status.h"
#include "sync/sync_mode.h"

namespace hetsched {

// The RFC's shared-context modes (compile-spec key gpu_shared_context_mode).
enum class SharedContextMode { kLookupOnly, kLookupOrCreate, kCreateOnly, kDisabled };
// The RFC's sync modes (gpu_shared_sync_mode) belong to sync/: SyncMode,
// sync_mode_name() and parse_sync_mode() come from sync/sync_mode.h.

std::string_view shared_context_mode_name(SharedContextMode m);  // "lookup_or_create", ...
std::optional<SharedContextMode> parse_shared_context_mode(std::string_view s);

struct SharedGpuKeys {
  std::string token = "default";
  int64_t group = 0;
  SharedContextMode mode = SharedContextMode::kLookupOrCreate;
};

struct DelegateProfile {
  bool enabled = false;
  // cpu
  std::string engine = "xnnpack";  // xnnpack | portable
  int threads = 0;                 // 0 = all hardware threads
  // vulkan, vgf
  std::string device = "auto";     // auto | <index> | <name substring>
  SharedGpuKeys shared_gpu;
  std::string precision = "fp32";  // vulkan, vgf: fp32 | fp16 | auto
  std::string storage = "auto";    // vulkan, vgf: auto | fp32 | fp16 (auto: fp32)
};

struct PinRule {
  std::string op;        // match by op type, or
  std::string node;      // match by node name (exactly one of op/node is set)
  std::string delegate;  // where matching nodes go
};

struct PartitionProfile {
  // "auto", "vgf_first", "vulkan_first", "cpu_first", or an explicit ordered list
  // of delegate names (then `order` holds it and `prefer` is "list").
  std::string prefer = "auto";
  std::vector<std::string> order;
  int min_partition_size = 1;
  bool retry_pruned = false;
  std::vector<PinRule> pins;
  std::string fallback = "cpu";  // cpu | error
  // partition.costs: the costs file (`hetsched calibrate -o`) the auto policy
  // plans with; "" = built-in figures. load_profile resolves a relative path
  // against the profile's folder (parse_profile keeps it as written); the
  // file itself is read at plan time, not here.
  std::string costs;
};

// limits: sizes a model may not exceed on this machine (0: its physical
// memory). A model over one is refused at load, naming the tensor or arena.
struct Limits {
  uint64_t max_tensor_bytes = 0;  // any one tensor of the model
  uint64_t max_arena_bytes = 0;   // one request's arena in any memory domain
};

struct Profile {
  std::string name = "default";
  std::string source;  // file it came from, for messages ("<string>" when parsed from text)
  // Keyed by delegate name: "cpu", "vulkan", "vgf". Delegates not mentioned are disabled,
  // except cpu, which is enabled unless the profile disables it.
  std::map<std::string, DelegateProfile> delegates;
  PartitionProfile partition;
  SyncMode sync = SyncMode::kTimeline;
  int max_in_flight = 1;          // scheduler.max_in_flight
  // scheduler.gpu_wait_timeout_ms: how long a session's host waits on GPU
  // work (readbacks, the end of a request) may take before the run fails as
  // hung; the default is shared_gpu's kGpuWaitTimeout.
  int64_t gpu_wait_timeout_ms = 60'000;
  std::string log_level = "warn"; // logging.level: error | warn | info | debug
  std::string trace_path;         // logging.trace: Chrome trace JSON written after each run, "" = off
  bool profile_ops = false;       // logging.profile_ops: time every kernel/dispatch (op events in stats and trace)
  Limits limits;                  // limits.max_tensor_bytes, limits.max_arena_bytes

  bool delegate_enabled(const std::string& name) const {
    auto it = delegates.find(name);
    return it != delegates.end() && it->second.enabled;
  }
  // Enabled delegate names in the partition policy's order: vgf_first (and auto,
  // whose order only guides pruning) → vgf, vulkan, cpu; vulkan_first →
  // vulkan, vgf, cpu; cpu_first → cpu, vulkan, vgf; list → `partition.order`,
  // then the enabled delegates it leaves out, cpu last.
  std::vector<std::string> enabled_delegates_in_order() const;
};

// The delegate names a profile may mention.
const std::vector<std::string>& known_delegate_names();

// Loads and validates a profile. Errors read
//   "<file>:<line>: <key.path>: <what is wrong> (accepted: <values>)"
// (kInvalidArgument); a file that cannot be read gives
//   "failed to read profile '<path>': <strerror>" (kNotFound when it is missing).
// docs/profiles.md lists every key. `source` is set to `path`.
Result<Profile> load_profile(const std::string& path);
// Same from YAML text; `source_name` stands in for the file name in messages.
Result<Profile> parse_profile(const std::string& yaml_text, const std::string& source_name = "<string>");
// The built-in default: CPU only (what configs/default.yaml says).
Profile default_profile();

}  // namespace hetsched
