// The squeeze-and-excitation kernel both GPU engines run,
// shared_gpu/shaders/se_scale.comp, and the host side of its interface: a
// block's two 1x1 convs on the pooled means and its Mul in one dispatch.
// The Vulkan delegate dispatches it on NCHW tensors, the VGF runtime on NHWC
// ones (the specialisation constant). The struct mirrors the shader's
// push-constant block; a change on one side must be made on the other.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace hetsched::gpu {

// The SPIR-V; `half`: the variant with 16-bit storage between kernels.
std::span<const uint32_t> se_scale_spirv(bool half = false);

// Storage buffers: X, the means ([batch][channels]), the packed weights
// (pack_se_weights), Y. The specialisation: constant_id 0, X and Y NHWC.
inline constexpr uint32_t kSeScaleBindings = 4;

struct SeScalePush {
  uint32_t batch, channels, squeeze, plane;
  uint32_t chunks;  // workgroups per image: ceil(channels * plane / kSeScaleChunk)
  uint32_t ops1, ops2;
  float params1[4];
  float params2[4];
};
static_assert(sizeof(SeScalePush) == 60);
inline constexpr uint32_t kSeScaleChunk = 1024;       // elements a workgroup scales
inline constexpr uint32_t kSeScaleMaxSqueeze = 1024;  // hidden units a workgroup keeps
// Every workgroup reads both weight matrices (from the L2 cache after the
// first) and sums channels x squeeze products for its hidden units: past
// this many elements of W1 that costs more than the two dispatches it
// saves. Session 10's kernel (one invocation per hidden unit walking its
// row) made MobileNetV3-Small's two 576 x 144 blocks slower fused, so the
// bound was 65536; with four units per load and four sums in flight
// (session 14) those blocks take 14 us fused on an H100, against about 23
// for the fc1, fc2 and Mul dispatches, and MobileNetV3-Small fp16 went
// 0.508 -> 0.479 ms with them fused.
inline constexpr uint32_t kSeScaleMaxWeights = 131072;

// Whether a block of `channels` and `squeeze` hidden units runs fused.
bool se_scale_fits(int64_t channels, int64_t squeeze);

// The weight buffer: W1 transposed to [channels][squeeze4], b1 [squeeze4],
// W2 [channels][squeeze4], b2 [channels], padded to whole vec4s; squeeze4
// is squeeze rounded up to a multiple of 4 (the shader reads four hidden
// units at a time), the padding zero. w1(j, c) and w2(c, j) are the two
// convs' weights with their per-output-channel scales already applied.
template <class W1, class W2>
std::vector<float> pack_se_weights(int64_t channels, int64_t squeeze, W1 w1, std::span<const float> b1, W2 w2,
                                   std::span<const float> b2) {
  const int64_t squeeze4 = (squeeze + 3) / 4 * 4;
  std::vector<float> weights;
  weights.reserve(static_cast<size_t>(2 * squeeze4 * channels + squeeze4 + channels + 3));
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t j = 0; j < squeeze4; ++j) weights.push_back(j < squeeze ? w1(j, c) : 0.f);
  for (int64_t j = 0; j < squeeze4; ++j) weights.push_back(j < squeeze ? b1[static_cast<size_t>(j)] : 0.f);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t j = 0; j < squeeze4; ++j) weights.push_back(j < squeeze ? w2(c, j) : 0.f);
  weights.insert(weights.end(), b2.begin(), b2.end());
  weights.resize((weights.size() + 3) / 4 * 4, 0.f);
  return weights;
}

}  // namespace hetsched::gpu
