// BatchNormalization that no conv takes, with its Relu or Clip, as one
// NHWC pass between XNNPACK segments (delegates/cpu/fast/channel_affine.h),
// against the portable kernels: DenseNet's Concat -> BatchNorm -> Relu ->
// conv (the Concat in the same pass), with a Clip(0, 6), and a BatchNorm
// read by two convs (no clamp to take), a Concat read by another node too
// (not taken), three pieces and a batch of two, on odd spatial sizes and
// channel counts, 1 and 2 threads; and the op in the graph's order, with
// and without a Concat, against the formula.
//
// Tolerance: |fast - portable| <= 1e-5 * max |portable| + 1e-6 per element.
// A channel's scale or shift taken from the wrong channel, a shift left
// out or a clamp ignored gives errors of the output's own size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "delegates/cpu/fast/channel_affine.h"
#include "graph/builder.h"
#include "graph/passes/fused_activation.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using testing::random_tensor;
using testing::ScopedEnv;

using testing::f32;

ValueId conv3x3(GraphBuilder& b, ValueId x, int64_t cin, int64_t cout, const std::string& name, uint32_t seed,
                bool relu) {
  const float bound = 1.f / std::sqrt(static_cast<float>(cin * 9));
  const ValueId y = b.op("Conv",
                         {x, b.constant(name + "_w", random_tensor({cout, cin, 3, 3}, seed, -bound, bound)),
                          b.constant(name + "_b", random_tensor({cout}, seed + 1))},
                         {{"pads", Ints{1, 1, 1, 1}}}, name);
  if (relu) write_fused_activation({FusedActivation::Kind::kRelu}, b.raw().node(b.raw().find_node(name)).attrs);
  return y;
}

ValueId batch_norm(GraphBuilder& b, ValueId x, int64_t c, uint32_t seed) {
  return b.op("BatchNormalization",
              {x, b.constant("bn_scale", random_tensor({c}, seed, 0.5f, 1.5f)),
               b.constant("bn_bias", random_tensor({c}, seed + 1, -1.f, 1.f)),
               b.constant("bn_mean", random_tensor({c}, seed + 2, -0.5f, 0.5f)),
               b.constant("bn_var", random_tensor({c}, seed + 3, 0.2f, 2.f))},
              {{"epsilon", 1e-5f}}, "bn");
}

// x -> two 3x3 convs -> Concat -> BatchNorm -> `clamp` (Relu, Clip or
// none, with the BatchNorm then read by two convs) -> 3x3 conv(s).
// `shared_cat`: the Concat is also added to the result (so the BatchNorm
// is not its only reader).
Graph densenet_like(const std::string& clamp, bool shared_cat = false) {
  GraphBuilder b("affine_" + (clamp.empty() ? std::string("alone") : clamp) + (shared_cat ? "_shared" : ""));
  const ValueId x = b.input("x", f32({1, 5, 13, 11}));
  const ValueId c1 = conv3x3(b, x, 5, 16, "c1", 2, true);
  const ValueId c2 = conv3x3(b, x, 5, 13, "c2", 4, false);
  const ValueId cat = b.op("Concat", {c1, c2}, {{"axis", int64_t{1}}}, "cat");
  ValueId v = batch_norm(b, cat, 29, 6);
  if (shared_cat) {
    v = b.op("Relu", {v}, {}, "relu");
    b.output(b.op("Add", {conv3x3(b, v, 29, 6, "c3", 8, false), conv3x3(b, cat, 29, 6, "c4", 10, false)}, {}, "add"));
    return testing::build(b);
  }
  if (clamp == "relu") {
    v = b.op("Relu", {v}, {}, "relu");
  } else if (clamp == "clip") {
    v = b.op("Clip", {v, b.constant("lo", Tensor::from_vector(DType::kFloat32, {}, std::vector<float>{0.f})),
                      b.constant("hi", Tensor::from_vector(DType::kFloat32, {}, std::vector<float>{0.5f}))},
             {}, "clip");
  }
  if (clamp.empty()) {
    b.output(b.op("Add", {conv3x3(b, v, 29, 6, "ca", 8, false), conv3x3(b, v, 29, 6, "cb", 10, false)}, {}, "add"));
  } else {
    b.output(conv3x3(b, v, 29, 6, "c3", 8, false));
  }
  return testing::build(b);
}

class ChannelAffineTest : public ::testing::Test {
 protected:
  // The convs stay on XNNPACK, so the BatchNorm sits between segments.
  ScopedEnv winograd_{"HETSCHED_WINOGRAD", "off"};
  ScopedEnv dense_{"HETSCHED_DENSE_CONV", "off"};
  ScopedEnv pointwise_{"HETSCHED_POINTWISE", "off"};
};

// Fast ops: the Concat, the BatchNorm and the clamp; segments: the two
// convs before, the conv(s) after.
TEST_F(ChannelAffineTest, ConcatBatchNormAndReluRunAsOneNhwcPassAndMatchPortable) {
  testing::expect_fast_cpu_matches_portable(densenet_like("relu"), {1, 5, 13, 11}, 3, 2, 1e-5f, "affine");
}

TEST_F(ChannelAffineTest, ConcatBatchNormAndClipMatchPortable) {
  testing::expect_fast_cpu_matches_portable(densenet_like("clip"), {1, 5, 13, 11}, 3, 2, 1e-5f, "affine");
}

TEST_F(ChannelAffineTest, ABatchNormReadTwiceRunsWithoutAClampAndMatchesPortable) {
  testing::expect_fast_cpu_matches_portable(densenet_like(""), {1, 5, 13, 11}, 2, 2, 1e-5f, "affine");
}

// The Concat is read by a conv too, so it stays in its segment and the
// pass reads its output.
TEST_F(ChannelAffineTest, AConcatReadTwiceStaysOutAndMatchesPortable) {
  testing::expect_fast_cpu_matches_portable(densenet_like("relu", true), {1, 5, 13, 11}, 2, 2, 1e-5f, "affine");
}

// Three pieces (4, 16 and 7 channels: runs shorter than a vector, and a
// piece starting mid-vector) over a batch of two.
TEST_F(ChannelAffineTest, ThreePiecesOverABatchMatchPortable) {
  GraphBuilder b("affine_three");
  const ValueId x = b.input("x", f32({2, 3, 9, 10}));
  const ValueId c1 = conv3x3(b, x, 3, 4, "c1", 2, true);
  const ValueId c2 = conv3x3(b, x, 3, 16, "c2", 4, false);
  const ValueId c3 = conv3x3(b, x, 3, 7, "c3", 6, true);
  const ValueId cat = b.op("Concat", {c1, c2, c3}, {{"axis", int64_t{1}}}, "cat");
  const ValueId v = b.op("Relu", {batch_norm(b, cat, 27, 8)}, {}, "relu");
  b.output(conv3x3(b, v, 27, 5, "c4", 12, false));
  testing::expect_fast_cpu_matches_portable(testing::build(b), {2, 3, 9, 10}, 3, 2, 1e-5f, "affine");
}

// The op in the graph's order (where a plan that fell back from its NHWC
// steps runs it), on NCHW data, against the BatchNorm formula in double.
TEST(ChannelAffineOpTest, GraphOrderMatchesTheFormula) {
  GraphBuilder b("planes");
  const ValueId x = b.input("x", f32({2, 7, 5, 3}));
  const Tensor scale = random_tensor({7}, 6, 0.5f, 1.5f), bias = random_tensor({7}, 7, -1.f, 1.f);
  const Tensor mean = random_tensor({7}, 8, -0.5f, 0.5f), var = random_tensor({7}, 9, 0.2f, 2.f);
  const ValueId y = b.op("BatchNormalization",
                         {x, b.constant("s", scale), b.constant("b", bias), b.constant("m", mean), b.constant("v", var)},
                         {{"epsilon", 1e-3f}}, "bn");
  b.output(b.op("Relu", {y}, {}, "relu"));
  const Graph g = testing::build(b);
  const std::vector<cpu::fast::AffineGroup> groups = cpu::fast::find_affine_groups(g);
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_NE(groups[0].clamp, kNoNode);
  Tensor in = random_tensor({2, 7, 5, 3}, 3, -3.f, 3.f);
  Tensor out(f32({2, 7, 5, 3}));
  const auto tensor_of = [&](ValueId v) -> Tensor& { return v == groups[0].x ? in : out; };
  cpu::fast::FastOpContext ctx{g, g.node(groups[0].lead()), nullptr, tensor_of};
  auto op = cpu::fast::make_affine(ctx, groups[0]);
  ASSERT_TRUE(op.is_ok()) << op.status().message();
  ASSERT_TRUE((*op)->run().is_ok());
  for (int64_t i = 0; i < in.num_elements(); ++i) {
    const int64_t c = i / 15 % 7;
    const double v = (in.data<float>()[i] - mean.data<float>()[c]) / std::sqrt(var.data<float>()[c] + 1e-3) *
                         scale.data<float>()[c] +
                     bias.data<float>()[c];
    ASSERT_NEAR(out.data<float>()[i], std::max(v, 0.0), 1e-5) << "element " << i;
  }
}

// The same in the graph's order with a Concat of two pieces (5 and 2
// channels) taken in, over a batch of two: plane runs that cross from one
// piece to the next and from one image to the next.
TEST(ChannelAffineOpTest, GraphOrderConcatPiecesMatchTheFormula) {
  GraphBuilder b("planes_cat");
  const ValueId x1 = b.input("x1", f32({2, 5, 4, 3}));
  const ValueId x2 = b.input("x2", f32({2, 2, 4, 3}));
  const ValueId a1 = b.op("Relu", {x1}, {}, "r1");  // run-time pieces, not island inputs
  const ValueId a2 = b.op("Relu", {x2}, {}, "r2");
  const ValueId cat = b.op("Concat", {a1, a2}, {{"axis", int64_t{1}}}, "cat");
  const Tensor scale = random_tensor({7}, 6, 0.5f, 1.5f), bias = random_tensor({7}, 7, -1.f, 1.f);
  const Tensor mean = random_tensor({7}, 8, -0.5f, 0.5f), var = random_tensor({7}, 9, 0.2f, 2.f);
  const ValueId y = b.op("BatchNormalization",
                         {cat, b.constant("s", scale), b.constant("b", bias), b.constant("m", mean), b.constant("v", var)},
                         {{"epsilon", 1e-3f}}, "bn");
  b.output(y);
  const Graph g = testing::build(b);
  const std::vector<cpu::fast::AffineGroup> groups = cpu::fast::find_affine_groups(g);
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_NE(groups[0].concat, kNoNode);
  ASSERT_EQ(groups[0].pieces.size(), 2u);
  Tensor in1 = random_tensor({2, 5, 4, 3}, 3, -3.f, 3.f), in2 = random_tensor({2, 2, 4, 3}, 4, -3.f, 3.f);
  Tensor out(f32({2, 7, 4, 3}));
  const auto tensor_of = [&](ValueId v) -> Tensor& { return v == a1 ? in1 : v == a2 ? in2 : out; };
  cpu::fast::FastOpContext ctx{g, g.node(groups[0].lead()), nullptr, tensor_of};
  auto op = cpu::fast::make_affine(ctx, groups[0]);
  ASSERT_TRUE(op.is_ok()) << op.status().message();
  ASSERT_TRUE((*op)->run().is_ok());
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const int64_t n = i / (7 * 12), c = i / 12 % 7, p = i % 12;
    const float x = c < 5 ? in1.data<float>()[(n * 5 + c) * 12 + p] : in2.data<float>()[(n * 2 + c - 5) * 12 + p];
    const double v = (x - mean.data<float>()[c]) / std::sqrt(var.data<float>()[c] + 1e-3) * scale.data<float>()[c] +
                     bias.data<float>()[c];
    ASSERT_NEAR(out.data<float>()[i], v, 1e-5) << "element " << i;
  }
}

}  // namespace
}  // namespace hetsched
