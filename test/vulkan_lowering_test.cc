// The Vulkan delegate's lowering without a GPU: which nodes fuse into one
// dispatch, which buffers alias, where barriers go, and the blob envelope.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "delegates/vulkan/island_blob.h"
#include "delegates/vulkan/lowering.h"
#include "graph/builder.h"
#include "test/test_util.h"

namespace hetsched::vulkan {
namespace {

using testing::random_tensor;

using hetsched::testing::build;

LoweredIsland lower(const Graph& g) {
  Result<LoweredIsland> l = lower_island(g);
  EXPECT_TRUE(l.is_ok()) << l.status().message();
  return std::move(l).value();
}

std::vector<const Step*> dispatches(const LoweredIsland& l) {
  std::vector<const Step*> out;
  for (const Step& s : l.steps)
    if (s.kind == Step::Kind::kDispatch) out.push_back(&s);
  return out;
}

TEST(VulkanLoweringTest, ConvBatchNormReluFuseIntoOneConvDispatch) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 8, 8}});
  const ValueId w = b.constant("w", random_tensor({4, 3, 3, 3}, 1));
  const ValueId c = b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
  std::vector<ValueId> bn_params;
  for (int i = 0; i < 4; ++i)
    bn_params.push_back(b.constant("bn" + std::to_string(i), random_tensor({4}, 2 + i, 0.5f, 1.5f)));
  const ValueId bn = b.op("BatchNormalization", {c, bn_params[0], bn_params[1], bn_params[2], bn_params[3]}, {}, "bn");
  b.output(b.op("Relu", {bn}, {}, "relu"));
  const LoweredIsland l = lower(build(b));
  ASSERT_EQ(l.steps.size(), 1u);
  EXPECT_EQ(l.steps[0].kernel, Kernel::kConv2d);
  EXPECT_EQ(l.steps[0].label, "conv+bn+relu");
}

TEST(VulkanLoweringTest, ElementwiseChainWithBroadcastOperandsIsOneDispatch) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 4, 5}});
  const ValueId y = b.input("y", {DType::kFloat32, {3, 1, 1}});
  const ValueId s = b.constant_f32("s", {}, {2.f});
  const ValueId a = b.op("Add", {x, y}, {}, "add");
  const ValueId m = b.op("Mul", {s, a}, {}, "mul");
  const ValueId t = b.op("Tanh", {m}, {}, "tanh");
  b.output(b.op("Sub", {x, t}, {}, "sub"));
  const LoweredIsland l = lower(build(b));
  ASSERT_EQ(l.steps.size(), 1u);
  EXPECT_EQ(l.steps[0].label, "add+mul+tanh+sub");
  // x is bound once although the chain reads it twice.
  EXPECT_EQ(l.steps[0].reads.size(), 2u);
}

TEST(VulkanLoweringTest, ValueReadTwiceEndsTheChain) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {16}});
  const ValueId r = b.op("Relu", {x}, {}, "relu");
  b.output(b.op("Mul", {r, r}, {}, "square"));
  const LoweredIsland l = lower(build(b));
  ASSERT_EQ(l.steps.size(), 2u);
  EXPECT_TRUE(l.steps[1].barrier_before);
}

TEST(VulkanLoweringTest, IslandOutputIsNotFusedAway) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {16}});
  const ValueId r = b.op("Relu", {x}, {}, "relu");
  b.output(r);
  b.output(b.op("Neg", {r}, {}, "neg"));
  const LoweredIsland l = lower(build(b));
  EXPECT_EQ(dispatches(l).size(), 2u);
  EXPECT_EQ(l.buffers[l.output_buffers[0]].role, BufferPlan::Role::kOutput);
}

TEST(VulkanLoweringTest, ReshapeAliasesItsInputAndCopiesOnlyAsOutput) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 6}});
  const ValueId shape = b.constant_i64("shape", {2}, {3, 4});
  const ValueId r = b.op("Relu", {x}, {}, "relu");
  const ValueId reshaped = b.op("Reshape", {r, shape}, {}, "reshape");
  const ValueId n = b.op("Neg", {reshaped}, {}, "neg");
  b.output(b.op("Flatten", {n}, {}, "flatten"));
  const LoweredIsland l = lower(build(b));
  ASSERT_EQ(l.steps.size(), 3u);
  // neg reads relu's buffer itself; the flattened output is a copy.
  EXPECT_EQ(l.steps[1].reads[0], l.steps[0].writes[0]);
  EXPECT_EQ(l.steps[2].kind, Step::Kind::kCopy);
  EXPECT_EQ(l.steps[2].writes[0], l.output_buffers[0]);
}

TEST(VulkanLoweringTest, PassThroughOutputGetsItsOwnBufferAndCopy) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {4}});
  b.output(x);
  b.output(b.op("Abs", {x}));
  const LoweredIsland l = lower(build(b));
  ASSERT_EQ(l.output_buffers.size(), 2u);
  EXPECT_NE(l.output_buffers[0], l.input_buffers[0]);
  EXPECT_EQ(l.steps.back().kind, Step::Kind::kCopy);
}

TEST(VulkanLoweringTest, ConcatPiecesShareOneWriteGroupWithoutBarriers) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 3}});
  const ValueId y = b.input("y", {DType::kFloat32, {2, 5}});
  const ValueId c = b.op("Concat", {x, y, x}, {{"axis", int64_t{1}}}, "concat");
  b.output(b.op("Relu", {c}, {}, "relu"));
  const LoweredIsland l = lower(build(b));
  ASSERT_EQ(l.steps.size(), 4u);
  EXPECT_FALSE(l.steps[1].barrier_before);
  EXPECT_FALSE(l.steps[2].barrier_before);
  EXPECT_TRUE(l.steps[3].barrier_before);
}

TEST(VulkanLoweringTest, IndependentDispatchesShareABarrierFreeRun) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {8}});
  const ValueId p = b.op("Exp", {x}, {}, "exp");
  const ValueId q = b.op("Sin", {x}, {}, "sin");
  const ValueId r = b.op("Cos", {x}, {}, "cos");
  b.output(b.op("Concat", {p, q, r}, {{"axis", int64_t{0}}}, "concat"));
  const LoweredIsland l = lower(build(b));
  ASSERT_EQ(l.steps.size(), 6u);
  EXPECT_FALSE(l.steps[1].barrier_before);
  EXPECT_FALSE(l.steps[2].barrier_before);
  EXPECT_TRUE(l.steps[3].barrier_before);
}

// A linear layer (constant 2-D weights, a bias per column) runs on the conv
// kernel as a 1x1 conv over the rows: its tiling and split-K serve a
// classifier's single row.
TEST(VulkanLoweringTest, MatMulAddReluFuseIntoOneLinearLayer) {
  GraphBuilder b("g");
  const ValueId a = b.input("a", {DType::kFloat32, {2, 5, 7}});
  const ValueId w = b.constant("w", random_tensor({7, 3}, 3));
  const ValueId bias = b.constant("bias", random_tensor({3}, 4));
  const ValueId m = b.op("MatMul", {a, w}, {}, "mm");
  const ValueId s = b.op("Add", {bias, m}, {}, "add");
  b.output(b.op("Relu", {s}, {}, "relu"));
  const LoweredIsland l = lower(build(b));
  ASSERT_EQ(l.steps.size(), 1u);
  // A linear layer this small runs pointwise_conv.comp (a 1x1 conv over its
  // rows; larger ones the shared conv kernel, as before session 14).
  EXPECT_EQ(l.steps[0].kernel, Kernel::kPointwiseConv);
  EXPECT_EQ(l.steps[0].label, "mm+add+relu");
}

TEST(VulkanLoweringTest, MatMulOfTwoRunTimeOperandsAndGemmWithAMatrixCStayOnTheGemmKernel) {
  {
    GraphBuilder b("g");
    b.output(b.op("MatMul", {b.input("a", {DType::kFloat32, {5, 7}}), b.input("w", {DType::kFloat32, {7, 3}})}));
    const LoweredIsland l = lower(build(b));
    ASSERT_EQ(l.steps.size(), 1u);
    EXPECT_EQ(l.steps[0].kernel, Kernel::kGemm);
  }
  {
    GraphBuilder b("g");
    b.output(b.op("Gemm", {b.input("a", {DType::kFloat32, {5, 7}}), b.constant("w", random_tensor({7, 3}, 3)),
                           b.constant("c", random_tensor({5, 3}, 4))}));
    const LoweredIsland l = lower(build(b));
    ASSERT_EQ(l.steps.size(), 1u);
    EXPECT_EQ(l.steps[0].kernel, Kernel::kGemm);
  }
}

TEST(VulkanLoweringTest, ConvSigmoidMulIsOneConvWithASwishEpilogue) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 6, 6}});
  const ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({8, 4, 3, 3}, 5))}, {}, "conv");
  b.output(b.op("Mul", {y, b.op("Sigmoid", {y}, {}, "sig")}, {}, "mul"));
  const LoweredIsland l = lower(build(b));
  ASSERT_EQ(l.steps.size(), 1u);
  EXPECT_EQ(l.steps[0].kernel, Kernel::kConv2d);
  EXPECT_EQ(l.steps[0].label, "conv+sig+mul");
}

TEST(VulkanLoweringTest, DepthwiseConvUsesTheDirectKernel) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 6, 6}});
  const ValueId w = b.constant("w", random_tensor({8, 1, 3, 3}, 5));
  b.output(b.op("Conv", {x, w}, {{"group", int64_t{4}}}));
  const LoweredIsland l = lower(build(b));
  ASSERT_EQ(l.steps.size(), 1u);
  EXPECT_EQ(l.steps[0].kernel, Kernel::kDepthwiseConv2d);
}

TEST(MatmulLayoutTest, MergesBroadcastBatchDimsIntoThree) {
  Result<MatmulLayout> l = matmul_layout({2, 3, 4, 5, 6}, {6, 7});
  ASSERT_TRUE(l.is_ok()) << l.status().message();
  EXPECT_EQ(l->batch_count(), 24);
  EXPECT_EQ(l->batch[2], 24);  // contiguous in A, broadcast in B: one dim
  EXPECT_EQ(l->a_batch_stride[2], 30);
  EXPECT_EQ(l->b_batch_stride[2], 0);

  // Alternating broadcast dims cannot merge: 4 dims.
  Result<MatmulLayout> bad = matmul_layout({2, 1, 2, 1, 3, 3}, {1, 2, 1, 2, 3, 3});
  EXPECT_EQ(bad.status().code(), StatusCode::kUnsupported);
}

TEST(VulkanBlobTest, RoundTripsTheGraph) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {4}});
  b.output(b.op("Relu", {x}, {}, "relu"));
  const Graph g = build(b);
  const Blob blob = encode_island_blob(g);
  Result<Graph> back = decode_island_blob(blob);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  ASSERT_EQ(back->num_nodes(), 1u);
  EXPECT_EQ(back->node(0).name, "relu");
  EXPECT_EQ(back->value(back->outputs()[0]).type, (TensorType{DType::kFloat32, {4}}));
}

TEST(VulkanBlobTest, RefusesCorruptTruncatedForeignAndNewerBlobs) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {4}});
  b.output(b.op("Relu", {x}));
  const Blob blob = encode_island_blob(build(b));

  Blob flipped = blob;
  flipped[blob.size() / 2 + 12] ^= 0x40;
  Result<Graph> r = decode_island_blob(flipped);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("checksum mismatch"), std::string::npos) << r.status().message();

  r = decode_island_blob(std::span(blob).first(blob.size() - 3));
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos) << r.status().message();

  r = decode_island_blob(std::span(blob).first(10));
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);

  Blob foreign = blob;
  foreign[0] = 'X';
  r = decode_island_blob(foreign);
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("bad magic"), std::string::npos) << r.status().message();

  Blob newer = blob;
  newer[4] = static_cast<uint8_t>(kVulkanBlobVersion + 1);
  r = decode_island_blob(newer);
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
}

TEST(Crc32Test, MatchesTheStandardCheckValue) {
  // The CRC-32 check value of "123456789" (zlib.crc32(b"123456789")).
  const std::string text = "123456789";
  EXPECT_EQ(crc32(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size())), 0xCBF43926u);
}

}  // namespace
}  // namespace hetsched::vulkan
