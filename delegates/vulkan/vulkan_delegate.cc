#include "delegates/vulkan/vulkan_delegate.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "delegates/vulkan/island_blob.h"
#include "delegates/vulkan/kernel_library.h"
#include "delegates/vulkan/lowering.h"
#include "delegates/vulkan/op_support.h"
#include "delegates/vulkan/vulkan_island.h"
#include "graph/op_schema.h"
#include "graph/passes/fuse_gelu.h"
#include "graph/subgraph.h"
#include "shared_gpu/device_info.h"
#include "shared_gpu/instance.h"
#include "shared_gpu/precision.h"
#include "shared_gpu/shared_gpu_registry.h"
#include "shared_gpu/vk_loader.h"
#include "sync/sync_mode.h"

namespace hetsched::vulkan {

namespace {

struct Settings {
  std::string device = "auto";
  ContextSpec spec;
  SyncMode sync = SyncMode::kTimeline;
  bool validation = false;
  bool timestamps = false;
  // fp32 | fp16 | auto: what non-depthwise convs multiply in; resolved
  // against the context's device at init (resolve_precision).
  std::string precision = "fp32";
  // auto | fp32 | fp16: the type of the tensors between kernels; resolved
  // at init (resolve_storage).
  std::string storage = "auto";
  LoweringOptions lowering;
};

Result<bool> parse_flag(const std::string& key, const std::string& value) {
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false" || value.empty()) return false;
  return invalid_argument("option " + key + " is '" + value + "', expected 0 or 1");
}

// `base` with the options present in `options` applied.
Result<Settings> parse_settings(const CompileSpecs& options, Settings base) {
  for (const auto& [key, value] : options) {
    if (key == "device") {
      base.device = value.empty() ? "auto" : value;
    } else if (key == "gpu_shared_context_token") {
      if (!value.empty()) base.spec.token = value;
    } else if (key == "gpu_shared_group_id") {
      try {
        size_t used = 0;
        base.spec.group = std::stoll(value, &used);
        if (used != value.size()) throw std::invalid_argument(value);
      } catch (...) {
        return invalid_argument("option gpu_shared_group_id '" + value + "' is not an integer");
      }
    } else if (key == "gpu_shared_context_mode") {
      HS_ASSIGN_OR_RETURN(base.spec.mode, parse_context_mode(value));
    } else if (key == "gpu_shared_sync_mode") {
      HS_ASSIGN_OR_RETURN(base.sync, parse_sync_mode(value));
    } else if (key == "gpu_validation") {
      HS_ASSIGN_OR_RETURN(base.validation, parse_flag(key, value));
    } else if (key == "gpu_timestamps") {
      HS_ASSIGN_OR_RETURN(base.timestamps, parse_flag(key, value));
    } else if (key == "precision") {
      HS_RETURN_IF_ERROR(check_precision(value));
      base.precision = value;
    } else if (key == "storage") {
      HS_RETURN_IF_ERROR(check_storage(value));
      base.storage = value;
    } else if (key == "conv_tiling") {
      if (value.empty() || value == "auto") {
        base.lowering.conv_tiling.reset();
      } else {
        HS_ASSIGN_OR_RETURN(base.lowering.conv_tiling, parse_conv_tiling(value));
      }
    } else if (key == "gemm_kernel") {
      if (value.empty() || value == "auto") {
        base.lowering.gemm_kernel.reset();
      } else {
        base.lowering.gemm_kernel = gemm_coopmat_kernel(value);
        if (!base.lowering.gemm_kernel)
          return invalid_argument("option gemm_kernel '" + value + "' is not auto or a gemm_coopmat kernel");
      }
    }
  }
  return base;
}

DeviceLimits limits_of(const VkPhysicalDeviceLimits& vk, const GpuFeatures& features) {
  DeviceLimits limits;
  limits.storage_buffer_16bit_access = features.storage_buffer_16bit_access;
  limits.storage_buffer_8bit_access = features.storage_buffer_8bit_access;
  limits.max_storage_buffer_range = vk.maxStorageBufferRange;
  limits.max_workgroups_per_dim =
      std::min({vk.maxComputeWorkGroupCount[0], vk.maxComputeWorkGroupCount[1], vk.maxComputeWorkGroupCount[2]});
  return limits;
}

// The limits of the device `selector` picks, through a short-lived instance
// (no device is created), for supports() before any island was initialised.
Result<DeviceLimits> probe_device_limits(const std::string& selector) {
  HS_RETURN_IF_ERROR(load_vulkan_loader());
  InstanceOptions options;
  options.app_name = "hetsched-probe";
  HS_ASSIGN_OR_RETURN(VkInstance instance, create_vulkan_instance(options));
  Result<DeviceLimits> out = [&]() -> Result<DeviceLimits> {
    HS_ASSIGN_OR_RETURN(std::vector<VkPhysicalDevice> physical, list_physical_devices(instance));
    std::vector<DeviceInfo> devices;
    for (size_t i = 0; i < physical.size(); ++i)
      devices.push_back(inspect_device(instance, physical[i], static_cast<uint32_t>(i)));
    HS_ASSIGN_OR_RETURN(const uint32_t chosen, select_device(devices, selector));
    VkPhysicalDeviceProperties properties{};
    vkGetPhysicalDeviceProperties(physical[chosen], &properties);
    // A context made for this device enables every feature it has
    // (SharedGpuContext::create), so what it supports is what islands get.
    return limits_of(properties.limits, devices[chosen].features);
  }();
  vkDestroyInstance(instance, nullptr);
  return out;
}

// What the delegate keeps per context: its own command pool and the
// pipelines, shared with the islands it makes there.
struct ContextState {
  std::shared_ptr<SharedGpuContext> context;
  std::shared_ptr<DelegatePool> pool;
  std::shared_ptr<KernelLibrary> library;
};

class VulkanDelegate final : public Delegate {
 public:
  explicit VulkanDelegate(Settings settings) : settings_(std::move(settings)) {}

  std::string_view name() const override { return "vulkan"; }
  // A private context (mode disabled) is a device of its own, whatever its
  // keys say: nothing on it may alias another delegate's memory.
  std::string resource() const override {
    return "gpu:" + settings_.spec.key() + (settings_.spec.mode == ContextMode::kDisabled ? ":private-vulkan" : "");
  }
  MemoryDomain::Kind memory_kind() const override { return MemoryDomain::Kind::kDevice; }

  Capability supports(const Graph& graph, NodeId node) const override {
    Result<DeviceLimits> limits = device_limits();
    if (!limits.is_ok()) return Capability::no("no usable Vulkan device: " + limits.status().message());
    return vulkan_supports(graph, node, *limits);
  }

  std::string device_class() const override {
    std::lock_guard lock(mutex_);
    if (!device_class_) device_class_ = probe_cost_device_class(settings_.device);
    return *device_class_;
  }

  // Checks what does not depend on the device (limits are checked again at
  // init, on the device that runs the island) and writes the sub-graph.
  Result<Blob> compile(const Island& island, const CompileSpecs& specs) const override {
    (void)specs;
    DeviceLimits unbounded;
    unbounded.max_storage_buffer_range = std::numeric_limits<uint64_t>::max();
    unbounded.max_workgroups_per_dim = std::numeric_limits<uint32_t>::max();
    unbounded.storage_buffer_16bit_access = true;
    unbounded.storage_buffer_8bit_access = true;
    for (NodeId id : island.nodes) {
      const Capability c = vulkan_supports(*island.graph, id, unbounded);
      if (!c.supported)
        return unsupported("failed to compile Vulkan island " + std::to_string(island.id) + ": " +
                           island.graph->describe_node(id) + ": " + c.reason);
    }
    Graph sub = extract_subgraph(*island.graph, island.nodes, island.inputs, island.outputs);
    sub.set_name(island.graph->name() + "/vulkan" + std::to_string(island.id));
    // Erf-form GELU as one Gelu node: an epilogue op of the linear layer
    // before it (or one chain op) instead of a chain dispatch of its own.
    Result<int> gelus = fuse_gelu(sub);
    if (!gelus.is_ok()) return gelus.status().with_context("failed to compile Vulkan island " + std::to_string(island.id) + ": ");
    return encode_island_blob(sub);
  }

  // Lowering is host-only: the scratch block is known without a device.
  // What init lowers depends on the device (lowering_for): where the
  // precision may put convs on the tensor cores their tiles are smaller and
  // split-K's partial sums may take more scratch. The largest scratch of the
  // lowerings init may pick is reserved, so init's always fits the block the
  // session planned. Storage does not depend on the device: f16 (halved
  // intermediates) exactly when the profile says fp16 (resolve_storage).
  Result<DeviceMemoryNeeds> device_memory(const Blob& blob, const CompileSpecs& specs) const override {
    const std::string prefix = "failed to plan the Vulkan island's memory: ";
    Result<Graph> graph = decode_island_blob(blob);
    if (!graph.is_ok()) return graph.status().with_context(prefix);
    Result<Settings> settings = parse_settings(specs, settings_);
    if (!settings.is_ok()) return settings.status().with_context(prefix);
    std::vector<LoweringOptions> candidates;
    for (const bool tensor_cores : {false, true}) {
      if ((settings->precision == "fp32" && tensor_cores) || (settings->precision == "fp16" && !tensor_cores)) continue;
      LoweringOptions options = settings->lowering;
      if (tensor_cores) options.coopmat = CoopMatConv{};  // the tiling does not depend on the fragment shape
      options.half_storage = settings->storage == "fp16";
      candidates.push_back(options);
    }
    std::optional<DeviceMemoryNeeds> needs;
    for (const LoweringOptions& options : candidates) {
      Result<LoweredIsland> lowered = lower_island(*graph, options);
      if (!lowered.is_ok()) return lowered.status().with_context(prefix);
      if (!needs) {
        needs = device_memory_needs(*lowered);
        continue;
      }
      needs->scratch_bytes = std::max(needs->scratch_bytes, lowered->scratch_bytes);
      needs->scratch_lower_bound = std::max(needs->scratch_lower_bound, lowered->scratch_lower_bound);
    }
    return *needs;
  }

  // The lowering init records, without a device: precision fp16 swaps the
  // conv shader but keeps the tiling, buffers and split-K, so the counts
  // are the same on every device.
  Result<CommandStreamCounts> command_stream(const Blob& blob, const CompileSpecs& specs) const override {
    Result<LoweredIsland> lowered = lower_without_device(blob, specs);
    if (!lowered.is_ok()) return lowered.status().with_context("failed to lower the Vulkan island: ");
    return CommandStreamCounts{lowered->dispatch_count(), lowered->copy_count(), lowered->barrier_count()};
  }

  // The island lowered as the options say, without a device (f32 kernels).
  Result<LoweredIsland> lower_without_device(const Blob& blob, const CompileSpecs& specs) const {
    HS_ASSIGN_OR_RETURN(const Graph graph, decode_island_blob(blob));
    HS_ASSIGN_OR_RETURN(const Settings settings, parse_settings(specs, settings_));
    return lower_island(graph, settings.lowering);
  }

  Result<std::shared_ptr<SharedGpuContext>> gpu_context() override {
    bool created = false;
    HS_ASSIGN_OR_RETURN(ContextState state, context_for(settings_, created));
    return state.context;
  }

  Result<std::unique_ptr<IslandHandle>> init(const Blob& blob, const InitContext& ctx) override {
    const std::string prefix = "failed to init Vulkan island " + std::to_string(ctx.island_id) + ": ";
    Result<Graph> graph = decode_island_blob(blob);
    if (!graph.is_ok()) return graph.status().with_context(prefix);
    Result<Settings> settings = parse_settings(ctx.options, settings_);
    if (!settings.is_ok()) return settings.status().with_context(prefix);
    bool created = false;
    Result<ContextState> state = context_for(*settings, created);
    if (!state.is_ok()) return state.status().with_context(prefix);
    const DeviceLimits limits = limits_of(state->context->limits(), state->context->features());
    for (NodeId id = 0; id < static_cast<NodeId>(graph->num_nodes()); ++id) {
      const Capability c = vulkan_supports(*graph, id, limits);
      if (!c.supported)
        return unsupported(prefix + graph->describe_node(id) + ": " + c.reason + " on '" +
                           std::string(state->context->device_name()) + "'");
    }
    Result<std::optional<CoopMatConv>> coopmat = resolve_precision(settings->precision, *state->context);
    if (!coopmat.is_ok()) return coopmat.status().with_context(prefix);
    settings->lowering.coopmat = *coopmat;
    Result<bool> half = resolve_storage(settings->storage, *state->context);
    if (!half.is_ok()) return half.status().with_context(prefix);
    settings->lowering.half_storage = *half;
    Result<LoweredIsland> lowered = lower_island(*graph, settings->lowering);
    if (!lowered.is_ok()) return lowered.status().with_context(prefix);
    VulkanIslandOptions options;
    options.island_id = ctx.island_id;
    options.context_key = settings->spec.key();
    options.gpu_timestamps = settings->timestamps;
    options.profile_ops = ctx.profile_ops;
    const size_t dispatches = lowered->dispatch_count();
    Result<std::unique_ptr<VulkanIsland>> island =
        VulkanIsland::create(state->context, state->pool, state->library, std::move(lowered).value(), options,
                             ctx.placement);
    if (!island.is_ok()) return island.status().with_context(prefix);
    spdlog::debug("[Vulkan] init: island {}, {} ops ({} dispatches), context {} ({}) on {}, convs in {}",
                  ctx.island_id, graph->num_nodes(), dispatches, settings->spec.key(), created ? "created" : "reused",
                  state->context->device_name(),
                  (*coopmat ? "f16 on the tensor cores (" + std::to_string((*coopmat)->frag_m) + "x" +
                                  std::to_string((*coopmat)->frag_n) + "x" + std::to_string((*coopmat)->frag_k) + ")"
                            : std::string("f32")) +
                      (settings->lowering.half_storage ? ", f16 between kernels" : ""));
    return std::unique_ptr<IslandHandle>(std::move(island).value());
  }

 private:
  // The context for `settings` with this delegate's pool and pipelines on
  // it, resolved through the registry on first use and kept afterwards.
  // `created` tells whether this call made the context.
  Result<ContextState> context_for(const Settings& settings, bool& created) {
    std::lock_guard lock(mutex_);
    const std::string key = settings.spec.key();
    auto it = contexts_.find(key);
    if (it != contexts_.end()) return it->second;
    GpuContextOptions options;
    options.device = settings.device;
    options.enable_validation = settings.validation;
    HS_ASSIGN_OR_RETURN(ResolvedContext resolved, SharedGpuContextRegistry::get().resolve(settings.spec, [&] {
      return SharedGpuContext::create(options);
    }));
    ContextState state;
    state.context = resolved.context;
    state.pool = std::make_shared<DelegatePool>();
    HS_ASSIGN_OR_RETURN(state.pool->pool, CommandPool::create(*state.context));
    state.library = std::make_shared<KernelLibrary>(state.context);
    created = resolved.created;
    contexts_.emplace(key, state);
    return state;
  }

  // The limits supports() checks against: those of a context this delegate
  // (or another, through the registry) already uses, else the device the
  // options select, probed once.
  Result<DeviceLimits> device_limits() const {
    std::lock_guard lock(mutex_);
    auto it = contexts_.find(settings_.spec.key());
    if (it != contexts_.end()) return limits_of(it->second.context->limits(), it->second.context->features());
    if (auto context = SharedGpuContextRegistry::get().lookup(settings_.spec.key()))
      return limits_of(context->limits(), context->features());
    if (!probed_) probed_ = probe_device_limits(settings_.device);
    return *probed_;
  }

  Settings settings_;
  mutable std::mutex mutex_;
  std::map<std::string, ContextState> contexts_;        // guarded by mutex_
  mutable std::optional<Result<DeviceLimits>> probed_;  // guarded by mutex_
  mutable std::optional<std::string> device_class_;     // guarded by mutex_
};

}  // namespace

Result<std::unique_ptr<Delegate>> make_vulkan_delegate(const DelegateOptions& options) {
  Result<Settings> settings = parse_settings(options, Settings{});
  if (!settings.is_ok()) return settings.status().with_context("failed to make vulkan delegate: ");
  return std::unique_ptr<Delegate>(new VulkanDelegate(std::move(settings).value()));
}

}  // namespace hetsched::vulkan
