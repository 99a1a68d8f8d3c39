// fp16 models computed in f32 (graph/passes/compute_f16_in_f32.h): the half
// conversions against their definition, and the fp16 encoder block (made by
// scripts/models/to_fp16.py from test/data/models18/encoder_op18.onnx)
// against the fp32 model on the portable kernels, an independent reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "graph/dtype.h"
#include "profile/profile.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"
#include "scheduler/session.h"

namespace hetsched {
namespace {

const std::string kData = std::string(HETSCHED_SOURCE_DIR) + "/test/data/models18/";

TEST(HalfTest, EveryHalfSurvivesTheRoundTrip) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f)))) << h;
      continue;
    }
    EXPECT_EQ(float_to_half(f), h) << "half 0x" << std::hex << h << " = " << f;
  }
}

TEST(HalfTest, KnownValuesAndRounding) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);                 // largest finite
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));    // smallest subnormal
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);                 // rounds up past the largest: inf
  EXPECT_EQ(float_to_half(1.0f / 3), 0x3555);                 // 0.33325195 (nearest)
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // halfway: to even
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);    // halfway to the smallest subnormal: to even (0)
  EXPECT_EQ(float_to_half(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
}

Profile cpu(const std::string& engine) {
  Profile p = default_profile();
  p.delegates["cpu"].engine = engine;
  p.delegates["cpu"].threads = 2;
  return p;
}

TEST(Fp16ModelTest, EncoderBlockKeepsItsHalfInterfaceAndMatchesTheF32Model) {
  Result<Graph> f16 = load_model(kData + "encoder_op18_fp16.onnx");
  ASSERT_TRUE(f16.is_ok()) << f16.status().message();
  Result<Graph> f32 = load_model(kData + "encoder_op18.onnx");
  ASSERT_TRUE(f32.is_ok()) << f32.status().message();

  auto half_session = open_session_for_graph(*f16, cpu("xnnpack"));
  ASSERT_TRUE(half_session.is_ok()) << half_session.status().message();
  auto ref_session = open_session_for_graph(*f32, cpu("portable"));
  ASSERT_TRUE(ref_session.is_ok()) << ref_session.status().message();
  ASSERT_EQ((*half_session)->input_types()[0].to_string(), "f16[1,64,128]");
  ASSERT_EQ((*half_session)->output_types()[0].to_string(), "f16[1,64,128]");

  // The same values both ways: halves, exactly representable in f32.
  Tensor x16(TensorType{DType::kFloat16, {1, 64, 128}}), x32(TensorType{DType::kFloat32, {1, 64, 128}});
  for (int64_t i = 0; i < x16.num_elements(); ++i) {
    const uint16_t h = float_to_half(std::sin(0.37f * static_cast<float>(i)) * 2.0f);
    x16.data<uint16_t>()[i] = h;
    x32.data<float>()[i] = half_to_float(h);
  }
  auto got = (*half_session)->run({x16});
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  auto want = (*ref_session)->run({x32});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  double worst = 0, scale = 0;
  const Tensor& y16 = (*got)[0];
  const Tensor& y32 = (*want)[0];
  for (int64_t i = 0; i < y32.num_elements(); ++i) {
    const double r = y32.data<float>()[i];
    worst = std::max(worst, std::fabs(half_to_float(y16.data<uint16_t>()[i]) - r));
    scale = std::max(scale, std::fabs(r));
  }
  std::cout << "[fp16] encoder_op18_fp16 on xnnpack: max abs error " << worst << " against the f32 model on the "
            << "portable kernels (max |y| " << scale << ")\n";
  // f16 weights and f16 output rounding: 1e-2 relative to the output's range.
  EXPECT_LE(worst, 1e-2 * scale);
  EXPECT_GT(scale, 0.5);
}

}  // namespace
}  // namespace hetsched
