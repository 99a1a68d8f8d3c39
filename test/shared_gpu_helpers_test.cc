#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "shared_gpu/barrier_plan.h"
#include "shared_gpu/buffer.h"
#include "shared_gpu/command_pool.h"
#include "shared_gpu/compute_pipeline.h"
#include "test/shaders/add_one_spv.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

constexpr uint32_t kAddOneGroupSize = 64;  // local_size_x in test/shaders/add_one.comp

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

ComputePipelineDesc add_one_desc() {
  ComputePipelineDesc desc;
  desc.name = "add_one";
  desc.spirv = kAddOneSpv;
  desc.storage_buffer_count = 2;
  desc.push_constant_size = sizeof(uint32_t);
  return desc;
}

TEST(FindMemoryTypeTest, PrefersPreferredPropertiesAndFallsBackToRequired) {
  VkPhysicalDeviceMemoryProperties memory{};
  memory.memoryTypeCount = 3;
  memory.memoryTypes[0].propertyFlags = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  memory.memoryTypes[1].propertyFlags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  memory.memoryTypes[2].propertyFlags = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                        VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  EXPECT_EQ(*find_memory_type(memory, 0b111, host, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT), 2u);
  EXPECT_EQ(*find_memory_type(memory, 0b011, host, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT), 0u);
  EXPECT_EQ(*find_memory_type(memory, 0b111, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0), 1u);
  Result<uint32_t> none = find_memory_type(memory, 0b001, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  EXPECT_EQ(none.status().code(), StatusCode::kUnsupported);
}

TEST(GroupCountTest, RoundsUp) {
  EXPECT_EQ(group_count(1, 64), 1u);
  EXPECT_EQ(group_count(64, 64), 1u);
  EXPECT_EQ(group_count(65, 64), 2u);
  EXPECT_EQ(group_count(1000003, 64), 15626u);
}

class AddOneTest : public testing::VkTest,
                   public ::testing::WithParamInterface<std::tuple<uint32_t, MemoryUsage>> {};

TEST_P(AddOneTest, UploadDispatchReadbackGivesXPlusOne) {
  const auto [count, memory_usage] = GetParam();
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  Result<CommandPool> pool = CommandPool::create(*context);
  ASSERT_TRUE(pool.is_ok()) << pool.status().message();
  Result<ComputePipeline> pipeline = ComputePipeline::create(*context, add_one_desc());
  ASSERT_TRUE(pipeline.is_ok()) << pipeline.status().message();

  const VkDeviceSize bytes = count * sizeof(uint32_t);
  const VkBufferUsageFlags usage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  Result<Buffer> src = Buffer::create(*context, bytes, usage, memory_usage);
  Result<Buffer> dst = Buffer::create(*context, bytes, usage, memory_usage);
  ASSERT_TRUE(src.is_ok() && dst.is_ok());
  EXPECT_EQ(src->mapped() != nullptr, memory_usage != MemoryUsage::kDeviceLocal);

  // Values spread over the whole uint range, with the largest value that
  // does not wrap.
  std::vector<uint32_t> input(count);
  for (uint32_t i = 0; i < count; ++i) input[i] = i * 2654435761u % 0xFFFFFFFEu;
  input[count - 1] = 0xFFFFFFFEu;
  ASSERT_TRUE(upload(*pool, *src, std::as_bytes(std::span(input))).is_ok());

  Result<DescriptorPool> descriptors = DescriptorPool::create(*context, 1, 2);
  ASSERT_TRUE(descriptors.is_ok()) << descriptors.status().message();
  const VkDescriptorBufferInfo bindings[] = {src->descriptor(), dst->descriptor()};
  Result<VkDescriptorSet> set = descriptors->allocate(*pipeline, bindings);
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  const Status ran = pool->run_one_shot([&](VkCommandBuffer cmd) {
    record_dispatch(cmd, *pipeline, *set, std::as_bytes(std::span(&count, 1)), group_count(count, kAddOneGroupSize));
  });
  ASSERT_TRUE(ran.is_ok()) << ran.message();

  std::vector<uint32_t> output(count, 0);
  ASSERT_TRUE(readback(*pool, *dst, std::as_writable_bytes(std::span(output))).is_ok());
  size_t mismatches = 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (output[i] != input[i] + 1 && mismatches++ < 5) {
      ADD_FAILURE() << "element " << i << ": got " << output[i] << ", want " << input[i] + 1;
    }
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(output[count - 1], 0xFFFFFFFFu);
}

INSTANTIATE_TEST_SUITE_P(Sizes, AddOneTest,
                         ::testing::Combine(::testing::Values(1u, 7u, 1000003u),
                                            ::testing::Values(MemoryUsage::kDeviceLocal,
                                                              MemoryUsage::kDeviceLocalHostVisible)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) == MemoryUsage::kDeviceLocal ? "_DeviceLocal"
                                                                                       : "_HostVisible");
                         });

using GpuHelpersTest = testing::VkTest;

TEST_F(GpuHelpersTest, TransfersRejectRangesOutsideTheBuffer) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  Result<CommandPool> pool = CommandPool::create(*context);
  Result<Buffer> buffer = Buffer::create(*context, 16, VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                         MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(pool.is_ok() && buffer.is_ok());
  std::vector<std::byte> data(32);
  const Status too_big = upload(*pool, *buffer, data);
  EXPECT_EQ(too_big.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(too_big.message(), "failed to upload 32 bytes at offset 0: the buffer holds 16");
  EXPECT_EQ(readback(*pool, *buffer, std::span(data).first(8), 12).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Buffer::create(*context, 0, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, MemoryUsage::kUpload).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(GpuHelpersTest, DeviceLocalTransfersNeedTransferUsage) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  Result<CommandPool> pool = CommandPool::create(*context);
  Result<Buffer> buffer =
      Buffer::create(*context, 16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(pool.is_ok() && buffer.is_ok());
  std::vector<std::byte> data(16);
  EXPECT_TRUE(contains(upload(*pool, *buffer, data).message(), "TRANSFER_DST"));
  EXPECT_TRUE(contains(readback(*pool, *buffer, data).message(), "TRANSFER_SRC"));
}

TEST_F(GpuHelpersTest, UploadAtOffsetLeavesTheRestUntouched) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  Result<CommandPool> pool = CommandPool::create(*context);
  Result<Buffer> buffer = Buffer::create(*context, 16, VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                                         MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(pool.is_ok() && buffer.is_ok());
  ASSERT_TRUE(pool->run_one_shot([&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, buffer->handle(), 0, 16, 0u); })
                  .is_ok());
  const uint32_t values[] = {7, 9};
  ASSERT_TRUE(upload(*pool, *buffer, std::as_bytes(std::span(values)), 4).is_ok());
  uint32_t out[4] = {1, 1, 1, 1};
  ASSERT_TRUE(readback(*pool, *buffer, std::as_writable_bytes(std::span(out))).is_ok());
  EXPECT_EQ(out[0], 0u);
  EXPECT_EQ(out[1], 7u);
  EXPECT_EQ(out[2], 9u);
  EXPECT_EQ(out[3], 0u);
}

TEST_F(GpuHelpersTest, PipelineAndDescriptorArgumentsAreChecked) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  ComputePipelineDesc odd = add_one_desc();
  odd.push_constant_size = 6;
  Result<ComputePipeline> bad = ComputePipeline::create(*context, odd);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "failed to create compute pipeline 'add_one': push constant size 6 is not a "
                                    "multiple of 4");
  ComputePipelineDesc empty = add_one_desc();
  empty.spirv = {};
  EXPECT_EQ(ComputePipeline::create(*context, empty).status().code(), StatusCode::kInvalidArgument);

  Result<ComputePipeline> pipeline = ComputePipeline::create(*context, add_one_desc());
  ASSERT_TRUE(pipeline.is_ok()) << pipeline.status().message();
  Result<Buffer> buffer = Buffer::create(*context, 16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, MemoryUsage::kDeviceLocal);
  Result<DescriptorPool> descriptors = DescriptorPool::create(*context, 1, 2);
  ASSERT_TRUE(buffer.is_ok() && descriptors.is_ok());
  const VkDescriptorBufferInfo one[] = {buffer->descriptor()};
  Result<VkDescriptorSet> set = descriptors->allocate(*pipeline, one);
  EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(set.status().message(), "failed to allocate descriptor set: 1 buffers given, the pipeline has 2 bindings");
}

// Two dispatches, the second reading what the first wrote, recorded with and
// without the barrier the planner asks for: synchronization validation
// (on with validation in every GPU test) reports the missing one. Lavapipe
// runs dispatches in order, so results alone would not show it.
class SyncValidationTest : public testing::VkTest {};

TEST_F(SyncValidationTest, ReportsTheBarrierThePlannerAsksFor) {
  if (!validation_wanted()) GTEST_SKIP() << "HETSCHED_TEST_VALIDATION=off";
  if (!sync_validation_wanted()) GTEST_SKIP() << "HETSCHED_VK_SYNC_VALIDATION=0";
  for (const bool with_barrier : {true, false}) {
    Result<std::shared_ptr<SharedGpuContext>> made = SharedGpuContext::create(options());
    ASSERT_TRUE(made.is_ok()) << made.status().message();
    std::shared_ptr<SharedGpuContext> context = *made;
    Result<CommandPool> pool = CommandPool::create(*context);
    ASSERT_TRUE(pool.is_ok()) << pool.status().message();
    Result<ComputePipeline> pipeline = ComputePipeline::create(*context, add_one_desc());
    ASSERT_TRUE(pipeline.is_ok()) << pipeline.status().message();
    const uint32_t count = 64;
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    Result<Buffer> a = Buffer::create(*context, count * 4, usage, MemoryUsage::kDeviceLocal);
    Result<Buffer> b = Buffer::create(*context, count * 4, usage, MemoryUsage::kDeviceLocal);
    Result<Buffer> c = Buffer::create(*context, count * 4, usage, MemoryUsage::kDeviceLocal);
    ASSERT_TRUE(a.is_ok() && b.is_ok() && c.is_ok());
    Result<DescriptorPool> descriptors = DescriptorPool::create(*context, 2, 2);
    ASSERT_TRUE(descriptors.is_ok()) << descriptors.status().message();
    const VkDescriptorBufferInfo first[] = {a->descriptor(), b->descriptor()};
    const VkDescriptorBufferInfo second[] = {b->descriptor(), c->descriptor()};
    Result<VkDescriptorSet> set0 = descriptors->allocate(*pipeline, first);
    Result<VkDescriptorSet> set1 = descriptors->allocate(*pipeline, second);
    ASSERT_TRUE(set0.is_ok() && set1.is_ok());
    const std::vector<gpu::StepAccess> steps = {gpu::StepAccess{{{0, 0, 256}}, {{1, 0, 256}}}, gpu::StepAccess{{{1, 0, 256}}, {{2, 0, 256}}}};
    const std::vector<bool> barriers = gpu::plan_barriers(steps);
    ASSERT_EQ(barriers, (std::vector<bool>{false, true}));
    const Status ran = pool->run_one_shot([&](VkCommandBuffer cmd) {
      vkCmdFillBuffer(cmd, a->handle(), 0, VK_WHOLE_SIZE, 1u);
      record_memory_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
      record_dispatch(cmd, *pipeline, *set0, std::as_bytes(std::span(&count, 1)), 1);
      if (with_barrier && barriers[1])
        record_memory_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                              VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
      record_dispatch(cmd, *pipeline, *set1, std::as_bytes(std::span(&count, 1)), 1);
    });
    ASSERT_TRUE(ran.is_ok()) << ran.message();
    std::string messages;
    for (const std::string& m : context->validation_log()->messages()) messages += m + "\n";
    if (with_barrier) {
      EXPECT_EQ(context->validation_log()->message_count(), 0u) << messages;
    } else {
      EXPECT_NE(messages.find("SYNC-HAZARD-READ-AFTER-WRITE"), std::string::npos) << messages;
    }
  }
}

}  // namespace
}  // namespace hetsched
