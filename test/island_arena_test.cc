// The CPU island's arena (delegates/cpu/island_arena.h): which values it
// places, over which steps each lives, and that no two values alive at one
// step share a byte, on hand-made plans; and that a model split into many
// steps over the arena still matches the portable kernels run after run.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "delegates/cpu/fast/fast_plan.h"
#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/island_arena.h"
#include "delegates/cpu/xnnpack/xnnpack_library.h"
#include "graph/builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using cpu::IslandArena;
using testing::ScopedEnv;
using cpu::xnnpack::EnginePlan;
using cpu::xnnpack::EngineStep;

using testing::f32;

Tensor i64(const std::vector<int64_t>& values) {
  return Tensor::from_vector(DType::kInt64, {static_cast<int64_t>(values.size())}, values);
}

EngineStep segment(std::vector<NodeId> nodes) { return EngineStep{true, false, std::move(nodes), {}, {}, {}, {}}; }
EngineStep portable(std::vector<NodeId> nodes) { return EngineStep{false, false, std::move(nodes), {}, {}, {}, {}}; }

std::map<ValueId, uint64_t> offsets_of(const IslandArena& arena) {
  return std::map<ValueId, uint64_t>(arena.placed.begin(), arena.placed.end());
}

// A plan of `g` whose one fast group is a 1x1 conv (node `conv`, standing
// in) with its residual Add (node `add`) of `residual`, writing `output`.
cpu::fast::FastPlan with_residual_group(const Graph& g, NodeId conv, NodeId add, ValueId residual, ValueId output) {
  cpu::fast::FastPlan fast;
  fast.on_fast_kernel.assign(g.num_nodes(), false);
  cpu::fast::ConvGroup group;
  group.conv = conv;
  group.add = add;
  group.residual = residual;
  group.output = output;
  fast.conv_groups = {group};
  fast.conv_group_at[conv] = 0;
  fast.in_conv_group.insert(add);
  return fast;
}

bool overlap(const Graph& g, const std::map<ValueId, uint64_t>& at, ValueId a, ValueId b) {
  const uint64_t a0 = at.at(a), a1 = a0 + g.value(a).type.byte_size();
  const uint64_t b0 = at.at(b), b1 = b0 + g.value(b).type.byte_size();
  return a0 < b1 && b0 < a1;
}

// x -> n0 (segment) -> v0 -> n1 (fast) -> v1 -> n2 (segment, n3 inside it)
//   -> v3 -> n4 (portable) -> v4 -> n5 (fast) -> y
TEST(IslandArenaTest, PlacesValuesCrossingStepsAndSharesBytesOnlyBetweenDisjointLifetimes) {
  GraphBuilder b("chain");
  const ValueId x = b.input("x", f32({1, 64}));
  const ValueId v0 = b.op("Relu", {x}, {}, "n0");
  const ValueId v1 = b.op("Relu", {v0}, {}, "n1");
  const ValueId v2 = b.op("Relu", {v1}, {}, "n2");
  const ValueId v3 = b.op("Relu", {v2}, {}, "n3");
  const ValueId v4 = b.op("Relu", {v3}, {}, "n4");
  b.output(b.op("Relu", {v4}, {}, "n5"));
  const Graph g = testing::build(b);
  EnginePlan plan;
  plan.steps = {segment({0}), portable({1}), segment({2, 3}), portable({4}), portable({5})};
  cpu::fast::FastPlan fast;
  fast.on_fast_kernel = {false, true, false, false, false, true};
  const Result<IslandArena> arena = cpu::plan_island_arena(g, plan, fast);
  ASSERT_TRUE(arena.is_ok()) << arena.status().message();
  const auto at = offsets_of(*arena);
  // v2 lives inside one segment; v4 is a portable kernel's output (which may
  // count on a zeroed buffer); y is the island's output: none is placed.
  EXPECT_EQ(at.size(), 3u);
  ASSERT_TRUE(at.count(v0) && at.count(v1) && at.count(v3));
  EXPECT_FALSE(at.count(v2) || at.count(v4));
  EXPECT_FALSE(overlap(g, at, v0, v1));  // both alive at step 1
  EXPECT_FALSE(overlap(g, at, v1, v3));  // both alive at step 2
  // v0 (steps 0-1) and v3 (steps 2-3) never live together: the arena is two
  // values' size, not three.
  EXPECT_EQ(arena->bytes, 2u * 64 * sizeof(float));
  for (const auto& [v, offset] : at) EXPECT_EQ(offset % 64, 0u) << "value " << v;
}

// A 1x1 conv group runs its Add at the conv's step: the group's output is
// written there, before the Add's own plan step, and must not share bytes
// with a value that dies in between.
TEST(IslandArenaTest, AGroupsOutputLivesFromTheStepItRunsAt) {
  GraphBuilder b("group");
  const ValueId x = b.input("x", f32({1, 256}));
  const ValueId r = b.op("Relu", {x}, {}, "n0");        // the residual
  const ValueId c = b.op("Relu", {r}, {}, "n1_conv");   // stands for the group's conv
  const ValueId t = b.op("Relu", {r}, {}, "n2");        // dies at step 3
  const ValueId u = b.op("Relu", {t}, {}, "n3");
  const ValueId s = b.op("Add", {c, r}, {}, "n4_add");  // the group's Add, run with n1
  b.output(b.op("Add", {s, u}, {}, "n5"));
  const Graph g = testing::build(b);
  EnginePlan plan;
  plan.steps = {segment({0}), portable({1}), segment({2}), segment({3}), portable({4}), segment({5})};
  const cpu::fast::FastPlan fast = with_residual_group(g, 1, 4, r, s);
  const Result<IslandArena> arena = cpu::plan_island_arena(g, plan, fast);
  ASSERT_TRUE(arena.is_ok()) << arena.status().message();
  const auto at = offsets_of(*arena);
  ASSERT_TRUE(at.count(s) && at.count(t) && at.count(r) && at.count(u));
  EXPECT_FALSE(at.count(c));  // written and read at step 1 only, never materialised
  EXPECT_FALSE(overlap(g, at, s, t));  // s written at step 1, t alive over steps 2-3
  EXPECT_FALSE(overlap(g, at, s, r));
  // r is the conv's own input, and n2 reads it later: s has bytes of its own.
  EXPECT_TRUE(arena->views.empty());
}

// x -> n0 (segment) -> r -> n1 (segment) -> a -> n2 the group's conv (fast,
// reading a) + n3 its Add of r -> s -> n4 (segment) -> v -> n5 (segment)
// -> y. The group is r's last reader, so s takes over r's bytes: s is no
// value of its own, and r lives until n4 reads s. With n6 reading r after
// the group, s keeps bytes of its own.
TEST(IslandArenaTest, AResidualGroupsOutputTakesOverTheResidualItReadsLast) {
  for (const bool read_after : {false, true}) {
    SCOPED_TRACE(read_after ? "r read after the group" : "the group reads r last");
    GraphBuilder b("in_place");
    const ValueId x = b.input("x", f32({1, 256}));
    const ValueId r = b.op("Relu", {x}, {}, "n0");
    const ValueId a = b.op("Relu", {r}, {}, "n1");
    const ValueId c = b.op("Relu", {a}, {}, "n2_conv");
    const ValueId s = b.op("Add", {c, r}, {}, "n3_add");
    const ValueId v = b.op("Relu", {s}, {}, "n4");
    const ValueId y = b.op("Relu", {v}, {}, "n5");
    if (read_after) {
      b.output(b.op("Add", {y, r}, {}, "n6"));
    } else {
      b.output(y);
    }
    const Graph g = testing::build(b);
    EnginePlan plan;
    plan.steps = {segment({0}), segment({1}), portable({2}), portable({3}), segment({4}), segment({5})};
    if (read_after) plan.steps.push_back(segment({6}));
    const cpu::fast::FastPlan fast = with_residual_group(g, 2, 3, r, s);
    const Result<IslandArena> arena = cpu::plan_island_arena(g, plan, fast);
    ASSERT_TRUE(arena.is_ok()) << arena.status().message();
    const auto at = offsets_of(*arena);
    ASSERT_TRUE(at.count(r) && at.count(a) && at.count(v));
    if (read_after) {
      EXPECT_TRUE(arena->views.empty());
      ASSERT_TRUE(at.count(s));
      EXPECT_FALSE(overlap(g, at, s, r));
      continue;
    }
    EXPECT_EQ(arena->views, (std::map<ValueId, ValueId>{{s, r}}));
    EXPECT_FALSE(at.count(s));
    EXPECT_FALSE(overlap(g, at, r, a));  // both alive at the group's step
    EXPECT_FALSE(overlap(g, at, r, v));  // r holds s until n4 has read it
    ScopedEnv off("HETSCHED_RESIDUAL_IN_PLACE", "off");
    const Result<IslandArena> apart = cpu::plan_island_arena(g, plan, fast);
    ASSERT_TRUE(apart.is_ok()) << apart.status().message();
    EXPECT_TRUE(apart->views.empty());
  }
}

// x -> n0 (segment) -> v0 -> n1 Reshape (portable) -> v1 -> n2 Flatten
// (portable) -> v2 -> n3 (segment) -> v3 -> n4 (segment) -> y, and
// n5 Reshape of v3 -> z, an island output: v1 and v2 are views of v0, so
// v0 lives until n3 reads v2 and must not share bytes with v3; z is no
// view (the island's outputs have buffers of their own).
TEST(IslandArenaTest, ViewsShareTheirRootsBytesAndKeepItAlive) {
  GraphBuilder b("views");
  const ValueId x = b.input("x", f32({2, 3, 4}));
  const ValueId v0 = b.op("Relu", {x}, {}, "n0");
  const ValueId v1 = b.op("Reshape", {v0, b.constant("s1", i64({2, 12, 1}))}, {}, "n1");
  const ValueId v2 = b.op("Flatten", {v1}, {}, "n2");
  const ValueId v3 = b.op("Relu", {v2}, {}, "n3");
  b.output(b.op("Relu", {v3}, {}, "n4"));
  b.output(b.op("Reshape", {v3, b.constant("s5", i64({4, 6}))}, {}, "n5"));
  const Graph g = testing::build(b);
  EnginePlan plan;
  plan.steps = {segment({0}), portable({1}), portable({2}), segment({3}), segment({4}), portable({5})};
  cpu::fast::FastPlan fast;
  fast.on_fast_kernel.assign(6, false);
  const std::map<ValueId, ValueId> views = cpu::island_views(g, plan, fast);
  EXPECT_EQ(views, (std::map<ValueId, ValueId>{{v1, v0}, {v2, v0}}));
  const Result<IslandArena> arena = cpu::plan_island_arena(g, plan, fast);
  ASSERT_TRUE(arena.is_ok()) << arena.status().message();
  const auto at = offsets_of(*arena);
  ASSERT_TRUE(at.count(v0) && at.count(v3));
  EXPECT_FALSE(at.count(v1) || at.count(v2));
  EXPECT_FALSE(overlap(g, at, v0, v3));
}

// Attention's head split between a linear layer on the fast GEMM and a
// Transpose (the Reshape between them is a view), then a Reshape, an
// Unsqueeze and a Flatten before a second linear layer (in an XNNPACK
// segment here), run three times on one island: the view reads its root's
// bytes.
TEST(IslandArenaTest, AModelWithViewsMatchesPortableRunAfterRun) {
  GraphBuilder b("views_model");
  const ValueId x = b.input("x", f32({64, 1, 128}));
  ValueId v = b.op("MatMul", {x, b.constant("w0", testing::random_tensor({128, 384}, 11, -0.1f, 0.1f))}, {}, "mm0");
  v = b.op("Add", {v, b.constant("b0", testing::random_tensor({384}, 12))}, {}, "add0");
  v = b.op("Reshape", {v, b.constant("s0", i64({64, 12, 32}))}, {}, "r0");
  v = b.op("Transpose", {v}, {{"perm", std::vector<int64_t>{1, 0, 2}}}, "t0");
  v = b.op("Reshape", {v, b.constant("s1", i64({12, 2048}))}, {}, "r1");
  v = b.op("Unsqueeze", {v, b.constant("a2", i64({0}))}, {}, "u2");
  v = b.op("Flatten", {v}, {{"axis", int64_t{2}}}, "f3");
  v = b.op("MatMul", {v, b.constant("w1", testing::random_tensor({2048, 40}, 13, -0.03f, 0.03f))}, {}, "mm1");
  b.output(b.op("Add", {v, b.constant("b1", testing::random_tensor({40}, 14))}, {}, "add1"));
  const Graph g = testing::build(b);
  const Tensor in = testing::random_tensor({64, 1, 128}, 5, -3.f, 3.f);
  auto want = testing::run_cpu_island(g, {in}, {{"engine", "portable"}, {"threads", "1"}});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  auto got = testing::run_cpu_island(g, {in}, {{"engine", "xnnpack"}, {"threads", "2"}}, 3);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  const Tensor& y = got->outputs[0];
  ASSERT_EQ(y.num_elements(), want->outputs[0].num_elements());
  for (int64_t i = 0; i < y.num_elements(); ++i)
    ASSERT_NEAR(y.data<float>()[i], want->outputs[0].data<float>()[i], 1e-5f) << "element " << i;
}

// A model the fast kernels split into many steps (SiLUs between XNNPACK
// segments), run three times on one island: the arena's reuse must not
// leak one run's or one value's bytes into another.
TEST(IslandArenaTest, ASplitModelMatchesPortableRunAfterRun) {
  GraphBuilder b("split");
  ValueId v = b.input("x", f32({1, 6, 11, 9}));
  int64_t cin = 6;
  for (int i = 0; i < 4; ++i) {
    const int64_t cout = 8 + 5 * i;
    const std::string name = "conv" + std::to_string(i);
    v = b.op("Conv", {v, b.constant(name + "_w", testing::random_tensor({cout, cin, 1, 1}, 7 + i, -0.5f, 0.5f))},
             {{"kernel_shape", std::vector<int64_t>{1, 1}}}, name);
    v = b.op("Mul", {v, b.op("Sigmoid", {v}, {}, name + "_sig")}, {}, name + "_mul");
    cin = cout;
  }
  b.output(v);
  const Graph g = testing::build(b);
  const Tensor x = testing::random_tensor({1, 6, 11, 9}, 3, -2.f, 2.f);
  auto want = testing::run_cpu_island(g, {x}, {{"engine", "portable"}, {"threads", "1"}});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  testing::ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  auto got = testing::run_cpu_island(g, {x}, {{"engine", "xnnpack"}, {"threads", "2"}}, 3);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  EXPECT_EQ(got->coverage.xnnpack_segments, 4);
  const Tensor& y = got->outputs[0];
  for (int64_t i = 0; i < y.num_elements(); ++i)
    ASSERT_NEAR(y.data<float>()[i], want->outputs[0].data<float>()[i], 1e-5f) << "element " << i;
}

// A post-norm block's tail: linear (fast GEMM) -> LayerNormalization ->
// Reshape -> linear -> Gelu -> linear, and a second LayerNormalization
// whose input a Transpose reads after it, in the same portable step. The
// first LayerNorm and the Gelu are their inputs' last readers and write
// over them (their outputs, and the Reshape of the LayerNorm's, are views
// of the inputs); the second LayerNorm's input lives on, so it gets bytes
// of its own. Run three times at two threads against the portable kernels.
TEST(IslandArenaTest, LayerNormAndGeluOverwriteTheInputTheyReadLast) {
  GraphBuilder b("overwrite");
  const ValueId x = b.input("x", f32({1, 48, 64}));
  const auto linear = [&](ValueId in, int64_t k, int64_t n, const std::string& name) {
    return b.op("MatMul", {in, b.constant(name + "_w", testing::random_tensor({k, n}, 21, -0.2f, 0.2f))}, {}, name);
  };
  const auto norm = [&](ValueId in, const std::string& name) {
    return b.op("LayerNormalization",
                {in, b.constant(name + "_s", testing::random_tensor({64}, 22)),
                 b.constant(name + "_b", testing::random_tensor({64}, 23))},
                {{"axis", int64_t{-1}}}, name);
  };
  const ValueId h = linear(x, 64, 64, "mm0");
  const ValueId ln = norm(h, "ln0");
  const ValueId r = b.op("Reshape", {ln, b.constant("s", i64({48, 64}))}, {}, "r");
  const ValueId ff = linear(r, 64, 256, "mm1");
  const ValueId g = b.op("Gelu", {ff}, {}, "gelu");
  const ValueId out = linear(g, 256, 64, "mm2");
  const ValueId ln1 = norm(out, "ln1");
  b.output(b.op("Gelu", {ln1}, {}, "gelu1"));
  // Read after ln1 in the same portable step (fast kernels run in order).
  b.output(b.op("Transpose", {out}, {{"perm", std::vector<int64_t>{1, 0}}}, "late_reader"));
  const Graph graph = testing::build(b);
  ASSERT_TRUE(cpu::xnnpack::ensure_initialized().is_ok());
  cpu::fast::FastPlan fast;
  const EnginePlan plan = cpu::fast::plan_with_fast_kernels(graph, fast);
  const Result<IslandArena> arena = cpu::plan_island_arena(graph, plan, fast);
  ASSERT_TRUE(arena.is_ok()) << arena.status().message();
  const bool fast_gemm = std::string(cpu::fast::gemm_isa()) != "plain";
  if (fast_gemm) {
    EXPECT_EQ(arena->views.count(ln) ? arena->views.at(ln) : kNoValue, h);
    EXPECT_EQ(arena->views.count(r) ? arena->views.at(r) : kNoValue, h);
    EXPECT_EQ(arena->views.count(g) ? arena->views.at(g) : kNoValue, ff);
    EXPECT_FALSE(arena->views.count(ln1));
  }
  {
    const ScopedEnv off("HETSCHED_OVERWRITE_INPUT", "off");
    const Result<IslandArena> apart = cpu::plan_island_arena(graph, plan, fast);
    ASSERT_TRUE(apart.is_ok());
    EXPECT_FALSE(apart->views.count(ln) || apart->views.count(g));
  }
  const Tensor in = testing::random_tensor({1, 48, 64}, 5, -2.f, 2.f);
  auto want = testing::run_cpu_island(graph, {in}, {{"engine", "portable"}, {"threads", "1"}});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  auto got = testing::run_cpu_island(graph, {in}, {{"engine", "xnnpack"}, {"threads", "2"}}, 3);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  for (size_t o = 0; o < got->outputs.size(); ++o) {
    const Tensor& y = got->outputs[o];
    for (int64_t i = 0; i < y.num_elements(); ++i)
      ASSERT_NEAR(y.data<float>()[i], want->outputs[o].data<float>()[i], 1e-4f) << "output " << o << " element " << i;
  }
}

}  // namespace
}  // namespace hetsched
