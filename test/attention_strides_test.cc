// Attention's batched MatMuls reading and writing through the layout ops
// around them (delegates/cpu/fast/attention_plan.h, strided_view.h): the
// QKV split (Slice, or Reshape/Transpose/Gather), the head split and
// transposes, the scale, and the heads moved back after P.V run no step,
// and the island still computes what the portable kernels (the oracle,
// every layout op a copy) compute. Also the views around the projections:
// a Transpose of size-1 axes runs no step, and the out projection's
// residual Add behind a Reshape and such a Transpose joins its GEMM.
//
// Tolerance: 1e-4 relative + 1e-5 of the output's largest magnitude (the
// GEMMs sum in another order with FMA, and a residual cancels some sums to
// near 0; a scale folded into B rounds differently from a Div).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "delegates/cpu/fast/attention_plan.h"
#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/fast/strided_view.h"
#include "graph/builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using testing::random_tensor;
using namespace cpu::fast;

using testing::f32;
Tensor scalar(float v) { return Tensor::from_vector<float>(DType::kFloat32, {}, {v}); }
bool fast_gemm() { return std::string(gemm_isa()) != "plain"; }

// The island on the xnnpack engine (1 and 2 threads, two runs each, so a
// second run over the arena's reused bytes is checked too) against the
// portable engine.
void expect_matches_portable(const Graph& graph, const std::vector<Tensor>& inputs, const std::string& label) {
  auto want = testing::run_cpu_island(graph, inputs, {{"engine", "portable"}, {"threads", "1"}});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  for (int threads : {1, 2}) {
    auto got = testing::run_cpu_island(graph, inputs, {{"engine", "xnnpack"}, {"threads", std::to_string(threads)}}, 2);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got->outputs.size(), want->outputs.size());
    for (size_t o = 0; o < got->outputs.size(); ++o) {
      const Tensor& g = got->outputs[o];
      const Tensor& w = want->outputs[o];
      ASSERT_EQ(g.type(), w.type());
      float scale = 0;
      for (int64_t i = 0; i < w.num_elements(); ++i) scale = std::max(scale, std::abs(w.data<float>()[i]));
      int reported = 0;
      for (int64_t i = 0; i < g.num_elements() && reported < 5; ++i) {
        const float a = g.data<float>()[i], e = w.data<float>()[i];
        if (std::abs(a - e) <= 1e-5f * scale + 1e-4f * std::abs(e)) continue;
        ADD_FAILURE() << label << ", " << threads << " threads, output " << o << " element " << i << ": " << a
                      << ", portable " << e;
        ++reported;
      }
    }
  }
}

std::set<std::string> names(const Graph& graph, const std::set<NodeId>& nodes) {
  std::set<std::string> out;
  for (NodeId n : nodes) out.insert(graph.node(n).name);
  return out;
}

struct Dims {
  int64_t seq, heads, head_dim;
  int64_t d() const { return heads * head_dim; }
};

// PyTorch 1.13's nn.MultiheadAttention export (BERT's self-attention at
// opset 17): [1, S, d] -> Transpose -> QKV projection -> three Slices ->
// Reshape [S, H, dh] -> Transpose (K: to [H, dh, S]) -> Q / sqrt(dh) ->
// Q.K^T -> Softmax -> .V -> Transpose -> Reshape [S, d] -> out projection
// (Gemm, transB) -> Reshape [S, 1, d] -> Transpose -> + x.
Graph torch_mha(const Dims& dims, bool scale_after = false) {
  const int64_t s = dims.seq, h = dims.heads, dh = dims.head_dim, d = dims.d();
  GraphBuilder b("mha");
  const ValueId x = b.input("x", f32({1, s, d}));
  const ValueId xt = b.op("Transpose", {x}, {{"perm", Ints{1, 0, 2}}}, "Transpose");
  const ValueId qkv = b.op("Add", {b.constant("in_bias", random_tensor({3 * d}, 3)),
                                   b.op("MatMul", {xt, b.constant("w_in", random_tensor({d, 3 * d}, 2, -0.2f, 0.2f))},
                                        {}, "in_proj")},
                           {}, "in_bias_add");
  const ValueId head_shape = b.constant_i64("head_shape", {3}, {s, h, dh});
  std::vector<ValueId> parts;
  for (int64_t i = 0; i < 3; ++i) {
    const ValueId sliced = b.op("Slice",
                                {qkv, b.constant_i64("start" + std::to_string(i), {1}, {i * d}),
                                 b.constant_i64("end" + std::to_string(i), {1}, {(i + 1) * d}),
                                 b.constant_i64("axis" + std::to_string(i), {1}, {-1})},
                                {}, "Slice_" + std::to_string(i));
    parts.push_back(b.op("Reshape", {sliced, head_shape}, {}, "Reshape_" + std::to_string(i)));
  }
  ValueId q = b.op("Transpose", {parts[0]}, {{"perm", Ints{1, 0, 2}}}, "Transpose_q");
  const ValueId root_dh = b.constant("root_dh", scalar(std::sqrt(static_cast<float>(dh))));
  if (!scale_after) q = b.op("Div", {q, root_dh}, {}, "scale");
  const ValueId kt = b.op("Transpose", {parts[1]}, {{"perm", Ints{1, 2, 0}}}, "Transpose_k");
  const ValueId v = b.op("Transpose", {parts[2]}, {{"perm", Ints{1, 0, 2}}}, "Transpose_v");
  ValueId scores = b.op("MatMul", {q, kt}, {}, "QK");
  if (scale_after) scores = b.op("Div", {scores, root_dh}, {}, "scale");
  const ValueId p = b.op("Softmax", {scores}, {{"axis", int64_t{-1}}}, "Softmax");
  const ValueId heads = b.op("MatMul", {p, v}, {}, "PV");
  const ValueId merged = b.op("Reshape", {b.op("Transpose", {heads}, {{"perm", Ints{1, 0, 2}}}, "Transpose_out"),
                                          b.constant_i64("merged_shape", {2}, {s, d})},
                              {}, "Reshape_out");
  const ValueId proj = b.op("Gemm",
                            {merged, b.constant("w_out", random_tensor({d, d}, 4, -0.2f, 0.2f)),
                             b.constant("out_bias", random_tensor({d}, 5))},
                            {{"transB", int64_t{1}}}, "out_proj");
  const ValueId back = b.op("Transpose", {b.op("Reshape", {proj, b.constant_i64("seq_shape", {3}, {s, 1, d})}, {},
                                               "Reshape_back")},
                            {{"perm", Ints{1, 0, 2}}}, "Transpose_back");
  b.output(b.op("Add", {x, back}, {}, "residual"));
  auto g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

TEST(AttentionStridesTest, TorchMultiheadAttentionFoldsItsLayoutOps) {
  if (!fast_gemm()) GTEST_SKIP() << "no fast GEMM on this CPU: the portable kernels run attention";
  const Graph g = torch_mha({16, 2, 8});
  const AttentionPlan plan = plan_attention_strides(g, {});
  EXPECT_EQ(names(g, plan.elided), (std::set<std::string>{"Slice_0", "Slice_1", "Slice_2", "Reshape_0", "Reshape_1",
                                                           "Reshape_2", "Transpose_q", "scale", "Transpose_k",
                                                           "Transpose_v"}));
  ASSERT_EQ(plan.matmuls.size(), 2u);
  const StridedMatMul& qk = plan.matmuls[0];
  const StridedMatMul& pv = plan.matmuls[1];
  // Q and K read from the projection's output: Q by rows (stride 3d), K
  // by columns (B packed from K's rows), with 1/sqrt(dh) in Q's scale.
  const ValueId qkv = g.find_value("in_bias_add_out");
  EXPECT_EQ(qk.a.root, qkv);
  EXPECT_EQ(qk.b.root, qkv);
  EXPECT_EQ(qk.a.strides, (Ints{8, 48, 1}));
  EXPECT_EQ(qk.a.offset, 0);
  EXPECT_EQ(qk.b.strides, (Ints{8, 1, 48}));
  EXPECT_EQ(qk.b.offset, 16);
  EXPECT_FLOAT_EQ(qk.a.scale * qk.b.scale * qk.c.scale, 1.f / std::sqrt(8.f));
  EXPECT_TRUE(qk.out_chain.empty());
  // P.V writes its heads straight into [S, d] for the out projection.
  EXPECT_EQ(pv.b.root, qkv);
  EXPECT_EQ(pv.b.offset, 32);
  EXPECT_EQ(pv.output, g.find_value("Reshape_out_out"));
  EXPECT_EQ(pv.c.strides, (Ints{8, 16, 1}));
  EXPECT_EQ(pv.out_chain.size(), 2u);
}

TEST(AttentionStridesTest, TorchMultiheadAttentionMatchesPortable) {
  // Head counts and sizes off the GEMM's tiles; BERT-base's 12 x 64 heads
  // at a short sequence.
  for (const Dims& dims : std::vector<Dims>{{16, 2, 8}, {17, 3, 12}, {64, 4, 32}, {33, 12, 64}})
    for (bool scale_after : {false, true}) {
      const Graph g = torch_mha(dims, scale_after);
      expect_matches_portable(g, {random_tensor({1, dims.seq, dims.d()}, 1)},
                              "S " + std::to_string(dims.seq) + " H " + std::to_string(dims.heads) + " dh " +
                                  std::to_string(dims.head_dim) + (scale_after ? ", scale after QK" : ""));
    }
}

TEST(AttentionStridesTest, TorchMultiheadAttentionRunsFewerSteps) {
  if (!fast_gemm()) GTEST_SKIP() << "no fast GEMM on this CPU";
  // Every node runs on a fast kernel or is read through: the projections
  // (with the residual behind a Reshape and a size-1 Transpose), the two
  // MatMuls with their layout ops and Softmax; no XNNPACK segment.
  const Graph g = torch_mha({16, 2, 8});
  auto run = testing::run_cpu_island(g, {random_tensor({1, 16, 16}, 1)}, {{"engine", "xnnpack"}, {"threads", "1"}});
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  EXPECT_EQ(run->coverage.xnnpack_segments, 0);
  // The first Transpose is a view (a portable op that runs no step).
  EXPECT_EQ(run->coverage.portable_ops, static_cast<int>(g.num_nodes()));
  EXPECT_EQ(run->coverage.fast_ops, static_cast<int>(g.num_nodes()) - 1);
}

// torch.onnx.dynamo_export's form (encoder_op18): the projection's output
// reshaped to [S, 1, 3, d], unsqueezed, transposed to [3, S, 1, 1, d],
// squeezed, and each of Q, K, V a Gather of one index; sqrt(scale) on Q
// and on K^T (a Mul with the scalar first for K); the heads put back by a
// rank-4 Transpose.
Graph dynamo_mha(const Dims& dims) {
  const int64_t s = dims.seq, h = dims.heads, dh = dims.head_dim, d = dims.d();
  GraphBuilder b("mha18");
  const ValueId x = b.input("x", f32({s, 1, 3 * d}));
  const ValueId split = b.op(
      "Squeeze",
      {b.op("Transpose",
            {b.op("Unsqueeze", {b.op("Reshape", {x, b.constant_i64("s4", {4}, {s, 1, 3, d})}),
                                b.constant_i64("ax0", {1}, {0})})},
            {{"perm", Ints{3, 1, 2, 0, 4}}}),
       b.constant_i64("ax3", {1}, {3})},
      {}, "squeeze");
  const ValueId root_scale = b.constant("root_scale", scalar(1.f / std::sqrt(std::sqrt(static_cast<float>(dh)))));
  const ValueId head_shape = b.constant_i64("s3", {3}, {s, h, dh});
  std::vector<ValueId> heads;
  for (int64_t i = 0; i < 3; ++i) {
    const ValueId sel = b.op("Gather", {split, b.constant_i64("index" + std::to_string(i), {}, {i})},
                             {{"axis", int64_t{0}}}, "select_" + std::to_string(i));
    const ValueId t = b.op("Transpose", {b.op("Reshape", {sel, head_shape})},
                           {{"perm", Ints{1, 0, 2}}});
    heads.push_back(t);
  }
  const ValueId q = b.op("Mul", {b.op("Reshape", {heads[0], b.constant_i64("q4", {4}, {1, h, s, dh})}), root_scale});
  const ValueId k = b.op("Mul", {root_scale, b.op("Reshape", {b.op("Transpose", {heads[1]}, {{"perm", Ints{0, 2, 1}}}),
                                                               b.constant_i64("k4", {4}, {1, h, dh, s})})});
  const ValueId v = b.op("Reshape", {heads[2], b.constant_i64("v4", {4}, {1, h, s, dh})});
  const ValueId p = b.op("Softmax", {b.op("MatMul", {q, k})}, {{"axis", int64_t{-1}}});
  const ValueId o = b.op("Transpose", {b.op("MatMul", {p, v}, {}, "PV")}, {{"perm", Ints{2, 0, 1, 3}}});
  b.output(b.op("Reshape", {o, b.constant_i64("out2", {2}, {s, d})}, {}, "merged"));
  auto g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

TEST(AttentionStridesTest, DynamoExportFoldsItsLayoutOpsAndMatchesPortable) {
  for (const Dims& dims : std::vector<Dims>{{16, 2, 8}, {64, 4, 32}, {21, 5, 6}}) {
    const Graph g = dynamo_mha(dims);
    if (fast_gemm()) {
      const AttentionPlan plan = plan_attention_strides(g, {});
      // Every layout node before the MatMuls (19), and after P.V its
      // Transpose and Reshape, which end at the graph output.
      EXPECT_EQ(plan.elided.size(), 19u);
      ASSERT_EQ(plan.matmuls.size(), 2u);
      EXPECT_EQ(plan.matmuls[1].out_chain.size(), 2u);
      EXPECT_EQ(plan.matmuls[1].output, g.outputs()[0]);
    }
    expect_matches_portable(g, {random_tensor({dims.seq, 1, 3 * dims.d()}, 1)},
                            "dynamo S " + std::to_string(dims.seq));
  }
}

// The GPT block of scripts/models/export_transformers.py (GPT-2's form):
// the QKV projection's output Split three ways along its last axis, heads
// by Reshape and Transpose, scores divided by sqrt(dh) and causally masked
// (Where) before Softmax.
Graph gpt_attention(const Dims& dims) {
  const int64_t s = dims.seq, h = dims.heads, dh = dims.head_dim, d = dims.d();
  GraphBuilder b("gpt");
  const ValueId x = b.input("x", f32({1, s, 3 * d}));
  const std::vector<ValueId> qkv =
      b.op_multi("Split", {x, b.constant_i64("sizes", {3}, {d, d, d})}, 3, {{"axis", int64_t{-1}}}, "Split");
  const ValueId heads_shape = b.constant_i64("heads", {4}, {1, s, h, dh});
  std::vector<ValueId> heads;
  for (int i = 0; i < 3; ++i) heads.push_back(b.op("Reshape", {qkv[static_cast<size_t>(i)], heads_shape}));
  const ValueId q = b.op("Transpose", {heads[0]}, {{"perm", Ints{0, 2, 1, 3}}});
  const ValueId kt = b.op("Transpose", {heads[1]}, {{"perm", Ints{0, 2, 3, 1}}});
  const ValueId v = b.op("Transpose", {heads[2]}, {{"perm", Ints{0, 2, 1, 3}}});
  const ValueId scores =
      b.op("Div", {b.op("MatMul", {q, kt}, {}, "QK"), b.constant("root_dh", scalar(std::sqrt(static_cast<float>(dh))))},
           {}, "scale");
  Tensor mask(TensorType{DType::kBool, {s, s}});
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < s; ++j) mask.data<uint8_t>()[i * s + j] = j > i;
  const ValueId masked = b.op("Where", {b.constant("mask", mask), b.constant("minus", scalar(-1e9f)), scores});
  const ValueId p = b.op("Softmax", {masked}, {{"axis", int64_t{-1}}});
  const ValueId o = b.op("Transpose", {b.op("MatMul", {p, v}, {}, "PV")}, {{"perm", Ints{0, 2, 1, 3}}});
  b.output(b.op("Reshape", {o, b.constant_i64("merged", {3}, {1, s, d})}));
  auto g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

TEST(AttentionStridesTest, GptSplitFoldsAndMatchesPortable) {
  for (const Dims& dims : std::vector<Dims>{{16, 2, 8}, {40, 4, 16}, {19, 3, 20}}) {
    const Graph g = gpt_attention(dims);
    if (fast_gemm()) {
      const AttentionPlan plan = plan_attention_strides(g, {});
      // Split, three Reshapes and three Transposes; the scale after Q.K^T
      // (read by Where) and the Transpose and Reshape after P.V go with
      // their MatMuls.
      EXPECT_EQ(plan.elided.size(), 7u);
      EXPECT_TRUE(plan.elided.count(g.find_node("Split")));
      ASSERT_EQ(plan.matmuls.size(), 2u);
      EXPECT_EQ(plan.matmuls[0].out_chain.size(), 1u);
      EXPECT_EQ(plan.matmuls[1].b.offset, 2 * dims.d());
    }
    expect_matches_portable(g, {random_tensor({1, dims.seq, 3 * dims.d()}, 1)}, "gpt S " + std::to_string(dims.seq));
  }
}

// Scores with an additive mask before Softmax: a constant causal mask
// [S, S] broadcast over the heads (encdec's decoder), or, HF BERT's form, a
// run-time padding mask [1, 1, 1, S] broadcast over heads and queries. The
// Add joins Q.K^T's epilogue.
Graph masked_attention(const Dims& dims, bool runtime_mask) {
  const int64_t s = dims.seq, h = dims.heads, dh = dims.head_dim;
  GraphBuilder b("masked");
  const ValueId q = b.input("q", f32({1, h, s, dh}));
  const ValueId k = b.input("k", f32({1, h, s, dh}));
  const ValueId v = b.input("v", f32({1, h, s, dh}));
  ValueId mask;
  if (runtime_mask) {
    mask = b.op("Mul", {b.input("pad", f32({1, 1, 1, s})), b.constant("big", scalar(-1e4f))}, {}, "mask");
  } else {
    Tensor causal(f32({s, s}));
    for (int64_t i = 0; i < s; ++i)
      for (int64_t j = 0; j < s; ++j) causal.data<float>()[i * s + j] = j > i ? -1e9f : 0.f;
    mask = b.constant("causal", causal);
  }
  const ValueId kt = b.op("Transpose", {k}, {{"perm", Ints{0, 1, 3, 2}}}, "kt");
  const ValueId scores = b.op("Mul", {b.op("MatMul", {q, kt}, {}, "QK"), b.constant("c", scalar(0.25f))}, {}, "scale");
  const ValueId p = b.op("Softmax", {b.op("Add", {scores, mask}, {}, "mask_add")}, {{"axis", int64_t{-1}}});
  b.output(b.op("MatMul", {p, v}, {}, "PV"));
  auto g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

TEST(AttentionStridesTest, MaskAddJoinsTheScoresEpilogue) {
  for (const Dims& dims : std::vector<Dims>{{16, 2, 8}, {37, 3, 24}})
    for (bool runtime_mask : {false, true}) {
      const Graph g = masked_attention(dims, runtime_mask);
      if (fast_gemm()) {
        const AttentionPlan plan = plan_attention_strides(g, {});
        ASSERT_EQ(plan.matmuls.size(), 1u);
        EXPECT_EQ(plan.matmuls[0].mask_add, g.find_node("mask_add"));
        EXPECT_EQ(plan.matmuls[0].output, g.find_value("mask_add_out"));
      }
      std::vector<Tensor> inputs;
      for (uint32_t i = 0; i < 3; ++i) inputs.push_back(random_tensor({1, dims.heads, dims.seq, dims.head_dim}, i + 1));
      if (runtime_mask) {
        Tensor pad(f32({1, 1, 1, dims.seq}));
        for (int64_t j = 0; j < dims.seq; ++j) pad.data<float>()[j] = j % 3 == 2 ? 1.f : 0.f;
        inputs.push_back(pad);
      }
      expect_matches_portable(g, inputs, std::string(runtime_mask ? "padding" : "causal") + " mask, S " +
                                             std::to_string(dims.seq));
    }
}

TEST(AttentionStridesTest, LayoutOpWithAnotherReaderStillRuns) {
  // K^T is also a graph output and V's Transpose also feeds an Add: both
  // must exist, so they run; Q's chain is still read through.
  if (!fast_gemm()) GTEST_SKIP() << "no fast GEMM on this CPU";
  GraphBuilder b("shared");
  const ValueId x = b.input("x", f32({12, 3, 16}));
  const ValueId q = b.op("Mul", {b.op("Transpose", {x}, {{"perm", Ints{1, 0, 2}}}, "q"), b.constant("c", scalar(0.5f))},
                         {}, "q_scale");
  const ValueId kt = b.op("Transpose", {x}, {{"perm", Ints{1, 2, 0}}}, "kt");
  const ValueId v = b.op("Transpose", {x}, {{"perm", Ints{1, 0, 2}}}, "v");
  const ValueId p = b.op("Softmax", {b.op("MatMul", {q, kt})}, {{"axis", int64_t{-1}}});
  b.output(b.op("MatMul", {p, v}));
  b.output(kt);
  b.output(b.op("Add", {v, v}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const AttentionPlan plan = plan_attention_strides(*g, {});
  EXPECT_EQ(names(*g, plan.elided), (std::set<std::string>{"q", "q_scale"}));
  expect_matches_portable(*g, {random_tensor({12, 3, 16}, 1)}, "shared");
}

TEST(AttentionStridesTest, TransposedAIsCopiedFirst) {
  // A = X^T reads A's rows across X's columns: the kernel reads A's rows
  // in place, so that Transpose runs; B = X^T is packed from X's rows.
  if (!fast_gemm()) GTEST_SKIP() << "no fast GEMM on this CPU";
  GraphBuilder b("at");
  const ValueId x = b.input("x", f32({2, 20, 24}));
  const ValueId y = b.input("y", f32({2, 24, 20}));
  const ValueId xt = b.op("Transpose", {x}, {{"perm", Ints{0, 2, 1}}}, "xt");
  const ValueId yt = b.op("Transpose", {y}, {{"perm", Ints{0, 2, 1}}}, "yt");
  b.output(b.op("MatMul", {xt, yt}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const AttentionPlan plan = plan_attention_strides(*g, {});
  EXPECT_EQ(names(*g, plan.elided), (std::set<std::string>{"yt"}));
  expect_matches_portable(*g, {random_tensor({2, 20, 24}, 1), random_tensor({2, 24, 20}, 2)}, "transposed A");
}

TEST(AttentionStridesTest, BroadcastBatchesAndUnitDims) {
  // B shared by every batch of A (broadcast), read transposed through a
  // Reshape that adds unit dims; a MatMul of one row and one column.
  for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{{{3, 4, 5, 6}, {7, 6}}, {{2, 1, 6}, {2, 1, 6}}}) {
    GraphBuilder b("bcast");
    const ValueId x = b.input("x", f32(sa));
    const ValueId y = b.input("y", f32(sb));
    const Shape r = sb;
    const ValueId yt = b.op("Transpose", {y}, {{"perm", r.size() == 2 ? Ints{1, 0} : Ints{0, 2, 1}}}, "yt");
    b.output(b.op("MatMul", {x, b.op("Mul", {yt, b.constant("c", scalar(-1.5f))})}));
    auto g = b.build();
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    expect_matches_portable(*g, {random_tensor(sa, 1), random_tensor(sb, 2)}, "broadcast");
  }
}

TEST(AttentionStridesTest, OffSwitchKeepsEveryStep) {
  const testing::ScopedEnv off("HETSCHED_ATTENTION_STRIDES", "off");
  const Graph g = torch_mha({16, 2, 8});
  EXPECT_TRUE(plan_attention_strides(g, {}).elided.empty());
  expect_matches_portable(g, {random_tensor({1, 16, 16}, 1)}, "off");
}

// --- strided_view.h -------------------------------------------------------------

TEST(StridedViewTest, ReshapeMergesOnlyContiguousDims) {
  // [4, 6] seen transposed as [6, 4]: splitting a dim works, merging the
  // two (not contiguous with each other) does not.
  const StridedView t = transpose_view(contiguous_view(0, {4, 6}), {1, 0});
  EXPECT_EQ(t.strides, (Ints{1, 6}));
  const auto split = reshape_view(t, {2, 3, 4});
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->strides, (Ints{3, 1, 6}));
  EXPECT_FALSE(reshape_view(t, {24}).has_value());
  // Unit dims anywhere carry no stride of their own.
  const auto unit = reshape_view(t, {1, 6, 1, 4, 1});
  ASSERT_TRUE(unit.has_value());
  EXPECT_EQ(unit->strides[1], 1);
  EXPECT_EQ(unit->strides[3], 6);
  EXPECT_FALSE(reshape_view(t, {5, 5}).has_value());
}

}  // namespace
}  // namespace hetsched
