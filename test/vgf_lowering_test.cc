// VGF lowering without a GPU: what supports() refuses and why, how the RFC
// model partitions, and the TOSA operators islands become.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "delegates/vgf/lowering.h"
#include "delegates/vgf/tosa_ops.h"
#include "delegates/vgf/vgf_delegate.h"
#include "examples/rfc_model.h"
#include "graph/builder.h"
#include "scheduler/pipeline.h"

namespace hetsched::vgf {
namespace {

std::unique_ptr<Delegate> vgf_delegate() {
  auto d = make_vgf_delegate({});
  EXPECT_TRUE(d.is_ok()) << d.status().message();
  return d.is_ok() ? std::move(d).value() : nullptr;
}

Island whole_graph_island(const Graph& g) {
  Island island;
  island.id = 0;
  island.delegate = "vgf";
  island.graph = &g;
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n) island.nodes.push_back(n);
  island.inputs = g.inputs();
  island.outputs = g.outputs();
  return island;
}

Island island_of(const Graph& g, const std::vector<std::string>& node_names, std::vector<ValueId> inputs,
                 std::vector<ValueId> outputs) {
  Island island;
  island.delegate = "vgf";
  island.graph = &g;
  for (const std::string& name : node_names) island.nodes.push_back(g.find_node(name));
  island.inputs = std::move(inputs);
  island.outputs = std::move(outputs);
  return island;
}

std::vector<std::string> op_names(const VgfFile& f) {
  std::vector<std::string> names;
  for (const Segment& s : f.segments) {
    const Module& m = f.modules[s.module];
    if (m.type == ModuleType::kCompute) names.push_back("compute:" + m.name);
    for (const Operator& op : m.ops) names.push_back(std::string(op_name(op.op)));
  }
  return names;
}

TEST(VgfSupportTest, RefusesGatherWithTheReason) {
  Result<Graph> g = examples::make_rfc_model();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto d = vgf_delegate();
  for (const char* name : {"index_select_channels", "gather_cols", "index_select_rows"}) {
    const Capability c = d->supports(*g, g->find_node(name));
    EXPECT_FALSE(c.supported) << name;
    // The index_selects reorder (constant indices [2,0,1] and [3,1,2,0]).
    EXPECT_EQ(c.reason, std::string(name) == "gather_cols"
                            ? "data-dependent indexing: not expressible as a VGF graph"
                            : "constant Gather indices that reorder or repeat elements: a gather, not expressible as a "
                              "VGF graph")
        << name;
  }
  for (const char* name : {"transpose_in", "avg_pool2d", "sin", "cos", "reciprocal", "mul", "transpose_out"})
    EXPECT_TRUE(d->supports(*g, g->find_node(name)).supported) << name;
}

TEST(VgfSupportTest, RefusesWhatItCannotLowerWithAReason) {
  GraphBuilder b("refusals");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 6, 6}});
  const ValueId w = b.input("w", {DType::kFloat32, {4, 4, 3, 3}});
  const ValueId i = b.input("i", {DType::kInt64, {2, 3}});
  std::vector<float> grouped(4 * 2 * 3 * 3, 0.1f);
  const ValueId wg = b.constant_f32("wg", {4, 2, 3, 3}, grouped);
  b.output(b.op("Conv", {x, w}, {}, "runtime_weights"));
  b.output(b.op("Conv", {x, wg}, {{"group", int64_t{2}}}, "grouped"));
  b.output(b.op("Add", {i, i}, {}, "int_add"));
  b.output(b.op("MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"dilations", std::vector<int64_t>{2, 2}}},
                "dilated_pool"));
  b.output(b.op("Pad", {x, b.constant_i64("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1})}, {{"mode", std::string("reflect")}},
                "reflect_pad"));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto d = vgf_delegate();
  const auto reason = [&](const char* node) { return d->supports(*g, g->find_node(node)).reason; };
  EXPECT_EQ(reason("reflect_pad"), "pad mode 'reflect': TOSA pad fills a constant");
  EXPECT_EQ(reason("runtime_weights"), "weights and bias must be a constant (computed at run time here): a VGF conv2d needs constant weights");
  EXPECT_TRUE(d->supports(*g, g->find_node("grouped")).supported) << reason("grouped");
  EXPECT_EQ(reason("int_add"), "input 0 is i64[2,3]: VGF graphs here are f32 only");
  EXPECT_EQ(reason("dilated_pool"), "dilated pooling [2,2]: TOSA pools have no dilation");
}

// The transformer ops' limits: each refusal names what is accepted.
TEST(VgfSupportTest, RefusesTheTransformerOpsItCannotLowerWithTheReason) {
  GraphBuilder b("limits");
  b.raw().set_opset(20);
  const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 4}});
  const ValueId cond = b.input("c", {DType::kBool, {2, 3, 4}});
  const ValueId scale = b.constant_f32("scale", {4}, {1.f, 2.f, 3.f, 4.f});
  const std::vector<ValueId> ln = b.op_multi("LayerNormalization", {x, scale}, 3, {}, "ln_stats");
  b.output(ln[0]);
  b.output(ln[1]);
  b.output(b.op("LayerNormalization", {x, scale}, {}, "ln_y"));
  b.output(b.op("Where", {cond, x, x}, {}, "where_runtime"));
  b.output(b.op("Gather", {x, b.constant_i64("idx", {2}, {0, 2})}, {{"axis", int64_t{1}}}, "gather_list"));
  b.output(b.op("Gather", {x, b.constant_i64("one", {}, {-1})}, {{"axis", int64_t{2}}}, "gather_scalar"));
  b.output(b.op("Gather", {x, b.input("runtime_idx", {DType::kInt64, {2}})}, {{"axis", int64_t{1}}}, "gather_runtime"));
  b.output(b.op("Gelu", {x}, {}, "gelu"));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto d = vgf_delegate();
  const auto reason = [&](const char* name) { return d->supports(*g, g->find_node(name)).reason; };
  EXPECT_EQ(reason("ln_stats"), "LayerNormalization's Mean and InvStdDev outputs are not lowered (only Y is)");
  EXPECT_EQ(reason("where_runtime"), "Where's condition must be a constant (computed at run time here): a VGF select takes a constant bool condition");
  EXPECT_EQ(reason("gather_runtime"), "data-dependent indexing: not expressible as a VGF graph");
  for (const char* name : {"ln_y", "gather_scalar", "gather_list", "gelu"}) EXPECT_TRUE(d->supports(*g, g->find_node(name)).supported) << name;
}

TEST(VgfSupportTest, CompileNamesTheNodeItCannotLower) {
  Result<Graph> g = examples::make_rfc_model();
  ASSERT_TRUE(g.is_ok());
  auto d = vgf_delegate();
  Result<Blob> blob = d->compile(whole_graph_island(*g), {});
  ASSERT_FALSE(blob.is_ok());
  EXPECT_EQ(blob.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(blob.status().message(),
            "failed to lower node 'index_select_channels' (Gather) to VGF: constant Gather indices that reorder or "
            "repeat elements: a gather, not expressible as a VGF graph");
}

TEST(VgfSupportTest, DelegateIsADeviceEngineOnItsSharedContext) {
  auto d = make_vgf_delegate({{"gpu_shared_context_token", "scene0"}, {"gpu_shared_group_id", "2"}});
  ASSERT_TRUE(d.is_ok());
  EXPECT_EQ((*d)->name(), "vgf");
  EXPECT_EQ((*d)->resource(), "gpu:scene0:2");
  EXPECT_EQ((*d)->memory_kind(), MemoryDomain::Kind::kDevice);
  auto bad = make_vgf_delegate({{"gpu_shared_group_id", "seven"}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message(), "failed to make vgf delegate: gpu_shared_group_id 'seven' is not an integer");
  EXPECT_FALSE(make_vgf_delegate({{"gpu_shared_context_mode", "sometimes"}}).is_ok());
}

TEST(VgfSupportTest, EstimatesConvByItsMultiplyAdds) {
  GraphBuilder b("conv");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 10, 10}});
  b.output(b.op("Conv", {x, b.constant_f32("w", {8, 3, 3, 3}, std::vector<float>(216, 0.5f))},
                {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv"));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok());
  const CostEstimate cost = vgf_delegate()->estimate(*g, g->find_node("conv"), builtin_delegate_costs("vgf", "gpu-cpu", 0));
  // 800 outputs x 27 taps x 2; x (1200 B) + w (864 B) + y (3200 B).
  EXPECT_DOUBLE_EQ(cost.flops, 800.0 * 27 * 2);
  EXPECT_DOUBLE_EQ(cost.bytes, 1200.0 + 864 + 3200);
  EXPECT_GT(cost.seconds, 0.0);
}

// The RFC's intent: VGF(Transpose, AveragePool) → other(Gather, GatherElements,
// Gather) → VGF(Sin, Cos, Reciprocal, Mul, Transpose).
TEST(VgfPartitionTest, RfcModelPartitionsAsTheRfcIntends) {
  Result<Graph> g = examples::make_rfc_model();
  ASSERT_TRUE(g.is_ok());
  Result<Profile> profile = parse_profile(R"(
name: vgf-cpu
delegates:
  vgf: {enabled: true, shared_gpu: {token: t, group: 7}}
  cpu: {enabled: true, engine: portable}
partition: {prefer: vgf_first, min_partition_size: 1}
)");
  ASSERT_TRUE(profile.is_ok()) << profile.status().message();
  Result<PlannedModel> planned = plan_model(*g, *profile);
  ASSERT_TRUE(planned.is_ok()) << planned.status().message();
  const auto& islands = planned->plan.islands;
  ASSERT_EQ(islands.size(), 3u);
  const auto names = [&](const PlannedIsland& island) {
    std::vector<std::string> out;
    for (NodeId n : island.nodes) out.push_back(g->node(n).name);
    return out;
  };
  EXPECT_EQ(islands[0].delegate, "vgf");
  EXPECT_EQ(names(islands[0]), (std::vector<std::string>{"transpose_in", "avg_pool2d"}));
  EXPECT_EQ(islands[1].delegate, "cpu");
  EXPECT_EQ(names(islands[1]), (std::vector<std::string>{"index_select_channels", "gather_cols", "index_select_rows"}));
  EXPECT_EQ(islands[2].delegate, "vgf");
  EXPECT_EQ(names(islands[2]), (std::vector<std::string>{"sin", "cos", "reciprocal", "mul", "transpose_out"}));
}

TEST(VgfLoweringTest, RfcPrefixBecomesTransposeAndAvgPoolInNhwc) {
  Result<Graph> g = examples::make_rfc_model();
  ASSERT_TRUE(g.is_ok());
  const ValueId pooled = g->node(g->find_node("avg_pool2d")).outputs[0];
  Result<VgfFile> f = lower_island(island_of(*g, {"transpose_in", "avg_pool2d"}, {g->inputs()[0]}, {pooled}));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(op_names(*f), (std::vector<std::string>{"transpose", "avg_pool2d"}));
  ASSERT_EQ(f->segments.size(), 1u);
  const auto& ops = f->modules[0].ops;
  // perm (0,1,3,2) on NCHW swaps H and W: in NHWC that is (0,2,1,3).
  EXPECT_EQ(std::get<TransposeAttr>(ops[0].attr).perms, (std::vector<int32_t>{0, 2, 1, 3}));
  EXPECT_EQ(std::get<PoolAttr>(ops[1].attr), (PoolAttr{{2, 2}, {2, 2}, {0, 0, 0, 0}}));
  const Resource& in = f->resources[f->inputs[0]];
  const Resource& out = f->resources[f->outputs[0]];
  EXPECT_EQ(in.shape, (std::vector<int64_t>{1, 8, 8, 3}));
  EXPECT_EQ(in.layout, TensorLayout::kNhwc);
  EXPECT_EQ(in.name, "x");
  EXPECT_EQ(out.shape, (std::vector<int64_t>{1, 4, 4, 3}));
  EXPECT_EQ(out.layout, TensorLayout::kNhwc);
  EXPECT_EQ(out.logical_shape(), (std::vector<int64_t>{1, 3, 4, 4}));
  // The pool writes straight into the output: no copy.
  EXPECT_EQ(ops[1].outputs[0], f->outputs[0]);
}

TEST(VgfLoweringTest, RfcSuffixBecomesElementwiseOpsAndTranspose) {
  Result<Graph> g = examples::make_rfc_model();
  ASSERT_TRUE(g.is_ok());
  const ValueId gathered = g->node(g->find_node("index_select_rows")).outputs[0];
  Result<VgfFile> f = lower_island(
      island_of(*g, {"sin", "cos", "reciprocal", "mul", "transpose_out"}, {gathered}, {g->outputs()[0]}));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(op_names(*f), (std::vector<std::string>{"sin", "cos", "reciprocal", "mul", "transpose"}));
}

TEST(VgfLoweringTest, FlattenOfNhwcTransposesBackUnlessOnlyOnesMove) {
  for (const auto& [shape, expected] : std::vector<std::pair<Shape, std::vector<std::string>>>{
           {{1, 2, 3, 4}, {"abs", "transpose", "reshape"}},
           {{1, 4, 1, 1}, {"abs", "reshape"}},
       }) {
    GraphBuilder b("flatten");
    const ValueId x = b.input("x", {DType::kFloat32, shape});
    b.output(b.op("Flatten", {b.op("Abs", {x})}));
    Result<Graph> g = b.build();
    ASSERT_TRUE(g.is_ok());
    Result<VgfFile> f = lower_island(whole_graph_island(*g));
    ASSERT_TRUE(f.is_ok()) << f.status().message();
    EXPECT_EQ(op_names(*f), expected) << shape_to_string(shape);
    if (expected.size() == 3) {
      EXPECT_EQ(std::get<TransposeAttr>(f->modules[0].ops[1].attr).perms, (std::vector<int32_t>{0, 3, 1, 2}));
    }
  }
}

TEST(VgfLoweringTest, ReshapeOfAnIntermediateAliasesIt) {
  GraphBuilder b("alias");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 6}});
  const ValueId r = b.op("Reshape", {b.op("Abs", {x}), b.constant_i64("shape", {2}, {3, 4})});
  b.output(b.op("Neg", {r}));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok());
  Result<VgfFile> f = lower_island(whole_graph_island(*g));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  ASSERT_EQ(op_names(*f), (std::vector<std::string>{"abs", "reshape", "neg"}));
  const Operator& reshape = f->modules[0].ops[1];
  const Resource& from = f->resources[reshape.inputs[0]];
  const Resource& to = f->resources[reshape.outputs[0]];
  EXPECT_GE(from.alias_group, 0);
  EXPECT_EQ(from.alias_group, to.alias_group);
  EXPECT_EQ(to.shape, (std::vector<int64_t>{3, 4}));
}

TEST(VgfLoweringTest, HardSwishBecomesAComputeSegmentBetweenGraphSegments) {
  GraphBuilder b("custom");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 2, 3, 3}});
  b.output(b.op("Cos", {b.op("HardSwish", {b.op("Sin", {x})})}));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok());
  Result<VgfFile> f = lower_island(whole_graph_island(*g));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  ASSERT_EQ(f->segments.size(), 3u);
  EXPECT_EQ(f->segments[0].type, ModuleType::kGraph);
  EXPECT_EQ(f->segments[1].type, ModuleType::kCompute);
  EXPECT_EQ(f->segments[2].type, ModuleType::kGraph);
  const Module& shader = f->modules[f->segments[1].module];
  EXPECT_EQ(shader.name, "hardswish");
  EXPECT_EQ(shader.spirv.at(0), 0x07230203u);
  EXPECT_EQ(f->segments[1].push_constants, (std::vector<uint32_t>{18}));
  EXPECT_EQ(f->segments[1].dispatch, (std::vector<uint32_t>{1, 1, 1}));
}

TEST(VgfLoweringTest, BatchNormFoldsIntoMulAndAddConstants) {
  GraphBuilder b("bn");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 2, 2, 2}});
  const ValueId scale = b.constant_f32("scale", {2}, {2.f, 3.f});
  const ValueId bias = b.constant_f32("bias", {2}, {1.f, -1.f});
  const ValueId mean = b.constant_f32("mean", {2}, {0.5f, 1.f});
  const ValueId var = b.constant_f32("var", {2}, {4.f, 9.f});
  b.output(b.op("BatchNormalization", {x, scale, bias, mean, var}, {{"epsilon", 0.f}}));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok());
  Result<VgfFile> f = lower_island(whole_graph_island(*g));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  ASSERT_EQ(op_names(*f), (std::vector<std::string>{"mul", "add"}));
  // mul = scale / sqrt(var) = (1, 1); add = bias - mean * mul = (0.5, -2).
  const auto constant_of = [&](uint32_t id) {
    const Resource& r = f->resources[id];
    EXPECT_EQ(r.kind, ResourceKind::kConstant);
    EXPECT_EQ(r.shape, (std::vector<int64_t>{1, 1, 1, 2}));
    std::vector<float> v(2);
    std::memcpy(v.data(), f->constants.data() + r.constant_offset, 8);
    return v;
  };
  EXPECT_EQ(constant_of(f->modules[0].ops[0].inputs[1]), (std::vector<float>{1.f, 1.f}));
  EXPECT_EQ(constant_of(f->modules[0].ops[1].inputs[1]), (std::vector<float>{0.5f, -2.f}));
}

}  // namespace
}  // namespace hetsched::vgf
