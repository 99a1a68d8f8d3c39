// Resize on its fast kernel (delegates/cpu/fast/resize.cc) against the
// portable kernel: nearest and linear, every coordinate transformation,
// up and down, sizes and scales, a batch; alone in its island (the graph's
// order: a nearest Resize is a portable step with a fast kernel, a linear
// one a lone XNNPACK segment, converting both its edges, that the fast
// kernel replaces), and as the island's output read from NHWC data
// between segments (fast_plan.cc's lone Resize to an output: an NHWC step
// writing the graph's order).
//
// Tolerance: |fast - portable| <= 1e-6 * max |portable| + 1e-6 per element
// (test_util.h): both lerp along W, then along H, with the same taps.
// Reading the NHWC input as NCHW, taking a tap's lo for its hi, or writing
// the output row of the tap's lo fails these.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "delegates/cpu/fast/gemm.h"
#include "graph/builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using testing::random_tensor;

using testing::f32;

struct Case {
  std::string mode, transform, nearest = "round_prefer_floor";
  Shape in, out;
  bool scales = false;  // scales input (else sizes)
};

ValueId resize(GraphBuilder& b, ValueId x, const Case& c, const Shape& in) {
  const std::string nearest = c.nearest.empty() ? "round_prefer_floor" : c.nearest;
  const ValueId roi = b.constant("roi", Tensor(f32({0})));
  std::vector<ValueId> inputs{x, roi};
  if (c.scales) {
    Tensor s(f32({4}));
    for (size_t i = 0; i < 4; ++i) s.data<float>()[i] = static_cast<float>(c.out[i]) / static_cast<float>(in[i]);
    inputs.push_back(b.constant("scales", std::move(s)));
  } else {
    Tensor sizes(TensorType{DType::kInt64, {4}});
    for (size_t i = 0; i < 4; ++i) sizes.data<int64_t>()[i] = c.out[i];
    inputs.push_back(b.constant("empty", Tensor(f32({0}))));
    inputs.push_back(b.constant("sizes", std::move(sizes)));
  }
  return b.op("Resize", inputs,
              {{"mode", c.mode}, {"coordinate_transformation_mode", c.transform}, {"nearest_mode", nearest}}, "resize");
}

std::vector<Case> cases() {
  return {
      {"linear", "half_pixel", "", {1, 3, 7, 5}, {1, 3, 56, 40}},           // 8x, a segmentation head's
      {"linear", "pytorch_half_pixel", "", {2, 4, 9, 6}, {2, 4, 5, 13}},    // down in H, up in W, a batch
      {"linear", "align_corners", "", {1, 2, 5, 5}, {1, 2, 17, 9}},
      {"linear", "asymmetric", "", {1, 3, 6, 8}, {1, 3, 12, 16}, true},
      {"nearest", "asymmetric", "floor", {1, 5, 4, 6}, {1, 5, 8, 12}, true},  // an FPN's 2x upsampling
      {"nearest", "half_pixel", "round_prefer_ceil", {2, 3, 10, 7}, {2, 3, 6, 15}},
      {"nearest", "tf_half_pixel_for_nearest", "ceil", {1, 2, 5, 4}, {1, 2, 11, 9}},
  };
}

TEST(ResizeFastTest, AloneInTheGraphsOrderMatchesPortable) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.mode + " " + c.transform);
    GraphBuilder b("resize_alone");
    b.output(resize(b, b.input("x", f32(c.in)), c, c.in));
    testing::expect_fast_cpu_matches_portable(testing::build(b), c.in, 1, 0, 1e-6f, "resize");
  }
}

// conv 3x3 (a segment) -> 1x1 conv (the fast GEMM, an NHWC step on
// AVX-512) -> Resize to the output: the Resize reads the 1x1 conv's NHWC
// output and writes the island's output in the graph's order. Without
// AVX-512 the 1x1 conv stays in the segment, and so does a linear Resize.
TEST(ResizeFastTest, ToTheOutputFromNhwcDataMatchesPortable) {
  const bool avx512 = std::string(cpu::fast::gemm_isa()) == "avx512f";
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.mode + " " + c.transform);
    GraphBuilder b("resize_from_nhwc");
    // 24 classes: the fast GEMM takes 1x1 convs of 16 outputs or more.
    Case wide = c;
    wide.in[1] = wide.out[1] = 24;
    const Shape in{c.in[0], 8, c.in[2], c.in[3]};
    const ValueId pre =
        b.op("Conv", {b.input("x", f32(in)), b.constant("pre_w", random_tensor({128, 8, 3, 3}, 3, -0.3f, 0.3f))},
             {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "pre");
    const ValueId head = b.op("Conv", {pre, b.constant("head_w", random_tensor({24, 128, 1, 1}, 5, -0.2f, 0.2f))},
                              {{"kernel_shape", std::vector<int64_t>{1, 1}}}, "head");
    b.output(resize(b, head, wide, wide.in));
    const Graph g = testing::build(b);
    const bool nearest = c.mode == "nearest";
    // Fast: a nearest Resize alone (XNNPACK has none; its 1x1 conv, whose
    // output is then read in the graph's order, stays in the segment), or
    // a linear one with the 1x1 conv before it (AVX-512).
    const int fast = nearest ? 1 : avx512 ? 2 : 0;
    testing::expect_fast_cpu_matches_portable(g, in, fast, 1, 1e-5f, "resize");
  }
}

}  // namespace
}  // namespace hetsched
