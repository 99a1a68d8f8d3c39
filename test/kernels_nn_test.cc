// Portable CPU kernels of the NN ops, run one node at a time.
//
// Inputs come from pattern() (values k/4, exact in f32, so most expected
// values are exact too). Expected values were printed by
// test/data/gen_kernel_cases.py (numpy, with Conv and the pools written out
// as loops over the ONNX definitions) and pasted here, or come from the
// direct loops in this file for the layers too big to paste.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "delegates/cpu/kernel.h"
#include "graph/builder.h"

namespace hetsched {
namespace {

using Floats = std::vector<float>;
using Ints = std::vector<int64_t>;
using AttrList = std::initializer_list<std::pair<std::string, Attribute>>;

// ((i * 7 + seed) % 13 - 6) / 4, as pattern() in gen_kernel_cases.py.
Tensor pattern(const Shape& shape, int seed) {
  Tensor t(TensorType{DType::kFloat32, shape});
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<float>((i * 7 + seed) % 13 - 6) * 0.25f;
  return t;
}

Tensor f32_tensor(Shape shape, const Floats& values) {
  return Tensor::from_vector(DType::kFloat32, std::move(shape), values);
}

// Runs the CPU kernel of `node` on `inputs` (nullptr for omitted ones) into
// freshly allocated outputs of `output_types`.
Result<std::vector<Tensor>> run_kernel(const Node& node, const std::vector<const Tensor*>& inputs,
                                       const std::vector<TensorType>& output_types, int opset) {
  const cpu::KernelFn* kernel = cpu::find_kernel(node.op);
  if (!kernel) return not_found("no CPU kernel for " + node.op);
  std::vector<Tensor> outputs;
  for (const TensorType& t : output_types) outputs.emplace_back(t);
  std::vector<Tensor*> out_ptrs;
  for (Tensor& t : outputs) out_ptrs.push_back(&t);
  const cpu::KernelContext ctx{node, inputs, out_ptrs, opset};
  HS_RETURN_IF_ERROR((*kernel)(ctx));
  return outputs;
}

// A one-node graph of `op` over constant inputs, shape-inferred at `opset`;
// the output is sized from the inferred type and the kernel run on it.
Result<Tensor> run_op(const std::string& op, const std::vector<Tensor>& inputs, AttrList attrs = {}, int opset = 17) {
  GraphBuilder b("g");
  b.raw().set_opset(opset);
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) ids.push_back(b.constant("in" + std::to_string(i), inputs[i]));
  b.output(b.op(op, ids, attrs, "n"));
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  const Node& node = g.node(0);
  std::vector<const Tensor*> ptrs;
  for (ValueId v : node.inputs) ptrs.push_back(v == kNoValue ? nullptr : g.value(v).constant.get());
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> outs, run_kernel(node, ptrs, {g.value(node.outputs[0]).type}, g.opset()));
  return std::move(outs[0]);
}

void expect_f32(const Result<Tensor>& r, const Shape& shape, const Floats& expected) {
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->dtype(), DType::kFloat32);
  ASSERT_EQ(r->shape(), shape);
  ASSERT_EQ(static_cast<size_t>(r->num_elements()), expected.size());
  const float* got = r->data<float>();
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], 1e-5 + 1e-5 * std::abs(expected[i])) << "element " << i;
}

// Plain NCHW convolution straight from the ONNX definition, the oracle for
// layers too big to paste.
struct ConvParams {
  int64_t group = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
};

Tensor direct_conv(const Tensor& x, const Tensor& w, const Tensor* bias, const ConvParams& p) {
  const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], wd = x.shape()[3];
  const int64_t m = w.shape()[0], cg = w.shape()[1], kh = w.shape()[2], kw = w.shape()[3];
  const int64_t oh = (h + p.pad_t + p.pad_b - ((kh - 1) * p.dil_h + 1)) / p.stride_h + 1;
  const int64_t ow = (wd + p.pad_l + p.pad_r - ((kw - 1) * p.dil_w + 1)) / p.stride_w + 1;
  Tensor y(TensorType{DType::kFloat32, {n, m, oh, ow}});
  const float* px = x.data<float>();
  const float* pw = w.data<float>();
  float* py = y.data<float>();
  const int64_t mg = m / p.group;
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t mi = 0; mi < m; ++mi)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          float acc = bias ? bias->data<float>()[mi] : 0.f;
          const int64_t first_channel = mi / mg * cg;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t b = 0; b < kw; ++b) {
                const int64_t r = i * p.stride_h - p.pad_t + a * p.dil_h;
                const int64_t q = j * p.stride_w - p.pad_l + b * p.dil_w;
                if (r < 0 || r >= h || q < 0 || q >= wd) continue;
                acc += px[((ni * c + first_channel + ci) * h + r) * wd + q] * pw[((mi * cg + ci) * kh + a) * kw + b];
              }
          py[((ni * m + mi) * oh + i) * ow + j] = acc;
        }
  return y;
}

// Element count where `got` and `want` differ by more than the tolerance.
int64_t count_mismatches(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.shape(), want.shape());
  if (got.shape() != want.shape()) return -1;
  int64_t bad = 0;
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const float g = got.data<float>()[i], w = want.data<float>()[i];
    bad += std::abs(g - w) > 1e-5f + 1e-5f * std::abs(w);
  }
  return bad;
}

// ---- Conv -------------------------------------------------------------------

TEST(ConvKernelTest, OneByOneImageAppliesWeightAndBias) {
  expect_f32(
      run_op("Conv", {f32_tensor({1, 1, 1, 1}, {2.f}), f32_tensor({1, 1, 1, 1}, {-1.5f}), f32_tensor({1}, {0.25f})}),
      {1, 1, 1, 1}, {-2.75f});
}

TEST(ConvKernelTest, HandlesStridesDilationsAsymmetricPadsAndBias) {
  expect_f32(run_op("Conv", {pattern({1, 3, 7, 5}, 0), pattern({2, 3, 3, 2}, 3), f32_tensor({2}, {0.5f, -1.f})},
                    {{"strides", Ints{2, 1}}, {"pads", Ints{1, 0, 0, 2}}, {"dilations", Ints{2, 2}}}),
             {1, 2, 2, 5}, {2.5625f,  3.625f,  1.4375f,  -1.375f, 1.75f, 1.3125f,  2.625f, 0.6875f, 1.5f,    0.5625f,
                            -4.4375f, 2.4375f, -3.6875f, -0.625f, -1.5f, -1.8125f, -2.75f, 0.375f,  -0.625f, 1.375f});
}

TEST(ConvKernelTest, GroupedConvMatchesNumpy) {
  expect_f32(
      run_op("Conv", {pattern({2, 4, 5, 5}, 1), pattern({6, 2, 3, 3}, 2)},
             {{"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}}),
      {2, 6, 5, 5},
      {0.3125f,  -0.1875f, 0.1875f,  0.5625f,  1.0f,     2.1875f,  -0.5f,    1.0625f,  1.8125f,  -0.125f,  -4.1875f,
       0.0f,     -2.5f,    -1.75f,   -0.125f,  2.4375f,  -1.125f,  2.875f,   3.625f,   -2.5625f, 0.5625f,  1.75f,
       1.5625f,  -2.6875f, 1.5f,     2.125f,   -5.9375f, 4.3125f,  -6.5625f, 5.5f,     -1.6875f, 4.75f,    -0.8125f,
       0.125f,   -1.1875f, 2.3125f,  5.375f,   -4.25f,   7.25f,    -4.625f,  -1.8125f, -6.1875f, 1.25f,    -5.125f,
       3.3125f,  -2.875f,  1.9375f,  -3.0f,    1.8125f,  1.5625f,  0.6875f,  2.125f,   1.9375f,  1.75f,    0.25f,
       -1.5f,    -3.0f,    -0.25f,   -4.8125f, 1.8125f,  -0.9375f, 1.0f,     -0.3125f, 5.6875f,  -1.8125f, 2.0625f,
       3.375f,   -2.0f,    -0.0625f, -1.375f,  1.8125f,  -4.375f,  0.5625f,  -2.625f,  -0.8125f, -3.5f,    0.5625f,
       -4.375f,  1.25f,    -3.4375f, 2.4375f,  -2.0f,    3.375f,   3.875f,   -1.625f,  3.625f,   -0.3125f, 1.0f,
       -2.5625f, 1.875f,   -3.3125f, -0.25f,   -3.0f,    -0.0625f, -2.75f,   0.4375f,  1.9375f,  2.125f,   2.3125f,
       0.75f,    1.9375f,  -3.0f,    1.9375f,  -3.6875f, 2.25f,    -5.75f,   1.25f,    -6.1875f, 2.625f,   -2.125f,
       5.8125f,  -4.25f,   5.375f,   -0.4375f, -2.0625f, -1.3125f, -0.8125f, 4.75f,    -5.125f,  0.4375f,  -5.0625f,
       4.3125f,  -5.9375f, 4.9375f,  -2.875f,  0.0625f,  1.5625f,  1.75f,    1.9375f,  0.625f,   2.3125f,  2.875f,
       -1.125f,  0.5625f,  -0.1875f, -0.125f,  -2.5f,    0.0f,     -2.375f,  -0.3125f, -0.125f,  1.0625f,  -0.5f,
       3.625f,   2.0f,     0.8125f,  0.1875f,  -0.1875f, -0.5625f, 0.0f,     -0.125f,  -1.6875f, 0.3125f,  -0.9375f,
       0.25f,    -0.1875f, 0.5625f,  -1.125f,  2.875f,   2.3125f,  -0.875f,  1.0625f,  1.8125f,  0.9375f,  -0.125f,
       -0.75f,   -2.5f,    -1.75f,   -2.625f,  -0.125f,  0.8125f,  2.5f,     2.3125f,  2.125f,   0.625f,   -2.4375f,
       -0.625f,  3.9375f,  -5.3125f, 5.5f,     -2.125f,  2.625f,   -6.1875f, 1.25f,    -5.75f,   3.5f,     -0.8125f,
       0.125f,   -0.5625f, -1.0625f, 3.4375f,  -4.25f,   7.25f,    -4.0f,    6.0625f,  -3.5f,    0.5625f,  -4.375f,
       1.25f,    -3.4375f, -0.6875f, 0.4375f,  -2.1875f, 2.5f,     1.0f,     -1.625f,  3.875f,   3.375f,   -2.0f,
       2.4375f,  -3.5f,    -0.25f,   -4.8125f, -0.4375f, -3.625f,  3.5625f,  -0.3125f, 5.6875f,  -0.5f,    3.3125f,
       1.9375f,  -3.0f,    1.9375f,  -3.6875f, 2.25f,    -1.6875f, 5.6875f,  -0.875f,  1.5f,     -1.125f,  1.8125f,
       -4.8125f, -0.25f,   -3.0f,    -1.5f,    -2.6875f, 3.375f,   3.875f,   -0.5f,    3.625f,   -1.5f,    1.0f,
       -2.5625f, -0.4375f, -3.4375f, -0.3125f, 0.375f,   -2.6875f, 1.5625f,  0.5f,     -2.0f,    5.6875f,  -1.5625f,
       3.375f,   2.0625f,  -1.1875f, 0.125f,   -0.8125f, 4.75f,    -1.6875f, 4.6875f,  -6.1875f, 2.625f,   -4.0f,
       3.25f,    -4.875f,  5.375f,   -0.4375f, -0.5625f, 3.3125f,  -1.0f,    6.3125f,  -3.9375f, 3.6875f,  -4.0f,
       -0.6875f, -1.625f,  -3.0625f, 0.375f,   -3.6875f, -0.125f,  1.8125f,  1.0625f,  -0.5f,    2.1875f,  2.3125f,
       -1.125f,  0.5625f,  -2.625f,  -0.375f,  -0.125f,  0.0f,     -2.375f,  0.9375f,  -0.5f,    -0.875f,  -1.5625f,
       1.3125f,  0.9375f,  1.25f});
}

TEST(ConvKernelTest, DepthwiseStridedSameUpperMatchesNumpy) {
  expect_f32(run_op("Conv", {pattern({1, 3, 6, 6}, 4), pattern({3, 1, 3, 3}, 5)},
                    {{"group", int64_t{3}}, {"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}),
             {1, 3, 3, 3}, {2.625f,   2.375f,   -2.8125f, 1.125f,  0.875f,  -0.3125f, 1.0f,    0.6875f,  1.3125f,
                            -3.5f,    -7.3125f, -4.75f,   2.875f,  3.9375f, 3.0f,     2.125f,  -2.1875f, -3.1875f,
                            -0.5625f, -0.625f,  1.25f,    2.3125f, 2.25f,   1.25f,    1.4375f, 1.25f,    0.3125f});
}

// An even kernel needs an odd total pad: SAME_UPPER puts it at the end,
// SAME_LOWER at the start.
TEST(ConvKernelTest, SameUpperAndSameLowerPadOppositeEnds) {
  const Tensor x = pattern({1, 1, 3, 3}, 6), w = pattern({1, 1, 2, 2}, 7);
  expect_f32(run_op("Conv", {x, w}, {{"auto_pad", std::string("SAME_UPPER")}}), {1, 1, 3, 3},
             {0.75f, 0.5625f, -0.4375f, 0.1875f, 0.0f, 0.25f, 1.125f, -1.4375f, 0.25f});
  expect_f32(run_op("Conv", {x, w}, {{"auto_pad", std::string("SAME_LOWER")}}), {1, 1, 3, 3},
             {0.0f, 1.5f, -1.0f, 1.25f, 0.75f, 0.5625f, 0.8125f, 0.1875f, 0.0f});
}

TEST(ConvKernelTest, OneDimensionalConvMatchesNumpy) {
  expect_f32(
      run_op("Conv", {pattern({1, 2, 7}, 8), pattern({3, 2, 3}, 9)}, {{"pads", Ints{2, 1}}, {"strides", Ints{2}}}),
      {1, 3, 4},
      {0.5625f, 3.875f, 0.1875f, 0.5625f, -0.875f, -2.3125f, 1.625f, 1.5f, -0.6875f, -2.8125f, -1.0f, -0.8125f});
}

TEST(ConvKernelTest, PointwiseConvWithBiasMatchesNumpy) {
  expect_f32(
      run_op("Conv", {pattern({1, 5, 3, 3}, 10), pattern({4, 5, 1, 1}, 11), f32_tensor({4}, {1.f, -0.5f, 0.25f, 0.f})}),
      {1, 4, 3, 3},
      {3.625f, -2.75f, 3.875f,  -2.5f,  4.125f, -2.25f,   0.3125f, -2.0f,  0.5625f,  -1.125f, -0.8125f, -1.3125f,
       -1.0f,  -1.5f,  2.0625f, -2.5f,  1.875f, -2.6875f, -0.375f, 1.75f,  -0.1875f, 1.9375f, 0.0f,     -1.9375f,
       2.625f, -1.75f, 2.8125f, 2.625f, 0.875f, 2.375f,   0.625f,  2.125f, -0.4375f, -3.0f,   -0.6875f, -3.25f});
}

// Prime-sized, grouped, strided, dilated and asymmetrically padded over
// several pixel tiles.
TEST(ConvKernelTest, OddSizedGroupedConvMatchesDirectLoop) {
  const Tensor x = pattern({2, 6, 37, 29}, 1), w = pattern({10, 3, 3, 5}, 2), b = pattern({10}, 3);
  Result<Tensor> r =
      run_op("Conv", {x, w, b},
             {{"group", int64_t{2}}, {"strides", Ints{2, 3}}, {"pads", Ints{1, 2, 0, 1}}, {"dilations", Ints{1, 2}}});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ConvParams p;
  p.group = 2;
  p.stride_h = 2;
  p.stride_w = 3;
  p.dil_w = 2;
  p.pad_t = 1;
  p.pad_l = 2;
  p.pad_r = 1;
  EXPECT_EQ(count_mismatches(*r, direct_conv(x, w, &b, p)), 0);
}

// Few pixels and many output channels: the kernel splits output channels
// across tasks instead of pixel tiles.
TEST(ConvKernelTest, ManyChannelsFewPixelsMatchesDirectLoop) {
  const Tensor x = pattern({1, 64, 5, 5}, 4), w = pattern({128, 64, 3, 3}, 5);
  Result<Tensor> r = run_op("Conv", {x, w});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(count_mismatches(*r, direct_conv(x, w, nullptr, ConvParams{})), 0);
}

// The ResNet-style 3x3 layer of the brief: 1x64x56x56 -> 64, pads 1. Prints
// the best of three kernel calls; no timing assertion.
TEST(ConvKernelTest, ResNetLayerMatchesDirectLoopAndReportsTime) {
  const Tensor x = pattern({1, 64, 56, 56}, 6), w = pattern({64, 64, 3, 3}, 7), b = pattern({64}, 8);
  GraphBuilder gb("conv");
  const ValueId in = gb.input("x", {DType::kFloat32, {1, 64, 56, 56}});
  gb.output(gb.op("Conv", {in, gb.constant("w", w), gb.constant("b", b)}, {{"pads", Ints{1, 1, 1, 1}}}, "conv"));
  Result<Graph> g = gb.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Tensor y(g->value(g->node(0).outputs[0]).type);
  std::vector<const Tensor*> ins{&x, &w, &b};
  std::vector<Tensor*> outs{&y};
  const cpu::KernelContext ctx{g->node(0), ins, outs, 17};
  double best_ms = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE((*cpu::find_kernel("Conv"))(ctx).is_ok());
    best_ms =
        std::min(best_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("[ timing ] Conv 1x64x56x56 -> 64, 3x3, pads 1: %.2f ms (best of 3)\n", best_ms);
  ConvParams p;
  p.pad_t = p.pad_l = p.pad_b = p.pad_r = 1;
  EXPECT_EQ(count_mismatches(y, direct_conv(x, w, &b, p)), 0);
}

// ---- BatchNormalization -----------------------------------------------------

TEST(BatchNormKernelTest, NormalisesPerChannelWithDefaultEpsilon) {
  expect_f32(run_op("BatchNormalization",
                    {pattern({2, 3, 2, 2}, 1), f32_tensor({3}, {1.f, -0.5f, 2.f}), f32_tensor({3}, {0.25f, 0.f, -1.f}),
                     f32_tensor({3}, {0.5f, -0.25f, 0.f}), f32_tensor({3}, {1.f, 0.25f, 4.f})}),
             {2, 3, 2, 2}, {-1.49999125f,    0.25f,        -1.2499925f,  0.49999875f,  0.49999f,      -1.249975f,
                            0.249995f,       -1.49997f,    -1.24999969f, 0.499998125f, -1.0f,         -2.49999813f,
                            1.24999063e-06f, -1.49999125f, 0.25f,        -1.2499925f,  -0.999980001f, 0.49999f,
                            -1.249975f,      0.249995f,    0.249998438f, -1.24999969f, 0.499998125f,  -1.0f});
}

TEST(BatchNormKernelTest, RefusesTrainingOutputs) {
  Node node;
  node.name = "bn";
  node.op = "BatchNormalization";
  const Tensor x = pattern({1, 2, 2, 2}, 0), p = f32_tensor({2}, {1.f, 1.f});
  const TensorType t{DType::kFloat32, {1, 2, 2, 2}}, c{DType::kFloat32, {2}};
  Result<std::vector<Tensor>> r = run_kernel(node, {&x, &p, &p, &p, &p}, {t, c, c}, 17);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("node 'bn' (BatchNormalization): training mode is unsupported"),
            std::string::npos)
      << r.status().message();
}

// ---- MatMul and Gemm --------------------------------------------------------

TEST(MatMulKernelTest, MultipliesPrimeSizedMatrices) {
  expect_f32(run_op("MatMul", {pattern({3, 5}, 1), pattern({5, 7}, 2)}), {3, 7},
             {1.8125f, -2.0625f, -0.25f,  -2.5f,    -0.6875f, -2.9375f, -1.125f, -1.9375f, 1.6875f, 0.4375f, 2.4375f,
              1.1875f, 3.1875f,  1.9375f, -2.4375f, 2.1875f,  1.9375f,  1.6875f, 1.4375f,  1.1875f, 0.9375f});
}

TEST(MatMulKernelTest, BroadcastsBatchDims) {
  expect_f32(run_op("MatMul", {pattern({2, 1, 3, 4}, 3), pattern({3, 4, 2}, 4)}), {2, 3, 3, 2},
             {0.4375f,  -0.25f,   -0.625f,  3.8125f,  -0.0625f, -1.0625f, 1.4375f, -0.0625f, -0.875f,
              -0.5f,    -1.5625f, 0.6875f,  -3.25f,   0.9375f,  -1.125f,  -0.75f,  2.625f,   -0.8125f,
              -0.3125f, -1.0625f, -0.5625f, -1.0625f, 0.8125f,  -0.25f,   0.1875f, -0.5625f, 1.9375f,
              -1.8125f, -1.1875f, 1.8125f,  1.5f,     -0.0625f, 0.375f,   0.6875f, -1.5625f, -0.1875f});
}

TEST(MatMulKernelTest, PromotesOneDimensionalOperands) {
  expect_f32(run_op("MatMul", {pattern({4}, 5), pattern({2, 4, 3}, 6)}), {2, 3},
             {-1.125f, -0.75f, -1.1875f, -1.5f, -1.125f, -0.75f});
  expect_f32(run_op("MatMul", {pattern({2, 3, 4}, 7), pattern({4}, 8)}), {2, 3},
             {2.5f, 2.25f, 2.0f, -2.3125f, -2.5625f, -2.8125f});
  expect_f32(run_op("MatMul", {pattern({4}, 9), pattern({4}, 10)}), {}, {2.5f});
}

// Large enough for K blocking (K > 256), edge slivers and parallel tiles;
// with pattern() inputs every sum is exact, so a plain loop is the oracle.
TEST(MatMulKernelTest, LargeBatchedProductMatchesPlainLoop) {
  const int64_t batch = 2, m = 130, k = 257, n = 67;
  const Tensor a = pattern({batch, m, k}, 1), b = pattern({k, n}, 2);
  Result<Tensor> r = run_op("MatMul", {a, b});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  Tensor want(TensorType{DType::kFloat32, {batch, m, n}});
  for (int64_t s = 0; s < batch; ++s)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0.f;
        for (int64_t q = 0; q < k; ++q) acc += a.data<float>()[(s * m + i) * k + q] * b.data<float>()[q * n + j];
        want.data<float>()[(s * m + i) * n + j] = acc;
      }
  EXPECT_EQ(count_mismatches(*r, want), 0);
}

TEST(GemmKernelTest, TransposesScalesAndAddsRowBroadcastC) {
  expect_f32(run_op("Gemm", {pattern({4, 3}, 1), pattern({5, 4}, 2), pattern({1, 5}, 3)},
                    {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.f}}),
             {3, 5},
             {0.34375f, 3.96875f, -2.5625f, 1.0625f, -1.8125f, -2.5f, 1.25f, -0.28125f, 3.46875f, 0.71875f, -1.28125f,
              1.78125f, -0.84375f, 2.21875f, -1.21875f});
}

TEST(GemmKernelTest, AddsColumnBroadcastC) {
  expect_f32(run_op("Gemm", {pattern({3, 4}, 4), pattern({4, 2}, 5), pattern({3, 1}, 6)}), {3, 2},
             {0.8125f, -3.8125f, -2.0625f, 1.6875f, -0.0625f, 2.3125f});
}

TEST(GemmKernelTest, ScalesByAlphaWithoutC) {
  expect_f32(run_op("Gemm", {pattern({2, 3}, 7), pattern({3, 2}, 8)}, {{"alpha", 2.f}}), {2, 2},
             {-0.625f, 0.875f, -1.375f, 1.625f});
}

TEST(GemmKernelTest, LargeTransposedProductMatchesPlainLoop) {
  const int64_t m = 70, k = 300, n = 90;
  const Tensor a = pattern({k, m}, 3), b = pattern({n, k}, 4), c = pattern({n}, 5);
  Result<Tensor> r = run_op("Gemm", {a, b, c}, {{"transA", int64_t{1}}, {"transB", int64_t{1}}});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  Tensor want(TensorType{DType::kFloat32, {m, n}});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.f;
      for (int64_t q = 0; q < k; ++q) acc += a.data<float>()[q * m + i] * b.data<float>()[j * k + q];
      want.data<float>()[i * n + j] = acc + c.data<float>()[j];
    }
  EXPECT_EQ(count_mismatches(*r, want), 0);
}

// ---- Pools ------------------------------------------------------------------

TEST(PoolKernelTest, MaxPoolCeilModeAddsPartialWindow) {
  expect_f32(run_op("MaxPool", {pattern({1, 2, 6, 7}, 2)},
                    {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}),
             {1, 2, 3, 3},
             {1.5f, 1.25f, 1.5f, 1.0f, 1.25f, 1.5f, 1.0f, 1.25f, 1.5f, 1.25f, 1.5f, 1.5f, 1.5f, 1.5f, 1.0f, 1.5f, 1.5f,
              1.25f});
}

// Along the width the ceil window would start in the end pad, so it is dropped.
TEST(PoolKernelTest, MaxPoolCeilModeDropsWindowStartingInPadding) {
  expect_f32(run_op("MaxPool", {pattern({1, 2, 6, 7}, 2)},
                    {{"kernel_shape", Ints{2, 2}},
                     {"strides", Ints{2, 2}},
                     {"pads", Ints{1, 1, 1, 1}},
                     {"ceil_mode", int64_t{1}}}),
             {1, 2, 4, 4}, {-1.0f, 0.75f, 1.0f,  1.25f, 1.5f,  1.0f, 1.25f, 1.5f,  0.0f, 1.0f,  1.25f,
                            1.5f,  -1.5f, 0.25f, 0.5f,  0.75f, 1.0f, 1.25f, 1.5f,  0.0f, 0.25f, 1.25f,
                            1.5f,  1.0f,  1.25f, 1.5f,  0.75f, 1.0f, 0.5f,  0.75f, 1.0f, 1.25f});
}

TEST(PoolKernelTest, MaxPoolWithDilationAndAsymmetricPads) {
  expect_f32(run_op("MaxPool", {pattern({1, 2, 6, 7}, 2)},
                    {{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 2}}, {"pads", Ints{0, 1, 1, 0}}}),
             {1, 2, 5, 6}, {0.75f, 1.0f,  1.0f,  1.25f,  1.25f, 1.5f,  0.0f,   1.5f,  0.25f, 0.5f, 0.5f,  0.75f,
                            1.0f,  1.0f,  1.25f, 1.25f,  1.5f,  1.5f,  0.25f,  0.25f, 0.5f,  0.5f, 0.75f, 0.75f,
                            1.0f,  -0.5f, 1.25f, -0.25f, 1.5f,  0.0f,  1.25f,  1.25f, 1.5f,  1.5f, 1.5f,  1.5f,
                            0.5f,  0.5f,  0.75f, 0.75f,  1.0f,  1.0f,  1.25f,  1.5f,  1.5f,  1.5f, 1.5f,  0.25f,
                            0.5f,  0.75f, 0.75f, 1.0f,   1.0f,  1.25f, -0.25f, 1.5f,  0.0f,  1.5f, 0.25f, -1.25f});
}

TEST(PoolKernelTest, OneDimensionalMaxPool) {
  expect_f32(run_op("MaxPool", {pattern({1, 2, 9}, 3)},
                    {{"kernel_shape", Ints{3}}, {"strides", Ints{2}}, {"pads", Ints{1, 1}}}),
             {1, 2, 5}, {1.0f, 1.25f, 1.5f, 1.5f, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.25f});
}

TEST(PoolKernelTest, AveragePoolExcludesPadsByDefault) {
  expect_f32(run_op("AveragePool", {pattern({1, 1, 5, 5}, 4)},
                    {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}),
             {1, 1, 3, 3},
             {-0.125f, 0.333333333f, 0.25f, 0.0f, -0.0833333333f, -0.166666667f, 0.125f, 0.0416666667f, -0.3125f});
}

TEST(PoolKernelTest, AveragePoolCountsPadsWhenAsked) {
  expect_f32(run_op("AveragePool", {pattern({1, 1, 5, 5}, 4)},
                    {{"kernel_shape", Ints{3, 3}},
                     {"strides", Ints{2, 2}},
                     {"pads", Ints{1, 1, 1, 1}},
                     {"count_include_pad", int64_t{1}}}),
             {1, 1, 3, 3},
             {-0.0555555556f, 0.222222222f, 0.111111111f, 0.0f, -0.0833333333f, -0.111111111f, 0.0555555556f,
              0.0277777778f, -0.138888889f});
}

// The last ceil_mode window reaches past the end pad; those taps are not
// counted even with count_include_pad.
TEST(PoolKernelTest, AveragePoolCeilModeDoesNotCountOverhang) {
  expect_f32(run_op("AveragePool", {pattern({1, 1, 5, 5}, 5)},
                    {{"kernel_shape", Ints{3, 3}},
                     {"strides", Ints{2, 2}},
                     {"pads", Ints{1, 1, 0, 0}},
                     {"ceil_mode", int64_t{1}},
                     {"count_include_pad", int64_t{1}}}),
             {1, 1, 3, 3},
             {0.0555555556f, 0.0277777778f, -0.208333333f, -0.194444444f, -0.194444444f, 0.0833333333f, -0.291666667f,
              -0.25f, -0.0625f});
}

TEST(PoolKernelTest, AveragePoolSameUpperPadsTheEnd) {
  expect_f32(run_op("AveragePool", {pattern({1, 1, 3, 3}, 6)},
                    {{"kernel_shape", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}),
             {1, 1, 3, 3}, {-0.5625f, -0.4375f, -0.375f, -0.1875f, -0.0625f, 0.0f, 0.0f, 0.125f, 1.0f});
}

TEST(PoolKernelTest, GlobalAveragePoolAveragesEachPlane) {
  expect_f32(run_op("GlobalAveragePool", {pattern({2, 3, 3, 5}, 7)}), {2, 3, 1, 1},
             {-0.0666666667f, -0.0333333333f, 0.0f, 0.0333333333f, 0.0666666667f, 0.1f});
}

TEST(PoolKernelTest, LargeMaxPoolMatchesDirectLoop) {
  const Tensor x = pattern({2, 64, 56, 56}, 1);
  Result<Tensor> r =
      run_op("MaxPool", {x}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  Tensor want(TensorType{DType::kFloat32, {2, 64, 28, 28}});
  for (int64_t p = 0; p < 2 * 64; ++p)
    for (int64_t i = 0; i < 28; ++i)
      for (int64_t j = 0; j < 28; ++j) {
        float best = -std::numeric_limits<float>::infinity();
        for (int64_t a = 2 * i - 1; a <= 2 * i + 1; ++a)
          for (int64_t b = 2 * j - 1; b <= 2 * j + 1; ++b)
            if (a >= 0 && a < 56 && b >= 0 && b < 56) best = std::max(best, x.data<float>()[(p * 56 + a) * 56 + b]);
        want.data<float>()[(p * 28 + i) * 28 + j] = best;
      }
  EXPECT_EQ(count_mismatches(*r, want), 0);
}

// ---- Softmax ----------------------------------------------------------------

TEST(SoftmaxKernelTest, Opset13NormalisesAlongOneAxis) {
  expect_f32(
      run_op("Softmax", {pattern({2, 3, 4}, 1)}, {{"axis", int64_t{1}}}, 13), {2, 3, 4},
      {0.186323723f, 0.186323723f, 0.186323723f, 0.36309232f,  0.307195886f, 0.307195886f, 0.307195886f, 0.598638031f,
       0.506480391f, 0.506480391f, 0.506480391f, 0.038269649f, 0.186323723f, 0.186323723f, 0.186323723f, 0.186323723f,
       0.307195886f, 0.307195886f, 0.307195886f, 0.307195886f, 0.506480391f, 0.506480391f, 0.506480391f, 0.506480391f});
  expect_f32(run_op("Softmax", {pattern({2, 3, 4}, 1)}, {}, 13), {2, 3, 4},
             {0.0648185423f, 0.373004957f,  0.0832286558f, 0.478947845f,  0.0648185423f, 0.373004957f,
              0.0832286558f, 0.478947845f,  0.120118203f,  0.691232531f,  0.154234825f,  0.0344144413f,
              0.357953318f,  0.0798701812f, 0.459621158f,  0.102555343f,  0.357953318f,  0.0798701812f,
              0.459621158f,  0.102555343f,  0.357953318f,  0.0798701812f, 0.459621158f,  0.102555343f});
}

// Before opset 13 the input is coerced to 2-D at axis: axis=1 on [2,3,4]
// normalises rows of 12, not columns of 3.
TEST(SoftmaxKernelTest, Opset11CoercesTo2DAtAxis) {
  expect_f32(run_op("Softmax", {pattern({2, 3, 4}, 1)}, {{"axis", int64_t{1}}}, 11), {2, 3, 4},
             {0.0157495959f, 0.0906326665f, 0.0202228814f, 0.116374647f,  0.0259666937f, 0.149428005f,
              0.0333418947f, 0.191869356f,  0.0428118402f, 0.24636513f,   0.054971491f,  0.0122657976f,
              0.0666951949f, 0.0148817095f, 0.0856383255f, 0.0191084933f, 0.109961787f,  0.024535791f,
              0.141193729f,  0.0315045793f, 0.181296336f,  0.0404526806f, 0.232789104f,  0.05194227f});
  expect_f32(run_op("Softmax", {pattern({2, 3, 4}, 1)}, {}, 11), {2, 3, 4},
             {0.0157495959f, 0.0906326665f, 0.0202228814f, 0.116374647f,  0.0259666937f, 0.149428005f,
              0.0333418947f, 0.191869356f,  0.0428118402f, 0.24636513f,   0.054971491f,  0.0122657976f,
              0.0666951949f, 0.0148817095f, 0.0856383255f, 0.0191084933f, 0.109961787f,  0.024535791f,
              0.141193729f,  0.0315045793f, 0.181296336f,  0.0404526806f, 0.232789104f,  0.05194227f});
  expect_f32(run_op("Softmax", {pattern({2, 3, 4}, 1)}, {{"axis", int64_t{2}}}, 11), {2, 3, 4},
             {0.0648185423f, 0.373004957f,  0.0832286558f, 0.478947845f,  0.0648185423f, 0.373004957f,
              0.0832286558f, 0.478947845f,  0.120118203f,  0.691232531f,  0.154234825f,  0.0344144413f,
              0.357953318f,  0.0798701812f, 0.459621158f,  0.102555343f,  0.357953318f,  0.0798701812f,
              0.459621158f,  0.102555343f,  0.357953318f,  0.0798701812f, 0.459621158f,  0.102555343f});
}

// ---- ReduceMean -------------------------------------------------------------

TEST(ReduceMeanKernelTest, KeepsReducedDimsByDefault) {
  expect_f32(run_op("ReduceMean", {pattern({2, 3, 4}, 2)}, {{"axes", Ints{1}}}), {2, 1, 4},
             {-0.5f, 0.166666667f, -0.25f, 0.416666667f, 1.0f, -0.5f, 0.166666667f, -0.25f});
}

TEST(ReduceMeanKernelTest, DropsReducedDimsWithKeepdimsZero) {
  expect_f32(run_op("ReduceMean", {pattern({2, 3, 4}, 2)}, {{"axes", Ints{0, -1}}, {"keepdims", int64_t{0}}}), {3},
             {-0.0625f, 0.4375f, -0.28125f});
}

TEST(ReduceMeanKernelTest, ReducesEverythingWithoutAxes) {
  expect_f32(run_op("ReduceMean", {pattern({2, 3, 4}, 2)}), {1, 1, 1}, {0.03125f});
}

TEST(ReduceMeanKernelTest, ReadsAxesFromSecondInput) {
  const Tensor axes = Tensor::from_vector(DType::kInt64, {1}, Ints{1});
  expect_f32(run_op("ReduceMean", {pattern({2, 3, 4}, 2), axes}, {}, 18), {2, 1, 4},
             {-0.5f, 0.166666667f, -0.25f, 0.416666667f, 1.0f, -0.5f, 0.166666667f, -0.25f});
}

TEST(ReduceMeanKernelTest, NoopWithEmptyAxesCopiesInput) {
  const Tensor x = pattern({2, 3}, 3);
  expect_f32(run_op("ReduceMean", {x}, {{"noop_with_empty_axes", int64_t{1}}}, 18), {2, 3}, x.to_float_vector());
}

}  // namespace
}  // namespace hetsched

namespace hetsched {
namespace {

// 3-D convs and pools (video and volume models) against the ONNX
// definitions written out as direct loops in double, here in the test.
struct Conv3dCase {
  Shape x, w;
  int64_t group;
  Ints strides, pads, dilations;
};

Floats direct_conv3d(const Tensor& x, const Tensor& w, const Tensor& b, const Conv3dCase& c, const Shape& y) {
  Floats out(static_cast<size_t>(shape_elements(y)));
  const int64_t cin_g = c.w[1], cout_g = c.w[0] / c.group;
  for (int64_t n = 0; n < y[0]; ++n)
    for (int64_t m = 0; m < y[1]; ++m)
      for (int64_t od = 0; od < y[2]; ++od)
        for (int64_t oh = 0; oh < y[3]; ++oh)
          for (int64_t ow = 0; ow < y[4]; ++ow) {
            double sum = b.data<float>()[m];
            const int64_t g = m / cout_g;
            for (int64_t ci = 0; ci < cin_g; ++ci)
              for (int64_t kd = 0; kd < c.w[2]; ++kd)
                for (int64_t kh = 0; kh < c.w[3]; ++kh)
                  for (int64_t kw = 0; kw < c.w[4]; ++kw) {
                    const int64_t id = od * c.strides[0] - c.pads[0] + kd * c.dilations[0];
                    const int64_t ih = oh * c.strides[1] - c.pads[1] + kh * c.dilations[1];
                    const int64_t iw = ow * c.strides[2] - c.pads[2] + kw * c.dilations[2];
                    if (id < 0 || ih < 0 || iw < 0 || id >= c.x[2] || ih >= c.x[3] || iw >= c.x[4]) continue;
                    const int64_t xc = g * cin_g + ci;
                    sum += static_cast<double>(
                               x.data<float>()[(((n * c.x[1] + xc) * c.x[2] + id) * c.x[3] + ih) * c.x[4] + iw]) *
                           w.data<float>()[(((m * cin_g + ci) * c.w[2] + kd) * c.w[3] + kh) * c.w[4] + kw];
                  }
            out[static_cast<size_t>((((n * y[1] + m) * y[2] + od) * y[3] + oh) * y[4] + ow)] = static_cast<float>(sum);
          }
  return out;
}

TEST(Conv3dKernelTest, MatchesTheDirectLoopsWithStridesPadsDilationsAndGroups) {
  // A 3x3x3 video stem with stride (1, 2, 2); a grouped, dilated conv with
  // uneven pads (pads: begins then ends).
  for (const Conv3dCase& c :
       {Conv3dCase{{1, 3, 5, 9, 8}, {4, 3, 3, 3, 3}, 1, {1, 2, 2}, {1, 1, 1, 1, 1, 1}, {1, 1, 1}},
        Conv3dCase{{2, 4, 6, 5, 7}, {6, 2, 2, 3, 1}, 2, {2, 1, 1}, {0, 2, 0, 1, 0, 0}, {2, 1, 1}}}) {
    const Tensor x = pattern(c.x, 1), w = pattern(c.w, 2), b = pattern({c.w[0]}, 3);
    const Result<Tensor> y = run_op("Conv", {x, w, b},
                                    {{"group", c.group}, {"strides", c.strides}, {"pads", c.pads}, {"dilations", c.dilations}});
    ASSERT_TRUE(y.is_ok()) << y.status().message();
    expect_f32(y, y->shape(), direct_conv3d(x, w, b, c, y->shape()));
  }
}

TEST(Pool3dKernelTest, MaxAndAverageOverPaddedVolumeWindows) {
  // [1, 1, 2, 2, 3] = 0..11; window 2x2x2, stride 2, pads 1 at the end of
  // W only: outputs [1, 1, 1, 1, 2].
  Floats v(12);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const Tensor x = f32_tensor({1, 1, 2, 2, 3}, v);
  const AttrList attrs{{"kernel_shape", Ints{2, 2, 2}}, {"strides", Ints{2, 2, 2}}, {"pads", Ints{0, 0, 0, 0, 0, 1}}};
  expect_f32(run_op("MaxPool", {x}, attrs), {1, 1, 1, 1, 2}, {10, 11});
  // First window: 0 1 3 4 6 7 9 10 (mean 5); second: 2 5 8 11 and four pad
  // taps: 6.5 without them, 3.25 counting them.
  expect_f32(run_op("AveragePool", {x}, attrs), {1, 1, 1, 1, 2}, {5, 6.5f});
  AttrList with_pad{{"kernel_shape", Ints{2, 2, 2}},
                    {"strides", Ints{2, 2, 2}},
                    {"pads", Ints{0, 0, 0, 0, 0, 1}},
                    {"count_include_pad", int64_t{1}}};
  expect_f32(run_op("AveragePool", {x}, with_pad), {1, 1, 1, 1, 2}, {5, 3.25f});
}

}  // namespace
}  // namespace hetsched

namespace hetsched {
namespace {

TEST(MaxUnpoolKernelTest, PutsValuesBackAndRefusesIndicesOffTheOutput) {
  // X = [[5, 6], [7, 8]] from a 2x2 / stride 2 pool of a 4x4 map: I says
  // where each came from.
  const Tensor x = f32_tensor({1, 1, 2, 2}, {5, 6, 7, 8});
  const AttrList attrs{{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}};
  Floats want(16, 0.f);
  want[5] = 5;
  want[7] = 6;
  want[13] = 7;
  want[15] = 8;
  expect_f32(run_op("MaxUnpool", {x, Tensor::from_vector(DType::kInt64, {1, 1, 2, 2}, Ints{5, 7, 13, 15})}, attrs),
             {1, 1, 4, 4}, want);
  const Result<Tensor> bad =
      run_op("MaxUnpool", {x, Tensor::from_vector(DType::kInt64, {1, 1, 2, 2}, Ints{5, 7, 13, 16})}, attrs);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("I[3] = 16 is outside"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace hetsched
