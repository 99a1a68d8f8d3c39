// The delegate contract: what every execution engine (cpu, vulkan, vgf)
// implements, and the only way the partitioner and scheduler talk to one.
//
// Lifecycle, in call order:
//   supports / estimate   (partitioning, per node, no state)
//   compile               (ahead of time: an Island → an opaque Blob)
//   init                  (at load: a Blob → an IslandHandle, resources made)
//   IslandHandle::execute (per run)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "delegates/cost_model.h"
#include "graph/graph.h"
#include "hetsched/status.h"
#include "sync/step_sync.h"

namespace hetsched {

// Why a delegate will or will not take a node.
struct Capability {
  bool supported = false;
  std::string reason;  // set when !supported: "op not implemented", "groups > 1 not supported", ...
  static Capability yes() { return {true, {}}; }
  static Capability no(std::string why) { return {false, std::move(why)}; }
};

// Cost of a node on a delegate, for the auto policy (delegates/cost_model.h).
struct CostEstimate {
  double flops = 0;
  double bytes = 0;    // bytes read + written
  double seconds = 0;  // the delegate's own estimate of run time
};

// Where a tensor lives. Host memory, or the memory of one shared GPU context
// (identified by its registry key "token:group").
struct MemoryDomain {
  enum class Kind : uint8_t { kHost, kDevice };
  Kind kind = Kind::kHost;
  std::string context_key;  // for kDevice
  static MemoryDomain host() { return {}; }
  bool operator==(const MemoryDomain&) const = default;
};

// Ordered key/value options handed to a delegate at compile time and stored
// in the program beside its blob (the RFC's compile specs).
using CompileSpecs = std::vector<std::pair<std::string, std::string>>;
// Options for making a delegate: the profile's settings for it as key/value
// pairs (e.g. {"engine","xnnpack"}, {"threads","2"}, {"device","auto"},
// {"gpu_shared_context_token","hetsched"}, ...).
using DelegateOptions = CompileSpecs;
// Returns the value for `key`, or `fallback`.
std::string compile_spec_value(const CompileSpecs& specs, std::string_view key, std::string fallback = "");

using Blob = std::vector<uint8_t>;

// A set of nodes of one graph assigned to one delegate. Does not own the graph.
struct Island {
  int id = 0;
  std::string delegate;
  const Graph* graph = nullptr;
  std::vector<NodeId> nodes;    // in graph (topological) order
  std::vector<ValueId> inputs;  // values read from outside the island (no constants)
  std::vector<ValueId> outputs; // values used outside the island or graph outputs
};

// A tensor handed to execute(). For host tensors `host` points at the data.
// Not owned; valid for the duration of the call.
struct TensorRef {
  const TensorType* type = nullptr;
  std::byte* host = nullptr;
};

// Element order of a tensor in device memory. kNchw is the graph's own
// (logical, row-major) order; kNhwc moves dim 1 last (rank-4 tensors only).
enum class TensorLayout : uint8_t { kNchw, kNhwc };
std::string_view tensor_layout_name(TensorLayout layout);  // "NCHW", "NHWC"

class Buffer;            // shared_gpu/buffer.h
class SharedGpuContext;  // shared_gpu/shared_gpu_context.h
}  // namespace hetsched
// Vulkan's own declaration of the handle (VK_DEFINE_HANDLE), so the contract
// can name command buffers without including Vulkan.
typedef struct VkCommandBuffer_T* VkCommandBuffer;
namespace hetsched {

// A tensor in GPU memory, owned by the island handle that exposes it. The
// buffer is fixed from init() on, so the island's command buffer can be
// recorded once; the executor's handoff steps copy data into and out of it.
struct DeviceTensor {
  Buffer* buffer = nullptr;  // not owned; lives as long as the handle
  uint64_t offset = 0;       // bytes into the buffer
  uint64_t size = 0;         // bytes
  TensorLayout layout = TensorLayout::kNchw;
};

// Device arenas: a session plans, per lane and per shared GPU context, one
// buffer that holds every device island's inputs, outputs and scratch
// (memory/arena_planner.h), so that memory of islands never live together
// is shared. Offsets in it are multiples of this, the largest
// minStorageBufferOffsetAlignment Vulkan allows, so a plan made at compile
// time binds on any device.
inline constexpr uint64_t kDeviceArenaAlignment = 256;

// What a device island needs from its arena, known at compile time from its
// blob alone (no device). Every size is at least 4 bytes (a descriptor range
// is never empty).
struct DeviceMemoryNeeds {
  uint64_t scratch_bytes = 0;        // the island's own intermediates, one block it plans inside itself
  uint64_t scratch_lower_bound = 0;  // the most intermediate bytes live at once inside it (<= scratch_bytes)
  std::vector<uint64_t> input_bytes, output_bytes;  // in the island's input/output order
  std::vector<TensorLayout> input_layouts, output_layouts;
};

// Where a device island's memory is, handed to init(): offsets into `arena`
// (on the island's context), each a multiple of kDeviceArenaAlignment, with
// the sizes of DeviceMemoryNeeds. Inputs, outputs and scratch of one island
// never overlap each other, but may overlap other islands' memory.
struct DevicePlacement {
  Buffer* arena = nullptr;  // not owned; outlives the handle
  uint64_t scratch_offset = 0;
  std::vector<uint64_t> input_offsets, output_offsets;
};

// A placement of `needs` in an arena of the island's own, for islands
// initialised without one: scratch first, then inputs and outputs, each at
// kDeviceArenaAlignment. `arena` stays null; `arena_bytes` gets the size.
DevicePlacement pack_placement(const DeviceMemoryNeeds& needs, uint64_t& arena_bytes);

// Checks `placement` against `needs` before a delegate binds it: one offset
// per input and output, each a multiple of kDeviceArenaAlignment and of the
// device's `min_offset_alignment`, every range inside the arena buffer
// (`arena_bytes`), and an island's inputs, outputs and scratch disjoint.
// kInvalidArgument naming the first violation (a program whose plan does
// not fit what the delegate now compiles: recompile it).
Status check_placement(const DeviceMemoryNeeds& needs, const DevicePlacement& placement, uint64_t arena_bytes,
                       uint64_t min_offset_alignment);

// What a device island's one recorded command buffer holds between its
// leading and trailing barriers (which every island records): known at
// compile time from the blob, from the same lowering init() records, so
// `hetsched preview` shows what runs.
struct CommandStreamCounts {
  uint64_t dispatches = 0;  // vkCmdDispatch
  uint64_t copies = 0;      // vkCmdCopyBuffer
  uint64_t barriers = 0;    // pipeline barriers between them
};

// One timed piece of an island's last run, with profile_ops on: a portable
// kernel, an XNNPACK segment (its nodes run inside one runtime, which the
// Debian XNNPACK build cannot time one by one) or a GPU dispatch.
struct OpTiming {
  std::vector<std::string> nodes;  // the graph nodes it ran, by name
  std::vector<std::string> ops;    // their op types, in the same order
  std::string kind;                // "portable", "xnnpack", "nhwc", "dispatch", "copy"
  double start_ms = 0;             // since the island's first timed piece started
  double ms = 0;
};

// Per-run state a handle may use.
struct ExecContext {
  int run_index = 0;
  // GPU islands: how to submit (wait value, whether to signal, whether to
  // idle the queue after), planned by the executor from the sync mode.
  GpuStepSync gpu;
  // GPU islands put these command buffers (when not null) right before and
  // after their own, in the same submit: the executor's timestamp writes.
  VkCommandBuffer gpu_before = nullptr;
  VkCommandBuffer gpu_after = nullptr;
  // GPU islands put these after gpu_after in the same submit, covered by its
  // signal: the executor's work on the island's outputs (a staged
  // readback's copy to staging), which then needs no submit of its own.
  // Each starts with its own barrier on the island's writes.
  std::span<const VkCommandBuffer> gpu_then;
  // GPU islands set this to the timeline value their submit signalled (0: none).
  uint64_t signalled_value = 0;
  // Host islands made with profile_ops append the timed pieces of this run
  // here (when not null); device islands report theirs through
  // IslandHandle::op_timings() once the GPU is done.
  std::vector<OpTiming>* op_timings = nullptr;
};


// One compiled island, ready to run. Owned by the Session.
//
// Concurrency: the scheduler never runs one handle's execute() twice at
// once. Host-domain handles (memory_kind kHost) must keep nothing of a run
// after execute() returns (they read `inputs` and write `outputs`), so one
// handle serves every request in flight, runs serialised on the delegate's
// resource; device-domain handles keep their tensors in their own buffers,
// so the session makes one handle per request in flight (max_in_flight).
class IslandHandle {
 public:
  virtual ~IslandHandle() = default;
  virtual MemoryDomain input_domain(size_t i) const { (void)i; return MemoryDomain::host(); }
  virtual MemoryDomain output_domain(size_t i) const { (void)i; return MemoryDomain::host(); }
  // Device-domain islands: where input/output i lives (nullptr for host islands).
  virtual const DeviceTensor* device_input(size_t i) const { (void)i; return nullptr; }
  virtual const DeviceTensor* device_output(size_t i) const { (void)i; return nullptr; }
  // Device-domain islands: the context their buffers belong to.
  virtual std::shared_ptr<SharedGpuContext> gpu_context() const { return nullptr; }
  // Host islands read `inputs` and write `outputs` (pre-allocated by the
  // caller, shapes as compiled), in the island's input/output order. Device
  // islands ignore both spans: they read device_input(i) and write
  // device_output(i), submit without waiting on the host (per ctx.gpu), and
  // report the signalled timeline value in ctx.signalled_value.
  virtual Status execute(ExecContext& ctx, std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) = 0;
  // Device islands made with InitContext::profile_ops: the timed pieces of
  // the last execute(), in run order; call once that run completed on the
  // GPU. Empty when made without profile_ops (host islands use
  // ExecContext::op_timings instead).
  virtual Result<std::vector<OpTiming>> op_timings() const { return std::vector<OpTiming>{}; }
  // Device islands: what their one recorded command buffer holds (the same
  // counts Delegate::command_stream gives for their blob). Host islands:
  // nothing.
  virtual std::optional<CommandStreamCounts> command_stream() const { return std::nullopt; }
};

// Options the runtime gives init(): the delegate's options from the profile.
struct InitContext {
  CompileSpecs options;  // e.g. {"threads", "2"}
  int island_id = 0;
  // Device islands: their memory in the session's arena. Null: the island
  // allocates its own (tools and tests that run one island alone).
  const DevicePlacement* placement = nullptr;
  // Time each kernel, segment or dispatch of every run (op_timings()):
  // logging.profile_ops, `hetsched bench --profile-ops`. Off by default:
  // GPU islands then record per-dispatch timestamps, CPU islands read the
  // clock around every step.
  bool profile_ops = false;
};

class Delegate {
 public:
  virtual ~Delegate() = default;
  virtual std::string_view name() const = 0;
  // Which physical engine it occupies ("cpu", "gpu:<context key>").
  virtual std::string resource() const = 0;
  virtual Capability supports(const Graph& graph, NodeId node) const = 0;
  // The node's time here with this machine's figures for the delegate
  // (calibrated or built in). The default is the roofline of
  // delegates/cost_model.h; a delegate refines it where it knows better
  // (fused activations, ops it runs in slower kernels).
  virtual CostEstimate estimate(const Graph& graph, NodeId node, const DelegateCosts& costs) const;
  // What kind of engine it runs on, for the built-in cost figures:
  // "cpu", "gpu-discrete", "gpu-integrated", "gpu-cpu" (cost_model.h).
  virtual std::string device_class() const { return "cpu"; }
  // Where this delegate's islands keep their inputs and outputs: the
  // compiler plans upload/readback/device-copy steps from it.
  virtual MemoryDomain::Kind memory_kind() const { return MemoryDomain::Kind::kHost; }
  virtual Result<Blob> compile(const Island& island, const CompileSpecs& specs) const = 0;
  // Device delegates: what an island compiled to `blob` with `specs` needs
  // from the device arena (the compiler plans it). kFailedPrecondition for
  // host delegates.
  virtual Result<DeviceMemoryNeeds> device_memory(const Blob& blob, const CompileSpecs& specs) const {
    (void)blob;
    (void)specs;
    return failed_precondition("delegate '" + std::string(name()) + "' keeps its tensors in host memory");
  }
  // Device delegates: the commands an island compiled to `blob` records
  // (CommandStreamCounts). kFailedPrecondition for host delegates.
  virtual Result<CommandStreamCounts> command_stream(const Blob& blob, const CompileSpecs& specs) const {
    (void)blob;
    (void)specs;
    return failed_precondition("delegate '" + std::string(name()) + "' records no command buffer");
  }
  // Device delegates: the shared GPU context their islands run on (resolved
  // through the registry on first use), so the session can make arenas on
  // it before init(). Null for host delegates.
  virtual Result<std::shared_ptr<SharedGpuContext>> gpu_context() { return std::shared_ptr<SharedGpuContext>(); }
  virtual Result<std::unique_ptr<IslandHandle>> init(const Blob& blob, const InitContext& ctx) = 0;
};

}  // namespace hetsched
