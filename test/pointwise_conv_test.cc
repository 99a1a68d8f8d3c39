// 1x1 convs on the fast GEMM (delegates/cpu/fast/pointwise_conv.cc) against
// the portable kernels (the oracle: direct loops, double sums) on odd
// shapes: pixel counts that are no multiple of the micro-kernel's 12 rows
// or 32 columns, channel counts of 1 to 47 (one partial panel, one whole
// block and a partial one), strides 2 and (2, 1), batches, no bias, fused
// activations, the residual Add and Relu fused into the epilogue (an
// identity, and a downsample branch's conv coming after the main one), 1
// and 2 threads; in the graph's order (the conv alone in its island) and
// as NHWC steps between two XNNPACK segments; then an imported ONNX
// CNN of two bottlenecks (BatchNorm folded at import) where the rule picks
// the fast GEMM for the segment made only of wide 1x1 convs, the Add and
// the Relu, and XNNPACK for the rest.
//
// Tolerance: |fast - portable| <= 1e-5 * max |portable| + 1e-6 per element.
// The GEMM's f32 sums are ~1e-7 of the output's range off here; a row or
// column one off, a stride or a residual offset wrong gives errors of the
// output's own size.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

#include "delegates/cpu/cpu_delegate.h"
#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/fast/gemm_split.h"
#include "delegates/cpu/fast/pointwise_rule.h"
#include "graph/builder.h"
#include "graph/passes/fused_activation.h"
#include "test/onnx_model_builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using testing::random_tensor;

TensorType f32_type(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }


using testing::ScopedEnv;

// Runs `graph` on both engines at 1 and 2 threads and compares (test_util.h).
void expect_matches_portable(const Graph& graph, const Shape& x, int fast, int segments) {
  testing::expect_fast_cpu_matches_portable(graph, x, fast, segments, 1e-5f, "pointwise");
}

ValueId add_conv(GraphBuilder& b, ValueId x, int64_t cin, int64_t cout, int64_t k, const Ints& strides, bool bias,
                 const FusedActivation& activation, const std::string& name, uint32_t seed) {
  // Weights ~ 1/sqrt(fan-in), so that outputs stay of order 1.
  const float bound = 1.f / std::sqrt(static_cast<float>(cin * k * k));
  std::vector<ValueId> ins{x, b.constant(name + "_w", random_tensor({cout, cin, k, k}, seed, -bound, bound))};
  if (bias) ins.push_back(b.constant(name + "_b", random_tensor({cout}, seed + 1)));
  const int64_t p = k / 2;
  const ValueId y = b.op("Conv", ins, {{"pads", Ints{p, p, p, p}}, {"strides", strides}}, name);
  write_fused_activation(activation, b.raw().node(b.raw().find_node(name)).attrs);
  return y;
}

struct ConvCase {
  Shape x;  // N, Cin, H, W
  int64_t cout;
  Ints strides{1, 1};
  bool bias = true;
  FusedActivation activation{};
};

// One 1x1 conv alone in its island: the fast GEMM in the graph's order.
void expect_conv_agrees(const ConvCase& c) {
  ScopedEnv on("HETSCHED_POINTWISE", "on");
  GraphBuilder b("conv_" + std::to_string(c.x[1]) + "x" + std::to_string(c.cout));
  const ValueId x = b.input("x", f32_type(c.x));
  b.output(add_conv(b, x, c.x[1], c.cout, 1, c.strides, c.bias, c.activation, "conv", 2));
  const Graph graph = testing::build(b);
  expect_matches_portable(graph, c.x, 1, 0);
}

TEST(PointwiseConvTest, OddSizesAndFewChannelsMatchPortable) {
  expect_conv_agrees({{1, 5, 7, 9}, 7});   // 63 pixels: 5 row tiles and 3 left
  expect_conv_agrees({{1, 1, 3, 3}, 1});
  expect_conv_agrees({{1, 3, 1, 1}, 2});   // one pixel
  expect_conv_agrees({{1, 17, 9, 18}, 33});  // a whole 32-column block and one column
  expect_conv_agrees({{1, 37, 11, 7}, 47});
  expect_conv_agrees({{1, 100, 13, 5}, 16});  // one panel only (the half kernel)
  // Enough work to split over 2 threads (899 pixels, 11 MFLOP).
  expect_conv_agrees({{1, 64, 29, 31}, 97});
}

TEST(PointwiseConvTest, StridesMatchPortable) {
  expect_conv_agrees({{1, 9, 13, 11}, 21, {2, 2}});
  expect_conv_agrees({{1, 6, 10, 7}, 5, {2, 1}});
  expect_conv_agrees({{1, 40, 8, 9}, 40, {1, 3}});
  expect_conv_agrees({{2, 70, 31, 27}, 50, {2, 2}});  // split over 2 threads
}

TEST(PointwiseConvTest, BatchWithoutBiasMatchesPortable) {
  ConvCase c{{3, 6, 10, 5}, 9};
  c.bias = false;
  expect_conv_agrees(c);
  c.strides = {2, 2};
  expect_conv_agrees(c);
}

TEST(PointwiseConvTest, FusedActivationsMatchPortable) {
  FusedActivation clip{FusedActivation::Kind::kClip};
  clip.min = -0.5f;
  clip.max = 0.75f;
  FusedActivation leaky{FusedActivation::Kind::kLeakyRelu};
  leaky.alpha = 0.1f;
  for (const FusedActivation& act : {FusedActivation{FusedActivation::Kind::kRelu}, clip,
                                     FusedActivation{FusedActivation::Kind::kHardSwish}, leaky}) {
    SCOPED_TRACE(fused_activation_name(act.kind));
    ConvCase c{{1, 20, 9, 10}, 18};
    c.activation = act;
    expect_conv_agrees(c);
  }
}

// conv -> Add(identity) -> Relu, and Add(conv a, conv b) -> Relu with b
// (coming after a) taking a's output as its residual, in the graph's order.
TEST(PointwiseConvTest, FusedResidualAddAndReluMatchPortable) {
  ScopedEnv on("HETSCHED_POINTWISE", "on");
  {
    GraphBuilder b("identity");
    const ValueId x = b.input("x", f32_type({2, 67, 17, 15}));
    const ValueId c = add_conv(b, x, 67, 67, 1, {1, 1}, true, {}, "conv", 2);
    b.output(b.op("Relu", {b.op("Add", {c, x}, {}, "add")}, {}, "relu"));
    const Graph graph = testing::build(b);
    expect_matches_portable(graph, {2, 67, 17, 15}, 3, 0);
  }
  {
    GraphBuilder b("downsample");
    const ValueId x = b.input("x", f32_type({1, 11, 9, 13}));
    const ValueId main = add_conv(b, x, 11, 35, 1, {2, 2}, true, {}, "main", 2);
    const ValueId side = add_conv(b, x, 11, 35, 1, {2, 2}, false, {}, "side", 4);
    b.output(b.op("Relu", {b.op("Add", {main, side}, {}, "add")}, {}, "relu"));
    const Graph graph = testing::build(b);
    // main alone; side with the Add and Relu.
    expect_matches_portable(graph, {1, 11, 9, 13}, 4, 0);
  }
}

// 3x3 (XNNPACK) -> 1x1 on the fast GEMM with Add(the 3x3's output) -> Relu
// -> 3x3 (XNNPACK): the group runs as NHWC steps between two segments.
void expect_nhwc_agrees(const Shape& x, int64_t mid, const Ints& strides, bool residual) {
  ScopedEnv on("HETSCHED_POINTWISE", "on");
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  ScopedEnv dense("HETSCHED_DENSE_CONV", "off");  // a pre 3x3 on few channels: XNNPACK, not the stem kernel
  GraphBuilder b("nhwc_" + std::to_string(x[1]) + "x" + std::to_string(mid) + (residual ? "_res" : ""));
  const ValueId in = b.input("x", f32_type(x));
  const FusedActivation relu{FusedActivation::Kind::kRelu};
  const ValueId a = add_conv(b, in, x[1], mid, 3, {1, 1}, true, relu, "pre", 4);
  ValueId c = add_conv(b, a, mid, mid, 1, strides, true, residual ? FusedActivation{} : relu, "conv", 6);
  if (residual) c = b.op("Relu", {b.op("Add", {a, c}, {}, "add")}, {}, "relu");
  b.output(add_conv(b, c, mid, 5, 3, {1, 1}, true, {}, "post", 8));
  const Graph graph = testing::build(b);
  expect_matches_portable(graph, x, residual ? 3 : 1, 2);
}

TEST(PointwiseConvTest, BetweenSegmentsInNhwcMatchesPortable) {
  expect_nhwc_agrees({1, 3, 15, 17}, 24, {1, 1}, true);
  expect_nhwc_agrees({2, 5, 9, 6}, 33, {1, 1}, true);
  expect_nhwc_agrees({1, 4, 11, 10}, 13, {1, 1}, false);
  expect_nhwc_agrees({1, 6, 23, 10}, 40, {2, 2}, false);
  expect_nhwc_agrees({1, 2, 9, 14}, 7, {2, 1}, false);
  // Enough work to split over 2 threads.
  expect_nhwc_agrees({1, 3, 33, 35}, 72, {1, 1}, true);
  expect_nhwc_agrees({1, 6, 45, 41}, 80, {2, 2}, false);
  // A small map of many channels: at 2 threads, blocks of 32 columns
  // (12 and a partial one), each with its bias and residual columns.
  expect_nhwc_agrees({1, 3, 6, 7}, 400, {1, 1}, true);
}

// How the GEMM is cut into tasks (gemm_split.h) on the shapes that made
// it change: a 7x7 projection (49 rows, 1536 -> 256) splits its columns
// into blocks of 32 at 2 threads rather than bands that each stream all of
// the weights, and bands are of near-equal height.
TEST(GemmSplitTest, WeightsHeavyShapesSplitColumnsAndBandsEvenly) {
  using cpu::fast::split_gemm;
  const cpu::fast::GemmSplit one = split_gemm(49, 1536, 256, 1536, 256, 1);
  EXPECT_EQ(one.width, cpu::fast::kBlockColumns);
  EXPECT_EQ(one.tasks(), 1);
  const cpu::fast::GemmSplit two = split_gemm(49, 1536, 256, 1536, 256, 2);
  EXPECT_EQ(two.width, cpu::fast::kBlockColumns / 2);
  EXPECT_EQ(two.row_tasks, 1);
  EXPECT_EQ(two.tasks(), 8);
  EXPECT_EQ(two.padded_columns(), 256);
  // 16 threads: bands too, none of a single row.
  const cpu::fast::GemmSplit many = split_gemm(49, 1536, 256, 1536, 256, 16);
  EXPECT_GT(many.row_tasks, 1);
  EXPECT_GE(49 - (many.row_tasks - 1) * many.band, many.band - many.row_tasks);
  // More rows than columns: blocks keep their width.
  const cpu::fast::GemmSplit tall = split_gemm(3136, 64, 256, 64, 256, 2);
  EXPECT_EQ(tall.width, cpu::fast::kBlockColumns);
  EXPECT_GE(tall.tasks(), 8);
  for (const cpu::fast::GemmSplit& s : {one, two, many, tall})
    EXPECT_GE(s.row_tasks * s.band, s.m) << s.m << " rows in " << s.row_tasks << " bands of " << s.band;
}

// A squeeze-and-excitation block: pre 3x3 (XNNPACK) -> a, its gate s =
// Sigmoid(fc2(Relu(fc1(mean of a)))), then the 1x1 projection of a * s to
// `cout` channels -> post 3x3. With HETSCHED_POINTWISE=on fc1, fc2 and the
// projection are on the fast GEMM (3 fast ops); where cout x 8 is below
// the map's pixels the Mul goes into the projection's group too (its
// weights scaled by s on every run: 4), otherwise it stays in an XNNPACK
// segment. Segments: pre, the pool, the Sigmoid (and the Mul), post.
Graph squeeze_excite(const Shape& x, int64_t channels, int64_t cout) {
  GraphBuilder b("se_" + std::to_string(channels) + "x" + std::to_string(cout));
  const FusedActivation relu{FusedActivation::Kind::kRelu};
  const ValueId a = add_conv(b, b.input("x", f32_type(x)), x[1], channels, 3, {1, 1}, true, relu, "pre", 4);
  const ValueId mean = b.op("GlobalAveragePool", {a}, {}, "pool");
  const ValueId f1 = add_conv(b, mean, channels, channels / 4, 1, {1, 1}, true, relu, "fc1", 5);
  const ValueId gate = b.op("Sigmoid", {add_conv(b, f1, channels / 4, channels, 1, {1, 1}, true, {}, "fc2", 6)}, {}, "gate");
  const ValueId scaled = b.op("Mul", {a, gate}, {}, "scale");
  const ValueId p = add_conv(b, scaled, channels, cout, 1, {1, 1}, true, {}, "proj", 7);
  b.output(add_conv(b, p, cout, 5, 3, {1, 1}, true, {}, "post", 8));
  return testing::build(b);
}

TEST(PointwiseConvTest, SqueezeExcitationScaleFoldedIntoTheProjectionMatchesPortable) {
  ScopedEnv on("HETSCHED_POINTWISE", "on");
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  ScopedEnv dense("HETSCHED_DENSE_CONV", "off");
  // 12 x 14 = 168 pixels: 16 outputs fold the Mul in, 24 do not.
  const Shape x{1, 5, 12, 14};
  testing::expect_fast_cpu_matches_portable(squeeze_excite(x, 48, 16), x, 4, 3, 1e-5f, "se");
  testing::expect_fast_cpu_matches_portable(squeeze_excite(x, 48, 24), x, 3, 3, 1e-5f, "se");
  // 37 channels in, 11 out: a partial panel, zero-padded columns.
  testing::expect_fast_cpu_matches_portable(squeeze_excite(x, 37, 11), x, 4, 3, 1e-5f, "se");
}

// x -> pre 3x3 -> a -> mid 3x3 -> 1x1 + Add(a) -> Relu -> post 3x3, and
// with `read_after` a also read by an Add after post: where the group reads
// a last, its output takes over a's bytes (island_arena.h); where a is read
// after it, that must not happen (an output written over a gives that last
// Add wrong sums).
void expect_bottleneck_agrees(bool read_after) {
  ScopedEnv on("HETSCHED_POINTWISE", "on");
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  GraphBuilder b(std::string("residual_") + (read_after ? "read_after" : "in_place"));
  const FusedActivation relu{FusedActivation::Kind::kRelu};
  const ValueId a = add_conv(b, b.input("x", f32_type({1, 5, 11, 9})), 5, 24, 3, {1, 1}, true, relu, "pre", 4);
  const ValueId m = add_conv(b, a, 24, 16, 3, {1, 1}, true, relu, "mid", 5);
  const ValueId c = add_conv(b, m, 16, 24, 1, {1, 1}, true, {}, "conv", 6);
  const ValueId s = b.op("Relu", {b.op("Add", {c, a}, {}, "add")}, {}, "relu");
  const ValueId y = add_conv(b, s, 24, 24, 3, {1, 1}, true, {}, "post", 8);
  b.output(read_after ? b.op("Add", {y, a}, {}, "late") : y);
  expect_matches_portable(testing::build(b), {1, 5, 11, 9}, 3, 2);
}

// Identity blocks in a row, as in each ResNet stage: block k's output (its
// 1x1 group writing over its residual, the block's input) is block k+1's
// residual, so the second block writes over bytes that are already a view,
// and the third over those again. Each must resolve to the bytes' one
// root, whose lifetime then covers every view's readers: before, block 2's
// output was a view of a view, and the arena gave the root's bytes to
// another value while they were still read (ResNet-50 wrong at every
// thread count; HETSCHED_RESIDUAL_IN_PLACE=off right).
TEST(PointwiseConvTest, ResidualsWrittenInPlaceBlockAfterBlockMatchPortable) {
  ScopedEnv on("HETSCHED_POINTWISE", "on");
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  ScopedEnv dense("HETSCHED_DENSE_CONV", "off");
  GraphBuilder b("identity_blocks");
  const FusedActivation relu{FusedActivation::Kind::kRelu};
  ValueId y = add_conv(b, b.input("x", f32_type({1, 5, 13, 11})), 5, 32, 3, {1, 1}, true, relu, "pre", 4);
  for (int k = 0; k < 3; ++k) {
    const std::string n = std::to_string(k);
    const ValueId m = add_conv(b, y, 32, 16, 1, {1, 1}, true, relu, "reduce" + n, 10 + 4 * k);
    const ValueId c = add_conv(b, m, 16, 32, 1, {1, 1}, true, {}, "expand" + n, 12 + 4 * k);
    y = b.op("Relu", {b.op("Add", {c, y}, {}, "add" + n)}, {}, "relu" + n);
  }
  b.output(add_conv(b, y, 32, 5, 3, {1, 1}, true, {}, "post", 8));
  // Per block the reduce conv alone and the expand conv with its Add and Relu.
  expect_matches_portable(testing::build(b), {1, 5, 13, 11}, 12, 2);
}

TEST(PointwiseConvTest, AResidualIsWrittenOverOnlyWhereTheGroupReadsItLast) {
  expect_bottleneck_agrees(false);
  expect_bottleneck_agrees(true);
}

TEST(PointwiseConvTest, OffKeepsEveryConvOnXnnpack) {
  ScopedEnv off("HETSCHED_POINTWISE", "off");
  GraphBuilder b("off");
  const ValueId x = b.input("x", f32_type({1, 256, 14, 14}));
  b.output(add_conv(b, x, 256, 64, 1, {1, 1}, true, {}, "conv", 2));
  const Graph graph = testing::build(b);
  auto run = testing::run_cpu_island(graph, {random_tensor({1, 256, 14, 14}, 1)}, {{"engine", "xnnpack"}, {"threads", "1"}});
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  EXPECT_EQ(run->coverage.fast_ops, 0);
  EXPECT_EQ(run->coverage.xnnpack_ops, 1);
}

// Under the rule, a 1x1 conv of `channels` between two 3x3s (which alone
// stay on XNNPACK), its output channels x 66 x 64, leaves as an NHWC step
// with its residual Add and Relu or alone (pointwise_rule.h), or stays on
// XNNPACK with them.
void expect_rule_for(int64_t channels, bool residual, bool leaves) {
  ScopedEnv rule("HETSCHED_POINTWISE", nullptr);
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  ScopedEnv dense("HETSCHED_DENSE_CONV", "off");
  GraphBuilder b((residual ? "residual" : "alone") + std::to_string(channels));
  const ValueId in = b.input("x", f32_type({1, 5, 66, 64}));
  const FusedActivation relu{FusedActivation::Kind::kRelu};
  const ValueId a = add_conv(b, in, 5, channels, 3, {1, 1}, true, relu, "pre", 4);
  ValueId c = add_conv(b, a, channels, channels, 1, {1, 1}, true, residual ? FusedActivation{} : relu, "conv", 6);
  if (residual) c = b.op("Relu", {b.op("Add", {a, c}, {}, "add")}, {}, "relu");
  b.output(add_conv(b, c, channels, 5, 3, {1, 1}, true, {}, "post", 8));
  const Graph graph = testing::build(b);
  expect_matches_portable(graph, {1, 5, 66, 64}, leaves ? (residual ? 3 : 1) : 0, leaves ? 2 : 1);
}

// Where the core has 2 MiB of L2 and AVX-512, 64 channels (270K output
// elements) leave with the residual Add and Relu, and alone too (the rule
// takes 40 input channels up there); 32 stay on XNNPACK alone. Elsewhere
// both stay.
TEST(PointwiseConvTest, RuleTakesANarrowConvWithItsResidualWhereTheL2IsLarge) {
  const bool large_l2 = sysconf(_SC_LEVEL2_CACHE_SIZE) >= (2 << 20) && std::string(cpu::fast::gemm_isa()) == "avx512f";
  expect_rule_for(64, true, large_l2);
  expect_rule_for(64, false, large_l2);
  expect_rule_for(32, false, false);
  // The 40-channel threshold holds up to 2 threads only.
  const cpu::fast::PointwiseShape narrow{64, 64, 66 * 64, 1};
  EXPECT_EQ(cpu::fast::pointwise_pays(narrow, 2), large_l2);
  EXPECT_FALSE(cpu::fast::pointwise_pays(narrow, 4));
}

// An imported CNN of two bottlenecks: a stem 3x3 conv (3 -> 128) +
// BatchNorm + Relu, then twice 1x1 128 -> 96 + BatchNorm + Relu, 3x3 96 ->
// 96 + BatchNorm + Relu, 1x1 96 -> 128 + BatchNorm, Add(the block's
// input), Relu; a 1x1 head to 8 channels. On AVX-512 the 3x3 convs go to
// Winograd and the rule takes every 1x1 conv wide enough to the fast GEMM
// (the Adds and Relus fuse into conv 3 and 3'), leaving the stem and the
// narrow head to XNNPACK, each a segment of its own.
TEST(PointwiseConvTest, ImportedBottleneckPicksTheFastGemmAndMatchesPortable) {
  using namespace onnx_test;
  ScopedEnv rule("HETSCHED_POINTWISE", nullptr);
  OnnxModel m(17);
  const int64_t h = 13, w = 11;
  m.input("x", kFloat, {1, 3, h, w});
  auto conv = [&](const std::string& in, const std::string& out, int64_t cin, int64_t cout, int64_t k, uint32_t seed) {
    add_random_conv(m, in, out, cin, cout, k, seed);
  };
  auto bn = [&](const std::string& in, const std::string& out, int64_t c, uint32_t seed) {
    add_random_batch_norm(m, in, out, c, seed);
  };
  conv("x", "c0", 3, 128, 3, 10);
  bn("c0", "b0", 128, 20);
  m.node("Relu", {"b0"}, {"r0"});
  auto bottleneck = [&](const std::string& in, const std::string& p, uint32_t seed) {
    conv(in, p + "c1", 128, 96, 1, seed);
    bn(p + "c1", p + "b1", 96, seed + 10);
    m.node("Relu", {p + "b1"}, {p + "r1"});
    conv(p + "r1", p + "c2", 96, 96, 3, seed + 20);
    bn(p + "c2", p + "b2", 96, seed + 30);
    m.node("Relu", {p + "b2"}, {p + "r2"});
    conv(p + "r2", p + "c3", 96, 128, 1, seed + 40);
    bn(p + "c3", p + "b3", 128, seed + 50);
    m.node("Add", {p + "b3", in}, {p + "s3"});
    m.node("Relu", {p + "s3"}, {p + "r3"});
    return p + "r3";
  };
  const std::string out = bottleneck(bottleneck("r0", "a", 100), "b", 200);
  conv(out, "y", 128, 8, 1, 90);
  m.output("y");
  testing::TempDir dir;
  auto graph = load_model(m.save(dir));
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  graph->set_name("imported_bottleneck");
  int batch_norms = 0;
  for (NodeId n = 0; n < static_cast<NodeId>(graph->num_nodes()); ++n)
    batch_norms += graph->node(n).op == "BatchNormalization";
  EXPECT_EQ(batch_norms, 0) << "the import passes fold BatchNorm into the convs";
  if (std::string(cpu::fast::gemm_isa()) != "avx512f") {
    // Without AVX-512 the rule keeps the 1x1 convs on XNNPACK: the two
    // Winograd convs alone leave, between three segments.
    expect_matches_portable(*graph, {1, 3, h, w}, 2, 3);
    return;
  }
  // Winograd twice, conv 1 twice, conv 3 + Add + Relu twice; segments
  // [stem] and [head].
  expect_matches_portable(*graph, {1, 3, h, w}, 10, 2);
}

}  // namespace
}  // namespace hetsched
