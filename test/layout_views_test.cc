// Transposes between the two orders of a rank-4 value run as views where
// their NHWC side stays NHWC (delegates/cpu/xnnpack/segment_plan.h, pass 4;
// EnginePlan::layout_views), on a small ConvNeXt: a 2x2 stride-2 stem,
// channels-last LayerNorms, blocks of a 7x7 depthwise conv, LayerNorm,
// linear, Gelu, linear, layer scale and residual, and a 2x2 stride-2
// downsampling conv. Against the portable kernels at 1 and 2 threads, run
// after run, with the arena (whose views they are) on and off; the plan's
// views checked by name; and a block output that is also a graph output (in
// the caller's order) keeps its Transposes real. And Gelus between convs,
// elementwise, run on NHWC data there.
//
// Tolerance: |xnnpack - portable| <= 1e-4 * max |portable| + 1e-6. A view
// taken where one side is in the graph's order reads the other order's
// bytes: errors of the output's own size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "delegates/cpu/fast/fast_plan.h"
#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/island_arena.h"
#include "delegates/cpu/xnnpack/xnnpack_library.h"
#include "graph/builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using testing::random_tensor;
using testing::ScopedEnv;

using testing::f32;

class ConvNextBuilder {
 public:
  explicit ConvNextBuilder(const std::string& name) : b_(name) {}
  GraphBuilder& b() { return b_; }

  ValueId to_last(ValueId x, const std::string& name) {
    return b_.op("Transpose", {x}, {{"perm", Ints{0, 2, 3, 1}}}, name);
  }
  ValueId to_first(ValueId x, const std::string& name) {
    return b_.op("Transpose", {x}, {{"perm", Ints{0, 3, 1, 2}}}, name);
  }
  ValueId norm(ValueId x, int64_t c, const std::string& name) {
    return b_.op("LayerNormalization",
                 {x, b_.constant(name + "_s", random_tensor({c}, seed_++, 0.5f, 1.5f)),
                  b_.constant(name + "_b", random_tensor({c}, seed_++, -0.2f, 0.2f))},
                 {{"axis", int64_t{-1}}, {"epsilon", 1e-6f}}, name);
  }
  ValueId linear(ValueId x, int64_t k, int64_t n, const std::string& name) {
    const float scale = 1.f / std::sqrt(static_cast<float>(k));
    const ValueId m = b_.op("MatMul", {x, b_.constant(name + "_w", random_tensor({k, n}, seed_++, -scale, scale))}, {},
                            name);
    return b_.op("Add", {m, b_.constant(name + "_b", random_tensor({n}, seed_++, -0.1f, 0.1f))}, {}, name + "_add");
  }
  ValueId conv(ValueId x, int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t group, const std::string& name) {
    const int64_t pad = stride == 1 ? k / 2 : 0;
    const float scale = 1.f / std::sqrt(static_cast<float>(cin / group * k * k));
    return b_.op("Conv",
                 {x, b_.constant(name + "_w", random_tensor({cout, cin / group, k, k}, seed_++, -scale, scale)),
                  b_.constant(name + "_b", random_tensor({cout}, seed_++, -0.1f, 0.1f))},
                 {{"kernel_shape", Ints{k, k}},
                  {"strides", Ints{stride, stride}},
                  {"pads", Ints{pad, pad, pad, pad}},
                  {"group", group}},
                 name);
  }
  // torchvision's LayerNorm2d: channels-last, the norm, channels-first.
  ValueId norm2d(ValueId x, int64_t c, const std::string& name) {
    return to_first(norm(to_last(x, name + "_t0"), c, name), name + "_t1");
  }
  ValueId block(ValueId x, int64_t c, const std::string& name) {
    const ValueId d = conv(x, c, c, 7, 1, c, name + "_dw");
    const ValueId h = linear(norm(to_last(d, name + "_t0"), c, name + "_ln"), c, 4 * c, name + "_fc1");
    const ValueId y = linear(b_.op("Gelu", {h}, {}, name + "_gelu"), 4 * c, c, name + "_fc2");
    const ValueId s = b_.op("Mul", {to_first(y, name + "_t1"), b_.constant(name + "_g", random_tensor({c, 1, 1}, seed_++))},
                            {}, name + "_scale");
    return b_.op("Add", {s, x}, {}, name + "_res");
  }

 private:
  GraphBuilder b_;
  uint32_t seed_ = 11;
};

// x [1, 3, 32, 32] -> stem 2x2/2 (16) -> LayerNorm2d -> block -> block ->
// LayerNorm2d -> 2x2/2 (32) -> block -> GlobalAveragePool. With
// `block_output_out`, the first block's output is a graph output too.
Graph small_convnext(bool block_output_out) {
  ConvNextBuilder n(block_output_out ? "convnext_out" : "convnext");
  GraphBuilder& b = n.b();
  ValueId x = n.conv(b.input("x", f32({1, 3, 32, 32})), 3, 16, 2, 2, 1, "stem");
  x = n.norm2d(x, 16, "stem_ln");
  x = n.block(x, 16, "b0");
  if (block_output_out) b.output(x);
  x = n.block(x, 16, "b1");
  x = n.conv(n.norm2d(x, 16, "down_ln"), 16, 32, 2, 2, 1, "down");
  x = n.block(x, 32, "b2");
  b.output(b.op("GlobalAveragePool", {x}, {}, "pool"));
  return testing::build(b);
}

std::set<std::string> layout_view_names(const Graph& graph, int threads) {
  cpu::fast::FastPlan fast;
  const cpu::xnnpack::EnginePlan plan = cpu::fast::plan_with_fast_kernels(graph, fast, threads);
  std::set<std::string> names;
  for (NodeId n : plan.layout_views) names.insert(graph.node(n).name);
  return names;
}

void expect_matches_portable(const Graph& graph, const std::string& label) {
  const Tensor in = random_tensor({1, 3, 32, 32}, 7, -2.f, 2.f);
  auto want = testing::run_cpu_island(graph, {in}, {{"engine", "portable"}, {"threads", "1"}});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  for (const char* threads : {"1", "2"}) {
    auto got = testing::run_cpu_island(graph, {in}, {{"engine", "xnnpack"}, {"threads", threads}}, 3);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got->outputs.size(), want->outputs.size());
    for (size_t o = 0; o < got->outputs.size(); ++o) {
      const Tensor& y = got->outputs[o];
      const Tensor& r = want->outputs[o];
      float peak = 0.f, worst = 0.f;
      for (int64_t i = 0; i < r.num_elements(); ++i) peak = std::max(peak, std::fabs(r.data<float>()[i]));
      for (int64_t i = 0; i < y.num_elements(); ++i)
        worst = std::max(worst, std::fabs(y.data<float>()[i] - r.data<float>()[i]));
      EXPECT_LE(worst, 1e-4f * peak + 1e-6f) << label << ", " << threads << " thread(s), output " << o;
    }
  }
}

bool fast_kernels() { return std::string(cpu::fast::gemm_isa()) != "plain"; }

TEST(LayoutViewsTest, ConvNextTransposesAreViewsBetweenNhwcSteps) {
  ASSERT_TRUE(cpu::xnnpack::ensure_initialized().is_ok());
  const Graph graph = small_convnext(false);
  // The depthwise convs leave XNNPACK for their NHWC kernel on AVX2 and up
  // only (conv_group.h); without them the blocks' inputs stay in the
  // graph's order and only the stem's and downsampling's norms' Transposes
  // sit between NHWC writers and readers.
  if (fast_kernels()) {
    const std::set<std::string> every{"stem_ln_t0", "stem_ln_t1", "down_ln_t0", "down_ln_t1", "b0_t0",
                                      "b0_t1",      "b1_t0",      "b1_t1",      "b2_t0",      "b2_t1"};
    for (const int threads : {1, 2, 16}) EXPECT_EQ(layout_view_names(graph, threads), every) << threads << " threads";
    // Each block's LayerNorm reads its depthwise conv's output through a
    // view and, the last reader of those bytes, writes over them.
    cpu::fast::FastPlan fast;
    const cpu::xnnpack::EnginePlan plan = cpu::fast::plan_with_fast_kernels(graph, fast, 1);
    const Result<cpu::IslandArena> arena = cpu::plan_island_arena(graph, plan, fast);
    ASSERT_TRUE(arena.is_ok()) << arena.status().message();
    const auto output_of = [&](const std::string& name) {
      for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
        if (graph.node(n).name == name) return graph.node(n).outputs[0];
      return kNoValue;
    };
    for (const std::string blk : {"b0", "b1", "b2"}) {
      const ValueId ln = output_of(blk + "_ln");
      EXPECT_TRUE(arena->views.count(ln) && arena->views.at(ln) == output_of(blk + "_dw")) << blk;
    }
  }
  expect_matches_portable(graph, "arena");
  const ScopedEnv no_arena("HETSCHED_CPU_ARENA", "off");
  expect_matches_portable(graph, "no arena");
}

// The first block's output also goes to the caller, in its NCHW order, so
// it is not kept NHWC: the second block's depthwise conv reads it in the
// graph's order and writes its output so, and the Transpose after that conv
// stays a real one. The other Transposes are views as before.
TEST(LayoutViewsTest, AValueTheCallerReadsKeepsItsTransposesReal) {
  ASSERT_TRUE(cpu::xnnpack::ensure_initialized().is_ok());
  const Graph graph = small_convnext(true);
  if (fast_kernels()) {
    const std::set<std::string> views = layout_view_names(graph, 1);
    EXPECT_FALSE(views.count("b1_t0"));
    EXPECT_TRUE(views.count("b0_t0") && views.count("b2_t0") && views.count("b2_t1"));
  }
  expect_matches_portable(graph, "graph output");
}

// MaxViT's MBConv: 1x1 expand conv, Gelu, depthwise 3x3 stride 2, Gelu,
// 1x1 project. The Gelus, elementwise, run on the NHWC data between the
// convs' segments (fast_plan.cc), so nothing is converted between them.
TEST(LayoutViewsTest, GelusBetweenConvsRunOnNhwcData) {
  ASSERT_TRUE(cpu::xnnpack::ensure_initialized().is_ok());
  ConvNextBuilder n("mbconv");
  GraphBuilder& b = n.b();
  b.raw().set_opset(20);
  ValueId x = n.conv(b.input("x", f32({1, 3, 32, 32})), 3, 16, 1, 1, 1, "expand");
  x = b.op("Gelu", {x}, {}, "gelu_a");
  x = b.op("Gelu", {n.conv(x, 16, 16, 3, 2, 16, "dw")}, {}, "gelu_b");
  b.output(n.conv(x, 16, 8, 1, 1, 1, "project"));
  const Graph graph = testing::build(b);
  if (fast_kernels()) {
    for (const int threads : {1, 16}) {
      cpu::fast::FastPlan fast;
      const cpu::xnnpack::EnginePlan plan = cpu::fast::plan_with_fast_kernels(graph, fast, threads);
      std::set<std::string> nhwc;
      for (const cpu::xnnpack::EngineStep& step : plan.steps)
        if (step.nhwc)
          for (NodeId id : step.nodes) nhwc.insert(graph.node(id).name);
      EXPECT_TRUE(nhwc.count("gelu_a") && nhwc.count("gelu_b")) << threads << " threads";
    }
  }
  expect_matches_portable(graph, "mbconv");
}

}  // namespace
}  // namespace hetsched
