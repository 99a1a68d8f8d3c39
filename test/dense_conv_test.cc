// Dense KxK convs on the fast GEMM, their windows gathered into the GEMM's
// A (delegates/cpu/fast/pointwise_conv.cc's GemmConv, dense_conv_rule.h),
// against the portable kernels (direct loops, double sums): 3x3, 5x5, 7x7
// and 2x2 kernels, 1x3 and 3x1 ones, symmetric, asymmetric and no
// padding, strides 1, 2 and (2, 1), dilation 2, batches, no bias, fused
// activations, channel and pixel counts off the micro-kernel's 12 rows and
// 32 columns, 1 and 2 threads; in the graph's order (the conv alone in its
// island) and as an NHWC step between two XNNPACK segments; and the rule's
// own choice on ResNet's last-stage shapes against its stem.
//
// Tolerance: |fast - portable| <= 1e-5 * max |portable| + 1e-6 per element.
// A tap, a pad or a window one off gives errors of the output's own size.
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

struct Conv {
  int64_t cout = 8;
  Ints kernel{3, 3};
  Ints pads{1, 1, 1, 1};  // top, left, bottom, right (ONNX order)
  Ints strides{1, 1};
  Ints dilations{1, 1};
  bool bias = true;
  FusedActivation activation{};
};

ValueId add_conv(GraphBuilder& b, ValueId x, int64_t cin, const Conv& c, const std::string& name, uint32_t seed) {
  const float bound = 1.f / std::sqrt(static_cast<float>(cin * c.kernel[0] * c.kernel[1]));
  std::vector<ValueId> ins{x, b.constant(name + "_w", random_tensor({c.cout, cin, c.kernel[0], c.kernel[1]}, seed,
                                                                    -bound, bound))};
  if (c.bias) ins.push_back(b.constant(name + "_b", random_tensor({c.cout}, seed + 1)));
  const ValueId y = b.op("Conv", ins,
                         {{"kernel_shape", c.kernel}, {"pads", c.pads}, {"strides", c.strides}, {"dilations", c.dilations}},
                         name);
  write_fused_activation(c.activation, b.raw().node(b.raw().find_node(name)).attrs);
  return y;
}

// The rule's CPU test, as the fast GEMM picks its kernel (HETSCHED_FAST_ISA caps it).
bool has_avx512() { return std::string(cpu::fast::gemm_isa()) == "avx512f"; }

TensorType f32_type(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// The conv alone in its island: the fast GEMM in the graph's order.
void expect_lone_agrees(const Shape& x, const Conv& c) {
  ScopedEnv on("HETSCHED_DENSE_CONV", "on");
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  GraphBuilder b("dense_" + std::to_string(x[1]) + "x" + std::to_string(c.cout) + "_k" + std::to_string(c.kernel[0]) +
                 "x" + std::to_string(c.kernel[1]));
  b.output(add_conv(b, b.input("x", f32_type(x)), x[1], c, "conv", 2));
  testing::expect_fast_cpu_matches_portable(testing::build(b), x, 1, 0, 1e-5f, "dense");
}

// 1x1 (XNNPACK) -> the dense conv (fast, NHWC) -> 1x1 (XNNPACK).
void expect_nhwc_agrees(const Shape& x, int64_t mid, const Conv& c) {
  ScopedEnv on("HETSCHED_DENSE_CONV", "on");
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  GraphBuilder b("dense_nhwc_" + std::to_string(mid) + "x" + std::to_string(c.cout));
  Conv pre{mid, {1, 1}, {0, 0, 0, 0}};
  pre.activation = FusedActivation{FusedActivation::Kind::kRelu};
  const ValueId a = add_conv(b, b.input("x", f32_type(x)), x[1], pre, "pre", 4);
  const ValueId d = add_conv(b, a, mid, c, "dense", 6);
  b.output(add_conv(b, d, c.cout, Conv{5, {1, 1}, {0, 0, 0, 0}}, "post", 8));
  testing::expect_fast_cpu_matches_portable(testing::build(b), x, 1, 2, 1e-5f, "dense");
}

TEST(DenseConvTest, KernelsAndPaddingsMatchPortable) {
  expect_lone_agrees({1, 5, 7, 9}, Conv{7});                                   // 3x3, pads 1
  expect_lone_agrees({1, 3, 11, 13}, Conv{17, {5, 5}, {2, 2, 2, 2}});         // 5x5
  expect_lone_agrees({1, 4, 9, 8}, Conv{33, {2, 2}, {0, 0, 0, 0}});           // even kernel, no pads
  expect_lone_agrees({1, 6, 10, 7}, Conv{9, {3, 3}, {0, 2, 1, 0}});           // asymmetric pads
  expect_lone_agrees({1, 7, 6, 11}, Conv{12, {1, 3}, {0, 1, 0, 1}});          // 1x3
  expect_lone_agrees({1, 7, 11, 6}, Conv{12, {3, 1}, {1, 0, 1, 0}});          // 3x1
  expect_lone_agrees({1, 2, 5, 5}, Conv{3, {1, 1}, {1, 1, 1, 1}});            // a padded 1x1
}

TEST(DenseConvTest, StridesAndDilationsMatchPortable) {
  Conv s2{21};
  s2.strides = {2, 2};
  expect_lone_agrees({1, 9, 13, 11}, s2);
  Conv stem{16, {7, 7}, {3, 3, 3, 3}, {2, 2}};  // a ResNet stem, small
  expect_lone_agrees({1, 3, 23, 19}, stem);
  Conv s21{10};
  s21.strides = {2, 1};
  expect_lone_agrees({1, 6, 10, 7}, s21);
  Conv dilated{14, {3, 3}, {2, 2, 2, 2}};
  dilated.dilations = {2, 2};
  expect_lone_agrees({1, 8, 12, 10}, dilated);
}

TEST(DenseConvTest, BatchesBiasAndActivationsMatchPortable) {
  Conv c{9};
  c.bias = false;
  expect_lone_agrees({3, 6, 10, 5}, c);
  FusedActivation clip{FusedActivation::Kind::kClip};
  clip.min = -0.5f;
  clip.max = 0.75f;
  for (const FusedActivation& act :
       {FusedActivation{FusedActivation::Kind::kRelu}, clip, FusedActivation{FusedActivation::Kind::kHardSwish}}) {
    SCOPED_TRACE(fused_activation_name(act.kind));
    Conv a{18};
    a.activation = act;
    expect_lone_agrees({1, 20, 9, 10}, a);
  }
  // Enough work to split over 2 threads: 3x3 at 7x7, 256 -> 96 (K 2304).
  expect_lone_agrees({1, 256, 7, 7}, Conv{96});
}

// Past a depth of 8192 the fast GEMM goes in chunks of the depth, adding
// each into C (gemm.cc: FCN's 3x3 head on 2048 channels): the bias and the
// residual once, the clamp after the last. 3x3 on 1000 channels, depth
// 9000 (9001 in the graph's order, with the bias row): in the graph's
// order, and between segments with the windows read in place (3 segments
// of 3000, 2 chunks each) and gathered (one of 9000, 5 chunks).
TEST(DenseConvTest, DepthPastTheChunkMatchesPortable) {
  Conv deep{20};
  deep.activation = FusedActivation{FusedActivation::Kind::kRelu};
  expect_lone_agrees({1, 1000, 5, 6}, deep);
  for (const char* windows : {"on", "off"}) {
    SCOPED_TRACE(std::string("HETSCHED_CONV_WINDOWS=") + windows);
    ScopedEnv env("HETSCHED_CONV_WINDOWS", windows);
    expect_nhwc_agrees({1, 3, 6, 5}, 1000, deep);
  }
}

// Where most (tap, pixel) pairs read padding the conv goes tap by tap,
// each over the output pixels whose input it reaches (pointwise_conv.cc's
// plan_taps: DeepLab's ASPP, 3x3 dilated 12 on 14x14): dilated 5 on a 7x8
// map (154 of 504 pairs), strided, with asymmetric pads, a Relu and two
// threads' bands and column runs.
TEST(DenseConvTest, TapByTapWhereMostTapsReadPaddingMatchesPortable) {
  Conv aspp{20, {3, 3}, {5, 5, 5, 5}};
  aspp.dilations = {5, 5};
  aspp.activation = FusedActivation{FusedActivation::Kind::kRelu};
  expect_nhwc_agrees({1, 3, 7, 8}, 24, aspp);
  Conv strided{70, {3, 3}, {4, 6, 3, 2}, {2, 2}};
  strided.dilations = {4, 6};
  expect_nhwc_agrees({2, 5, 9, 6}, 33, strided);
  Conv wide{130, {3, 3}, {6, 6, 6, 6}};
  wide.dilations = {6, 6};
  expect_nhwc_agrees({1, 6, 8, 9}, 96, wide);
}

TEST(DenseConvTest, BetweenSegmentsInNhwcMatchesPortable) {
  expect_nhwc_agrees({1, 3, 15, 17}, 24, Conv{33});
  Conv s2{40};
  s2.strides = {2, 2};
  expect_nhwc_agrees({2, 5, 9, 6}, 19, s2);
  expect_nhwc_agrees({1, 4, 11, 10}, 13, Conv{7, {5, 5}, {2, 1, 2, 3}});
  // Enough work to split over 2 threads.
  Conv wide{130};
  wide.strides = {2, 2};
  expect_nhwc_agrees({1, 6, 29, 27}, 128, wide);
}

// Between segments the windows are read from the input in place (a segment
// of kernel_w x Cin floats per kernel row, each output pixel's window by
// its offset, pointwise_conv.cc's plan_windows), through a zero-bordered
// copy where a window hangs over an edge; with HETSCHED_CONV_WINDOWS=off
// they are gathered. Both must agree on the cases that tell the two apart:
// a dilation in height alone (the segments' stride), an unpadded strided
// conv that leaves the last input column unread (read in place, a pitch
// wider than the extent), a padded one that leaves it unread (a copy
// narrower than the input), output rows wider than one row tile, and row
// tiles that span output rows and images (a batch of 5x4 maps: 40 pixels
// in tiles of 10).
TEST(DenseConvTest, WindowsReadInPlaceMatchPortable) {
  for (const char* windows : {"on", "off"}) {
    SCOPED_TRACE(std::string("HETSCHED_CONV_WINDOWS=") + windows);
    ScopedEnv env("HETSCHED_CONV_WINDOWS", windows);
    Conv dilated_h{11, {3, 3}, {2, 1, 2, 1}};
    dilated_h.dilations = {2, 1};
    expect_nhwc_agrees({1, 5, 12, 9}, 14, dilated_h);
    Conv unpadded_s2{9, {3, 3}, {0, 0, 0, 0}, {2, 2}};
    expect_nhwc_agrees({2, 4, 11, 10}, 10, unpadded_s2);
    Conv top_left_s2{12, {3, 3}, {1, 1, 0, 0}, {2, 2}};
    expect_nhwc_agrees({1, 3, 9, 9}, 7, top_left_s2);
    Conv stem{16, {7, 7}, {3, 3, 3, 3}, {2, 2}};  // 31 output columns: row tiles of 11, 10, 10
    expect_nhwc_agrees({1, 3, 25, 61}, 3, stem);
  }
}

TEST(DenseConvTest, OffKeepsEveryConvOnXnnpack) {
  ScopedEnv off("HETSCHED_DENSE_CONV", "off");
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  GraphBuilder b("off");
  b.output(add_conv(b, b.input("x", f32_type({1, 512, 7, 7})), 512, Conv{512}, "conv", 2));
  testing::expect_fast_cpu_matches_portable(testing::build(b), {1, 512, 7, 7}, 0, 1, 1e-5f, "dense");
}

// Under the rule a dense conv leaves XNNPACK only as an NHWC step between
// segments: alone in its island (graph order, converted on both sides) it
// stays; between two XNNPACK 1x1 convs it goes. ResNet-50's last-stage
// 3x3 (512 channels at 7x7), which the rule takes by its shape.
TEST(DenseConvRuleTest, OnlyBetweenSegmentsUnderTheRule) {
  if (!has_avx512()) GTEST_SKIP() << "the rule takes nothing without AVX-512";
  ScopedEnv rule("HETSCHED_DENSE_CONV", nullptr);
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  {
    GraphBuilder b("alone");
    b.output(add_conv(b, b.input("x", f32_type({1, 512, 7, 7})), 512, Conv{512}, "conv", 2));
    testing::expect_fast_cpu_matches_portable(testing::build(b), {1, 512, 7, 7}, 0, 1, 1e-5f, "dense");
  }
  GraphBuilder b("between");
  Conv pre{512, {1, 1}, {0, 0, 0, 0}};
  const ValueId a = add_conv(b, b.input("x", f32_type({1, 64, 7, 7})), 64, pre, "pre", 4);
  const ValueId d = add_conv(b, a, 512, Conv{512}, "dense", 6);
  b.output(add_conv(b, d, 512, Conv{16, {1, 1}, {0, 0, 0, 0}}, "post", 8));
  testing::expect_fast_cpu_matches_portable(testing::build(b), {1, 64, 7, 7}, 1, 2, 1e-5f, "dense");
}

// Under the rule (AVX-512 only): ResNet-50's last-stage 3x3 (512 channels
// at 7x7) and its stride-2 3x3s go to the fast GEMM, windows gathered or
// read in place; the 7x7 stem (K 147), 5x5s and 3x3s from depth 384 only
// when they are read in place; a small early 3x3 (or a 3x3 stem) stays on
// XNNPACK; a deep conv on a map too large to gather goes only in place.
TEST(DenseConvRuleTest, TakesDeepNarrowMapsAndStemsReadInPlace) {
  using cpu::fast::DenseConvShape;
  using cpu::fast::dense_conv_pays;
  if (!has_avx512()) {
    EXPECT_FALSE(dense_conv_pays(DenseConvShape{512, 512, 9, 49, 1, true}));
    GTEST_SKIP() << "the rule takes nothing without AVX-512";
  }
  for (const bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "windows in place" : "windows gathered");
    EXPECT_TRUE(dense_conv_pays(DenseConvShape{512, 512, 9, 49, 1, in_place}));
    EXPECT_TRUE(dense_conv_pays(DenseConvShape{512, 512, 9, 49, 2, in_place}));
    EXPECT_TRUE(dense_conv_pays(DenseConvShape{256, 256, 9, 196, 2, in_place}));
    EXPECT_EQ(dense_conv_pays(DenseConvShape{3, 64, 49, 12544, 2, in_place}), in_place);
    EXPECT_EQ(dense_conv_pays(DenseConvShape{16, 32, 25, 3136, 1, in_place}), in_place);  // 5x5
    EXPECT_EQ(dense_conv_pays(DenseConvShape{48, 96, 9, 784, 2, in_place}), in_place);    // depth 432
    EXPECT_FALSE(dense_conv_pays(DenseConvShape{32, 64, 9, 3136, 2, in_place}));          // depth 288
    EXPECT_FALSE(dense_conv_pays(DenseConvShape{3, 32, 9, 12544, 2, in_place}));
    EXPECT_FALSE(dense_conv_pays(DenseConvShape{16, 16, 9, 12544, 1, in_place}));
    EXPECT_EQ(dense_conv_pays(DenseConvShape{128, 128, 9, 160 * 160, 1, in_place}), in_place);
  }
}

// A ResNet stem reads the island's NCHW input and writes NHWC for the
// segment after it: an NHWC step of its own on the fast GEMM, which copies
// the input transposed into its zero-bordered image (the conv stays on
// XNNPACK where the windows would be gathered).
TEST(DenseConvTest, StemReadsTheIslandsNchwInputAsAnNhwcStep) {
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  for (const char* windows : {"on", "off"}) {
    SCOPED_TRACE(std::string("HETSCHED_CONV_WINDOWS=") + windows);
    ScopedEnv env("HETSCHED_CONV_WINDOWS", windows);
    ScopedEnv dense("HETSCHED_DENSE_CONV", nullptr);  // the rule
    GraphBuilder b("stem");
    Conv stem{64, {7, 7}, {3, 3, 3, 3}, {2, 2}};
    stem.activation = FusedActivation{FusedActivation::Kind::kRelu};
    const ValueId s = add_conv(b, b.input("x", f32_type({2, 3, 38, 45})), 3, stem, "stem", 4);
    b.output(add_conv(b, s, 64, Conv{5, {1, 1}, {0, 0, 0, 0}}, "post", 8));
    const Graph graph = testing::build(b);
    // On: the stem on the fast GEMM (its NHWC step), the 1x1 in a segment
    // after it; off (or without AVX-512, where the rule takes nothing): both
    // in one segment.
    const bool on = std::string(windows) == "on" && has_avx512();
    testing::expect_fast_cpu_matches_portable(graph, {2, 3, 38, 45}, on ? 1 : 0, 1, 1e-5f, "stem");
  }
}

}  // namespace
}  // namespace hetsched

namespace hetsched {
namespace {

// Convs of 3 spatial dims (delegates/cpu/fast/conv_nd.cc): XNNPACK has none,
// so the conv is alone in its island on the fast GEMM, against the portable
// kernel: padded and strided video stems, a grouped dilated one of uneven
// pads, a 1x1x1 one, a batch of two, rows longer than a panel; voxel
// counts off the 64-voxel blocks
// and channel counts off the micro-kernel's rows; a Relu after.
void expect_volume_conv_agrees(const Shape& x, const Shape& w,
                               std::initializer_list<std::pair<std::string, Attribute>> attrs, bool relu) {
  GraphBuilder b("conv3d_" + std::to_string(x[1]) + "x" + std::to_string(w[0]));
  std::vector<ValueId> ins{b.input("x", f32_type(x)), b.constant("w", testing::random_tensor(w, 2)),
                           b.constant("b", testing::random_tensor({w[0]}, 3))};
  ValueId y = b.op("Conv", ins, attrs, "conv");
  if (relu) y = b.op("Relu", {y}, {}, "relu");
  b.output(y);
  // testing::build skips the load-time clean-up that fuses a Relu into its
  // conv: the Relu stays a node, an XNNPACK segment of its own.
  testing::expect_fast_cpu_matches_portable(testing::build(b), x, 1, relu ? 1 : 0, 1e-5f, "conv3d");
}

TEST(VolumeConvTest, FastGemmMatchesPortable) {
  using Ints = std::vector<int64_t>;
  expect_volume_conv_agrees({1, 3, 5, 17, 9}, {13, 3, 3, 7, 7},
                            {{"strides", Ints{1, 2, 2}}, {"pads", Ints{1, 3, 3, 1, 3, 3}}}, true);
  expect_volume_conv_agrees({2, 8, 4, 6, 5}, {6, 4, 3, 1, 2},
                            {{"group", int64_t{2}}, {"dilations", Ints{2, 1, 1}}, {"pads", Ints{2, 0, 1, 1, 0, 0}}},
                            false);
  expect_volume_conv_agrees({1, 16, 3, 5, 7}, {20, 16, 1, 1, 1}, {}, false);
  // Rows of 40 voxels: stride-1 taps copy whole 16-voxel runs, except where
  // a run starts in the padding.
  expect_volume_conv_agrees({1, 4, 2, 3, 40}, {5, 4, 1, 3, 3}, {{"pads", Ints{0, 1, 1, 0, 1, 1}}}, false);
  // One block of 30 voxels, 40 channels: at 2 threads its channels are
  // split into 3 slices of 14, 14 and 12.
  expect_volume_conv_agrees({1, 8, 2, 3, 5}, {40, 8, 3, 3, 3}, {{"pads", Ints{1, 1, 1, 1, 1, 1}}}, true);
}

}  // namespace
}  // namespace hetsched
