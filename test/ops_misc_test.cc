// GridSample, ReverseSequence and RoiAlign (graph/ops_misc.cc) and
// MeanVarianceNormalization (graph/ops_norm.cc): what the ONNX node tests
// (onnx_conformance_test) leave out — points far off the input, the opset
// 20 mode names, axes other than the default — and their errors. Expected
// values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_reference.h"
#include "graph/builder.h"

namespace hetsched {
namespace {

using Floats = std::vector<float>;
using AttrList = std::initializer_list<std::pair<std::string, Attribute>>;

Tensor f32(Shape shape, const Floats& v) { return Tensor::from_vector(DType::kFloat32, std::move(shape), v); }

// One `op` node over constant inputs, shape-inferred at `opset` and run
// with the portable kernels.
Result<Tensor> run1(const std::string& op, const std::vector<Tensor>& inputs, AttrList attrs = {}, int opset = 17) {
  GraphBuilder b("g");
  b.raw().set_opset(opset);
  std::vector<ValueId> ids;
  for (size_t i = 0; i < inputs.size(); ++i) ids.push_back(b.constant("in" + std::to_string(i), inputs[i]));
  b.output(b.op_multi(op, ids, 1, attrs, "n")[0]);
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> outs, cpu::run_graph_reference(g, {}));
  return std::move(outs[0]);
}

void expect_values(const Result<Tensor>& r, const Floats& expected, float tol = 1e-5f) {
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(static_cast<size_t>(r->num_elements()), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(r->data<float>()[i], expected[i], tol) << "element " << i;
}

void expect_error(const Result<Tensor>& r, const std::string& fragment) {
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
}

// X = [10, 11, 12, 13] on one row; with align_corners the pixels sit at
// x = 0..3 and a normalised n maps to (n + 1) / 2 * 3. Grid points (n, 0):
// n = 3 -> 6, n = 2 -> 4.5, n = -1.4 -> -0.6, n = 1/3 -> 2.
Tensor row_x() { return f32({1, 1, 1, 4}, {10, 11, 12, 13}); }
Tensor row_grid() { return f32({1, 1, 4, 2}, {3.f, 0.f, 2.f, 0.f, -1.4f, 0.f, 1.f / 3.f, 0.f}); }

TEST(GridSampleTest, ReflectionFoldsFarPointsBackOntoTheInput) {
  // 6 reflects off 3 to 0 and off 0 again to 0: 10. 4.5 -> 1.5: 11.5.
  // -0.6 -> 0.6: 10.6. 2: 12.
  expect_values(run1("GridSample", {row_x(), row_grid()},
                     {{"padding_mode", std::string("reflection")}, {"align_corners", int64_t{1}}}, 16),
                {10.f, 11.5f, 10.6f, 12.f});
}

TEST(GridSampleTest, BorderClampsAndZerosReadZeroOffTheInput) {
  expect_values(run1("GridSample", {row_x(), row_grid()},
                     {{"padding_mode", std::string("border")}, {"align_corners", int64_t{1}}}, 16),
                {13.f, 13.f, 10.f, 12.f});
  // -0.6 is 0.4 of the way from pixel -1 (a zero) to pixel 0: 0.4 * 10.
  expect_values(run1("GridSample", {row_x(), row_grid()}, {{"align_corners", int64_t{1}}}, 16),
                {0.f, 0.f, 4.f, 12.f});
}

TEST(GridSampleTest, NearestRoundsTiesToEven) {
  // Without align_corners n maps to ((n + 1) * 4 - 1) / 2: n = 0 -> 1.5
  // (tie: 2), n = 0.5 -> 2.5 (tie: 2), n = -0.5 -> 0.5 (tie: 0).
  const Tensor grid = f32({1, 1, 3, 2}, {0.f, 0.f, 0.5f, 0.f, -0.5f, 0.f});
  expect_values(run1("GridSample", {row_x(), grid}, {{"mode", std::string("nearest")}}, 16), {12.f, 12.f, 10.f});
}

TEST(GridSampleTest, ModeNamesFollowTheOpset) {
  const Tensor grid = row_grid();
  // Opset 20 renamed bilinear / bicubic to linear / cubic.
  expect_values(run1("GridSample", {row_x(), grid}, {{"mode", std::string("linear")}, {"align_corners", int64_t{1}}}, 20),
                {0.f, 0.f, 4.f, 12.f});
  expect_error(run1("GridSample", {row_x(), grid}, {{"mode", std::string("bilinear")}}, 20),
               "accepted: linear, nearest, cubic");
  expect_error(run1("GridSample", {row_x(), grid}, {{"mode", std::string("linear")}}, 16),
               "accepted: bilinear, nearest, bicubic");
  expect_error(run1("GridSample", {row_x(), grid}, {{"padding_mode", std::string("wrap")}}, 16),
               "accepted: zeros, border, reflection");
}

TEST(GridSampleTest, NanAndHugePointsReadZerosOrTheBorder) {
  const float nan = std::nanf("");
  const Tensor grid = f32({1, 1, 3, 2}, {nan, 0.f, 1e30f, 0.f, -1e30f, 0.f});
  expect_values(run1("GridSample", {row_x(), grid}, {{"align_corners", int64_t{1}}}, 16), {0.f, 0.f, 0.f});
  expect_values(run1("GridSample", {row_x(), grid}, {{"padding_mode", std::string("border")}, {"align_corners", int64_t{1}}}, 16),
                {10.f, 13.f, 10.f});
}

TEST(GridSampleTest, RefusesVolumesAndMismatchedGrids) {
  expect_error(run1("GridSample", {f32({1, 1, 1, 1, 2}, {1, 2}), f32({1, 1, 1, 1, 3}, {0, 0, 0})}, {}, 20),
               "accepted: 2");
  expect_error(run1("GridSample", {row_x(), f32({1, 1, 1, 3}, {0, 0, 0})}, {}, 16), "[N, H_out, W_out, 2]");
}

TEST(ReverseSequenceTest, ReversesEachEntrysOwnLengthAlongTimeOrBatchMajor) {
  // [time 3, batch 2, 1]: entry 0 reverses 3 steps, entry 1 two.
  const Tensor x = f32({3, 2, 1}, {0, 10, 1, 11, 2, 12});
  const Tensor lens = Tensor::from_vector(DType::kInt64, {2}, std::vector<int64_t>{3, 2});
  expect_values(run1("ReverseSequence", {x, lens}), {2, 11, 1, 10, 0, 12});
  // [batch 2, time 3]: the same data read batch-major.
  const Tensor y = f32({2, 3}, {0, 1, 2, 10, 11, 12});
  expect_values(run1("ReverseSequence", {y, lens}, {{"time_axis", int64_t{1}}, {"batch_axis", int64_t{0}}}),
                {2, 1, 0, 11, 10, 12});
}

TEST(ReverseSequenceTest, RefusesLengthsPastTheTimeAxis) {
  const Tensor x = f32({3, 2}, {0, 1, 2, 3, 4, 5});
  expect_error(run1("ReverseSequence", {x, Tensor::from_vector(DType::kInt64, {2}, std::vector<int64_t>{4, 1})}),
               "outside [0, 3]");
  expect_error(run1("ReverseSequence", {x, Tensor::from_vector(DType::kInt64, {3}, std::vector<int64_t>{1, 1, 1})}),
               "one per batch entry");
}

// X = [[1, 2], [3, 4]], one roi over (0, 0)-(1, 1), one bin of one
// sample: at (0.5, 0.5) (opset 10: no half-pixel shift), a quarter of
// each pixel.
Tensor roi_x() { return f32({1, 1, 2, 2}, {1, 2, 3, 4}); }
Tensor one_roi() { return f32({1, 4}, {0, 0, 1, 1}); }
Tensor batch0() { return Tensor::from_vector(DType::kInt64, {1}, std::vector<int64_t>{0}); }

TEST(RoiAlignTest, AvgMeansTheSamplesAndMaxTakesTheLargestWeightedCorner) {
  expect_values(run1("RoiAlign", {roi_x(), one_roi(), batch0()}, {{"sampling_ratio", int64_t{1}}}, 10), {2.5f});
  // ONNX's max mode (ONNX Runtime's): max of w * v over the corners, 0.25 * 4.
  expect_values(
      run1("RoiAlign", {roi_x(), one_roi(), batch0()}, {{"sampling_ratio", int64_t{1}}, {"mode", std::string("max")}}, 10),
      {1.f});
  // Opset 16's half_pixel shifts the roi by -0.5: the sample lands on
  // pixel (0, 0).
  expect_values(run1("RoiAlign", {roi_x(), one_roi(), batch0()}, {{"sampling_ratio", int64_t{1}}}, 16), {1.f});
}

TEST(RoiAlignTest, RefusesRoisNotFiniteOrTooLargeToSample) {
  expect_error(run1("RoiAlign", {roi_x(), f32({1, 4}, {0, 0, std::numeric_limits<float>::infinity(), 1}), batch0()}, {}, 16),
               "not finite");
  expect_error(run1("RoiAlign", {roi_x(), f32({1, 4}, {0, 0, 1e7f, 1}), batch0()}, {}, 16), "set sampling_ratio");
}

TEST(RoiAlignTest, RefusesBadIndicesAndModes) {
  const Tensor batch1 = Tensor::from_vector(DType::kInt64, {1}, std::vector<int64_t>{1});
  expect_error(run1("RoiAlign", {roi_x(), one_roi(), batch1}, {}, 16), "batch of 1");
  expect_error(run1("RoiAlign", {roi_x(), one_roi(), batch0()}, {{"mode", std::string("sum")}}, 16),
               "accepted: avg, max");
  expect_error(run1("RoiAlign", {roi_x(), f32({1, 3}, {0, 0, 1}), batch0()}, {}, 16), "[num_rois, 4]");
}

TEST(MeanVarianceNormalizationTest, NormalisesOverTheGivenAxes) {
  // Rows [1, 2, 3] and [2, 4, 6] over axis 1: means 2 and 4, population
  // standard deviations sqrt(2/3) and 2 sqrt(2/3).
  const float s = std::sqrt(2.f / 3.f);
  expect_values(run1("MeanVarianceNormalization", {f32({2, 3}, {1, 2, 3, 2, 4, 6})}, {{"axes", std::vector<int64_t>{-1}}}),
                {-1 / s, 0, 1 / s, -1 / s, 0, 1 / s});
  // Over axis 0: columns (1, 2), (2, 4), (3, 6), each +-1 about its mean.
  expect_values(run1("MeanVarianceNormalization", {f32({2, 3}, {1, 2, 3, 2, 4, 6})}, {{"axes", std::vector<int64_t>{0}}}),
                {-1, -1, -1, 1, 1, 1});
}

TEST(MeanVarianceNormalizationTest, DefaultAxesNeedFourDims) {
  expect_error(run1("MeanVarianceNormalization", {f32({2, 3}, {1, 2, 3, 4, 5, 6})}), "default [0, 2, 3]");
}

}  // namespace
}  // namespace hetsched
