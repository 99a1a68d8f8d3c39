// SiLU (x * Sigmoid(x), written as a Sigmoid and a Mul) on its one-pass
// fast kernel (delegates/cpu/fast/silu.h) against the portable kernels:
// between two XNNPACK segments on NHWC data, alone in the graph's order on
// a rank-3 tensor, and at inputs where exp overflows; and the patterns it
// must leave alone (the Sigmoid read twice, a Mul of something else).
//
// Tolerance: |fast - portable| <= 1e-5 * max |portable| + 1e-6 per element.
// Dropping the Mul (a plain Sigmoid) or the Sigmoid (x * x) is off by the
// output's own size.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "delegates/cpu/fast/gemm.h"
#include "graph/builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using testing::random_tensor;
using testing::ScopedEnv;

using testing::f32;

ValueId conv1x1(GraphBuilder& b, ValueId x, int64_t cin, int64_t cout, const std::string& name, uint32_t seed) {
  return b.op("Conv", {x, b.constant(name + "_w", random_tensor({cout, cin, 1, 1}, seed, -0.5f, 0.5f))},
              {{"kernel_shape", std::vector<int64_t>{1, 1}}}, name);
}

ValueId silu(GraphBuilder& b, ValueId x, const std::string& name, bool sigmoid_first = true) {
  const ValueId s = b.op("Sigmoid", {x}, {}, name + "_sigmoid");
  return b.op("Mul", sigmoid_first ? std::vector<ValueId>{s, x} : std::vector<ValueId>{x, s}, {}, name + "_mul");
}

TEST(SiluTest, BetweenSegmentsOnNhwcDataMatchesPortable) {
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  for (bool sigmoid_first : {true, false}) {
    GraphBuilder b(sigmoid_first ? "silu_nhwc" : "silu_nhwc_x_first");
    const ValueId a = conv1x1(b, b.input("x", f32({2, 5, 9, 7})), 5, 19, "pre", 3);
    b.output(conv1x1(b, silu(b, a, "act", sigmoid_first), 19, 6, "post", 5));
    // Two segments, and the SiLU's two nodes on the fast kernel between them.
    testing::expect_fast_cpu_matches_portable(testing::build(b), {2, 5, 9, 7}, 2, 2, 1e-5f, "silu");
  }
}

// A 1x1 conv wide enough for the fast GEMM (pointwise_rule.h) takes the
// SiLU reading its output into its epilogue: one fast step of three nodes
// between the stem's and the head's segments.
TEST(SiluTest, InAPointwiseConvsEpilogueMatchesPortable) {
  ScopedEnv pointwise("HETSCHED_POINTWISE", nullptr);
  GraphBuilder b("silu_epilogue");
  const ValueId stem = conv1x1(b, b.input("x", f32({1, 3, 9, 7})), 3, 128, "stem", 3);
  const ValueId mid = conv1x1(b, stem, 128, 64, "mid", 5);
  b.output(conv1x1(b, silu(b, mid, "act"), 64, 8, "head", 7));
  const Graph g = testing::build(b);
  if (std::string(cpu::fast::gemm_isa()) != "avx512f") {
    // Without AVX-512 the 1x1 conv stays on XNNPACK and the SiLU runs alone.
    testing::expect_fast_cpu_matches_portable(g, {1, 3, 9, 7}, 2, 2, 1e-5f, "silu");
    return;
  }
  testing::expect_fast_cpu_matches_portable(g, {1, 3, 9, 7}, 3, 2, 1e-5f, "silu");
}

// A 3x3 conv on Winograd, or on the fast GEMM with its windows gathered,
// between two XNNPACK segments takes the SiLU after it into its epilogue.
TEST(SiluTest, InWinogradAndDenseConvEpiloguesMatchesPortable) {
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  for (bool winograd : {true, false}) {
    SCOPED_TRACE(winograd ? "winograd" : "dense");
    ScopedEnv w("HETSCHED_WINOGRAD", winograd ? "on" : "off");
    ScopedEnv d("HETSCHED_DENSE_CONV", winograd ? "off" : "on");
    GraphBuilder b(winograd ? "silu_winograd" : "silu_dense");
    const ValueId pre = conv1x1(b, b.input("x", f32({2, 5, 11, 9})), 5, 24, "pre", 3);
    const ValueId mid = b.op("Conv", {pre, b.constant("mid_w", random_tensor({40, 24, 3, 3}, 5, -0.2f, 0.2f)),
                                      b.constant("mid_b", random_tensor({40}, 6))},
                             {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
                             "mid");
    b.output(conv1x1(b, silu(b, mid, "act"), 40, 6, "post", 7));
    testing::expect_fast_cpu_matches_portable(testing::build(b), {2, 5, 11, 9}, 3, 2, 1e-5f, "silu");
  }
}

TEST(SiluTest, AloneOnARank3TensorMatchesPortable) {
  GraphBuilder b("silu_rank3");
  b.output(silu(b, b.input("x", f32({3, 7, 4099})), "act"));
  testing::expect_fast_cpu_matches_portable(testing::build(b), {3, 7, 4099}, 2, 0, 1e-5f, "silu");
}

TEST(SiluTest, ExtremeInputsGiveZeroAndIdentityNotNan) {
  GraphBuilder b("silu_extremes");
  b.output(silu(b, b.input("x", f32({1, 40})), "act"));
  const Graph g = testing::build(b);
  Tensor x(f32({1, 40}));
  const std::vector<float> values{-1e30f, -1000.f, -100.f, -88.5f, -87.f, -20.f, -1.f, -1e-3f, 0.f, 1e-3f,
                                  1.f,    20.f,    87.f,   88.5f,  100.f, 1000.f, 1e30f};
  for (size_t i = 0; i < values.size(); ++i) x.data<float>()[i] = values[i];
  auto run = testing::run_cpu_island(g, {x}, {{"engine", "xnnpack"}, {"threads", "1"}});
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  EXPECT_EQ(run->coverage.fast_ops, 2);
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i], want = v / (1.0 + std::exp(-v));
    const float got = run->outputs[0].data<float>()[i];
    ASSERT_FALSE(std::isnan(got)) << "x = " << v;
    EXPECT_NEAR(got, want, 1e-6 * std::max(1.0, std::abs(want))) << "x = " << v;
  }
}

TEST(SiluTest, OtherPatternsStayOffTheKernel) {
  {
    // The Sigmoid's output also feeds an Add: the Mul alone cannot drop it.
    GraphBuilder b("sigmoid_read_twice");
    const ValueId x = b.input("x", f32({1, 8, 33}));
    const ValueId s = b.op("Sigmoid", {x}, {}, "sigmoid");
    b.output(b.op("Add", {b.op("Mul", {x, s}, {}, "mul"), s}, {}, "add"));
    testing::expect_fast_cpu_matches_portable(testing::build(b), {1, 8, 33}, 0, 1, 1e-5f, "silu");
  }
  {
    // A gate: the Sigmoid of one tensor times another (squeeze-excite).
    GraphBuilder b("gate");
    const ValueId x = b.input("x", f32({1, 8, 33}));
    const ValueId y = b.op("Relu", {x}, {}, "relu");
    b.output(b.op("Mul", {y, b.op("Sigmoid", {x}, {}, "sigmoid")}, {}, "mul"));
    testing::expect_fast_cpu_matches_portable(testing::build(b), {1, 8, 33}, 0, 1, 1e-5f, "silu");
  }
}

}  // namespace
}  // namespace hetsched
