// Casts between float and integer types on the GPU delegates: f32, f16 and
// bf16 to and from i32, i64 (two 32-bit words, no shaderInt64) and bool
// (bytes, storageBuffer8BitAccess), and f32 <-> bf16 at an island's edge.
// Each cast runs on vulkan and on vgf (lavapipe, validation on) under a
// strict profile, every node on the GPU, and is compared with the same graph
// on the portable CPU Cast kernel bit for bit — an independent reference:
// the shaders convert with their own integer code (shared_gpu/shaders/
// cast_bits.glsl, half_bits.glsl), not the CPU's. Shapes are odd, of rank 1,
// 3 and 4 (NHWC on vgf, so the host's layout conversion of 1- and 8-byte
// elements is crossed too).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>

#include "delegates/vulkan/op_support.h"
#include "graph/builder.h"
#include "graph/dtype.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

const std::string kSource = HETSCHED_SOURCE_DIR;
constexpr float kInf = std::numeric_limits<float>::infinity();

// f32 values for float -> integer: truncation toward zero, the int32 wrap
// past 2^31, int64 saturation from 2^63, NaN, infinities, subnormals, and a
// sweep of magnitudes up to 2^70 with random mantissas.
std::vector<float> float_cases() {
  std::vector<float> v = {0.f, -0.f, 0.5f, -0.5f, 0.99999994f, -0.99999994f, 1.f, -1.f, 1.5f, -1.5f, 2.5f, -7.9f,
                          123456.79f, 16777215.f, 16777216.f, 2147483520.f, -2147483648.f, 2147483648.f, 3e9f, -3e9f,
                          4294967296.f, 1e10f, -1e10f, std::ldexp(1.f, 62), std::ldexp(1.f, 63), -std::ldexp(1.f, 63),
                          std::ldexp(1.5f, 62), 9.3e18f, 1e20f, -1e20f, kInf, -kInf, std::nanf(""), -std::nanf(""),
                          std::bit_cast<float>(0x7f800001u), 1e-40f, -1e-40f, 65504.f, 65520.f};
  for (int i = 0; i < 300; ++i)
    v.push_back(std::ldexp(1.f + static_cast<float>((i * 7919) % 1000) / 1000.f, (i * 37) % 72 - 2) *
                (i % 2 ? -1.f : 1.f));
  return v;
}

// int64 values for integer -> float: exact below 2^24, ties to even above
// (2^25 + 2 rounds down to even, 2^25 + 6 up), f16 overflow from 65520, the
// extremes, and random 64-bit patterns cut at varying widths.
std::vector<int64_t> int_cases() {
  std::vector<int64_t> v = {0,
                            1,
                            -1,
                            7,
                            -7,
                            (1 << 24) + 1,
                            (1 << 24) + 3,
                            (int64_t{1} << 25) + 2,
                            (int64_t{1} << 25) + 6,
                            (int64_t{1} << 25) + 3,
                            (int64_t{1} << 53) + 1,
                            65504,
                            65519,
                            65520,
                            -65520,
                            2147483647,
                            -2147483647 - 1,
                            int64_t{1} << 31,
                            -(int64_t{1} << 31) - 1,
                            std::numeric_limits<int64_t>::max(),
                            std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::min() + 1};
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 300; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v.push_back(static_cast<int64_t>(state) >> (i % 64));
  }
  return v;
}

// A tensor of `type` filled cyclically with the cases for its dtype.
Tensor cast_input(const TensorType& type) {
  Tensor t(type);
  const std::vector<float> floats = float_cases();
  const std::vector<int64_t> ints = int_cases();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const size_t k = static_cast<size_t>(i);
    switch (type.dtype) {
      case DType::kFloat32: t.data<float>()[i] = floats[k % floats.size()]; break;
      case DType::kInt64: t.data<int64_t>()[i] = ints[k % ints.size()]; break;
      case DType::kInt32: t.data<int32_t>()[i] = static_cast<int32_t>(ints[k % ints.size()]); break;
      case DType::kBool: t.data<uint8_t>()[i] = static_cast<uint8_t>((i * 7 / 3) % 2); break;
      case DType::kFloat16:
      case DType::kBFloat16:  // bit patterns spread over every exponent, NaNs included
        t.data<uint16_t>()[i] = static_cast<uint16_t>((static_cast<uint32_t>(i) * 40503u) & 0xffffu);
        break;
      default: ADD_FAILURE() << "no cases for " << dtype_name(type.dtype);
    }
  }
  return t;
}

Graph cast_graph(DType from, const Shape& shape, DType to) {
  GraphBuilder b("cast");
  ValueId x = b.input("x", {from, shape});
  b.output(b.op("Cast", {x}, {{"to", Attribute{int64_t{dtype_to_onnx(to)}}}}, "cast"));
  auto g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

Profile strict_profile(const std::string& delegate) {
  Result<Profile> p = load_profile(kSource + "/configs/" + delegate + ".yaml");
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  Profile profile = p.is_ok() ? *p : default_profile();
  profile.partition.fallback = "error";
  profile.log_level = "error";
  return profile;
}

Profile portable_profile() {
  Profile p = default_profile();
  p.delegates["cpu"].engine = "portable";
  p.log_level = "error";
  return p;
}

// Index of the first element whose bytes differ, or -1.
int64_t first_difference(const Tensor& a, const Tensor& b) {
  const size_t size = dtype_size(a.dtype());
  for (int64_t i = 0; i < a.num_elements(); ++i)
    if (std::memcmp(static_cast<const std::byte*>(a.raw()) + i * size, static_cast<const std::byte*>(b.raw()) + i * size,
                    size) != 0)
      return i;
  return -1;
}

std::string element_text(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return std::to_string(t.data<float>()[i]);
    case DType::kFloat16:
    case DType::kBFloat16: return "bits " + std::to_string(t.data<uint16_t>()[i]);
    default: return std::to_string(t.int_at(i));
  }
}

class CastGpuTest : public testing::VkTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { ::setenv("HETSCHED_VK_VALIDATION", "1", 1); }
  void TearDown() override {
    ::unsetenv("HETSCHED_VK_VALIDATION");
    testing::VkTest::TearDown();
  }

  // Runs `g` on the delegate under test (strict: every island there) and on
  // the portable CPU kernels with input `x`, and expects the same bytes.
  void expect_same_as_cpu(const Graph& g, const std::vector<Tensor>& inputs) {
    auto gpu = open_session_for_graph(g, strict_profile(GetParam()));
    ASSERT_TRUE(gpu.is_ok()) << gpu.status().message();
    for (const auto& island : (*gpu)->program().islands) EXPECT_EQ(island.delegate, GetParam()) << island.id;
    for (const std::string& key : SharedGpuContextRegistry::get().keys())
      watch(*SharedGpuContextRegistry::get().lookup(key));
    auto cpu = open_session_for_graph(g, portable_profile());
    ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
    auto got = (*gpu)->run(inputs);
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    auto want = (*cpu)->run(inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    ASSERT_EQ(got->size(), want->size());
    for (size_t o = 0; o < want->size(); ++o) {
      ASSERT_EQ(got->at(o).type(), want->at(o).type());
      const int64_t i = first_difference(got->at(o), want->at(o));
      EXPECT_EQ(i, -1) << "output " << o << " element " << i << ": got " << element_text(got->at(o), i) << ", cpu "
                       << element_text(want->at(o), i) << " (input " << element_text(inputs[0], i) << ")";
    }
  }
};

struct CastPair {
  DType from, to;
};

TEST_P(CastGpuTest, FloatIntegerAndBoolCastsMatchThePortableKernelBitForBit) {
  const CastPair pairs[] = {
      {DType::kFloat32, DType::kInt32},   {DType::kFloat32, DType::kInt64},   {DType::kInt32, DType::kFloat32},
      {DType::kInt64, DType::kFloat32},   {DType::kFloat32, DType::kBool},    {DType::kBool, DType::kFloat32},
      {DType::kFloat16, DType::kInt32},   {DType::kFloat16, DType::kInt64},   {DType::kInt32, DType::kFloat16},
      {DType::kInt64, DType::kFloat16},   {DType::kFloat16, DType::kBool},    {DType::kBool, DType::kFloat16},
      {DType::kBFloat16, DType::kInt64},  {DType::kInt64, DType::kBFloat16},  {DType::kInt32, DType::kInt64},
      {DType::kInt64, DType::kInt32},     {DType::kBool, DType::kInt64},      {DType::kInt64, DType::kBool},
      {DType::kBFloat16, DType::kFloat16}};
  for (const CastPair& p : pairs) {
    for (const Shape& shape : {Shape{433}, Shape{3, 5, 7}, Shape{2, 7, 3, 11}}) {
      SCOPED_TRACE(std::string(dtype_name(p.from)) + " -> " + std::string(dtype_name(p.to)) + " " +
                   shape_to_string(shape));
      expect_same_as_cpu(cast_graph(p.from, shape, p.to), {cast_input(TensorType{p.from, shape})});
    }
  }
}

TEST_P(CastGpuTest, Bf16EdgeCastsMatchThePortableKernelBitForBit) {
  // Every bf16 widened; f32 values (ties, overflow to inf, NaN payloads that
  // truncation would turn into inf) narrowed.
  const Shape every{1, 4, 128, 128};
  Tensor all(TensorType{DType::kBFloat16, every});
  for (int64_t i = 0; i < all.num_elements(); ++i) all.data<uint16_t>()[i] = static_cast<uint16_t>(i);
  expect_same_as_cpu(cast_graph(DType::kBFloat16, every, DType::kFloat32), {all});

  const Shape shape{2, 7, 3, 11};
  Tensor x(TensorType{DType::kFloat32, shape});
  const std::vector<float> specials = {1.f + std::ldexp(1.f, -8),       // halfway: to even (1)
                                       1.f + 3 * std::ldexp(1.f, -8),   // halfway: to even (up)
                                       1.f + std::ldexp(1.f, -8) + std::ldexp(1.f, -20),
                                       std::numeric_limits<float>::max(),  // rounds up to inf
                                       std::bit_cast<float>(0x7f800001u),  // NaN that truncates to inf
                                       std::bit_cast<float>(0xff800001u), std::ldexp(1.f, -133)};
  const std::vector<float> floats = float_cases();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const size_t k = static_cast<size_t>(i);
    x.data<float>()[i] = k < specials.size() ? specials[k] : floats[k % floats.size()] * 1.0001f;
  }
  expect_same_as_cpu(cast_graph(DType::kFloat32, shape, DType::kBFloat16), {x});
}

// A model's pattern: an i64 mask cast to f32 and applied, and the result
// truncated to i32 — one GPU island with integer tensors at both edges.
TEST_P(CastGpuTest, IntegerEdgesAroundF32ArithmeticStayInOneIsland) {
  const Shape shape{3, 5, 7};
  GraphBuilder b("mask");
  ValueId x = b.input("x", {DType::kFloat32, shape});
  ValueId mask = b.input("mask", {DType::kInt64, shape});
  ValueId m = b.op("Cast", {mask}, {{"to", Attribute{int64_t{1}}}}, "mask_f32");
  ValueId y = b.op("Mul", {x, m}, {}, "apply");
  b.output(y);
  b.output(b.op("Cast", {y}, {{"to", Attribute{int64_t{6}}}}, "truncate"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Tensor xs = testing::random_tensor(shape, 3, -1e6f, 1e6f);
  Tensor ms(TensorType{DType::kInt64, shape});
  for (int64_t i = 0; i < ms.num_elements(); ++i) ms.data<int64_t>()[i] = i % 3 - 1;
  expect_same_as_cpu(*g, {xs, ms});
}

// A host lends its device without storageBuffer8BitAccess enabled: bool
// Casts are refused by reason (a strict profile says so), the i64 ones
// (no feature needed) are not.
TEST_P(CastGpuTest, BorrowedDeviceWithoutStorageBuffer8BitAccessRefusesBoolCasts) {
  std::shared_ptr<SharedGpuContext> host = make_context();
  ASSERT_NE(host, nullptr);
  ASSERT_TRUE(host->features().storage_buffer_8bit_access) << "lavapipe has it; the test needs a device that does";
  SharedGpuContextCreateInfo info = hetsched::testing::lend_info(*host);
  info.enabled_features.storage_buffer_8bit_access = false;
  struct Unregister {
    ~Unregister() { SharedGpuContextRegistry::get().clear_for_testing(); }
  } unregister;
  auto borrowed = SharedGpuContext::borrow(info);
  ASSERT_TRUE(borrowed.is_ok()) << borrowed.status().message();
  ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("casthost:0", *borrowed).is_ok());

  Profile profile = strict_profile(GetParam());
  profile.delegates[GetParam()].shared_gpu = {"casthost", 0, SharedContextMode::kLookupOnly};
  auto refused = plan_model(cast_graph(DType::kFloat32, {3, 5}, DType::kBool), profile);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("needs storageBuffer8BitAccess, which this device lacks"),
            std::string::npos)
      << refused.status().message();
  auto planned = plan_model(cast_graph(DType::kFloat32, {3, 5}, DType::kInt64), profile);
  EXPECT_TRUE(planned.is_ok()) << planned.status().message();
}

// A bf16 model (scripts/models/to_fp16.py --bf16 of the 13-node CNN) runs
// whole on the GPU delegate, bf16 only at its edges, and matches the same
// model on the portable CPU kernels within the rounding of one bf16 output
// (both compute in f32 from the same bf16 weights; they differ in f32
// summation order, which can tip an output across a bf16 rounding boundary).
TEST_P(CastGpuTest, Bf16CnnRunsWhollyOnTheGpuAndMatchesTheCpu) {
  Result<Graph> g = load_model(kSource + "/test/data/models18/cnn_op18_bf16.onnx");
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto gpu = open_session_for_graph(*g, strict_profile(GetParam()));
  ASSERT_TRUE(gpu.is_ok()) << gpu.status().message();
  for (const auto& island : (*gpu)->program().islands) EXPECT_EQ(island.delegate, GetParam()) << island.id;
  for (const std::string& key : SharedGpuContextRegistry::get().keys())
    watch(*SharedGpuContextRegistry::get().lookup(key));
  auto cpu = open_session_for_graph(*g, portable_profile());
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  const TensorType type = (*gpu)->input_types()[0];
  ASSERT_EQ(type.dtype, DType::kBFloat16);
  Tensor x(type);
  for (int64_t i = 0; i < x.num_elements(); ++i)
    x.data<uint16_t>()[i] = float_to_bfloat16(std::sin(0.37f * static_cast<float>(i)) * 2.0f);
  auto got = (*gpu)->run({x});
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  auto want = (*cpu)->run({x});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  ASSERT_EQ(got->at(0).dtype(), DType::kBFloat16);
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < want->at(0).num_elements(); ++i) {
    const double r = bfloat16_to_float(want->at(0).data<uint16_t>()[i]);
    worst = std::max(worst, std::fabs(bfloat16_to_float(got->at(0).data<uint16_t>()[i]) - r));
    scale = std::max(scale, std::fabs(r));
  }
  std::cout << "[bf16] cnn_op18_bf16.onnx on " << GetParam() << ": " << (*gpu)->program().islands.size()
            << " island(s), max abs error " << worst << " against the portable CPU (max |y| " << scale << ")\n";
  EXPECT_LE(worst, scale / 128);  // one bf16 step at the largest output
  EXPECT_GT(scale, 0.05);
}

INSTANTIATE_TEST_SUITE_P(Delegates, CastGpuTest, ::testing::Values("vulkan", "vgf"));

// The Vulkan delegate's checks without a device: bool needs
// storageBuffer8BitAccess, f16 and bf16 storageBuffer16BitAccess, i32 and
// i64 nothing; a dtype no cast kernel takes is refused by dtype.
TEST(CastCapabilityTest, VulkanNamesTheFeatureEachCastNeeds) {
  vulkan::DeviceLimits none, all;
  all.storage_buffer_16bit_access = all.storage_buffer_8bit_access = true;
  auto reason = [&](DType from, DType to, const vulkan::DeviceLimits& limits) {
    const Capability c = vulkan::vulkan_supports(cast_graph(from, {2, 3}, to), 0, limits);
    return c.supported ? std::string("supported") : c.reason;
  };
  EXPECT_EQ(reason(DType::kFloat32, DType::kInt64, none), "supported");
  EXPECT_EQ(reason(DType::kInt32, DType::kFloat32, none), "supported");
  EXPECT_NE(reason(DType::kFloat32, DType::kBool, none).find("needs storageBuffer8BitAccess, which this device lacks"),
            std::string::npos);
  EXPECT_NE(reason(DType::kBFloat16, DType::kFloat32, none).find("needs storageBuffer16BitAccess"), std::string::npos);
  EXPECT_NE(reason(DType::kFloat16, DType::kInt64, none).find("needs storageBuffer16BitAccess"), std::string::npos);
  for (DType from : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kInt64, DType::kBool})
    for (DType to : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kInt64, DType::kBool})
      EXPECT_EQ(reason(from, to, all), "supported") << dtype_name(from) << " -> " << dtype_name(to);
  EXPECT_NE(reason(DType::kFloat32, DType::kUInt8, all).find("dtype u8"), std::string::npos);
}

}  // namespace
}  // namespace hetsched
