// VkHandle<T>: the one RAII owner for Vulkan objects that belong to a
// VkDevice (buffers, memory, pools, pipelines, ...).
//
// It holds the device and the handle and destroys the handle with the
// matching vkDestroy*/vkFree* call. It does not keep the device alive: the
// owner of a VkHandle must be destroyed before its device (classes here hold a
// shared_ptr to their SharedGpuContext for that reason). Move-only.
#pragma once

#include <volk.h>

#include <utility>

namespace hetsched {

// Non-dispatchable handles are distinct pointer types only on 64-bit targets
// (on 32-bit they are all uint64_t and the specialisations below collide).
static_assert(sizeof(void*) == 8, "VkHandle needs 64-bit Vulkan handle types");

// How each handle type is destroyed. One specialisation per type.
template <typename T>
struct VkDeleter;

#define HS_VK_DELETER(Type, call)                                                        \
  template <>                                                                            \
  struct VkDeleter<Type> {                                                               \
    static void destroy(VkDevice device, Type handle) { call(device, handle, nullptr); } \
  }
HS_VK_DELETER(VkBuffer, vkDestroyBuffer);
HS_VK_DELETER(VkDeviceMemory, vkFreeMemory);
HS_VK_DELETER(VkCommandPool, vkDestroyCommandPool);
HS_VK_DELETER(VkShaderModule, vkDestroyShaderModule);
HS_VK_DELETER(VkPipeline, vkDestroyPipeline);
HS_VK_DELETER(VkPipelineLayout, vkDestroyPipelineLayout);
HS_VK_DELETER(VkPipelineCache, vkDestroyPipelineCache);
HS_VK_DELETER(VkDescriptorSetLayout, vkDestroyDescriptorSetLayout);
HS_VK_DELETER(VkDescriptorPool, vkDestroyDescriptorPool);
HS_VK_DELETER(VkFence, vkDestroyFence);
HS_VK_DELETER(VkSemaphore, vkDestroySemaphore);
HS_VK_DELETER(VkQueryPool, vkDestroyQueryPool);
#undef HS_VK_DELETER

template <typename T>
class VkHandle {
 public:
  VkHandle() = default;
  // Takes ownership of `handle`, which belongs to `device`.
  VkHandle(VkDevice device, T handle) : device_(device), handle_(handle) {}
  ~VkHandle() { reset(); }
  VkHandle(VkHandle&& other) noexcept
      : device_(std::exchange(other.device_, VK_NULL_HANDLE)), handle_(std::exchange(other.handle_, VK_NULL_HANDLE)) {}
  VkHandle& operator=(VkHandle&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = std::exchange(other.device_, VK_NULL_HANDLE);
      handle_ = std::exchange(other.handle_, VK_NULL_HANDLE);
    }
    return *this;
  }
  VkHandle(const VkHandle&) = delete;
  VkHandle& operator=(const VkHandle&) = delete;

  T get() const { return handle_; }
  VkDevice device() const { return device_; }
  explicit operator bool() const { return handle_ != VK_NULL_HANDLE; }
  // Gives up ownership without destroying.
  T release() { return std::exchange(handle_, VK_NULL_HANDLE); }
  void reset() {
    if (handle_ != VK_NULL_HANDLE) VkDeleter<T>::destroy(device_, handle_);
    handle_ = VK_NULL_HANDLE;
  }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  T handle_ = VK_NULL_HANDLE;
};

}  // namespace hetsched
