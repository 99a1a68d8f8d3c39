// What the partitioner and its preview take from a deployment profile.
// partitioner/ does not read profiles (it sees only PartitionOptions and
// PreviewProfile), so the conversion from a Profile lives here, with its caller.
#pragma once

#include "partitioner/partitioner.h"
#include "partitioner/preview.h"
#include "profile/profile.h"

namespace hetsched {

// The profile's partition section: policy, min_partition_size, retry_pruned, pins, fallback.
PartitionOptions partition_options_from(const Profile& profile);

// The cost figures for `delegates`: the profile's partition.costs file where
// it names one (delegates it leaves out get built-in figures), else built-in
// defaults per delegate and device class. `source` says which.
Result<CostTable> cost_table_for(const Profile& profile, const std::vector<Delegate*>& delegates);

// The profile's name, min_partition_size, sync mode and every non-CPU
// delegate's shared-context keys and device, for format_plan_text/json.
PreviewProfile preview_profile_from(const Profile& profile);

}  // namespace hetsched
