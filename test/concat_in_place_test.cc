// NHWC Concat inputs written in place (island_arena.h's
// concat_input_in_place, fast::FastOp::write_channels_into): a conv on the
// fast GEMM or on Winograd whose only reader is a Concat between XNNPACK
// segments writes its channels straight into the Concat's output, and the
// Concat copies only the other inputs. Against the portable kernels (the
// oracle) at 1 and 2 threads, on a batch of 2 (the images' strides), with
// channel counts that are not whole vectors, an input the Concat reads that
// another node reads too (copied), and the Concat's output read by two
// later convs. A producer writing at the wrong channel offset or pixel
// stride, or an arena that lets another value share the output's bytes
// before the Concat's step, gives errors of the output's own size.
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

TensorType f32_type(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

ValueId add_conv(GraphBuilder& b, ValueId x, int64_t cin, int64_t cout, int64_t k, const std::string& name,
                 uint32_t seed) {
  const float bound = 1.f / std::sqrt(static_cast<float>(cin * k * k));
  const int64_t pad = k / 2;
  const ValueId y = b.op("Conv",
                         {x, b.constant(name + "_w", random_tensor({cout, cin, k, k}, seed, -bound, bound)),
                          b.constant(name + "_b", random_tensor({cout}, seed + 1))},
                         {{"pads", Ints{pad, pad, pad, pad}}}, name);
  write_fused_activation(FusedActivation{FusedActivation::Kind::kRelu}, b.raw().node(b.raw().find_node(name)).attrs);
  return y;
}

ValueId add_pool(GraphBuilder& b, ValueId x, const std::string& name) {
  return b.op("MaxPool", {x}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}, name);
}

// A Fire module with a third branch between two XNNPACK segments (max
// pools): squeeze (1x1) -> expand 1x1 (the fast GEMM), expand 3x3
// (Winograd, twice) and the squeeze's own output -> Concat -> pool -> two
// 1x1 convs -> Add.
Graph fire_module(const Shape& x) {
  GraphBuilder b("fire");
  const ValueId in = add_pool(b, b.input("x", f32_type(x)), "pool_in");
  const ValueId s = add_conv(b, in, x[1], 20, 1, "squeeze", 2);
  const ValueId e1 = add_conv(b, s, 20, 40, 1, "expand1x1", 4);
  // Two 3x3 convs, whose intermediate dies before the Concat: without the
  // Concat's output kept from expand1x1's step on, the arena may give it
  // those bytes, and the second branch would overwrite the first.
  const ValueId mid = add_conv(b, s, 20, 96, 3, "expand3x3_a", 6);
  const ValueId e3 = add_conv(b, mid, 96, 24, 3, "expand3x3_b", 12);
  const ValueId cat = add_pool(b, b.op("Concat", {e1, s, e3}, {{"axis", int64_t{1}}}, "concat"), "pool_out");
  const ValueId p = add_conv(b, cat, 84, 16, 1, "post_a", 8);
  const ValueId q = add_conv(b, cat, 84, 16, 1, "post_b", 10);
  b.output(b.op("Add", {p, q}, {}, "sum"));
  return testing::build(b);
}

TEST(ConcatInPlaceTest, BranchesWriteIntoTheConcatAndMatchPortable) {
  testing::ScopedEnv pointwise("HETSCHED_POINTWISE", "on");
  testing::ScopedEnv winograd("HETSCHED_WINOGRAD", "on");
  const Shape x{2, 8, 13, 11};
  const Graph graph = fire_module(x);
  const Tensor input = random_tensor(x, 1, -2.f, 2.f);
  auto want = testing::run_cpu_island(graph, {input}, {{"engine", "portable"}, {"threads", "1"}});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  const Tensor& w = want->outputs[0];
  const float scale = testing::max_abs(w);
  ASSERT_GT(scale, 0.f);
  for (const char* threads : {"1", "2"}) {
    SCOPED_TRACE(std::string(threads) + " threads");
    // Twice: the second run finds the Concat's output as the first left it.
    auto got = testing::run_cpu_island(graph, {input}, {{"engine", "xnnpack"}, {"threads", threads}}, 2);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    // expand1x1 and expand3x3; the squeeze's output, read by both, is copied.
    EXPECT_EQ(got->coverage.concat_inputs_in_place, 2);
    EXPECT_EQ(got->coverage.fast_ops, 6);  // the four 1x1 convs on the fast GEMM (forced), the 3x3s on Winograd
    EXPECT_EQ(got->coverage.xnnpack_segments, 3);  // the pools and the Add
    ASSERT_EQ(got->outputs[0].type(), w.type());
    EXPECT_LE(testing::max_abs_diff(got->outputs[0], w), 2e-5f * scale + 1e-6f);
  }
}

// HETSCHED_CPU_ARENA=off gives every value its own buffer: the producers
// still write into the Concat's output (its own buffer then).
TEST(ConcatInPlaceTest, WithoutTheArenaToo) {
  testing::ScopedEnv pointwise("HETSCHED_POINTWISE", "on");
  testing::ScopedEnv winograd("HETSCHED_WINOGRAD", "on");
  testing::ScopedEnv arena("HETSCHED_CPU_ARENA", "off");
  testing::expect_fast_cpu_matches_portable(fire_module({1, 8, 9, 7}), {1, 8, 9, 7}, 6, 3, 2e-5f, "concat");
}

}  // namespace
}  // namespace hetsched
