// Einsum: the equation's reading (graph/einsum.h) through shape inference,
// the portable kernel against loops written out per case here (matrix and
// batched products, transpose, diagonal, trace, sums, outer product,
// numpy's implicit output, ellipses that broadcast, three operands,
// MaxViT's spaced subscripts), refusals by name, and the lowering to
// MatMul (graph/passes/lower_einsum.h) against that kernel: which Einsums
// it takes, what it makes of them, and the xnnpack engine's run of a
// lowered attention against the portable one.
//
// Tolerance: 1e-5 relative to the largest reference element (sums of up
// to 20 products of O(1) values in f32 against double loops).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_reference.h"
#include "graph/builder.h"
#include "graph/passes/lower_einsum.h"
#include "graph/shape_inference.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using testing::random_tensor;

using testing::f32;

// A graph of one Einsum over inputs of `shapes`.
Result<Graph> einsum_graph(const std::string& equation, const std::vector<Shape>& shapes) {
  GraphBuilder b("einsum");
  b.raw().set_opset(12);
  std::vector<ValueId> ins;
  for (size_t i = 0; i < shapes.size(); ++i) ins.push_back(b.input("x" + std::to_string(i), f32(shapes[i])));
  b.output(b.op("Einsum", ins, {{"equation", equation}}, "einsum"));
  return b.build();
}

std::vector<Tensor> inputs_of(const std::vector<Shape>& shapes) {
  std::vector<Tensor> t;
  for (size_t i = 0; i < shapes.size(); ++i) t.push_back(random_tensor(shapes[i], 3 + static_cast<uint32_t>(i)));
  return t;
}

// Element `flat` of a tensor of `shape`, by index.
float at(const Tensor& t, const std::vector<int64_t>& index) {
  int64_t flat = 0;
  for (size_t d = 0; d < index.size(); ++d) flat = flat * t.shape()[d] + index[d];
  return t.data<float>()[flat];
}

void expect_close(const Tensor& got, const Shape& shape, const std::vector<double>& want, const std::string& label) {
  ASSERT_EQ(got.shape(), shape) << label;
  ASSERT_EQ(static_cast<size_t>(got.num_elements()), want.size()) << label;
  double peak = 0;
  for (double w : want) peak = std::max(peak, std::abs(w));
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want[i], 1e-5 * peak + 1e-7) << label << ", element " << i;
}

// Runs the Einsum on the portable kernel against `want`, computed from the inputs.
void expect_kernel(const std::string& equation, const std::vector<Shape>& shapes, const Shape& out,
                   const std::function<std::vector<double>(const std::vector<Tensor>&)>& want) {
  Result<Graph> g = einsum_graph(equation, shapes);
  ASSERT_TRUE(g.is_ok()) << equation << ": " << g.status().message();
  EXPECT_EQ(g->value(g->outputs()[0]).type.shape, out) << equation;
  const std::vector<Tensor> in = inputs_of(shapes);
  Result<std::vector<Tensor>> got = cpu::run_graph_reference(*g, in);
  ASSERT_TRUE(got.is_ok()) << equation << ": " << got.status().message();
  expect_close((*got)[0], out, want(in), equation);
}

TEST(EinsumTest, KernelMatchesLoopsWrittenOut) {
  expect_kernel("ij,jk->ik", {{3, 4}, {4, 5}}, {3, 5}, [](const std::vector<Tensor>& x) {
    std::vector<double> y;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t k = 0; k < 5; ++k) {
        double s = 0;
        for (int64_t j = 0; j < 4; ++j) s += double{at(x[0], {i, j})} * at(x[1], {j, k});
        y.push_back(s);
      }
    return y;
  });
  // numpy's implicit output: the letters seen once, alphabetically (i, k).
  expect_kernel("ij,jk", {{2, 3}, {3, 4}}, {2, 4}, [](const std::vector<Tensor>& x) {
    std::vector<double> y;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 4; ++k) {
        double s = 0;
        for (int64_t j = 0; j < 3; ++j) s += double{at(x[0], {i, j})} * at(x[1], {j, k});
        y.push_back(s);
      }
    return y;
  });
  // Implicit "ba" is "ba->ab": a transpose.
  expect_kernel("ba", {{3, 2}}, {2, 3}, [](const std::vector<Tensor>& x) {
    std::vector<double> y;
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t b = 0; b < 3; ++b) y.push_back(at(x[0], {b, a}));
    return y;
  });
  expect_kernel("ii->i", {{4, 4}}, {4}, [](const std::vector<Tensor>& x) {
    std::vector<double> y;
    for (int64_t i = 0; i < 4; ++i) y.push_back(at(x[0], {i, i}));
    return y;
  });
  expect_kernel("ii", {{4, 4}}, {}, [](const std::vector<Tensor>& x) {
    double s = 0;
    for (int64_t i = 0; i < 4; ++i) s += at(x[0], {i, i});
    return std::vector<double>{s};
  });
  expect_kernel("ij->i", {{3, 5}}, {3}, [](const std::vector<Tensor>& x) {
    std::vector<double> y(3, 0.0);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) y[static_cast<size_t>(i)] += at(x[0], {i, j});
    return y;
  });
  expect_kernel("i,j->ij", {{3}, {4}}, {3, 4}, [](const std::vector<Tensor>& x) {
    std::vector<double> y;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) y.push_back(double{at(x[0], {i})} * at(x[1], {j}));
    return y;
  });
  expect_kernel("ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}, {2, 2}, [](const std::vector<Tensor>& x) {
    std::vector<double> y;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t l = 0; l < 2; ++l) {
        double s = 0;
        for (int64_t j = 0; j < 3; ++j)
          for (int64_t k = 0; k < 4; ++k) s += double{at(x[0], {i, j})} * at(x[1], {j, k}) * at(x[2], {k, l});
        y.push_back(s);
      }
    return y;
  });
  // Ellipses right-aligned and broadcast: [2, 1] against [3].
  expect_kernel("...ij,...jk->...ik", {{2, 1, 3, 4}, {3, 4, 5}}, {2, 3, 3, 5}, [](const std::vector<Tensor>& x) {
    std::vector<double> y;
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t q = 0; q < 3; ++q)
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t k = 0; k < 5; ++k) {
            double s = 0;
            for (int64_t j = 0; j < 4; ++j) s += double{at(x[0], {p, 0, i, j})} * at(x[1], {q, j, k});
            y.push_back(s);
          }
    return y;
  });
  // MaxViT's attention scores, subscripts spaced out.
  expect_kernel("B G H I D, B G H J D -> B G H I J", {{1, 2, 2, 3, 4}, {1, 2, 2, 5, 4}}, {1, 2, 2, 3, 5},
                [](const std::vector<Tensor>& x) {
                  std::vector<double> y;
                  for (int64_t g = 0; g < 2; ++g)
                    for (int64_t h = 0; h < 2; ++h)
                      for (int64_t i = 0; i < 3; ++i)
                        for (int64_t j = 0; j < 5; ++j) {
                          double s = 0;
                          for (int64_t d = 0; d < 4; ++d) s += double{at(x[0], {0, g, h, i, d})} * at(x[1], {0, g, h, j, d});
                          y.push_back(s);
                        }
                  return y;
                });
}

TEST(EinsumTest, BadEquationsAreRefusedByName) {
  const auto expect_refused = [](const std::string& equation, const std::vector<Shape>& shapes, const std::string& what) {
    Result<Graph> g = einsum_graph(equation, shapes);
    ASSERT_FALSE(g.is_ok()) << equation;
    EXPECT_NE(g.status().message().find(what), std::string::npos) << g.status().message();
  };
  expect_refused("ij,j1->i", {{2, 3}, {3, 1}}, "'1' is not a subscript");
  expect_refused("ij,jk->ik", {{2, 3}, {3, 4, 1}}, "operand 1 has rank 3");
  expect_refused("ij,jk->iz", {{2, 3}, {3, 4}}, "output subscript 'z' is in no operand");
  expect_refused("ij,jk->ii", {{2, 3}, {3, 4}}, "appears more than once");
  expect_refused("ij,jk->ik", {{2, 3}, {4, 5}}, "subscript 'j' has dims 3 and 4");
  expect_refused("ij,jk->ik", {{2, 3}}, "2 operands, the node 1 inputs");
  expect_refused("i..j->ij", {{2, 3}}, "outside a single '...'");
  // Three operands stay on the kernel, which refuses work no tensor's size
  // bounds: 3000^3 steps over three vectors of 3000.
  Result<Graph> huge = einsum_graph("a,b,c->", {{3000}, {3000}, {3000}});
  ASSERT_TRUE(huge.is_ok()) << huge.status().message();
  const Result<std::vector<Tensor>> run =
      cpu::run_graph_reference(*huge, {Tensor(f32({3000})), Tensor(f32({3000})), Tensor(f32({3000}))});
  ASSERT_FALSE(run.is_ok());
  EXPECT_NE(run.status().message().find("more than the 8e9 it runs"), std::string::npos) << run.status().message();
}

// Lowering against the portable Einsum kernel on the same inputs.
Graph expect_lowered(const std::string& equation, const std::vector<Shape>& shapes, int matmuls) {
  Result<Graph> g = einsum_graph(equation, shapes);
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  if (!g.is_ok()) return Graph("none");
  Graph lowered = *g;
  const Result<int> n = lower_einsum(lowered);
  EXPECT_TRUE(n.is_ok()) << n.status().message();
  EXPECT_EQ(n.is_ok() ? *n : -1, 1) << equation;
  int einsums = 0, matmul_nodes = 0;
  for (const Node& node : lowered.nodes()) {
    einsums += node.op == "Einsum";
    matmul_nodes += node.op == "MatMul";
  }
  EXPECT_EQ(einsums, 0) << equation;
  EXPECT_EQ(matmul_nodes, matmuls) << equation;
  EXPECT_EQ(lowered.value(lowered.outputs()[0]).name, g->value(g->outputs()[0]).name) << equation;
  const std::vector<Tensor> in = inputs_of(shapes);
  Result<std::vector<Tensor>> want = cpu::run_graph_reference(*g, in);
  Result<std::vector<Tensor>> got = cpu::run_graph_reference(lowered, in);
  EXPECT_TRUE(want.is_ok() && got.is_ok()) << equation;
  if (want.is_ok() && got.is_ok()) {
    const Tensor& r = (*want)[0];
    std::vector<double> w(r.data<float>(), r.data<float>() + r.num_elements());
    expect_close((*got)[0], r.shape(), w, equation + " (lowered)");
  }
  return lowered;
}

TEST(EinsumTest, LoweringMatchesTheKernel) {
  expect_lowered("ij,jk->ik", {{3, 4}, {4, 5}}, 1);
  expect_lowered("B G H I D, B G H J D -> B G H I J", {{1, 2, 2, 3, 4}, {1, 2, 2, 5, 4}}, 1);
  expect_lowered("B G H I J, B G H J D -> B G H I D", {{1, 2, 2, 3, 5}, {1, 2, 2, 5, 4}}, 1);
  expect_lowered("bhid,bhjd->bhij", {{2, 1, 3, 4}, {2, 3, 5, 4}}, 1);  // h broadcast from 1
  expect_lowered("bid,bjd->bji", {{2, 3, 4}, {2, 5, 4}}, 1);           // the output transposed
  expect_lowered("abcd,cde->abe", {{2, 3, 4, 5}, {4, 5, 6}}, 1);      // two contracted, merged
  expect_lowered("ik,jl->ijkl", {{2, 3}, {4, 5}}, 1);                 // an outer product
  expect_lowered("ijk,jl->il", {{2, 3, 4}, {3, 5}}, 1);               // k summed first
  expect_lowered("...ij,...jk->...ik", {{2, 3, 4}, {2, 4, 5}}, 1);
  expect_lowered("ij,jk", {{2, 3}, {3, 4}}, 1);
  expect_lowered("ijk->kj", {{2, 3, 4}}, 0);  // a ReduceSum and a Transpose
  expect_lowered("ij->ij", {{2, 3}}, 0);
}

TEST(EinsumTest, DiagonalsAndThreeOperandsStayOnTheKernel) {
  for (const auto& [equation, shapes] : std::vector<std::pair<std::string, std::vector<Shape>>>{
           {"ii->i", {{4, 4}}}, {"bii,bij->bj", {{2, 3, 3}, {2, 3, 4}}}, {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}}}) {
    Result<Graph> g = einsum_graph(equation, shapes);
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    const Result<int> n = lower_einsum(*g);
    ASSERT_TRUE(n.is_ok()) << n.status().message();
    EXPECT_EQ(*n, 0) << equation;
  }
}

// Attention written as Einsums, lowered, on the xnnpack engine (its
// MatMuls on the fast kernels, K's Transpose read through) at 1 and 2
// threads, against the portable kernels running the Einsums themselves.
TEST(EinsumTest, LoweredAttentionRunsOnTheFastKernels) {
  GraphBuilder b("attention");
  b.raw().set_opset(13);
  const Shape s{1, 4, 2, 16, 8};
  const ValueId q = b.input("q", f32(s));
  const ValueId k = b.input("k", f32(s));
  const ValueId v = b.input("v", f32(s));
  const ValueId scores = b.op("Einsum", {q, k}, {{"equation", std::string("B G H I D, B G H J D -> B G H I J")}}, "qk");
  const ValueId p = b.op("Softmax", {scores}, {{"axis", int64_t{-1}}}, "softmax");
  b.output(b.op("Einsum", {p, v}, {{"equation", std::string("B G H I J, B G H J D -> B G H I D")}}, "pv"));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Graph lowered = *g;
  ASSERT_EQ(lower_einsum(lowered).value(), 2);
  const std::vector<Tensor> in{random_tensor(s, 1), random_tensor(s, 2), random_tensor(s, 3)};
  Result<std::vector<Tensor>> want = cpu::run_graph_reference(*g, in);
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  for (const char* threads : {"1", "2"}) {
    auto got = testing::run_cpu_island(lowered, in, {{"engine", "xnnpack"}, {"threads", threads}}, 2);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    const Tensor& r = (*want)[0];
    expect_close(got->outputs[0], r.shape(), std::vector<double>(r.data<float>(), r.data<float>() + r.num_elements()),
                 std::string("attention, ") + threads + " thread(s)");
  }
}

}  // namespace
}  // namespace hetsched
