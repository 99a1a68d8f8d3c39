// A squeeze-and-excitation block's gate and Mul as one fast op
// (delegates/cpu/fast/se_excite.cc) against the portable kernels (the
// oracle: direct loops, double sums), at 1 and 2 threads: fc1 with a fused
// Relu or a SiLU after it, fc2 with a fused Sigmoid or HardSigmoid, a
// batch of 2 (a gate per image), maps whose scaling and gates whose convs
// are large enough to split over 2 threads; and the rule that leaves the
// block to XNNPACK where its map comes from a segment.
//
// Tolerance: |fast - portable| <= 1e-5 * max |portable| + 1e-6 per element.
// A gate of the wrong image, a channel off or a hidden unit dropped gives
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

ValueId conv(GraphBuilder& b, ValueId x, int64_t cin, int64_t cout, int64_t k, int64_t group, const std::string& name,
             uint32_t seed) {
  return b.op("Conv",
              {x, b.constant(name + "_w", random_tensor({cout, cin / group, k, k}, seed, -0.5f, 0.5f)),
               b.constant(name + "_b", random_tensor({cout}, seed + 1, -0.2f, 0.2f))},
              {{"kernel_shape", Ints{k, k}}, {"pads", Ints{k / 2, k / 2, k / 2, k / 2}}, {"group", group}}, name);
}

struct Block {
  Shape x;
  int64_t channels;
  int64_t hidden;
  bool silu = false;          // fc1's activation: a SiLU, else a Relu
  bool hard_sigmoid = false;  // fc2's: HardSigmoid, else Sigmoid
  bool depthwise = true;      // the map from a depthwise conv (fast), else a dense 3x3 (XNNPACK)
};

// x -> 1x1 -> (depthwise 3x3 -> SiLU | 3x3) -> squeeze (GlobalAveragePool)
// -> fc1 -> act -> fc2 -> gate -> Mul by the map -> 1x1.
Graph se_block(const Block& s, const std::string& name) {
  GraphBuilder b(name);
  const int64_t c = s.channels;
  const ValueId a = conv(b, b.input("x", f32(s.x)), s.x[1], c, 1, 1, "pre", 3);
  ValueId map;
  if (s.depthwise) {
    const ValueId d = conv(b, a, c, c, 3, c, "dw", 5);
    map = b.op("Mul", {d, b.op("Sigmoid", {d}, {}, "sig")}, {}, "silu");
  } else {
    map = b.op("Relu", {conv(b, a, c, c, 3, 1, "mid", 5)}, {}, "relu");
  }
  const ValueId mean = b.op("GlobalAveragePool", {map}, {}, "squeeze");
  const ValueId f = conv(b, mean, c, s.hidden, 1, 1, "fc1", 8);
  const ValueId h = s.silu ? b.op("Mul", {f, b.op("Sigmoid", {f}, {}, "fc1_sig")}, {}, "fc1_silu")
                           : b.op("Relu", {f}, {}, "fc1_relu");
  const ValueId g = conv(b, h, s.hidden, c, 1, 1, "fc2", 10);
  const ValueId gate = s.hard_sigmoid
                           ? b.op("HardSigmoid", {g}, {{"alpha", 0.2f}, {"beta", 0.5f}}, "gate")
                           : b.op("Sigmoid", {g}, {}, "gate");
  b.output(conv(b, b.op("Mul", {map, gate}, {}, "excite"), c, 5, 1, 1, "post", 12));
  Graph graph = testing::build(b);
  // As the importer does: fc1's Relu and fc2's gate go into the convs.
  EXPECT_TRUE(fuse_conv_activation(graph).is_ok());
  return graph;
}

// Fast nodes: the depthwise group's 4 (conv, SiLU, squeeze) and the
// gate's fc1, fc2 (their Relu and gate fused at import) and Mul, with a
// SiLU's two more; segments: pre and post.
void expect_agrees(const Block& s, const std::string& name) {
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  ScopedEnv depthwise("HETSCHED_DEPTHWISE", nullptr);
  testing::expect_fast_cpu_matches_portable(se_block(s, name), s.x, 4 + (s.silu ? 5 : 3), 2, 1e-5f, name);
}

TEST(SeExciteTest, GateAndMulMatchPortable) {
  if (std::string(cpu::fast::gemm_isa()) == "plain") GTEST_SKIP() << "the depthwise kernel needs AVX2";
  expect_agrees({{1, 3, 9, 11}, 40, 10}, "se_relu_sigmoid");
  expect_agrees({{2, 3, 7, 5}, 24, 6, true, true}, "se_silu_hard_batch2");
  // 200 x 28 x 28: the scaling over 2 threads; 512 -> 128 -> 512: the
  // gate's convs too, a task per 16 outputs.
  expect_agrees({{1, 3, 28, 28}, 200, 50, true}, "se_wide_map");
  expect_agrees({{2, 3, 7, 7}, 512, 128, false, true}, "se_wide_gate");
}

// A map from an XNNPACK segment (a dense 3x3): the block stays in it.
TEST(SeExciteTest, MapFromASegmentStaysOnXnnpack) {
  ScopedEnv off("HETSCHED_SE_EXCITE", nullptr);
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  ScopedEnv winograd("HETSCHED_WINOGRAD", "off");
  ScopedEnv dense("HETSCHED_DENSE_CONV", "off");
  const Block s{{1, 3, 9, 11}, 40, 10, false, false, false};
  testing::expect_fast_cpu_matches_portable(se_block(s, "se_after_segment"), s.x, 0, 1, 1e-5f, "se_after_segment");
}

// HETSCHED_SE_EXCITE=off leaves every block to XNNPACK (A/B runs): the
// depthwise group's 4 nodes alone, the gate and Mul in one segment with
// post.
TEST(SeExciteTest, SwitchedOffStaysOnXnnpack) {
  if (std::string(cpu::fast::gemm_isa()) == "plain") GTEST_SKIP() << "the depthwise kernel needs AVX2";
  ScopedEnv off("HETSCHED_SE_EXCITE", "off");
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  ScopedEnv depthwise("HETSCHED_DEPTHWISE", nullptr);
  const Block s{{1, 3, 9, 11}, 40, 10};
  testing::expect_fast_cpu_matches_portable(se_block(s, "se_off"), s.x, 4, 2, 1e-5f, "se_off");
}

}  // namespace
}  // namespace hetsched
