// What the VGF dispatch plan makes of lowered islands (GPU-free): which
// kernels convolutions run (the conv kernels shared with the Vulkan
// delegate, in NHWC), their tiling, and what folds into them. The numbers
// these dispatches compute are checked against the portable kernels in
// vgf_ops_test (SharedConv*, SharedLinear*, ResidualAddFusedRelu).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "delegates/vgf/dispatch_plan.h"
#include "delegates/vgf/lowering.h"
#include "graph/builder.h"
#include "shared_gpu/conv_kernel.h"
#include "shared_gpu/gpu_op_codes.h"
#include "test/vulkan_test_driver.h"

namespace hetsched::vgf {
namespace {

Tensor ramp(const Shape& shape) {
  Tensor t({DType::kFloat32, shape});
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = 0.01f * static_cast<float>(i % 17) - 0.05f;
  return t;
}

DispatchPlan plan_of(const std::function<void(GraphBuilder&)>& build) {
  GraphBuilder b("g");
  build(b);
  Result<Graph> g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  if (!g.is_ok()) return {};
  Result<VgfFile> file = lower_island(testing::whole_graph_island(*g, "vgf"));
  EXPECT_TRUE(file.is_ok()) << file.status().message();
  if (!file.is_ok()) return {};
  return plan_dispatches(*file);
}

std::vector<Kernel> kernels(const DispatchPlan& plan) {
  std::vector<Kernel> k;
  for (const SegmentDispatches& s : plan.segments)
    for (const Dispatch& d : s.dispatches) k.push_back(d.kernel);
  return k;
}

const Dispatch& first(const DispatchPlan& plan) {
  for (const SegmentDispatches& s : plan.segments)
    if (!s.dispatches.empty()) return s.dispatches.front();
  static const Dispatch none;
  ADD_FAILURE() << "no dispatch";
  return none;
}

// A conv of 1x64x4x4 by 32x64x3x3 and whatever `tail` adds after it.
DispatchPlan conv_plan(const std::function<ValueId(GraphBuilder&, ValueId)>& tail, Shape x = {1, 64, 4, 4},
                       Shape w = {32, 64, 3, 3}) {
  return plan_of([&](GraphBuilder& b) {
    const ValueId in = b.input("x", {DType::kFloat32, x});
    const ValueId y = b.op("Conv", {in, b.constant("w", ramp(w)), b.constant("b", ramp({w[0]}))},
                           {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    b.output(tail ? tail(b, y) : y);
  });
}

TEST(VgfDispatchPlanTest, ConvRunsTheSharedKernelInNhwcWithSplitK) {
  // 16 pixels, K = 576 (36 steps): four slices, then the reduce.
  const DispatchPlan plan = conv_plan(nullptr);
  ASSERT_EQ(kernels(plan), (std::vector<Kernel>{Kernel::kConv2d, Kernel::kConv2dReduce}));
  const Dispatch& conv = first(plan);
  ASSERT_EQ(conv.specialization.size(), 6u);
  EXPECT_EQ(conv.specialization[2], 4u);  // splits
  EXPECT_EQ(conv.specialization[4], 1u);  // tap-major: 64 channels
  EXPECT_EQ(conv.specialization[5], 1u);  // NHWC
  EXPECT_EQ(conv.push.size() * 4, sizeof(gpu::ConvPush));
  // Arranged weights, bias and the shared partial sums.
  ASSERT_EQ(plan.derived.size(), 3u);
  EXPECT_EQ(plan.derived[2].scratch_bytes, 4u * 16 * 32 * 4);
}

// A squeeze-and-excitation block of x [1, C, 4, 4]: the mean
// (GlobalAveragePool, or ReduceMean over H and W as PyTorch's dynamo
// exporter writes it), fc1 and its Relu, fc2 and its HardSigmoid, the Mul
// by x; `gate_out` also makes the gate an output (read twice), `other`
// multiplies another tensor by it.
struct SeBlock {
  int64_t channels = 24, squeeze = 6;
  bool reduce_mean = false, gate_out = false, other = false;
};
DispatchPlan se_plan(const SeBlock& se) {
  return plan_of([&](GraphBuilder& b) {
    const ValueId x = b.input("x", {DType::kFloat32, {1, se.channels, 4, 4}});
    const ValueId m = se.reduce_mean ? b.op("ReduceMean", {x}, {{"axes", std::vector<int64_t>{2, 3}}})
                                     : b.op("GlobalAveragePool", {x});
    const ValueId h = b.op("Relu", {b.op("Conv", {m, b.constant("w1", ramp({se.squeeze, se.channels, 1, 1})),
                                                  b.constant("b1", ramp({se.squeeze}))})});
    const ValueId g = b.op("HardSigmoid", {b.op("Conv", {h, b.constant("w2", ramp({se.channels, se.squeeze, 1, 1})),
                                                         b.constant("b2", ramp({se.channels}))})});
    const ValueId scaled = se.other ? b.input("z", {DType::kFloat32, {1, se.channels, 4, 4}}) : x;
    b.output(b.op("Mul", {scaled, g}));
    if (se.gate_out) b.output(g);
  });
}

TEST(VgfDispatchPlanTest, SqueezeExcitationRunsAsThePoolAndOneSeScaleDispatch) {
  for (const bool reduce_mean : {false, true}) {
    const DispatchPlan plan = se_plan({.reduce_mean = reduce_mean});
    ASSERT_EQ(kernels(plan), (std::vector<Kernel>{Kernel::kReduce, Kernel::kSeScale})) << reduce_mean;
    const Dispatch& se = plan.segments.back().dispatches.back();
    EXPECT_EQ(se.specialization, std::vector<uint32_t>{1});  // NHWC
    ASSERT_EQ(se.push.size() * 4, sizeof(gpu::SeScalePush));
    gpu::SeScalePush push{};
    std::memcpy(&push, se.push.data(), sizeof(push));
    EXPECT_EQ(push.channels, 24u);
    EXPECT_EQ(push.squeeze, 6u);
    EXPECT_EQ(push.plane, 16u);
    EXPECT_EQ(push.chunks, 1u);  // 384 elements
    EXPECT_NE(push.ops1, 0u);    // the Relu
    EXPECT_NE(push.ops2, 0u);    // the HardSigmoid's clamp
    // Both convs' nodes and the Mul's are the dispatch's.
    EXPECT_EQ(se.ops.back(), "mul");
    EXPECT_GE(se.nodes.size(), 3u);
  }
  // The kernel scales whatever the Mul multiplies by the gate.
  const DispatchPlan other = se_plan({.other = true});
  ASSERT_EQ(kernels(other).back(), Kernel::kSeScale);
  EXPECT_NE(other.segments.back().dispatches.back().bindings[0], first(other).bindings[0]);  // z, not x
}

TEST(VgfDispatchPlanTest, SqueezeExcitationStaysUnfusedWhereItsPiecesAreReadElsewhere) {
  const std::vector<Kernel> k = kernels(se_plan({.gate_out = true}));
  EXPECT_EQ(std::count(k.begin(), k.end(), Kernel::kSeScale), 0);
  EXPECT_EQ(std::count(k.begin(), k.end(), Kernel::kPointwiseConv), 2);  // fc1 and fc2 apart
  // Past gpu::se_scale_fits: 1100 x 120 weights in a matrix.
  const std::vector<Kernel> big = kernels(se_plan({.channels = 1100, .squeeze = 120}));
  EXPECT_EQ(std::count(big.begin(), big.end(), Kernel::kSeScale), 0);
}

// A depthwise conv on x [1, 8, h, h] and its Relu, then the spatial mean of
// its output (GlobalAveragePool, or ReduceMean as the dynamo exporter
// writes it), both outputs.
DispatchPlan depthwise_mean_plan(int64_t h, bool reduce_mean, const char* activation = "Relu") {
  return plan_of([&](GraphBuilder& b) {
    const ValueId x = b.input("x", {DType::kFloat32, {1, 8, h, h}});
    const ValueId d = b.op(activation, {b.op("Conv", {x, b.constant("w", ramp({8, 1, 3, 3}))},
                                             {{"group", int64_t{8}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}})});
    b.output(reduce_mean ? b.op("ReduceMean", {d}, {{"axes", std::vector<int64_t>{2, 3}}})
                         : b.op("GlobalAveragePool", {d}));
    b.output(d);
  });
}

TEST(VgfDispatchPlanTest, TheMeanOfADepthwiseConvIsWrittenByTheConv) {
  for (const bool reduce_mean : {false, true}) {
    const DispatchPlan plan = depthwise_mean_plan(14, reduce_mean);
    ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kDepthwiseMean}) << reduce_mean;
    const Dispatch& d = first(plan);
    EXPECT_EQ(d.specialization, (std::vector<uint32_t>{256, 1}));  // 196 pixels; NHWC
    ASSERT_EQ(d.bindings.size(), 5u);
    EXPECT_EQ(d.writes, (std::vector<uint32_t>{d.bindings[3], d.bindings[4]}));
    EXPECT_EQ(d.groups[0] * d.groups[1], 8u);  // a workgroup per plane
    EXPECT_GE(d.nodes.size(), 3u);             // the conv, its Relu, the mean
  }
  // A HardSwish between them (a compute segment the lowering writes, folded
  // into the conv's dispatch): the mean lies in the next segment.
  const std::vector<Kernel> hard_swish = kernels(depthwise_mean_plan(14, true, "HardSwish"));
  EXPECT_EQ(std::count(hard_swish.begin(), hard_swish.end(), Kernel::kDepthwiseMean), 1);
  EXPECT_EQ(std::count(hard_swish.begin(), hard_swish.end(), Kernel::kReduce), 0);
  // Planes past gpu::kDepthwiseMeanMaxPlane (29 x 29) keep the mean's own dispatch.
  EXPECT_EQ(kernels(depthwise_mean_plan(29, false)),
            (std::vector<Kernel>{Kernel::kDepthwiseConv2d, Kernel::kReduce}));
}

TEST(VgfDispatchPlanTest, PrecisionFp16RunsConvsOnTheTensorCoreKernelInTilesOf64Channels) {
  // 1x256x56x56 by 256 3x3 filters: f32 tiles 128 channels, fp16 64.
  GraphBuilder b("g");
  const ValueId in = b.input("x", {DType::kFloat32, {1, 256, 56, 56}});
  b.output(b.op("Conv", {in, b.constant("w", ramp({256, 256, 3, 3})), b.constant("b", ramp({256}))},
                {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok());
  Result<VgfFile> file = lower_island(testing::whole_graph_island(*g, "vgf"));
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  const DispatchPlan f32 = plan_dispatches(*file);
  const DispatchPlan f16 = plan_dispatches(*file, gpu::CoopMatConv{16, 16, 16, 32});
  EXPECT_EQ(first(f32).kernel, Kernel::kConv2d);
  EXPECT_EQ(first(f32).specialization[0], 8u);  // 128 channels per tile
  const Dispatch& conv = first(f16);
  EXPECT_EQ(conv.kernel, Kernel::kConv2dCoopmat);
  ASSERT_EQ(conv.specialization.size(), 11u);
  EXPECT_EQ(conv.specialization[0], 4u);  // 64 channels per tile
  EXPECT_EQ(conv.specialization[5], 1u);  // NHWC
  // A 2 x 4 grid of subgroups, 16 x 16 x 16 fragments.
  EXPECT_EQ(std::vector<uint32_t>(conv.specialization.begin() + 6, conv.specialization.end()),
            (std::vector<uint32_t>{2, 4, 16, 16, 16}));
  EXPECT_EQ(f16.dispatch_count(), f32.dispatch_count());
}

TEST(VgfDispatchPlanTest, ChannelMajorConvCarriesItsNhwcTapTable) {
  const DispatchPlan plan = conv_plan(nullptr, {1, 5, 8, 8}, {4, 5, 3, 3});
  ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kConv2d});
  EXPECT_EQ(first(plan).specialization[4], 0u);
  // weights, bias, taps: per k = (c, kh, kw) the NHWC offset and displacement.
  ASSERT_EQ(plan.derived.size(), 3u);
  const std::vector<uint32_t>& taps = plan.derived[2].words;
  ASSERT_EQ(taps.size(), 2u * 5 * 9);
  const uint32_t at = 2 * (2 * 9 + 1 * 3 + 2);  // k of c = 2, kh = 1, kw = 2
  EXPECT_EQ(taps[at], (1u * 8 + 2u) * 5 + 2);  // (kh * W + kw) * C + c
  EXPECT_EQ(taps[at + 1], 1u | 2u << 16);
}

TEST(VgfDispatchPlanTest, ReluAndHardSwishFoldIntoTheConv) {
  const DispatchPlan plan = conv_plan([](GraphBuilder& b, ValueId y) { return b.op("HardSwish", {b.op("Relu", {y})}); },
                                      {1, 16, 12, 12}, {8, 16, 3, 3});
  ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kConv2d});
  const Dispatch& conv = first(plan);
  const uint32_t ops = static_cast<uint32_t>(gpu::OpCode::kRelu) | static_cast<uint32_t>(gpu::OpCode::kHardSwish) << 8;
  EXPECT_EQ(conv.specialization[3], ops);
  EXPECT_EQ(conv.ops, (std::vector<std::string>{"conv2d", "clamp", "hardswish"}));
}

TEST(VgfDispatchPlanTest, GlobalPoolsAreReductionsWithLanesPerOutput) {
  const DispatchPlan plan = plan_of([](GraphBuilder& b) {
    b.output(b.op("GlobalAveragePool", {b.input("x", {DType::kFloat32, {2, 24, 56, 56}})}));
  });
  ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kReduce});
  // outer n, len h*w, inner c, op mean, 48 outputs, 64 lanes each: one workgroup per output.
  const std::vector<uint32_t>& push = first(plan).push;
  EXPECT_EQ(std::vector<uint32_t>(push.begin(), push.begin() + 6), (std::vector<uint32_t>{2, 56 * 56, 24, 2, 48, 64}));
  EXPECT_EQ(first(plan).groups, (std::array<uint32_t, 3>{48, 1, 1}));
  // A row of 3: four lanes, sixteen outputs per workgroup.
  const DispatchPlan short_rows = plan_of([](GraphBuilder& b) {
    b.output(b.op("ReduceMax", {b.input("x", {DType::kFloat32, {37, 3}})}, {{"axes", std::vector<int64_t>{1}}}));
  });
  ASSERT_EQ(kernels(short_rows), std::vector<Kernel>{Kernel::kReduce});
  const std::vector<uint32_t>& short_push = first(short_rows).push;
  EXPECT_EQ(std::vector<uint32_t>(short_push.begin(), short_push.begin() + 6), (std::vector<uint32_t>{37, 3, 1, 1, 37, 4}));
  EXPECT_EQ(first(short_rows).groups, (std::array<uint32_t, 3>{3, 1, 1}));
}

TEST(VgfDispatchPlanTest, AMeanOverNeighbouringAxesIsOneReduction) {
  // ReduceMean over H and W (MnasNet's head): NHWC axes 1 and 2, one
  // reduce_sum each as lowered, then the mul by 1/(H*W), which folds in.
  const DispatchPlan plan = plan_of([](GraphBuilder& b) {
    const ValueId x = b.input("x", {DType::kFloat32, {2, 24, 7, 9}});
    b.output(b.op("ReduceMean", {x}, {{"axes", std::vector<int64_t>{2, 3}}}));
  });
  ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kReduce});
  const std::vector<uint32_t>& push = first(plan).push;
  EXPECT_EQ(std::vector<uint32_t>(push.begin(), push.begin() + 7), (std::vector<uint32_t>{2, 63, 24, 0, 48, 64, 24}));  // the 1/n per channel
  EXPECT_EQ(first(plan).ops, (std::vector<std::string>{"reduce_sum", "reduce_sum", "mul"}));
}

TEST(VgfDispatchPlanTest, SwishFoldsIntoTheConvAsOneEpilogueOp) {
  const DispatchPlan plan = conv_plan([](GraphBuilder& b, ValueId y) { return b.op("Mul", {y, b.op("Sigmoid", {y})}); },
                                      {1, 16, 12, 12}, {8, 16, 3, 3});
  ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kConv2d});
  const Dispatch& conv = first(plan);
  EXPECT_EQ(conv.specialization[3], static_cast<uint32_t>(gpu::OpCode::kSwish));
  EXPECT_EQ(conv.ops, (std::vector<std::string>{"conv2d", "sigmoid", "mul"}));
  // Operands swapped, after a Relu: the second epilogue op.
  const DispatchPlan swapped = conv_plan(
      [](GraphBuilder& b, ValueId y) {
        const ValueId r = b.op("Relu", {y});
        return b.op("Mul", {b.op("Sigmoid", {r}), r});
      },
      {1, 16, 12, 12}, {8, 16, 3, 3});
  ASSERT_EQ(kernels(swapped), std::vector<Kernel>{Kernel::kConv2d});
  EXPECT_EQ(first(swapped).specialization[3],
            static_cast<uint32_t>(gpu::OpCode::kRelu) | static_cast<uint32_t>(gpu::OpCode::kSwish) << 8);
}

TEST(VgfDispatchPlanTest, SwishStaysApartWhenItsInputHasAThirdReader) {
  // y * Sigmoid(y) + y: y is read three times, so the conv must write it.
  const DispatchPlan plan = conv_plan(
      [](GraphBuilder& b, ValueId y) { return b.op("Add", {b.op("Mul", {y, b.op("Sigmoid", {y})}), y}); },
      {1, 16, 12, 12}, {8, 16, 3, 3});
  EXPECT_EQ(kernels(plan), (std::vector<Kernel>{Kernel::kConv2d, Kernel::kUnary, Kernel::kBinary, Kernel::kBinary}));
  // x * Sigmoid(z) of two different tensors is no Swish (the Sigmoid
  // folds into the Neg's dispatch).
  const DispatchPlan other = conv_plan(
      [](GraphBuilder& b, ValueId y) { return b.op("Mul", {y, b.op("Sigmoid", {b.op("Neg", {y})})}); },
      {1, 16, 12, 12}, {8, 16, 3, 3});
  EXPECT_EQ(kernels(other), (std::vector<Kernel>{Kernel::kConv2d, Kernel::kUnary, Kernel::kBinary}));
}

TEST(VgfDispatchPlanTest, NothingFoldsIntoAConvWhoseOutputIsReadTwice) {
  const DispatchPlan plan = conv_plan([](GraphBuilder& b, ValueId y) { return b.op("Add", {b.op("Relu", {y}), y}); },
                                      {1, 16, 12, 12}, {8, 16, 3, 3});
  EXPECT_EQ(kernels(plan), (std::vector<Kernel>{Kernel::kConv2d, Kernel::kUnary, Kernel::kBinary}));
  EXPECT_EQ(first(plan).specialization[3], 0u);
}

TEST(VgfDispatchPlanTest, NothingFoldsIntoAConvThatIsAnIslandOutput) {
  const DispatchPlan plan = plan_of([](GraphBuilder& b) {
    const ValueId x = b.input("x", {DType::kFloat32, {1, 16, 12, 12}});
    const ValueId y = b.op("Conv", {x, b.constant("w", ramp({8, 16, 1, 1}))});
    b.output(y);
    b.output(b.op("Relu", {y}));
  });
  EXPECT_EQ(kernels(plan), (std::vector<Kernel>{Kernel::kPointwiseConv, Kernel::kUnary}));
}

TEST(VgfDispatchPlanTest, DepthwiseRunsTheSharedKernelWithItsActivation) {
  const DispatchPlan plan = plan_of([](GraphBuilder& b) {
    const ValueId x = b.input("x", {DType::kFloat32, {1, 6, 9, 9}});
    const ValueId y = b.op("Conv", {x, b.constant("w", ramp({6, 1, 3, 3}))}, {{"group", int64_t{6}}});
    b.output(b.op("Relu", {y}));
  });
  ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kDepthwiseConv2d});
  EXPECT_EQ(first(plan).specialization, std::vector<uint32_t>{1});  // NHWC
}

TEST(VgfDispatchPlanTest, LinearLayerIsOneConvDispatchWithItsBias) {
  const DispatchPlan plan = plan_of([](GraphBuilder& b) {
    const ValueId a = b.input("a", {DType::kFloat32, {3, 40}});
    b.output(b.op("Relu", {b.op("Gemm", {a, b.constant("w", ramp({40, 10})), b.constant("c", ramp({10}))})}));
  });
  // Small: pointwise_conv.comp, rows as images of one pixel, in NHWC.
  ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kPointwiseConv});
  gpu::PointwisePush p{};
  ASSERT_EQ(first(plan).push.size() * 4, sizeof(p));
  std::memcpy(&p, first(plan).push.data(), sizeof(p));
  EXPECT_EQ(p.batch, 3u);
  EXPECT_EQ(p.pixels, 1u);
  EXPECT_EQ(p.k, 40u);
  EXPECT_EQ(p.out_channels, 10u);
  EXPECT_EQ(p.has_bias, 1u);
  EXPECT_EQ(p.epilogue_ops, static_cast<uint32_t>(gpu::OpCode::kRelu));
  EXPECT_EQ(first(plan).specialization.back(), 1u);  // NHWC
  // Past gpu::kPointwiseMaxFmas (32M): 512 x 256 x 512 = 67M on the conv kernel.
  const DispatchPlan big = plan_of([](GraphBuilder& b) {
    const ValueId a = b.input("a", {DType::kFloat32, {512, 256}});
    b.output(b.op("Gemm", {a, b.constant("w", ramp({256, 512})), b.constant("c", ramp({512}))}));
  });
  EXPECT_EQ(kernels(big).front(), Kernel::kConv2d);
}

TEST(VgfDispatchPlanTest, MatMulOfTwoRunTimeOperandsKeepsTheMatmulKernel) {
  const DispatchPlan plan = plan_of([](GraphBuilder& b) {
    b.output(b.op("MatMul", {b.input("a", {DType::kFloat32, {3, 4}}), b.input("b", {DType::kFloat32, {4, 5}})}));
  });
  EXPECT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kMatmul});
}

TEST(VgfDispatchPlanTest, ResidualAddAndReluAreOneDispatch) {
  const DispatchPlan plan = plan_of([](GraphBuilder& b) {
    const ValueId x = b.input("x", {DType::kFloat32, {1, 8, 5, 5}});
    const ValueId r = b.input("r", {DType::kFloat32, {1, 8, 5, 5}});
    b.output(b.op("Relu", {b.op("Add", {x, r})}));
  });
  ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kBinary});
  const std::vector<uint32_t>& push = first(plan).push;
  EXPECT_EQ(push[3], 0u);  // no affine
  EXPECT_EQ(push[4 + 18], static_cast<uint32_t>(gpu::OpCode::kRelu));  // the epilogue ops, after the dims
}

// A conv, its Add of the conv's own input and the Relu: one conv dispatch
// whose residual binding is that input; with split-K, the reduce's.
TEST(VgfDispatchPlanTest, ResidualAddOfAConvJoinsItBeforeTheRelu) {
  for (const Shape& x : {Shape{1, 32, 8, 8}, Shape{1, 32, 2, 2}}) {
    const DispatchPlan plan = plan_of([&](GraphBuilder& b) {
      const ValueId in = b.input("x", {DType::kFloat32, x});
      const ValueId y = b.op("Conv", {in, b.constant("w", ramp({32, 32, 3, 3})), b.constant("b", ramp({32}))},
                             {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
      b.output(b.op("Relu", {b.op("Add", {y, in})}));
    });
    const std::vector<Kernel> k = kernels(plan);
    ASSERT_FALSE(k.empty());
    const Dispatch& conv = first(plan);
    EXPECT_EQ(conv.kernel, Kernel::kConv2d);
    gpu::ConvPush push{};
    std::memcpy(&push, conv.push.data(), sizeof(push));
    EXPECT_EQ(push.has_residual, 1u);
    EXPECT_EQ(push.epilogue_ops, static_cast<uint32_t>(gpu::OpCode::kRelu));
    const bool split = k.size() == 2;
    if (split) {
      EXPECT_EQ(k[1], Kernel::kConv2dReduce);
      EXPECT_EQ(plan.segments[0].dispatches[1].bindings[3], conv.bindings[0]);  // x
    } else {
      ASSERT_EQ(k.size(), 1u);
      EXPECT_EQ(conv.bindings[5], conv.bindings[0]);
    }
    EXPECT_EQ(conv.nodes.size(), 3u);  // conv, add, relu
  }
}

// A grouped conv, which the lowering writes as per-group slices, conv2ds
// and a concat, runs as one grouped dispatch of the shared conv kernel with
// the Relu after it; past the 64 parts one concat takes, it stays as written.
TEST(VgfDispatchPlanTest, AGroupedConvIsOneDispatch) {
  const auto grouped = [](int64_t groups) {
    return plan_of([groups](GraphBuilder& b) {
      const ValueId in = b.input("x", {DType::kFloat32, {1, 2 * groups, 6, 5}});
      const ValueId y =
          b.op("Conv", {in, b.constant("w", ramp({3 * groups, 2, 3, 3})), b.constant("b", ramp({3 * groups}))},
               {{"group", groups}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
      b.output(b.op("Relu", {y}));
    });
  };
  const DispatchPlan plan = grouped(13);
  ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kConv2d});
  gpu::ConvPush push{};
  std::memcpy(&push, first(plan).push.data(), sizeof(push));
  EXPECT_EQ(push.channels, 26u);
  EXPECT_EQ(push.group_channels, 2u);
  EXPECT_EQ(push.group_out, 3u);
  EXPECT_EQ(push.out_channels, 39u);
  EXPECT_EQ(push.epilogue_ops, static_cast<uint32_t>(gpu::OpCode::kRelu));
  EXPECT_GT(kernels(grouped(70)).size(), 70u);
}

// LayerNormalization over contiguous rows (a transformer's) is one compute
// segment of layer_norm.comp; in NHWC (rank 4) the lowering writes it out
// (reduce_sum, mul by 1/n, sub, mul, reduce_sum, mul by 1/n, add epsilon,
// rsqrt, mul, mul by gamma, add beta), and the scales, epsilon and rsqrt
// fold into the reductions.
TEST(VgfDispatchPlanTest, LayerNormalizationOfRowsIsOneComputeDispatch) {
  const DispatchPlan plan = plan_of([](GraphBuilder& b) {
    const ValueId x = b.input("x", {DType::kFloat32, {3, 7, 40}});
    b.output(b.op("LayerNormalization", {x, b.constant("g", ramp({40})), b.constant("b", ramp({40}))},
                  {{"axis", int64_t{-1}}}));
  });
  ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kCustom});
  const Dispatch& d = first(plan);
  EXPECT_EQ(d.groups, (std::array<uint32_t, 3>{21, 1, 1}));  // a workgroup per row
  EXPECT_EQ(d.push[0], 3u * 7 * 40);
  EXPECT_EQ(d.push[1], 40u);
}

TEST(VgfDispatchPlanTest, SoftmaxOfRowsIsOneComputeDispatch) {
  const DispatchPlan plan = plan_of([](GraphBuilder& b) {
    b.output(b.op("Softmax", {b.input("x", {DType::kFloat32, {2, 5, 129}})}));
  });
  ASSERT_EQ(kernels(plan), std::vector<Kernel>{Kernel::kCustom});
  EXPECT_EQ(first(plan).groups, (std::array<uint32_t, 3>{10, 1, 1}));
  EXPECT_EQ(first(plan).push, (std::vector<uint32_t>{2 * 5 * 129, 129}));
}

TEST(VgfDispatchPlanTest, LayerNormalizationInNhwcFoldsTailsIntoItsReductions) {
  const DispatchPlan plan = plan_of([](GraphBuilder& b) {
    const ValueId x = b.input("x", {DType::kFloat32, {2, 4, 3, 5}});
    b.output(b.op("LayerNormalization", {x, b.constant("g", ramp({4, 3, 5})), b.constant("b", ramp({4, 3, 5}))},
                  {{"axis", int64_t{1}}}));
  });
  std::vector<const Dispatch*> reductions;
  for (const Dispatch& d : plan.segments[0].dispatches)
    if (d.kernel == Kernel::kReduce) reductions.push_back(&d);
  // The normalised axes C, H, W are NHWC axes 3, 1, 2, a reduce_sum each
  // as lowered: H and W join (neighbours), C stays apart; the last of each
  // statistic carries the tail.
  ASSERT_EQ(reductions.size(), 4u);
  EXPECT_EQ(reductions[1]->push[6], 1u);  // the mean's 1/n, one affine value
  EXPECT_EQ(reductions[3]->push[7], static_cast<uint32_t>(gpu::OpCode::kSqrt) |
                                        static_cast<uint32_t>(gpu::OpCode::kReciprocal) << 8);
  // 15 operators: two reductions joined, the two 1/n muls, the epsilon add
  // and the rsqrt folded.
  EXPECT_EQ(plan.dispatch_count(), 9u);
}

}  // namespace
}  // namespace hetsched::vgf
