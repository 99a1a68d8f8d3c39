// The convolution kernels both GPU engines run, and the host side of their
// interface: shared_gpu/shaders/conv2d.comp (an implicit GEMM: 64/128-wide
// tiles, double-buffered shared memory, tap-major K, split-K), its second
// pass conv2d_reduce.comp, and depthwise_conv2d.comp. The Vulkan delegate
// dispatches them on NCHW tensors, the VGF runtime on NHWC ones; the layout
// is a specialisation constant (ConvSpecialization::nhwc), so one tiling
// (shared_gpu/conv_tiling.h) and one source serve both. Each struct here
// mirrors the declaration in the shaders; a change on one side must be made
// on the other.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "shared_gpu/conv_tiling.h"

namespace hetsched::gpu {

inline constexpr uint32_t kConvGroupSize = 256;  // conv2d.comp: 16x16 invocations, each 1/16 of each tile side
inline constexpr uint32_t kConvTileK = 16;       // conv2d.comp: K per step

// The kernels' SPIR-V (compiled and embedded at build time). `half`: the
// variant with 16-bit storage between kernels (half_io.glsl), which needs
// storageBuffer16BitAccess.
std::span<const uint32_t> conv2d_spirv(bool half = false);
std::span<const uint32_t> conv2d_reduce_spirv(bool half = false);
std::span<const uint32_t> depthwise_conv2d_spirv(bool half = false);
// depthwise_conv2d.comp that also writes each output plane's mean.
std::span<const uint32_t> depthwise_mean_spirv(bool half = false);
// conv2d.comp with its products on the tensor cores (VK_NV_cooperative_matrix,
// f16 operands, f32 accumulation): same bindings, push constants, weights,
// tap table and split-K; its specialisation is ConvSpecialization's then
// coopmat_specialization's.
std::span<const uint32_t> conv2d_coopmat_spirv(bool half = false);

// How conv2d_coopmat.comp runs on a device: its cooperative-matrix shape
// (pick_f16_coopmat_shape) and the device's subgroup size.
struct CoopMatConv {
  uint32_t frag_m = 16, frag_n = 16, frag_k = 16;
  uint32_t subgroup_size = 32;
  // The device's maxComputeWorkGroupInvocations and
  // maxComputeSharedMemorySize: bound the workgroup sizes the Vulkan
  // delegate's gemm_coopmat kernels may use (conv2d_coopmat's 256 and its
  // shared tiles fit every device that has the extension).
  uint32_t max_invocations = 1024;
  uint32_t max_shared_bytes = 48 * 1024;
};

// conv2d_coopmat.comp's specialisation constants 6..10 (after
// ConvSpecialization's 0..5) for a tile of `tile_channels` x `tile_pixels`:
// a grid of subgroups over the tile whose every cell holds whole fragments
// (the squarest such grid). Empty when none fits: the conv then runs
// conv2d.comp.
// `invocations` is the workgroup's size (gemm_coopmat.comp's may be larger).
std::vector<uint32_t> coopmat_specialization(const CoopMatConv& coopmat, uint32_t tile_channels,
                                             uint32_t tile_pixels, uint32_t invocations = kConvGroupSize);

// Storage buffers of each kernel: conv2d X, W, bias, Y (or the partial
// sums), taps, residual; conv2d_reduce partial sums, bias, Y, residual;
// depthwise X, W, bias, Y. The residual (read where ConvPush::has_residual)
// is a tensor of Y's shape and layout added after the bias and before the
// epilogue ops: a ResNet block's skip connection; where there is none any
// buffer stands in, unread.
inline constexpr uint32_t kConv2dBindings = 6;
inline constexpr uint32_t kConv2dReduceBindings = 4;
inline constexpr uint32_t kDepthwiseConv2dBindings = 4;
// depthwise_mean.comp: X, W, bias, Y, the means ([batch][out channel]). Its
// specialisation: the workgroup's size (depthwise_mean_group_size), then
// the layout.
inline constexpr uint32_t kDepthwiseMeanBindings = 5;
// depthwise_mean.comp: a workgroup of at most 256 invocations makes one
// output plane (and its mean), so planes stay at most this many pixels
// (28 x 28: 4 pixels an invocation). Larger ones keep depthwise_conv2d.comp,
// an invocation per output, and the mean's own dispatch: on an H100 at
// 56 x 56 (13 pixels an invocation, 16 to 144 planes) the fused dispatch
// took 20-22 us against 16-18 for the conv and the mean; at 28 x 28 12-13
// against 15-16, at 7 x 7 8-10 against 14.
inline constexpr int64_t kDepthwiseMeanMaxPlane = 28 * 28;
// 64, 128 or 256 invocations: the plane's pixels rounded up to a power of two.
uint32_t depthwise_mean_group_size(int64_t plane);

// Push constants of all three. Shapes are logical (channels apart from
// height and width) whatever the layout.
struct ConvPush {
  uint32_t batch, channels, in_h, in_w;
  uint32_t out_channels, out_h, out_w;
  uint32_t group_channels, group_out;
  uint32_t kernel_h, kernel_w, stride_h, stride_w;
  uint32_t dilation_h, dilation_w, pad_top, pad_left;
  uint32_t has_bias;
  uint32_t epilogue_ops;
  float epilogue_params[4];
  uint32_t has_residual;  // conv2d, conv2d_coopmat (splits 1) and conv2d_reduce add the residual binding
};
static_assert(sizeof(ConvPush) == 96);

// conv2d.comp's specialisation (conv_tiling.h says how it is chosen);
// conv2d_reduce.comp takes `splits` as constant_id 0 and the layout as
// constant_id 1; depthwise_conv2d.comp the layout alone, as constant_id 0
// (its weights: [out channel][tap] for NCHW, [tap][out channel] for NHWC).
struct ConvSpecialization {
  uint32_t thread_channels;  // constant_id 0: tile channels / 16, 4 or 8
  uint32_t thread_pixels;    // constant_id 1: tile pixels / 16, 4 or 8
  uint32_t splits;           // constant_id 2: K slices; > 1 writes partial sums
  uint32_t epilogue_ops;     // constant_id 3: ConvPush::epilogue_ops (splits == 1)
  uint32_t tap_major;        // constant_id 4: K is tap-major (channels per group % 16 == 0)
  uint32_t nhwc = 0;         // constant_id 5: X and Y are NHWC (the VGF runtime's layout)
};

enum class ConvLayout : uint32_t { kNchw = 0, kNhwc = 1 };

// The implicit GEMM of the conv `p` describes.
ConvGemmShape conv_gemm_shape(const ConvPush& p);
// Whether K runs tap-major (every K step of 16 within one tap).
bool conv_tap_major(const ConvPush& p);
// conv2d.comp's workgroups for `p` tiled as `t`.
std::array<uint32_t, 3> conv_workgroups(const ConvPush& p, const ConvTiling& t);
ConvSpecialization conv_specialization(const ConvPush& p, const ConvTiling& t, ConvLayout layout);

// conv2d.comp's weight matrix: per group, one row per k (tap-major, k =
// tap * group_channels + c, when conv_tap_major; else k = c * taps + tap),
// rounded up to whole K steps; each row the group's output channels rounded
// up to the tile; zero padded. `weight(oc, c, tap)` is W[oc][c][kh][kw] of
// ONNX's OIHW with tap = kh * kernel_w + kw, c within the group.
template <class WeightAt>
std::vector<float> arrange_conv_weights(const ConvPush& p, const ConvTiling& t, WeightAt weight) {
  const ConvGemmShape shape = conv_gemm_shape(p);
  const int64_t taps = int64_t{p.kernel_h} * p.kernel_w;
  const int64_t k_rows = conv_k_steps(shape) * kConvTileK;
  const int64_t row = (shape.group_out + t.tile_channels - 1) / t.tile_channels * t.tile_channels;
  const bool tap_major = conv_tap_major(p);
  std::vector<float> arranged(static_cast<size_t>(shape.groups * k_rows * row), 0.f);
  for (int64_t oc = 0; oc < int64_t{p.out_channels}; ++oc) {
    const int64_t group = oc / shape.group_out, ocg = oc % shape.group_out;
    for (int64_t c = 0; c < int64_t{p.group_channels}; ++c)
      for (int64_t tap = 0; tap < taps; ++tap) {
        const int64_t k = tap_major ? tap * p.group_channels + c : c * taps + tap;
        arranged[static_cast<size_t>((group * k_rows + k) * row + ocg)] = weight(oc, c, tap);
      }
  }
  return arranged;
}

// conv2d.comp's tap table for channel-major K (binding 4): per k = c * taps
// + tap of a group, the input offset from the window's origin in `layout`
// and the tap's (row, column) displacement. Empty when tap-major.
std::vector<uint32_t> conv_taps(const ConvPush& p, ConvLayout layout);

// Bytes of the partial sums of a split-K conv (tiling t): t.splits
// outputs' worth. 0 without split-K.
uint64_t conv_partial_bytes(const ConvPush& p, const ConvTiling& t);

}  // namespace hetsched::gpu
