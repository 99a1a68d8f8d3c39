#include "partitioner/plan_cost.h"

#include <algorithm>
#include <limits>
#include <map>

namespace hetsched {

namespace {
constexpr double kUnknown = -1;  // arrival not yet computed
}

std::optional<double> measured_seconds(const Graph& graph, NodeId node, const DelegateCosts& costs) {
  if (costs.measured_us.empty() || op_class_of(graph.node(node).op) == OpClass::kFree) return std::nullopt;
  auto it = costs.measured_us.find(op_signature(graph, node));
  if (it == costs.measured_us.end()) return std::nullopt;
  return it->second * 1e-6;
}

PlanCostModel::PlanCostModel(const Graph& graph, const std::vector<Delegate*>& delegates, const CostTable& table)
    : graph_(graph), delegates_(delegates), table_(&table) {
  const size_t nodes = graph.num_nodes();
  std::map<std::string, int> resources;
  for (Delegate* d : delegates_) {
    auto it = table.delegates.find(d->name());
    const DelegateCosts costs =
        it != table.delegates.end() ? it->second : builtin_delegate_costs(d->name(), d->device_class(), 0);
    std::vector<double> per_node(nodes);
    for (size_t n = 0; n < nodes; ++n) {
      const NodeId id = static_cast<NodeId>(n);
      per_node[n] = measured_seconds(graph, id, costs).value_or(d->estimate(graph, id, costs).seconds);
    }
    node_s_.push_back(std::move(per_node));
    island_s_.push_back(costs.island_us * 1e-6);
    edge_s_per_byte_.push_back(costs.edge_gbps > 0 ? 1 / (costs.edge_gbps * 1e9) : 0.0);
    // A Vulkan device that runs on the host's cores (lavapipe) competes with
    // the CPU delegate for them: one resource, nothing overlaps.
    const std::string resource = d->device_class() == "gpu-cpu" ? "cpu" : d->resource();
    resource_.push_back(resources.emplace(resource, static_cast<int>(resources.size())).first->second);
    device_.push_back(d->memory_kind() == MemoryDomain::Kind::kDevice);
  }
  num_resources_ = static_cast<int>(resources.size());
  node_inputs_.resize(nodes);
  for (size_t n = 0; n < nodes; ++n)
    for (ValueId v : graph.node(static_cast<NodeId>(n)).inputs)
      if (v != kNoValue && !graph.value(v).is_constant()) node_inputs_[n].push_back(v);
  readers_.resize(graph.num_values());
  for (size_t n = 0; n < nodes; ++n)
    for (ValueId v : node_inputs_[n]) readers_[v].push_back(static_cast<NodeId>(n));
  value_is_output_.assign(graph.num_values(), false);
  for (ValueId v : graph.outputs()) value_is_output_[v] = true;
  for (const Value& v : graph.values()) {
    const bool known = v.type_known && v.type.is_static();
    value_bytes_.push_back(known ? static_cast<double>(v.type.byte_size()) : 0);
  }
}

CutKind PlanCostModel::cut_kind(int from, int to, const TensorType& type) const {
  const bool from_device = from >= 0 && device_[from];
  const bool to_device = to >= 0 && device_[to];
  if (!from_device && !to_device) return CutKind::kAlias;
  if (!from_device) return CutKind::kUpload;
  if (!to_device) return CutKind::kReadback;
  if (from == to) return CutKind::kAlias;
  if (resource_[from] != resource_[to]) return CutKind::kDeviceCopy;
  // Two delegates on one context: the same bytes, unless their layouts for
  // rank-4 tensors differ (the Vulkan delegate keeps NHWC, VGF NCHW) and the
  // two orders differ (not with one channel or one pixel: the runtime's
  // layout_applies, scheduler/layout.h).
  const bool reorders = type.rank() == 4 && type.shape[1] != 1 && type.shape[2] * type.shape[3] != 1;
  return reorders ? CutKind::kLayoutConversion : CutKind::kAlias;
}

double PlanCostModel::latency(const std::vector<int>& delegate_of) const { return simulate(delegate_of).total_s; }

double PlanCostModel::edge_seconds(NodeId n, int d, const std::vector<int>& delegate_of) const {
  const double per_byte = edge_s_per_byte_[d];
  if (per_byte == 0) return 0;
  double bytes = 0;
  for (ValueId v : node_inputs_[n]) {
    const NodeId p = graph_.value(v).producer;
    if (p != kNoNode && delegate_of[p] == d) continue;
    uint8_t& copied = copied_in_[static_cast<size_t>(v) * num_delegates() + d];
    if (!copied) bytes += value_bytes_[v];
    copied = 1;
  }
  for (ValueId v : graph_.node(n).outputs) {
    if (v == kNoValue) continue;
    bool leaves = value_is_output_[v];
    for (NodeId r : readers_[v]) leaves = leaves || delegate_of[r] != d;
    if (leaves) bytes += value_bytes_[v];
  }
  return bytes * per_byte;
}

PlanCostModel::Timeline PlanCostModel::simulate(const std::vector<int>& delegate_of) const {
  const int places = num_delegates() + 1;  // 0: the host; d + 1: delegate d's memory
  const auto place_of = [&](int d) { return d < 0 || !device_[d] ? 0 : d + 1; };
  arrival_.assign(graph_.num_values() * static_cast<size_t>(places), kUnknown);
  free_.assign(static_cast<size_t>(num_resources_), 0.0);
  copied_in_.assign(graph_.num_values() * static_cast<size_t>(num_delegates()), 0);
  Timeline t;
  t.start_s.resize(graph_.num_nodes());
  t.end_s.resize(graph_.num_nodes());
  t.edge_s.resize(graph_.num_nodes());
  // When value v is at the place delegate `to` reads it from: where it was
  // made, plus the handoff the first time it goes there.
  const auto arrive = [&](ValueId v, int to) {
    const int place = place_of(to);
    double& slot = arrival_[static_cast<size_t>(v) * places + place];
    if (slot != kUnknown) return slot;
    const NodeId p = graph_.value(v).producer;
    const int from = p == kNoNode ? -1 : delegate_of[p];
    const double made = p == kNoNode ? 0.0 : t.end_s[p];
    const CutKind kind = cut_kind(from, to, graph_.value(v).type);
    slot = kind == CutKind::kAlias ? made : made + cut_seconds(kind, value_bytes_[v]);
    return slot;
  };
  for (NodeId n = 0; n < static_cast<NodeId>(graph_.num_nodes()); ++n) {
    const int d = delegate_of[n];
    double ready = 0;
    bool opens_island = true;
    // A node opens an island when nothing it reads was made on its delegate,
    // or when it reads what another delegate made: the island builder cannot
    // put it with earlier work there (the other delegate's node may read
    // from that work), so it waits for a submit of its own and the host's
    // round trip between the two.
    bool reads_other = false;
    for (ValueId v : node_inputs_[n]) {
      ready = std::max(ready, arrive(v, d));
      const NodeId p = graph_.value(v).producer;
      if (p != kNoNode && delegate_of[p] == d) opens_island = false;
      if (p != kNoNode && delegate_of[p] != d) reads_other = true;
    }
    opens_island = opens_island || reads_other;
    double& free = free_[resource_[d]];
    t.start_s[n] = std::max(ready, free);
    t.edge_s[n] = edge_seconds(n, d, delegate_of);
    t.end_s[n] = t.start_s[n] + node_s_[d][n] + (opens_island ? island_s_[d] : 0.0) + t.edge_s[n];
    free = t.end_s[n];
    t.total_s = std::max(t.total_s, t.end_s[n]);
  }
  for (ValueId v : graph_.outputs()) t.total_s = std::max(t.total_s, arrive(v, -1));
  return t;
}

}  // namespace hetsched
