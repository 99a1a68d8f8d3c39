#include "shared_gpu/compute_pipeline.h"

#include <algorithm>
#include <vector>

#include "shared_gpu/vk_check.h"
#include "sync/fault_injection.h"

namespace hetsched {

Result<ComputePipeline> ComputePipeline::create(SharedGpuContext& context, const ComputePipelineDesc& desc) {
  const std::string prefix = "failed to create compute pipeline '" + desc.name + "': ";
  if (desc.spirv.empty()) return invalid_argument(prefix + "no SPIR-V given");
  if (desc.push_constant_size % 4 != 0) {
    return invalid_argument(prefix + "push constant size " + std::to_string(desc.push_constant_size) +
                            " is not a multiple of 4");
  }
  if (desc.push_constant_size > context.limits().maxPushConstantsSize) {
    return invalid_argument(prefix + "push constant size " + std::to_string(desc.push_constant_size) +
                            " exceeds the device limit " + std::to_string(context.limits().maxPushConstantsSize));
  }
  const VkDevice device = context.device();
  ComputePipeline out;
  out.context_ = context.shared_from_this();
  out.storage_buffer_count_ = desc.storage_buffer_count;
  out.push_constant_size_ = desc.push_constant_size;

  std::vector<VkDescriptorSetLayoutBinding> bindings(desc.storage_buffer_count);
  for (uint32_t i = 0; i < desc.storage_buffer_count; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_info{};
  set_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  set_info.bindingCount = desc.storage_buffer_count;
  set_info.pBindings = bindings.data();
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  HS_RETURN_IF_ERROR(vk_status(vkCreateDescriptorSetLayout(device, &set_info, nullptr, &set_layout),
                               "vkCreateDescriptorSetLayout")
                         .with_context(prefix));
  out.set_layout_ = VkHandle<VkDescriptorSetLayout>(device, set_layout);

  const VkPushConstantRange push_range{VK_SHADER_STAGE_COMPUTE_BIT, 0, desc.push_constant_size};
  VkPipelineLayoutCreateInfo layout_info{};
  layout_info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout;
  layout_info.pushConstantRangeCount = desc.push_constant_size > 0 ? 1 : 0;
  layout_info.pPushConstantRanges = &push_range;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  HS_RETURN_IF_ERROR(
      vk_status(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout), "vkCreatePipelineLayout")
          .with_context(prefix));
  out.layout_ = VkHandle<VkPipelineLayout>(device, layout);

  VkShaderModuleCreateInfo module_info{};
  module_info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  module_info.codeSize = desc.spirv.size_bytes();
  module_info.pCode = desc.spirv.data();
  VkShaderModule module_handle = VK_NULL_HANDLE;
  HS_RETURN_IF_ERROR(
      vk_status(vkCreateShaderModule(device, &module_info, nullptr, &module_handle), "vkCreateShaderModule")
          .with_context(prefix));
  // Only needed while the pipeline is created.
  const VkHandle<VkShaderModule> shader(device, module_handle);

  std::vector<uint32_t> constants(desc.specialization_constants.begin(), desc.specialization_constants.end());
  std::vector<VkSpecializationMapEntry> entries(constants.size());
  for (uint32_t i = 0; i < entries.size(); ++i) entries[i] = {i, i * 4u, 4};
  if (desc.half_bindings != 0) {
    entries.push_back({kHalfBindingsConstantId, static_cast<uint32_t>(constants.size()) * 4u, 4});
    constants.push_back(desc.half_bindings);
  }
  const VkSpecializationInfo specialization{static_cast<uint32_t>(entries.size()), entries.data(),
                                            constants.size() * sizeof(uint32_t), constants.data()};
  VkComputePipelineCreateInfo pipeline_info{};
  pipeline_info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipeline_info.stage.module = shader.get();
  pipeline_info.stage.pName = desc.entry_point.c_str();
  pipeline_info.stage.pSpecializationInfo = entries.empty() ? nullptr : &specialization;
  pipeline_info.layout = layout;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkResult created = injected_fault(FaultPoint::kPipeline);
  if (created == VK_SUCCESS)
    created = vkCreateComputePipelines(device, context.pipeline_cache(), 1, &pipeline_info, nullptr, &pipeline);
  if (created != VK_SUCCESS) {
    Status status = vk_status(created, "vkCreateComputePipelines").with_context(prefix);
    context.mark_lost_on(created, status);
    return status;
  }
  out.pipeline_ = VkHandle<VkPipeline>(device, pipeline);
  return out;
}

Result<DescriptorPool> DescriptorPool::create(SharedGpuContext& context, uint32_t max_sets,
                                              uint32_t storage_buffers_per_set) {
  if (max_sets == 0) return invalid_argument("failed to create descriptor pool: max_sets is 0");
  DescriptorPool out;
  out.context_ = context.shared_from_this();
  // Vulkan rejects a pool size of 0 descriptors; sets without buffers need none.
  const VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                  std::max<uint32_t>(1, max_sets * storage_buffers_per_set)};
  VkDescriptorPoolCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  info.maxSets = max_sets;
  info.poolSizeCount = 1;
  info.pPoolSizes = &size;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  HS_VK_RETURN_IF_ERROR(vkCreateDescriptorPool(context.device(), &info, nullptr, &pool));
  out.pool_ = VkHandle<VkDescriptorPool>(context.device(), pool);
  return out;
}

Result<VkDescriptorSet> DescriptorPool::allocate(const ComputePipeline& pipeline,
                                                 std::span<const VkDescriptorBufferInfo> buffers) {
  if (buffers.size() != pipeline.storage_buffer_count()) {
    return invalid_argument("failed to allocate descriptor set: " + std::to_string(buffers.size()) +
                            " buffers given, the pipeline has " + std::to_string(pipeline.storage_buffer_count()) +
                            " bindings");
  }
  const VkDevice device = context_->device();
  const VkDescriptorSetLayout layout = pipeline.set_layout();
  VkDescriptorSetAllocateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  info.descriptorPool = pool_.get();
  info.descriptorSetCount = 1;
  info.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  HS_VK_RETURN_IF_ERROR(vkAllocateDescriptorSets(device, &info, &set));
  std::vector<VkWriteDescriptorSet> writes(buffers.size());
  for (uint32_t i = 0; i < writes.size(); ++i) {
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &buffers[i];
  }
  vkUpdateDescriptorSets(device, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return set;
}

Status DescriptorPool::reset() {
  HS_VK_RETURN_IF_ERROR(vkResetDescriptorPool(context_->device(), pool_.get(), 0));
  return Status::ok();
}

void record_dispatch(VkCommandBuffer cmd, const ComputePipeline& pipeline, VkDescriptorSet set,
                     std::span<const std::byte> push_constants, uint32_t groups_x, uint32_t groups_y,
                     uint32_t groups_z) {
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline());
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout(), 0, 1, &set, 0, nullptr);
  if (!push_constants.empty()) {
    vkCmdPushConstants(cmd, pipeline.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       static_cast<uint32_t>(push_constants.size()), push_constants.data());
  }
  vkCmdDispatch(cmd, groups_x, groups_y, groups_z);
}

}  // namespace hetsched
