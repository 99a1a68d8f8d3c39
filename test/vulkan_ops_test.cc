// Every op of the foundation set on the Vulkan delegate (lavapipe here,
// with validation), against the portable CPU kernels on the same random
// inputs: odd shapes (1x1, primes, sizes that are not multiples of the
// 64-wide tiles), every conv variant, Gemm transposes, broadcasting, and
// fused chains (with the number of dispatches they must fuse into).
//
// Tolerance: |got - want| <= 1e-5 + 1e-4 * |want| unless a case says
// otherwise; the shaders sum in a different order than the CPU kernels and
// use the device's exp/sin/cos.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "delegates/vulkan/vulkan_delegate.h"
#include "delegates/vulkan/vulkan_island.h"
#include "graph/builder.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"
#include "test/vulkan_test_driver.h"

namespace hetsched {
namespace {

using testing::random_tensor;
using Ints = std::vector<int64_t>;

struct OpCase {
  std::string name;
  std::function<void(GraphBuilder&)> build;  // inputs, constants, nodes and outputs
  int opset = 17;
  float lo = -1.f, hi = 1.f;  // range of the random inputs
  int dispatches = -1;        // the fused dispatch count the island must have; -1: any
  float rtol = 1e-4f, atol = 1e-5f;
};

// Parameterised test names and failure messages show the case's name.
void PrintTo(const OpCase& c, std::ostream* os) { *os << c.name; }

ValueId in(GraphBuilder& b, const std::string& name, Shape shape) {
  return b.input(name, {DType::kFloat32, std::move(shape)});
}

ValueId cst(GraphBuilder& b, const std::string& name, Shape shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  return b.constant(name, random_tensor(shape, seed, lo, hi));
}

ValueId scalar(GraphBuilder& b, const std::string& name, float v) { return b.constant_f32(name, {}, {v}); }

// One unary node on a [2,3,7,11] input; attributes are set after the node is made.
OpCase unary(const std::string& op, float lo = -1.f, float hi = 1.f,
             std::initializer_list<std::pair<std::string, Attribute>> attrs = {}) {
  std::vector<std::pair<std::string, Attribute>> a(attrs);
  return {op,
          [op, a](GraphBuilder& b) {
            const ValueId y = b.op(op, {in(b, "x", {2, 3, 7, 11})});
            for (const auto& [k, v] : a) b.raw().node(b.raw().num_nodes() - 1).attrs.set(k, v);
            b.output(y);
          },
          17,
          lo,
          hi,
          1};
}

OpCase binary(const std::string& name, const std::string& op, Shape a, Shape bshape, float lo = -1.f, float hi = 1.f) {
  return {name,
          [op, a, bshape](GraphBuilder& b) {
            const ValueId x = in(b, "a", a);
            const ValueId y = in(b, "b", bshape);
            b.output(b.op(op, {x, y}));
          },
          17,
          lo,
          hi,
          1};
}

Attribute ints(Ints v) { return v; }

std::vector<OpCase> cases() {
  std::vector<OpCase> c;
  // --- elementwise ---------------------------------------------------------
  c.push_back(binary("AddSameShape", "Add", {2, 3, 17, 19}, {2, 3, 17, 19}));
  c.push_back(binary("AddPerChannel", "Add", {2, 3, 17, 19}, {3, 1, 1}));
  c.push_back(binary("SubBothBroadcast", "Sub", {4, 1, 5}, {1, 6, 1}));
  c.push_back(binary("MulRowVector", "Mul", {1, 1}, {7, 13}));
  c.push_back(binary("DivPositive", "Div", {5, 9}, {9}, 0.5f, 2.f));
  c.push_back(binary("PowPositiveBase", "Pow", {6, 5}, {6, 5}, 0.1f, 2.f));
  c.push_back({"PowNegativeBaseIntegerExponents",
               [](GraphBuilder& b) {
                 const ValueId x = in(b, "x", {4, 3});
                 b.output(b.op("Pow", {x, b.constant_f32("e", {3}, {2.f, 3.f, -1.f})}));
               },
               17, -2.f, -0.5f, 1});
  c.push_back({"SubScalarOnTheLeft",
               [](GraphBuilder& b) {
                 b.output(b.op("Sub", {scalar(b, "s", 0.25f), in(b, "x", {3, 5})}));
               },
               17, -1, 1, 1});
  c.push_back(unary("Relu"));
  c.push_back(unary("Sigmoid", -6.f, 6.f));
  c.push_back(unary("Tanh", -6.f, 6.f));
  c.push_back(unary("Exp"));
  c.push_back(unary("Neg"));
  c.push_back(unary("Abs"));
  c.push_back(unary("HardSigmoid", -4.f, 4.f, {{"alpha", 0.3f}, {"beta", 0.4f}}));
  c.push_back(unary("HardSwish", -4.f, 4.f));
  c.push_back(unary("Sin", -3.f, 3.f));
  c.push_back(unary("Cos", -3.f, 3.f));
  c.push_back(unary("Reciprocal", 0.5f, 2.f));
  c.push_back(unary("Sqrt", 0.f, 4.f));
  c.push_back({"ClipConstantBounds",
               [](GraphBuilder& b) {
                 b.output(b.op("Clip", {in(b, "x", {5, 7}), scalar(b, "lo", -0.3f), scalar(b, "hi", 0.6f)}));
               },
               17, -1, 1, 1});
  c.push_back({"ClipOnlyMax",
               [](GraphBuilder& b) {
                 b.output(b.op("Clip", {in(b, "x", {5, 7}), kNoValue, scalar(b, "hi", 0.1f)}));
               },
               17, -1, 1, 1});
  c.push_back({"ClipOpset10Attributes",
               [](GraphBuilder& b) {
                 b.output(b.op("Clip", {in(b, "x", {33})}, {{"min", -0.5f}, {"max", 0.5f}}));
               },
               10, -1, 1, 1});
  // --- fusion --------------------------------------------------------------
  c.push_back({"FusedChainOfSix",
               [](GraphBuilder& b) {
                 const ValueId x = in(b, "x", {2, 4, 9, 10});
                 const ValueId y = in(b, "y", {2, 4, 9, 10});
                 ValueId v = b.op("Add", {x, y});
                 v = b.op("Mul", {v, cst(b, "scale", {4, 1, 1}, 7)});
                 v = b.op("Relu", {v});
                 v = b.op("Sub", {scalar(b, "one", 1.f), v});
                 v = b.op("Sigmoid", {v});
                 b.output(b.op("Div", {v, y}));
               },
               17, 0.2f, 1.f, 1});
  c.push_back({"FusedChainBroadcastsUp",
               [](GraphBuilder& b) {
                 const ValueId gate = b.op("Sigmoid", {in(b, "g", {1, 4, 1, 1})});
                 b.output(b.op("Mul", {gate, in(b, "x", {2, 4, 5, 3})}));
               },
               17, -1, 1, 1});
  c.push_back({"ValueReadTwiceIsNotFused",
               [](GraphBuilder& b) {
                 const ValueId r = b.op("Tanh", {in(b, "x", {3, 31})});
                 b.output(b.op("Mul", {r, r}));
               },
               17, -1, 1, 2});
  c.push_back({"BatchNormalizationThenRelu",
               [](GraphBuilder& b) {
                 const ValueId x = in(b, "x", {2, 5, 6, 7});
                 const ValueId bn = b.op(
                     "BatchNormalization",
                     {x, cst(b, "s", {5}, 1), cst(b, "b", {5}, 2), cst(b, "m", {5}, 3), cst(b, "v", {5}, 4, 0.5f, 2.f)},
                     {{"epsilon", 1e-3f}});
                 b.output(b.op("Relu", {bn}));
               },
               17, -1, 1, 1});
  // --- conv ------------------------------------------------------------------
  auto conv = [](std::string name, Shape x, Shape w, std::vector<std::pair<std::string, Attribute>> attrs,
                 bool bias = true, int dispatches = 1) {
    return OpCase{name,
                  [x, w, attrs, bias](GraphBuilder& b) {
                    std::vector<ValueId> inputs = {in(b, "x", x), cst(b, "w", w, 11)};
                    if (bias) inputs.push_back(cst(b, "b", {w[0]}, 12));
                    const ValueId y = b.op("Conv", inputs);
                    for (const auto& [k, v] : attrs) b.raw().node(b.raw().num_nodes() - 1).attrs.set(k, v);
                    b.output(y);
                  },
                  17,
                  -1,
                  1,
                  dispatches};
  };
  c.push_back(conv("Conv3x3Pad1", {1, 3, 8, 8}, {4, 3, 3, 3}, {{"pads", ints({1, 1, 1, 1})}}));
  c.push_back(conv("Conv3x3Stride2OddSizes", {1, 16, 33, 33}, {24, 16, 3, 3},
                   {{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}));
  c.push_back(conv("ConvGrouped", {1, 8, 13, 13}, {6, 4, 3, 3}, {{"group", int64_t{2}}}, false));
  c.push_back(conv("ConvDepthwiseMultiplier2", {1, 16, 15, 15}, {32, 1, 3, 3},
                   {{"group", int64_t{16}}, {"pads", ints({1, 1, 1, 1})}}));
  c.push_back(
      conv("ConvDilated", {1, 4, 17, 17}, {5, 4, 3, 3}, {{"dilations", ints({2, 2})}, {"pads", ints({2, 2, 2, 2})}}));
  c.push_back(conv("Conv1x1Batch2", {2, 7, 5, 5}, {9, 7, 1, 1}, {}));
  c.push_back(conv("Conv1x1OnePixel", {1, 1, 1, 1}, {1, 1, 1, 1}, {}));
  c.push_back(conv("Conv5x5AsymmetricPadsAndStrides", {1, 3, 19, 23}, {7, 3, 5, 5},
                   {{"pads", ints({1, 2, 2, 1})}, {"strides", ints({2, 1})}}));
  c.push_back(conv("ConvSameUpperStride2", {1, 3, 10, 11}, {4, 3, 3, 3},
                   {{"auto_pad", std::string("SAME_UPPER")}, {"strides", ints({2, 2})}}));
  c.push_back(conv("Conv1d", {2, 4, 21}, {6, 4, 3}, {{"pads", ints({1, 1})}}));
  c.push_back(conv("ConvManyChannelsAcrossTiles", {1, 70, 6, 6}, {130, 70, 1, 1}, {}));
  c.push_back({"ConvBatchNormReluFused",
               [](GraphBuilder& b) {
                 const ValueId y = b.op("Conv", {in(b, "x", {1, 6, 9, 9}), cst(b, "w", {8, 6, 3, 3}, 1)},
                                        {{"pads", ints({1, 1, 1, 1})}});
                 const ValueId bn = b.op("BatchNormalization", {y, cst(b, "s", {8}, 2), cst(b, "b", {8}, 3),
                                                                cst(b, "m", {8}, 4), cst(b, "v", {8}, 5, 0.5f, 2.f)});
                 b.output(b.op("Relu", {bn}));
               },
               17, -1, 1, 1});
  c.push_back(
      {"ConvBiasAddClipFused",
       [](GraphBuilder& b) {
         const ValueId y = b.op("Conv", {in(b, "x", {1, 3, 7, 7}), cst(b, "w", {5, 3, 3, 3}, 1), cst(b, "b", {5}, 2)});
         const ValueId a = b.op("Add", {y, cst(b, "c", {1, 5, 1, 1}, 3)});
         b.output(b.op("Clip", {a, scalar(b, "lo", 0.f), scalar(b, "hi", 0.5f)}));
       },
       17, -1, 1, 1});
  c.push_back({"DepthwiseHardSwishFused",
               [](GraphBuilder& b) {
                 const ValueId y =
                     b.op("Conv", {in(b, "x", {1, 8, 9, 9}), cst(b, "w", {8, 1, 3, 3}, 1)}, {{"group", int64_t{8}}});
                 b.output(b.op("HardSwish", {y}));
               },
               17, -1, 1, 1});
  auto conv_transpose = [](std::string name, Shape x, Shape w, std::vector<std::pair<std::string, Attribute>> attrs,
                           bool bias = true) {
    return OpCase{name,
                  [x, w, attrs, bias](GraphBuilder& b) {
                    std::vector<ValueId> inputs = {in(b, "x", x), cst(b, "w", w, 13)};
                    if (bias) inputs.push_back(cst(b, "b", {w[1] * 1}, 14));
                    const ValueId y = b.op("ConvTranspose", inputs);
                    for (const auto& [k, v] : attrs) b.raw().node(b.raw().num_nodes() - 1).attrs.set(k, v);
                    b.output(y);
                  },
                  17,
                  -1,
                  1,
                  1};
  };
  c.push_back(conv_transpose("ConvTranspose2x2Stride2", {1, 8, 5, 7}, {8, 3, 2, 2}, {{"strides", ints({2, 2})}}));
  c.push_back(conv_transpose("ConvTransposePadsDilationOutputPadding", {2, 3, 6, 5}, {3, 4, 3, 3},
                             {{"strides", ints({3, 2})},
                              {"pads", ints({1, 0, 2, 1})},
                              {"dilations", ints({1, 2})},
                              {"output_padding", ints({1, 1})}}));
  c.push_back(conv_transpose("ConvTransposeGrouped", {1, 4, 5, 5}, {4, 3, 3, 3},
                             {{"group", int64_t{2}}, {"strides", ints({2, 2})}}, false));
  c.push_back(conv_transpose("ConvTranspose1dSameUpper", {1, 5, 9}, {5, 2, 4},
                             {{"strides", ints({2})}, {"auto_pad", std::string("SAME_UPPER")}}));
  // PP-OCR det's upsampling: ConvTranspose, BatchNormalization and Relu in one dispatch.
  c.push_back({"ConvTransposeBatchNormReluFused",
               [](GraphBuilder& b) {
                 const ValueId y = b.op("ConvTranspose", {in(b, "x", {1, 6, 4, 4}), cst(b, "w", {6, 5, 2, 2}, 1),
                                                          cst(b, "b", {5}, 6)},
                                        {{"strides", ints({2, 2})}});
                 const ValueId bn = b.op("BatchNormalization", {y, cst(b, "s", {5}, 2), cst(b, "bb", {5}, 3),
                                                                cst(b, "m", {5}, 4), cst(b, "v", {5}, 5, 0.5f, 2.f)});
                 b.output(b.op("Relu", {bn}));
               },
               17, -1, 1, 1});
  // --- matmul / gemm -----------------------------------------------------------
  auto matmul = [](std::string name, Shape a, Shape bs) {
    return OpCase{
        name, [a, bs](GraphBuilder& b) { b.output(b.op("MatMul", {in(b, "a", a), in(b, "b", bs)})); }, 17, -1, 1, 1};
  };
  c.push_back(matmul("MatMulPrimes", {37, 29}, {29, 41}));
  c.push_back(matmul("MatMul1x1", {1, 1}, {1, 1}));
  c.push_back(matmul("MatMulLongK", {64, 130}, {130, 70}));
  c.push_back(matmul("MatMulBatchedBroadcastB", {2, 3, 5, 7}, {7, 4}));
  c.push_back(matmul("MatMulBatchedBroadcastBoth", {3, 5, 7}, {2, 1, 7, 6}));
  c.push_back(matmul("MatMulVectorTimesBatch", {7}, {3, 7, 5}));
  c.push_back(matmul("MatMulBatchTimesVector", {2, 5, 7}, {7}));
  // Operands made by Transposes read by the MatMul alone are read through
  // their strides (fold_transposes): one dispatch, no copy. A Transpose
  // read elsewhere too is copied.
  const auto transpose = [](GraphBuilder& b, ValueId v, Ints perm) { return b.op("Transpose", {v}, {{"perm", perm}}); };
  c.push_back({"MatMulOfTransposedOperands",
               [transpose](GraphBuilder& b) {
                 const ValueId q = transpose(b, in(b, "q", {2, 5, 3, 7}), {0, 2, 1, 3});  // [2, 3, 5, 7]
                 const ValueId k = transpose(b, in(b, "k", {2, 3, 6, 7}), {0, 1, 3, 2});  // [2, 3, 7, 6]
                 b.output(b.op("MatMul", {q, k}));
               },
               17, -1, 1, 1});
  c.push_back({"MatMulThroughTwoTransposes",
               [transpose](GraphBuilder& b) {
                 const ValueId k = transpose(b, transpose(b, in(b, "k", {2, 6, 3, 7}), {0, 2, 1, 3}), {0, 1, 3, 2});
                 b.output(b.op("MatMul", {in(b, "q", {2, 3, 5, 7}), k}));
               },
               17, -1, 1, 1});
  c.push_back({"MatMulTransposedABatchlessB",
               [transpose](GraphBuilder& b) {
                 const ValueId a = transpose(b, in(b, "x", {5, 2, 7}), {1, 0, 2});  // [2, 5, 7]
                 b.output(b.op("MatMul", {a, in(b, "w", {7, 4})}));
               },
               17, -1, 1, 1});
  c.push_back({"MatMulTransposedBatchlessB",
               [transpose](GraphBuilder& b) {
                 b.output(b.op("MatMul", {in(b, "a", {2, 5, 7}), transpose(b, in(b, "w", {4, 7}), {1, 0})}));
               },
               17, -1, 1, 1});
  // Scalar Muls and Divs of the operands fold into alpha (fold_scales),
  // the Transposes behind them into strides: one dispatch. c / x is no
  // scaling, and a scaled operand read twice stays a dispatch of its own.
  c.push_back({"MatMulOfScaledTransposedOperands",
               [transpose](GraphBuilder& b) {
                 const ValueId q = b.op("Mul", {transpose(b, in(b, "q", {2, 5, 3, 7}), {0, 2, 1, 3}), scalar(b, "s", 0.5f)});
                 const ValueId k = b.op("Div", {transpose(b, in(b, "k", {2, 3, 6, 7}), {0, 1, 3, 2}), scalar(b, "d", 4.f)});
                 b.output(b.op("MatMul", {q, b.op("Mul", {scalar(b, "t", -3.f), k})}));
               },
               17, -1, 1, 1});
  c.push_back({"MatMulOfAReciprocalOrTwiceReadScaleKeepsThem",
               [](GraphBuilder& b) {
                 const ValueId q = b.op("Div", {scalar(b, "c", 2.f), in(b, "q", {3, 5, 7})}, {}, "reciprocal");
                 const ValueId k = b.op("Mul", {in(b, "k", {3, 7, 4}), scalar(b, "s", 0.25f)});
                 b.output(b.op("MatMul", {q, k}));
                 b.output(b.op("Relu", {k}));
               },
               17, 0.5f, 1.5f, 4});
  c.push_back({"MatMulTransposeReadTwiceIsCopied",
               [transpose](GraphBuilder& b) {
                 const ValueId t = transpose(b, in(b, "a", {2, 7, 5}), {0, 2, 1});  // [2, 5, 7]
                 b.output(b.op("MatMul", {t, in(b, "b", {2, 7, 3})}));
                 b.output(b.op("Relu", {t}));
               },
               17, -1, 1, 3});
  auto gemm = [](std::string name, Shape a, Shape bs, std::vector<std::pair<std::string, Attribute>> attrs,
                 std::optional<Shape> c_shape, bool b_constant) {
    return OpCase{name,
                  [a, bs, attrs, c_shape, b_constant](GraphBuilder& b) {
                    std::vector<ValueId> inputs = {in(b, "a", a), b_constant ? cst(b, "w", bs, 21) : in(b, "w", bs)};
                    if (c_shape) inputs.push_back(cst(b, "c", *c_shape, 22));
                    const ValueId y = b.op("Gemm", inputs);
                    for (const auto& [k, v] : attrs) b.raw().node(b.raw().num_nodes() - 1).attrs.set(k, v);
                    b.output(y);
                  },
                  17,
                  -1,
                  1,
                  1};
  };
  c.push_back(gemm("GemmPlain", {9, 13}, {13, 11}, {}, std::nullopt, false));
  c.push_back(gemm("GemmTransAAlphaBeta", {13, 9}, {13, 11}, {{"transA", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.f}},
                   Shape{11}, false));
  c.push_back(gemm("GemmTransBRuntime", {9, 13}, {11, 13}, {{"transB", int64_t{1}}}, Shape{9, 1}, false));
  c.push_back(gemm("GemmTransBConstant", {66, 13}, {67, 13}, {{"transB", int64_t{1}}}, Shape{67}, true));
  c.push_back(gemm("GemmBothTransposedScalarC", {13, 9}, {11, 13}, {{"transA", int64_t{1}}, {"transB", int64_t{1}}},
                   Shape{1}, false));
  c.push_back({"MatMulAddReluFused",
               [](GraphBuilder& b) {
                 const ValueId m = b.op("MatMul", {in(b, "a", {2, 5, 7}), cst(b, "w", {7, 3}, 1)});
                 const ValueId a = b.op("Add", {cst(b, "bias", {3}, 2), m});
                 b.output(b.op("Relu", {a}));
               },
               17, -1, 1, 1});
  // --- pools and reductions ----------------------------------------------------
  auto pool = [](std::string name, std::string op, Shape x, std::vector<std::pair<std::string, Attribute>> attrs) {
    return OpCase{name,
                  [op, x, attrs](GraphBuilder& b) {
                    const ValueId y = b.op(op, {in(b, "x", x)});
                    for (const auto& [k, v] : attrs) b.raw().node(b.raw().num_nodes() - 1).attrs.set(k, v);
                    b.output(y);
                  },
                  17,
                  -1,
                  1,
                  1};
  };
  c.push_back(pool("MaxPool3x3Stride2Pad1", "MaxPool", {1, 3, 17, 17},
                   {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}));
  c.push_back(pool("MaxPoolCeilModeDilated", "MaxPool", {2, 2, 10, 9},
                   {{"kernel_shape", ints({2, 3})},
                    {"strides", ints({2, 2})},
                    {"dilations", ints({2, 1})},
                    {"ceil_mode", int64_t{1}}}));
  c.push_back(pool("MaxPool1d", "MaxPool", {1, 3, 20}, {{"kernel_shape", ints({4})}, {"strides", ints({3})}}));
  c.push_back(pool("AveragePoolExcludePad", "AveragePool", {1, 3, 11, 11},
                   {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}}));
  c.push_back(pool("AveragePoolIncludePadCeil", "AveragePool", {1, 2, 10, 10},
                   {{"kernel_shape", ints({3, 3})},
                    {"strides", ints({2, 2})},
                    {"pads", ints({1, 1, 1, 1})},
                    {"count_include_pad", int64_t{1}},
                    {"ceil_mode", int64_t{1}}}));
  c.push_back(pool("GlobalAveragePool", "GlobalAveragePool", {2, 5, 9, 11}, {}));
  c.push_back(pool("ReduceMeanSpatialKeepdims", "ReduceMean", {2, 3, 5, 7}, {{"axes", ints({2, 3})}}));
  c.push_back(
      pool("ReduceMeanMiddleAxisDropped", "ReduceMean", {4, 6, 5}, {{"axes", ints({1})}, {"keepdims", int64_t{0}}}));
  c.push_back(pool("ReduceMeanAllAxes", "ReduceMean", {3, 70, 5}, {}));
  c.push_back(pool("ReduceMeanSplitAxes", "ReduceMean", {3, 4, 5, 6}, {{"axes", ints({0, 2})}}));
  c.push_back({"ReduceMeanOpset18AxesInput",
               [](GraphBuilder& b) {
                 b.output(b.op("ReduceMean", {in(b, "x", {3, 8, 5}), b.constant_i64("axes", {1}, {-1})}));
               },
               18, -1, 1, 1});
  c.push_back(pool("SoftmaxLastAxis", "Softmax", {3, 4, 11}, {}));
  c.push_back(pool("SoftmaxMiddleAxis", "Softmax", {3, 4, 11}, {{"axis", int64_t{1}}}));
  c.push_back(pool("SoftmaxLongRow", "Softmax", {2, 1000}, {}));
  c.push_back({"SoftmaxOpset11FlattensFromAxis",
               [](GraphBuilder& b) {
                 b.output(b.op("Softmax", {in(b, "x", {2, 3, 4})}, {{"axis", int64_t{1}}}));
               },
               11, -3, 3, 1});
  // --- data movement -------------------------------------------------------------
  c.push_back(pool("TransposeToNhwc", "Transpose", {2, 3, 5, 7}, {{"perm", ints({0, 2, 3, 1})}}));
  c.push_back(pool("TransposeDefaultReverses", "Transpose", {3, 4, 5}, {}));
  c.push_back({"ReshapeThenCompute",
               [](GraphBuilder& b) {
                 const ValueId r = b.op("Reshape", {in(b, "x", {2, 3, 4}), b.constant_i64("s", {2}, {6, -1})});
                 b.output(b.op("Relu", {r}));
               },
               17, -1, 1, 1});
  c.push_back({"FlattenSqueezeUnsqueezeIdentityAsOutputs",
               [](GraphBuilder& b) {
                 const ValueId x = b.op("Abs", {in(b, "x", {2, 1, 3, 4})});
                 b.output(b.op("Flatten", {x}, {{"axis", int64_t{2}}}));
                 b.output(b.op("Squeeze", {x, b.constant_i64("sq", {1}, {1})}));
                 b.output(b.op("Unsqueeze", {x, b.constant_i64("un", {1}, {0})}));
                 b.output(b.op("Identity", {x}));
               },
               17, -1, 1, 1});
  c.push_back({"InputPassedThrough",
               [](GraphBuilder& b) {
                 const ValueId x = in(b, "x", {5});
                 b.output(x);
                 b.output(b.op("Neg", {x}));
               },
               17, -1, 1, 1});
  c.push_back({"ConcatWithConstantOnAxis1",
               [](GraphBuilder& b) {
                 b.output(b.op("Concat", {in(b, "x", {2, 3, 4}), cst(b, "k", {2, 2, 4}, 5), in(b, "y", {2, 1, 4})},
                               {{"axis", int64_t{1}}}));
               },
               17, -1, 1, 3});
  c.push_back({"ConcatLastAxis",
               [](GraphBuilder& b) {
                 b.output(b.op("Concat", {in(b, "x", {3, 5}), in(b, "y", {3, 2})}, {{"axis", int64_t{-1}}}));
               },
               17, -1, 1, 2});
  c.push_back({"SliceStepsAndAxes",
               [](GraphBuilder& b) {
                 b.output(b.op("Slice", {in(b, "x", {4, 9, 10}), b.constant_i64("st", {2}, {1, -8}),
                                         b.constant_i64("en", {2}, {100, -1}), b.constant_i64("ax", {2}, {2, 1}),
                                         b.constant_i64("sp", {2}, {3, 2})}));
               },
               17, -1, 1, 1});
  c.push_back(
      {"SliceNegativeStep",
       [](GraphBuilder& b) {
         b.output(b.op("Slice", {in(b, "x", {6, 7}), b.constant_i64("st", {1}, {-1}), b.constant_i64("en", {1}, {-100}),
                                 b.constant_i64("ax", {1}, {1}), b.constant_i64("sp", {1}, {-2})}));
       },
       17, -1, 1, 1});
  c.push_back({"GatherAxis0NegativeIndices",
               [](GraphBuilder& b) {
                 b.output(b.op("Gather", {in(b, "x", {5, 4}), b.constant_i64("i", {3}, {4, -1, 0})}));
               },
               17, -1, 1, 1});
  c.push_back({"GatherAxis1MatrixIndices",
               [](GraphBuilder& b) {
                 b.output(b.op("Gather", {in(b, "x", {2, 6, 3}), b.constant_i64("i", {2, 2}, {5, 0, 2, 2})},
                               {{"axis", int64_t{1}}}));
               },
               17, -1, 1, 1});
  c.push_back({"GatherScalarIndex",
               [](GraphBuilder& b) {
                 b.output(b.op("Gather", {in(b, "x", {3, 7}), b.constant_i64("i", {}, {2})}, {{"axis", int64_t{1}}}));
               },
               17, -1, 1, 1});
  c.push_back({"GatherElementsAxis1",
               [](GraphBuilder& b) {
                 b.output(b.op("GatherElements", {in(b, "x", {3, 4}), b.constant_i64("i", {3, 2}, {0, 3, -1, 1, 2, 2})},
                               {{"axis", int64_t{1}}}));
               },
               17, -1, 1, 1});
  c.push_back({"ResizeNearestScales2x",
               [](GraphBuilder& b) {
                 b.output(b.op("Resize", {in(b, "x", {1, 2, 5, 7}), kNoValue, b.constant_f32("s", {4}, {1, 1, 2, 2})},
                               {{"mode", std::string("nearest")}}));
               },
               17, -1, 1, 1});
  c.push_back({"ResizeLinearHalfPixelSizesDown",
               [](GraphBuilder& b) {
                 b.output(b.op("Resize",
                               {in(b, "x", {1, 3, 11, 9}), kNoValue, kNoValue, b.constant_i64("s", {4}, {1, 3, 6, 5})},
                               {{"mode", std::string("linear")}}));
               },
               17, -1, 1, 1});
  c.push_back(
      {"ResizeLinearAlignCorners",
       [](GraphBuilder& b) {
         b.output(
             b.op("Resize", {in(b, "x", {2, 1, 4, 6}), kNoValue, b.constant_f32("s", {4}, {1, 1, 2.5f, 1.5f})},
                  {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}}));
       },
       17, -1, 1, 1});
  // --- transformer ops (issue 11) ---------------------------------------------------
  c.push_back(unary("Erf", -3.f, 3.f));
  c.push_back(unary("Floor", -3.f, 3.f));
  c.push_back(unary("Ceil", -3.f, 3.f));
  c.push_back(unary("Round", -3.f, 3.f));
  c.push_back(unary("Log", 0.1f, 4.f));
  auto gelu = [](std::string name, std::string approximate) {
    return OpCase{name,
                  [approximate](GraphBuilder& b) {
                    b.output(b.op("Gelu", {in(b, "x", {3, 7, 13})}, {{"approximate", approximate}}));
                  },
                  20,
                  -6.f,
                  6.f,
                  1};
  };
  c.push_back(gelu("GeluErf", "none"));
  c.push_back(gelu("GeluTanh", "tanh"));
  // BERT's written-out GELU after a linear layer: one Gelu at compile
  // (fuse_gelu), then the linear layer's epilogue: one dispatch in all.
  c.push_back({"LinearThenErfGeluIsOneDispatch",
               [](GraphBuilder& b) {
                 const ValueId x = in(b, "x", {5, 37});
                 const ValueId h = b.op("Add", {b.op("MatMul", {x, cst(b, "w", {37, 23}, 7)}), cst(b, "bias", {23}, 8)});
                 const ValueId e = b.op("Erf", {b.op("Div", {h, scalar(b, "sqrt2", 1.41421356f)})});
                 b.output(b.op("Mul", {b.op("Mul", {h, b.op("Add", {e, scalar(b, "one", 1.f)})}), scalar(b, "half", 0.5f)}));
               },
               17, -2.f, 2.f, 1});
  c.push_back(binary("MinBroadcast", "Min", {4, 1, 5}, {6, 1}));
  c.push_back(binary("MaxBroadcast", "Max", {3, 5}, {5}));
  // The decoder's causal mask: scores / scale, then Where(mask, -inf, scores), one dispatch.
  c.push_back({"DivThenWhereCausalMask",
               [](GraphBuilder& b) {
                 std::vector<uint8_t> mask(7 * 7);
                 for (int r = 0; r < 7; ++r)
                   for (int k = 0; k < 7; ++k) mask[r * 7 + k] = k > r;
                 const ValueId m = b.constant("mask", Tensor::from_vector(DType::kBool, {1, 1, 7, 7}, mask));
                 const ValueId scores = b.op("Div", {in(b, "x", {2, 3, 7, 7}), scalar(b, "scale", 2.5f)});
                 const ValueId neg_inf = scalar(b, "neg_inf", -std::numeric_limits<float>::infinity());
                 b.output(b.op("Softmax", {b.op("Where", {m, neg_inf, scores})}));
               },
               17, -1, 1, 2});
  c.push_back({"WhereBroadcastsAllThree",
               [](GraphBuilder& b) {
                 const ValueId m =
                     b.constant("c", Tensor::from_vector(DType::kBool, {3, 1}, std::vector<uint8_t>{1, 0, 1}));
                 b.output(b.op("Where", {m, in(b, "x", {2, 1, 5}), in(b, "y", {3, 5})}));
               },
               17, -1, 1, 1});
  auto layer_norm = [](std::string name, Shape x, Shape scale, std::optional<Shape> bias, int64_t axis) {
    return OpCase{name,
                  [x, scale, bias, axis](GraphBuilder& b) {
                    std::vector<ValueId> inputs = {in(b, "x", x), cst(b, "scale", scale, 31)};
                    if (bias) inputs.push_back(cst(b, "bias", *bias, 32));
                    b.output(b.op("LayerNormalization", inputs, {{"axis", axis}, {"epsilon", 1e-3f}}));
                  },
                  17,
                  -2.f,
                  3.f,
                  1};
  };
  c.push_back(layer_norm("LayerNormLastAxis", {2, 5, 37}, {37}, Shape{37}, -1));
  c.push_back(layer_norm("LayerNormLongRowsNoBias", {3, 301}, {301}, std::nullopt, 1));
  c.push_back(layer_norm("LayerNormTwoAxesBroadcastParams", {3, 4, 7}, {4, 7}, Shape{7}, 1));
  c.push_back(layer_norm("LayerNormOneElementRows", {5, 1}, {1}, Shape{1}, -1));
  auto group_norm = [](std::string name, int opset, Shape x, int64_t groups, Shape params) {
    return OpCase{name,
                  [x, groups, params](GraphBuilder& b) {
                    b.output(b.op("GroupNormalization",
                                  {in(b, "x", x), cst(b, "scale", params, 33), cst(b, "bias", params, 34)},
                                  {{"num_groups", groups}}));
                  },
                  opset,
                  -1.f,
                  2.f,
                  1};
  };
  c.push_back(group_norm("GroupNormPerGroupOpset18", 18, {2, 6, 5, 3}, 3, {3}));
  c.push_back(group_norm("GroupNormPerChannelOpset21", 21, {2, 6, 5, 3}, 2, {6}));
  c.push_back({"SplitNumOutputsUneven",
               [](GraphBuilder& b) {
                 for (ValueId y : b.op_multi("Split", {in(b, "x", {2, 7, 3})}, 3, {{"axis", int64_t{1}},
                                                                                 {"num_outputs", int64_t{3}}}))
                   b.output(y);
               },
               18, -1, 1, 3});
  c.push_back({"SplitSizesLastAxisUnusedOutput",
               [](GraphBuilder& b) {
                 const std::vector<ValueId> ys =
                     b.op_multi("Split", {in(b, "x", {3, 4, 11}), b.constant_i64("s", {3}, {2, 6, 3})}, 3,
                                {{"axis", int64_t{-1}}});
                 b.output(b.op("Relu", {ys[0]}));
                 b.output(ys[2]);
               },
               13, -1, 1, 3});
  c.push_back({"ExpandUpRank",
               [](GraphBuilder& b) {
                 b.output(b.op("Expand", {in(b, "x", {3, 1}), b.constant_i64("s", {3}, {2, 1, 5})}));
               },
               17, -1, 1, 1});
  c.push_back({"TileEveryDim",
               [](GraphBuilder& b) {
                 b.output(b.op("Tile", {in(b, "x", {2, 3, 4}), b.constant_i64("r", {3}, {2, 1, 3})}));
               },
               17, -1, 1, 1});
  auto pad = [](std::string name, int opset, Shape x, Ints pads, std::string mode, std::optional<Ints> axes) {
    return OpCase{name,
                  [x, pads, mode, axes](GraphBuilder& b) {
                    std::vector<ValueId> inputs = {in(b, "x", x),
                                                   b.constant_i64("pads", {static_cast<int64_t>(pads.size())}, pads),
                                                   scalar(b, "value", 0.75f)};
                    if (axes) inputs.push_back(b.constant_i64("axes", {static_cast<int64_t>(axes->size())}, *axes));
                    b.output(b.op("Pad", inputs, {{"mode", mode}}));
                  },
                  opset,
                  -1,
                  1,
                  1};
  };
  c.push_back(pad("PadConstant", 17, {1, 3, 5, 6}, {0, 1, 2, 0, 0, 0, 1, 3}, "constant", std::nullopt));
  c.push_back(pad("PadConstantAxesOpset18", 18, {2, 5, 6}, {1, -2, 2, 1}, "constant", Ints{-1, 0}));
  c.push_back(pad("PadReflect", 17, {2, 5, 6}, {0, 2, 3, 0, 4, 1}, "reflect", std::nullopt));
  c.push_back(pad("PadEdgeCrop", 17, {3, 7}, {2, -1, -2, 4}, "edge", std::nullopt));
  c.push_back(pad("PadWrapOpset19", 19, {2, 3, 4}, {0, 4, 1, 0, 2, 5}, "wrap", std::nullopt));
  c.push_back(pool("ReduceMaxMiddleAxis", "ReduceMax", {3, 70, 5}, {{"axes", ints({1})}}));
  c.push_back(pool("ReduceMinAllAxesDropped", "ReduceMin", {4, 6, 5}, {{"keepdims", int64_t{0}}}));
  c.push_back({"ReduceSumOpset13AxesInput",
               [](GraphBuilder& b) {
                 b.output(b.op("ReduceSum", {in(b, "x", {3, 8, 5}), b.constant_i64("axes", {2}, {0, -1})}));
               },
               13, -1, 1, 1});
  c.push_back({"ReduceProdSmallValues",
               [](GraphBuilder& b) {
                 b.output(b.op("ReduceProd", {in(b, "x", {2, 9, 4})}, {{"axes", ints({1, 2})}}));
               },
               17, 0.5f, 1.5f, 1});
  c.push_back({"DropoutIsIdentity",
               [](GraphBuilder& b) { b.output(b.op("Relu", {b.op("Dropout", {in(b, "x", {3, 5})})})); },
               17, -1, 1, 1});
  c.push_back({"CastFloatToFloat",
               [](GraphBuilder& b) {
                 b.output(b.op("Cast", {b.op("Neg", {in(b, "x", {4, 5})})}, {{"to", int64_t{1}}}));
               },
               17, -1, 1, 1});
  // Swish (SiLU), x * Sigmoid(x), fuses into the conv before it (one
  // dispatch, either Mul operand order) and into an elementwise chain; a
  // Sigmoid whose x is read elsewhere too stays apart.
  c.push_back({"ConvSwishFused",
               [](GraphBuilder& b) {
                 const ValueId y = b.op("Conv", {in(b, "x", {1, 5, 7, 9}), cst(b, "w", {6, 5, 3, 3}, 1), cst(b, "b", {6}, 2)},
                                        {{"pads", ints({1, 1, 1, 1})}});
                 b.output(b.op("Mul", {b.op("Sigmoid", {y}), y}));
               },
               17, -4, 4, 1});
  c.push_back({"SwishInAChain",
               [](GraphBuilder& b) {
                 const ValueId y = b.op("Add", {in(b, "x", {3, 11}), in(b, "z", {3, 11})});
                 b.output(b.op("Mul", {y, b.op("Sigmoid", {y})}));
               },
               17, -6, 6, 1});
  c.push_back({"SigmoidReadTwiceIsNoSwish",
               [](GraphBuilder& b) {
                 const ValueId y = b.op("Neg", {in(b, "x", {4, 6})});
                 const ValueId s = b.op("Sigmoid", {y});
                 b.output(b.op("Mul", {y, s}));
                 b.output(s);
               },
               17, -3, 3, -1});
  // --- a small network -----------------------------------------------------------
  c.push_back({"SmallResidualNetwork",
               [](GraphBuilder& b) {
                 const ValueId x = in(b, "x", {1, 3, 16, 16});
                 ValueId h = b.op("Conv", {x, cst(b, "w1", {8, 3, 3, 3}, 1), cst(b, "b1", {8}, 2)},
                                  {{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}});
                 h = b.op("Relu", {h});
                 ValueId r = b.op("Conv", {h, cst(b, "w2", {8, 1, 3, 3}, 3)},
                                  {{"pads", ints({1, 1, 1, 1})}, {"group", int64_t{8}}});
                 r = b.op("BatchNormalization", {r, cst(b, "s", {8}, 4), cst(b, "bb", {8}, 5), cst(b, "m", {8}, 6),
                                                 cst(b, "v", {8}, 7, 0.5f, 2.f)});
                 h = b.op("Add", {h, r});
                 h = b.op("MaxPool", {h}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}});
                 h = b.op("GlobalAveragePool", {h});
                 h = b.op("Flatten", {h});
                 h = b.op("Gemm", {h, cst(b, "fc", {10, 8}, 8), cst(b, "fcb", {10}, 9)}, {{"transB", int64_t{1}}});
                 b.output(b.op("Softmax", {h}));
               },
               // conv+relu, dwconv+bn, add, maxpool, gap, gemm, softmax
               17, -1, 1, 7});
  return c;
}

class VulkanOpsTest : public testing::VkTest, public ::testing::WithParamInterface<OpCase> {
 protected:
  static constexpr const char* kToken = "vulkan_ops_test";

  // One validated context and one delegate for the whole suite: lavapipe
  // compiles each pipeline with LLVM, so they are made once, not per case.
  void SetUp() override {
    if (!context_) {
      Result<std::shared_ptr<SharedGpuContext>> made = SharedGpuContext::create(options());
      ASSERT_TRUE(made.is_ok()) << made.status().message();
      context_ = *made;
    }
    watch(*context_);
    if (!SharedGpuContextRegistry::get().lookup(std::string(kToken) + ":0")) {
      ASSERT_TRUE(SharedGpuContextRegistry::get().register_context(std::string(kToken) + ":0", context_).is_ok());
    }
    if (!delegate_) {
      Result<std::unique_ptr<Delegate>> made = vulkan::make_vulkan_delegate(
          {{"gpu_shared_context_token", kToken}, {"gpu_shared_context_mode", "lookup_only"}});
      ASSERT_TRUE(made.is_ok()) << made.status().message();
      delegate_ = std::move(made).value();
    }
  }

  static void TearDownTestSuite() {
    delegate_.reset();
    context_.reset();
  }

  static std::shared_ptr<SharedGpuContext> context_;
  static std::unique_ptr<Delegate> delegate_;
};

std::shared_ptr<SharedGpuContext> VulkanOpsTest::context_;
std::unique_ptr<Delegate> VulkanOpsTest::delegate_;

TEST_P(VulkanOpsTest, MatchesCpuKernels) {
  const OpCase& c = GetParam();
  GraphBuilder builder(c.name);
  builder.raw().set_opset(c.opset);
  c.build(builder);
  Result<Graph> graph = builder.build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();

  std::vector<Tensor> inputs;
  for (size_t i = 0; i < graph->inputs().size(); ++i)
    inputs.push_back(random_tensor(graph->value(graph->inputs()[i]).type.shape, 100 + i, c.lo, c.hi));
  Result<std::vector<Tensor>> want = testing::run_on_cpu(*graph, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().message();

  Result<testing::GpuIslandDriver> driver = testing::GpuIslandDriver::create(*delegate_, *graph);
  ASSERT_TRUE(driver.is_ok()) << driver.status().message();
  Result<std::vector<Tensor>> got = driver->run(inputs);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i)
    EXPECT_TRUE(testing::all_close((*got)[i], (*want)[i], c.rtol, c.atol)) << "output " << i;

  if (c.dispatches >= 0) {
    const auto& island = dynamic_cast<const vulkan::VulkanIsland&>(driver->handle());
    EXPECT_EQ(island.dispatch_count(), static_cast<size_t>(c.dispatches));
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, VulkanOpsTest, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

}  // namespace
}  // namespace hetsched
