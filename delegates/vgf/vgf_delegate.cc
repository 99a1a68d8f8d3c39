#include "delegates/vgf/vgf_delegate.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <mutex>
#include <optional>

#include "delegates/vgf/dispatch_barriers.h"
#include "delegates/vgf/half_storage.h"
#include "delegates/vgf/lowering.h"
#include "delegates/vgf/vgf_format.h"
#include "delegates/vgf/transient_planner.h"
#include "delegates/vgf/vgf_runtime.h"
#include "graph/passes/fuse_gelu.h"
#include "graph/subgraph.h"
#include "shared_gpu/barrier_plan.h"
#include "shared_gpu/device_info.h"
#include "shared_gpu/precision.h"
#include "shared_gpu/shared_gpu_registry.h"

namespace hetsched::vgf {

namespace {

class VgfIslandHandle final : public IslandHandle {
 public:
  VgfIslandHandle(std::unique_ptr<VgfSession> session, std::string context_key, int island_id)
      : session_(std::move(session)), context_key_(std::move(context_key)), island_id_(island_id) {}

  MemoryDomain input_domain(size_t) const override { return {MemoryDomain::Kind::kDevice, context_key_}; }
  MemoryDomain output_domain(size_t) const override { return {MemoryDomain::Kind::kDevice, context_key_}; }
  const DeviceTensor* device_input(size_t i) const override {
    return i < session_->num_inputs() ? &session_->input(i) : nullptr;
  }
  const DeviceTensor* device_output(size_t i) const override {
    return i < session_->num_outputs() ? &session_->output(i) : nullptr;
  }
  std::shared_ptr<SharedGpuContext> gpu_context() const override { return session_->shared_context(); }
  Result<std::vector<OpTiming>> op_timings() const override { return session_->op_timings(); }
  std::optional<CommandStreamCounts> command_stream() const override {
    return CommandStreamCounts{session_->dispatch_count(), 0, session_->barrier_count()};
  }

  Status execute(ExecContext& ctx, std::span<const TensorRef>, std::span<const TensorRef>) override {
    Result<uint64_t> signalled = session_->submit(ctx.gpu, ctx.gpu_before, ctx.gpu_after, ctx.gpu_then);
    if (!signalled.is_ok())
      return signalled.status().with_context("failed to execute VGF island " + std::to_string(island_id_) + ": ");
    ctx.signalled_value = *signalled;
    spdlog::debug("[VGF] execute: island {}, wait t={}, signal t={}", island_id_, ctx.gpu.wait_value, *signalled);
    return Status::ok();
  }

 private:
  std::unique_ptr<VgfSession> session_;
  std::string context_key_;
  int island_id_;
};

struct GpuSettings {
  ContextSpec spec;
  GpuContextOptions options;
  // fp32 | fp16 | auto: what convs and linear layers multiply in; resolved
  // against the context's device at init (shared_gpu/precision.h).
  std::string precision = "fp32";
  // auto | fp32 | fp16: the type of the tensors between kernels
  // (half_storage.h); resolved at init (resolve_storage).
  std::string storage = "auto";
};

Result<GpuSettings> parse_settings(const CompileSpecs& options) {
  GpuSettings s;
  s.spec.token = compile_spec_value(options, "gpu_shared_context_token", "default");
  const std::string group = compile_spec_value(options, "gpu_shared_group_id", "0");
  try {
    size_t used = 0;
    s.spec.group = std::stoll(group, &used);
    if (used != group.size()) throw std::invalid_argument(group);
  } catch (...) {
    return invalid_argument("failed to make vgf delegate: gpu_shared_group_id '" + group + "' is not an integer");
  }
  const std::string mode = compile_spec_value(options, "gpu_shared_context_mode", "lookup_or_create");
  Result<ContextMode> parsed = parse_context_mode(mode);
  if (!parsed.is_ok()) return parsed.status().with_context("failed to make vgf delegate: ");
  s.spec.mode = *parsed;
  s.options.device = compile_spec_value(options, "device", "auto");
  s.options.app_name = "hetsched-vgf";
  s.precision = compile_spec_value(options, "precision", "fp32");
  HS_RETURN_IF_ERROR(check_precision(s.precision));
  s.storage = compile_spec_value(options, "storage", "auto");
  HS_RETURN_IF_ERROR(check_storage(s.storage));
  const std::string validation = compile_spec_value(options, "validation", "0");
  s.options.enable_validation = validation == "1" || validation == "true";
  return s;
}

class VgfDelegate final : public Delegate {
 public:
  explicit VgfDelegate(GpuSettings settings) : settings_(std::move(settings)) {}

  std::string_view name() const override { return "vgf"; }
  // A private context (mode disabled) is a device of its own, whatever its
  // keys say: nothing on it may alias another delegate's memory.
  std::string resource() const override {
    return "gpu:" + settings_.spec.key() + (settings_.spec.mode == ContextMode::kDisabled ? ":private-vgf" : "");
  }
  MemoryDomain::Kind memory_kind() const override { return MemoryDomain::Kind::kDevice; }

  Capability supports(const Graph& graph, NodeId node) const override {
    Capability c = check_lowerable(graph, node);
    if (c.supported && (touches(graph, node, DType::kFloat16) || touches(graph, node, DType::kBFloat16)) &&
        !device_features().storage_buffer_16bit_access)
      return Capability::no("f16 or bf16 Cast needs storageBuffer16BitAccess, which this device lacks");
    if (c.supported && touches(graph, node, DType::kBool) && node_is_cast(graph, node) &&
        !device_features().storage_buffer_8bit_access)
      return Capability::no("bool Cast needs storageBuffer8BitAccess, which this device lacks");
    return c;
  }

  std::string device_class() const override {
    std::call_once(device_class_once_, [this] { device_class_ = probe_cost_device_class(settings_.options.device); });
    return device_class_;
  }

  Result<Blob> compile(const Island& island, const CompileSpecs& specs) const override {
    (void)specs;
    // Erf-form GELU as one Gelu node: its compute segment then folds into
    // the linear layer before it (epilogue_fusion.h) instead of five dispatches.
    Graph sub = extract_subgraph(*island.graph, island.nodes, island.inputs, island.outputs);
    Result<int> gelus = fuse_gelu(sub);
    if (!gelus.is_ok()) return gelus.status().with_context("failed to compile VGF island " + std::to_string(island.id) + ": ");
    Island whole = island;
    whole.graph = &sub;
    whole.nodes.resize(sub.num_nodes());
    std::iota(whole.nodes.begin(), whole.nodes.end(), 0);
    whole.inputs = sub.inputs();
    whole.outputs = sub.outputs();
    HS_ASSIGN_OR_RETURN(VgfFile file, lower_island(whole));
    HS_ASSIGN_OR_RETURN(Blob blob, encode_vgf(file));
    spdlog::debug("[VGF] compile: island {}, {} ops in {} segments, {} bytes", island.id, file.op_count(),
                  file.segments.size(), blob.size());
    return blob;
  }

  // Init stores the intermediates as f16 exactly when the profile says
  // storage fp16 (resolve_storage; a device without the feature refuses
  // it), so the scratch is planned for that file. (The tensor cores change
  // no intermediate: their split-K sums are the runtime's own buffer.)
  Result<DeviceMemoryNeeds> device_memory(const Blob& blob, const CompileSpecs& specs) const override {
    const std::string what = "failed to plan the VGF island's memory: ";
    Result<VgfFile> file = decode_vgf(blob);
    if (!file.is_ok()) return file.status().with_context(what);
    if (Status s = check_vgf(*file); !s.is_ok()) return s.with_context(what);
    Result<GpuSettings> settings = settings_for(specs);
    if (!settings.is_ok()) return settings.status().with_context(what);
    const VgfFile planned = settings->storage == "fp16" ? with_half_storage(*file) : *file;
    Result<TransientLayout> transients = plan_transients(planned);
    if (!transients.is_ok()) return transients.status().with_context(what);
    return vgf_memory_needs(planned, *transients);
  }

  // What VgfSession records: its dispatch plan and barriers, without a
  // device. 16-bit storage keeps the dispatches; its transients' places,
  // and so the barriers, follow it where storage is fp16.
  Result<CommandStreamCounts> command_stream(const Blob& blob, const CompileSpecs& specs) const override {
    const std::string what = "failed to plan the VGF island's dispatches: ";
    Result<VgfFile> decoded = decode_vgf(blob);
    if (!decoded.is_ok()) return decoded.status().with_context(what);
    if (Status s = check_vgf(*decoded); !s.is_ok()) return s.with_context(what);
    Result<GpuSettings> settings = settings_for(specs);
    if (!settings.is_ok()) return settings.status().with_context(what);
    const VgfFile file = settings->storage == "fp16" ? with_half_storage(*decoded) : *decoded;
    const DispatchPlan plan = plan_dispatches(file);
    Result<TransientLayout> transients = plan_transients(file, plan);
    if (!transients.is_ok()) return transients.status().with_context(what);
    return CommandStreamCounts{plan.dispatch_count(), 0,
                               gpu::count_barriers(plan_dispatch_barriers(file, plan, *transients))};
  }

  Result<std::shared_ptr<SharedGpuContext>> gpu_context() override {
    HS_ASSIGN_OR_RETURN(Gpu gpu, resolve(settings_));
    return gpu.context;
  }

  Result<std::unique_ptr<IslandHandle>> init(const Blob& blob, const InitContext& ctx) override {
    const std::string what = "failed to init VGF island " + std::to_string(ctx.island_id) + ": ";
    Result<VgfFile> file = decode_vgf(blob);
    if (!file.is_ok()) return file.status().with_context(what);
    Result<GpuSettings> loaded = settings_for(ctx.options);
    if (!loaded.is_ok()) return loaded.status().with_context(what);
    const GpuSettings& settings = *loaded;
    Result<Gpu> gpu = resolve(settings);
    if (!gpu.is_ok()) return gpu.status().with_context(what);
    const size_t ops = file->op_count();
    Result<std::optional<gpu::CoopMatConv>> coopmat = resolve_precision(settings.precision, *gpu->context);
    if (!coopmat.is_ok()) return coopmat.status().with_context(what);
    Result<bool> half = resolve_storage(settings.storage, *gpu->context);
    if (!half.is_ok()) return half.status().with_context(what);
    Result<std::unique_ptr<VgfSession>> session = VgfSession::create(
        gpu->context, gpu->pool, std::move(*file), ctx.island_id, ctx.placement, ctx.profile_ops, *coopmat, *half);
    if (!session.is_ok()) return session.status().with_context(what);
    spdlog::debug("[VGF] init: island {}, {} ops, context {} ({}), {} storage", ctx.island_id, ops,
                  settings.spec.key(), gpu->created ? "created" : "reused", *half ? "f16" : "f32");
    return std::unique_ptr<IslandHandle>(new VgfIslandHandle(std::move(*session), settings.spec.key(), ctx.island_id));
  }

 private:
  static bool touches(const Graph& graph, NodeId node, DType dtype) {
    const Node& n = graph.node(node);
    for (const auto* ids : {&n.inputs, &n.outputs})
      for (ValueId v : *ids)
        if (v != kNoValue && graph.value(v).type.dtype == dtype) return true;
    return false;
  }

  // The settings of an island loaded with `specs` (the profile's, at load
  // time): its context keys win over the ones the delegate was made with;
  // a precision or storage given alone applies too. One function for init
  // and the device-free plans, so both resolve the same storage.
  Result<GpuSettings> settings_for(const CompileSpecs& specs) const {
    if (!compile_spec_value(specs, "gpu_shared_context_token").empty()) return parse_settings(specs);
    GpuSettings settings = settings_;
    if (const std::string precision = compile_spec_value(specs, "precision"); !precision.empty()) {
      HS_RETURN_IF_ERROR(check_precision(precision));
      settings.precision = precision;
    }
    if (const std::string storage = compile_spec_value(specs, "storage"); !storage.empty()) {
      HS_RETURN_IF_ERROR(check_storage(storage));
      settings.storage = storage;
    }
    return settings;
  }

  // Where's bool condition is a constant folded into select's table; only
  // a Cast binds a bool resource.
  static bool node_is_cast(const Graph& graph, NodeId node) { return graph.node(node).op == "Cast"; }

  // The features of the context islands will run on (storageBuffer16BitAccess
  // for f16 casts, storageBuffer8BitAccess for bool ones): one this delegate
  // or another (a borrowed host context: what its host enabled) already
  // uses, else the device the options select, probed once (a context made
  // for it enables every feature it has; none when there is no device).
  GpuFeatures device_features() const {
    std::lock_guard lock(probe_mutex_);
    const std::string key = settings_.spec.key();
    if (auto context = SharedGpuContextRegistry::get().lookup(key)) return context->features();
    if (!probed_features_) {
      Result<std::vector<DeviceInfo>> devices = enumerate_devices();
      Result<uint32_t> chosen = devices.is_ok() ? select_device(*devices, settings_.options.device)
                                                : Result<uint32_t>(devices.status());
      probed_features_ = chosen.is_ok() ? (*devices)[*chosen].features : GpuFeatures{};
    }
    return *probed_features_;
  }

  struct Gpu {
    std::shared_ptr<SharedGpuContext> context;
    std::shared_ptr<DelegatePool> pool;
    bool created = false;
  };

  // The context for `settings`, resolved once per key and kept, so every
  // island of this delegate runs on one device (even with mode disabled),
  // with the delegate's one command pool.
  Result<Gpu> resolve(const GpuSettings& settings) {
    std::lock_guard lock(mutex_);
    const std::string key = settings.spec.key();
    if (auto it = gpus_.find(key); it != gpus_.end()) return Gpu{it->second.context, it->second.pool, false};
    const GpuContextOptions options = settings.options;
    HS_ASSIGN_OR_RETURN(ResolvedContext resolved,
                        SharedGpuContextRegistry::get().resolve(settings.spec, [&options] {
                          return SharedGpuContext::create(options);
                        }));
    auto pool = std::make_shared<DelegatePool>();
    HS_ASSIGN_OR_RETURN(pool->pool, CommandPool::create(*resolved.context));
    Gpu gpu{resolved.context, std::move(pool), resolved.created};
    gpus_[key] = gpu;
    return gpu;
  }

  GpuSettings settings_;
  mutable std::mutex probe_mutex_;
  mutable std::optional<GpuFeatures> probed_features_;  // guarded by probe_mutex_
  mutable std::once_flag device_class_once_;
  mutable std::string device_class_;
  std::mutex mutex_;
  std::map<std::string, Gpu> gpus_;
};

}  // namespace

Result<std::unique_ptr<Delegate>> make_vgf_delegate(const DelegateOptions& options) {
  HS_ASSIGN_OR_RETURN(GpuSettings settings, parse_settings(options));
  return std::unique_ptr<Delegate>(new VgfDelegate(std::move(settings)));
}

}  // namespace hetsched::vgf
