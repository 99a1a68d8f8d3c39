#include "shared_gpu/host_access.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "shared_gpu/buffer.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

constexpr VkMemoryPropertyFlags kDeviceLocal = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
constexpr VkMemoryPropertyFlags kHostCoherent =
    VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
constexpr VkMemoryPropertyFlags kHostCached = kHostCoherent | VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
constexpr VkPhysicalDeviceType kDiscrete = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
constexpr VkPhysicalDeviceType kIntegrated = VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
constexpr VkPhysicalDeviceType kCpu = VK_PHYSICAL_DEVICE_TYPE_CPU;
constexpr VkPhysicalDeviceType kAllTypes[] = {VK_PHYSICAL_DEVICE_TYPE_OTHER, kIntegrated, kDiscrete,
                                              VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU, kCpu};
constexpr uint64_t kHuge = uint64_t{1} << 40;

// The sizes a choice is checked at: tiny, each threshold and one byte past
// it (wrapping to 0 for kAlways), huge, and the largest representable.
constexpr uint64_t kProbeSizes[] = {0,
                                    1,
                                    256,
                                    kBarReadbackMappedMaxBytes,
                                    kBarReadbackMappedMaxBytes + 1,
                                    kUncachedHostReadbackMappedMaxBytes,
                                    kUncachedHostReadbackMappedMaxBytes + 1,
                                    kBarUploadMappedMaxBytes,
                                    kBarUploadMappedMaxBytes + 1,
                                    kHuge,
                                    UINT64_MAX};

using Choose = HostAccess (*)(const HostAccessPolicy&, uint64_t);

// `choose` maps every size up to `max` and stages every size past it (none
// when max is kAlways). The constants may change with new measurements, so
// the rules are checked against them, not against numbers.
void expect_mapped_up_to(Choose choose, const HostAccessPolicy& policy, uint64_t max, const char* what) {
  EXPECT_EQ(choose(policy, 0), HostAccess::kMapped) << what;
  EXPECT_EQ(choose(policy, 256), HostAccess::kMapped) << what;
  EXPECT_EQ(choose(policy, max), HostAccess::kMapped) << what;
  if (max == HostAccessPolicy::kAlways) {
    EXPECT_EQ(choose(policy, kHuge), HostAccess::kMapped) << what;
  } else {
    EXPECT_EQ(choose(policy, max + 1), HostAccess::kStaged) << what;
    EXPECT_EQ(choose(policy, UINT64_MAX), HostAccess::kStaged) << what;
  }
}

void expect_always(const HostAccessPolicy& policy, HostAccess access, const char* what) {
  for (uint64_t bytes : kProbeSizes) {
    EXPECT_EQ(choose_upload(policy, bytes), access) << what << ", upload of " << bytes;
    EXPECT_EQ(choose_readback(policy, bytes), access) << what << ", readback of " << bytes;
  }
}

TEST(HostAccessTest, ThresholdsOrdered) {
  // Uncached reads over PCIe are far slower than write-combined writes:
  // BAR readbacks stop going mapped (at some size) much earlier than
  // uploads; small ones still go mapped.
  static_assert(kBarReadbackMappedMaxBytes < kBarUploadMappedMaxBytes);
  static_assert(kBarReadbackMappedMaxBytes != HostAccessPolicy::kAlways);
  static_assert(kBarReadbackMappedMaxBytes >= 256 && kUncachedHostReadbackMappedMaxBytes >= 256);
}

TEST(HostAccessTest, NotHostVisibleIsAlwaysStaged) {
  for (VkPhysicalDeviceType type : kAllTypes) {
    for (bool cached_elsewhere : {false, true}) {
      const HostAccessPolicy policy = host_access_policy(type, kDeviceLocal, cached_elsewhere);
      EXPECT_FALSE(policy.mappable);
      EXPECT_EQ(classify_host_memory(type, kDeviceLocal), HostMemoryKind::kNotHostVisible);
      expect_always(policy, HostAccess::kStaged, "device-local only");
    }
  }
  expect_always(host_access_policy(kDiscrete, 0, true), HostAccess::kStaged, "no properties");
}

TEST(HostAccessTest, HostCachedIsAlwaysMapped) {
  // lavapipe (one type with all four bits), integrated GPUs (device-local
  // and cached), and a discrete GPU's cached system memory.
  for (VkPhysicalDeviceType type : kAllTypes) {
    for (VkMemoryPropertyFlags flags : {kHostCached, kHostCached | kDeviceLocal}) {
      const HostAccessPolicy policy = host_access_policy(type, flags, true);
      EXPECT_EQ(classify_host_memory(type, flags), HostMemoryKind::kHostCached);
      EXPECT_TRUE(policy.mappable);
      expect_always(policy, HostAccess::kMapped, "host-cached");
    }
  }
}

TEST(HostAccessTest, DiscreteBarIsMappedUpToThresholds) {
  const VkMemoryPropertyFlags bar = kDeviceLocal | kHostCoherent;
  EXPECT_EQ(classify_host_memory(kDiscrete, bar), HostMemoryKind::kBar);
  const HostAccessPolicy policy = host_access_policy(kDiscrete, bar, true);
  EXPECT_EQ(policy, (HostAccessPolicy{true, kBarUploadMappedMaxBytes, kBarReadbackMappedMaxBytes}));
  expect_mapped_up_to(choose_upload, policy, kBarUploadMappedMaxBytes, "BAR upload");
  expect_mapped_up_to(choose_readback, policy, kBarReadbackMappedMaxBytes, "BAR readback");
  // A size an upload still maps is read back staged.
  EXPECT_EQ(choose_upload(policy, kBarReadbackMappedMaxBytes + 1), HostAccess::kMapped);
  EXPECT_EQ(choose_readback(policy, kBarReadbackMappedMaxBytes + 1), HostAccess::kStaged);
  // Only a discrete GPU's device-local memory is behind the bus.
  for (VkPhysicalDeviceType type : {kIntegrated, kCpu, VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU})
    EXPECT_NE(classify_host_memory(type, bar), HostMemoryKind::kBar) << type;
}

TEST(HostAccessTest, BarReadbackStaysMappedWithoutCachedMemoryToStageInto) {
  const HostAccessPolicy policy = host_access_policy(kDiscrete, kDeviceLocal | kHostCoherent, false);
  expect_mapped_up_to(choose_upload, policy, kBarUploadMappedMaxBytes, "BAR upload");
  EXPECT_EQ(choose_readback(policy, kHuge), HostAccess::kMapped);
}

TEST(HostAccessTest, UncachedHostMemoryUploadsMappedReadbacksUpToThreshold) {
  // A discrete GPU's uncached system memory (what kDeviceLocalHostVisible
  // falls back to without a BAR type), and an integrated GPU's uncached
  // device-local memory: both are system memory, so staging an upload only
  // adds a copy.
  for (auto [type, flags] : {std::pair{kDiscrete, kHostCoherent}, std::pair{kIntegrated, kDeviceLocal | kHostCoherent},
                             std::pair{kCpu, kHostCoherent}}) {
    EXPECT_EQ(classify_host_memory(type, flags), HostMemoryKind::kUncachedHost);
    const HostAccessPolicy policy = host_access_policy(type, flags, true);
    EXPECT_EQ(policy, (HostAccessPolicy{true, HostAccessPolicy::kAlways, kUncachedHostReadbackMappedMaxBytes}));
    expect_mapped_up_to(choose_upload, policy, HostAccessPolicy::kAlways, "uncached host upload");
    expect_mapped_up_to(choose_readback, policy, kUncachedHostReadbackMappedMaxBytes, "uncached host readback");
    // Nothing cached to stage into: mapped, whatever the size.
    EXPECT_EQ(choose_readback(host_access_policy(type, flags, false), UINT64_MAX), HostAccess::kMapped);
  }
}

TEST(HostAccessTest, DefaultPolicyIsStaged) { expect_always(HostAccessPolicy{}, HostAccess::kStaged, "default"); }

TEST(HostAccessTest, NamesMemoryProperties) {
  EXPECT_EQ(memory_property_names(0), "none");
  EXPECT_EQ(memory_property_names(kHostCached | kDeviceLocal), "DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT|HOST_CACHED");
  EXPECT_EQ(memory_property_names(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | 0x1000), "HOST_VISIBLE|0x1000");
  EXPECT_STREQ(host_access_name(HostAccess::kMapped), "mapped");
  EXPECT_STREQ(host_access_name(HostAccess::kStaged), "staged");
}

class HostAccessDeviceTest : public testing::VkTest {};

// On the real device (lavapipe on CI): every host-visible buffer kind gets
// the policy its memory flags give, and on a CPU device (lavapipe's one
// memory type is device-local, host-visible and cached) that is mapped at
// every size; a kDeviceLocal buffer has no mapping, so it is staged.
TEST_F(HostAccessDeviceTest, PolicyOfRealBuffers) {
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  const VkPhysicalDeviceType type = context->properties().deviceType;
  constexpr VkBufferUsageFlags kUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                        VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  for (MemoryUsage usage : {MemoryUsage::kUpload, MemoryUsage::kReadback, MemoryUsage::kDeviceLocalHostVisible}) {
    Result<Buffer> buffer = Buffer::create(*context, 4096, kUsage, usage);
    ASSERT_TRUE(buffer.is_ok()) << buffer.status().message();
    ASSERT_NE(buffer->mapped(), nullptr);
    const HostAccessPolicy policy = host_access_policy(*context, *buffer);
    EXPECT_EQ(policy, host_access_policy(*context, buffer->memory_properties()));
    EXPECT_TRUE(policy.mappable) << memory_property_names(buffer->memory_properties());
    if (type == kCpu) {
      EXPECT_EQ(classify_host_memory(type, buffer->memory_properties()), HostMemoryKind::kHostCached)
          << memory_property_names(buffer->memory_properties());
      expect_always(policy, HostAccess::kMapped, "lavapipe buffer");
    }
  }
  Result<Buffer> device_only = Buffer::create(*context, 4096, kUsage, MemoryUsage::kDeviceLocal);
  ASSERT_TRUE(device_only.is_ok()) << device_only.status().message();
  EXPECT_EQ(device_only->mapped(), nullptr);
  expect_always(host_access_policy(*context, *device_only), HostAccess::kStaged, "kDeviceLocal buffer");
}

}  // namespace
}  // namespace hetsched
