// The quantization ops (graph/ops_quant.cc, delegates/cpu/kernels/quant.cc)
// where the ONNX node tests do not reach: rounding ties, saturation,
// per-axis scales on other axes, i32 dequantization, int32 accumulation past
// f32's exact range, a QDQ conv whose int8 weights are dequantized at load,
// and the errors.
//
// Expected values are worked by hand in the comments; the QDQ conv's
// reference is the ONNX definition written out in double below.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fstream>
#include <iterator>

#include "delegates/cpu/cpu_reference.h"
#include "graph/builder.h"
#include "profile/profile.h"
#include "scheduler/graph_cleanup.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"
#include "scheduler/session.h"

namespace hetsched {
namespace {

using AttrList = std::initializer_list<std::pair<std::string, Attribute>>;
using Inputs = std::vector<std::optional<Tensor>>;

Tensor f32(Shape shape, const std::vector<float>& v) { return Tensor::from_vector(DType::kFloat32, std::move(shape), v); }
Tensor u8(Shape shape, const std::vector<uint8_t>& v) { return Tensor::from_vector(DType::kUInt8, std::move(shape), v); }
Tensor i8(Shape shape, const std::vector<int8_t>& v) { return Tensor::from_vector(DType::kInt8, std::move(shape), v); }
Tensor i32(Shape shape, const std::vector<int32_t>& v) { return Tensor::from_vector(DType::kInt32, std::move(shape), v); }

Result<Graph> one_node(const std::string& op, const Inputs& inputs, AttrList attrs, int opset, int num_outputs) {
  GraphBuilder b("g");
  b.raw().set_opset(opset);
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i)
    ids.push_back(inputs[i] ? b.constant("in" + std::to_string(i), *inputs[i]) : kNoValue);
  for (ValueId out : b.op_multi(op, ids, num_outputs, attrs, "n")) b.output(out);
  return b.build();
}

// One `op` node over constant inputs, run with the portable CPU kernels.
Result<Tensor> run1(const std::string& op, const Inputs& inputs, AttrList attrs = {}, int opset = 13) {
  HS_ASSIGN_OR_RETURN(Graph g, one_node(op, inputs, attrs, opset, 1));
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> outs, cpu::run_graph_reference(g, {}));
  return std::move(outs[0]);
}

Status infer_status(const std::string& op, const Inputs& inputs, AttrList attrs = {}, int opset = 13) {
  return one_node(op, inputs, attrs, opset, 1).status();
}

template <typename T>
std::vector<int64_t> ints_of(const Result<Tensor>& r) {
  std::vector<int64_t> v;
  for (T x : r->span<T>()) v.push_back(x);
  return v;
}

TEST(QuantOpsTest, QuantizeRoundsTiesToEven) {
  // x / 2 = 2.5, -2.5, 3.5, -3.5, 0.5, 1.5 -> 2, -2, 4, -4, 0, 2.
  const Tensor x = f32({6}, {5, -5, 7, -7, 1, 3});
  Result<Tensor> s8 = run1("QuantizeLinear", {x, f32({}, {2}), i8({}, {0})});
  ASSERT_TRUE(s8.is_ok()) << s8.status().message();
  EXPECT_EQ(s8->dtype(), DType::kInt8);
  EXPECT_EQ(ints_of<int8_t>(s8), (std::vector<int64_t>{2, -2, 4, -4, 0, 2}));
  // Rounded first, then the zero point added: 10 + the values above.
  Result<Tensor> u = run1("QuantizeLinear", {x, f32({}, {2}), u8({}, {10})});
  ASSERT_TRUE(u.is_ok()) << u.status().message();
  EXPECT_EQ(ints_of<uint8_t>(u), (std::vector<int64_t>{12, 8, 14, 6, 10, 12}));
}

TEST(QuantOpsTest, QuantizeSaturatesAtBothEnds) {
  // u8, zero point 0: -0.4 -> 0, -0.6 -> -1 -> 0, 255.4 -> 255, 255.6 -> 256 -> 255, +-1000 clamp.
  const Tensor x = f32({6}, {-0.4f, -0.6f, 255.4f, 255.6f, -1000, 1000});
  Result<Tensor> u = run1("QuantizeLinear", {x, f32({}, {1})});  // no zero point: u8, 0
  ASSERT_TRUE(u.is_ok()) << u.status().message();
  EXPECT_EQ(u->dtype(), DType::kUInt8);
  EXPECT_EQ(ints_of<uint8_t>(u), (std::vector<int64_t>{0, 0, 255, 255, 0, 255}));
  // i8, zero point -3: -125.4 - 3 -> -128, -125.6 - 3 -> -129 -> -128, 130 - 3 = 127, 130.6 - 3 -> 128 -> 127.
  const Tensor y = f32({6}, {-125.4f, -125.6f, 130, 130.6f, -1000, 1000});
  Result<Tensor> s = run1("QuantizeLinear", {y, f32({}, {1}), i8({}, {-3})});
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  EXPECT_EQ(ints_of<int8_t>(s), (std::vector<int64_t>{-128, -128, 127, 127, -128, 127}));
}

TEST(QuantOpsTest, QuantizePerAxisOnAxisZeroAndNegativeAxis) {
  // Axis 0 of [2,3]: row 0 scale 1 zp 0, row 1 scale 0.5 zp 1.
  const Tensor x = f32({2, 3}, {1, 2, 3, 1, 2, 3});
  Result<Tensor> a0 =
      run1("QuantizeLinear", {x, f32({2}, {1, 0.5f}), i8({2}, {0, 1})}, {{"axis", int64_t{0}}});
  ASSERT_TRUE(a0.is_ok()) << a0.status().message();
  EXPECT_EQ(ints_of<int8_t>(a0), (std::vector<int64_t>{1, 2, 3, 3, 5, 7}));
  // Axis -1 (columns): scales 1, 2, 4, zero points 0, 0, 100.
  const Tensor y = f32({2, 3}, {4, 4, 4, 8, 8, 8});
  Result<Tensor> am1 =
      run1("QuantizeLinear", {y, f32({3}, {1, 2, 4}), u8({3}, {0, 0, 100})}, {{"axis", int64_t{-1}}});
  ASSERT_TRUE(am1.is_ok()) << am1.status().message();
  EXPECT_EQ(ints_of<uint8_t>(am1), (std::vector<int64_t>{4, 2, 101, 8, 4, 102}));
  // And back: DequantizeLinear on axis -1 gives (q - zp) * scale.
  Result<Tensor> back = run1("DequantizeLinear", {u8({2, 3}, {4, 2, 101, 8, 4, 102}), f32({3}, {1, 2, 4}),
                                                  u8({3}, {0, 0, 100})},
                             {{"axis", int64_t{-1}}});
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(std::vector<float>(back->span<float>().begin(), back->span<float>().end()),
            (std::vector<float>{4, 4, 4, 8, 8, 8}));
}

TEST(QuantOpsTest, DequantizeInt32) {
  // i32 (a bias's type), zero point 0: x * 0.5.
  Result<Tensor> r = run1("DequantizeLinear", {i32({3}, {-70000, 5, 1 << 20}), f32({}, {0.5f}), i32({}, {0})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->dtype(), DType::kFloat32);
  EXPECT_EQ(std::vector<float>(r->span<float>().begin(), r->span<float>().end()),
            (std::vector<float>{-35000, 2.5f, 524288}));
  // A non-zero i32 zero point is not ONNX.
  Status s = infer_status("DequantizeLinear", {i32({1}, {1}), f32({}, {1}), i32({}, {3})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("must be 0"), std::string::npos) << s.message();
}

TEST(QuantOpsTest, ConvIntegerAccumulatesBeyondF32ExactRange) {
  // 601 taps of 255 * 127: 19463385, odd and above 2^24, so f32 sums could
  // not hold it; int32 accumulation does.
  Result<Tensor> r = run1("ConvInteger", {u8({1, 601, 1, 1}, std::vector<uint8_t>(601, 255)),
                                          i8({1, 601, 1, 1}, std::vector<int8_t>(601, 127))});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->type(), (TensorType{DType::kInt32, {1, 1, 1, 1}}));
  EXPECT_EQ(r->data<int32_t>()[0], 19463385);
}

TEST(QuantOpsTest, MatMulIntegerPerRowAndColumnZeroPoints) {
  // A [2,2] = [[3,4],[5,6]] less per-row zp [1,2] = [[2,3],[3,4]];
  // B [2,2] = [[1,2],[3,4]] less per-column zp [1,0] = [[0,2],[2,4]];
  // product [[6,16],[8,22]].
  Result<Tensor> r = run1("MatMulInteger", {u8({2, 2}, {3, 4, 5, 6}), u8({2, 2}, {1, 2, 3, 4}), u8({2}, {1, 2}),
                                            u8({2}, {1, 0})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(ints_of<int32_t>(r), (std::vector<int64_t>{6, 16, 8, 22}));
}

// --- A QDQ conv: int8 per-channel weights behind DequantizeLinear --------------------

// ONNX's rounding (half to even) in double.
double round_even(double v) {
  const double f = std::floor(v);
  const double d = v - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

TEST(QuantOpsTest, QdqConvWeightsAreDequantizedAtLoad) {
  constexpr int64_t C = 2, M = 3, H = 5, W = 5, K = 3;
  const float x_scale = 0.05f;
  const int x_zp = 128;
  const std::vector<float> w_scale{0.02f, 0.01f, 0.005f};
  std::vector<int8_t> wq(M * C * K * K);
  for (size_t i = 0; i < wq.size(); ++i) wq[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  const std::vector<float> bias{0.1f, -0.2f, 0.3f};
  Tensor x(TensorType{DType::kFloat32, {1, C, H, W}});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = static_cast<float>((i * 13) % 29 - 14) * 0.37f;

  GraphBuilder b("qdq_conv");
  b.raw().set_opset(13);
  const ValueId in = b.input("x", TensorType{DType::kFloat32, {1, C, H, W}});
  const ValueId xs = b.constant("x_scale", f32({}, {x_scale}));
  const ValueId xz = b.constant("x_zp", u8({}, {static_cast<uint8_t>(x_zp)}));
  const ValueId q = b.op("QuantizeLinear", {in, xs, xz}, {}, "q");
  const ValueId dq = b.op("DequantizeLinear", {q, xs, xz}, {}, "dq");
  const ValueId w = b.op("DequantizeLinear",
                         {b.constant("w_q", i8({M, C, K, K}, wq)), b.constant("w_scale", f32({M}, w_scale)),
                          b.constant("w_zp", i8({M}, {0, 0, 0}))},
                         {{"axis", int64_t{0}}}, "w_dq");
  b.output(b.op("Conv", {dq, w, b.constant("b", f32({M}, bias))}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv"));
  Result<Graph> built = b.build();
  ASSERT_TRUE(built.is_ok()) << built.status().message();
  Graph g = std::move(built).value();
  ASSERT_TRUE(cleanup_graph(g, {}).is_ok());

  // The weights' DequantizeLinear is gone: Conv reads an f32 constant.
  int dequantize_nodes = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    const Node& n = g.node(id);
    if (n.op == "DequantizeLinear") {
      ++dequantize_nodes;
      EXPECT_FALSE(g.value(n.inputs[0]).is_constant()) << "a DequantizeLinear of constant weights is left";
    }
    if (n.op == "Conv") {
      const Value& wv = g.value(n.inputs[1]);
      EXPECT_TRUE(wv.is_constant());
      EXPECT_EQ(wv.type.dtype, DType::kFloat32);
    }
  }
  EXPECT_EQ(dequantize_nodes, 1);  // the activation's, which runs

  Result<std::vector<Tensor>> out = cpu::run_graph_reference(g, {x});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.shape(), (Shape{1, M, H, W}));

  // The ONNX definition in double: fake-quantize x, dequantize w, conv.
  std::vector<double> xd(static_cast<size_t>(x.num_elements()));
  for (size_t i = 0; i < xd.size(); ++i) {
    const double qv = std::clamp(round_even(static_cast<double>(x.data<float>()[i]) / x_scale) + x_zp, 0.0, 255.0);
    xd[i] = (qv - x_zp) * x_scale;
  }
  double worst = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t oh = 0; oh < H; ++oh)
      for (int64_t ow = 0; ow < W; ++ow) {
        double acc = bias[static_cast<size_t>(m)];
        for (int64_t c = 0; c < C; ++c)
          for (int64_t kh = 0; kh < K; ++kh)
            for (int64_t kw = 0; kw < K; ++kw) {
              const int64_t ih = oh + kh - 1, iw = ow + kw - 1;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              const double wd = wq[static_cast<size_t>(((m * C + c) * K + kh) * K + kw)] * static_cast<double>(w_scale[static_cast<size_t>(m)]);
              acc += xd[static_cast<size_t>((c * H + ih) * W + iw)] * wd;
            }
        const double got = y.data<float>()[(m * H + oh) * W + ow];
        worst = std::max(worst, std::abs(got - acc));
      }
  // f32 arithmetic on exactly fake-quantized values: only summation rounding.
  EXPECT_LT(worst, 1e-5) << "max abs error against the double reference";
}

// --- A QDQ model against ONNX Runtime -----------------------------------------------

// test/data/models18/qdq_cnn_op13.onnx (scripts/models/make_qdq_cnn.py): two
// convs, a global average pool and a Gemm with int8 per-channel weights and
// u8 activations through QuantizeLinear/DequantizeLinear pairs; its ORT
// 1.30.0 output on a seeded input in [0, 1) is in qdq_cnn_op13_ref
// (scripts/ort/make_reference.js --shape 1x3x16x16 --dist unit --seed 1).
std::vector<float> read_floats(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

TEST(QuantOpsTest, QdqModelMatchesOnnxRuntime) {
  const std::string dir = std::string(HETSCHED_SOURCE_DIR) + "/test/data/models18/";
  Result<Graph> g = load_model(dir + "qdq_cnn_op13.onnx");
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  // Loaded, the weights' and biases' DequantizeLinear are folded: only the
  // activations' 5 pairs run.
  int quantize = 0, dequantize = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(g->num_nodes()); ++id) {
    quantize += g->node(id).op == "QuantizeLinear";
    dequantize += g->node(id).op == "DequantizeLinear";
  }
  EXPECT_EQ(quantize, 5);
  EXPECT_EQ(dequantize, 5);

  const std::vector<float> in = read_floats(dir + "qdq_cnn_op13_ref/input_0.bin");
  const std::vector<float> want = read_floats(dir + "qdq_cnn_op13_ref/output_0.bin");
  ASSERT_EQ(in.size(), 3u * 16 * 16);
  ASSERT_EQ(want.size(), 10u);
  Tensor x = Tensor::from_vector(DType::kFloat32, {1, 3, 16, 16}, in);
  const float out_scale = 0.01648147962987423f;  // initializer out_scale: one step of the output grid
  for (const char* engine : {"portable", "xnnpack"}) {
    Profile p = default_profile();
    p.delegates["cpu"].engine = engine;
    auto session = open_session_for_graph(*g, p);
    ASSERT_TRUE(session.is_ok()) << session.status().message();
    auto got = (*session)->run({x});
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    const Tensor& y = (*got)[0];
    ASSERT_EQ(y.type(), (TensorType{DType::kFloat32, {1, 10}}));
    // ORT fuses the Q/DQ pairs into integer kernels (QLinearConv, ...) that
    // requantize between layers with their own float rounding; hetsched
    // computes the fake-quantized graph in f32. Both land on the output's
    // quantization grid, and an activation rounded the other way at a tie
    // moves the logits by less than one output step: so at most one step
    // apart, and mostly equal (on this input all ten are equal).
    int equal = 0;
    for (int64_t i = 0; i < 10; ++i) {
      const float d = std::abs(y.data<float>()[i] - want[static_cast<size_t>(i)]);
      EXPECT_LE(d, out_scale * 1.01f) << engine << " logit " << i << ": " << y.data<float>()[i] << " vs ORT "
                                      << want[static_cast<size_t>(i)];
      equal += d < out_scale * 0.01f;
    }
    EXPECT_GE(equal, 8) << engine << ": fewer than 8 of 10 logits equal ORT's";
  }
}

// --- Errors ------------------------------------------------------------------------

void expect_error(const Status& s, StatusCode code, const std::vector<std::string>& parts) {
  EXPECT_EQ(s.code(), code) << s.message();
  for (const std::string& p : parts) EXPECT_NE(s.message().find(p), std::string::npos) << s.message();
}

TEST(QuantOpsTest, ScaleNotMatchingTheAxisIsRefused) {
  expect_error(infer_status("QuantizeLinear", {f32({2, 3}, std::vector<float>(6, 1)), f32({4}, {1, 1, 1, 1})}),
               StatusCode::kInvalidArgument, {"node 'n' (QuantizeLinear)", "scale f32[4] does not match axis 1", "accepted"});
  // Per-axis scales need opset 13.
  expect_error(infer_status("DequantizeLinear", {u8({2, 3}, std::vector<uint8_t>(6, 1)), f32({3}, {1, 1, 1})}, {}, 10),
               StatusCode::kInvalidArgument, {"needs opset 13"});
  // A zero point of another shape than the scale.
  expect_error(infer_status("DequantizeLinear", {u8({2, 3}, std::vector<uint8_t>(6, 1)), f32({3}, {1, 1, 1}),
                                                 u8({}, {0})}),
               StatusCode::kInvalidArgument, {"must have the scale's shape"});
}

TEST(QuantOpsTest, ZeroPointDtypeMustMatch) {
  // QuantizeLinear opset 21: y_zero_point i8 but output_dtype UINT8 (2).
  expect_error(infer_status("QuantizeLinear", {f32({2}, {1, 2}), f32({}, {1}), i8({}, {0})},
                            {{"output_dtype", int64_t{2}}}, 21),
               StatusCode::kInvalidArgument, {"differs from output_dtype u8"});
  // DequantizeLinear: x u8, x_zero_point i8.
  expect_error(infer_status("DequantizeLinear", {u8({2}, {1, 2}), f32({}, {1}), i8({}, {0})}),
               StatusCode::kInvalidArgument, {"x_zero_point i8[] must have x's dtype u8"});
  // QLinearMatMul: a u8 with an i8 a_zero_point.
  expect_error(infer_status("QLinearMatMul", {u8({1, 2}, {1, 2}), f32({}, {1}), i8({}, {0}), u8({2, 1}, {1, 2}),
                                              f32({}, {1}), u8({}, {0}), f32({}, {1}), u8({}, {0})}),
               StatusCode::kInvalidArgument, {"a_zero_point i8[] must have a's dtype u8"});
}

TEST(QuantOpsTest, UnsupportedTypesAndBlockSizeAreRefusedByName) {
  // INT16 (5) and FLOAT8E4M3FN (17) outputs: not hetsched dtypes.
  expect_error(infer_status("QuantizeLinear", {f32({2}, {1, 2}), f32({}, {1})}, {{"output_dtype", int64_t{5}}}, 21),
               StatusCode::kUnsupported, {"output_dtype INT16 is not supported", "UINT8, INT8"});
  expect_error(infer_status("QuantizeLinear", {f32({2}, {1, 2}), f32({}, {1})}, {{"output_dtype", int64_t{17}}}, 21),
               StatusCode::kUnsupported, {"FLOAT8E4M3FN"});
  // Blocked quantization (opset 21).
  expect_error(infer_status("DequantizeLinear", {i8({2, 4}, std::vector<int8_t>(8, 1)), f32({2, 2}, {1, 1, 1, 1})},
                            {{"block_size", int64_t{2}}, {"axis", int64_t{1}}}, 21),
               StatusCode::kUnsupported, {"block_size' = 2", "not supported"});
  // f32 into DequantizeLinear.
  expect_error(infer_status("DequantizeLinear", {f32({2}, {1, 2}), f32({}, {1})}), StatusCode::kInvalidArgument,
               {"must be u8, i8 or i32"});
}

}  // namespace
}  // namespace hetsched
