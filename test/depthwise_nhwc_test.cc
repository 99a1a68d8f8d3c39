// Depthwise convs with a SiLU after them on the NHWC kernel
// (delegates/cpu/fast/depthwise_nhwc.h, taken by conv_group.h) against
// the portable kernels: 3x3, 5x5, 7x7 and 1x3 kernels, strides 1, 2 and
// (2, 1), dilation 2, symmetric, asymmetric and no padding, channel counts
// below, at and between the kernel's runs of 16, 32 and 64 (7, 16, 40, 96,
// 200) and a filter too big for the pixel-by-pixel order (5x5 x 672),
// batches, no bias; rows wide enough for the tiles of columns; 1 and 2
// threads, between two XNNPACK segments. Grouped convs of 2 and 4 channels
// a group on the same kernel, with a SiLU, and with a Relu at 4 threads
// (the rule takes them at any thread count).
// HETSCHED_DEPTHWISE=off leaves them on XNNPACK; =on also takes one with a
// clamp after it.
//
// Tolerance: |fast - portable| <= 1e-5 * max |portable| + 1e-6 per element.
// A tap or a pad one off, or a channel run read at the wrong offset,
// gives errors of the output's own size.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "delegates/cpu/fast/gemm.h"
#include "graph/builder.h"
#include "graph/passes/fused_activation.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using Ints = std::vector<int64_t>;
using testing::random_tensor;
using testing::ScopedEnv;

using testing::f32;

struct Depthwise {
  Ints kernel{3, 3};
  Ints pads{1, 1, 1, 1};
  Ints strides{1, 1};
  Ints dilations{1, 1};
  bool bias = true;
  int64_t group_width = 1;  // channels a group, in and out: 1 depthwise
  // Fused into the conv as the import passes fuse a Relu or Clip after it
  // (graph/passes/fused_activation.h); the kernel clamps in its stores.
  FusedActivation fused{};
};

ValueId conv1x1(GraphBuilder& b, ValueId x, int64_t cin, int64_t cout, const std::string& name, uint32_t seed) {
  return b.op("Conv", {x, b.constant(name + "_w", random_tensor({cout, cin, 1, 1}, seed, -0.5f, 0.5f))},
              {{"kernel_shape", Ints{1, 1}}}, name);
}

// x -> 1x1 (XNNPACK) -> depthwise -> SiLU (or Relu) -> 1x1 (XNNPACK).
Graph block(const Shape& x, int64_t channels, const Depthwise& d, const std::string& name, bool relu = false) {
  GraphBuilder b(name);
  const ValueId a = conv1x1(b, b.input("x", f32(x)), x[1], channels, "pre", 3);
  std::vector<ValueId> ins{
      a, b.constant("dw_w", random_tensor({channels, d.group_width, d.kernel[0], d.kernel[1]}, 5, -0.4f, 0.4f))};
  if (d.bias) ins.push_back(b.constant("dw_b", random_tensor({channels}, 6)));
  const ValueId c = b.op("Conv", ins,
                         {{"kernel_shape", d.kernel},
                          {"pads", d.pads},
                          {"strides", d.strides},
                          {"dilations", d.dilations},
                          {"group", channels / d.group_width}},
                         "dw");
  if (d.fused.kind != FusedActivation::Kind::kNone)
    write_fused_activation(d.fused, b.raw().node(b.raw().find_node("dw")).attrs);
  const ValueId s = relu ? b.op("Relu", {c}, {}, "relu") : b.op("Mul", {c, b.op("Sigmoid", {c}, {}, "sig")}, {}, "mul");
  b.output(conv1x1(b, s, channels, 5, "post", 7));
  return testing::build(b);
}

void expect_agrees(const Shape& x, int64_t channels, const Depthwise& d) {
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  ScopedEnv depthwise("HETSCHED_DEPTHWISE", nullptr);
  const std::string name = "dw" + std::to_string(channels) + "_g" + std::to_string(d.group_width) + "_k" +
                           std::to_string(d.kernel[0]) + "x" + std::to_string(d.kernel[1]) + "_s" +
                           std::to_string(d.strides[0]) + std::to_string(d.strides[1]);
  // Without AVX2 the kernel is not used (conv_group.h), and what runs the
  // conv is other kernels' business.
  if (std::string(cpu::fast::gemm_isa()) == "plain") return;
  testing::expect_fast_cpu_matches_portable(block(x, channels, d, name), x, 3, 2, 1e-5f, "depthwise");
}

TEST(DepthwiseNhwcTest, KernelsStridesAndPaddingsMatchPortable) {
  expect_agrees({1, 3, 9, 11}, 40, Depthwise{});
  expect_agrees({1, 3, 12, 10}, 96, Depthwise{{3, 3}, {1, 1, 1, 1}, {2, 2}});
  expect_agrees({1, 3, 9, 8}, 16, Depthwise{{5, 5}, {2, 2, 2, 2}});
  expect_agrees({1, 3, 13, 9}, 7, Depthwise{{7, 7}, {3, 3, 3, 3}});
  expect_agrees({1, 3, 8, 11}, 33, Depthwise{{1, 3}, {0, 1, 0, 1}});
  expect_agrees({1, 3, 9, 10}, 40, Depthwise{{3, 3}, {0, 2, 1, 0}});         // asymmetric pads
  expect_agrees({1, 3, 7, 9}, 24, Depthwise{{3, 3}, {0, 0, 0, 0}});          // no padding
  expect_agrees({1, 3, 11, 9}, 48, Depthwise{{3, 3}, {1, 1, 1, 1}, {2, 1}});  // stride (2, 1)
  Depthwise dilated{{3, 3}, {2, 2, 2, 2}};
  dilated.dilations = {2, 2};
  expect_agrees({1, 3, 10, 12}, 40, dilated);
}

TEST(DepthwiseNhwcTest, ChannelRunsBatchesAndBigFiltersMatchPortable) {
  expect_agrees({1, 3, 6, 7}, 200, Depthwise{});                           // 3 x 64 + 8
  expect_agrees({1, 3, 7, 7}, 672, Depthwise{{5, 5}, {2, 2, 2, 2}});       // 67 KB of weights: run by run
  expect_agrees({1, 3, 9, 9}, 240, Depthwise{{5, 5}, {2, 2, 2, 2}, {2, 2}});
  Depthwise no_bias;
  no_bias.bias = false;
  expect_agrees({3, 3, 5, 6}, 40, no_bias);
}

// With a clamp (a Relu) after it rather than a SiLU, the rule takes the
// conv on AVX-512 only (conv_group.cc; with AVX2 alone XNNPACK's kernel is
// as fast, and the conv stays in the one segment); HETSCHED_DEPTHWISE=on
// (benchmarks) takes it with its clamp everywhere.
TEST(DepthwiseNhwcTest, OnTakesOneWithAClampWhichTheRuleTakesOnAvx512) {
  if (std::string(cpu::fast::gemm_isa()) == "plain") GTEST_SKIP() << "the kernel needs AVX2 and FMA";
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  const Graph graph = block({1, 3, 9, 11}, 40, Depthwise{{3, 3}, {1, 1, 1, 1}, {2, 2}}, "dw_relu", true);
  {
    ScopedEnv on("HETSCHED_DEPTHWISE", "on");
    testing::expect_fast_cpu_matches_portable(graph, {1, 3, 9, 11}, 1, 2, 1e-5f, "depthwise");
  }
  ScopedEnv rule("HETSCHED_DEPTHWISE", nullptr);
  if (std::string(cpu::fast::gemm_isa()) == "avx512f")
    testing::expect_fast_cpu_matches_portable(graph, {1, 3, 9, 11}, 1, 2, 1e-5f, "depthwise");
  else
    testing::expect_fast_cpu_matches_portable(graph, {1, 3, 9, 11}, 0, 1, 1e-5f, "depthwise");
}

// Rows wide enough for the tiles of 8 columns (and of 4, and the last
// tile moved back to end at the row's last inside column) at every kernel
// width and stride they take (3, 5, 7; 1, 2), channel counts whose last run
// of 16 overlaps the one before it (24, 72, 40) or that have no run at all
// (7), a row whose inside columns are too few for a tile (5x5 on 7 wide),
// and a dilated row, which the tiles leave to the pixel-by-pixel order. A
// tap one column off, or a moved-back tile or overlapping run that read
// another tile's columns, gives errors of the output's own size.
TEST(DepthwiseNhwcTest, TilesOfColumnsMatchPortable) {
  expect_agrees({1, 3, 5, 29}, 72, Depthwise{});                                      // 27 inside: 8, 8, 8, moved back
  expect_agrees({1, 3, 6, 21}, 24, Depthwise{{3, 3}, {1, 1, 1, 1}, {2, 2}});          // stride 2
  expect_agrees({1, 3, 6, 18}, 40, Depthwise{{5, 5}, {2, 2, 2, 2}});                  // 14 inside
  expect_agrees({1, 3, 7, 25}, 24, Depthwise{{5, 5}, {2, 2, 2, 2}, {2, 2}});
  expect_agrees({1, 3, 9, 30}, 16, Depthwise{{7, 7}, {3, 3, 3, 3}});
  expect_agrees({1, 3, 9, 33}, 40, Depthwise{{7, 7}, {3, 3, 3, 3}, {2, 2}});
  expect_agrees({1, 3, 7, 10}, 72, Depthwise{{5, 5}, {2, 2, 2, 2}});                  // 6 inside: tiles of 4
  expect_agrees({1, 3, 4, 14}, 576, Depthwise{});                                     // 12 inside, big filter
  expect_agrees({1, 3, 5, 15}, 96, Depthwise{});                                      // 13 inside: 8, 8 moved back
  expect_agrees({1, 3, 4, 15}, 480, Depthwise{});                                     // the same, big filter
  expect_agrees({1, 3, 7, 7}, 1152, Depthwise{{5, 5}, {2, 2, 2, 2}});                 // 3 inside: no tiles; big filter
  expect_agrees({1, 3, 6, 26}, 7, Depthwise{});                                       // no run of 16
  expect_agrees({1, 3, 6, 25}, 672, Depthwise{{5, 5}, {2, 2, 2, 2}});                 // big filter: run by run
  expect_agrees({1, 3, 5, 20}, 200, Depthwise{{5, 5}, {2, 2, 2, 2}});                 // the same, last run overlapping
  Depthwise dilated{{3, 3}, {2, 2, 2, 2}};
  dilated.dilations = {1, 2};
  expect_agrees({1, 3, 8, 27}, 40, dilated);
}

// A Relu or Clip fused into the conv (as imported models have them),
// clamped in the kernel's stores: the tiles of columns (strides 1 and 2,
// 3x3 and 5x5), the edge columns and overlapping runs (72 channels), a
// leftover below one run (7), the run-by-run order of a big filter (672),
// and the SiLU pass after the clamp. A store that skips the clamp, or
// clamps before the bias, gives errors of the output's own size.
TEST(DepthwiseNhwcTest, FusedClampsInTheStoresMatchPortable) {
  if (std::string(cpu::fast::gemm_isa()) == "plain") GTEST_SKIP() << "the kernel needs AVX2 and FMA";
  // The rule takes a clamped conv on AVX-512 only; on forces it on AVX2 too.
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  ScopedEnv on("HETSCHED_DEPTHWISE", "on");
  FusedActivation relu{FusedActivation::Kind::kRelu};
  FusedActivation clip{FusedActivation::Kind::kClip};
  clip.min = 0.f;
  clip.max = 0.25f;
  const auto agrees = [](const Shape& x, int64_t channels, Depthwise d, const FusedActivation& fused) {
    d.fused = fused;
    testing::expect_fast_cpu_matches_portable(block(x, channels, d, "dw_clamped_" + std::to_string(channels)), x, 3, 2,
                                              1e-5f, "depthwise");
  };
  for (const FusedActivation& fused : {relu, clip}) {
    SCOPED_TRACE(fused_activation_name(fused.kind));
    agrees({1, 3, 5, 29}, 72, Depthwise{}, fused);
    agrees({1, 3, 6, 26}, 7, Depthwise{}, fused);
    agrees({1, 3, 6, 21}, 24, Depthwise{{3, 3}, {1, 1, 1, 1}, {2, 2}}, fused);
    agrees({1, 3, 6, 25}, 672, Depthwise{{5, 5}, {2, 2, 2, 2}}, fused);
    agrees({1, 3, 6, 18}, 40, Depthwise{{5, 5}, {2, 2, 2, 2}}, fused);
  }
}

// Rows fewer than 4 tasks a thread: at 2 threads each row is split into
// parts of whole runs of 16 channels, the last part also taking the
// channels past the last whole run (72: 0-15, 16-31, 32-47, 48-71; 200 in
// 12 runs: 3 runs a part), each part's SiLU over its own channels only. A
// part boundary off by a run, or the SiLU run twice over a part, gives
// errors of the output's own size.
// Grouped convs: 128 channels in groups of 4 (ResNeXt-50's first stage),
// strides 1 and 2; 40 (runs of 16 and a leftover of 8, groups straddling
// nothing); 8 (leftover only); groups of 2; a 5x5 whose weights (83 KB)
// go run by run; dilation 2; a batch without bias.
TEST(DepthwiseNhwcTest, GroupsOfTwoAndFourChannelsMatchPortable) {
  const auto grouped = [](int64_t gw, Depthwise d = Depthwise{}) {
    d.group_width = gw;
    return d;
  };
  expect_agrees({1, 3, 9, 11}, 128, grouped(4));
  expect_agrees({1, 3, 12, 10}, 128, grouped(4, Depthwise{{3, 3}, {1, 1, 1, 1}, {2, 2}}));
  expect_agrees({1, 3, 9, 11}, 40, grouped(4));
  expect_agrees({1, 3, 7, 6}, 8, grouped(4));
  expect_agrees({1, 3, 9, 11}, 24, grouped(2));
  expect_agrees({1, 3, 9, 9}, 208, grouped(4, Depthwise{{5, 5}, {2, 2, 2, 2}}));
  Depthwise dilated{{3, 3}, {2, 2, 2, 2}};
  dilated.dilations = {2, 2};
  expect_agrees({1, 3, 10, 12}, 48, grouped(4, dilated));
  Depthwise no_bias;
  no_bias.bias = false;
  expect_agrees({3, 3, 5, 6}, 64, grouped(2, no_bias));
}

// A grouped conv with a Relu leaves its segment at 4 threads too; one of 8
// channels a group stays on XNNPACK (slower here: depthwise_nhwc.cc).
TEST(DepthwiseNhwcTest, RuleTakesGroupsOfFourAtAnyThreadCountButNotOfEight) {
  if (std::string(cpu::fast::gemm_isa()) == "plain") GTEST_SKIP() << "the kernel needs AVX2 and FMA";
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  ScopedEnv rule("HETSCHED_DEPTHWISE", nullptr);
  const Shape x{1, 3, 9, 11};
  for (const int64_t gw : {4, 8}) {
    Depthwise d;
    d.group_width = gw;
    const Graph graph = block(x, 64, d, "grouped_relu" + std::to_string(gw), true);
    auto run = testing::run_cpu_island(graph, {random_tensor(x, 1)}, {{"engine", "xnnpack"}, {"threads", "4"}});
    ASSERT_TRUE(run.is_ok()) << run.status().message();
    if (gw == 4) {
      EXPECT_GT(run->coverage.fast_ops, 0);
    } else {
      EXPECT_EQ(run->coverage.fast_ops, 0);
    }
  }
}

TEST(DepthwiseNhwcTest, RowsSplitIntoChannelPartsMatchPortable) {
  expect_agrees({1, 3, 2, 29}, 72, Depthwise{});
  expect_agrees({1, 3, 1, 20}, 200, Depthwise{{5, 5}, {2, 2, 2, 2}});
  expect_agrees({1, 3, 2, 9}, 24, Depthwise{});  // one whole run: no parts
}

// Where one output row's input rows outgrow L1 (24 KiB), each task takes a
// part of the channels over a band of rows (depthwise_nhwc.cc's run):
// 200 channels at 14x14 in two parts, the second with the 8 past the last
// run; 520 channels, 5x5 stride 2, two images, in parts of 5 runs, the
// bands running from one image into the next.
TEST(DepthwiseNhwcTest, ChannelPartsOverBandsOfRowsMatchPortable) {
  expect_agrees({1, 3, 14, 14}, 200, Depthwise{});
  expect_agrees({2, 3, 15, 13}, 520, Depthwise{{5, 5}, {2, 2, 2, 2}, {2, 2}});
}

// x -> 1x1 -> depthwise -> SiLU -> squeeze-and-excitation (the squeeze, a
// GlobalAveragePool or a ReduceMean over H and W; 1x1 -> Relu -> 1x1 ->
// Sigmoid; the Mul) -> 1x1.
Graph se_block(const Shape& x, int64_t channels, const Depthwise& d, bool reduce_mean, const std::string& name) {
  GraphBuilder b(name);
  const ValueId a = conv1x1(b, b.input("x", f32(x)), x[1], channels, "pre", 3);
  const ValueId c = b.op("Conv",
                         {a, b.constant("dw_w", random_tensor({channels, 1, d.kernel[0], d.kernel[1]}, 5, -0.4f, 0.4f)),
                          b.constant("dw_b", random_tensor({channels}, 6))},
                         {{"kernel_shape", d.kernel}, {"pads", d.pads}, {"strides", d.strides}, {"group", channels}},
                         "dw");
  const ValueId s = b.op("Mul", {c, b.op("Sigmoid", {c}, {}, "sig")}, {}, "mul");
  const ValueId squeezed = reduce_mean ? b.op("ReduceMean", {s}, {{"axes", Ints{2, 3}}, {"keepdims", int64_t{1}}}, "mean")
                                       : b.op("GlobalAveragePool", {s}, {}, "mean");
  const ValueId f = b.op("Relu", {conv1x1(b, squeezed, channels, 4, "fc1", 8)});
  const ValueId gate = b.op("Sigmoid", {conv1x1(b, f, 4, channels, "fc2", 9)});
  b.output(conv1x1(b, b.op("Mul", {s, gate}, {}, "excite"), channels, 5, "post", 7));
  return testing::build(b);
}

// The squeeze of a squeeze-and-excitation block reading a depthwise conv's
// output is summed from the conv's finished rows (depthwise_nhwc.h's
// `mean`): 4 nodes on the fast kernel (conv, SiLU, squeeze). 40 channels
// (two runs and 8 more), a GlobalAveragePool; 200 channels, stride 2, a
// batch of 2, in channel parts over bands of rows (the sums of each row's
// part by its own task), a ReduceMean.
TEST(DepthwiseNhwcTest, SqueezeSummedFromTheRowsMatchesPortable) {
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  ScopedEnv excite("HETSCHED_SE_EXCITE", "off");  // the gate and Mul in segments (se_excite_test.cc takes them)
  ScopedEnv depthwise("HETSCHED_DEPTHWISE", nullptr);
  if (std::string(cpu::fast::gemm_isa()) == "plain") GTEST_SKIP() << "the kernel needs AVX2";
  testing::expect_fast_cpu_matches_portable(se_block({1, 3, 9, 11}, 40, Depthwise{}, false, "se_gap"), {1, 3, 9, 11},
                                            4, 2, 1e-5f, "squeeze");
  testing::expect_fast_cpu_matches_portable(
      se_block({2, 3, 28, 27}, 200, Depthwise{{3, 3}, {1, 1, 1, 1}, {2, 2}}, true, "se_mean"), {2, 3, 28, 27}, 4, 2,
      1e-5f, "squeeze");
}

// Past 2 threads the rule leaves a depthwise conv with a clamp in its
// segment (conv_group.cc: at 16 threads each step of its own woke the
// pool's threads); one with a SiLU after it still leaves.
TEST(DepthwiseNhwcTest, RuleLeavesOneWithAClampInItsSegmentPastTwoThreads) {
  if (std::string(cpu::fast::gemm_isa()) == "plain") GTEST_SKIP() << "the kernel needs AVX2 and FMA";
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  ScopedEnv rule("HETSCHED_DEPTHWISE", nullptr);
  const Shape x{1, 3, 9, 11};
  for (const bool relu : {true, false}) {
    const Graph graph = block(x, 40, Depthwise{}, relu ? "dw_relu4" : "dw_silu4", relu);
    auto run = testing::run_cpu_island(graph, {random_tensor(x, 1)}, {{"engine", "xnnpack"}, {"threads", "4"}});
    ASSERT_TRUE(run.is_ok()) << run.status().message();
    EXPECT_EQ(run->coverage.fast_ops, relu ? 0 : 3) << (relu ? "relu" : "silu");
  }
}

TEST(DepthwiseNhwcTest, OffKeepsTheConvOnXnnpack) {
  ScopedEnv pointwise("HETSCHED_POINTWISE", "off");
  ScopedEnv off("HETSCHED_DEPTHWISE", "off");
  // The SiLU alone leaves, between the segments of the 1x1s and the conv.
  testing::expect_fast_cpu_matches_portable(block({1, 3, 9, 11}, 40, Depthwise{}, "dw_off"), {1, 3, 9, 11}, 2, 2, 1e-5f,
                                            "depthwise");
}

}  // namespace
}  // namespace hetsched
