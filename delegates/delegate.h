// The delegate contract: what every execution engine (cpu, vulkan, vgf)
// implements, and the only way the partitioner and scheduler talk to one.
//
// Lifecycle, in call order:
//   supports / estimate   (partitioning, per node, no state)
//   compile               (ahead of time: an Island → an opaque Blob)
//   init                  (at load: a Blob → an IslandHandle, resources made)
//   IslandHandle::execute (per run)
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched {

// Why a delegate will or will not take a node.
struct Capability {
  bool supported = false;
  std::string reason;  // set when !supported: "op not implemented", "groups > 1 not supported", ...
  static Capability yes() { return {true, {}}; }
  static Capability no(std::string why) { return {false, std::move(why)}; }
};

// Rough cost of a node on a delegate, for the auto policy.
struct CostEstimate {
  double flops = 0;
  double bytes = 0;    // bytes read + written
  double seconds = 0;  // the delegate's own estimate of run time
};

// Where a tensor lives. Host memory, or the memory of one shared GPU context
// (identified by its registry key "token:group").
struct MemoryDomain {
  enum class Kind : uint8_t { kHost, kDevice };
  Kind kind = Kind::kHost;
  std::string context_key;  // for kDevice
  static MemoryDomain host() { return {}; }
  bool operator==(const MemoryDomain&) const = default;
};

// Ordered key/value options handed to a delegate at compile time and stored
// in the program beside its blob (the RFC's compile specs).
using CompileSpecs = std::vector<std::pair<std::string, std::string>>;
// Returns the value for `key`, or `fallback`.
std::string compile_spec_value(const CompileSpecs& specs, std::string_view key, std::string fallback = "");

using Blob = std::vector<uint8_t>;

// A set of nodes of one graph assigned to one delegate. Does not own the graph.
struct Island {
  int id = 0;
  std::string delegate;
  const Graph* graph = nullptr;
  std::vector<NodeId> nodes;    // in graph (topological) order
  std::vector<ValueId> inputs;  // values read from outside the island (no constants)
  std::vector<ValueId> outputs; // values used outside the island or graph outputs
};

// A tensor handed to execute(). For host tensors `host` points at the data.
// Not owned; valid for the duration of the call.
struct TensorRef {
  const TensorType* type = nullptr;
  std::byte* host = nullptr;
};

// Per-run state a handle may use: the trace, sync points (GPU delegates).
struct ExecContext {
  int run_index = 0;
};

// One compiled island, ready to run. Owned by the Session.
class IslandHandle {
 public:
  virtual ~IslandHandle() = default;
  virtual MemoryDomain input_domain(size_t i) const { (void)i; return MemoryDomain::host(); }
  virtual MemoryDomain output_domain(size_t i) const { (void)i; return MemoryDomain::host(); }
  // Reads `inputs`, writes `outputs` (pre-allocated by the caller, shapes as
  // compiled). Inputs and outputs are in the island's input/output order.
  virtual Status execute(ExecContext& ctx, std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) = 0;
};

// Options the runtime gives init(): the delegate's options from the profile.
struct InitContext {
  CompileSpecs options;  // e.g. {"threads", "2"}
  int island_id = 0;
};

class Delegate {
 public:
  virtual ~Delegate() = default;
  virtual std::string_view name() const = 0;
  // Which physical engine it occupies ("cpu", "gpu:<context key>").
  virtual std::string resource() const = 0;
  virtual Capability supports(const Graph& graph, NodeId node) const = 0;
  virtual CostEstimate estimate(const Graph& graph, NodeId node) const { (void)graph; (void)node; return {}; }
  virtual Result<Blob> compile(const Island& island, const CompileSpecs& specs) const = 0;
  virtual Result<std::unique_ptr<IslandHandle>> init(const Blob& blob, const InitContext& ctx) = 0;
};

}  // namespace hetsched
