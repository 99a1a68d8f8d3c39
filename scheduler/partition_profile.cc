#include "scheduler/partition_profile.h"

#include "profile/costs_file.h"

namespace hetsched {

PartitionOptions partition_options_from(const Profile& profile) {
  PartitionOptions o;
  o.policy = profile.partition.prefer;
  o.min_partition_size = profile.partition.min_partition_size;
  o.retry_pruned = profile.partition.retry_pruned;
  for (const PinRule& pin : profile.partition.pins) o.pins.push_back({pin.op, pin.node, pin.delegate});
  o.fallback = profile.partition.fallback;
  return o;
}

Result<CostTable> cost_table_for(const Profile& profile, const std::vector<Delegate*>& delegates) {
  CostTable table;
  bool has_handoffs = false;
  if (!profile.partition.costs.empty()) {
    Result<CostTable> loaded = load_costs(profile.partition.costs, &has_handoffs);
    if (!loaded.is_ok()) return loaded.status().with_context("partition.costs: ");
    table = std::move(loaded).value();
  }
  const std::string file_source = table.source;
  std::string builtin;
  std::string gpu_class;
  for (Delegate* d : delegates) {
    const std::string name(d->name());
    const std::string device_class = d->device_class();
    if (d->memory_kind() == MemoryDomain::Kind::kDevice && gpu_class.empty()) gpu_class = device_class;
    if (table.delegates.count(name)) continue;
    int threads = 0;
    if (auto it = profile.delegates.find(name); it != profile.delegates.end()) threads = it->second.threads;
    table.delegates[name] = builtin_delegate_costs(name, device_class, threads);
    builtin += (builtin.empty() ? "" : ", ") + name + ": " + (device_class.empty() ? "no device" : device_class);
  }
  if (!has_handoffs) table.transfers = builtin_transfer_costs(gpu_class);
  if (profile.partition.costs.empty()) table.source = "built-in defaults (" + builtin + ")";
  else table.source = file_source + (builtin.empty() ? "" : "; built-in for " + builtin) + (has_handoffs ? "" : "; built-in handoffs");
  return table;
}

PreviewProfile preview_profile_from(const Profile& profile) {
  PreviewProfile p;
  p.name = profile.name;
  p.min_partition_size = profile.partition.min_partition_size;
  p.sync = std::string(sync_mode_name(profile.sync));
  for (const auto& [name, d] : profile.delegates) {
    if (name == "cpu") continue;  // host islands use no GPU context
    const SharedGpuKeys& k = d.shared_gpu;
    p.gpu_contexts[name] = {k.mode != SharedContextMode::kDisabled, k.token, k.group,
                            std::string(shared_context_mode_name(k.mode)), d.device};
  }
  return p;
}

}  // namespace hetsched
