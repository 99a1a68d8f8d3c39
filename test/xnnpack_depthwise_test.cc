// The depthwise conv fast kernel (delegates/cpu/fast/depthwise_conv.cc):
// depthwise convs whose kernel size this XNNPACK has no micro-kernel for
// leave XNNPACK for it and give what the portable kernels give (the oracle)
// on odd shapes — planes narrower and wider than its 64-column block,
// asymmetric pads, dilation, batches, fused activations, 1 and 2 threads —
// and the ones XNNPACK runs well (3x3, 5x5, strided) stay on XNNPACK.
//
// Tolerance: |fast - portable| <= 1e-5 + 1e-3 * |portable| (sums in another
// order, with FMA).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "graph/builder.h"
#include "graph/passes/fused_activation.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using testing::random_tensor;

using testing::f32;

struct IslandRun {
  Tensor output;
  cpu::CpuEngineCoverage coverage;
};

// The graph as one CPU island with `engine` and `threads`, run once.
Result<IslandRun> run_island(const Graph& graph, const Tensor& input, const std::string& engine, int threads) {
  HS_ASSIGN_OR_RETURN(testing::CpuIslandRun run,
                      testing::run_cpu_island(graph, {input}, {{"engine", engine}, {"threads", std::to_string(threads)}}));
  return IslandRun{std::move(run.outputs[0]), run.coverage};
}

struct DepthwiseCase {
  Shape x;
  Ints kernel;  // kH, kW
  Ints pads{0, 0, 0, 0};
  Ints dilations{1, 1};
  Ints strides{1, 1};
  bool bias = true;
  FusedActivation activation{};
};

// Runs `c` on both engines at 1 and 2 threads; the xnnpack engine must run
// the conv on the fast kernel when `fast`, on XNNPACK otherwise.
void expect_depthwise_agrees(const DepthwiseCase& c, bool fast) {
  const int64_t channels = c.x[1];
  GraphBuilder b("depthwise");
  const ValueId x = b.input("x", f32(c.x));
  std::vector<ValueId> ins{x, b.constant("w", random_tensor({channels, 1, c.kernel[0], c.kernel[1]}, 2))};
  if (c.bias) ins.push_back(b.constant("b", random_tensor({channels}, 3)));
  const ValueId y = b.op("Conv", ins,
                         {{"group", channels}, {"pads", c.pads}, {"dilations", c.dilations}, {"strides", c.strides}},
                         "conv");
  write_fused_activation(c.activation, b.raw().node(b.raw().find_node("conv")).attrs);
  b.output(y);
  auto graph = b.build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Tensor input = random_tensor(c.x, 1, -3.f, 3.f);
  auto expected = run_island(*graph, input, "portable", 1);
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();
  for (int threads : {1, 2}) {
    auto actual = run_island(*graph, input, "xnnpack", threads);
    ASSERT_TRUE(actual.is_ok()) << actual.status().message();
    EXPECT_EQ(actual->coverage.fast_ops, fast ? 1 : 0) << threads << " threads";
    EXPECT_EQ(actual->coverage.xnnpack_ops, fast ? 0 : 1) << threads << " threads";
    ASSERT_EQ(actual->output.type(), expected->output.type());
    const float* a = actual->output.data<float>();
    const float* e = expected->output.data<float>();
    int reported = 0;
    for (int64_t i = 0; i < actual->output.num_elements() && reported < 5; ++i) {
      if (std::abs(a[i] - e[i]) <= 1e-5f + 1e-3f * std::abs(e[i])) continue;
      ADD_FAILURE() << threads << " threads, element " << i << ": fast " << a[i] << ", portable " << e[i];
      ++reported;
    }
  }
}

TEST(XnnpackDepthwiseTest, FastDepthwise7x7MatchesPortable) {
  expect_depthwise_agrees({{1, 5, 13, 11}, {7, 7}, {3, 3, 3, 3}}, true);
}

TEST(XnnpackDepthwiseTest, FastDepthwiseWiderThanABlockMatchesPortable) {
  // 150 columns: two whole 64-column blocks and a partial one.
  expect_depthwise_agrees({{1, 3, 4, 150}, {1, 7}, {0, 3, 0, 3}}, true);
}

TEST(XnnpackDepthwiseTest, FastDepthwiseAsymmetricPadsAndDilationMatchPortable) {
  expect_depthwise_agrees({{1, 6, 9, 17}, {3, 5}, {1, 4, 2, 0}, {2, 2}}, true);
}

TEST(XnnpackDepthwiseTest, FastDepthwiseUnpaddedBatchWithoutBiasMatchesPortable) {
  DepthwiseCase c{{2, 7, 10, 12}, {7, 7}};
  c.bias = false;
  expect_depthwise_agrees(c, true);
}

TEST(XnnpackDepthwiseTest, FastDepthwiseWithFusedActivationsMatchesPortable) {
  FusedActivation clip{FusedActivation::Kind::kClip};
  clip.min = -0.5f;
  clip.max = 1.5f;
  FusedActivation leaky{FusedActivation::Kind::kLeakyRelu};
  leaky.alpha = 0.1f;
  for (const FusedActivation& act : {FusedActivation{FusedActivation::Kind::kRelu}, clip,
                                     FusedActivation{FusedActivation::Kind::kHardSwish},
                                     FusedActivation{FusedActivation::Kind::kSigmoid}, leaky}) {
    SCOPED_TRACE(fused_activation_name(act.kind));
    DepthwiseCase c{{1, 4, 8, 9}, {7, 7}, {3, 3, 3, 3}};
    c.activation = act;
    expect_depthwise_agrees(c, true);
  }
}

TEST(XnnpackDepthwiseTest, SizesXnnpackHasKernelsForStayOnXnnpack) {
  expect_depthwise_agrees({{1, 8, 9, 9}, {3, 3}, {1, 1, 1, 1}}, false);
  expect_depthwise_agrees({{1, 8, 9, 9}, {5, 5}, {2, 2, 2, 2}}, false);
}

TEST(XnnpackDepthwiseTest, StridedLargeKernelStaysOnXnnpack) {
  DepthwiseCase c{{1, 4, 15, 15}, {7, 7}, {3, 3, 3, 3}};
  c.strides = {2, 2};
  expect_depthwise_agrees(c, false);
}

}  // namespace
}  // namespace hetsched
