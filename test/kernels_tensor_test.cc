// Portable CPU kernels of the data-movement ops, run one node at a time.
//
// Expected values are hand-derived or were generated once with numpy
// (np.transpose, slicing, np.take, np.take_along_axis, and an independent
// numpy transcription of ONNX's Resize reference with edge-padded neighbours)
// and pasted here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "delegates/cpu/kernel.h"
#include "graph/builder.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

TensorType f32(Shape shape) { return {DType::kFloat32, std::move(shape)}; }

Floats arange(int n) {
  Floats v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.f);
  return v;
}

Tensor f32_tensor(Shape shape, const Floats& values) {
  return Tensor::from_vector(DType::kFloat32, std::move(shape), values);
}
Tensor i64_tensor(Shape shape, const Ints& values) {
  return Tensor::from_vector(DType::kInt64, std::move(shape), values);
}

// Builds the graph of `b` (with `y` as its output) at `opset`, then runs the
// CPU kernel of its only node. Graph inputs are fed from `feeds`, in the
// order they were declared; constants come from the graph.
Result<Tensor> run_node(GraphBuilder& b, ValueId y, const std::vector<Tensor>& feeds, int opset = 17) {
  b.raw().set_opset(opset);
  b.output(y);
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  if (g.num_nodes() != 1) return invalid_argument("expected a one-node graph");
  const Node& node = g.node(0);
  std::vector<const Tensor*> inputs;
  for (ValueId v : node.inputs) {
    if (v == kNoValue) {
      inputs.push_back(nullptr);
    } else if (g.value(v).is_constant()) {
      inputs.push_back(g.value(v).constant.get());
    } else {
      const auto& ins = g.inputs();
      const size_t i = static_cast<size_t>(std::find(ins.begin(), ins.end(), v) - ins.begin());
      if (i >= feeds.size()) return invalid_argument("no feed for input '" + g.value(v).name + "'");
      inputs.push_back(&feeds[i]);
    }
  }
  Tensor out(g.value(node.outputs[0]).type);
  std::vector<Tensor*> outputs{&out};
  const cpu::KernelFn* kernel = cpu::find_kernel(node.op);
  if (!kernel) return not_found("no CPU kernel for " + node.op);
  cpu::KernelContext ctx{node, inputs, outputs, g.opset()};
  HS_RETURN_IF_ERROR((*kernel)(ctx));
  return out;
}

template <typename T>
void expect_values(const Result<Tensor>& got, DType dtype, const Shape& shape, const std::vector<T>& want) {
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_EQ(got->dtype(), dtype);
  ASSERT_EQ(got->shape(), shape);
  ASSERT_EQ(static_cast<size_t>(got->num_elements()), want.size());
  const T* data = got->data<T>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(data[i], want[i]) << "element " << i;
}

void expect_near(const Result<Tensor>& got, const Shape& shape, const Floats& want, float tol = 1e-5f) {
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_EQ(got->dtype(), DType::kFloat32);
  ASSERT_EQ(got->shape(), shape);
  ASSERT_EQ(static_cast<size_t>(got->num_elements()), want.size());
  const float* data = got->data<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(data[i], want[i], tol) << "element " << i;
}

void expect_kernel_error(const Result<Tensor>& got, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(got.is_ok());
  for (const std::string& part : parts)
    EXPECT_NE(got.status().message().find(part), std::string::npos)
        << "missing '" << part << "' in: " << got.status().message();
}

// --- Transpose -----------------------------------------------------------------

TEST(TransposeKernelTest, Permutes3D) {
  GraphBuilder b("g");
  ValueId y = b.op("Transpose", {b.input("x", f32({2, 3, 4}))}, {{"perm", Ints{1, 2, 0}}});
  expect_values<float>(run_node(b, y, {f32_tensor({2, 3, 4}, arange(24))}), DType::kFloat32, {3, 4, 2},
                       {0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23});
}

TEST(TransposeKernelTest, ReversesDimsByDefault) {
  GraphBuilder b("g");
  ValueId y = b.op("Transpose", {b.input("x", f32({2, 3, 4}))});
  expect_values<float>(run_node(b, y, {f32_tensor({2, 3, 4}, arange(24))}), DType::kFloat32, {4, 3, 2},
                       {0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23});
}

TEST(TransposeKernelTest, Permutes4DToNhwc) {
  GraphBuilder b("g");
  ValueId y = b.op("Transpose", {b.input("x", f32({2, 3, 4, 5}))}, {{"perm", Ints{0, 2, 3, 1}}});
  expect_values<float>(
      run_node(b, y, {f32_tensor({2, 3, 4, 5}, arange(120))}), DType::kFloat32, {2, 4, 5, 3},
      {0,  20, 40,  1,  21, 41,  2,  22, 42,  3,  23, 43,  4,  24, 44,  5,  25, 45,  6,  26, 46,  7,  27, 47,
       8,  28, 48,  9,  29, 49,  10, 30, 50,  11, 31, 51,  12, 32, 52,  13, 33, 53,  14, 34, 54,  15, 35, 55,
       16, 36, 56,  17, 37, 57,  18, 38, 58,  19, 39, 59,  60, 80, 100, 61, 81, 101, 62, 82, 102, 63, 83, 103,
       64, 84, 104, 65, 85, 105, 66, 86, 106, 67, 87, 107, 68, 88, 108, 69, 89, 109, 70, 90, 110, 71, 91, 111,
       72, 92, 112, 73, 93, 113, 74, 94, 114, 75, 95, 115, 76, 96, 116, 77, 97, 117, 78, 98, 118, 79, 99, 119});
}

TEST(TransposeKernelTest, Permutes4DWithInnermostAxisMoved) {
  GraphBuilder b("g");
  ValueId y = b.op("Transpose", {b.input("x", f32({2, 3, 4, 5}))}, {{"perm", Ints{3, 1, 0, 2}}});
  expect_values<float>(
      run_node(b, y, {f32_tensor({2, 3, 4, 5}, arange(120))}), DType::kFloat32, {5, 3, 2, 4},
      {0, 5, 10, 15, 60, 65, 70, 75, 20, 25, 30, 35, 80, 85, 90, 95, 40, 45, 50, 55, 100, 105, 110, 115,
       1, 6, 11, 16, 61, 66, 71, 76, 21, 26, 31, 36, 81, 86, 91, 96, 41, 46, 51, 56, 101, 106, 111, 116,
       2, 7, 12, 17, 62, 67, 72, 77, 22, 27, 32, 37, 82, 87, 92, 97, 42, 47, 52, 57, 102, 107, 112, 117,
       3, 8, 13, 18, 63, 68, 73, 78, 23, 28, 33, 38, 83, 88, 93, 98, 43, 48, 53, 58, 103, 108, 113, 118,
       4, 9, 14, 19, 64, 69, 74, 79, 24, 29, 34, 39, 84, 89, 94, 99, 44, 49, 54, 59, 104, 109, 114, 119});
}

TEST(TransposeKernelTest, MovesOneByteElements) {
  GraphBuilder b("g");
  ValueId y = b.op("Transpose", {b.input("x", {DType::kUInt8, {2, 3}})});
  Tensor x = Tensor::from_vector<uint8_t>(DType::kUInt8, {2, 3}, {1, 2, 3, 250, 251, 252});
  expect_values<uint8_t>(run_node(b, y, {x}), DType::kUInt8, {3, 2}, {1, 250, 2, 251, 3, 252});
}

// --- Reshape and the other re-labelling ops -------------------------------------------

TEST(ReshapeKernelTest, KeepsDataUnderTheNewShape) {
  GraphBuilder b("g");
  ValueId y = b.op("Reshape", {b.input("x", f32({2, 3})), b.constant_i64("s", {2}, {3, -1})});
  expect_values<float>(run_node(b, y, {f32_tensor({2, 3}, {5, 4, 3, 2, 1, 0})}), DType::kFloat32, {3, 2},
                       {5, 4, 3, 2, 1, 0});
}

TEST(ReshapeKernelTest, RelabellingOpsKeepBoolBytes) {
  const std::vector<uint8_t> bits{1, 0, 0, 1, 1, 0};
  const Tensor x = Tensor::from_vector(DType::kBool, {1, 2, 3}, bits);
  struct Case {
    std::string op;
    Shape want;
  };
  for (const Case& c : {Case{"Flatten", {1, 6}}, Case{"Identity", {1, 2, 3}}, Case{"Squeeze", {2, 3}}}) {
    GraphBuilder b("g");
    ValueId y = b.op(c.op, {b.input("x", {DType::kBool, {1, 2, 3}})});
    expect_values<uint8_t>(run_node(b, y, {x}), DType::kBool, c.want, bits);
  }
  GraphBuilder b("g");
  ValueId y = b.op("Unsqueeze", {b.input("x", {DType::kBool, {1, 2, 3}}), b.constant_i64("a", {1}, {-1})});
  expect_values<uint8_t>(run_node(b, y, {x}), DType::kBool, {1, 2, 3, 1}, bits);
}

// --- Concat ---------------------------------------------------------------------

TEST(ConcatKernelTest, JoinsThreeInputsOnAxis0) {
  GraphBuilder b("g");
  ValueId y = b.op("Concat", {b.input("a", f32({1, 2})), b.input("b", f32({2, 2})), b.input("c", f32({1, 2}))},
                   {{"axis", int64_t{0}}});
  expect_values<float>(
      run_node(b, y, {f32_tensor({1, 2}, {1, 2}), f32_tensor({2, 2}, {3, 4, 5, 6}), f32_tensor({1, 2}, {7, 8})}),
      DType::kFloat32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
}

TEST(ConcatKernelTest, JoinsThreeInputsOnLastAxis) {
  GraphBuilder b("g");
  ValueId y = b.op("Concat", {b.input("a", f32({2, 1})), b.input("b", f32({2, 2})), b.input("c", f32({2, 3}))},
                   {{"axis", int64_t{-1}}});
  expect_values<float>(run_node(b, y,
                                {f32_tensor({2, 1}, {1, 2}), f32_tensor({2, 2}, {10, 11, 20, 21}),
                                 f32_tensor({2, 3}, {100, 101, 102, 200, 201, 202})}),
                       DType::kFloat32, {2, 6}, {1, 10, 11, 100, 101, 102, 2, 20, 21, 200, 201, 202});
}

TEST(ConcatKernelTest, JoinsI64AlongTheMiddleAxis) {
  GraphBuilder b("g");
  ValueId y = b.op("Concat",
                   {b.input("a", {DType::kInt64, {2, 1, 2}}), b.constant_i64("b", {2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                    b.input("c", {DType::kInt64, {2, 1, 2}})},
                   {{"axis", int64_t{1}}});
  const int64_t big = 5000000000;  // does not fit 32 bits
  expect_values<int64_t>(
      run_node(b, y, {i64_tensor({2, 1, 2}, {-big, big, 7, -7}), i64_tensor({2, 1, 2}, {-1, -2, -3, -4})}),
      DType::kInt64, {2, 4, 2}, {-big, big, 1, 2, 3, 4, -1, -2, 7, -7, 5, 6, 7, 8, -3, -4});
}

// --- Slice ----------------------------------------------------------------------

TEST(SliceKernelTest, WalksBackwardsWithNegativeSteps) {
  GraphBuilder b("g");
  // numpy: x[-1:-100:-2, 100:0:-1]
  ValueId y = b.op("Slice",
                   {b.input("x", f32({4, 5})), b.constant_i64("s", {2}, {-1, 100}), b.constant_i64("e", {2}, {-100, 0}),
                    b.constant_i64("a", {2}, {0, 1}), b.constant_i64("st", {2}, {-2, -1})});
  expect_values<float>(run_node(b, y, {f32_tensor({4, 5}, arange(20))}), DType::kFloat32, {2, 4},
                       {19, 18, 17, 16, 9, 8, 7, 6});
}

TEST(SliceKernelTest, ClampsInt64MaxEndWithStepTwo) {
  GraphBuilder b("g");
  // numpy: x[:, 1::2]
  ValueId y =
      b.op("Slice", {b.input("x", f32({4, 5})), b.constant_i64("s", {1}, {1}), b.constant_i64("e", {1}, {kInt64Max}),
                     b.constant_i64("a", {1}, {-1}), b.constant_i64("st", {1}, {2})});
  expect_values<float>(run_node(b, y, {f32_tensor({4, 5}, arange(20))}), DType::kFloat32, {4, 2},
                       {1, 3, 6, 8, 11, 13, 16, 18});
}

TEST(SliceKernelTest, ReversesToIndexZeroWithInt64MinEnd) {
  GraphBuilder b("g");
  // numpy: x[-3:10, ::-2]
  ValueId y = b.op("Slice", {b.input("x", f32({4, 5})), b.constant_i64("s", {2}, {-3, -1}),
                             b.constant_i64("e", {2}, {10, kInt64Min}), b.constant_i64("a", {2}, {0, 1}),
                             b.constant_i64("st", {2}, {1, -2})});
  expect_values<float>(run_node(b, y, {f32_tensor({4, 5}, arange(20))}), DType::kFloat32, {3, 3},
                       {9, 7, 5, 14, 12, 10, 19, 17, 15});
}

TEST(SliceKernelTest, TakesAttributesInOpset9) {
  GraphBuilder b("g");
  ValueId y = b.op("Slice", {b.input("x", f32({4, 5}))}, {{"starts", Ints{1, -2}}, {"ends", Ints{3, 1000}}});
  // rows 1..2, columns 3..4
  expect_values<float>(run_node(b, y, {f32_tensor({4, 5}, arange(20))}, 9), DType::kFloat32, {2, 2}, {8, 9, 13, 14});
}

// --- Gather ----------------------------------------------------------------------

TEST(GatherKernelTest, Axis0With2DNegativeIndices) {
  GraphBuilder b("g");
  ValueId y = b.op("Gather", {b.input("x", f32({2, 3, 4})), b.constant_i64("i", {2, 1}, {-1, 0})});
  expect_values<float>(run_node(b, y, {f32_tensor({2, 3, 4}, arange(24))}), DType::kFloat32, {2, 1, 3, 4},
                       {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
}

TEST(GatherKernelTest, Axis1With2DIndicesFedAtRunTime) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Gather", {b.input("x", f32({2, 3, 4})), b.input("i", {DType::kInt64, {2, 2}})}, {{"axis", int64_t{1}}});
  expect_values<float>(run_node(b, y, {f32_tensor({2, 3, 4}, arange(24)), i64_tensor({2, 2}, {0, -1, 2, 1})}),
                       DType::kFloat32, {2, 2, 2, 4}, {0,  1,  2,  3,  8,  9,  10, 11, 8,  9,  10, 11, 4,  5,  6,  7,
                                                       12, 13, 14, 15, 20, 21, 22, 23, 20, 21, 22, 23, 16, 17, 18, 19});
}

TEST(GatherKernelTest, Axis2WithI32Indices) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Gather", {b.input("x", f32({2, 3, 4})), b.input("i", {DType::kInt32, {1, 3}})}, {{"axis", int64_t{2}}});
  Tensor idx = Tensor::from_vector<int32_t>(DType::kInt32, {1, 3}, {-1, 0, 2});
  expect_values<float>(run_node(b, y, {f32_tensor({2, 3, 4}, arange(24)), idx}), DType::kFloat32, {2, 3, 1, 3},
                       {3, 0, 2, 7, 4, 6, 11, 8, 10, 15, 12, 14, 19, 16, 18, 23, 20, 22});
}

TEST(GatherKernelTest, GathersI64Rows) {
  GraphBuilder b("g");
  ValueId y = b.op("Gather", {b.input("x", {DType::kInt64, {3, 4}}), b.constant_i64("i", {2}, {2, -3})});
  Ints data(12);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<int64_t>(i) * 1000000000001;
  expect_values<int64_t>(
      run_node(b, y, {i64_tensor({3, 4}, data)}), DType::kInt64, {2, 4},
      {8000000000008, 9000000000009, 10000000000010, 11000000000011, 0, 1000000000001, 2000000000002, 3000000000003});
}

TEST(GatherKernelTest, ScalarIndexDropsTheAxis) {
  GraphBuilder b("g");
  ValueId y = b.op("Gather", {b.input("x", f32({3, 2})), b.constant_i64("i", {}, {-2})}, {{"axis", int64_t{0}}});
  expect_values<float>(run_node(b, y, {f32_tensor({3, 2}, arange(6))}), DType::kFloat32, {2}, {2, 3});
}

TEST(GatherKernelTest, OutOfRangeIndexIsAnError) {
  for (int64_t bad : {3, -4}) {
    GraphBuilder b("g");
    ValueId y =
        b.op("Gather", {b.input("x", f32({2, 3})), b.input("i", {DType::kInt64, {2}})}, {{"axis", int64_t{1}}}, "ga");
    expect_kernel_error(run_node(b, y, {f32_tensor({2, 3}, arange(6)), i64_tensor({2}, {0, bad})}),
                        {"node 'ga' (Gather)", "index " + std::to_string(bad), "element 1", "[-3, 2]"});
  }
}

// --- GatherElements ---------------------------------------------------------------

TEST(GatherElementsKernelTest, Axis0) {
  GraphBuilder b("g");
  ValueId y = b.op("GatherElements", {b.input("x", f32({2, 3, 4})),
                                      b.constant_i64("i", {1, 3, 4}, {1, 0, -1, 1, 0, 1, 1, 0, -2, 0, 1, 1})});
  expect_values<float>(run_node(b, y, {f32_tensor({2, 3, 4}, arange(24))}), DType::kFloat32, {1, 3, 4},
                       {12, 1, 14, 15, 4, 17, 18, 7, 8, 9, 22, 23});
}

TEST(GatherElementsKernelTest, Axis1) {
  GraphBuilder b("g");
  ValueId y = b.op("GatherElements",
                   {b.input("x", f32({2, 3, 4})),
                    b.constant_i64("i", {2, 2, 4}, {2, 0, -1, 1, 0, -3, 1, 2, 1, 1, 0, 2, 2, 0, 0, -1})},
                   {{"axis", int64_t{1}}});
  expect_values<float>(run_node(b, y, {f32_tensor({2, 3, 4}, arange(24))}), DType::kFloat32, {2, 2, 4},
                       {8, 1, 10, 7, 0, 1, 6, 11, 16, 17, 14, 23, 20, 13, 14, 23});
}

TEST(GatherElementsKernelTest, Axis2) {
  GraphBuilder b("g");
  ValueId y =
      b.op("GatherElements",
           {b.input("x", f32({2, 3, 4})), b.constant_i64("i", {2, 3, 2}, {3, 0, 1, -1, 2, 2, 0, 0, -4, 3, 1, 2})},
           {{"axis", int64_t{-1}}});
  expect_values<float>(run_node(b, y, {f32_tensor({2, 3, 4}, arange(24))}), DType::kFloat32, {2, 3, 2},
                       {3, 0, 5, 7, 10, 10, 12, 12, 16, 19, 21, 22});
}

TEST(GatherElementsKernelTest, IndicesSmallerThanDataOffTheAxis) {
  GraphBuilder b("g");
  ValueId y =
      b.op("GatherElements", {b.input("x", f32({2, 3, 4})), b.constant_i64("i", {1, 2, 3}, {2, 0, 1, -1, 1, 0})},
           {{"axis", int64_t{1}}});
  expect_values<float>(run_node(b, y, {f32_tensor({2, 3, 4}, arange(24))}), DType::kFloat32, {1, 2, 3},
                       {8, 1, 6, 8, 5, 2});
}

TEST(GatherElementsKernelTest, GathersI64) {
  GraphBuilder b("g");
  ValueId y =
      b.op("GatherElements", {b.input("x", {DType::kInt64, {3, 4}}), b.constant_i64("i", {1, 4}, {0, 2, -1, 1})});
  Ints data(12);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<int64_t>(i) * 1000000000001;
  expect_values<int64_t>(run_node(b, y, {i64_tensor({3, 4}, data)}), DType::kInt64, {1, 4},
                         {0, 9000000000009, 10000000000010, 7000000000007});
}

TEST(GatherElementsKernelTest, OutOfRangeIndexIsAnError) {
  GraphBuilder b("g");
  ValueId y = b.op("GatherElements", {b.input("x", f32({2, 3})), b.input("i", {DType::kInt32, {2, 3}})}, {}, "ge");
  Tensor idx = Tensor::from_vector<int32_t>(DType::kInt32, {2, 3}, {0, 1, 0, 1, -3, 1});
  expect_kernel_error(run_node(b, y, {f32_tensor({2, 3}, arange(6)), idx}),
                      {"node 'ge' (GatherElements)", "index -3", "element 4", "[-2, 1]"});
}

// --- Resize ---------------------------------------------------------------------

// ((np.arange(24) ** 1.5) % 7).astype(np.float32).reshape(1, 2, 3, 4)
const Floats kResizeInput{0,           1,          2.82842708, 5.19615221, 1,          4.18033981,
                          0.696938455, 4.52025938, 1.62741697, 6,          3.62277651, 1.48287272,
                          6.56921959,  4.87216663, 3.38320351, 2.09475017, 1,          0.0927956328,
                          6.36753225,  5.81907988, 5.44271898, 5.23408937, 5.18914652, 5.30412483};

ValueId no_value() { return kNoValue; }

// ONNX's test_resize_downsample_scales_linear_align_corners: with scales,
// align_corners divides by the unrounded resized length 4 * 0.6 = 2.4, so
// output column 1 samples x = 3 / 1.4 = 2.142857 (value 3.142857), not 3.
TEST(ResizeKernelTest, AlignCornersWithScalesUsesTheUnroundedLength) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 2, 4})), no_value(), b.constant_f32("s", {4}, {1, 1, 0.6f, 0.6f})},
                   {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}});
  expect_values<float>(run_node(b, y, {f32_tensor({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})}), DType::kFloat32,
                       {1, 1, 1, 2}, {1.f, 3.142857f});
}

// Ranks and dims other than NCHW's H and W run dim by dim: half_pixel
// maps output o of a doubled dim to (o + 0.5) / 2 - 0.5.
TEST(ResizeKernelTest, LinearAlongTheLastDimOfA3DTensor) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 4})), no_value(), b.constant_f32("s", {3}, {1, 1, 2})},
                   {{"mode", std::string("linear")}});
  // -0.25 clamps to 0; then 0.25, 0.75, ... 2.75; 3.25 clamps to 3.
  expect_near(run_node(b, y, {f32_tensor({1, 1, 4}, {1, 2, 3, 4})}), {1, 1, 8},
              {1, 1.25, 1.75, 2.25, 2.75, 3.25, 3.75, 4});
}

TEST(ResizeKernelTest, NearestScalesChannelsAndAVolume) {
  GraphBuilder b("g");
  // C 2 -> 4: -0.25, 0.25, 0.75, 1.25 round (prefer floor) to 0, 0, 1, 1.
  ValueId y = b.op("Resize", {b.input("x", f32({1, 2, 1, 1})), no_value(), b.constant_f32("s", {4}, {1, 2, 1, 1})});
  expect_values<float>(run_node(b, y, {f32_tensor({1, 2, 1, 1}, {5, 7})}), DType::kFloat32, {1, 4, 1, 1},
                       {5, 5, 7, 7});
  GraphBuilder v("g");
  // D 2 -> 4 and W 1 -> 2 of a [1, 1, 2, 1, 1] volume.
  ValueId z = v.op("Resize", {v.input("x", f32({1, 1, 2, 1, 1})), no_value(), v.constant_f32("s", {5}, {1, 1, 2, 1, 2})});
  expect_values<float>(run_node(v, z, {f32_tensor({1, 1, 2, 1, 1}, {5, 7})}), DType::kFloat32, {1, 1, 4, 1, 2},
                       {5, 5, 5, 5, 7, 7, 7, 7});
}

TEST(ResizeKernelTest, Opset18AxesNameTheScaledDimsInAnyOrder) {
  GraphBuilder b("g");
  // axes [3, 2]: W doubled, H kept.
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 2, 2})), no_value(), b.constant_f32("s", {2}, {2, 1})},
                   {{"axes", std::vector<int64_t>{3, 2}}});
  expect_values<float>(run_node(b, y, {f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4})}, 18), DType::kFloat32, {1, 1, 2, 4},
                       {1, 1, 2, 2, 3, 3, 4, 4});
}

TEST(ResizeKernelTest, NearestDoublesWithDefaults) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 2, 3, 4})), no_value(), b.constant_f32("s", {4}, {1, 1, 2, 2})});
  // half_pixel + round_prefer_floor at scale 2 maps outputs 0..5 to inputs 0,0,1,1,2,2.
  const Floats& v = kResizeInput;
  Floats want;
  for (int plane = 0; plane < 2; ++plane)
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 8; ++c) want.push_back(v[static_cast<size_t>(plane * 12 + (r / 2) * 4 + c / 2)]);
  expect_values<float>(run_node(b, y, {f32_tensor({1, 2, 3, 4}, v)}), DType::kFloat32, {1, 2, 6, 8}, want);
}

TEST(ResizeKernelTest, NearestModesPickDifferentNeighbours) {
  // 2x2 -> 4x4, asymmetric: outputs map to 0, 0.5, 1, 1.5.
  struct Case {
    std::string nearest_mode;
    Floats want;
  };
  const Floats floor_rows{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  const Floats ceil_rows{1, 2, 2, 2, 3, 4, 4, 4, 3, 4, 4, 4, 3, 4, 4, 4};
  for (const Case& c : {Case{"floor", floor_rows}, Case{"round_prefer_floor", floor_rows}, Case{"ceil", ceil_rows},
                        Case{"round_prefer_ceil", ceil_rows}}) {
    GraphBuilder b("g");
    ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 2, 2})), no_value(), b.constant_f32("s", {4}, {1, 1, 2, 2})},
                     {{"coordinate_transformation_mode", std::string("asymmetric")}, {"nearest_mode", c.nearest_mode}});
    SCOPED_TRACE(c.nearest_mode);
    expect_values<float>(run_node(b, y, {f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4})}), DType::kFloat32, {1, 1, 4, 4},
                         c.want);
  }
}

TEST(ResizeKernelTest, BilinearHalfPixelMatchesOnnxExample) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 2, 2})), no_value(), b.constant_f32("s", {4}, {1, 1, 2, 2})},
                   {{"mode", std::string("linear")}});
  expect_near(run_node(b, y, {f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4})}), {1, 1, 4, 4},
              {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4});
}

TEST(ResizeKernelTest, BilinearHalfPixelToSizes) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Resize", {b.input("x", f32({1, 2, 3, 4})), no_value(), no_value(), b.constant_i64("z", {4}, {1, 2, 5, 7})},
           {{"mode", std::string("linear")}});
  expect_near(
      run_node(b, y, {f32_tensor({1, 2, 3, 4}, kResizeInput)}), {1, 2, 5, 7},
      {0,           0.357142866, 0.928571403, 1.91421354, 2.99755025, 4.35053587,  5.19615221,  0.400000006, 1.06861997,
       2.138412,    2.12398386,  2.18654323,  3.87223673, 4.92579508, 1,           2.13583565,  3.95317268,  2.43863916,
       0.970032811, 3.15478754,  4.52025938,  1.37645018, 2.76776648, 4.99387264,  3.86228871,  2.4699688,   2.61018944,
       2.69782734,  1.62741697,  3.18905377,  5.68767262, 4.81138802, 3.46992612,  2.2471242,   1.48287272,  6.56921959,
       5.96312904,  4.99338484,  4.12768507,  3.29117107, 2.55491209, 2.09475017,  4.34153175,  3.84827685,  3.05906916,
       3.76867652,  4.50604534,  3.93892956,  3.58448195, 1,          0.675998449, 0.157595947, 3.23016405,  6.32835722,
       6.01495552,  5.81907988,  3.66563129,  3.49132442, 3.21243334, 4.41903639,  5.64975834,  5.56381893,  5.51010704,
       5.44271898,  5.36820841,  5.24899149,  5.21161795, 5.19735909, 5.26306105,  5.30412483});
}

TEST(ResizeKernelTest, BilinearAlignCornersMatchesOnnxExample) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 2, 2})), no_value(), b.constant_f32("s", {4}, {1, 1, 2, 2})},
                   {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}});
  expect_near(run_node(b, y, {f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4})}), {1, 1, 4, 4},
              {1, 1.33333337, 1.66666663, 2, 1.66666663, 2, 2.33333325, 2.66666675, 2.33333325, 2.66666675, 3,
               3.33333325, 3, 3.33333325, 3.66666675, 4});
}

TEST(ResizeKernelTest, BilinearAlignCornersDownsamples) {
  GraphBuilder b("g");
  ValueId y =
      b.op("Resize", {b.input("x", f32({1, 2, 3, 4})), no_value(), no_value(), b.constant_i64("z", {4}, {1, 2, 2, 3})},
           {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}});
  expect_near(run_node(b, y, {f32_tensor({1, 2, 3, 4}, kResizeInput)}), {1, 2, 2, 3},
              {0, 1.91421354, 5.19615221, 1.62741697, 4.81138802, 1.48287272, 6.56921959, 4.12768507, 2.09475017,
               5.44271898, 5.21161795, 5.30412483});
}

TEST(ResizeKernelTest, PytorchHalfPixelMapsASingleOutputToTheOrigin) {
  // To 1x1 pytorch_half_pixel reads input (0, 0); half_pixel reads (0.5, 0.5), the mean of all four.
  struct Case {
    std::string transform;
    float want;
  };
  for (const Case& c : {Case{"pytorch_half_pixel", 1.f}, Case{"half_pixel", 2.5f}}) {
    GraphBuilder b("g");
    ValueId y = b.op("Resize",
                     {b.input("x", f32({1, 1, 2, 2})), no_value(), no_value(), b.constant_i64("z", {4}, {1, 1, 1, 1})},
                     {{"mode", std::string("linear")}, {"coordinate_transformation_mode", c.transform}});
    SCOPED_TRACE(c.transform);
    expect_near(run_node(b, y, {f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4})}), {1, 1, 1, 1}, {c.want});
  }
}

TEST(ResizeKernelTest, Opset11EmptyScalesWithSizes) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize",
                   {b.input("x", f32({1, 1, 2, 2})), b.constant_f32("roi", {0}, {}), b.constant_f32("s", {0}, {}),
                    b.constant_i64("z", {4}, {1, 1, 4, 4})},
                   {{"coordinate_transformation_mode", std::string("tf_half_pixel_for_nearest")}});
  // (x + 0.5) / 2 = 0.25, 0.75, 1.25, 1.75 -> round_prefer_floor 0, 1, 1, 2 (clamped to 1).
  expect_values<float>(run_node(b, y, {f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4})}, 11), DType::kFloat32, {1, 1, 4, 4},
                       {1, 2, 2, 2, 3, 4, 4, 4, 3, 4, 4, 4, 3, 4, 4, 4});
}

TEST(ResizeKernelTest, Opset10UpsamplesLikeOnnxUpsampleExample) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 1, 2, 2})), b.constant_f32("s", {4}, {1, 1, 2, 3})});
  expect_values<float>(run_node(b, y, {f32_tensor({1, 1, 2, 2}, {1, 2, 3, 4})}, 10), DType::kFloat32, {1, 1, 4, 6},
                       {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
}

TEST(ResizeKernelTest, Opset10NearestUsesAsymmetricFloor) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 2, 3, 4})), b.constant_f32("s", {4}, {1, 1, 1.7f, 1.5f})});
  expect_values<float>(run_node(b, y, {f32_tensor({1, 2, 3, 4}, kResizeInput)}, 10), DType::kFloat32, {1, 2, 5, 6},
                       {0,           0,           1,
                        2.82842708,  2.82842708,  5.19615221,
                        0,           0,           1,
                        2.82842708,  2.82842708,  5.19615221,
                        1,           1,           4.18033981,
                        0.696938455, 0.696938455, 4.52025938,
                        1,           1,           4.18033981,
                        0.696938455, 0.696938455, 4.52025938,
                        1.62741697,  1.62741697,  6,
                        3.62277651,  3.62277651,  1.48287272,
                        6.56921959,  6.56921959,  4.87216663,
                        3.38320351,  3.38320351,  2.09475017,
                        6.56921959,  6.56921959,  4.87216663,
                        3.38320351,  3.38320351,  2.09475017,
                        1,           1,           0.0927956328,
                        6.36753225,  6.36753225,  5.81907988,
                        1,           1,           0.0927956328,
                        6.36753225,  6.36753225,  5.81907988,
                        5.44271898,  5.44271898,  5.23408937,
                        5.18914652,  5.18914652,  5.30412483});
}

TEST(ResizeKernelTest, Opset10Bilinear) {
  GraphBuilder b("g");
  ValueId y = b.op("Resize", {b.input("x", f32({1, 2, 3, 4})), b.constant_f32("s", {4}, {1, 1, 1.7f, 1.5f})},
                   {{"mode", std::string("linear")}});
  expect_near(
      run_node(b, y, {f32_tensor({1, 2, 3, 4}, kResizeInput)}, 10), {1, 2, 5, 6},
      {0,          0.666666687, 1.60947573, 2.82842708, 4.40691042, 5.19615221, 0.588235259, 2.10993719, 2.43872881,
       1.57461023, 3.72391558,  4.79856825, 1.11072063, 3.37121105, 3.40539169, 1.21326268,  3.06058764, 3.98425007,
       1.47978938, 4.20782614,  4.6926775,  2.93434381, 2.44314933, 2.1975522,  1.62741697,  4.54247236, 5.20759201,
       3.62277651, 2.19617391,  1.48287272, 6.56921959, 5.43785095, 4.37584543, 3.38320351,  2.52423453, 2.09475017,
       3.29320812, 2.47158408,  3.08674502, 5.13869095, 4.56991863, 4.28553247, 1.7840091,   1.2613914,  2.71991563,
       6.15958166, 5.87199783,  5.72820568, 4.3973732,  4.14870644, 4.50505304, 5.46641397,  5.43899822, 5.42529058,
       5.44271898, 5.30363274,  5.21910858, 5.18914652, 5.26579857, 5.30412483});
}

}  // namespace
}  // namespace hetsched
