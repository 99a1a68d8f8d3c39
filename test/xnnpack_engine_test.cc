// XNNPACK inside the CPU delegate, as a whole: how islands are cut into
// XNNPACK segments and portable runs, mixed islands, thread counts, the
// engine option, the fallback when XNNPACK cannot initialise, the init log
// line, and the RFC model through both engines.
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "delegates/cpu/xnnpack/segment_plan.h"
#include "delegates/cpu/xnnpack/xnnpack_library.h"
#include "examples/rfc_model.h"
#include "graph/builder.h"
#include "scheduler/pipeline.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using cpu::xnnpack::EnginePlan;
using cpu::xnnpack::plan_engine;
using testing::random_tensor;

using testing::f32;

using EngineRun = testing::CpuIslandRun;

// Compiles the whole graph as one CPU island with `options`, runs it `runs` times.
Result<EngineRun> run_island(const Graph& graph, const std::vector<Tensor>& inputs, const DelegateOptions& options,
                             int runs = 1) {
  return testing::run_cpu_island(graph, inputs, options, runs);
}

Result<EngineRun> run_engine(const Graph& graph, const std::vector<Tensor>& inputs, const std::string& engine,
                             int threads = 2) {
  return run_island(graph, inputs, {{"engine", engine}, {"threads", std::to_string(threads)}});
}

// |a - e| <= 1e-5 + 1e-3 |e|: the graphs here hold convolutions.
void expect_close(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.type(), expected.type());
  int reported = 0;
  for (int64_t i = 0; i < actual.num_elements() && reported < 5; ++i) {
    const float a = actual.data<float>()[i], e = expected.data<float>()[i];
    if (std::abs(a - e) <= 1e-5f + 1e-3f * std::abs(e)) continue;
    ADD_FAILURE() << "element " << i << ": " << a << " vs " << e;
    ++reported;
  }
}

// x f32[1,4,8,8] -> Conv 3x3 -> Relu -> Gather(axis 1, [3,1,0,2,2,1])
//   -> Conv 1x1 -> Add(the Conv before it) -> output
// The Gather has no XNNPACK mapping, so the island is
// [Conv, Relu] | Gather | [Conv, Add].
Result<Graph> mixed_island() {
  GraphBuilder b("mixed");
  const ValueId x = b.input("x", f32({1, 4, 8, 8}));
  ValueId y = b.op("Conv", {x, b.constant("w1", random_tensor({6, 4, 3, 3}, 11)), b.constant("b1", random_tensor({6}, 12))},
                   {{"pads", Ints{1, 1, 1, 1}}}, "conv1");
  y = b.op("Relu", {y}, {}, "relu");
  y = b.op("Gather", {y, b.constant_i64("idx", {6}, {3, 1, 0, 2, 2, 1})}, {{"axis", int64_t{1}}}, "gather");
  const ValueId c = b.op("Conv", {y, b.constant("w2", random_tensor({6, 6, 1, 1}, 13))}, {}, "conv2");
  b.output(b.op("Add", {c, y}, {}, "add"));
  return b.build();
}

// --- Planning ---------------------------------------------------------------------

TEST(XnnpackPlanTest, MixedIslandSplitsAroundThePortableGather) {
  auto g = mixed_island();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const EnginePlan plan = plan_engine(*g);
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_TRUE(plan.steps[0].xnnpack);
  EXPECT_FALSE(plan.steps[1].xnnpack);
  EXPECT_TRUE(plan.steps[2].xnnpack);
  EXPECT_EQ(plan.xnnpack_ops(), 4);
  EXPECT_EQ(plan.xnnpack_segments(), 2);
  EXPECT_EQ(plan.portable_ops(), 1);
  ASSERT_EQ(plan.portable.size(), 1u);
  EXPECT_EQ(g->node(plan.portable[0].node).name, "gather");
  EXPECT_EQ(plan.portable[0].reason, "op Gather has no XNNPACK mapping");

  // Segment 1 reads x and hands the Relu output on; the Conv output inside
  // it never leaves XNNPACK.
  const ValueId x = g->find_value("x");
  const ValueId relu = g->node(g->find_node("relu")).outputs[0];
  const ValueId gathered = g->node(g->find_node("gather")).outputs[0];
  EXPECT_EQ(plan.steps[0].inputs, std::vector<ValueId>{x});
  EXPECT_EQ(plan.steps[0].outputs, std::vector<ValueId>{relu});
  EXPECT_EQ(plan.steps[0].layouts.at(x), TensorLayout::kNhwc);
  EXPECT_EQ(plan.steps[2].inputs, std::vector<ValueId>{gathered});
  EXPECT_EQ(plan.steps[2].outputs, std::vector<ValueId>{g->outputs()[0]});
}

// Softmax over the last axis of a rank-4 tensor needs the graph's order,
// the Conv on each side NHWC: no transpose in this XNNPACK, so three segments.
TEST(XnnpackPlanTest, LayoutConflictStartsANewSegment) {
  GraphBuilder b("conflict");
  const ValueId x = b.input("x", f32({1, 3, 6, 6}));
  ValueId y = b.op("Conv", {x, b.constant("w1", random_tensor({4, 3, 1, 1}, 1))});
  y = b.op("Softmax", {y}, {{"axis", int64_t{-1}}}, "softmax");
  b.output(b.op("Conv", {y, b.constant("w2", random_tensor({2, 4, 1, 1}, 2))}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  const EnginePlan plan = plan_engine(*g);
  EXPECT_EQ(plan.xnnpack_segments(), 3);
  EXPECT_EQ(plan.portable_ops(), 0);
  const ValueId softmax_in = g->node(g->find_node("softmax")).inputs[0];
  EXPECT_EQ(plan.steps[0].layouts.at(softmax_in), TensorLayout::kNhwc);
  EXPECT_EQ(plan.steps[1].layouts.at(softmax_in), TensorLayout::kNchw);
}

// Elementwise ops with nothing spatial after them keep the graph's order:
// no conversion at all.
TEST(XnnpackPlanTest, ElementwiseOnlySegmentKeepsGraphOrder) {
  GraphBuilder b("ew");
  const ValueId a = b.input("a", f32({1, 3, 4, 4}));
  b.output(b.op("Sigmoid", {b.op("Mul", {a, a})}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  const EnginePlan plan = plan_engine(*g);
  ASSERT_EQ(plan.xnnpack_segments(), 1);
  for (const auto& [value, layout] : plan.steps[0].layouts) EXPECT_EQ(layout, TensorLayout::kNchw) << value;
}

// ... but an elementwise op feeding a Conv takes NHWC, so the segment
// converts once, at its input.
TEST(XnnpackPlanTest, ElementwiseBeforeConvTakesNhwc) {
  GraphBuilder b("ew_conv");
  const ValueId a = b.input("a", f32({1, 3, 4, 4}));
  const ValueId s = b.op("Add", {a, a});
  b.output(b.op("Conv", {s, b.constant("w", random_tensor({2, 3, 1, 1}, 1))}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  const EnginePlan plan = plan_engine(*g);
  ASSERT_EQ(plan.xnnpack_segments(), 1);
  EXPECT_EQ(plan.steps[0].layouts.at(a), TensorLayout::kNhwc);
  EXPECT_EQ(plan.steps[0].layouts.at(s), TensorLayout::kNhwc);
}

TEST(XnnpackPlanTest, ReshapeAloneStaysPortable) {
  GraphBuilder b("relabel");
  const ValueId a = b.input("a", f32({1, 3, 4, 4}));
  ValueId y = b.op("Transpose", {a}, {{"perm", Ints{0, 2, 3, 1}}});
  y = b.op("Reshape", {y, b.constant_i64("shape", {2}, {16, 3})}, {}, "reshape");
  b.output(b.op("Transpose", {y}, {{"perm", Ints{1, 0}}}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  const EnginePlan plan = plan_engine(*g);
  EXPECT_EQ(plan.xnnpack_segments(), 0);
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.portable_ops(), 3);
  ASSERT_EQ(plan.portable.size(), 3u);
  EXPECT_NE(plan.portable[1].reason.find("re-labelling ops alone"), std::string::npos);
}

// x -> Conv (stride 2) -> nearest Resize x2 -> Add(Conv of x) -> Concat(that
// Conv) along channels -> Conv 1x1: a feature-pyramid step. Resize and
// Concat have no XNNPACK mapping but an NHWC kernel, and every value
// around them is written and read in NHWC. With `expose_resize` the Resize
// output is an island output too, which must be in graph order.
Result<Graph> pyramid_island(bool expose_resize) {
  GraphBuilder b("pyramid");
  b.raw().set_opset(13);
  const ValueId x = b.input("x", f32({1, 4, 10, 12}));
  const ValueId hi = b.op("Conv", {x, b.constant("wh", random_tensor({6, 4, 3, 3}, 21))}, {{"pads", Ints{1, 1, 1, 1}}},
                          "conv_hi");
  const ValueId lo = b.op("Conv", {x, b.constant("wl", random_tensor({6, 4, 3, 3}, 22))},
                          {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}, "conv_lo");
  const ValueId up = b.op("Resize", {lo, b.constant_f32("roi", {0}, {}), b.constant_f32("scales", {4}, {1, 1, 2, 2})},
                          {{"mode", std::string("nearest")}}, "resize");
  const ValueId sum = b.op("Add", {hi, up}, {}, "add");
  const ValueId cat = b.op("Concat", {sum, hi}, {{"axis", int64_t{1}}}, "concat");
  b.output(b.op("Conv", {cat, b.constant("wo", random_tensor({3, 12, 1, 1}, 23))}, {}, "conv_out"));
  if (expose_resize) b.output(up);
  return b.build();
}

TEST(XnnpackPlanTest, ResizeAndConcatBetweenSegmentsRunInNhwc) {
  auto g = pyramid_island(false);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const EnginePlan plan = plan_engine(*g);
  std::vector<std::string> nhwc_nodes;
  std::set<ValueId> resident;
  for (const auto& step : plan.steps) {
    if (step.nhwc) nhwc_nodes.push_back(g->node(step.nodes[0]).name);
    resident.insert(step.resident_nhwc.begin(), step.resident_nhwc.end());
  }
  EXPECT_EQ(nhwc_nodes, (std::vector<std::string>{"resize", "concat"}));
  for (const char* producer : {"conv_lo", "resize", "add", "concat"})
    EXPECT_TRUE(resident.count(g->node(g->find_node(producer)).outputs[0])) << producer;
  EXPECT_FALSE(resident.count(g->find_value("x")));
  for (const auto& r : plan.portable) EXPECT_NE(r.reason.find("NHWC kernel"), std::string::npos) << r.reason;
}

TEST(XnnpackPlanTest, ResizeWithAGraphOutputStaysInGraphOrder) {
  auto g = pyramid_island(true);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const EnginePlan plan = plan_engine(*g);
  for (const auto& step : plan.steps)
    if (step.nhwc) {
      EXPECT_NE(g->node(step.nodes[0]).name, "resize");
    }
}

// A ShuffleNet V2 unit: conv, its channels split in halves (Slice), the
// second half through conv-dwconv-conv, Concat with the first half, the
// channel shuffle as exporters write it (Reshape, Transpose, Reshape), a
// conv. With engine xnnpack the delegate fuses the shuffle
// (graph/passes/fuse_channel_shuffle.h) and the Slices, Concat and shuffle
// run on their NHWC kernels between the segments.
TEST(XnnpackEngineTest, ShuffleUnitRunsInNhwcAndMatchesPortable) {
  GraphBuilder b("shuffle_unit");
  b.raw().set_opset(13);
  const ValueId x = b.input("x", f32({1, 4, 9, 9}));
  const ValueId y = b.op("Conv", {x, b.constant("w0", random_tensor({16, 4, 3, 3}, 1))}, {{"pads", Ints{1, 1, 1, 1}}});
  const auto half = [&](int64_t start, const char* name) {
    return b.op("Slice", {y, b.constant_i64(std::string(name) + "_s", {1}, {start}),
                          b.constant_i64(std::string(name) + "_e", {1}, {start + 8}),
                          b.constant_i64(std::string(name) + "_a", {1}, {1})},
                {}, name);
  };
  const ValueId x1 = half(0, "slice1"), x2 = half(8, "slice2");
  ValueId z = b.op("Relu", {b.op("Conv", {x2, b.constant("w1", random_tensor({8, 8, 1, 1}, 2))})});
  z = b.op("Conv", {z, b.constant("w2", random_tensor({8, 1, 3, 3}, 3))}, {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{8}}});
  z = b.op("Relu", {b.op("Conv", {z, b.constant("w3", random_tensor({8, 8, 1, 1}, 4))})});
  const ValueId cat = b.op("Concat", {x1, z}, {{"axis", int64_t{1}}}, "concat");
  const ValueId split = b.op("Reshape", {cat, b.constant_i64("split", {5}, {1, 2, 8, 9, 9})});
  const ValueId t = b.op("Transpose", {split}, {{"perm", Ints{0, 2, 1, 3, 4}}});
  const ValueId shuffled = b.op("Reshape", {t, b.constant_i64("back", {4}, {1, 16, 9, 9})}, {}, "shuffle");
  b.output(b.op("Conv", {shuffled, b.constant("w4", random_tensor({6, 16, 1, 1}, 5))}));
  const Graph graph = testing::build(b);
  const std::vector<Tensor> in{random_tensor({1, 4, 9, 9}, 6)};

  auto delegate = cpu::make_cpu_delegate({{"engine", "xnnpack"}, {"threads", "2"}});
  ASSERT_TRUE(delegate.is_ok());
  auto blob = (*delegate)->compile(testing::whole_graph_island(graph, "cpu"), {});
  ASSERT_TRUE(blob.is_ok());
  InitContext init;
  init.profile_ops = true;
  auto handle = (*delegate)->init(*blob, init);
  ASSERT_TRUE(handle.is_ok()) << handle.status().message();
  Tensor out(graph.value(graph.outputs()[0]).type);
  const TensorRef in_ref{&graph.value(graph.inputs()[0]).type, const_cast<std::byte*>(in[0].raw())};
  const TensorRef out_ref{&out.type(), out.raw()};
  std::vector<OpTiming> timings;
  ExecContext ctx;
  ctx.op_timings = &timings;
  ASSERT_TRUE((*handle)->execute(ctx, {&in_ref, 1}, {&out_ref, 1}).is_ok());
  std::vector<std::string> nhwc, portable;
  for (const OpTiming& piece : timings) {
    if (piece.kind == "nhwc") nhwc.insert(nhwc.end(), piece.nodes.begin(), piece.nodes.end());
    if (piece.kind == "portable") portable.insert(portable.end(), piece.nodes.begin(), piece.nodes.end());
  }
  std::sort(nhwc.begin(), nhwc.end());
  // The Concat went into the shuffle (its inputs are the shuffle's).
  EXPECT_EQ(nhwc, (std::vector<std::string>{"shuffle", "slice1", "slice2"}));
  EXPECT_TRUE(portable.empty());

  auto portable_run = run_engine(graph, in, "portable");
  ASSERT_TRUE(portable_run.is_ok()) << portable_run.status().message();
  expect_close(out, portable_run->outputs[0]);
}

// A YOLOv8 C2f block as the current exporters write it: a conv, its output
// Split in two along the channels (opset 18's num_outputs; uneven sizes
// through opset 13's split input), a conv on the second part, and a Concat
// of all three parts before the last conv. The Split runs on its NHWC
// kernel, writing both outputs, and nothing between the convs converts.
TEST(XnnpackEngineTest, SplitAlongTheChannelsRunsInNhwcAndMatchesPortable) {
  for (bool uneven : {false, true}) {
    SCOPED_TRACE(uneven ? "split input 6, 10" : "num_outputs 2");
    GraphBuilder b(uneven ? "c2f_uneven" : "c2f");
    b.raw().set_opset(uneven ? 13 : 18);
    const ValueId x = b.input("x", f32({2, 4, 7, 9}));
    const ValueId y = b.op("Conv", {x, b.constant("w0", random_tensor({16, 4, 3, 3}, 1))}, {{"pads", Ints{1, 1, 1, 1}}});
    const std::vector<ValueId> parts =
        uneven ? b.op_multi("Split", {y, b.constant_i64("sizes", {2}, {6, 10})}, 2, {{"axis", int64_t{1}}}, "split")
               : b.op_multi("Split", {y}, 2, {{"axis", int64_t{-3}}, {"num_outputs", int64_t{2}}}, "split");
    const int64_t second = uneven ? 10 : 8;
    const ValueId z = b.op("Relu", {b.op("Conv", {parts[1], b.constant("w1", random_tensor({second, second, 3, 3}, 2))},
                                        {{"pads", Ints{1, 1, 1, 1}}})});
    const ValueId cat = b.op("Concat", {parts[0], parts[1], z}, {{"axis", int64_t{1}}}, "concat");
    b.output(b.op("Conv", {cat, b.constant("w2", random_tensor({5, 16 + second, 1, 1}, 3))}));
    const Graph graph = testing::build(b);
    const EnginePlan plan = plan_engine(graph);
    std::vector<std::string> nhwc;
    for (const auto& step : plan.steps)
      if (step.nhwc) nhwc.push_back(graph.node(step.nodes[0]).name);
    EXPECT_EQ(nhwc, (std::vector<std::string>{"split", "concat"}));
    const std::vector<Tensor> in{random_tensor({2, 4, 7, 9}, 6)};
    auto fast = run_engine(graph, in, "xnnpack");
    ASSERT_TRUE(fast.is_ok()) << fast.status().message();
    auto portable_run = run_engine(graph, in, "portable");
    ASSERT_TRUE(portable_run.is_ok()) << portable_run.status().message();
    expect_close(fast->outputs[0], portable_run->outputs[0]);
  }
}

// A shuffle of 4 groups between two convs: the NHWC kernel's general path
// (not the interleave of two halves).
TEST(XnnpackEngineTest, ShuffleOfFourGroupsMatchesPortable) {
  // The 3-channel conv on XNNPACK, not the stem kernel (stem_conv.h).
  testing::ScopedEnv dense("HETSCHED_DENSE_CONV", "off");
  GraphBuilder b("shuffle4");
  const ValueId x = b.input("x", f32({2, 3, 5, 6}));
  const ValueId y = b.op("Conv", {x, b.constant("w0", random_tensor({12, 3, 3, 3}, 1))}, {{"pads", Ints{1, 1, 1, 1}}});
  const ValueId split = b.op("Reshape", {y, b.constant_i64("split", {5}, {2, 4, 3, 5, 6})});
  const ValueId t = b.op("Transpose", {split}, {{"perm", Ints{0, 2, 1, 3, 4}}});
  const ValueId shuffled = b.op("Reshape", {t, b.constant_i64("back", {4}, {2, 12, 5, 6})});
  b.output(b.op("Conv", {shuffled, b.constant("w1", random_tensor({5, 12, 1, 1}, 2))}));
  const Graph graph = testing::build(b);
  const std::vector<Tensor> in{random_tensor({2, 3, 5, 6}, 3)};
  auto xnn = run_engine(graph, in, "xnnpack");
  ASSERT_TRUE(xnn.is_ok()) << xnn.status().message();
  auto portable = run_engine(graph, in, "portable");
  ASSERT_TRUE(portable.is_ok()) << portable.status().message();
  EXPECT_EQ(xnn->coverage.xnnpack_segments, 2);
  EXPECT_EQ(xnn->coverage.portable_ops, 1);  // the fused shuffle, on its NHWC kernel
  expect_close(xnn->outputs[0], portable->outputs[0]);
}

// --- Running ----------------------------------------------------------------------

class XnnpackThreadsTest : public ::testing::TestWithParam<int> {};

TEST_P(XnnpackThreadsTest, MixedIslandMatchesPortable) {
  auto g = mixed_island();
  ASSERT_TRUE(g.is_ok());
  const std::vector<Tensor> in{random_tensor({1, 4, 8, 8}, 1)};
  auto xnn = run_engine(*g, in, "xnnpack", GetParam());
  ASSERT_TRUE(xnn.is_ok()) << xnn.status().message();
  auto portable = run_engine(*g, in, "portable", GetParam());
  ASSERT_TRUE(portable.is_ok()) << portable.status().message();
  EXPECT_EQ(xnn->coverage.engine, "xnnpack");
  EXPECT_EQ(xnn->coverage.xnnpack_segments, 2);
  EXPECT_EQ(xnn->coverage.xnnpack_ops, 4);
  EXPECT_EQ(xnn->coverage.portable_ops, 1);
  expect_close(xnn->outputs[0], portable->outputs[0]);
}

// A ResNet basic block: conv-BN-relu, conv-BN, add skip, relu, on a map
// big enough that XNNPACK splits work over the threads.
TEST_P(XnnpackThreadsTest, ResidualBlockMatchesPortable) {
  GraphBuilder b("block");
  const ValueId x = b.input("x", f32({1, 16, 20, 20}));
  auto bn = [&](ValueId v, uint32_t seed) {
    return b.op("BatchNormalization", {v, b.constant("s" + std::to_string(seed), random_tensor({16}, seed, 0.5f, 1.5f)),
                                       b.constant("t" + std::to_string(seed), random_tensor({16}, seed + 1)),
                                       b.constant("m" + std::to_string(seed), random_tensor({16}, seed + 2)),
                                       b.constant("v" + std::to_string(seed), random_tensor({16}, seed + 3, 0.5f, 2.f))});
  };
  ValueId y = b.op("Conv", {x, b.constant("w1", random_tensor({16, 16, 3, 3}, 2, -0.2f, 0.2f))}, {{"pads", Ints{1, 1, 1, 1}}});
  y = b.op("Relu", {bn(y, 10)});
  y = b.op("Conv", {y, b.constant("w2", random_tensor({16, 16, 3, 3}, 3, -0.2f, 0.2f))}, {{"pads", Ints{1, 1, 1, 1}}});
  y = b.op("Add", {bn(y, 20), x});
  b.output(b.op("Relu", {y}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const std::vector<Tensor> in{random_tensor({1, 16, 20, 20}, 1)};
  auto xnn = run_engine(*g, in, "xnnpack", GetParam());
  ASSERT_TRUE(xnn.is_ok()) << xnn.status().message();
  auto portable = run_engine(*g, in, "portable", GetParam());
  ASSERT_TRUE(portable.is_ok());
  EXPECT_EQ(xnn->coverage.xnnpack_ops, 7);
  EXPECT_EQ(xnn->coverage.xnnpack_segments, 1);
  expect_close(xnn->outputs[0], portable->outputs[0]);
}

TEST_P(XnnpackThreadsTest, PyramidWithNhwcResizeAndConcatMatchesPortable) {
  for (bool expose : {false, true}) {
    auto g = pyramid_island(expose);
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    const std::vector<Tensor> in{random_tensor({1, 4, 10, 12}, 1)};
    auto xnn = run_engine(*g, in, "xnnpack", GetParam());
    ASSERT_TRUE(xnn.is_ok()) << xnn.status().message();
    auto portable = run_engine(*g, in, "portable", GetParam());
    ASSERT_TRUE(portable.is_ok()) << portable.status().message();
    EXPECT_EQ(xnn->coverage.portable_ops, 2);
    ASSERT_EQ(xnn->outputs.size(), portable->outputs.size());
    for (size_t i = 0; i < xnn->outputs.size(); ++i) expect_close(xnn->outputs[i], portable->outputs[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, XnnpackThreadsTest, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& info) { return std::to_string(info.param) + "Threads"; });

// The runtimes are bound once at init; later runs must read the new inputs.
TEST(XnnpackEngineTest, RepeatedRunsReadFreshInputs) {
  auto g = mixed_island();
  ASSERT_TRUE(g.is_ok());
  const std::vector<Tensor> first{random_tensor({1, 4, 8, 8}, 1)};
  const std::vector<Tensor> second{random_tensor({1, 4, 8, 8}, 2)};
  auto delegate = cpu::make_cpu_delegate({{"engine", "xnnpack"}});
  ASSERT_TRUE(delegate.is_ok());
  Island island{0, "cpu", &*g, {0, 1, 2, 3, 4}, g->inputs(), g->outputs()};
  auto blob = (*delegate)->compile(island, {});
  ASSERT_TRUE(blob.is_ok());
  auto handle = (*delegate)->init(*blob, InitContext{});
  ASSERT_TRUE(handle.is_ok());
  Tensor out(g->value(g->outputs()[0]).type);
  const TensorRef out_ref{&out.type(), out.raw()};
  for (const auto* in : {&first, &second, &first}) {
    const TensorRef in_ref{&(*in)[0].type(), const_cast<std::byte*>((*in)[0].raw())};
    ExecContext ctx;
    ASSERT_TRUE((*handle)->execute(ctx, {&in_ref, 1}, {&out_ref, 1}).is_ok());
    auto expected = run_engine(*g, *in, "portable");
    ASSERT_TRUE(expected.is_ok());
    expect_close(out, expected->outputs[0]);
  }
}

// The islands of one delegate run their runtimes on the delegate's one
// thread pool, in turn; each keeps its own results, also after the
// delegate itself is gone.
TEST(XnnpackEngineTest, IslandsOfOneDelegateShareItsThreadPool) {
  auto g = mixed_island();
  ASSERT_TRUE(g.is_ok());
  auto delegate = cpu::make_cpu_delegate({{"engine", "xnnpack"}, {"threads", "2"}});
  ASSERT_TRUE(delegate.is_ok());
  Island island{0, "cpu", &*g, {0, 1, 2, 3, 4}, g->inputs(), g->outputs()};
  auto blob = (*delegate)->compile(island, {});
  ASSERT_TRUE(blob.is_ok());
  auto first = (*delegate)->init(*blob, InitContext{{}, 0});
  auto second = (*delegate)->init(*blob, InitContext{{}, 1});
  ASSERT_TRUE(first.is_ok() && second.is_ok());
  delegate->reset();
  const std::vector<Tensor> a{random_tensor({1, 4, 8, 8}, 1)}, b{random_tensor({1, 4, 8, 8}, 2)};
  Tensor out_a(g->value(g->outputs()[0]).type), out_b(out_a.type());
  for (int round = 0; round < 2; ++round) {
    for (auto [handle, in, out] : {std::tuple{&*first, &a, &out_a}, std::tuple{&*second, &b, &out_b}}) {
      const TensorRef in_ref{&(*in)[0].type(), const_cast<std::byte*>((*in)[0].raw())};
      const TensorRef out_ref{&out->type(), out->raw()};
      ExecContext ctx;
      ASSERT_TRUE((*handle)->execute(ctx, {&in_ref, 1}, {&out_ref, 1}).is_ok());
    }
  }
  auto expected_a = run_engine(*g, a, "portable");
  auto expected_b = run_engine(*g, b, "portable");
  ASSERT_TRUE(expected_a.is_ok() && expected_b.is_ok());
  expect_close(out_a, expected_a->outputs[0]);
  expect_close(out_b, expected_b->outputs[0]);
}

// A node whose output nobody reads still runs inside its segment.
TEST(XnnpackEngineTest, UnreadNodeOutputInsideASegmentIsHarmless) {
  GraphBuilder b("dead");
  const ValueId x = b.input("x", f32({1, 3, 4, 4}));
  const ValueId y = b.op("Sigmoid", {x});
  b.op("Relu", {y});
  b.output(b.op("Abs", {y}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const std::vector<Tensor> in{random_tensor({1, 3, 4, 4}, 1)};
  auto xnn = run_engine(*g, in, "xnnpack");
  ASSERT_TRUE(xnn.is_ok()) << xnn.status().message();
  EXPECT_EQ(xnn->coverage.xnnpack_ops, 3);
  auto portable = run_engine(*g, in, "portable");
  ASSERT_TRUE(portable.is_ok());
  expect_close(xnn->outputs[0], portable->outputs[0]);
}

TEST(XnnpackEngineTest, XnnpackIsTheDefaultEngine) {
  auto g = mixed_island();
  ASSERT_TRUE(g.is_ok());
  auto run = run_island(*g, {random_tensor({1, 4, 8, 8}, 1)}, {});
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  EXPECT_EQ(run->coverage.engine, "xnnpack");
  EXPECT_EQ(run->coverage.xnnpack_ops, 4);
}

TEST(XnnpackEngineTest, PortableEngineRunsNoXnnpack) {
  auto g = mixed_island();
  ASSERT_TRUE(g.is_ok());
  auto run = run_engine(*g, {random_tensor({1, 4, 8, 8}, 1)}, "portable");
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  EXPECT_EQ(run->coverage.engine, "portable");
  EXPECT_EQ(run->coverage.xnnpack_ops, 0);
  EXPECT_EQ(run->coverage.xnnpack_segments, 0);
  EXPECT_EQ(run->coverage.portable_ops, 5);
}

TEST(XnnpackEngineTest, UnknownEngineIsAnError) {
  auto d = cpu::make_cpu_delegate({{"engine", "onednn"}});
  ASSERT_FALSE(d.is_ok());
  EXPECT_EQ(d.status().message(), "failed to make cpu delegate: engine 'onednn' is not one of xnnpack, portable");
}

// XNNPACK failing to initialise (an unsupported CPU) is not an error: the
// island runs on the portable kernels, with the same results.
TEST(XnnpackEngineTest, UnavailableXnnpackFallsBackToPortable) {
  auto g = mixed_island();
  ASSERT_TRUE(g.is_ok());
  const std::vector<Tensor> in{random_tensor({1, 4, 8, 8}, 1)};
  cpu::xnnpack::simulate_unavailable_for_testing(true);
  auto run = run_engine(*g, in, "xnnpack");
  cpu::xnnpack::simulate_unavailable_for_testing(false);
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  EXPECT_EQ(run->coverage.engine, "portable");
  EXPECT_EQ(run->coverage.xnnpack_ops, 0);
  EXPECT_EQ(run->coverage.portable_ops, 5);
  auto portable = run_engine(*g, in, "portable");
  ASSERT_TRUE(portable.is_ok());
  expect_close(run->outputs[0], portable->outputs[0]);
}

// The init log line the preview and run show coverage from.
TEST(XnnpackEngineTest, InitLogsCoverageAtDebug) {
  auto g = mixed_island();
  ASSERT_TRUE(g.is_ok());
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("xnnpack_test", sink);
  logger->set_level(spdlog::level::debug);
  logger->set_pattern("%v");
  spdlog::set_default_logger(logger);
  auto run = run_engine(*g, {random_tensor({1, 4, 8, 8}, 1)}, "xnnpack");
  spdlog::set_default_logger(previous);
  ASSERT_TRUE(run.is_ok());
  const std::vector<std::string> lines = sink->last_formatted();
  auto has = [&](const std::string& text) {
    for (const std::string& l : lines)
      if (l.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has("[CPU] init: island 0, 5 ops: 4 on xnnpack in 2 segment(s), 1 portable"));
  EXPECT_TRUE(has("[CPU] island 0: node 'gather' (Gather) on portable: op Gather has no XNNPACK mapping"));
}

// --- The RFC model ----------------------------------------------------------------

// Output of examples/rfc_model_reference.py (numpy, float32), 1x3x4x4, as in rfc_model_test.cc.
const float kRfcExpected[48] = {
    0.954845846f, 0.892751276f, 0.923318267f, 0.86308527f, 0.538847923f, 0.496362001f, 0.517420828f, 0.475650638f,
    0.726471901f, 0.676477969f, 0.701181293f, 0.65232861f, 0.376641989f, 0.338843614f, 0.357629538f, 0.320269763f,
    -0.320269763f, -0.357629538f, -0.338843614f, -0.376641989f, -0.65232861f, -0.701181293f, -0.676477969f, -0.726471901f,
    -0.475650638f, -0.517420828f, -0.496362001f, -0.538847923f, -0.86308527f, -0.923318267f, -0.892751276f, -0.954845846f,
    0.230115443f, 0.19509019f, 0.212540448f, 0.177753627f, -0.0419093221f, -0.0755358338f, -0.0587060452f, -0.0924082994f,
    0.0924082994f, 0.0587060452f, 0.0755358338f, 0.0419093221f, -0.177753627f, -0.212540448f, -0.19509019f, -0.230115443f,
};

class XnnpackRfcModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(XnnpackRfcModelTest, SessionRunMatchesNumpyReference) {
  auto g = examples::make_rfc_model();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Profile profile = default_profile();
  profile.delegates["cpu"].engine = GetParam();
  auto program = build_program(*g, profile);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  auto session = Session::create(std::move(program).value(), profile);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  auto out = (*session)->run({examples::rfc_model_input()});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_EQ((*out)[0].type().to_string(), "f32[1,3,4,4]");
  for (int i = 0; i < 48; ++i) EXPECT_NEAR((*out)[0].data<float>()[i], kRfcExpected[i], 1e-5f) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Engines, XnnpackRfcModelTest, ::testing::Values("xnnpack", "portable"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// On XNNPACK the RFC model's AveragePool and Mul each form a segment; the
// transposes, gathers and trigonometry stay portable.
TEST(XnnpackRfcModelCoverageTest, AveragePoolAndMulRunOnXnnpack) {
  auto g = examples::make_rfc_model();
  ASSERT_TRUE(g.is_ok());
  auto run = run_engine(*g, {examples::rfc_model_input()}, "xnnpack");
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  EXPECT_EQ(run->coverage.xnnpack_segments, 2);
  EXPECT_EQ(run->coverage.xnnpack_ops, 2);
  EXPECT_EQ(run->coverage.portable_ops, 8);
}

}  // namespace
}  // namespace hetsched
