// A network's stem on the direct stem kernel (delegates/cpu/fast/stem_conv.h,
// taken through dense_conv_rule.h) against the portable kernels: 3x3
// stride 2 on an image's 3 channels to 8 (one vector, part of it stored),
// 16, 24 (the second vector overlapping the first), 32, 40 and 64 output
// channels; stride 1, stride (2, 1), a 4x4 stride-4 patchify conv on 4
// channels, a 5x5 on 1 channel on rows narrower than a tile; symmetric,
// asymmetric and no padding; batches; no bias; Relu, Clip and a SiLU after
// it; reading the island's NCHW input and, between two XNNPACK segments,
// NHWC; 1 and 2 threads.
//
// Tolerance: |fast - portable| <= 1e-5 * max |portable| + 1e-6 per element.
// A tap, a pad, a column of a moved-back tile or an output channel one off
// gives errors of the output's own size.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "delegates/cpu/fast/dense_conv_rule.h"
#include "delegates/cpu/fast/gemm.h"
#include "graph/builder.h"
#include "graph/passes/fused_activation.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using testing::random_tensor;
using testing::ScopedEnv;

struct Stem {
  int64_t cout = 32;
  Ints kernel{3, 3};
  Ints pads{1, 1, 1, 1};  // top, left, bottom, right (ONNX order)
  Ints strides{2, 2};
  bool bias = true;
  FusedActivation activation{FusedActivation::Kind::kRelu};
  bool silu = false;  // a Sigmoid and Mul after it (EfficientNet)
};

TensorType f32_type(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

ValueId add_conv(GraphBuilder& b, ValueId x, int64_t cin, int64_t cout, const Ints& kernel, const Ints& pads,
                 const Ints& strides, bool bias, const FusedActivation& activation, const std::string& name,
                 uint32_t seed) {
  const float bound = 1.f / std::sqrt(static_cast<float>(cin * kernel[0] * kernel[1]));
  std::vector<ValueId> ins{x, b.constant(name + "_w", random_tensor({cout, cin, kernel[0], kernel[1]}, seed, -bound, bound))};
  if (bias) ins.push_back(b.constant(name + "_b", random_tensor({cout}, seed + 1)));
  const ValueId y = b.op("Conv", ins, {{"kernel_shape", kernel}, {"pads", pads}, {"strides", strides}}, name);
  write_fused_activation(activation, b.raw().node(b.raw().find_node(name)).attrs);
  return y;
}

bool has_avx512() { return std::string(cpu::fast::gemm_isa()) == "avx512f"; }

// x (NCHW, or after a 1x1 from 5 channels: NHWC) -> the stem -> a 1x1 to 5
// channels (XNNPACK).
Graph stem_graph(const Shape& x, int64_t cin, const Stem& s, bool after_1x1) {
  GraphBuilder b("stem" + std::to_string(cin) + "x" + std::to_string(s.cout) + "_k" + std::to_string(s.kernel[0]) +
                 "_s" + std::to_string(s.strides[0]) + std::to_string(s.strides[1]) + (after_1x1 ? "_nhwc" : ""));
  ValueId in = b.input("x", f32_type(x));
  if (after_1x1) in = add_conv(b, in, x[1], cin, {1, 1}, {0, 0, 0, 0}, {1, 1}, true, {}, "pre", 3);
  ValueId y = add_conv(b, in, cin, s.cout, s.kernel, s.pads, s.strides, s.bias, s.activation, "stem", 5);
  if (s.silu) y = b.op("Mul", {y, b.op("Sigmoid", {y}, {}, "sig")}, {}, "mul");
  b.output(add_conv(b, y, s.cout, 5, {1, 1}, {0, 0, 0, 0}, {1, 1}, true, {}, "post", 7));
  return testing::build(b);
}

// Under the rule (HETSCHED_DENSE_CONV unset) on AVX-512: the stem as an
// NHWC step of its own; elsewhere everything in XNNPACK.
void expect_agrees(const Shape& x, const Stem& s, bool after_1x1 = false) {
  ScopedEnv dense("HETSCHED_DENSE_CONV", nullptr);
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  const int64_t cin = after_1x1 ? 3 : x[1];
  const bool taken = has_avx512();
  const int nodes = s.silu ? 3 : 1;  // a SiLU's Sigmoid and Mul run in the conv's step
  testing::expect_fast_cpu_matches_portable(stem_graph(x, cin, s, after_1x1), x, taken ? nodes : 0,
                                            taken ? (after_1x1 ? 2 : 1) : 1, 1e-5f, "stem");
}

TEST(StemConvTest, OutputChannelRunsMatchPortable) {
  expect_agrees({1, 3, 23, 37}, Stem{});        // 32: two vectors, 19 columns (tiles of 6, the last moved back)
  expect_agrees({2, 3, 19, 30}, Stem{16});      // one vector, tiles of 12; a batch
  Stem no_bias{24, {3, 3}, {1, 1, 1, 1}, {1, 1}};
  no_bias.bias = false;
  expect_agrees({1, 3, 9, 14}, no_bias);        // the second vector overlapping the first
  Stem clip{40};
  clip.activation = FusedActivation{FusedActivation::Kind::kClip, 0.f, 6.f};
  expect_agrees({1, 3, 17, 17}, clip);          // three vectors, the last overlapping
  expect_agrees({1, 3, 11, 13}, Stem{64});      // four vectors
  expect_agrees({1, 3, 10, 9}, Stem{8});        // one vector, half of it stored
}

TEST(StemConvTest, KernelsStridesAndPaddingsMatchPortable) {
  Stem patchify{48, {4, 4}, {0, 0, 0, 0}, {4, 4}};
  patchify.activation = {};
  expect_agrees({1, 4, 16, 20}, patchify);      // depth 64, no padding
  Stem convnext{96, {4, 4}, {0, 0, 0, 0}, {4, 4}};
  convnext.activation = {};
  expect_agrees({1, 3, 32, 28}, convnext);      // ConvNeXt's and Swin's patchify stem: 96 outputs, 3 + 3 vectors
  Stem wide{100, {2, 2}, {0, 0, 0, 0}, {2, 2}};
  expect_agrees({1, 3, 18, 22}, wide);          // seven vectors in two groups (4 + 3), the last overlapping
  wide.cout = 128;
  expect_agrees({1, 3, 14, 30}, wide);          // eight vectors, 4 + 4
  Stem narrow{12, {5, 5}, {2, 2, 2, 2}, {1, 1}};
  expect_agrees({1, 1, 6, 5}, narrow);          // 5 columns: fewer than a tile
  expect_agrees({1, 3, 10, 11}, Stem{16, {3, 3}, {0, 1, 1, 0}, {2, 1}});  // asymmetric pads, stride (2, 1)
  if (!has_avx512()) return;  // the SiLU alone leaves XNNPACK there (silu.h)
  Stem silu{32};
  silu.activation = {};
  silu.silu = true;
  // The SiLU in its pass over each row. A group (the conv and its SiLU)
  // reading the island's NCHW input: its op once read those bytes as NHWC
  // (cpu_delegate.cc's add_group; EfficientNet-B0's stem).
  expect_agrees({1, 3, 15, 21}, silu);
}

// Enough work to split over 2 threads (1M flops, fast_op.h): the padded
// copy of the input splits with the conv, a task per input row of a batch
// of two; from NCHW (the island's input) and from NHWC. Copying each row
// to the wrong image, or only its first channel, fails these.
TEST(StemConvTest, SplitOverTwoThreadsMatchesPortable) {
  expect_agrees({2, 3, 64, 48}, Stem{});        // MobileNet's and EfficientNet's: 3x3 stride 2, 32 outputs
  expect_agrees({2, 5, 64, 48}, Stem{}, true);
}

// Not the island's input: NHWC from the segment before it.
TEST(StemConvTest, NhwcInputBetweenSegmentsMatchesPortable) {
  expect_agrees({1, 5, 13, 18}, Stem{}, true);
  expect_agrees({2, 5, 9, 8}, Stem{24, {3, 3}, {1, 1, 1, 1}, {1, 1}}, true);
}

// Past 2 threads the rule leaves the stem on XNNPACK (dense_conv_rule.h).
TEST(StemConvTest, RuleLeavesItOnXnnpackPastTwoThreads) {
  ScopedEnv dense("HETSCHED_DENSE_CONV", nullptr);
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  const Shape x{1, 3, 23, 37};
  auto run = testing::run_cpu_island(stem_graph(x, 3, Stem{}, false), {random_tensor(x, 1)},
                                     {{"engine", "xnnpack"}, {"threads", "4"}});
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  EXPECT_EQ(run->coverage.fast_ops, 0);
}

TEST(StemConvTest, OffKeepsItOnXnnpack) {
  ScopedEnv off("HETSCHED_DENSE_CONV", "off");
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  testing::expect_fast_cpu_matches_portable(stem_graph({1, 3, 23, 37}, 3, Stem{}, false), {1, 3, 23, 37}, 0, 1, 1e-5f,
                                            "stem");
}

// The rule takes a shape the stem kernel runs whatever its depth rule says
// (a 3x3 stem on 3 channels: depth 27), on AVX-512 only.
TEST(StemConvTest, RuleTakesWhatTheStemKernelRuns) {
  using cpu::fast::DenseConvShape;
  DenseConvShape stem{3, 32, 9, 12544, 2, true};
  EXPECT_FALSE(cpu::fast::dense_conv_pays(stem));
  stem.stem_kernel = true;
  EXPECT_EQ(cpu::fast::dense_conv_pays(stem), has_avx512());
}

}  // namespace
}  // namespace hetsched
