#include "delegates/registry.h"

#include "delegates/cpu/cpu_delegate.h"
#include "delegates/cpu/cpu_reference.h"
#include "delegates/vgf/vgf_delegate.h"
#include "delegates/vulkan/vulkan_delegate.h"

namespace hetsched {

const std::vector<DelegateInfo>& delegate_infos() {
  static const std::vector<DelegateInfo> infos = {
      {"cpu", "portable C++ kernels (the reference for every op)", cpu::make_cpu_delegate},
      {"vulkan", "GLSL compute shaders on a shared Vulkan context (fp32)", vulkan::make_vulkan_delegate},
      {"vgf", "TOSA-style data graphs in VGF files on a shared Vulkan context (fp32, NHWC)", vgf::make_vgf_delegate},
  };
  return infos;
}

const DelegateInfo* find_delegate_info(std::string_view name) {
  for (const auto& info : delegate_infos())
    if (info.name == name) return &info;
  return nullptr;
}

Result<std::unique_ptr<Delegate>> make_delegate(std::string_view name, const DelegateOptions& options) {
  const DelegateInfo* info = find_delegate_info(name);
  if (!info) {
    std::string known;
    for (const auto& i : delegate_infos()) known += (known.empty() ? "" : ", ") + i.name;
    return not_found("failed to make delegate '" + std::string(name) + "': not built into this hetsched (available: " +
                     known + ")");
  }
  return info->make(options);
}

NodeEvaluator reference_node_evaluator() { return cpu::reference_node_evaluator(); }

}  // namespace hetsched
