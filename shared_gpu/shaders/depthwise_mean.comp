#version 450
#extension GL_GOOGLE_include_directive : require
// A depthwise conv (NCHW for the Vulkan delegate, NHWC for the VGF runtime:
// kNhwc; one input channel per group, any channel multiplier) that also
// writes the spatial mean of each output plane: the
// squeeze of a squeeze-and-excitation block (MobileNetV3, EfficientNet,
// RegNetY, ...), which otherwise is a GlobalAveragePool or ReduceMean
// dispatch of its own, with a barrier before it, reading the conv's output
// back (the Vulkan delegate's plan_depthwise_means, the VGF dispatch plan's
// fold_mean_into_depthwise). One workgroup makes one
// (image, output channel) plane: each invocation walks every kGroupSize-th
// pixel of it as depthwise_conv2d.comp computes a pixel, keeps its sum, and
// the workgroup adds the sums in shared memory. The mean is that of the f32
// results, before any f16 rounding of Y. The hosts keep planes small
// (gpu::kDepthwiseMeanMaxPlane) and pick the workgroup's size by the plane
// (gpu::depthwise_mean_group_size: 64, 128 or 256 invocations), so a walk
// stays short and a 7x7 plane does not hold 256 invocations.
// Bindings: X, W ([out channel][kh][kw], ONNX's layout; NHWC [kh][kw][out
// channel], as depthwise_conv2d.comp's), bias, Y, means ([batch][out
// channel]). Push constants: ConvPush.
#include "gpu_ops.glsl"
#include "half_io.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint kGroupSize = 256u;  // a power of two
layout(constant_id = 1) const bool kNhwc = false;

layout(set = 0, binding = 0) readonly restrict buffer X { float x[]; };
HALF_IN(0, XH, x)
layout(set = 0, binding = 1) readonly restrict buffer W { float w[]; };
layout(set = 0, binding = 2) readonly restrict buffer Bias { float bias[]; };
layout(set = 0, binding = 3) writeonly restrict buffer Y { float y[]; };
HALF_OUT(3, YH, y)
layout(set = 0, binding = 4) writeonly restrict buffer Means { float means[]; };
HALF_OUT(4, MeansH, means)

layout(push_constant) uniform Push {
  uint batch, channels, in_h, in_w;
  uint out_channels, out_h, out_w;
  uint group_channels, group_out;
  uint kernel_h, kernel_w, stride_h, stride_w;
  uint dilation_h, dilation_w, pad_top, pad_left;
  uint has_bias;
  uint epilogue_ops;
  // Scalars, not a vec4: a vec4 would be aligned to 16 bytes in the block.
  float epilogue_p0, epilogue_p1, epilogue_p2, epilogue_p3;
} pc;

shared float sums[kGroupSize];

void main() {
  const uint tid = gl_LocalInvocationIndex;
  const uint plane_index = linear_group();  // n * out_channels + oc
  if (plane_index >= pc.batch * pc.out_channels) return;  // whole workgroups only
  const uint oc = plane_index % pc.out_channels;
  const uint n = plane_index / pc.out_channels;
  const uint c = oc / pc.group_out;  // one input channel per group
  const uint plane = pc.out_h * pc.out_w;
  // X's element (ih, iw) of this plane is x_base + (ih * in_w + iw) * x_step;
  // W's tap t of this channel is w_base + t * w_step.
  const uint x_base = kNhwc ? n * pc.in_h * pc.in_w * pc.channels + c : (n * pc.channels + c) * pc.in_h * pc.in_w;
  const uint x_step = kNhwc ? pc.channels : 1u;
  const uint w_base = kNhwc ? oc : oc * pc.kernel_h * pc.kernel_w;
  const uint w_step = kNhwc ? pc.out_channels : 1u;
  const float b = pc.has_bias != 0u ? bias[oc] : 0.0;
  const vec4 params = vec4(pc.epilogue_p0, pc.epilogue_p1, pc.epilogue_p2, pc.epilogue_p3);
  float total = 0.0;
  for (uint p = tid; p < plane; p += kGroupSize) {
    const uint oh = p / pc.out_w, ow = p % pc.out_w;
    const int ih0 = int(oh * pc.stride_h) - int(pc.pad_top);
    const int iw0 = int(ow * pc.stride_w) - int(pc.pad_left);
    float acc = 0.0;
    for (uint kh = 0u; kh < pc.kernel_h; ++kh) {
      const int ih = ih0 + int(kh * pc.dilation_h);
      if (ih < 0 || ih >= int(pc.in_h)) continue;
      for (uint kw = 0u; kw < pc.kernel_w; ++kw) {
        const int iw = iw0 + int(kw * pc.dilation_w);
        if (iw < 0 || iw >= int(pc.in_w)) continue;
        acc = fma(w[w_base + (kh * pc.kernel_w + kw) * w_step], LOAD(0, x, x_base + (uint(ih) * pc.in_w + uint(iw)) * x_step),
                  acc);
      }
    }
    const float v = apply_epilogue(pc.epilogue_ops, params, acc + b);
    STORE(3, y, kNhwc ? (n * plane + p) * pc.out_channels + oc : plane_index * plane + p, v);
    total += v;
  }
  sums[tid] = total;
  barrier();
  for (uint half_size = kGroupSize / 2u; half_size > 0u; half_size >>= 1u) {
    if (tid < half_size) sums[tid] += sums[tid + half_size];
    barrier();
  }
  if (tid == 0u) STORE(4, means, plane_index, sums[0] / float(plane));
}
