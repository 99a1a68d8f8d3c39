#include "graph/passes/lower_einsum.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "graph/einsum.h"
#include "graph/shape_inference.h"

namespace hetsched {

namespace {

// Builds the rewritten graph node by node (nodes stay in topological order).
class Rewriter {
 public:
  Rewriter(const Graph& from, Graph& to) : from_(from), to_(to) {}

  // A value name neither graph has.
  std::string fresh(const std::string& stem) {
    for (;;) {
      const std::string name = stem + "_" + std::to_string(counter_++);
      if (from_.find_value(name) == kNoValue && to_.find_value(name) == kNoValue) return name;
    }
  }
  std::string fresh_node(const std::string& stem) {
    for (;;) {
      const std::string name = stem + "_" + std::to_string(node_counter_++);
      if (from_.find_node(name) == kNoNode && to_.find_node(name) == kNoNode) return name;
    }
  }
  ValueId op(const std::string& type, const std::string& stem, std::vector<ValueId> inputs, Attributes attrs = {},
             const std::string& out_name = "") {
    const NodeId n = to_.add_node(type, fresh_node(stem + "_" + type), std::move(inputs),
                                  {out_name.empty() ? fresh(stem) : out_name}, std::move(attrs));
    return to_.node(n).outputs[0];
  }
  ValueId ints(const std::string& stem, const std::vector<int64_t>& values) {
    return to_.add_constant(fresh(stem), Tensor::from_vector(DType::kInt64, {static_cast<int64_t>(values.size())}, values));
  }

 private:
  const Graph& from_;
  Graph& to_;
  int counter_ = 0, node_counter_ = 0;
};

// What one operand holds, as ids, and how it becomes [batch, rows, cols].
struct Operand {
  ValueId value = kNoValue;
  std::vector<int> ids;  // its dims after the ReduceSum
  Shape shape;
};

bool lowerable(const EinsumSpec& spec, const std::vector<Shape>& shapes) {
  if (spec.operands.empty() || spec.operands.size() > 2) return false;
  for (size_t i = 0; i < spec.operands.size(); ++i) {
    const std::vector<int>& ids = spec.operands[i];
    if (std::set<int>(ids.begin(), ids.end()).size() != ids.size()) return false;  // a diagonal
    for (size_t d = 0; d < ids.size(); ++d) {
      const int id = ids[d];
      if (shapes[i][d] == spec.sizes[static_cast<size_t>(id)]) continue;
      // Size 1 against a larger size: only a batch id, which MatMul broadcasts.
      const bool in_all = spec.operands.size() == 2 &&
                          std::count(spec.operands[1 - i].begin(), spec.operands[1 - i].end(), id) &&
                          std::count(spec.output.begin(), spec.output.end(), id);
      if (!in_all) return false;
    }
  }
  return true;
}

Attributes perm_attr(const std::vector<int64_t>& perm) {
  Attributes a;
  a.set("perm", Attribute{perm});
  return a;
}

// `x` with dims `ids` transposed to `want` (a permutation of them).
ValueId transposed(Rewriter& rw, const std::string& stem, ValueId x, const std::vector<int>& ids,
                   const std::vector<int>& want) {
  std::vector<int64_t> perm;
  for (int id : want) perm.push_back(std::find(ids.begin(), ids.end(), id) - ids.begin());
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  return perm == identity ? x : rw.op("Transpose", stem, {x}, perm_attr(perm));
}

// Sums `op` over its dims whose ids `keep` lacks (keepdims 0).
void reduce_to(Rewriter& rw, const Graph& graph, const std::string& stem, Operand& op, const std::set<int>& keep) {
  std::vector<int64_t> axes;
  std::vector<int> ids;
  Shape shape;
  for (size_t d = 0; d < op.ids.size(); ++d) {
    if (keep.count(op.ids[d])) {
      ids.push_back(op.ids[d]);
      shape.push_back(op.shape[d]);
    } else {
      axes.push_back(static_cast<int64_t>(d));
    }
  }
  if (axes.empty()) return;
  Attributes a;
  a.set("keepdims", Attribute{int64_t{0}});
  std::vector<ValueId> inputs{op.value};
  if (graph.opset() >= 13) {
    inputs.push_back(rw.ints(stem + "_axes", axes));
  } else {
    a.set("axes", Attribute{axes});
  }
  op.value = rw.op("ReduceSum", stem, std::move(inputs), std::move(a));
  op.ids = std::move(ids);
  op.shape = std::move(shape);
}

int64_t product(const EinsumSpec& spec, const std::vector<int>& ids) {
  int64_t p = 1;
  for (int id : ids) p *= spec.sizes[static_cast<size_t>(id)];
  return p;
}

// Appends the Einsum `node` of `from` (inputs mapped to `to`'s values) to
// `to` as MatMul and friends, writing the value named `out_name`.
void lower(Rewriter& rw, const Graph& to, const EinsumSpec& spec, const std::vector<ValueId>& inputs,
           const std::vector<Shape>& shapes, const std::string& stem, const std::string& out_name) {
  const std::set<int> out_ids(spec.output.begin(), spec.output.end());
  std::vector<Operand> ops;
  for (size_t i = 0; i < inputs.size(); ++i) ops.push_back({inputs[i], spec.operands[i], shapes[i]});
  if (ops.size() == 1) {
    reduce_to(rw, to, stem, ops[0], out_ids);
    const ValueId y = transposed(rw, stem, ops[0].value, ops[0].ids, spec.output);
    Attributes none;
    rw.op("Identity", stem, {y}, none, out_name);
    return;
  }
  // Ids each operand shares with the other or the output; the rest are summed first.
  for (size_t i = 0; i < 2; ++i) {
    std::set<int> keep = out_ids;
    keep.insert(ops[1 - i].ids.begin(), ops[1 - i].ids.end());
    reduce_to(rw, to, stem + (i ? "_b" : "_a"), ops[i], keep);
  }
  const std::set<int> a_ids(ops[0].ids.begin(), ops[0].ids.end()), b_ids(ops[1].ids.begin(), ops[1].ids.end());
  std::vector<int> batch, m, n, k;
  for (int id : spec.output) {
    if (a_ids.count(id) && b_ids.count(id)) batch.push_back(id);
    else if (a_ids.count(id)) m.push_back(id);
    else n.push_back(id);
  }
  for (int id : ops[0].ids)
    if (b_ids.count(id) && !out_ids.count(id)) k.push_back(id);
  // A as [batch, m, k] and B as [batch, k, n], merged to rank batch + 2.
  const auto as_matrix = [&](const Operand& op, const std::vector<int>& rows, const std::vector<int>& cols,
                             const std::string& s) {
    std::vector<int> want = batch;
    want.insert(want.end(), rows.begin(), rows.end());
    want.insert(want.end(), cols.begin(), cols.end());
    ValueId x = transposed(rw, s, op.value, op.ids, want);
    if (rows.size() == 1 && cols.size() == 1) return x;
    std::vector<int64_t> shape;
    for (int id : batch) shape.push_back(op.shape[static_cast<size_t>(std::find(op.ids.begin(), op.ids.end(), id) - op.ids.begin())]);
    shape.push_back(product(spec, rows));
    shape.push_back(product(spec, cols));
    return rw.op("Reshape", s, {x, rw.ints(s + "_shape", shape)});
  };
  const ValueId a = as_matrix(ops[0], m, k, stem + "_a");
  const ValueId b = as_matrix(ops[1], k, n, stem + "_b");
  ValueId y = rw.op("MatMul", stem, {a, b});
  // [batch, m..., n...], then the output's order.
  std::vector<int> ids = batch;
  ids.insert(ids.end(), m.begin(), m.end());
  ids.insert(ids.end(), n.begin(), n.end());
  if (m.size() != 1 || n.size() != 1) {
    std::vector<int64_t> shape;
    for (int id : ids) shape.push_back(spec.sizes[static_cast<size_t>(id)]);
    y = rw.op("Reshape", stem, {y, rw.ints(stem + "_out_shape", shape)});
  }
  y = transposed(rw, stem, y, ids, spec.output);
  Attributes none;
  rw.op("Identity", stem, {y}, none, out_name);
}

}  // namespace

Result<int> lower_einsum(Graph& graph) {
  if (std::none_of(graph.nodes().begin(), graph.nodes().end(), [](const Node& n) { return n.op == "Einsum"; })) return 0;
  int lowered = 0;
  Graph out(graph.name());
  out.set_opset(graph.opset());
  Rewriter rw(graph, out);
  std::vector<ValueId> map(graph.num_values(), kNoValue);
  for (ValueId v : graph.inputs()) map[v] = out.add_input(graph.value(v).name, graph.value(v).type);
  for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v)
    if (graph.value(v).is_constant()) map[v] = out.add_constant(graph.value(v).name, graph.value(v).constant);
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const Node& node = graph.node(id);
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) inputs.push_back(v == kNoValue ? kNoValue : map[v]);
    if (node.op == "Einsum" && node.outputs.size() == 1) {
      std::vector<Shape> shapes;
      bool known = true;
      for (ValueId v : node.inputs) {
        known = known && v != kNoValue && graph.value(v).type_known && graph.value(v).type.is_static() &&
                graph.value(v).type.dtype == DType::kFloat32;
        if (known) shapes.push_back(graph.value(v).type.shape);
      }
      const Result<std::string> equation = node.attrs.get_string("equation", "");
      Result<EinsumSpec> spec = known && equation.is_ok() ? parse_einsum(*equation, shapes)
                                                          : Result<EinsumSpec>(unsupported("not lowered"));
      if (spec.is_ok() && lowerable(*spec, shapes)) {
        const std::string& out_name = graph.value(node.outputs[0]).name;
        lower(rw, out, *spec, inputs, shapes, node.name, out_name);
        map[node.outputs[0]] = out.find_value(out_name);
        ++lowered;
        continue;
      }
    }
    // An omitted output gets a placeholder, dropped again below.
    std::vector<std::string> names;
    for (ValueId v : node.outputs) names.push_back(v == kNoValue ? rw.fresh("omitted") : graph.value(v).name);
    const NodeId n = out.add_node(node.op, node.name, std::move(inputs), std::move(names), node.attrs);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      ValueId& o = out.node(n).outputs[i];
      if (node.outputs[i] == kNoValue) {
        out.value(o).producer = kNoNode;
        o = kNoValue;
      } else {
        map[node.outputs[i]] = o;
      }
    }
  }
  for (ValueId v : graph.outputs()) out.add_output(map[v]);
  if (lowered == 0) return 0;
  out.compact(std::vector<bool>(out.num_nodes(), true));
  HS_RETURN_IF_ERROR(out.validate());
  HS_RETURN_IF_ERROR(infer_shapes(out));
  graph = std::move(out);
  return lowered;
}

}  // namespace hetsched
