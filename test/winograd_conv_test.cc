// The Winograd F(4x4, 3x3) conv (delegates/cpu/fast/winograd_conv.cc)
// against the portable kernels (the oracle: direct loops, double sums) on
// odd shapes: H and W not multiples of 4 (partial edge tiles), pads 0, 1
// and asymmetric, channel counts below, at and past the 16-channel vector
// and the GEMM's 32-column block, batches, no bias, fused activations, 1
// and 2 threads; in the graph's order (a conv alone in its island) and NHWC
// between two XNNPACK segments; then an imported ONNX CNN (BatchNorm, Relu
// and a residual Add folded and fused by the import passes) where the rule
// picks Winograd for the wide convs and XNNPACK for the narrow first one.
//
// Tolerance: |winograd - portable| <= 2e-5 * max |portable| + 1e-6 per
// element. Winograd's own f32 error on these shapes is ~1e-6 of the
// output's range (its transforms scale terms by up to 8 and 1/24); a wrong
// transform coefficient or an edge tile one pixel off gives errors of the
// output's own size.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/fast/winograd_rule.h"
#include "graph/builder.h"
#include "graph/passes/fused_activation.h"
#include "test/onnx_model_builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using testing::random_tensor;

TensorType f32_type(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }


// Sets HETSCHED_WINOGRAD for the scope (the delegate reads it at init).
struct ScopedWinograd : testing::ScopedEnv {
  explicit ScopedWinograd(const char* value) : ScopedEnv("HETSCHED_WINOGRAD", value) {}
};

// Runs `graph` on both engines at 1 and 2 threads and compares (test_util.h).
void expect_matches_portable(const Graph& graph, const Shape& x, int fast, int segments) {
  testing::expect_fast_cpu_matches_portable(graph, x, fast, segments, 2e-5f, "winograd");
}

struct ConvCase {
  Shape x;        // N, Cin, H, W
  int64_t cout;
  Ints pads{1, 1, 1, 1};
  bool bias = true;
  FusedActivation activation{};
};

ValueId add_conv(GraphBuilder& b, ValueId x, int64_t cin, int64_t cout, int64_t k, const Ints& pads, bool bias,
                 const FusedActivation& activation, const std::string& name, uint32_t seed) {
  // Weights ~ 1/sqrt(fan-in), so that outputs stay of order 1.
  const float bound = 1.f / std::sqrt(static_cast<float>(cin * k * k));
  std::vector<ValueId> ins{x, b.constant(name + "_w", random_tensor({cout, cin, k, k}, seed, -bound, bound))};
  if (bias) ins.push_back(b.constant(name + "_b", random_tensor({cout}, seed + 1)));
  const ValueId y = b.op("Conv", ins, {{"pads", pads}}, name);
  write_fused_activation(activation, b.raw().node(b.raw().find_node(name)).attrs);
  return y;
}

bool has_avx512() { return std::string(cpu::fast::gemm_isa()) == "avx512f"; }

// Both output tiles, F(4x4, 3x3) and F(2x2, 3x3), whatever the rule picks.
const char* const kTiles[] = {"4", "2"};

// One 3x3 conv alone in its island: Winograd in the graph's order (NCHW).
void expect_conv_agrees(const ConvCase& c) {
  ScopedWinograd on("on");
  GraphBuilder b("conv_" + std::to_string(c.x[1]) + "x" + std::to_string(c.cout));
  const ValueId x = b.input("x", f32_type(c.x));
  b.output(add_conv(b, x, c.x[1], c.cout, 3, c.pads, c.bias, c.activation, "conv", 2));
  const Graph graph = testing::build(b);
  for (const char* tile : kTiles) {
    SCOPED_TRACE(std::string("tile ") + tile);
    testing::ScopedEnv forced("HETSCHED_WINOGRAD_TILE", tile);
    expect_matches_portable(graph, c.x, 1, 0);
  }
}

TEST(WinogradConvTest, OddSizesAndFewChannelsMatchPortable) {
  expect_conv_agrees({{1, 5, 13, 11}, 7});
  expect_conv_agrees({{1, 1, 3, 3}, 1});  // one partial tile
  expect_conv_agrees({{1, 3, 6, 9}, 2});
}

TEST(WinogradConvTest, UnpaddedAndAsymmetricPadsMatchPortable) {
  expect_conv_agrees({{1, 4, 10, 9}, 5, {0, 0, 0, 0}});
  expect_conv_agrees({{1, 6, 9, 14}, 3, {1, 0, 0, 1}});
  expect_conv_agrees({{1, 2, 7, 7}, 4, {0, 1, 1, 0}});
}

TEST(WinogradConvTest, ChannelsPastOneVectorAndOneGemmBlockMatchPortable) {
  // 17 and 37 input channels: a whole 16-lane vector and a partial one;
  // 33 and 47 outputs: a whole 32-column GEMM block and a partial one.
  expect_conv_agrees({{1, 17, 9, 18}, 33});
  expect_conv_agrees({{1, 37, 11, 7}, 47});
  expect_conv_agrees({{1, 32, 8, 8}, 32});
}

TEST(WinogradConvTest, BatchWithoutBiasMatchesPortable) {
  ConvCase c{{3, 6, 10, 5}, 9};
  c.bias = false;
  expect_conv_agrees(c);
}

TEST(WinogradConvTest, FusedActivationsMatchPortable) {
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

// 1x1 -> 3x3 -> 1x1: the 3x3 conv runs as an NHWC step between two
// XNNPACK segments.
void expect_nhwc_agrees(const Shape& x, int64_t mid, int64_t cout, const Ints& pads, const FusedActivation& act) {
  ScopedWinograd on("on");
  GraphBuilder b("nhwc_" + std::to_string(x[1]) + "x" + std::to_string(cout));
  const ValueId in = b.input("x", f32_type(x));
  const FusedActivation relu{FusedActivation::Kind::kRelu};
  const ValueId a = add_conv(b, in, x[1], mid, 1, {0, 0, 0, 0}, true, relu, "pre", 4);
  const ValueId c = add_conv(b, a, mid, cout, 3, pads, true, act, "conv", 6);
  b.output(add_conv(b, c, cout, 8, 1, {0, 0, 0, 0}, true, {}, "post", 8));
  const Graph graph = testing::build(b);
  for (const char* tile : kTiles) {
    SCOPED_TRACE(std::string("tile ") + tile);
    testing::ScopedEnv forced("HETSCHED_WINOGRAD_TILE", tile);
    expect_matches_portable(graph, x, 1, 2);
  }
}

TEST(WinogradConvTest, BetweenSegmentsInNhwcMatchesPortable) {
  expect_nhwc_agrees({1, 8, 15, 17}, 24, 40, {1, 1, 1, 1}, FusedActivation{FusedActivation::Kind::kRelu});
  expect_nhwc_agrees({2, 5, 9, 6}, 19, 33, {0, 0, 0, 0}, {});
  expect_nhwc_agrees({1, 6, 23, 10}, 48, 16, {1, 0, 1, 0}, FusedActivation{FusedActivation::Kind::kHardSwish});
}

// At 16 threads the GEMMs run in blocks of 32 columns (gemm.h's
// block_columns: 64 output channels in 64-column blocks would give the
// threads 36 tasks), a path 1 and 2 threads never take; also 40 and 96
// channels (partial blocks).
TEST(WinogradConvTest, SixteenThreadsMatchPortable) {
  ScopedWinograd on("on");
  for (const auto& [tile, cout] : {std::pair{"4", int64_t{64}}, std::pair{"4", int64_t{40}}, std::pair{"4", int64_t{96}},
                                   std::pair{"2", int64_t{64}}, std::pair{"2", int64_t{40}}}) {
    SCOPED_TRACE(std::string("tile ") + tile + ", cout " + std::to_string(cout));
    testing::ScopedEnv forced("HETSCHED_WINOGRAD_TILE", tile);
    GraphBuilder b("sixteen_" + std::to_string(cout));
    const ValueId x = b.input("x", f32_type({1, 24, 14, 13}));
    b.output(add_conv(b, x, 24, cout, 3, {1, 1, 1, 1}, true, FusedActivation{FusedActivation::Kind::kRelu}, "conv", 2));
    const Graph graph = testing::build(b);
    const Tensor input = random_tensor({1, 24, 14, 13}, 1);
    auto want = testing::run_cpu_island(graph, {input}, {{"engine", "portable"}, {"threads", "1"}});
    auto got = testing::run_cpu_island(graph, {input}, {{"engine", "xnnpack"}, {"threads", "16"}});
    ASSERT_TRUE(want.is_ok() && got.is_ok());
    EXPECT_EQ(got->coverage.fast_ops, 1);
    const Tensor& w = want->outputs[0];
    ASSERT_EQ(w.type(), got->outputs[0].type());
    EXPECT_LE(testing::max_abs_diff(got->outputs[0], w), 1e-5f * testing::max_abs(w) + 1e-6f);
  }
}

// The rule's choices on ResNet's and VGG's shapes (measured in the whole
// model: docs/models.md, "Winograd F(2x2, 3x3)"): F(4x4) where the
// channels are few for the map, F(2x2) where F(4x4)'s 36 weights per
// channel pair would be streamed for few tiles, and a 512-channel conv at
// 7x7 on the direct conv at 1 and 2 threads but on F(2x2) at 16, where the
// direct conv's bands of rows would each stream its weights.
TEST(WinogradConvTest, RulePicksTheTileByChannelsAndMap) {
  using cpu::fast::WinogradShape;
  for (const WinogradShape& s : {WinogradShape{64, 64, 56, 56}, WinogradShape{128, 128, 28, 28},
                                 WinogradShape{256, 256, 56, 56}, WinogradShape{512, 512, 28, 28}}) {
    EXPECT_TRUE(cpu::fast::winograd_pays(s)) << s.cin << "x" << s.out_h;
    EXPECT_EQ(cpu::fast::winograd_tile(s), 4) << s.cin << "x" << s.out_h;
  }
  for (const WinogradShape& s : {WinogradShape{256, 256, 14, 14}, WinogradShape{512, 512, 14, 14},
                                 WinogradShape{512, 512, 7, 7, 1, 16}}) {
    EXPECT_TRUE(cpu::fast::winograd_pays(s)) << s.cin << "x" << s.out_h << " at " << s.threads;
    EXPECT_EQ(cpu::fast::winograd_tile(s), 2) << s.cin << "x" << s.out_h << " at " << s.threads;
  }
  // The direct conv it is weighed against is the fast GEMM's with AVX-512,
  // else XNNPACK's (dense_conv_rule.h), which 512 at 7x7 does not pay for.
  const bool fast_direct = has_avx512();
  EXPECT_EQ(cpu::fast::winograd_pays({512, 512, 7, 7, 1, 1}), !fast_direct);
  EXPECT_EQ(cpu::fast::winograd_pays({512, 512, 7, 7, 1, 2}), !fast_direct);
  // At 4 threads the direct conv's GEMM splits its columns into blocks of
  // 32 (gemm_split.h) and still streams its weights once; at 16 it also
  // cuts the map into bands, each streaming them again.
  EXPECT_EQ(cpu::fast::winograd_pays({512, 512, 7, 7, 1, 4}), !fast_direct);
  EXPECT_TRUE(cpu::fast::winograd_pays({512, 512, 7, 7, 1, 16}));
  // Every thread count agrees where the map is large for the channels.
  for (int threads : {1, 2, 16}) EXPECT_TRUE(cpu::fast::winograd_pays({256, 256, 14, 14, 1, threads}));
  // Too few channels for the transforms, or too few tiles.
  EXPECT_FALSE(cpu::fast::winograd_pays({8, 16, 160, 160}));
  EXPECT_FALSE(cpu::fast::winograd_pays({1024, 1024, 4, 4}));
  // 16 input channels: into many outputs on a map that is not tiny
  // (SqueezeNet's 16 -> 64 at 55x55), not 16 -> 16, nor 16 -> 64 at 14x14.
  EXPECT_TRUE(cpu::fast::winograd_pays({16, 64, 55, 55}));
  EXPECT_TRUE(cpu::fast::winograd_pays({16, 32, 28, 28}));
  EXPECT_FALSE(cpu::fast::winograd_pays({16, 16, 112, 112}));
  EXPECT_FALSE(cpu::fast::winograd_pays({16, 64, 14, 14}));
  EXPECT_FALSE(cpu::fast::winograd_pays({20, 40, 56, 56}));
}

// The rule counts the island's threads: ResNet's last-stage 3x3 (512
// channels at 7x7) runs on the fast GEMM's direct conv at 2 threads and on
// Winograd at 16, where the direct conv's bands of rows would each stream
// its weights. The plan and the op made for it agree (FastOpContext's
// threads), and both match the portable kernels.
TEST(WinogradConvTest, RuleCountsTheThreads) {
  if (!has_avx512()) GTEST_SKIP() << "the fast GEMM's direct conv needs AVX-512 (dense_conv_rule.h)";
  ScopedWinograd rule(nullptr);
  testing::ScopedEnv dense("HETSCHED_DENSE_CONV", nullptr);
  GraphBuilder b("last_stage");
  const ValueId in = b.input("x", f32_type({1, 8, 7, 7}));
  const FusedActivation relu{FusedActivation::Kind::kRelu};
  const ValueId a = add_conv(b, in, 8, 512, 1, {0, 0, 0, 0}, true, relu, "pre", 4);
  const ValueId c = add_conv(b, a, 512, 512, 3, {1, 1, 1, 1}, true, relu, "conv", 6);
  b.output(add_conv(b, c, 512, 8, 1, {0, 0, 0, 0}, true, {}, "post", 8));
  const Graph graph = testing::build(b);
  const Node& conv = graph.node(graph.find_node("conv"));
  EXPECT_FALSE(cpu::fast::winograd_conv_leaves_xnnpack(graph, conv, 2));
  EXPECT_TRUE(cpu::fast::dense_conv_leaves_xnnpack(graph, conv, 2));
  EXPECT_TRUE(cpu::fast::winograd_conv_leaves_xnnpack(graph, conv, 16));
  EXPECT_FALSE(cpu::fast::dense_conv_leaves_xnnpack(graph, conv, 16));
  const Tensor input = random_tensor({1, 8, 7, 7}, 1);
  auto want = testing::run_cpu_island(graph, {input}, {{"engine", "portable"}, {"threads", "1"}});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  for (const char* threads : {"2", "16"}) {
    SCOPED_TRACE(std::string(threads) + " threads");
    auto got = testing::run_cpu_island(graph, {input}, {{"engine", "xnnpack"}, {"threads", threads}});
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    EXPECT_GE(got->coverage.fast_ops, 1);
    const Tensor& w = want->outputs[0];
    ASSERT_EQ(w.type(), got->outputs[0].type());
    EXPECT_LE(testing::max_abs_diff(got->outputs[0], w), 2e-5f * testing::max_abs(w) + 1e-6f);
  }
}

// (With Winograd off the dense-conv rule may take a 3x3 conv to the fast
// GEMM instead: dense_conv_test.cc; off here too.)
TEST(WinogradConvTest, OffKeepsEveryConvOnXnnpack) {
  ScopedWinograd off("off");
  testing::ScopedEnv dense_off("HETSCHED_DENSE_CONV", "off");
  GraphBuilder b("off");
  const ValueId x = b.input("x", f32_type({1, 64, 28, 28}));
  b.output(add_conv(b, x, 64, 64, 3, {1, 1, 1, 1}, true, {}, "conv", 2));
  const Graph graph = testing::build(b);
  auto run = testing::run_cpu_island(graph, {random_tensor({1, 64, 28, 28}, 1)}, {{"engine", "xnnpack"}, {"threads", "1"}});
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  EXPECT_EQ(run->coverage.fast_ops, 0);
  EXPECT_EQ(run->coverage.xnnpack_ops, 1);
}

// An imported CNN: stem conv (3 -> 24; XNNPACK under HETSCHED_DENSE_CONV=off),
// BatchNorm, Relu; two 3x3 convs of 24 -> 32 and 32 -> 32 with BatchNorm
// (folded into them at import) and Relu (fused), the second closed by a
// residual Add and Relu; a 1x1 head. The rule sends the two wide convs to
// Winograd, between XNNPACK segments.
TEST(WinogradConvTest, ImportedCnnPicksWinogradAndMatchesPortable) {
  using namespace onnx_test;
  ScopedWinograd rule(nullptr);
  testing::ScopedEnv dense("HETSCHED_DENSE_CONV", "off");  // the stem on XNNPACK, not the stem kernel
  OnnxModel m(17);
  const int64_t h = 19, w = 23;
  m.input("x", kFloat, {1, 3, h, w});
  auto conv = [&](const std::string& in, const std::string& out, int64_t cin, int64_t cout, int64_t k, uint32_t seed) {
    add_random_conv(m, in, out, cin, cout, k, seed);
  };
  auto bn = [&](const std::string& in, const std::string& out, int64_t c, uint32_t seed) {
    add_random_batch_norm(m, in, out, c, seed);
  };
  conv("x", "c0", 3, 24, 3, 10);
  bn("c0", "b0", 24, 20);
  m.node("Relu", {"b0"}, {"r0"});
  conv("r0", "c1", 24, 32, 3, 30);
  bn("c1", "b1", 32, 40);
  m.node("Relu", {"b1"}, {"r1"});
  conv("r1", "c2", 32, 32, 3, 50);
  bn("c2", "b2", 32, 60);
  m.node("Add", {"b2", "r1"}, {"s2"});
  m.node("Relu", {"s2"}, {"r2"});
  conv("r2", "y", 32, 8, 1, 70);
  m.output("y");
  testing::TempDir dir;
  auto graph = load_model(m.save(dir));
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  graph->set_name("imported_cnn");
  int batch_norms = 0;
  for (NodeId n = 0; n < static_cast<NodeId>(graph->num_nodes()); ++n)
    batch_norms += graph->node(n).op == "BatchNormalization";
  EXPECT_EQ(batch_norms, 0) << "the import passes fold BatchNorm into the convs";
  // Segments: [stem conv], [the residual Add (+Relu) and the head].
  expect_matches_portable(*graph, {1, 3, h, w}, 2, 2);
}

}  // namespace
}  // namespace hetsched
