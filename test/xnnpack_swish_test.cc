// SiLU written out as x * Sigmoid(x): fuse_swish (graph/passes/fuse_swish.h)
// makes one Swish of it where the Sigmoid has no other reader; the CPU
// island (engine xnnpack) then runs it on the NHWC step between XNNPACK
// segments or, in graph order, on its fast kernel (fast/swish.h), and gives
// what the portable kernels give for the unfused graph (the oracle). The
// portable Swish kernel is checked against the formula.
//
// Tolerance: 1e-5 + 1e-4 relative; behind a conv (sums in another order)
// 1e-3.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "graph/builder.h"
#include "graph/passes/fuse_swish.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using testing::random_tensor;

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

struct IslandRun {
  Tensor output;
  cpu::CpuEngineCoverage coverage;
};

Result<IslandRun> run_island(const Graph& graph, const Tensor& input, const std::string& engine, int threads) {
  HS_ASSIGN_OR_RETURN(auto delegate, cpu::make_cpu_delegate({{"engine", engine}, {"threads", std::to_string(threads)}}));
  Island island;
  island.delegate = "cpu";
  island.graph = &graph;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) island.nodes.push_back(n);
  island.inputs = graph.inputs();
  island.outputs = graph.outputs();
  HS_ASSIGN_OR_RETURN(const Blob blob, delegate->compile(island, {}));
  HS_ASSIGN_OR_RETURN(auto handle, delegate->init(blob, InitContext{}));
  IslandRun run{Tensor(graph.value(graph.outputs()[0]).type), {}};
  std::vector<TensorRef> in_refs{{&graph.value(graph.inputs()[0]).type, const_cast<std::byte*>(input.raw())}};
  std::vector<TensorRef> out_refs{{&run.output.type(), run.output.raw()}};
  ExecContext ctx;
  HS_RETURN_IF_ERROR(handle->execute(ctx, in_refs, out_refs));
  run.coverage = *cpu::cpu_engine_coverage(*handle);
  return run;
}

void expect_close(const Tensor& actual, const Tensor& expected, float rel, const std::string& what) {
  ASSERT_EQ(actual.type(), expected.type()) << what;
  const float* a = actual.data<float>();
  const float* e = expected.data<float>();
  int reported = 0;
  for (int64_t i = 0; i < actual.num_elements() && reported < 5; ++i) {
    if (std::abs(a[i] - e[i]) <= 1e-5f + rel * std::abs(e[i])) continue;
    ADD_FAILURE() << what << ", element " << i << ": " << a[i] << ", expected " << e[i];
    ++reported;
  }
}

// x -> [Conv] -> s = Sigmoid(h) -> Mul(h, s) (operands `swapped`) -> [Conv].
Graph silu_graph(const Shape& shape, bool convs, bool swapped, bool sigmoid_is_output = false) {
  GraphBuilder b("silu");
  const int64_t c = shape[1];
  ValueId h = b.input("x", f32(shape));
  if (convs)
    h = b.op("Conv", {h, b.constant("w1", random_tensor({c, c, 3, 3}, 2)), b.constant("b1", random_tensor({c}, 3))},
             {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  const ValueId s = b.op("Sigmoid", {h});
  ValueId y = swapped ? b.op("Mul", {s, h}) : b.op("Mul", {h, s});
  if (convs) y = b.op("Conv", {y, b.constant("w2", random_tensor({c, c, 1, 1}, 4))});
  b.output(y);
  if (sigmoid_is_output) b.output(s);
  auto g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) n += g.node(id).op == op;
  return n;
}

TEST(FuseSwishTest, MulOfXAndSigmoidOfXBecomesOneSwish) {
  for (bool swapped : {false, true}) {
    Graph g = silu_graph({1, 3, 4, 5}, false, swapped);
    auto fused = fuse_swish(g);
    ASSERT_TRUE(fused.is_ok());
    EXPECT_EQ(*fused, 1);
    ASSERT_EQ(g.num_nodes(), 1u);
    EXPECT_EQ(g.node(0).op, "Swish");
    EXPECT_EQ(g.node(0).outputs[0], g.outputs()[0]);
  }
}

TEST(FuseSwishTest, SigmoidReadElsewhereOrOfAnotherValueIsLeft) {
  Graph shared = silu_graph({1, 3, 4, 5}, false, false, /*sigmoid_is_output=*/true);
  EXPECT_EQ(*fuse_swish(shared), 0);
  GraphBuilder b("gate");
  const ValueId x = b.input("x", f32({2, 7}));
  const ValueId z = b.input("z", f32({2, 7}));
  b.output(b.op("Mul", {x, b.op("Sigmoid", {z})}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  EXPECT_EQ(*fuse_swish(*g), 0);
  EXPECT_EQ(count_op(*g, "Sigmoid"), 1);
}

TEST(XnnpackSwishTest, SwishBetweenConvSegmentsMatchesPortable) {
  // 37 channels, 9x11: off every vector width and block size.
  const Shape shape{2, 37, 9, 11};
  const Graph g = silu_graph(shape, true, true);
  const Tensor x = random_tensor(shape, 1, -4.f, 4.f);
  auto expected = run_island(g, x, "portable", 1);
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();
  for (int threads : {1, 2}) {
    auto actual = run_island(g, x, "xnnpack", threads);
    ASSERT_TRUE(actual.is_ok()) << actual.status().message();
    // The two convs on XNNPACK, the Swish between them (Sigmoid and Mul fused).
    EXPECT_EQ(actual->coverage.xnnpack_ops, 2);
    EXPECT_EQ(actual->coverage.portable_ops, 1);
    expect_close(actual->output, expected->output, 1e-3f, std::to_string(threads) + " threads");
  }
}

TEST(XnnpackSwishTest, SwishInGraphOrderRunsOnItsFastKernelAndMatchesPortable) {
  GraphBuilder b("silu_rows");
  const ValueId x = b.input("x", f32({3, 5003}));
  b.output(b.op("Mul", {x, b.op("Sigmoid", {x})}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok());
  // Past exp's clamps (|x| > 88) as well as the usual range.
  const Tensor input = random_tensor({3, 5003}, 1, -100.f, 100.f);
  auto expected = run_island(*g, input, "portable", 1);
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();
  for (int threads : {1, 2}) {
    auto actual = run_island(*g, input, "xnnpack", threads);
    ASSERT_TRUE(actual.is_ok()) << actual.status().message();
    EXPECT_EQ(actual->coverage.fast_ops, 1);
    expect_close(actual->output, expected->output, 1e-4f, std::to_string(threads) + " threads");
  }
}

TEST(XnnpackSwishTest, PortableSwishKernelFollowsTheFormula) {
  GraphBuilder b("swish");
  const ValueId x = b.input("x", f32({4, 33}));
  b.output(b.op("Swish", {x}, {{"alpha", 0.5f}}));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const Tensor input = random_tensor({4, 33}, 5, -10.f, 10.f);
  auto run = run_island(*g, input, "portable", 1);
  ASSERT_TRUE(run.is_ok()) << run.status().message();
  Tensor expected(f32({4, 33}));
  for (int64_t i = 0; i < input.num_elements(); ++i) {
    const double v = input.data<float>()[i];
    expected.data<float>()[i] = static_cast<float>(v / (1.0 + std::exp(-0.5 * v)));
  }
  expect_close(run->output, expected, 1e-6f, "Swish alpha 0.5");
}

}  // namespace
}  // namespace hetsched
