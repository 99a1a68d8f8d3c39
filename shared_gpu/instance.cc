#include "shared_gpu/instance.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "shared_gpu/vk_check.h"
#include "shared_gpu/vk_loader.h"

namespace hetsched {
namespace {

bool has_instance_extension(const std::vector<VkExtensionProperties>& extensions, const char* name) {
  return std::any_of(extensions.begin(), extensions.end(),
                     [name](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

}  // namespace

namespace {

// The loader unloads the drivers with the last instance and loads them
// again with the next. NVIDIA's driver takes static TLS each time it is
// loaded and glibc never gives it back: after about 30 instances made and
// destroyed in turn (a test binary, a host application opening and closing
// sessions) dlopen fails ("libnvidia-tls.so: cannot allocate memory in
// static TLS block") and vkCreateInstance reports no driver. One instance
// with no layers, made after the first that succeeds and kept for the
// process's life, keeps the drivers loaded.
void pin_drivers(const VkInstanceCreateInfo& like) {
  static std::once_flag once;
  std::call_once(once, [&] {
    VkInstanceCreateInfo plain = like;
    plain.pNext = nullptr;
    plain.enabledLayerCount = 0;
    plain.ppEnabledLayerNames = nullptr;
    plain.enabledExtensionCount = 0;
    plain.ppEnabledExtensionNames = nullptr;
    plain.flags = 0;
    static VkInstance pin = VK_NULL_HANDLE;  // reachable for the process's life, never destroyed
    if (vkCreateInstance(&plain, nullptr, &pin) != VK_SUCCESS) pin = VK_NULL_HANDLE;
  });
}

}  // namespace

Result<VkInstance> create_vulkan_instance(const InstanceOptions& options) {
  HS_RETURN_IF_ERROR(load_vulkan_loader());
  const uint32_t loader_version = volkGetInstanceVersion();
  if (loader_version < kMinVulkanVersion) {
    return unsupported("failed to create Vulkan instance: the Vulkan loader supports " +
                       format_vk_version(loader_version) + " < 1.2");
  }
  if (options.enable_validation && !validation_layer_available()) {
    return unavailable(std::string("failed to enable Vulkan validation: ") + kValidationLayerName +
                       " not found; install vulkan-validationlayers");
  }

  uint32_t count = 0;
  HS_VK_RETURN_IF_ERROR(vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr));
  std::vector<VkExtensionProperties> available(count);
  HS_VK_RETURN_IF_ERROR(vkEnumerateInstanceExtensionProperties(nullptr, &count, available.data()));

  std::vector<const char*> extensions;
  std::vector<const char*> layers;
  VkInstanceCreateFlags flags = 0;
  // Lets the loader list portability drivers (MoltenVK); harmless elsewhere.
  if (has_instance_extension(available, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{};
  VkValidationFeaturesEXT features{};
  const VkValidationFeatureEnableEXT kSyncValidation = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  const void* next = nullptr;
  if (options.enable_validation) {
    layers.push_back(kValidationLayerName);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (options.validation_log != nullptr) {
      messenger_info = validation_messenger_info(options.validation_log);
      next = &messenger_info;
    }
    uint32_t layer_count = 0;
    HS_VK_RETURN_IF_ERROR(vkEnumerateInstanceExtensionProperties(kValidationLayerName, &layer_count, nullptr));
    std::vector<VkExtensionProperties> layer_extensions(layer_count);
    HS_VK_RETURN_IF_ERROR(
        vkEnumerateInstanceExtensionProperties(kValidationLayerName, &layer_count, layer_extensions.data()));
    if (sync_validation_wanted() && has_instance_extension(layer_extensions, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
      extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
      features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
      features.pNext = next;
      features.enabledValidationFeatureCount = 1;
      features.pEnabledValidationFeatures = &kSyncValidation;
      next = &features;
    }
  }

  VkApplicationInfo app_info{};
  app_info.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app_info.pApplicationName = options.app_name.c_str();
  app_info.pEngineName = "hetsched";
  app_info.apiVersion = std::min(loader_version, static_cast<uint32_t>(VK_API_VERSION_1_3));
  VkInstanceCreateInfo create_info{};
  create_info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  create_info.pNext = next;
  create_info.flags = flags;
  create_info.pApplicationInfo = &app_info;
  create_info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  create_info.ppEnabledLayerNames = layers.data();
  create_info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  create_info.ppEnabledExtensionNames = extensions.data();

  VkInstance instance = VK_NULL_HANDLE;
  const VkResult result = vkCreateInstance(&create_info, nullptr, &instance);
  if (result == VK_ERROR_INCOMPATIBLE_DRIVER) {
    return unavailable(
        "failed to create Vulkan instance: no Vulkan driver (ICD) found or none loaded "
        "(vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER); install mesa-vulkan-drivers for lavapipe, "
        "a CPU implementation, or run with VK_LOADER_DEBUG=error to see why a driver failed to load");
  }
  HS_RETURN_IF_ERROR(vk_status(result, "vkCreateInstance").with_context("failed to create Vulkan instance: "));
  pin_drivers(create_info);
  return instance;
}

}  // namespace hetsched
