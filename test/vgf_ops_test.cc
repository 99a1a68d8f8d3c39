// Every VGF op on a real Vulkan device (lavapipe in CI, validation on),
// against the portable CPU kernels: an ONNX graph built with GraphBuilder
// becomes one island, compiled → init → inputs written (NHWC for rank 4,
// converted here on the host) → execute → wait → read back, and compared
// element by element with |vgf - cpu| <= atol + rtol * |cpu|.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "delegates/vgf/lowering.h"
#include "delegates/vgf/vgf_delegate.h"
#include "delegates/vgf/vgf_runtime.h"
#include "graph/builder.h"
#include "scheduler/pipeline.h"
#include "shared_gpu/buffer.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"

namespace hetsched::vgf {
namespace {

constexpr const char* kToken = "vgf-test";
constexpr const char* kKey = "vgf-test:0";

using Ints = std::vector<int64_t>;

struct OpCase {
  std::string name;
  std::function<void(GraphBuilder&)> build;
  float lo = -1.f, hi = 1.f;  // range of the random inputs
  float atol = 1e-5f;
  float rtol = 1e-5f;
  int opset = 17;
};

std::ostream& operator<<(std::ostream& os, const OpCase& c) { return os << c.name; }

Island whole_graph_island(const Graph& g, int id = 0) {
  Island island;
  island.id = id;
  island.delegate = "vgf";
  island.graph = &g;
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n) island.nodes.push_back(n);
  island.inputs = g.inputs();
  island.outputs = g.outputs();
  return island;
}

// NCHW ↔ NHWC on the host, written out here so the test does not share the
// code under test.
std::vector<float> nchw_to_nhwc(const float* src, const Shape& s) {
  std::vector<float> out(static_cast<size_t>(shape_elements(s)));
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w) out[((n * s[2] + h) * s[3] + w) * s[1] + c] = src[((n * s[1] + c) * s[2] + h) * s[3] + w];
  return out;
}

std::vector<float> nhwc_to_nchw(const float* src, const Shape& s) {
  std::vector<float> out(static_cast<size_t>(shape_elements(s)));
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w) out[((n * s[1] + c) * s[2] + h) * s[3] + w] = src[((n * s[2] + h) * s[3] + w) * s[1] + c];
  return out;
}

Result<std::vector<Tensor>> run_cpu(const Graph& g, const std::vector<Tensor>& inputs) {
  HS_ASSIGN_OR_RETURN(auto cpu, cpu::make_cpu_delegate({{"engine", "portable"}, {"threads", "1"}}));
  HS_ASSIGN_OR_RETURN(Blob blob, cpu->compile(whole_graph_island(g), {}));
  HS_ASSIGN_OR_RETURN(auto handle, cpu->init(blob, InitContext{}));
  std::vector<Tensor> outputs;
  for (ValueId v : g.outputs()) outputs.emplace_back(g.value(v).type);
  std::vector<TensorRef> in_refs, out_refs;
  for (const Tensor& t : inputs) in_refs.push_back({&t.type(), const_cast<std::byte*>(t.raw())});
  for (Tensor& t : outputs) out_refs.push_back({&t.type(), t.raw()});
  ExecContext ctx;
  HS_RETURN_IF_ERROR(handle->execute(ctx, in_refs, out_refs));
  return outputs;
}

// Writes `inputs` (NCHW) into the island's device inputs.
void write_inputs(const IslandHandle& h, const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DeviceTensor* t = h.device_input(i);
    ASSERT_NE(t, nullptr);
    ASSERT_NE(t->buffer->mapped(), nullptr);
    ASSERT_EQ(t->size, inputs[i].byte_size());
    ASSERT_EQ(t->layout, inputs[i].shape().size() == 4 ? TensorLayout::kNhwc : TensorLayout::kNchw);
    std::vector<float> data(inputs[i].data<float>(), inputs[i].data<float>() + inputs[i].num_elements());
    if (t->layout == TensorLayout::kNhwc) data = nchw_to_nhwc(inputs[i].data<float>(), inputs[i].shape());
    std::memcpy(t->buffer->mapped() + t->offset, data.data(), t->size);
  }
}

std::vector<Tensor> read_outputs(const IslandHandle& h, const Graph& g) {
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const TensorType& type = g.value(g.outputs()[i]).type;
    Tensor out(type);
    const DeviceTensor* t = h.device_output(i);
    EXPECT_NE(t, nullptr);
    if (!t) return {};
    const float* src = reinterpret_cast<const float*>(t->buffer->mapped() + t->offset);
    std::vector<float> data(src, src + out.num_elements());
    if (t->layout == TensorLayout::kNhwc) data = nhwc_to_nchw(src, type.shape);
    std::memcpy(out.raw(), data.data(), out.byte_size());
    outputs.push_back(std::move(out));
  }
  return outputs;
}

void expect_close(const Tensor& got, const Tensor& want, float atol, float rtol, const std::string& what) {
  ASSERT_EQ(got.type(), want.type()) << what;
  const float* a = got.data<float>();
  const float* b = want.data<float>();
  int64_t bad = 0;
  float worst = 0.f;
  std::ostringstream first;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (std::isnan(a[i]) && std::isnan(b[i])) continue;
    const float err = std::fabs(a[i] - b[i]);
    if (!(err <= atol + rtol * std::fabs(b[i]))) {
      if (bad < 5) first << " [" << i << "] vgf " << a[i] << " cpu " << b[i] << ";";
      ++bad;
    }
    if (err > worst || std::isnan(err)) worst = err;
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << want.num_elements() << " elements differ beyond atol " << atol
                    << " + rtol " << rtol << " (worst " << worst << "):" << first.str();
}

class VgfOpsTest : public testing::VkTest {
 protected:
  void SetUp() override {
    context_ = make_context();
    ASSERT_NE(context_, nullptr);
    ASSERT_TRUE(SharedGpuContextRegistry::get().register_context(kKey, context_).is_ok());
  }

  static DelegateOptions options() {
    return {{"gpu_shared_context_token", kToken}, {"gpu_shared_group_id", "0"}, {"gpu_shared_context_mode", "lookup_only"}};
  }

  // Runs `g` as one VGF island and returns its outputs (NCHW).
  std::vector<Tensor> run_vgf(const Graph& g, const std::vector<Tensor>& inputs, int island_id = 0) {
    auto delegate = make_vgf_delegate(options());
    EXPECT_TRUE(delegate.is_ok()) << delegate.status().message();
    if (!delegate.is_ok()) return {};
    Result<Blob> blob = (*delegate)->compile(whole_graph_island(g, island_id), {});
    EXPECT_TRUE(blob.is_ok()) << blob.status().message();
    if (!blob.is_ok()) return {};
    Result<std::unique_ptr<IslandHandle>> handle = (*delegate)->init(*blob, InitContext{{}, island_id});
    EXPECT_TRUE(handle.is_ok()) << handle.status().message();
    if (!handle.is_ok()) return {};
    IslandHandle& h = **handle;
    EXPECT_EQ(h.input_domain(0), (MemoryDomain{MemoryDomain::Kind::kDevice, kKey}));
    EXPECT_EQ(h.gpu_context(), context_);
    write_inputs(h, inputs);
    ExecContext ctx;
    ctx.gpu.signal = true;
    Status s = h.execute(ctx, {}, {});
    EXPECT_TRUE(s.is_ok()) << s.message();
    EXPECT_GT(ctx.signalled_value, 0u);
    s = context_->wait(ctx.signalled_value);
    EXPECT_TRUE(s.is_ok()) << s.message();
    return read_outputs(h, g);
  }

  std::shared_ptr<SharedGpuContext> context_;
};

class VgfOpTest : public VgfOpsTest, public ::testing::WithParamInterface<OpCase> {};

TEST_P(VgfOpTest, MatchesThePortableKernels) {
  const OpCase& c = GetParam();
  GraphBuilder b(c.name);
  b.raw().set_opset(c.opset);
  c.build(b);
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g->inputs().size(); ++i)
    inputs.push_back(testing::random_tensor(g->value(g->inputs()[i]).type.shape, 101 + static_cast<uint32_t>(i), c.lo, c.hi));
  Result<std::vector<Tensor>> want = run_cpu(*g, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  const std::vector<Tensor> got = run_vgf(*g, inputs);
  ASSERT_EQ(got.size(), want->size());
  for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], (*want)[i], c.atol, c.rtol, c.name + " output " + std::to_string(i));
}

// --- the cases -------------------------------------------------------------------------

Tensor random_constant(const Shape& shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  return testing::random_tensor(shape, seed, lo, hi);
}

std::function<void(GraphBuilder&)> unary(const std::string& op, Shape shape = {1, 3, 8, 8},
                                          std::initializer_list<std::pair<std::string, Attribute>> attrs = {}) {
  std::vector<std::pair<std::string, Attribute>> a(attrs);
  return [op, shape, a](GraphBuilder& b) {
    const ValueId x = b.input("x", {DType::kFloat32, shape});
    const ValueId y = b.op(op, {x});
    for (const auto& [k, v] : a) b.raw().node(b.raw().value(y).producer).attrs.set(k, v);
    b.output(y);
  };
}

std::vector<OpCase> elementwise_cases() {
  return {
      {"Sin", unary("Sin"), -3.f, 3.f},
      {"Cos", unary("Cos"), -3.f, 3.f},
      {"Exp", unary("Exp"), -4.f, 4.f, 1e-5f, 2e-5f},
      {"Abs", unary("Abs")},
      {"Neg", unary("Neg", {2, 3, 4})},
      {"Reciprocal", unary("Reciprocal"), 0.2f, 3.f},
      {"Sigmoid", unary("Sigmoid"), -8.f, 8.f},
      {"Tanh", unary("Tanh", {4, 50}), -12.f, 12.f},
      {"Sqrt", unary("Sqrt"), 0.f, 4.f, 1e-6f, 2e-6f},
      {"Relu", unary("Relu")},
      {"HardSigmoid", unary("HardSigmoid", {1, 3, 8, 8}, {{"alpha", 0.3f}, {"beta", 0.4f}}), -4.f, 4.f},
      {"HardSwish", unary("HardSwish"), -5.f, 5.f},
      {"ClipConstantBounds",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 8, 8}});
         b.output(b.op("Clip", {x, b.constant_f32("lo", {}, {-0.3f}), b.constant_f32("hi", {}, {0.4f})}));
       }},
      {"ClipOpset10Attributes", unary("Clip", {3, 7}, {{"min", -0.2f}, {"max", 0.5f}}), -1.f, 1.f, 1e-5f, 1e-5f, 10},
      {"AddBroadcastConstant",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 5, 6}});
         b.output(b.op("Add", {x, b.constant("c", random_constant({3, 1, 1}, 7))}));
       }},
      {"SubSameShape",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 4, 5}});
         const ValueId y = b.input("y", {DType::kFloat32, {2, 3, 4, 5}});
         b.output(b.op("Sub", {x, y}));
       }},
      {"MulBroadcastInput",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 6, 6}});
         const ValueId s = b.input("s", {DType::kFloat32, {1, 4, 1, 1}});
         b.output(b.op("Mul", {s, x}));
       }},
      {"AddRank2InputToRank4",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 2, 3, 4}});
         const ValueId y = b.input("y", {DType::kFloat32, {3, 4}});
         b.output(b.op("Add", {x, y}));
       }},
      {"DivRank3", [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 4}});
         b.output(b.op("Div", {x, b.constant("d", random_constant({4}, 9, 0.5f, 2.f))}));
       }, -1.f, 1.f, 1e-6f, 3e-7f},
      {"PowPositiveBase",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {6, 7}});
         b.output(b.op("Pow", {x, b.constant("e", random_constant({7}, 11, -2.f, 2.f))}));
       },
       0.5f, 2.f, 1e-5f, 1e-5f},
      {"PowIntegralExponentsOfNegatives",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {5, 4}});
         b.output(b.op("Pow", {x, b.constant_f32("e", {4}, {2.f, 3.f, -1.f, 0.f})}));
       },
       -2.f, 2.f, 1e-5f, 1e-5f},
      {"Log", unary("Log", {2, 3, 4, 5}), 0.05f, 4.f, 1e-6f, 1e-6f},
      {"Floor", unary("Floor"), -4.f, 4.f},
      {"Ceil", unary("Ceil"), -4.f, 4.f},
      {"AddScalarToVector",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {5}});
         b.output(b.op("Add", {x, b.constant_f32("c", {1}, {0.25f})}));
       }},
  };
}

std::vector<OpCase> nn_cases() {
  const float conv_tol = 2e-5f;
  return {
      {"Conv3x3Pad1",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 10, 10}});
         b.output(b.op("Conv", {x, b.constant("w", random_constant({8, 3, 3, 3}, 21)), b.constant("b", random_constant({8}, 22))},
                       {{"pads", Ints{1, 1, 1, 1}}}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      {"ConvStride2Dilation2SameUpper",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 4, 11, 9}});
         b.output(b.op("Conv", {x, b.constant("w", random_constant({6, 4, 3, 3}, 23))},
                       {{"strides", Ints{2, 2}}, {"dilations", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      {"Conv1x1",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 16, 7, 7}});
         b.output(b.op("Conv", {x, b.constant("w", random_constant({5, 16, 1, 1}, 24))}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      {"ConvAsymmetricPadsAndKernel",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 6, 8}});
         b.output(b.op("Conv", {x, b.constant("w", random_constant({4, 3, 2, 3}, 25)), b.constant("b", random_constant({4}, 26))},
                       {{"pads", Ints{0, 1, 2, 0}}, {"strides", Ints{1, 2}}}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      {"DepthwiseConvMultiplier2",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 9, 9}});
         b.output(b.op("Conv", {x, b.constant("w", random_constant({8, 1, 3, 3}, 27)), b.constant("b", random_constant({8}, 28))},
                       {{"group", int64_t{4}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      {"MatMul2d",
       [](GraphBuilder& b) {
         const ValueId a = b.input("a", {DType::kFloat32, {4, 8}});
         const ValueId w = b.input("w", {DType::kFloat32, {8, 3}});
         b.output(b.op("MatMul", {a, w}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      {"MatMulRank4ByConstant",
       [](GraphBuilder& b) {
         const ValueId a = b.input("a", {DType::kFloat32, {2, 3, 4, 5}});
         b.output(b.op("MatMul", {a, b.constant("w", random_constant({5, 6}, 29))}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      {"MatMulBatchBroadcast",
       [](GraphBuilder& b) {
         const ValueId a = b.input("a", {DType::kFloat32, {2, 1, 3, 4}});
         const ValueId w = b.input("w", {DType::kFloat32, {5, 4, 2}});
         b.output(b.op("MatMul", {a, w}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      {"MatMulVectorByMatrix",
       [](GraphBuilder& b) {
         const ValueId a = b.input("a", {DType::kFloat32, {4}});
         const ValueId w = b.input("w", {DType::kFloat32, {4, 3}});
         b.output(b.op("MatMul", {a, w}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      {"GemmTransBAlphaBetaConstantC",
       [](GraphBuilder& b) {
         const ValueId a = b.input("a", {DType::kFloat32, {3, 5}});
         b.output(b.op("Gemm", {a, b.constant("w", random_constant({4, 5}, 30)), b.constant("c", random_constant({4}, 31))},
                       {{"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.f}}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      {"GemmTransAInputs",
       [](GraphBuilder& b) {
         const ValueId a = b.input("a", {DType::kFloat32, {5, 3}});
         const ValueId w = b.input("w", {DType::kFloat32, {5, 4}});
         const ValueId c = b.input("c", {DType::kFloat32, {3, 4}});
         b.output(b.op("Gemm", {a, w, c}, {{"transA", int64_t{1}}, {"beta", 0.5f}}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      {"AveragePool3x3Stride2Pads",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 9, 9}});
         b.output(b.op("AveragePool", {x}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}));
       }},
      {"AveragePoolCountIncludePad",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 9, 9}});
         b.output(b.op("AveragePool", {x},
                       {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}},
                        {"count_include_pad", int64_t{1}}}));
       }},
      {"AveragePoolCeilModeIncludePad",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 2, 8, 8}});
         b.output(b.op("AveragePool", {x},
                       {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}},
                        {"ceil_mode", int64_t{1}}, {"count_include_pad", int64_t{1}}}));
       }},
      {"MaxPool2x2",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 8, 8}});
         b.output(b.op("MaxPool", {x}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}));
       }},
      {"MaxPoolSameUpper",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 7, 7}});
         b.output(b.op("MaxPool", {x}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}},
                                        {"auto_pad", std::string("SAME_UPPER")}}));
       }},
      {"GlobalAveragePool",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 8, 7, 9}});
         b.output(b.op("GlobalAveragePool", {x}));
       }},
      {"BatchNormalization",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 4, 5, 5}});
         b.output(b.op("BatchNormalization",
                       {x, b.constant("s", random_constant({4}, 41)), b.constant("b", random_constant({4}, 42)),
                        b.constant("m", random_constant({4}, 43)), b.constant("v", random_constant({4}, 44, 0.5f, 2.f))}));
       }},
      {"SoftmaxAxis1Rank4",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 5, 3, 3}});
         b.output(b.op("Softmax", {x}, {{"axis", int64_t{1}}}));
       },
       -4.f, 4.f, 1e-6f, 1e-5f},
      {"SoftmaxLastAxisRank2", [](GraphBuilder& b) { b.output(b.op("Softmax", {b.input("x", {DType::kFloat32, {4, 10}})})); },
       -4.f, 4.f, 1e-6f, 1e-5f},
      {"SoftmaxOpset11Flattens",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 4}});
         b.output(b.op("Softmax", {x}, {{"axis", int64_t{1}}}));
       },
       -4.f, 4.f, 1e-6f, 1e-5f, 11},
      {"ReduceMeanSpatialKeepDims",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 5, 6}});
         b.output(b.op("ReduceMean", {x}, {{"axes", Ints{2, 3}}}));
       }},
      {"ReduceMeanChannelsDropped",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 5, 6}});
         b.output(b.op("ReduceMean", {x}, {{"axes", Ints{1}}, {"keepdims", int64_t{0}}}));
       }},
      {"ReduceSumOpset13AxesInput",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 5, 6}});
         b.output(b.op("ReduceSum", {x, b.constant_i64("axes", {2}, {1, 3})}, {{"keepdims", int64_t{0}}}));
       },
       -1.f, 1.f, 1e-5f, 1e-5f},
      {"ReduceMaxAllAxes",
       [](GraphBuilder& b) { b.output(b.op("ReduceMax", {b.input("x", {DType::kFloat32, {3, 4, 5}})})); }},
      {"ReduceMaxChannels",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 6, 4, 4}});
         b.output(b.op("ReduceMax", {x}, {{"axes", Ints{1}}}));
       }},
      // reduce.comp's lanes: many per output (rows longer than the
      // workgroup, odd lengths), outputs neighbours in memory (inner > 1:
      // NHWC channels of a global pool), several outputs per workgroup.
      {"GlobalAveragePoolLongRows",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 13, 57, 55}});
         b.output(b.op("GlobalAveragePool", {x}));
       }},
      {"GlobalMaxPoolAsMaxPool",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 5, 9, 11}});
         b.output(b.op("MaxPool", {x}, {{"kernel_shape", Ints{9, 11}}}));
       },
       -3.f, -1.f},
      {"ReduceSumMiddleAxisLong",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 131, 7}});
         b.output(b.op("ReduceSum", {x, b.constant_i64("axes", {1}, {1})}));
       }},
      {"ReduceMaxShortRowsManyPerGroup",
       [](GraphBuilder& b) { b.output(b.op("ReduceMax", {b.input("x", {DType::kFloat32, {37, 3}})}, {{"axes", Ints{1}}})); },
       -3.f, -1.f},
      // Tails folded into the element-wise kernels (tail.glsl): a
      // per-channel affine (NHWC: the last dim), then epilogue ops; an
      // affine after an activation stays a dispatch of its own.
      {"BinaryThenChannelAffineAndRelu",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 5, 3, 7}});
         const ValueId y = b.input("y", {DType::kFloat32, {2, 5, 3, 7}});
         const ValueId m = b.op("Mul", {b.op("Mul", {x, y}), b.constant("g", random_constant({1, 5, 1, 1}, 61))});
         b.output(b.op("Relu", {b.op("Add", {m, b.constant("o", random_constant({1, 5, 1, 1}, 62))})}));
       }},
      {"UnaryThenScalarAffineRsqrtThenScale",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {3, 11, 13}});
         const ValueId a = b.op("Add", {b.op("Mul", {b.op("Abs", {x}), b.constant_f32("s", {}, {0.5f})}),
                                        b.constant_f32("e", {}, {0.25f})});
         const ValueId r = b.op("Reciprocal", {b.op("Sqrt", {a})});
         b.output(b.op("Mul", {r, b.constant_f32("k", {}, {3.f})}));
       }},
      {"ReduceMeanThenExp",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {4, 3, 77}});
         b.output(b.op("Exp", {b.op("ReduceMean", {x}, {{"axes", Ints{-1}}})}));
       }},
      {"ReduceMeanOverHeightAndWidthOneReduction",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 19, 13, 11}});
         b.output(b.op("ReduceMean", {x}, {{"axes", Ints{2, 3}}, {"keepdims", int64_t{0}}}));
       }},
      {"ReduceSumShortMiddleAxisManyPerGroup",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {3, 5, 9}});
         b.output(b.op("ReduceSum", {x, b.constant_i64("axes", {1}, {1})}));
       }},
      // The last logical axis of a rank-4 (NHWC) tensor is not the last in
      // memory: the written-out form, not softmax.comp.
      {"SoftmaxRank4LastAxisWrittenOut",
       [](GraphBuilder& b) { b.output(b.op("Softmax", {b.input("x", {DType::kFloat32, {2, 3, 4, 37}})})); },
       -4.f, 4.f, 1e-6f, 1e-5f},
      {"SoftmaxLongRow",
       [](GraphBuilder& b) { b.output(b.op("Softmax", {b.input("x", {DType::kFloat32, {3, 1001}})})); },
       -4.f, 4.f, 1e-6f, 1e-5f},
      {"ReduceMeanLongRow",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {4, 5, 333}});
         b.output(b.op("ReduceMean", {x}, {{"axes", Ints{-1}}}));
       }},
  };
}

std::vector<OpCase> tensor_cases() {
  return {
      {"TransposeSwapHW",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 8, 8}});
         b.output(b.op("Transpose", {x}, {{"perm", Ints{0, 1, 3, 2}}}));
       }},
      {"TransposeChannelsLast",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 4, 5}});
         b.output(b.op("Transpose", {x}, {{"perm", Ints{0, 2, 3, 1}}}));
       }},
      {"TransposeRank3",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 4}});
         b.output(b.op("Transpose", {x}, {{"perm", Ints{2, 0, 1}}}));
       }},
      {"ReshapeRank4ToRank2",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 4, 4}});
         b.output(b.op("Reshape", {x, b.constant_i64("shape", {2}, {1, 48})}));
       }},
      {"ReshapeRank2ToRank4",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 12}});
         b.output(b.op("Sin", {b.op("Reshape", {x, b.constant_i64("shape", {4}, {2, 3, 2, 2})})}));
       }},
      {"FlattenAxis2",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 4, 5}});
         b.output(b.op("Flatten", {b.op("Abs", {x})}, {{"axis", int64_t{2}}}));
       }},
      {"UnsqueezeThenSqueeze",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {3, 4}});
         const ValueId u = b.op("Unsqueeze", {x, b.constant_i64("axes", {2}, {0, 2})});
         b.output(b.op("Squeeze", {b.op("Neg", {u}), b.constant_i64("axes0", {1}, {0})}));
       }},
      {"IdentityOfAnInput", [](GraphBuilder& b) { b.output(b.op("Identity", {b.input("x", {DType::kFloat32, {1, 2, 3, 4}})})); }},
      {"ConcatChannels",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 2, 3, 3}});
         const ValueId y = b.input("y", {DType::kFloat32, {1, 4, 3, 3}});
         b.output(b.op("Concat", {x, y}, {{"axis", int64_t{1}}}));
       }},
      {"ConcatWidthWithConstant",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 4, 2}});
         const ValueId y = b.input("y", {DType::kFloat32, {2, 3, 4, 5}});
         b.output(b.op("Concat", {x, y, b.constant("c", random_constant({2, 3, 4, 1}, 51))}, {{"axis", int64_t{-1}}}));
       }},
      {"ConcatRank2",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {3, 4}});
         const ValueId y = b.input("y", {DType::kFloat32, {2, 4}});
         b.output(b.op("Concat", {x, y}, {{"axis", int64_t{0}}}));
       }},
      {"SliceWithSteps",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 6, 6}});
         b.output(b.op("Slice", {x, b.constant_i64("starts", {3}, {0, 1, 1}), b.constant_i64("ends", {3}, {3, 6, 5}),
                                 b.constant_i64("axes", {3}, {1, 2, 3}), b.constant_i64("steps", {3}, {1, 2, 1})}));
       }},
      {"SliceNegativeStep",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 5, 7}});
         b.output(b.op("Slice", {x, b.constant_i64("starts", {1}, {-1}), b.constant_i64("ends", {1}, {-8}),
                                 b.constant_i64("axes", {1}, {2}), b.constant_i64("steps", {1}, {-2})}));
       }},
      {"PadConstantNchw",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 2, 3, 4}});
         b.output(b.op("Pad", {x, b.constant_i64("pads", {8}, {0, 1, 2, 0, 0, 0, 1, 3}), b.constant_f32("v", {}, {0.75f})}));
       }},
      {"PadRank2Default",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {3, 4}});
         b.output(b.op("Pad", {x, b.constant_i64("pads", {4}, {1, 0, 2, 3})}));
       }},
      {"DropoutIsTheIdentity",
       [](GraphBuilder& b) { b.output(b.op("Dropout", {b.op("Abs", {b.input("x", {DType::kFloat32, {2, 3, 4}})})})); }},
      {"ResizeNearestScales",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 2, 3, 4}});
         b.output(b.op("Resize", {x, b.constant_f32("roi", {0}, {}), b.constant_f32("scales", {4}, {1.f, 1.f, 2.f, 2.f})}));
       }},
      {"ResizeLinearHalfPixelSizes",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 5, 7}});
         b.output(b.op("Resize", {x, b.constant_f32("roi", {0}, {}), b.constant_f32("scales", {0}, {}),
                                  b.constant_i64("sizes", {4}, {1, 3, 9, 4})},
                       {{"mode", std::string("linear")}}));
       },
       -1.f, 1.f, 2e-6f, 2e-6f},
      {"ResizeLinearAlignCornersDown",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 2, 8, 8}});
         b.output(b.op("Resize", {x, b.constant_f32("roi", {0}, {}), b.constant_f32("scales", {0}, {}),
                                  b.constant_i64("sizes", {4}, {1, 2, 3, 5})},
                       {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}}));
       },
       -1.f, 1.f, 2e-6f, 2e-6f},
  };
}

std::vector<OpCase> model_cases() {
  return {
      {"RfcSuffix",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 4, 4}});
         const ValueId s = b.op("Sin", {x});
         const ValueId r = b.op("Reciprocal", {b.op("Cos", {x})});
         b.output(b.op("Transpose", {b.op("Mul", {s, r})}, {{"perm", Ints{0, 1, 3, 2}}}));
       },
       -0.8f, 0.8f},
      {"MiniCnn",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 8, 8}});
         ValueId t = b.op("Conv", {x, b.constant("w", random_constant({4, 3, 3, 3}, 61)), b.constant("cb", random_constant({4}, 62))},
                          {{"pads", Ints{1, 1, 1, 1}}});
         t = b.op("BatchNormalization", {t, b.constant("s", random_constant({4}, 63)), b.constant("bb", random_constant({4}, 64)),
                                         b.constant("m", random_constant({4}, 65)), b.constant("v", random_constant({4}, 66, 0.5f, 2.f))});
         t = b.op("Relu", {t});
         t = b.op("MaxPool", {t}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
         t = b.op("Flatten", {t});
         t = b.op("Gemm", {t, b.constant("fc", random_constant({10, 64}, 67)), b.constant("fb", random_constant({10}, 68))},
                  {{"transB", int64_t{1}}});
         b.output(b.op("Softmax", {t}));
       },
       -1.f, 1.f, 1e-5f, 1e-4f},
      {"TwoOutputsOneAlsoReadInside",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 4, 4}});
         const ValueId s = b.op("Sin", {x});
         b.output(s);
         b.output(b.op("Reshape", {b.op("Exp", {s}), b.constant_i64("shape", {2}, {2, 48})}));
       }},
  };
}

std::vector<OpCase> alias_cases() {
  return {
      {"AliasedPairBothOutputs",
       [](GraphBuilder& b) {
         const ValueId a = b.op("Abs", {b.input("x", {DType::kFloat32, {2, 6}})});
         b.output(a);
         b.output(b.op("Reshape", {a, b.constant_i64("shape", {2}, {3, 4})}));
       }},
      {"ThreeAliasesTwoOutputs",
       [](GraphBuilder& b) {
         const ValueId a = b.op("Abs", {b.input("x", {DType::kFloat32, {2, 6}})});
         b.output(b.op("Reshape", {a, b.constant_i64("shape", {2}, {3, 4})}));
         b.output(b.op("Reshape", {a, b.constant_i64("flat", {1}, {12})}));
       }},
  };
}

// The ops transformer encoders, GPT-style decoders and ViTs add, on odd shapes.
std::vector<OpCase> transformer_cases() {
  const auto gelu = [](std::string name, std::string approximate, Shape shape) {
    return OpCase{name, unary("Gelu", shape, {{"approximate", approximate}}), -6.f, 6.f, 1e-6f, 1e-5f, 20};
  };
  const auto layer_norm = [](std::string name, Shape x, Shape scale, bool bias, int64_t axis) {
    return OpCase{name,
                  [=](GraphBuilder& b) {
                    std::vector<ValueId> in = {b.input("x", {DType::kFloat32, x}), b.constant("scale", random_constant(scale, 31))};
                    if (bias) in.push_back(b.constant("bias", random_constant(scale, 32)));
                    b.output(b.op("LayerNormalization", in, {{"axis", axis}, {"epsilon", 1e-3f}}));
                  },
                  -2.f, 3.f, 2e-5f, 1e-4f};
  };
  return {
      {"Erf", unary("Erf", {3, 5, 7}), -4.f, 4.f, 1e-6f, 1e-5f},
      {"ErfNhwc", unary("Erf", {1, 3, 5, 7}), -0.7f, 0.7f, 1e-6f, 1e-5f},
      gelu("GeluErf", "none", {2, 9, 13}),
      gelu("GeluTanh", "tanh", {1, 3, 5, 7}),
      layer_norm("LayerNormLastAxis", {1, 7, 13}, {13}, true, -1),
      // Rows longer than layer_norm.comp's 64 lanes, odd, rank 2 and 3.
      layer_norm("LayerNormLongRows", {5, 769}, {769}, true, -1),
      layer_norm("LayerNormTwoTrailingAxesRows", {3, 9, 11}, {9, 11}, false, 1),
      layer_norm("LayerNormTwoAxesNoBias", {2, 5, 3, 7}, {3, 7}, false, 2),
      layer_norm("LayerNormNchwAxis1", {2, 3, 5, 4}, {3, 5, 4}, true, 1),
      {"WhereCausalMask",
       [](GraphBuilder& b) {
         std::vector<uint8_t> mask(7 * 7);
         for (int r = 0; r < 7; ++r)
           for (int k = 0; k < 7; ++k) mask[r * 7 + k] = k > r;
         const ValueId m = b.constant("mask", Tensor::from_vector(DType::kBool, {1, 1, 7, 7}, mask));
         const ValueId scores = b.input("x", {DType::kFloat32, {2, 3, 7, 7}});
         const ValueId neg_inf = b.constant_f32("neg_inf", {}, {-std::numeric_limits<float>::infinity()});
         b.output(b.op("Softmax", {b.op("Where", {m, neg_inf, scores})}));
       }},
      {"WhereBroadcastsAllThree",
       [](GraphBuilder& b) {
         const ValueId m = b.constant("c", Tensor::from_vector(DType::kBool, {3, 1}, std::vector<uint8_t>{1, 0, 1}));
         b.output(b.op("Where", {m, b.input("x", {DType::kFloat32, {2, 1, 5}}), b.input("y", {DType::kFloat32, {3, 5}})}));
       }},
      {"SplitEvenRank3",
       [](GraphBuilder& b) {
         for (ValueId y : b.op_multi("Split", {b.input("x", {DType::kFloat32, {2, 9, 5}})}, 3, {{"axis", int64_t{1}}}))
           b.output(b.op("Neg", {y}));
       }},
      {"SplitSizesChannels",
       [](GraphBuilder& b) {
         for (ValueId y : b.op_multi("Split", {b.input("x", {DType::kFloat32, {1, 7, 3, 5}}), b.constant_i64("s", {3}, {2, 4, 1})},
                                     3, {{"axis", int64_t{1}}}))
           b.output(y);
       },
       -1.f, 1.f, 1e-5f, 1e-5f, 13},
      {"GatherScalarIndex",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {3, 2, 5, 4}});
         b.output(b.op("Gather", {x, b.constant_i64("i", {}, {-2})}, {{"axis", int64_t{0}}}));
         b.output(b.op("Gather", {x, b.constant_i64("j", {}, {3})}, {{"axis", int64_t{2}}}));
       }},
      {"ExpandRank3To4",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {3, 1, 5}});
         b.output(b.op("Expand", {x, b.constant_i64("shape", {4}, {2, 1, 4, 5})}));
       }},
      {"TileTwoDims",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 3, 5}});
         b.output(b.op("Tile", {x, b.constant_i64("r", {3}, {3, 1, 2})}));
       }},
      {"ConvTransposeStride2PadsOutputPadding",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 5, 4}});
         b.output(b.op("ConvTranspose", {x, b.constant("w", random_constant({3, 5, 3, 2}, 71)), b.constant("b", random_constant({5}, 72))},
                       {{"strides", Ints{2, 3}}, {"pads", Ints{1, 0, 0, 1}}, {"output_padding", Ints{1, 2}}}));
       },
       -1.f, 1.f, 1e-5f, 1e-4f},
      {"ConvTransposeDilatedSameLower",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 2, 3, 5}});
         b.output(b.op("ConvTranspose", {x, b.constant("w", random_constant({2, 3, 2, 3}, 73))},
                       {{"strides", Ints{2, 1}}, {"dilations", Ints{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}}));
       },
       -1.f, 1.f, 1e-5f, 1e-4f},
      {"TileNchw",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 2, 5}});
         b.output(b.op("Tile", {b.op("Abs", {x}), b.constant_i64("r", {4}, {1, 2, 1, 1})}));
       }},
  };
}

// Grouped convolutions (1 < group < channels): per group a slice, a conv2d
// and one concat; and Gathers of constant indices: slices of strided runs.
std::vector<OpCase> grouped_and_gather_cases() {
  const float conv_tol = 2e-5f;
  const auto grouped = [conv_tol](std::string name, int64_t channels, int64_t group, int64_t out, Ints dilations,
                                  std::string activation) {
    return OpCase{name,
                  [=](GraphBuilder& b) {
                    const ValueId x = b.input("x", {DType::kFloat32, {2, channels, 11, 9}});
                    std::vector<std::pair<std::string, Attribute>> attrs = {
                        {"group", group}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}, {"dilations", dilations}};
                    if (!activation.empty()) attrs.push_back({"activation", activation});
                    if (activation == "Clip") {
                      attrs.push_back({"activation_min", 0.f});
                      attrs.push_back({"activation_max", 0.5f});
                    }
                    const ValueId w = b.constant("w", random_constant({out, channels / group, 3, 3}, 81));
                    const ValueId y = b.op("Conv", {x, w, b.constant("b", random_constant({out}, 82))});
                    for (const auto& [k, v] : attrs) b.raw().node(b.raw().value(y).producer).attrs.set(k, v);
                    b.output(y);
                  },
                  -1.f, 1.f, conv_tol, conv_tol};
  };
  return {
      grouped("GroupedConvGroup2", 26, 2, 26, {1, 1}, ""),
      grouped("GroupedConvGroup3", 27, 3, 12, {1, 1}, "Relu"),
      grouped("GroupedConvGroup13", 26, 13, 26, {1, 1}, ""),
      grouped("GroupedConvGroup13Dilation2", 26, 13, 39, {2, 2}, "Clip"),
      // 32 channels a group: tap-major K, vec4 loads at each group's offset.
      grouped("GroupedConvTapMajorGroup2", 64, 2, 48, {1, 1}, "Relu"),
      // 70 groups: more than one concat takes (64), so a concat of chunks.
      grouped("GroupedConvGroup70", 140, 70, 70, {1, 1}, ""),
      {"GroupedConvNoBias",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 6, 7, 5}});
         b.output(b.op("Conv", {x, b.constant("w", random_constant({4, 3, 2, 3}, 83))},
                       {{"group", int64_t{2}}, {"auto_pad", std::string("SAME_UPPER")}}));
       },
       -1.f, 1.f, conv_tol, conv_tol},
      // torch's as_strided as the dynamo exporter writes it: the flattened
      // tensor gathered at a constant index tensor (here a contiguous
      // window from offset 5: one slice).
      {"GatherAsStridedContiguous",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 6, 8, 4}});
         const ValueId flat = b.op("Reshape", {b.op("Abs", {x}), b.constant_i64("flat", {1}, {-1})});
         std::vector<int64_t> idx(2 * 3 * 4 * 7);
         for (size_t i = 0; i < idx.size(); ++i) idx[i] = 5 + static_cast<int64_t>(i);
         b.output(b.op("Gather", {flat, b.constant_i64("i", {2, 3, 4, 7}, idx)}, {{"axis", int64_t{0}}}));
       }},
      // A strided window (as_strided of every other row): 3 runs of stride 2.
      {"GatherAsStridedRows",
       [](GraphBuilder& b) {
         const ValueId flat = b.op("Reshape", {b.input("x", {DType::kFloat32, {6, 5}}), b.constant_i64("flat", {1}, {-1})});
         std::vector<int64_t> idx;
         for (int64_t r = 0; r < 3; ++r)
           for (int64_t c = 0; c < 4; ++c) idx.push_back(r * 10 + c * 2 + 1);
         b.output(b.op("Gather", {flat, b.constant_i64("i", {3, 4}, idx)}, {{"axis", int64_t{0}}}));
       }},
      // Increasing index lists (negative indices among them) on the channels
      // (NHWC memory axis 3) and on W, whose output is rank 5.
      {"GatherIndexListChannels",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 7, 3, 5}});
         b.output(b.op("Gather", {x, b.constant_i64("i", {5}, {0, 1, 4, 5, -1})}, {{"axis", int64_t{1}}}));
         b.output(b.op("Gather", {x, b.constant_i64("j", {2, 2}, {0, 2, -2, 4})}, {{"axis", int64_t{3}}}));
       }},
      {"GatherIndexListRank3Int32",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {3, 9, 4}});
         b.output(b.op("Gather", {x, b.constant("i", Tensor::from_vector(DType::kInt32, {5}, std::vector<int32_t>{1, 3, 5, 6, 8}))},
                       {{"axis", int64_t{1}}}));
       }},
  };
}

// The conv kernels shared with the Vulkan delegate (shared_gpu/conv_kernel.h)
// in NHWC: each shape picks its tiling (choose_conv_tiling) as a model's
// would, so these reach tap-major and channel-major K, split-K (with its
// reduce dispatch) and 128-wide tiles; and what the dispatch plan folds
// into a conv (epilogue_fusion.h) or a binary op.
std::vector<OpCase> shared_kernel_cases() {
  const float tol = 5e-5f;
  // Conv of x (NCHW shape xs) by random weights ws, then `tail`.
  const auto conv = [tol](std::string name, Shape xs, Shape ws, std::vector<std::pair<std::string, Attribute>> attrs,
                          std::function<ValueId(GraphBuilder&, ValueId)> tail = nullptr, bool bias = true) {
    return OpCase{name,
                  [=](GraphBuilder& b) {
                    const ValueId x = b.input("x", {DType::kFloat32, xs});
                    std::vector<ValueId> in = {x, b.constant("w", random_constant(ws, 91))};
                    if (bias) in.push_back(b.constant("b", random_constant({ws[0]}, 92)));
                    ValueId y = b.op("Conv", in);
                    for (const auto& [k, v] : attrs) b.raw().node(b.raw().value(y).producer).attrs.set(k, v);
                    b.output(tail ? tail(b, y) : y);
                  },
                  -1.f, 1.f, tol, tol};
  };
  const auto op = [](const char* type) {
    return [type](GraphBuilder& b, ValueId y) { return b.op(type, {y}); };
  };
  const Ints pad1{1, 1, 1, 1};
  return {
      // 64 channels: tap-major K; 16 pixels and 36 K steps: split-K (4 slices).
      conv("SharedConvTapMajorSplitK", {1, 64, 4, 4}, {32, 64, 3, 3}, {{"pads", pad1}}),
      // 50 channels: channel-major K through the tap table, split in 3.
      conv("SharedConvTapTableSplitK", {1, 50, 3, 3}, {20, 50, 3, 3}, {{"pads", pad1}}),
      // Odd channels, batch 2, stride, dilation and asymmetric pads.
      conv("SharedConvOddChannelsStrideDilation", {2, 5, 13, 11}, {7, 5, 3, 2},
           {{"pads", Ints{2, 0, 1, 3}}, {"strides", Ints{2, 1}}, {"dilations", Ints{2, 3}}}),
      // 19600 pixels by 128 channels: a 128-channel tile.
      conv("SharedConvWideTile", {1, 16, 140, 140}, {128, 16, 1, 1}, {}, nullptr, false),
      conv("SharedConvFusedRelu", {1, 16, 9, 9}, {24, 16, 3, 3}, {{"pads", pad1}}, op("Relu")),
      conv("SharedConvFusedClipThenSigmoid", {1, 3, 8, 8}, {5, 3, 3, 3}, {{"strides", Ints{2, 2}}},
           [](GraphBuilder& b, ValueId y) {
             return b.op("Sigmoid", {b.op("Clip", {y, b.constant_f32("lo", {}, {-0.5f}), b.constant_f32("hi", {}, {0.25f})})});
           }),
      // HardSwish: the lowering's compute segment, folded as an epilogue op.
      conv("SharedConvFusedHardSwish", {1, 32, 6, 6}, {17, 32, 3, 3}, {{"pads", pad1}}, op("HardSwish")),
      // HardSigmoid: mul and add by scalars (folded into weights and bias),
      // then a clamp (the epilogue).
      conv("SharedConvFusedHardSigmoid", {1, 8, 6, 6}, {12, 8, 1, 1}, {}, op("HardSigmoid")),
      // BatchNormalization lowers to per-channel mul and add: folded too.
      conv("SharedConvFusedBatchNormRelu", {1, 6, 7, 7}, {9, 6, 3, 3}, {{"pads", pad1}},
           [](GraphBuilder& b, ValueId y) {
             const ValueId bn = b.op("BatchNormalization",
                                     {y, b.constant("s", random_constant({9}, 93)), b.constant("o", random_constant({9}, 94)),
                                      b.constant("m", random_constant({9}, 95)), b.constant("v", random_constant({9}, 96, 0.5f, 2.f))});
             return b.op("Relu", {bn});
           }),
      // Swish (SiLU) as EfficientNet writes it: one epilogue op; odd shapes,
      // split-K (the reduce applies it), and after a Relu.
      conv("SharedConvFusedSwish", {1, 7, 9, 5}, {11, 7, 3, 3}, {{"pads", pad1}},
           [](GraphBuilder& b, ValueId y) { return b.op("Mul", {y, b.op("Sigmoid", {y})}); }),
      conv("SharedConvSplitKFusedSwish", {1, 64, 3, 5}, {13, 64, 3, 3}, {{"pads", pad1}},
           [](GraphBuilder& b, ValueId y) { return b.op("Mul", {b.op("Sigmoid", {y}), y}); }),
      conv("SharedConvFusedReluSwish", {2, 3, 5, 6}, {5, 3, 1, 1}, {},
           [](GraphBuilder& b, ValueId y) {
             const ValueId r = b.op("Relu", {y});
             return b.op("Mul", {r, b.op("Sigmoid", {r})});
           }),
      // Swish whose input is also read elsewhere: not folded, still right.
      conv("SharedConvSwishInputReadThrice", {1, 5, 4, 7}, {6, 5, 3, 3}, {{"pads", pad1}},
           [](GraphBuilder& b, ValueId y) { return b.op("Add", {b.op("Mul", {y, b.op("Sigmoid", {y})}), y}); }),
      // The conv's output is read twice: nothing folds into it.
      conv("SharedConvOutputReadTwice", {1, 4, 6, 6}, {4, 4, 3, 3}, {{"pads", pad1}},
           [](GraphBuilder& b, ValueId y) { return b.op("Add", {b.op("Relu", {y}), y}); }),
      // BERT's written-out GELU after a linear layer: one Gelu at compile
      // (fuse_gelu), its compute segment the linear layer's epilogue.
      {"SharedLinearFusedErfGelu",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {5, 37}});
         const ValueId h = b.op("Add", {b.op("MatMul", {x, b.constant("w", random_constant({37, 23}, 7))}),
                                        b.constant("bias", random_constant({23}, 8))});
         const ValueId e = b.op("Erf", {b.op("Div", {h, b.constant_f32("sqrt2", {}, {1.41421356f})})});
         b.output(b.op("Mul", {b.op("Mul", {h, b.op("Add", {e, b.constant_f32("one", {}, {1.f})})}),
                               b.constant_f32("half", {}, {0.5f})}));
       },
       -2.f, 2.f, tol, tol},
      {"SharedConvFusedGeluTanh",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 6, 5, 9}});
         const ValueId y = b.op("Conv", {x, b.constant("w", random_constant({10, 6, 3, 3}, 99))},
                                {{"pads", Ints{1, 1, 1, 1}}});
         b.output(b.op("Gelu", {y}, {{"approximate", std::string("tanh")}}));
       },
       -1.f, 1.f, tol, tol, 20},
      {"SharedDepthwiseFusedSwish",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 9, 7, 5}});
         const ValueId y = b.op("Conv", {x, b.constant("w", random_constant({9, 1, 3, 3}, 97))},
                                {{"group", int64_t{9}}, {"pads", Ints{1, 1, 1, 1}}});
         b.output(b.op("Mul", {y, b.op("Sigmoid", {y})}));
       },
       -1.f, 1.f, tol, tol},
      {"SharedLinearFusedSwish",
       [](GraphBuilder& b) {
         const ValueId a = b.input("a", {DType::kFloat32, {3, 37}});
         const ValueId y = b.op("MatMul", {a, b.constant("w", random_constant({37, 19}, 98))});
         b.output(b.op("Mul", {b.op("Sigmoid", {y}), y}));
       },
       -1.f, 1.f, tol, tol},
      {"SharedDepthwiseFusedClip",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 6, 9, 7}});
         const ValueId y = b.op("Conv", {x, b.constant("w", random_constant({12, 1, 3, 3}, 97)), b.constant("b", random_constant({12}, 98))},
                                {{"group", int64_t{6}}, {"pads", Ints{1, 0, 1, 2}}, {"strides", Ints{2, 1}}, {"dilations", Ints{1, 2}}});
         b.output(b.op("Clip", {y, b.constant_f32("lo", {}, {0.f}), b.constant_f32("hi", {}, {6.f})}));
       },
       -1.f, 1.f, tol, tol},
      // A linear layer: MatMul by constant weights and its bias Add, as a
      // 1x1 conv over the rows of a rank-3 input (70 rows, K = 37).
      {"SharedLinearMatMulBiasRelu",
       [](GraphBuilder& b) {
         const ValueId a = b.input("a", {DType::kFloat32, {2, 35, 37}});
         const ValueId y = b.op("MatMul", {a, b.constant("w", random_constant({37, 19}, 99))});
         b.output(b.op("Relu", {b.op("Add", {y, b.constant("c", random_constant({19}, 100))})}));
       },
       -1.f, 1.f, tol, tol},
      // Gemm with transB, alpha and a bias row; M = 1 and K = 256: split-K.
      {"SharedLinearGemmSplitK",
       [](GraphBuilder& b) {
         const ValueId a = b.input("a", {DType::kFloat32, {1, 256}});
         b.output(b.op("Gemm", {a, b.constant("w", random_constant({70, 256}, 101)), b.constant("c", random_constant({70}, 102))},
                       {{"transB", int64_t{1}}, {"alpha", 0.5f}}));
       },
       -1.f, 1.f, tol, tol},
      // ResNet blocks' tails: the skip connection's Add joins the conv
      // (its residual binding) before the Relu. The identity block (the
      // conv's own input added back, after a BatchNormalization), the
      // downsample block (two convs, the second one's output joins the
      // first... in file order: the later conv takes the earlier's output),
      // and a conv long enough in K for split-K (the reduce adds it).
      {"SharedConvResidualIdentityBlock",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 16, 7, 6}});
         const ValueId y = b.op("Conv", {x, b.constant("w", random_constant({16, 16, 3, 3}, 111, -0.2f, 0.2f))},
                                {{"pads", Ints{1, 1, 1, 1}}});
         const ValueId n = b.op("BatchNormalization", {y, b.constant("s", random_constant({16}, 112, 0.5f, 1.5f)),
                                                       b.constant("o", random_constant({16}, 113)),
                                                       b.constant("m", random_constant({16}, 114)),
                                                       b.constant("v", random_constant({16}, 115, 0.5f, 1.5f))});
         b.output(b.op("Relu", {b.op("Add", {n, x})}));
       },
       -1.f, 1.f, tol, tol},
      {"SharedConvResidualDownsampleBlock",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 12, 9, 8}});
         const ValueId c = b.op("Conv", {x, b.constant("wc", random_constant({20, 12, 3, 3}, 121, -0.2f, 0.2f))},
                                {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}});
         const ValueId d = b.op("Conv", {x, b.constant("wd", random_constant({20, 12, 1, 1}, 122, -0.2f, 0.2f))},
                                {{"strides", Ints{2, 2}}});
         b.output(b.op("Relu", {b.op("Add", {c, d})}));
       },
       -1.f, 1.f, tol, tol},
      {"SharedConvResidualSplitK",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 64, 7, 7}});
         const ValueId y = b.op("Conv", {x, b.constant("w", random_constant({64, 64, 3, 3}, 131, -0.1f, 0.1f)),
                                         b.constant("b", random_constant({64}, 132))},
                                {{"pads", Ints{1, 1, 1, 1}}});
         b.output(b.op("Relu", {b.op("Add", {x, y})}));
       },
       -1.f, 1.f, tol, tol},
      // Squeeze-and-excitation blocks (the pool, then fc1, fc2 and the Mul as
      // one se_scale.comp dispatch in NHWC). 40 channels of 6x5 in two
      // images: an image's second 1024 elements start at channel 24, so
      // its gates wrap past the last channel; 10 hidden units (not whole
      // vec4s).
      {"SharedSeScaleWrappedChunk",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 40, 6, 5}});
         const ValueId m = b.op("GlobalAveragePool", {x});
         const ValueId h = b.op("Relu", {b.op("Conv", {m, b.constant("w1", random_constant({10, 40, 1, 1}, 141)),
                                                       b.constant("b1", random_constant({10}, 142))})});
         const ValueId g = b.op("HardSigmoid", {b.op("Conv", {h, b.constant("w2", random_constant({40, 10, 1, 1}, 143)),
                                                              b.constant("b2", random_constant({40}, 144))})});
         b.output(b.op("Mul", {x, g}));
       },
       -1.f, 1.f, tol, tol},
      // 1100 channels, more than a workgroup's 1024 elements: each chunk
      // gates a run of 1024 channels; the gate on the Mul's left.
      {"SharedSeScaleWideChannels",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 1100, 2, 2}});
         const ValueId m = b.op("GlobalAveragePool", {x});
         const ValueId h = b.op("Relu", {b.op("Conv", {m, b.constant("w1", random_constant({6, 1100, 1, 1}, 145, -0.1f, 0.1f)),
                                                       b.constant("b1", random_constant({6}, 146))})});
         const ValueId g = b.op("Sigmoid", {b.op("Conv", {h, b.constant("w2", random_constant({1100, 6, 1, 1}, 147)),
                                                          b.constant("b2", random_constant({1100}, 148))})});
         b.output(b.op("Mul", {g, x}));
       },
       -1.f, 1.f, tol, tol},
      // The mean as PyTorch's dynamo exporter writes it (ReduceMean over H
      // and W), and the gate scaling another tensor than the pooled one.
      {"SharedSeScaleReduceMeanOtherTensor",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 36, 5, 7}});
         const ValueId z = b.input("z", {DType::kFloat32, {1, 36, 5, 7}});
         const ValueId m = b.op("ReduceMean", {x}, {{"axes", Ints{2, 3}}});
         const ValueId h = b.op("Relu", {b.op("Conv", {m, b.constant("w1", random_constant({9, 36, 1, 1}, 149))})});
         const ValueId g = b.op("Sigmoid", {b.op("Conv", {h, b.constant("w2", random_constant({36, 9, 1, 1}, 150))})});
         b.output(b.op("Mul", {z, g}));
       },
       -1.f, 1.f, tol, tol},
      // Small 1x1 convs on pointwise_conv.comp in NHWC: 37 -> 13 channels
      // (a partial quad) of two 5x7 images with a folded BatchNorm, the
      // residual Add and a Relu; and a linear layer of three rows.
      {"SharedPointwiseResidualOddChannels",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 37, 5, 7}});
         const ValueId r = b.input("r", {DType::kFloat32, {2, 13, 5, 7}});
         const ValueId y = b.op("Conv", {x, b.constant("w", random_constant({13, 37, 1, 1}, 151)),
                                         b.constant("b", random_constant({13}, 152))});
         const ValueId n = b.op("BatchNormalization",
                                {y, b.constant("s", random_constant({13}, 153, 0.5f, 1.5f)),
                                 b.constant("o", random_constant({13}, 154)), b.constant("m", random_constant({13}, 155)),
                                 b.constant("v", random_constant({13}, 156, 0.5f, 1.5f))});
         b.output(b.op("Relu", {b.op("Add", {n, r})}));
       },
       -1.f, 1.f, tol, tol},
      {"SharedPointwiseLinearRows",
       [](GraphBuilder& b) {
         const ValueId a = b.input("a", {DType::kFloat32, {3, 70}});
         b.output(b.op("Gemm", {a, b.constant("w", random_constant({70, 9}, 157)), b.constant("c", random_constant({9}, 158))}));
       },
       -1.f, 1.f, tol, tol},
      // A depthwise conv that also writes its planes' means
      // (depthwise_mean.comp in NHWC), feeding a squeeze-and-excitation
      // block: channel multiplier 2, stride 2 on a 9x11 input, padding, a
      // HardSwish between the conv and the mean (a compute segment of its
      // own), the mean as ReduceMean.
      {"SharedDepthwiseMeanHardSwishSe",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {2, 6, 9, 11}});
         const ValueId d = b.op("HardSwish", {b.op("Conv", {x, b.constant("w", random_constant({12, 1, 3, 3}, 161)),
                                                          b.constant("b", random_constant({12}, 162))},
                                                   {{"group", int64_t{6}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}})});
         const ValueId m = b.op("ReduceMean", {d}, {{"axes", Ints{2, 3}}});
         const ValueId h = b.op("Relu", {b.op("Conv", {m, b.constant("w1", random_constant({4, 12, 1, 1}, 163))})});
         const ValueId g = b.op("HardSigmoid", {b.op("Conv", {h, b.constant("w2", random_constant({12, 4, 1, 1}, 164))})});
         b.output(b.op("Mul", {d, g}));
         b.output(m);  // the means themselves, not only through a gate that may saturate
       },
       -1.f, 1.f, tol, tol},
      // The same with GlobalAveragePool and a Relu fused into the conv.
      {"SharedDepthwiseMeanGlobalPool",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 20, 7, 5}});
         const ValueId d = b.op("Relu", {b.op("Conv", {x, b.constant("w", random_constant({20, 1, 3, 3}, 165))},
                                              {{"group", int64_t{20}}, {"pads", Ints{1, 1, 1, 1}}})});
         b.output(b.op("GlobalAveragePool", {d}));
         b.output(d);
       },
       -1.f, 1.f, tol, tol},
      // A residual Add and its ReLU: one binary dispatch with the clamp.
      {"ResidualAddFusedRelu",
       [](GraphBuilder& b) {
         const ValueId x = b.input("x", {DType::kFloat32, {1, 8, 5, 5}});
         const ValueId r = b.input("r", {DType::kFloat32, {1, 8, 5, 5}});
         b.output(b.op("Relu", {b.op("Add", {b.op("Abs", {x}), r})}));
       }},
  };
}

std::vector<OpCase> all_cases() {
  std::vector<OpCase> cases;
  for (auto family : {elementwise_cases, nn_cases, tensor_cases, model_cases, alias_cases, transformer_cases,
                      grouped_and_gather_cases, shared_kernel_cases})
    for (OpCase& c : family()) cases.push_back(std::move(c));
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllOps, VgfOpTest, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) { return info.param.name; });

// --- runtime behaviour -------------------------------------------------------------------

// Six ops of which none folds into the one before (each reads its input
// twice), so each intermediate is a transient of its own.
Result<Graph> unfused_chain_graph() {
  GraphBuilder b("unfused_chain");
  ValueId t = b.input("x", {DType::kFloat32, {1, 4, 8, 8}});
  for (int i = 0; i < 6; ++i) t = b.op("Add", {t, t});
  b.output(t);
  return b.build();
}

Result<Graph> chain_graph() {
  GraphBuilder b("chain");
  ValueId t = b.input("x", {DType::kFloat32, {1, 4, 8, 8}});
  for (const char* op : {"Sin", "Cos", "Abs", "Neg", "Exp", "Sigmoid"}) t = b.op(op, {t});
  b.output(t);
  return b.build();
}

TEST_F(VgfOpsTest, TransientsOfAChainShareOneAllocation) {
  Result<Graph> g = unfused_chain_graph();
  ASSERT_TRUE(g.is_ok());
  Result<VgfFile> file = lower_island(whole_graph_island(*g));
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  auto pool = std::make_shared<DelegatePool>();
  Result<CommandPool> command_pool = CommandPool::create(*context_);
  ASSERT_TRUE(command_pool.is_ok());
  pool->pool = std::move(*command_pool);
  Result<std::unique_ptr<VgfSession>> session = VgfSession::create(context_, pool, *file, 3);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  // Five 1 KiB intermediates, each alive from its producer to its consumer:
  // two slots are enough, and two are needed.
  const uint64_t alignment = kDeviceArenaAlignment;
  const uint64_t slot = (4 * 8 * 8 * 4 + alignment - 1) / alignment * alignment;
  EXPECT_EQ((*session)->transient_lower_bound(), 2 * slot);
  EXPECT_EQ((*session)->transient_bytes(), 2 * slot);
  ASSERT_EQ((*session)->pipelines().size(), 1u);
  EXPECT_EQ((*session)->pipelines()[0].steps.size(), 6u);
}

TEST_F(VgfOpsTest, RunsChainOnTheTimelineAndLogs) {
  Result<Graph> g = chain_graph();
  ASSERT_TRUE(g.is_ok());
  auto delegate = make_vgf_delegate(options());
  ASSERT_TRUE(delegate.is_ok());
  Result<Blob> blob = (*delegate)->compile(whole_graph_island(*g, 7), {});
  ASSERT_TRUE(blob.is_ok());

  std::ostringstream log;
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  logger->set_level(spdlog::level::debug);
  logger->set_pattern("%v");
  spdlog::set_default_logger(logger);
  Result<std::unique_ptr<IslandHandle>> handle = (*delegate)->init(*blob, InitContext{{}, 7});
  ASSERT_TRUE(handle.is_ok()) << handle.status().message();

  const Tensor x = testing::random_tensor({1, 4, 8, 8}, 5);
  Result<std::vector<Tensor>> want = run_cpu(*g, {x});
  ASSERT_TRUE(want.is_ok());
  write_inputs(**handle, {x});
  // Three runs, each waiting on the previous one's signal on the device.
  uint64_t last = 0;
  for (int run = 0; run < 3; ++run) {
    ExecContext ctx;
    ctx.run_index = run;
    ctx.gpu = GpuStepSync{last, true, false};
    ASSERT_TRUE((*handle)->execute(ctx, {}, {}).is_ok());
    EXPECT_GT(ctx.signalled_value, last);
    last = ctx.signalled_value;
  }
  // queue_wait_idle: no signal, the queue is idle on return.
  ExecContext idle;
  idle.gpu = GpuStepSync{last, false, true};
  ASSERT_TRUE((*handle)->execute(idle, {}, {}).is_ok());
  EXPECT_EQ(idle.signalled_value, 0u);
  spdlog::set_default_logger(previous);

  const std::vector<Tensor> got = read_outputs(**handle, *g);
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], (*want)[0], 1e-5f, 1e-5f, "chain");
  const std::string text = log.str();
  EXPECT_NE(text.find("[VGF] init: island 7, 6 ops, context vgf-test:0 (reused)"), std::string::npos) << text;
  EXPECT_NE(text.find("[VGF] execute: island 7, wait t=0, signal t="), std::string::npos) << text;
  EXPECT_NE(text.find("[VGF] execute: island 7, wait t=" + std::to_string(last) + ", signal t=0"), std::string::npos)
      << text;
}

// The RFC's context modes, from the delegate's side.
TEST_F(VgfOpsTest, LookupOrCreateRegistersTheContextItCreates) {
  auto delegate = make_vgf_delegate({{"gpu_shared_context_token", "fresh"},
                                     {"gpu_shared_group_id", "5"},
                                     {"gpu_shared_context_mode", "lookup_or_create"},
                                     {"validation", validation_wanted() ? "1" : "0"}});
  ASSERT_TRUE(delegate.is_ok());
  Result<Graph> g = chain_graph();
  ASSERT_TRUE(g.is_ok());
  Result<Blob> blob = (*delegate)->compile(whole_graph_island(*g), {});
  ASSERT_TRUE(blob.is_ok());
  Result<std::unique_ptr<IslandHandle>> first = (*delegate)->init(*blob, InitContext{{}, 0});
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  watch(*(*first)->gpu_context());
  EXPECT_EQ(SharedGpuContextRegistry::get().lookup("fresh:5"), (*first)->gpu_context());
  EXPECT_NE((*first)->gpu_context(), context_);
  // A second island of the same delegate runs on the same device.
  Result<std::unique_ptr<IslandHandle>> second = (*delegate)->init(*blob, InitContext{{}, 1});
  ASSERT_TRUE(second.is_ok()) << second.status().message();
  EXPECT_EQ((*second)->gpu_context(), (*first)->gpu_context());
  EXPECT_EQ((*second)->input_domain(0), (MemoryDomain{MemoryDomain::Kind::kDevice, "fresh:5"}));
}

TEST_F(VgfOpsTest, DisabledModeMakesAPrivateContext) {
  auto delegate = make_vgf_delegate({{"gpu_shared_context_token", "vgf-test"},
                                     {"gpu_shared_context_mode", "disabled"},
                                     {"validation", validation_wanted() ? "1" : "0"}});
  ASSERT_TRUE(delegate.is_ok());
  Result<Graph> g = chain_graph();
  ASSERT_TRUE(g.is_ok());
  Result<Blob> blob = (*delegate)->compile(whole_graph_island(*g), {});
  ASSERT_TRUE(blob.is_ok());
  Result<std::unique_ptr<IslandHandle>> handle = (*delegate)->init(*blob, InitContext{{}, 0});
  ASSERT_TRUE(handle.is_ok()) << handle.status().message();
  watch(*(*handle)->gpu_context());
  // Not the registered context of the same key, and not registered itself.
  EXPECT_NE((*handle)->gpu_context(), context_);
  EXPECT_EQ(SharedGpuContextRegistry::get().lookup(kKey), context_);
}

TEST_F(VgfOpsTest, InitRefusesACorruptBlob) {
  auto delegate = make_vgf_delegate(options());
  ASSERT_TRUE(delegate.is_ok());
  Result<std::unique_ptr<IslandHandle>> handle = (*delegate)->init(Blob{'V', 'G', 'F', '1', 1, 0}, InitContext{{}, 4});
  ASSERT_FALSE(handle.is_ok());
  EXPECT_EQ(handle.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(handle.status().message(),
            "failed to init VGF island 4: failed to decode VGF: file is 6 bytes, shorter than the 16-byte header");
}

TEST_F(VgfOpsTest, LookupOnlyWithoutAContextIsAnError) {
  auto delegate = make_vgf_delegate({{"gpu_shared_context_token", "nobody"}, {"gpu_shared_context_mode", "lookup_only"}});
  ASSERT_TRUE(delegate.is_ok());
  Result<Graph> g = chain_graph();
  ASSERT_TRUE(g.is_ok());
  Result<Blob> blob = (*delegate)->compile(whole_graph_island(*g), {});
  ASSERT_TRUE(blob.is_ok());
  Result<std::unique_ptr<IslandHandle>> handle = (*delegate)->init(*blob, InitContext{{}, 0});
  ASSERT_FALSE(handle.is_ok());
  EXPECT_EQ(handle.status().code(), StatusCode::kNotFound);
  EXPECT_NE(handle.status().message().find("nobody:0"), std::string::npos) << handle.status().message();
}

// Issue 11's strict profile (configs/vgf.yaml, `fallback: error`) takes a
// grouped convolution and a Gather of constant indices (torch's as_strided)
// onto VGF, and still refuses run-time indices, reordering index lists and
// index lists of too many runs, saying why.
TEST_F(VgfOpsTest, StrictProfileTakesGroupedConvAndConstantGather) {
  Result<Profile> loaded = load_profile(std::string(HETSCHED_SOURCE_DIR) + "/configs/vgf.yaml");
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  Profile profile = *loaded;
  profile.partition.fallback = "error";
  profile.log_level = "error";
  profile.delegates["vgf"].shared_gpu = {kToken, 0, SharedContextMode::kLookupOnly};
  const auto model = [](std::function<ValueId(GraphBuilder&, ValueId)> gather) {
    GraphBuilder b("strict");
    const ValueId x = b.input("x", {DType::kFloat32, {1, 26, 8, 8}});
    const ValueId y = b.op("Conv", {x, b.constant("w", random_constant({26, 2, 3, 3}, 91))},
                           {{"group", int64_t{13}}, {"pads", Ints{1, 1, 1, 1}}}, "grouped");
    const ValueId flat = b.op("Reshape", {y, b.constant_i64("flat", {1}, {-1})}, {}, "flat");
    b.output(gather(b, flat));
    return b.build();
  };
  Result<Graph> taken = model([](GraphBuilder& b, ValueId flat) {
    std::vector<int64_t> idx(26 * 8);
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = 3 + 8 * static_cast<int64_t>(i);
    return b.op("Gather", {flat, b.constant_i64("i", {26, 8}, idx)}, {{"axis", int64_t{0}}}, "as_strided");
  });
  ASSERT_TRUE(taken.is_ok()) << taken.status().message();
  Result<PlannedModel> planned = plan_model(*taken, profile);
  ASSERT_TRUE(planned.is_ok()) << planned.status().message();
  for (NodeId n = 0; n < static_cast<NodeId>(taken->num_nodes()); ++n)
    EXPECT_EQ(planned->plan.nodes[n].delegate, "vgf") << taken->describe_node(n);
  ASSERT_EQ(planned->plan.islands.size(), 1u);

  Result<Graph> runtime_indices = model([](GraphBuilder& b, ValueId flat) {
    return b.op("Gather", {flat, b.input("i", {DType::kInt64, {4}})}, {{"axis", int64_t{0}}}, "gather");
  });
  ASSERT_TRUE(runtime_indices.is_ok()) << runtime_indices.status().message();
  Result<PlannedModel> refused = plan_model(*runtime_indices, profile);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("node 'gather' (Gather): not supported by vgf: data-dependent indexing"),
            std::string::npos)
      << refused.status().message();
  EXPECT_EQ(refused.status().message().find("'grouped'"), std::string::npos) << refused.status().message();

  Result<Graph> scattered = model([](GraphBuilder& b, ValueId flat) {
    std::vector<int64_t> idx;  // 0, 1, 3, 4, 6, 7, ...: runs of two
    for (int64_t i = 0; i < 200; ++i) idx.push_back(i / 2 * 3 + i % 2);
    return b.op("Gather", {flat, b.constant_i64("i", {200}, idx)}, {{"axis", int64_t{0}}}, "gather");
  });
  ASSERT_TRUE(scattered.is_ok()) << scattered.status().message();
  refused = plan_model(*scattered, profile);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find(
                "node 'gather' (Gather): not supported by vgf: constant Gather indices form 100 strided runs"),
            std::string::npos)
      << refused.status().message();

  Result<Graph> reordered = model([](GraphBuilder& b, ValueId flat) {
    return b.op("Gather", {flat, b.constant_i64("i", {3}, {2, 0, 1})}, {{"axis", int64_t{0}}}, "gather");
  });
  ASSERT_TRUE(reordered.is_ok()) << reordered.status().message();
  refused = plan_model(*reordered, profile);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("node 'gather' (Gather): not supported by vgf: constant Gather indices that "
                                            "reorder or repeat elements"),
            std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace hetsched::vgf
