// The typed Profile's own behaviour: shared-context mode names, the built-in default and the
// delegate order a partition policy implies. The YAML loader is profile_yaml.cc.
#include "profile/profile.h"

#include <algorithm>

namespace hetsched {
namespace {

constexpr SharedContextMode kSharedContextModes[] = {SharedContextMode::kLookupOnly, SharedContextMode::kLookupOrCreate,
                                                     SharedContextMode::kCreateOnly, SharedContextMode::kDisabled};

// The fixed orders of the named policies. `auto` chooses by cost, not by order;
// its order (vgf_first's) only says where pruned islands go next.
const std::vector<std::string>& policy_order(const std::string& prefer) {
  static const std::vector<std::string> kVgfFirst{"vgf", "vulkan", "cpu"};
  static const std::vector<std::string> kVulkanFirst{"vulkan", "vgf", "cpu"};
  static const std::vector<std::string> kCpuFirst{"cpu", "vulkan", "vgf"};
  if (prefer == "vulkan_first") return kVulkanFirst;
  if (prefer == "cpu_first") return kCpuFirst;
  return kVgfFirst;
}

}  // namespace

std::string_view shared_context_mode_name(SharedContextMode m) {
  switch (m) {
    case SharedContextMode::kLookupOnly: return "lookup_only";
    case SharedContextMode::kLookupOrCreate: return "lookup_or_create";
    case SharedContextMode::kCreateOnly: return "create_only";
    case SharedContextMode::kDisabled: return "disabled";
  }
  return "unknown";
}

std::optional<SharedContextMode> parse_shared_context_mode(std::string_view s) {
  for (SharedContextMode m : kSharedContextModes) {
    if (shared_context_mode_name(m) == s) return m;
  }
  return std::nullopt;
}

const std::vector<std::string>& known_delegate_names() {
  static const std::vector<std::string> names{"cpu", "vulkan", "vgf"};
  return names;
}

Profile default_profile() {
  Profile p;
  for (const std::string& name : known_delegate_names()) p.delegates[name].enabled = name == "cpu";
  return p;
}

std::vector<std::string> Profile::enabled_delegates_in_order() const {
  std::vector<std::string> ordered;
  auto add = [&](const std::string& name) {
    if (delegate_enabled(name) && std::find(ordered.begin(), ordered.end(), name) == ordered.end()) {
      ordered.push_back(name);
    }
  };
  if (partition.prefer == "list") {
    for (const std::string& name : partition.order) add(name);
    // Delegates the list leaves out still run what nothing before them takes;
    // the GPUs keep vgf_first's order and the CPU, the catch-all, goes last.
    for (const std::string& name : policy_order("vgf_first")) add(name);
  } else {
    for (const std::string& name : policy_order(partition.prefer)) add(name);
  }
  return ordered;
}

}  // namespace hetsched
