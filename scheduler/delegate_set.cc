#include "scheduler/delegate_set.h"

#include "shared_gpu/shared_gpu_registry.h"

namespace hetsched {

DelegateOptions delegate_options(const Profile& profile, const std::string& name) {
  DelegateOptions o;
  auto it = profile.delegates.find(name);
  if (it == profile.delegates.end()) return o;
  const DelegateProfile& d = it->second;
  if (name == "cpu") {
    o.emplace_back("engine", d.engine);
    o.emplace_back("threads", std::to_string(d.threads));
  } else {
    o.emplace_back("device", d.device);
    o.emplace_back("gpu_shared_context_token", d.shared_gpu.token);
    o.emplace_back("gpu_shared_group_id", std::to_string(d.shared_gpu.group));
    o.emplace_back("gpu_shared_context_mode", std::string(shared_context_mode_name(d.shared_gpu.mode)));
    o.emplace_back("gpu_shared_sync_mode", std::string(sync_mode_name(profile.sync)));
    o.emplace_back("precision", d.precision);
    o.emplace_back("storage", d.storage);
  }
  o.emplace_back("gpu_shared_min_partition_size", std::to_string(profile.partition.min_partition_size));
  o.emplace_back("gpu_shared_prefer", profile.partition.prefer);
  return o;
}

Result<DelegateSet> DelegateSet::create(const Profile& profile) {
  DelegateSet set;
  for (const std::string& name : profile.enabled_delegates_in_order()) {
    // lookup_only promises a context someone registered (a host's own
    // device): say so at load, not first when an island lands on it (a plan
    // that left the delegate no island would otherwise run without it).
    const SharedGpuKeys& keys = profile.delegates.at(name).shared_gpu;
    if (name != "cpu" && keys.mode == SharedContextMode::kLookupOnly) {
      const std::string key = make_context_key(keys.token, keys.group);
      if (!SharedGpuContextRegistry::get().lookup(key))
        return not_found("failed to make delegate '" + name + "': failed to find shared GPU context '" + key +
                         "': none is registered (mode lookup_only; a host application registers its device with "
                         "hetsched::register_vulkan_device before loading, the hetsched command never does: use "
                         "lookup_or_create there)");
    }
    HS_ASSIGN_OR_RETURN(auto delegate, make_delegate(name, delegate_options(profile, name)));
    set.ordered_.push_back(delegate.get());
    set.owned_.push_back(std::move(delegate));
  }
  if (set.ordered_.empty()) return invalid_argument("profile '" + profile.name + "' enables no delegate");
  return set;
}

Delegate* DelegateSet::find(std::string_view name) const {
  for (Delegate* d : ordered_)
    if (d->name() == name) return d;
  return nullptr;
}

}  // namespace hetsched
