// bf16 models computed in f32 (graph/passes/compute_f16_in_f32.h widens
// bfloat16 as it does f16): the bfloat16 conversions against their
// definition, the portable Cast kernel's 16-bit float <-> integer casts
// against a direct computation, and the bf16 encoder block (made by
// `scripts/models/to_fp16.py --bf16` from test/data/models18/encoder_op18.onnx)
// against the fp32 model on the portable kernels, an independent reference.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <iostream>
#include <limits>

#include "graph/builder.h"
#include "graph/dtype.h"
#include "profile/profile.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"
#include "scheduler/session.h"

namespace hetsched {
namespace {

const std::string kData = std::string(HETSCHED_SOURCE_DIR) + "/test/data/models18/";

// The value of bfloat16 bits by definition: an f32's upper half.
double bf16_value(uint32_t b) { return std::bit_cast<float>(b << 16); }

// The bfloat16 nearest f (not NaN) by comparing distances in double, ties
// to the even pattern; past the largest finite one by half a step, inf.
uint16_t nearest_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t sign = bits & 0x80000000u;
  const double a = std::fabs(static_cast<double>(f));
  const uint32_t lo = (bits & 0x7fffffffu) >> 16;  // truncated magnitude
  if (lo == 0x7f80) return static_cast<uint16_t>((sign >> 16) | lo);  // inf
  const double lo_v = bf16_value(lo);
  const double hi_v = lo == 0x7f7f ? std::ldexp(1.0, 128) : bf16_value(lo + 1);
  const double below = a - lo_v, above = hi_v - a;
  const uint32_t pick = below < above ? lo : below > above ? lo + 1 : (lo & 1 ? lo + 1 : lo);
  return static_cast<uint16_t>((sign >> 16) | pick);
}

TEST(BFloat16Test, WideningIsExactAndNarrowingRoundsToNearestEven) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bfloat16_to_float(static_cast<uint16_t>(b));
    ASSERT_EQ(std::bit_cast<uint32_t>(f), b << 16);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(f)))) << b;
      continue;
    }
    EXPECT_EQ(float_to_bfloat16(f), b) << "bf16 0x" << std::hex << b;
  }
  // Random f32 bit patterns, and the ties and overflow by name.
  uint32_t state = 12345;
  for (int i = 0; i < 1000000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float f = std::bit_cast<float>(state);
    if (std::isnan(f)) continue;
    ASSERT_EQ(float_to_bfloat16(f), nearest_bf16(f)) << "f32 bits 0x" << std::hex << state;
  }
  EXPECT_EQ(float_to_bfloat16(1.f + std::ldexp(1.f, -8)), 0x3f80);      // halfway: to even (1)
  EXPECT_EQ(float_to_bfloat16(1.f + 3 * std::ldexp(1.f, -8)), 0x3f82);  // halfway: to even (up)
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::max()), 0x7f80);  // overflow: inf
  // NaNs stay NaN, where truncation would make 0x7f800001 an inf.
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0x7f800001u)), 0x7fc0);
  EXPECT_EQ(float_to_bfloat16(std::bit_cast<float>(0xffc12345u)), 0xffc1);
}

Profile cpu(const std::string& engine) {
  Profile p = default_profile();
  p.delegates["cpu"].engine = engine;
  p.delegates["cpu"].threads = 2;
  p.log_level = "error";
  return p;
}

Result<std::vector<Tensor>> run_cast(const Tensor& x, DType to) {
  GraphBuilder b("cast");
  ValueId in = b.input("x", x.type());
  b.output(b.op("Cast", {in}, {{"to", Attribute{int64_t{dtype_to_onnx(to)}}}}, "cast"));
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  HS_ASSIGN_OR_RETURN(auto session, open_session_for_graph(g, cpu("portable")));
  return session->run({x});
}

// The portable Cast kernel's 16-bit float <-> integer casts (new with the
// GPU ones, which test/cast_gpu_test.cc compares with this kernel): float
// -> integer truncates the value toward zero (NaN 0, i32 wrapping past
// 2^31), integer -> bf16 and f16 is the nearest one through f32.
TEST(SixteenBitFloatCastTest, ToAndFromIntegersOnThePortableKernel) {
  for (DType half : {DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_name(half));
    Tensor x(TensorType{half, {0x10000}});
    for (int64_t i = 0; i < 0x10000; ++i) x.data<uint16_t>()[i] = static_cast<uint16_t>(i);
    auto to_i64 = run_cast(x, DType::kInt64);
    ASSERT_TRUE(to_i64.is_ok()) << to_i64.status().message();
    auto to_i32 = run_cast(x, DType::kInt32);
    ASSERT_TRUE(to_i32.is_ok()) << to_i32.status().message();
    auto to_bool = run_cast(x, DType::kBool);
    ASSERT_TRUE(to_bool.is_ok()) << to_bool.status().message();
    for (int64_t i = 0; i < 0x10000; ++i) {
      const double v = half == DType::kBFloat16 ? bf16_value(static_cast<uint32_t>(i))
                                                : static_cast<double>(half_to_float(static_cast<uint16_t>(i)));
      int64_t want = 0;
      if (std::isnan(v)) want = 0;
      else if (v >= std::ldexp(1.0, 63)) want = std::numeric_limits<int64_t>::max();
      else if (v <= -std::ldexp(1.0, 63)) want = std::numeric_limits<int64_t>::min();
      else want = static_cast<int64_t>(std::trunc(v));
      ASSERT_EQ((*to_i64)[0].data<int64_t>()[i], want) << "bits 0x" << std::hex << i << " = " << v;
      ASSERT_EQ((*to_i32)[0].data<int32_t>()[i], static_cast<int32_t>(static_cast<uint32_t>(want))) << i;
      ASSERT_EQ((*to_bool)[0].data<uint8_t>()[i], v != 0.0 ? 1 : 0) << i;
    }
    Tensor n(TensorType{DType::kInt64, {8}});
    const int64_t ints[] = {0, -3, 65504, 65519, 65520, (int64_t{1} << 24) + 1, 257, -(int64_t{1} << 40)};
    for (int i = 0; i < 8; ++i) n.data<int64_t>()[i] = ints[i];
    auto from_int = run_cast(n, half);
    ASSERT_TRUE(from_int.is_ok()) << from_int.status().message();
    for (int i = 0; i < 8; ++i) {
      const float through_f32 = static_cast<float>(ints[i]);
      const uint16_t want =
          half == DType::kBFloat16 ? nearest_bf16(through_f32) : float_to_half(through_f32);
      EXPECT_EQ((*from_int)[0].data<uint16_t>()[i], want) << ints[i];
    }
  }
}

TEST(Bf16ModelTest, EncoderBlockKeepsItsBf16InterfaceAndMatchesTheF32Model) {
  Result<Graph> bf16 = load_model(kData + "encoder_op18_bf16.onnx");
  ASSERT_TRUE(bf16.is_ok()) << bf16.status().message();
  Result<Graph> f32 = load_model(kData + "encoder_op18.onnx");
  ASSERT_TRUE(f32.is_ok()) << f32.status().message();

  auto bf16_session = open_session_for_graph(*bf16, cpu("xnnpack"));
  ASSERT_TRUE(bf16_session.is_ok()) << bf16_session.status().message();
  auto ref_session = open_session_for_graph(*f32, cpu("portable"));
  ASSERT_TRUE(ref_session.is_ok()) << ref_session.status().message();
  ASSERT_EQ((*bf16_session)->input_types()[0].to_string(), "bf16[1,64,128]");
  ASSERT_EQ((*bf16_session)->output_types()[0].to_string(), "bf16[1,64,128]");

  // The same values both ways: bfloat16s, exactly representable in f32.
  Tensor xb(TensorType{DType::kBFloat16, {1, 64, 128}}), x32(TensorType{DType::kFloat32, {1, 64, 128}});
  for (int64_t i = 0; i < xb.num_elements(); ++i) {
    const uint16_t b = float_to_bfloat16(std::sin(0.37f * static_cast<float>(i)) * 2.0f);
    xb.data<uint16_t>()[i] = b;
    x32.data<float>()[i] = bfloat16_to_float(b);
  }
  auto got = (*bf16_session)->run({xb});
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  auto want = (*ref_session)->run({x32});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < (*want)[0].num_elements(); ++i) {
    const double r = (*want)[0].data<float>()[i];
    worst = std::max(worst, std::fabs(bf16_value((*got)[0].data<uint16_t>()[i]) - r));
    scale = std::max(scale, std::fabs(r));
  }
  std::cout << "[bf16] encoder_op18_bf16.onnx on xnnpack: max abs error " << worst
            << " against encoder_op18.onnx on portable (max |y| " << scale << ")\n";
  // bf16 keeps 8 significant bits: the weights differ from the f32 model's
  // by up to 2^-9 relative and the output is rounded to that again, so the
  // bound is 2^-9 of the range several times over: 3e-2 of it.
  EXPECT_LE(worst, 3e-2 * scale);
  EXPECT_GT(scale, 0.5);
}

}  // namespace
}  // namespace hetsched
