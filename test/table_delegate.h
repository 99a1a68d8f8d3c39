// A delegate that answers supports() from a table of op types, for the
// partitioner's tests: the partitioner and the cost model see a delegate only
// through its name, resource, memory kind and capability answers, so a table
// is enough to place any node anywhere. It compiles nothing and runs nothing.
#pragma once

#include <set>
#include <string>

#include "delegates/delegate.h"

namespace hetsched::testing {

class TableDelegate final : public Delegate {
 public:
  // The cpu delegate takes every op. Without `resource`, the name; `device`:
  // keeps its tensors in device memory.
  TableDelegate(std::string name, std::set<std::string> ops, std::string resource = "", bool device = false)
      : name_(std::move(name)), resource_(resource.empty() ? name_ : std::move(resource)), device_(device),
        ops_(std::move(ops)) {}
  std::string_view name() const override { return name_; }
  std::string resource() const override { return resource_; }
  MemoryDomain::Kind memory_kind() const override {
    return device_ ? MemoryDomain::Kind::kDevice : MemoryDomain::Kind::kHost;
  }
  Capability supports(const Graph& g, NodeId n) const override {
    if (name_ == "cpu" || ops_.count(g.node(n).op)) return Capability::yes();
    return Capability::no("op " + g.node(n).op + " not implemented");
  }
  Result<Blob> compile(const Island&, const CompileSpecs&) const override { return Blob{}; }
  Result<std::unique_ptr<IslandHandle>> init(const Blob&, const InitContext&) override {
    return unsupported("table delegates do not run");
  }

 private:
  std::string name_, resource_;
  bool device_;
  std::set<std::string> ops_;
};

}  // namespace hetsched::testing
