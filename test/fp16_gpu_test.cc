// fp16 models on the GPU delegates: Cast f16 <-> f32 as GPU kernels (read and
// written through storageBuffer16BitAccess) and f16 tensors at island edges
// (uploads and readbacks of 2-byte elements, VGF's NHWC conversion of them
// on the host). Each case runs on vulkan and on vgf (lavapipe, validation
// on) under a strict profile, checks that no node fell to the CPU, and is
// compared with graph/dtype.h's conversions (the CPU's, an independent
// reference: the shaders convert with their own code) bit for bit, or for
// whole models with the same fp16 model on the portable CPU kernels.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
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
constexpr int64_t kOnnxFloat = 1, kOnnxFloat16 = 10;
constexpr float kInf = std::numeric_limits<float>::infinity();

float from_bits(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }

// f32 values that exercise every branch of the f32 -> f16 rounding.
std::vector<float> rounding_cases() {
  std::vector<float> v = {
      0.f, -0.f, 1.f, -2.f, 1.f / 3, 65504.f, -65504.f,
      65519.99f,                                 // rounds down to the largest finite half
      65520.f, -65520.f, 1e6f, 3.4e38f,          // overflow to +-inf
      kInf, -kInf, std::nanf(""), -std::nanf(""), from_bits(0x7f800001u),  // NaN, signalling payload
      1.f + std::ldexp(1.f, -11),                // halfway between 1 and the next half: to even (1)
      1.f + 3 * std::ldexp(1.f, -11),            // halfway: to even (up)
      1.f + std::ldexp(1.f, -11) + std::ldexp(1.f, -20),  // just above halfway: up
      std::ldexp(1.f, -14),                      // smallest normal half
      std::ldexp(1.f, -24),                      // smallest subnormal half
      std::ldexp(1.f, -25),                      // halfway to it: to even (0)
      std::ldexp(1.5f, -25),                     // above halfway: the smallest subnormal
      std::ldexp(3.f, -25),                      // 1.5 subnormal units: to even (2)
      std::ldexp(1023.5f, -24),                  // halfway below the smallest normal: to even (normal)
      std::ldexp(1.f, -26), std::ldexp(1.f, -130), from_bits(0x00000001u),  // to zero (f32 subnormals too)
      -std::ldexp(5.f, -24),                     // negative subnormal half
  };
  // A sweep of magnitudes with random mantissas.
  for (int i = 0; i < 400; ++i)
    v.push_back(std::ldexp(1.f + static_cast<float>((i * 7919) % 1000) / 1000.f, (i % 46) - 30) * (i % 2 ? -1.f : 1.f));
  return v;
}

Profile strict_profile(const std::string& delegate) {
  Result<Profile> p = load_profile(kSource + "/configs/" + delegate + ".yaml");
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  Profile profile = p.is_ok() ? *p : default_profile();
  profile.partition.fallback = "error";
  profile.log_level = "error";
  return profile;
}

class Fp16GpuTest : public testing::VkTest, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override { ::setenv("HETSCHED_VK_VALIDATION", "1", 1); }
  void TearDown() override {
    ::unsetenv("HETSCHED_VK_VALIDATION");
    testing::VkTest::TearDown();
  }

 public:
  // A session of `g` under `profile` whose every island runs on the delegate
  // under test (null, with a failure, otherwise).
  std::unique_ptr<Session> open_on_gpu(const Graph& g, const Profile& profile) {
    auto session = open_session_for_graph(g, profile);
    EXPECT_TRUE(session.is_ok()) << session.status().message();
    if (!session.is_ok()) return nullptr;
    for (const auto& island : (*session)->program().islands)
      EXPECT_EQ(island.delegate, GetParam()) << "island " << island.id << " (" << island.op_types.size() << " ops)";
    for (const std::string& key : SharedGpuContextRegistry::get().keys())
      watch(*SharedGpuContextRegistry::get().lookup(key));
    return std::move(session).value();
  }
};

Graph cast_graph(DType from, const Shape& shape, int64_t to) {
  GraphBuilder b("cast");
  ValueId x = b.input("x", {from, shape});
  b.output(b.op("Cast", {x}, {{"to", Attribute{to}}}, "cast"));
  auto g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

TEST_P(Fp16GpuTest, CastF32ToF16RoundsToNearestEvenLikeTheCpu) {
  const std::vector<float> cases = rounding_cases();
  // Odd shapes, rank 4 (NHWC on vgf) and rank 1; the values fill them cyclically.
  for (const Shape& shape : {Shape{1, 3, 5, 7}, Shape{433}, Shape{2, 7, 3, 11}}) {
    SCOPED_TRACE(shape_to_string(shape));
    auto session = open_on_gpu(cast_graph(DType::kFloat32, shape, kOnnxFloat16), strict_profile(GetParam()));
    ASSERT_NE(session, nullptr);
    Tensor x(TensorType{DType::kFloat32, shape});
    for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] = cases[static_cast<size_t>(i) % cases.size()];
    auto got = session->run({x});
    ASSERT_TRUE(got.is_ok()) << got.status().message();
    ASSERT_EQ(got->at(0).dtype(), DType::kFloat16);
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const float f = x.data<float>()[i];
      ASSERT_EQ(got->at(0).data<uint16_t>()[i], float_to_half(f))
          << "element " << i << ": " << f << " (bits 0x" << std::hex << bits_of(f) << ")";
    }
  }
}

TEST_P(Fp16GpuTest, CastF16ToF32IsExactForEveryHalf) {
  // All 65536 halves (subnormals, infinities, NaNs with their payloads), as
  // a rank-4 tensor so vgf's NHWC conversion of 2-byte elements is crossed.
  const Shape shape{1, 4, 128, 128};
  auto session = open_on_gpu(cast_graph(DType::kFloat16, shape, kOnnxFloat), strict_profile(GetParam()));
  ASSERT_NE(session, nullptr);
  Tensor x(TensorType{DType::kFloat16, shape});
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<uint16_t>()[i] = static_cast<uint16_t>(i);
  auto got = session->run({x});
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  ASSERT_EQ(got->at(0).dtype(), DType::kFloat32);
  for (int64_t i = 0; i < x.num_elements(); ++i)
    ASSERT_EQ(bits_of(got->at(0).data<float>()[i]), bits_of(half_to_float(static_cast<uint16_t>(i))))
        << "half 0x" << std::hex << i;
}

TEST_P(Fp16GpuTest, HalfInterfaceAroundF32ArithmeticOverflowsToInf) {
  // y = f16(f32(x) * 3): both casts and the Mul in one GPU island, f16 at
  // both edges; |x| above 21845 overflows to inf on the way out.
  const Shape shape{5, 3, 11};
  GraphBuilder b("half_chain");
  ValueId x = b.input("x", {DType::kFloat16, shape});
  ValueId wide = b.op("Cast", {x}, {{"to", Attribute{kOnnxFloat}}}, "widen");
  ValueId tripled = b.op("Mul", {wide, b.constant_f32("three", {}, {3.f})}, {}, "triple");
  b.output(b.op("Cast", {tripled}, {{"to", Attribute{kOnnxFloat16}}}, "narrow"));
  auto g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto session = open_on_gpu(*g, strict_profile(GetParam()));
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->program().islands.size(), 1u);
  Tensor in = testing::random_tensor(shape, 7, -30000.f, 30000.f);
  Tensor xh(TensorType{DType::kFloat16, shape});
  for (int64_t i = 0; i < in.num_elements(); ++i) xh.data<uint16_t>()[i] = float_to_half(in.data<float>()[i]);
  auto got = session->run({xh});
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  int infinities = 0;
  for (int64_t i = 0; i < xh.num_elements(); ++i) {
    const uint16_t want = float_to_half(half_to_float(xh.data<uint16_t>()[i]) * 3.f);
    infinities += (want & 0x7fff) == 0x7c00;
    ASSERT_EQ(got->at(0).data<uint16_t>()[i], want) << "element " << i;
  }
  EXPECT_GT(infinities, 0);
}

// An fp16 model on the GPU delegate (every node; checked in open_on_gpu)
// against the same model on the portable CPU kernels: both compute in f32
// from the same f16 weights, so they differ by f32 rounding and the final
// f16 rounding of the output.
void expect_model_matches_cpu(const std::string& delegate, const std::string& model, Session* gpu) {
  ASSERT_NE(gpu, nullptr);
  Result<Graph> g = load_model(kSource + "/test/data/models18/" + model);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Profile cpu_profile = default_profile();
  cpu_profile.delegates["cpu"].engine = "portable";
  auto cpu = open_session_for_graph(*g, cpu_profile);
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().message();
  const TensorType type = gpu->input_types()[0];
  ASSERT_EQ(type.dtype, DType::kFloat16);
  Tensor x(type);
  for (int64_t i = 0; i < x.num_elements(); ++i)
    x.data<uint16_t>()[i] = float_to_half(std::sin(0.37f * static_cast<float>(i)) * 2.0f);
  auto got = gpu->run({x});
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  auto want = (*cpu)->run({x});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  ASSERT_EQ(got->at(0).dtype(), DType::kFloat16);
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < want->at(0).num_elements(); ++i) {
    const double r = half_to_float(want->at(0).data<uint16_t>()[i]);
    worst = std::max(worst, std::fabs(half_to_float(got->at(0).data<uint16_t>()[i]) - r));
    scale = std::max(scale, std::fabs(r));
  }
  std::cout << "[fp16] " << model << " on " << delegate << ": " << gpu->program().islands.size()
            << " island(s), max abs error " << worst << " against the portable CPU (max |y| " << scale << ")\n";
  EXPECT_LE(worst, 1e-2 * scale);
  EXPECT_GT(scale, 0.05);
}

// configs/vulkan.yaml as shipped (every node lands on vulkan anyway); vgf
// strict. Under the default storage (auto: f32 between kernels) and with
// `storage: fp16`, whose per-tensor rounding the 1e-2 bound also covers.
void expect_fp16_model_matches_cpu(Fp16GpuTest& test, const std::string& delegate, const std::string& model) {
  Result<Graph> g = load_model(kSource + "/test/data/models18/" + model);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  for (const std::string storage : {"auto", "fp16"}) {
    SCOPED_TRACE("storage " + storage);
    Profile profile = strict_profile(delegate);
    if (delegate == "vulkan") profile.partition.fallback = "cpu";
    profile.delegates[delegate].storage = storage;
    expect_model_matches_cpu(delegate + ", storage " + storage, model, test.open_on_gpu(*g, profile).get());
  }
}

TEST_P(Fp16GpuTest, Fp16EncoderRunsWhollyOnTheGpuAndMatchesTheCpu) {
  expect_fp16_model_matches_cpu(*this, GetParam(), "encoder_op18_fp16.onnx");
}

TEST_P(Fp16GpuTest, Fp16CnnRunsWhollyOnTheGpuAndMatchesTheCpu) {
  expect_fp16_model_matches_cpu(*this, GetParam(), "cnn_op18_fp16.onnx");
}

// A host application lends its device without storageBuffer16BitAccess
// enabled (lookup_only): the delegate reads what the host enabled, not what
// the device could do, and refuses the f16 Casts by reason — a strict
// profile fails naming it, the default one runs them on the CPU.
TEST_P(Fp16GpuTest, BorrowedDeviceWithoutStorageBuffer16BitAccessKeepsTheCastsOffTheGpu) {
  std::shared_ptr<SharedGpuContext> host = make_context();
  ASSERT_NE(host, nullptr);
  ASSERT_TRUE(host->features().storage_buffer_16bit_access) << "lavapipe has it; the test needs a device that does";
  SharedGpuContextCreateInfo info = hetsched::testing::lend_info(*host);
  info.enabled_features.storage_buffer_16bit_access = false;
  // Declared after `host`, so the lent context (and the pipelines and
  // timeline it made) goes before the device it borrows.
  struct Unregister {
    ~Unregister() { SharedGpuContextRegistry::get().clear_for_testing(); }
  } unregister;
  auto borrowed = SharedGpuContext::borrow(info);
  ASSERT_TRUE(borrowed.is_ok()) << borrowed.status().message();
  ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("fp16host:0", *borrowed).is_ok());

  Result<Graph> g = load_model(kSource + "/test/data/models18/cnn_op18_fp16.onnx");
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Profile profile = strict_profile(GetParam());
  profile.delegates[GetParam()].shared_gpu = {"fp16host", 0, SharedContextMode::kLookupOnly};
  auto strict = plan_model(*g, profile);
  ASSERT_FALSE(strict.is_ok());
  EXPECT_NE(strict.status().message().find("needs storageBuffer16BitAccess, which this device lacks"),
            std::string::npos)
      << strict.status().message();

  profile.partition.fallback = "cpu";
  auto session = open_session_for_graph(*g, profile);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  const auto& islands = (*session)->program().islands;
  ASSERT_EQ(islands.size(), 3u);
  EXPECT_EQ(islands[0].delegate, "cpu");
  EXPECT_EQ(islands[0].op_types, std::vector<std::string>{"Cast"});
  EXPECT_EQ(islands[1].delegate, GetParam());
  EXPECT_EQ(islands[2].delegate, "cpu");
  EXPECT_EQ(islands[2].op_types, std::vector<std::string>{"Cast"});
  Tensor x((*session)->input_types()[0]);
  auto got = (*session)->run({x});
  EXPECT_TRUE(got.is_ok()) << got.status().message();
}

INSTANTIATE_TEST_SUITE_P(Delegates, Fp16GpuTest, ::testing::Values("vulkan", "vgf"));

// Under the mixed profile (vgf, vulkan, cpu) the edge Casts of an fp16 model
// stay on the GPU: no CPU island at all for the fp16 CNN.
TEST(Fp16MixedPlanTest, NoCpuIslandForTheEdgeCasts) {
  Result<Graph> g = load_model(kSource + "/test/data/models18/cnn_op18_fp16.onnx");
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Result<Profile> profile = load_profile(kSource + "/configs/mixed_gpu.yaml");
  ASSERT_TRUE(profile.is_ok()) << profile.status().message();
  auto planned = plan_model(*g, *profile);
  ASSERT_TRUE(planned.is_ok()) << planned.status().message();
  for (const PlannedIsland& island : planned->plan.islands) EXPECT_NE(island.delegate, "cpu") << island.id;
  SharedGpuContextRegistry::get().clear_for_testing();
}

// A device without storageBuffer16BitAccess: the Vulkan delegate refuses
// f16 Casts by reason (so the partitioner falls back, or a strict profile
// says why), and still takes f32 -> f32 ones.
TEST(Fp16CapabilityTest, VulkanRefusesF16CastsWithoutStorageBuffer16BitAccess) {
  const Graph in = cast_graph(DType::kFloat16, {2, 3}, kOnnxFloat);
  const Graph out = cast_graph(DType::kFloat32, {2, 3}, kOnnxFloat16);
  const Graph same = cast_graph(DType::kFloat32, {2, 3}, kOnnxFloat);
  vulkan::DeviceLimits without, with;
  with.storage_buffer_16bit_access = true;
  for (const Graph* g : {&in, &out}) {
    const Capability refused = vulkan::vulkan_supports(*g, 0, without);
    EXPECT_FALSE(refused.supported);
    EXPECT_NE(refused.reason.find("needs storageBuffer16BitAccess, which this device lacks"), std::string::npos)
        << refused.reason;
    EXPECT_TRUE(vulkan::vulkan_supports(*g, 0, with).supported);
  }
  EXPECT_TRUE(vulkan::vulkan_supports(same, 0, without).supported);
  // Dtypes no cast kernel takes stay refused by dtype (i32, i64 and bool:
  // test/cast_gpu_test.cc).
  const Graph bytes = cast_graph(DType::kFloat32, {2, 3}, 2);
  EXPECT_NE(vulkan::vulkan_supports(bytes, 0, with).reason.find("dtype u8"), std::string::npos);
}

}  // namespace
}  // namespace hetsched
