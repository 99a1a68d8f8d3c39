// Portable CPU kernels of the elementwise ops, run one node at a time.
//
// Inputs come from pattern() (values k/4, exact in f32). Expected values are
// hand-derived or were printed by test/data/gen_kernel_cases.py (numpy) and
// pasted here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "delegates/cpu/kernel.h"
#include "graph/builder.h"

namespace hetsched {
namespace {

using Floats = std::vector<float>;
using Ints = std::vector<int64_t>;

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
Tensor i64_tensor(Shape shape, const Ints& values) {
  return Tensor::from_vector(DType::kInt64, std::move(shape), values);
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

// Builds the one-node graph of `b` with output `y` at `opset` (shape
// inference sizes the output), then runs its kernel. Every data input is a
// constant of the graph.
Result<Tensor> run_node(GraphBuilder& b, ValueId y, int opset = 17) {
  b.raw().set_opset(opset);
  b.output(y);
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  if (g.num_nodes() != 1) return invalid_argument("expected a one-node graph");
  const Node& node = g.node(0);
  std::vector<const Tensor*> inputs;
  for (ValueId v : node.inputs) inputs.push_back(v == kNoValue ? nullptr : g.value(v).constant.get());
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> outs, run_kernel(node, inputs, {g.value(node.outputs[0]).type}, g.opset()));
  return std::move(outs[0]);
}

// One-input op over the constant `x`.
Result<Tensor> run_unary(const std::string& op, const Tensor& x,
                         std::initializer_list<std::pair<std::string, Attribute>> attrs = {}) {
  GraphBuilder b("unary");
  const ValueId in = b.constant("x", x);
  return run_node(b, b.op(op, {in}, attrs, "n"));
}

Result<Tensor> run_binary(const std::string& op, const Tensor& a, const Tensor& c) {
  GraphBuilder b("binary");
  const ValueId va = b.constant("a", a);
  const ValueId vb = b.constant("b", c);
  return run_node(b, b.op(op, {va, vb}, {}, "n"));
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

void expect_i64(const Result<Tensor>& r, const Shape& shape, const Ints& expected) {
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->dtype(), DType::kInt64);
  ASSERT_EQ(r->shape(), shape);
  EXPECT_EQ(r->to_int64_vector(), expected);
}

const Floats kUnaryInput = {-3.5f, -1.f, -0.25f, 0.f, 0.5f, 1.f, 2.75f, 4.f};

TEST(ElementwiseKernelTest, AddBroadcastsF32LikeNumpy) {
  expect_f32(run_binary("Add", pattern({2, 3, 4}, 0), pattern({3, 1}, 5)), {2, 3, 4},
             {-1.75f, 0.0f,   -1.5f, 0.25f, 0.5f, 2.25f, 0.75f, 2.5f,  -0.5f, 1.25f, -0.25f, 1.5f,
              -0.25f, -1.75f, 0.0f,  -1.5f, 2.0f, 0.5f,  2.25f, 0.75f, 1.0f,  -0.5f, 1.25f,  -0.25f});
}

TEST(ElementwiseKernelTest, MulBroadcastsBothInputs) {
  expect_f32(run_binary("Mul", pattern({3, 1}, 1), pattern({1, 4}, 2)), {3, 4},
             {1.25f, -0.9375f, 0.9375f, -1.25f, -0.5f, 0.375f, -0.375f, 0.5f, 1.0f, -0.75f, 0.75f, -1.0f});
}

TEST(ElementwiseKernelTest, SubBroadcastsOddRanksAndPrimeDims) {
  expect_f32(
      run_binary("Sub", pattern({2, 1, 3}, 3), pattern({5, 1}, 4)), {2, 5, 3},
      {-0.25f, 1.5f,  0.0f, -2.0f, -0.25f, -1.75f, -0.5f, 1.25f, -0.25f, -2.25f, -0.5f,  -2.0f, -0.75f, 1.0f,   -0.5f,
       1.75f,  0.25f, 2.0f, 0.0f,  -1.5f,  0.25f,  1.5f,  0.0f,  1.75f,  -0.25f, -1.75f, 0.0f,  1.25f,  -0.25f, 1.5f});
}

TEST(ElementwiseKernelTest, DivDividesF32) {
  expect_f32(run_binary("Div", pattern({2, 3}, 1), f32_tensor({3}, {0.5f, -2.f, 4.f})), {2, 3},
             {-2.5f, -0.25f, -0.25f, 1.5f, 0.375f, 0.25f});
}

TEST(ElementwiseKernelTest, PowBroadcastsExponent) {
  expect_f32(
      run_binary("Pow", f32_tensor({2, 3}, {1.25f, 1.f, 1.f, 1.25f, 0.75f, 1.5f}), f32_tensor({3}, {2.f, 0.5f, -1.5f})),
      {2, 3}, {1.5625f, 1.0f, 1.0f, 1.5625f, 0.866025404f, 0.544331054f});
}

TEST(ElementwiseKernelTest, ScalarBroadcastsAgainstTensor) {
  expect_f32(run_binary("Mul", f32_tensor({}, {-2.f}), f32_tensor({1, 3}, {1.f, -0.5f, 3.f})), {1, 3},
             {-2.f, 1.f, -6.f});
}

TEST(ElementwiseKernelTest, IntegerArithmeticBroadcasts) {
  const Tensor a = i64_tensor({2, 3}, {1, 2, 3, 40, 50, 60});
  expect_i64(run_binary("Add", a, i64_tensor({3}, {10, 20, 30})), {2, 3}, {11, 22, 33, 50, 70, 90});
  expect_i64(run_binary("Sub", a, i64_tensor({2, 1}, {1, 100})), {2, 3}, {0, 1, 2, -60, -50, -40});
  expect_i64(run_binary("Mul", a, i64_tensor({}, {-3})), {2, 3}, {-3, -6, -9, -120, -150, -180});
}

TEST(ElementwiseKernelTest, IntegerDivTruncatesTowardsZero) {
  expect_i64(run_binary("Div", i64_tensor({4}, {7, -7, 9, -9}), i64_tensor({4}, {2, 2, -4, -4})), {4}, {3, -3, -2, 2});
}

TEST(ElementwiseKernelTest, IntegerDivByZeroIsAnError) {
  Result<Tensor> r = run_binary("Div", i64_tensor({2}, {1, 2}), i64_tensor({2}, {1, 0}));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("node 'n' (Div)"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("division by zero"), std::string::npos) << r.status().message();
}

TEST(ElementwiseKernelTest, IntegerDivOfTheMinimumByMinusOneIsAnError) {
  const int64_t min = std::numeric_limits<int64_t>::min();
  Result<Tensor> r = run_binary("Div", i64_tensor({2}, {min, 4}), i64_tensor({2}, {-1, 2}));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("overflows"), std::string::npos) << r.status().message();
}

// Shape arithmetic in exported graphs (LayerNormalization written out, axes
// counted from the end) negates i64 values: numpy's wrap at the minimum.
TEST(ElementwiseKernelTest, NegAndAbsOfIntegersWrapAtTheMinimum) {
  const int64_t min = std::numeric_limits<int64_t>::min();
  expect_i64(run_unary("Neg", i64_tensor({4}, {3, -2, 0, min})), {4}, {-3, 2, 0, min});
  expect_i64(run_unary("Abs", i64_tensor({4}, {3, -2, 0, min})), {4}, {3, 2, 0, min});
  const Result<Tensor> i32 = run_unary("Neg", Tensor::from_vector(DType::kInt32, {2}, std::vector<int32_t>{7, -9}));
  ASSERT_TRUE(i32.is_ok()) << i32.status().message();
  EXPECT_EQ(i32->to_int64_vector(), (Ints{-7, 9}));
}

// Opset 12 lets Pow's exponent differ in type from its base; the output has
// the base's type, an integer one saturating.
TEST(ElementwiseKernelTest, PowOfMixedTypesHasTheBasesType) {
  expect_f32(run_binary("Pow", f32_tensor({3}, {2.f, 3.f, 0.5f}), i64_tensor({3}, {3, 2, -1})), {3}, {8.f, 9.f, 2.f});
  expect_i64(run_binary("Pow", i64_tensor({3}, {2, -3, 10}), f32_tensor({3}, {10.f, 3.f, 30.f})), {3},
             {1024, -27, std::numeric_limits<int64_t>::max()});
}

TEST(ElementwiseKernelTest, KernelRejectsMixedDtypesNamingBoth) {
  Node node;
  node.name = "add";
  node.op = "Add";
  const Tensor a = f32_tensor({2}, {1.f, 2.f});
  const Tensor c = i64_tensor({2}, {1, 2});
  Result<std::vector<Tensor>> r = run_kernel(node, {&a, &c}, {TensorType{DType::kFloat32, {2}}}, 17);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("node 'add' (Add)"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("f32[2]"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("i64[2]"), std::string::npos) << r.status().message();
}

// Big enough to run in parallel row chunks: every element is checked
// against the plain formula x[n,c,h,w] + b[c].
TEST(ElementwiseKernelTest, LargeChannelBroadcastMatchesPlainLoop) {
  const Tensor x = pattern({1, 64, 56, 56}, 1);
  const Tensor bias = pattern({1, 64, 1, 1}, 2);
  Result<Tensor> r = run_binary("Add", x, bias);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->shape(), (Shape{1, 64, 56, 56}));
  const float* px = x.data<float>();
  const float* pb = bias.data<float>();
  const float* py = r->data<float>();
  int64_t mismatches = 0;
  for (int64_t i = 0; i < x.num_elements(); ++i) mismatches += py[i] != px[i] + pb[i / (56 * 56)];
  EXPECT_EQ(mismatches, 0);
}

TEST(ElementwiseKernelTest, LargeUnaryMatchesPlainLoop) {
  const Tensor x = pattern({3, 100003}, 4);
  Result<Tensor> r = run_unary("Neg", x);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  int64_t mismatches = 0;
  for (int64_t i = 0; i < x.num_elements(); ++i) mismatches += r->data<float>()[i] != -x.data<float>()[i];
  EXPECT_EQ(mismatches, 0);
}

TEST(ElementwiseKernelTest, PiecewiseUnaryOpsMatchHandValues) {
  const Tensor x = f32_tensor({2, 4}, kUnaryInput);
  expect_f32(run_unary("Relu", x), {2, 4}, {0.f, 0.f, 0.f, 0.f, 0.5f, 1.f, 2.75f, 4.f});
  expect_f32(run_unary("Neg", x), {2, 4}, {3.5f, 1.f, 0.25f, 0.f, -0.5f, -1.f, -2.75f, -4.f});
  expect_f32(run_unary("Abs", x), {2, 4}, {3.5f, 1.f, 0.25f, 0.f, 0.5f, 1.f, 2.75f, 4.f});
}

TEST(ElementwiseKernelTest, TranscendentalUnaryOpsMatchNumpy) {
  const Tensor x = f32_tensor({8}, kUnaryInput);
  expect_f32(run_unary("Sigmoid", x), {8},
             {0.0293122308f, 0.268941421f, 0.437823499f, 0.5f, 0.622459331f, 0.731058579f, 0.93991335f, 0.98201379f});
  expect_f32(run_unary("Tanh", x), {8},
             {-0.998177898f, -0.761594156f, -0.244918662f, 0.0f, 0.462117157f, 0.761594156f, 0.991859725f, 0.9993293f});
  expect_f32(run_unary("Exp", x), {8},
             {0.0301973834f, 0.367879441f, 0.778800783f, 1.0f, 1.64872127f, 2.71828183f, 15.6426319f, 54.59815f});
  expect_f32(
      run_unary("Sin", x), {8},
      {0.350783228f, -0.841470985f, -0.247403959f, 0.0f, 0.479425539f, 0.841470985f, 0.381660992f, -0.756802495f});
  expect_f32(
      run_unary("Cos", x), {8},
      {-0.936456687f, 0.540302306f, 0.968912422f, 1.0f, 0.877582562f, 0.540302306f, -0.924302379f, -0.653643621f});
  expect_f32(run_unary("Sqrt", f32_tensor({4}, {0.25f, 1.f, 2.f, 9.f})), {4}, {0.5f, 1.0f, 1.41421356f, 3.0f});
  expect_f32(run_unary("Reciprocal", f32_tensor({4}, {0.25f, -2.f, 3.f, 7.f})), {4},
             {4.0f, -0.5f, 0.333333333f, 0.142857143f});
}

TEST(ElementwiseKernelTest, HardSigmoidUsesDefaultAndGivenAlphaBeta) {
  const Tensor x = f32_tensor({8}, kUnaryInput);
  expect_f32(run_unary("HardSigmoid", x), {8}, {0.0f, 0.3f, 0.45f, 0.5f, 0.6f, 0.7f, 1.0f, 1.0f});
  expect_f32(run_unary("HardSigmoid", x, {{"alpha", 0.5f}, {"beta", 0.25f}}), {8},
             {0.0f, 0.0f, 0.125f, 0.25f, 0.5f, 0.75f, 1.0f, 1.0f});
}

TEST(ElementwiseKernelTest, HardSwishMatchesNumpy) {
  expect_f32(run_unary("HardSwish", f32_tensor({8}, kUnaryInput)), {8},
             {-0.0f, -0.333333333f, -0.114583333f, 0.0f, 0.291666667f, 0.666666667f, 2.63541667f, 4.0f});
}

TEST(ElementwiseKernelTest, ClipOpset13ClampsToInputBounds) {
  GraphBuilder b("clip");
  const ValueId x = b.constant("x", f32_tensor({8}, kUnaryInput));
  const ValueId lo = b.constant_f32("lo", {}, {-1.f});
  const ValueId hi = b.constant_f32("hi", {}, {2.f});
  expect_f32(run_node(b, b.op("Clip", {x, lo, hi}), 13), {8}, {-1.f, -1.f, -0.25f, 0.f, 0.5f, 1.f, 2.f, 2.f});
}

TEST(ElementwiseKernelTest, ClipOpset13WithOmittedMinClampsOnlyAbove) {
  GraphBuilder b("clip");
  const ValueId x = b.constant("x", f32_tensor({8}, kUnaryInput));
  const ValueId hi = b.constant_f32("hi", {1}, {0.5f});
  expect_f32(run_node(b, b.op("Clip", {x, kNoValue, hi}), 13), {8}, {-3.5f, -1.f, -0.25f, 0.f, 0.5f, 0.5f, 0.5f, 0.5f});
}

TEST(ElementwiseKernelTest, ClipOpset13WithOnlyMinClampsOnlyBelow) {
  GraphBuilder b("clip");
  const ValueId x = b.constant("x", f32_tensor({8}, kUnaryInput));
  const ValueId lo = b.constant_f32("lo", {}, {0.f});
  expect_f32(run_node(b, b.op("Clip", {x, lo}), 13), {8}, {0.f, 0.f, 0.f, 0.f, 0.5f, 1.f, 2.75f, 4.f});
}

TEST(ElementwiseKernelTest, ClipOpset10ReadsMinMaxAttributes) {
  GraphBuilder b("clip");
  const ValueId x = b.constant("x", f32_tensor({8}, kUnaryInput));
  expect_f32(run_node(b, b.op("Clip", {x}, {{"min", -0.5f}, {"max", 1.f}}), 10), {8},
             {-0.5f, -0.5f, -0.25f, 0.f, 0.5f, 1.f, 1.f, 1.f});
}

TEST(ElementwiseKernelTest, ClipOpset10WithoutAttributesIsIdentity) {
  GraphBuilder b("clip");
  const ValueId x = b.constant("x", f32_tensor({8}, kUnaryInput));
  expect_f32(run_node(b, b.op("Clip", {x}), 10), {8}, kUnaryInput);
}

}  // namespace
}  // namespace hetsched
