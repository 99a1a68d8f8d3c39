// The delegate registry: every engine hetsched knows, by name.
//
// A new engine is a new folder under delegates/ plus one line in
// registry.cc. The scheduler and partitioner never name a concrete delegate;
// they ask this registry (and only registry.cc includes the engines).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "delegates/delegate.h"
#include "graph/passes/constant_folding.h"

namespace hetsched {

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

// The evaluator constant folding runs nodes with (graph/passes/constant_folding.h):
// the CPU engine's portable kernels, the reference for every op. Given here
// so that the scheduler folds constants without naming the CPU engine.
NodeEvaluator reference_node_evaluator();

}  // namespace hetsched
