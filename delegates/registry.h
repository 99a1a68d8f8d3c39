// The delegate registry: every engine hetsched knows, by name.
//
// A new engine is a new folder under delegates/ plus one line in
// registry.cc. The scheduler and partitioner never name a concrete delegate;
// they ask this registry.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "delegates/delegate.h"

namespace hetsched {

// Options for making a delegate: the profile's settings for it as key/value
// pairs (e.g. {"engine","xnnpack"}, {"threads","2"}, {"device","auto"},
// {"gpu_shared_context_token","hetsched"}, ...).
using DelegateOptions = CompileSpecs;

using DelegateFactory = std::function<Result<std::unique_ptr<Delegate>>(const DelegateOptions&)>;

struct DelegateInfo {
  std::string name;
  std::string description;
  DelegateFactory make;
};

// All registered delegates, in registration order.
const std::vector<DelegateInfo>& delegate_infos();
// nullptr when unknown.
const DelegateInfo* find_delegate_info(std::string_view name);
// Makes a delegate by name; an unknown name is an error listing the known ones.
Result<std::unique_ptr<Delegate>> make_delegate(std::string_view name, const DelegateOptions& options);

}  // namespace hetsched
