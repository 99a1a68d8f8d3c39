// Lowering an island's graph to the Vulkan delegate's command list: the
// buffers the island needs and the steps (dispatches and copies, with their
// barriers) that run it once.
//
// Host code only — no Vulkan call happens here — so fusion and barrier
// decisions can be tested without a GPU. The island handle
// (vulkan_island.h) turns the result into buffers, descriptor sets and one
// recorded command buffer.
//
// Passes, in order (lower_island):
//   1. group:   walk the nodes in graph order and grow fusion groups —
//               elementwise chains, and Conv/MatMul/Gemm with what their
//               epilogue can absorb (see fuse_into in lowering.cc);
//   2. emit:    turn each group, in the order of its last node, into steps,
//               allocating buffers for the values it reads and writes and
//               the parameter blocks of its kernels;
//   3. outputs: give island outputs that no step wrote (inputs passed
//               through, aliases) a buffer of their own and a copy;
//   4. scratch: place intermediates in one block by their step lifetimes
//               (memory/arena_planner.h), sharing bytes where they can;
//   5. barriers: mark the steps that must wait for earlier ones, on bytes
//               (two intermediates sharing bytes are one hazard).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "delegates/delegate.h"
#include "delegates/vulkan/conv_tiling.h"
#include "delegates/vulkan/kernel_params.h"
#include "graph/graph.h"
#include "hetsched/status.h"

namespace hetsched::vulkan {

// One compute shader of the delegate (shaders/<name>.comp).
enum class Kernel : uint8_t {
  kElementwise,
  kGemm,
  kConv2d,
  kConv2dReduce,  // adds conv2d's split-K partial sums
  kDepthwiseConv2d,
  kPool2d,
  kReduce,  // ReduceMean/Sum/Max/Min/Prod, GlobalAveragePool
  kSoftmax,
  kStridedCopy,
  kGather,
  kResize,
  kNormalize,  // LayerNormalization, GroupNormalization
  kPad,
  kConvTranspose2d,
  kCastF16ToF32,  // Cast of an fp16 model's f16 edges (storageBuffer16BitAccess)
  kCastF32ToF16,
  kCastWords,     // Cast between f32, i32 and i64 (32-bit words; i64 as pairs)
  kCastToBool,    // f32, i32 or i64 -> bool (storageBuffer8BitAccess)
  kCastFromBool,  // bool -> f32, i32 or i64
  kConv2dCoopmat,  // conv2d on the tensor cores (precision fp16): conv2d_coopmat.comp
  kGemmCoopmat,    // gemm on the tensor cores (precision fp16): gemm_coopmat.comp, 256 invocations
  kGemmCoopmat512,   // the same with 512 (gemm_coopmat_512.comp)
  kGemmCoopmat1024,  // and 1024 (gemm_coopmat_1024.comp)
  kSeScale,          // a squeeze-and-excitation block's two 1x1 convs on the means and its Mul (se_scale.comp)
  // gemm on the tensor cores with the geometry fixed at compile time
  // (gemm_coopmat_fixed.glsl; 16x16x16 fragments, subgroups of 32, each
  // holding 4 x 2 accumulators):
  kGemmCoopmat128x128,  // 128 x 128 tiles, 256 invocations (gemm_coopmat_128x128.comp)
  kGemmCoopmat128x256,  // 128 x 256 tiles, 512 invocations (gemm_coopmat_128x256.comp)
  // A depthwise conv that also writes its output planes' means (the squeeze
  // of a squeeze-and-excitation block): depthwise_mean.comp.
  kDepthwiseMean,
  // A small 1x1 conv or linear layer in one dispatch, K split inside the
  // workgroup: pointwise_conv.comp.
  kPointwiseConv,
  // A 1x1 expand conv and the depthwise conv that alone reads it (and that
  // conv's output means, where plan_depthwise_means took them) in one
  // dispatch: expand_depthwise.comp.
  kExpandDepthwise,
};
inline constexpr size_t kKernelCount = 29;

// "elementwise", "gemm", ... (the shader's file stem).
std::string_view kernel_name(Kernel kernel);
// The gemm_coopmat kernel named `name` (its file stem), for the delegate's
// gemm_kernel option; nullopt for any other name.
std::optional<Kernel> gemm_coopmat_kernel(std::string_view name);
// Whether the kernel has a 16-bit storage variant (shared_gpu/shaders/
// half_io.glsl): every kernel but the Casts.
bool kernel_has_half_variant(Kernel kernel);
// Storage buffers the kernel binds (set 0, bindings 0..n-1).
uint32_t kernel_binding_count(Kernel kernel);
// Bytes of its push constants.
uint32_t kernel_push_constant_size(Kernel kernel);

// A buffer the island allocates.
struct BufferPlan {
  enum class Role : uint8_t {
    kInput,         // island input io_index: written by the executor before execute()
    kOutput,        // island output: read by the executor after execute()
    kIntermediate,  // written and read by the island's own steps
    kConstant,      // `data`, uploaded once at init (weights, parameter blocks, index tables)
  };
  Role role = Role::kIntermediate;
  uint64_t bytes = 0;
  int io_index = -1;  // kInput: position among the island's inputs
  std::vector<std::byte> data;
  std::string name;  // the value it holds, for logs and errors
  // kIntermediate: bytes into the island's scratch block (pass 4). Buffers
  // whose steps never overlap share bytes.
  uint64_t offset = 0;
  // Holds an f32 value stored as f16 (LoweringOptions::half_storage).
  bool half = false;
};

// One command of the island's command buffer.
struct Step {
  enum class Kind : uint8_t { kDispatch, kCopy };
  Kind kind = Kind::kDispatch;
  Kernel kernel = Kernel::kElementwise;
  // kDispatch: buffer indices in binding order (unused bindings point at
  // the parameter buffer), push constant words and the workgroup grid. A
  // buffer a step writes is bound to no other binding of that step: the
  // shaders declare their buffers `restrict`.
  std::vector<int> bindings;
  std::vector<uint32_t> push_constants;
  // Specialisation constants (constant_id i = element i): the pipeline is
  // made for this exact list.
  std::vector<uint32_t> specialization;
  // Bit b: binding b holds f16 elements (BufferPlan::half). Non-zero
  // dispatches run the kernel's 16-bit storage variant.
  uint32_t half_bindings = 0;
  std::array<uint32_t, 3> groups{1, 1, 1};
  // Buffers read and written; kCopy copies copy_bytes of reads[0] to writes[0].
  std::vector<int> reads;
  std::vector<int> writes;
  uint64_t copy_bytes = 0;
  // Steps with the same write_group (>= 0) write disjoint parts of one
  // buffer (the pieces of a Concat) and need no barrier between them.
  int write_group = -1;
  // A memory barrier (compute/transfer writes → reads and writes) goes
  // before this step.
  bool barrier_before = false;
  // The nodes it runs, "conv1+relu1".
  std::string label;
  // The same nodes' names and op types, for profile_ops.
  std::vector<std::string> node_names, node_ops;
};

struct LoweredIsland {
  std::vector<BufferPlan> buffers;  // buffers[0] is the parameter buffer
  std::vector<Step> steps;
  std::vector<int> input_buffers;   // per island input (graph input order)
  std::vector<int> output_buffers;  // per island output (graph output order)
  // Intermediates, placed by the arena planner at multiples of
  // kDeviceArenaAlignment: the block they need, and the most bytes live at
  // one step (what no placement can beat).
  uint64_t scratch_bytes = 0;
  uint64_t scratch_lower_bound = 0;
  size_t node_count = 0;
  size_t dispatch_count() const;
  size_t copy_count() const;
  size_t barrier_count() const;  // steps with barrier_before
};

// The buffer every parameter block lives in, and the dummy every unused
// binding points at.
inline constexpr int kParamsBuffer = 0;

struct LoweringOptions {
  // Every non-depthwise Conv uses this tiling (through clamp_conv_tiling)
  // instead of choose_conv_tiling's: for benchmarks.
  std::optional<ConvTiling> conv_tiling;
  // Set: non-depthwise Convs multiply in f16 on the tensor cores
  // (conv2d_coopmat.comp, f32 accumulation), with conv2d.comp's weights,
  // tap table and split-K but tiles of at most 64 channels (more fragments
  // per subgroup ran slower: lowering.cc's kCoopmatTile). MatMul and Gemm of
  // run-time operands likewise run gemm_coopmat.comp instead of gemm.comp.
  // Unset: f32 (conv2d.comp, gemm.comp).
  std::optional<CoopMatConv> coopmat;
  // The island's f32 values between its own kernels are stored as f16
  // (half_storage.h says which), halving their bytes; kernels read and
  // write them through their 16-bit storage variants and compute in f32.
  // Needs storageBuffer16BitAccess on the device.
  bool half_storage = false;
  // Every MatMul and Gemm of run-time operands at fp16 runs this
  // gemm_coopmat kernel where it can (the device's fragment shape,
  // subgroup size and limits allow it) instead of gemm_coopmat's choice
  // by shape: for benchmarks.
  std::optional<Kernel> gemm_kernel = std::nullopt;
};


// Lowers `graph` (an island's sub-graph, shape-inferred, every node
// accepted by vulkan_supports) to buffers and steps. Errors name the node:
// "node 'x' (Op): ..." — reached only for graphs supports() would refuse.
Result<LoweredIsland> lower_island(const Graph& graph, const LoweringOptions& options = {});

// What the island needs from a device arena (the delegate contract's
// DeviceMemoryNeeds): its scratch block and its inputs' and outputs' sizes,
// all in the graph's NCHW order.
DeviceMemoryNeeds device_memory_needs(const LoweredIsland& lowered);

// How MatMul's broadcast batch dims map onto gemm.comp's three batch grid
// dims: sizes and strides (in elements) of A and B per merged dim.
struct MatmulLayout {
  int64_t m = 1, n = 1, k = 1;
  // Elements between rows and columns of A ([M, K]) and B ([K, N]).
  int64_t a_row_stride = 1, a_col_stride = 1, b_row_stride = 1, b_col_stride = 1;
  std::array<int64_t, 3> batch{1, 1, 1};
  std::array<int64_t, 3> a_batch_stride{0, 0, 0};
  std::array<int64_t, 3> b_batch_stride{0, 0, 0};
  int64_t batch_count() const { return batch[0] * batch[1] * batch[2]; }
};
// kUnsupported when the batch dims do not merge into three.
Result<MatmulLayout> matmul_layout(const Shape& a, const Shape& b);
// The same for operands read through element strides (a transposed view).
Result<MatmulLayout> matmul_layout(const Shape& a, const std::vector<int64_t>& a_strides, const Shape& b,
                                   const std::vector<int64_t>& b_strides);

}  // namespace hetsched::vulkan
