// shared_gpu/shaders/layout_permute.comp through GpuTransfers::record_copy:
// NCHW <-> NHWC on the device for 32-bit elements and even counts of 16-bit
// ones (the handoffs' uploads and readbacks of a VGF island's NHWC tensors
// and device copies between the two GPU delegates), on odd shapes, against
// the index formula written out here; lavapipe with validation.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "graph/tensor.h"
#include "scheduler/handoff.h"
#include "shared_gpu/buffer.h"
#include "shared_gpu/transfer.h"
#include "sync/step_sync.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

class GpuLayoutPermuteTest : public testing::VkTest {
 protected:
  // Permutes `src` (elements of T, logical dims `d`) on the GPU and returns
  // the destination's elements.
  template <typename T>
  std::vector<T> permute_on_gpu(const std::vector<T>& src, const Permute4d& d) {
    std::shared_ptr<SharedGpuContext> context = make_context();
    EXPECT_NE(context, nullptr);
    if (!context) return {};
    const uint64_t bytes = src.size() * sizeof(T);
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    Result<Buffer> in = Buffer::create(*context, bytes, usage, MemoryUsage::kUpload);
    Result<Buffer> out = Buffer::create(*context, bytes, usage, MemoryUsage::kReadback);
    EXPECT_TRUE(in.is_ok() && out.is_ok());
    if (!in.is_ok() || !out.is_ok()) return {};
    std::memcpy(in->mapped(), src.data(), bytes);
    Result<std::unique_ptr<GpuTransfers>> transfers = GpuTransfers::create(context);
    EXPECT_TRUE(transfers.is_ok()) << transfers.status().message();
    Result<VkCommandBuffer> cmd = (*transfers)->record_copy({&*in, 0, bytes}, {&*out, 0, bytes}, &d);
    EXPECT_TRUE(cmd.is_ok()) << cmd.status().message();
    if (!cmd.is_ok()) return {};
    Result<uint64_t> value = (*transfers)->submit(*cmd, plan_gpu_step(SyncMode::kTimeline, 0));
    EXPECT_TRUE(value.is_ok()) << value.status().message();
    EXPECT_TRUE(context->wait(*value).is_ok());
    std::vector<T> got(src.size());
    std::memcpy(got.data(), out->mapped(), bytes);
    return got;
  }

  template <typename T>
  void expect_round_trip(uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
    SCOPED_TRACE(std::to_string(sizeof(T) * 8) + "-bit " + std::to_string(n) + "x" + std::to_string(c) + "x" +
                 std::to_string(h) + "x" + std::to_string(w));
    std::vector<T> nchw(size_t{n} * c * h * w);
    for (size_t i = 0; i < nchw.size(); ++i) nchw[i] = static_cast<T>(i * 7919 + 3);
    const uint32_t bytes = sizeof(T);
    const std::vector<T> nhwc = permute_on_gpu(nchw, {n, c, h, w, true, bytes});
    ASSERT_EQ(nhwc.size(), nchw.size());
    for (uint32_t b = 0; b < n; ++b)
      for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t y = 0; y < h; ++y)
          for (uint32_t x = 0; x < w; ++x)
            ASSERT_EQ(nhwc[((size_t{b} * h + y) * w + x) * c + ch], nchw[((size_t{b} * c + ch) * h + y) * w + x])
                << "n " << b << " c " << ch << " y " << y << " x " << x;
    EXPECT_EQ(permute_on_gpu(nhwc, {n, c, h, w, false, bytes}), nchw);
  }
};

TEST_F(GpuLayoutPermuteTest, ThirtyTwoBitElementsOnOddShapes) {
  expect_round_trip<uint32_t>(1, 3, 17, 23);
  expect_round_trip<uint32_t>(2, 5, 7, 1);
  expect_round_trip<uint32_t>(1, 64, 9, 9);
}

// Two elements per word: neighbours in the destination come from different
// words of the source, and both halves of every word are checked.
TEST_F(GpuLayoutPermuteTest, SixteenBitElementsOnOddShapes) {
  expect_round_trip<uint16_t>(1, 3, 17, 22);
  expect_round_trip<uint16_t>(2, 5, 7, 1);
  expect_round_trip<uint16_t>(1, 3, 640, 32);
  expect_round_trip<uint16_t>(3, 7, 3, 2);
}

// An odd count of 16-bit elements would end in half a word: the handoff
// permutes those on the host instead, and the recorder refuses them.
TEST(GpuLayoutPermuteRuleTest, OddCountsOfSixteenBitAndOtherSizesStayOnTheHost) {
  auto permute = [](DType dtype, Shape shape) {
    return gpu_layout_permute(TensorType{dtype, std::move(shape)}, TensorLayout::kNchw, TensorLayout::kNhwc);
  };
  ASSERT_TRUE(permute(DType::kFloat16, {1, 3, 4, 4}).is_ok());
  EXPECT_EQ((*permute(DType::kFloat16, {1, 3, 4, 4}))->element_bytes, 2u);
  EXPECT_EQ((*permute(DType::kFloat32, {1, 3, 5, 5}))->element_bytes, 4u);
  EXPECT_FALSE(permute(DType::kFloat16, {1, 3, 5, 5}).is_ok());
  EXPECT_FALSE(permute(DType::kInt64, {1, 3, 4, 4}).is_ok());
  EXPECT_FALSE(permute(DType::kBool, {1, 3, 4, 4}).is_ok());
  Result<std::optional<Permute4d>> none = permute(DType::kFloat16, {1, 1, 5, 5});  // one channel: same bytes
  ASSERT_TRUE(none.is_ok());
  EXPECT_FALSE(none->has_value());
}

}  // namespace
}  // namespace hetsched
