// From a VGF file's operators to compute dispatches: which shader each
// operator runs (the VGF shaders in shaders/*.comp, or the conv kernels
// shared with the Vulkan delegate, shared_gpu/conv_kernel.h), with which
// buffers, push constants and specialisation, over how many workgroups. The
// GPU-free half of the runtime, so it can be tested (and fuzzed with
// corrupt files) without a device.
//
// Convolutions run the shared tuned kernels in NHWC: conv2d, and matmul by
// constant weights (as a 1x1 conv), on the implicit-GEMM conv2d.comp with
// its per-shape tiling (split-K adding a conv2d_reduce dispatch), or, for
// small 1x1 ones, on pointwise_conv.comp in one dispatch;
// depthwise_conv2d on the shared depthwise kernel. Their weights are
// re-arranged here into derived buffers, and the channel affines and
// activations that follow fold into them (epilogue_fusion.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "delegates/vgf/vgf_format.h"
#include "shared_gpu/conv_kernel.h"
#include "shared_gpu/pointwise_kernel.h"
#include "shared_gpu/se_kernel.h"

namespace hetsched::vgf {

// The built-in shaders, plus kCustom for a compute module's own SPIR-V.
enum class Kernel : uint8_t {
  kUnary,
  kBinary,
  kCopy,
  kPad,
  kConv2d,           // shared_gpu/shaders/conv2d.comp
  kConv2dReduce,     // shared_gpu/shaders/conv2d_reduce.comp (split-K)
  kDepthwiseConv2d,  // shared_gpu/shaders/depthwise_conv2d.comp
  kPool2d,
  kMatmul,
  kReduce,
  kResize,
  kSelect,
  kTransposeConv2d,
  kCastF16ToF32,  // cast (storageBuffer16BitAccess)
  kCastF32ToF16,
  kCastWords,     // cast between f32, i32 and i64 (32-bit words; i64 as pairs)
  kCastToBool,    // cast f32, i32 or i64 -> bool (storageBuffer8BitAccess)
  kCastFromBool,  // cast bool -> f32, i32 or i64
  kConv2dCoopmat,  // shared_gpu/shaders/conv2d_coopmat.comp (precision fp16)
  kSeScale,        // shared_gpu/shaders/se_scale.comp: a squeeze-and-excitation block's 1x1 convs and Mul
  kPointwiseConv,  // shared_gpu/shaders/pointwise_conv.comp: a small 1x1 conv or linear layer
  kDepthwiseMean,  // shared_gpu/shaders/depthwise_mean.comp: a depthwise conv that also writes its planes' means
  kCustom,
};
inline constexpr size_t kBuiltinKernelCount = static_cast<size_t>(Kernel::kCustom);
std::string_view kernel_name(Kernel kernel);  // "unary", ...
// Storage buffers and push-constant words of a built-in kernel's shader.
uint32_t kernel_binding_count(Kernel kernel);
uint32_t kernel_push_words(Kernel kernel);
// The bindings of a built-in kernel that may hold f16 tensors (bit b:
// binding b), read and written through shared_gpu/shaders/half_io.glsl in
// its `_half` SPIR-V: the tensors it computes on and writes. Weights,
// biases, affines, tap tables and split-K partial sums are derived f32
// buffers; the casts and compute modules have none.
uint32_t kernel_half_capable_bindings(Kernel kernel);

// Every VGF shader runs workgroups of this many invocations along x.
inline constexpr uint32_t kWorkgroupSize = 64;
// Workgroups for one invocation per element: x up to 65535, the rest in y.
std::array<uint32_t, 3> element_groups(uint64_t elements);

struct Dispatch {
  Kernel kernel = Kernel::kUnary;
  uint32_t module = 0;              // kCustom: the compute module
  // Resource ids in binding order; ids from the file's resource count on
  // are derived buffers (DispatchPlan::derived[id - resources]).
  std::vector<uint32_t> bindings;
  // The bound ids it writes (the rest it only reads): the runtime's
  // barriers wait on them (dispatch_barriers.h).
  std::vector<uint32_t> writes;
  // Dispatches with one write_group (>= 0) write disjoint parts of one
  // resource (a concat's pieces): no barrier between them.
  int write_group = -1;
  std::vector<uint32_t> push;       // push-constant words
  std::vector<uint32_t> specialization;  // constant_id i = word i (the shared kernels)
  std::array<uint32_t, 3> groups{1, 1, 1};
  // Bit b: binding b holds f16 elements (its resource's dtype, where the
  // kernel can read or write f16 there, kernel_half_capable_bindings).
  // Non-zero: the runtime runs the kernel's `_half` SPIR-V with this as its
  // kHalfBindings constant (half_storage.h says which resources are f16).
  uint32_t half_bindings = 0;
  std::string label;                // "segment 0 operator 2 (conv2d 'conv1')", for errors
  // The graph nodes it runs and their TOSA ops (fused ones included), for
  // per-dispatch timings.
  std::vector<std::string> nodes, ops;
};

// A buffer the plan adds to the file's resources: constant words made from
// the file's constants (a conv kernel's arranged weights, folded bias, tap
// table), uploaded once, or scratch of `scratch_bytes` (split-K partial
// sums, one buffer for every conv: the runtime's barriers keep their uses
// apart).
struct DerivedBuffer {
  std::string name;
  std::vector<uint32_t> words;
  uint64_t scratch_bytes = 0;
  // Set instead of `words` when they would pass kMaxDerivedBytes (a file's
  // weights rounded up to the kernel's tiles): the runtime refuses the file.
  uint64_t oversized_bytes = 0;
  uint64_t bytes() const { return words.empty() ? scratch_bytes : words.size() * sizeof(uint32_t); }
};

// The dispatches of one segment, in order. A reshape between resources of
// one alias group is no dispatch at all.
struct SegmentDispatches {
  std::string name;
  std::vector<Dispatch> dispatches;
};

// The most bytes a derived constant buffer is made with: 1 GiB, a quarter
// of the largest maxStorageBufferRange a device reports (4 GiB - 1).
inline constexpr uint64_t kMaxDerivedBytes = uint64_t{1} << 30;

struct DispatchPlan {
  std::vector<SegmentDispatches> segments;  // one per segment, in order
  std::vector<DerivedBuffer> derived;
  size_t dispatch_count() const;
};

// Plans every segment of `file`, which must have passed check_vgf (decode_vgf
// and encode_vgf guarantee it): the dispatches stay inside every buffer.
// `coopmat` set (the delegate's `precision` at fp16 on a device with
// tensor cores): convs and linear layers run conv2d_coopmat.comp, in tiles
// of at most 64 channels (as the Vulkan delegate's, which says why).
DispatchPlan plan_dispatches(const VgfFile& file, const std::optional<gpu::CoopMatConv>& coopmat = std::nullopt);

}  // namespace hetsched::vgf
