// A residual Add after a conv's activation (conv -> SiLU or Relu ->
// Add(x), YOLO's and CSPNet's bottlenecks, EfficientNetV2's first blocks)
// taken into the conv's group (ConvGroup::add_last) on each kernel that
// runs it — the fast GEMM's 1x1 and dense convs and the Winograd conv —
// against the portable kernels (the oracle), at 1 and 2 threads, a batch
// of 2 among them; and the plan that keeps the conv and its SiLU but
// leaves the Add where it writes the island's output.
//
// Tolerance: |fast - portable| <= 1e-5 * max |portable| + 1e-6 per element.
// The residual added before the activation, or to the wrong pixels, gives
// errors of the output's own size.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "delegates/cpu/fast/gemm.h"
#include "graph/builder.h"
#include "graph/passes/fuse_conv_activation.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using testing::random_tensor;
using testing::ScopedEnv;

using testing::f32;

ValueId conv(GraphBuilder& b, ValueId x, int64_t c, int64_t k, const std::string& name, uint32_t seed) {
  const float bound = 1.f / static_cast<float>(c * k);
  return b.op("Conv",
              {x, b.constant(name + "_w", random_tensor({c, c, k, k}, seed, -bound, bound)),
               b.constant(name + "_b", random_tensor({c}, seed + 1, -0.2f, 0.2f))},
              {{"kernel_shape", Ints{k, k}}, {"pads", Ints{k / 2, k / 2, k / 2, k / 2}}}, name);
}

ValueId pool(GraphBuilder& b, ValueId x, const std::string& name) {
  return b.op("MaxPool", {x}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}, name);
}

// x -> MaxPool (XNNPACK) -> a -> conv k x k -> SiLU | Relu -> Add(a) ->
// MaxPool (XNNPACK).
Graph block(const Shape& x, int64_t k, bool silu, const std::string& name) {
  GraphBuilder b(name);
  const ValueId a = pool(b, b.input("x", f32(x)), "pre");
  const ValueId c = conv(b, a, x[1], k, "conv", 3);
  const ValueId act = silu ? b.op("Mul", {c, b.op("Sigmoid", {c}, {}, "sig")}, {}, "silu") : b.op("Relu", {c}, {}, "relu");
  const ValueId sum = b.op("Add", {act, a}, {}, "add");
  b.output(pool(b, sum, "post"));
  Graph graph = testing::build(b);
  EXPECT_TRUE(fuse_conv_activation(graph).is_ok());  // as the importer: the Relu into the conv
  return graph;
}

struct Kernel {
  const char* name;
  int64_t k;
  const char* pointwise;  // HETSCHED_POINTWISE
  const char* winograd;   // HETSCHED_WINOGRAD
  const char* dense;      // HETSCHED_DENSE_CONV
};

const Kernel kKernels[] = {
    {"gemm1x1", 1, "on", "off", "off"},
    {"dense3x3", 3, "off", "off", "on"},
    {"winograd3x3", 3, "off", "on", "off"},
};

TEST(ResidualAfterActivationTest, AddedAfterTheActivationMatchesPortable) {
  if (std::string(cpu::fast::gemm_isa()) != "avx512f") GTEST_SKIP() << "the fast GEMM's 1x1 rule needs AVX-512";
  for (const Kernel& kernel : kKernels) {
    ScopedEnv pointwise("HETSCHED_POINTWISE", kernel.pointwise);
    ScopedEnv winograd("HETSCHED_WINOGRAD", kernel.winograd);
    ScopedEnv dense("HETSCHED_DENSE_CONV", kernel.dense);
    for (const bool silu : {true, false}) {
      const std::string name = std::string(kernel.name) + (silu ? "_silu" : "_relu");
      // Fast nodes: the conv, its SiLU's two (a Relu is fused) and the Add;
      // segments: the two pools.
      const int fast = silu ? 4 : 2;
      testing::expect_fast_cpu_matches_portable(block({1, 40, 15, 17}, kernel.k, silu, name), {1, 40, 15, 17},
                                                fast, 2, 1e-5f, name);
      testing::expect_fast_cpu_matches_portable(block({2, 24, 9, 13}, kernel.k, silu, name + "_batch2"),
                                                {2, 24, 9, 13}, fast, 2, 1e-5f, name + "_batch2");
    }
  }
}

// x -> MaxPool -> conv -> SiLU -> a -> conv -> SiLU -> Add(a): the Add
// writes the island's output.
Graph output_block(const Shape& x) {
  GraphBuilder b("output_add");
  const ValueId c1 = conv(b, pool(b, b.input("x", f32(x)), "pre"), x[1], 3, "conv1", 3);
  const ValueId a = b.op("Mul", {c1, b.op("Sigmoid", {c1}, {}, "sig1")}, {}, "silu1");
  const ValueId c2 = conv(b, a, x[1], 3, "conv2", 5);
  b.output(b.op("Add", {b.op("Mul", {c2, b.op("Sigmoid", {c2}, {}, "sig2")}, {}, "silu2"), a}, {}, "add"));
  return testing::build(b);
}

// An Add writing the island's output keeps the graph's order, and with it
// in the second conv's group every value before it would too, so that no
// group there ran on NHWC data. The plan drops the Add from its group and
// is made again before judging the others, which then come out as they do
// with no Add taken: the two Winograd convs alone (2 fast nodes) and three
// segments (the pool, the first SiLU, the second SiLU with the Add).
TEST(ResidualAfterActivationTest, AnAddWritingTheOutputStaysInASegment) {
  if (std::string(cpu::fast::gemm_isa()) != "avx512f") GTEST_SKIP() << "the fast GEMM's 1x1 rule needs AVX-512";
  ScopedEnv winograd("HETSCHED_WINOGRAD", "on");
  testing::expect_fast_cpu_matches_portable(output_block({1, 40, 15, 17}), {1, 40, 15, 17}, 2, 3, 1e-5f, "output_add");
}

}  // namespace
}  // namespace hetsched
