// Pooling kernels: MaxPool, AveragePool (1-D and 2-D), GlobalAveragePool and
// GlobalMaxPool.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"

namespace hetsched::cpu {

namespace {

struct PoolSetup {
  WindowGeometry g;
  int64_t planes = 0;  // N * C
};

Result<PoolSetup> pool_setup(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kFloat32) return invalid_argument("input must be f32, got " + x.type().to_string());
  if (ctx.outputs.size() > 1) return unsupported("Indices output is not supported");
  if (ctx.outputs.empty() || ctx.outputs[0] == nullptr) return invalid_argument("output 0 is not allocated");
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel, ctx.attrs().require_ints("kernel_shape"));
  HS_ASSIGN_OR_RETURN(const int64_t ceil_mode, ctx.attrs().get_int("ceil_mode", 0));
  PoolSetup setup;
  HS_ASSIGN_OR_RETURN(setup.g, window_geometry(ctx, x.shape(), kernel, ctx.out(0).shape(), ceil_mode != 0));
  Shape out_shape{x.shape()[0], x.shape()[1], setup.g.out_h, setup.g.out_w};
  if (kernel.size() == 1) out_shape.erase(out_shape.begin() + 2);
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kFloat32, std::move(out_shape)}));
  setup.planes = x.shape()[0] * x.shape()[1];
  return setup;
}

// Runs reduce(plane_in, oh, ow) for every output pixel of every (n, c)
// plane, planes in parallel.
template <typename Reduce>
void for_each_window(const KernelContext& ctx, const PoolSetup& s, Reduce reduce) {
  const WindowGeometry& g = s.g;
  const float* px = ctx.in(0).data<float>();
  float* py = ctx.out(0).data<float>();
  const int64_t work_per_plane = g.out_h * g.out_w * g.kernel_h * g.kernel_w;
  parallel_chunks(s.planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work_per_plane, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t p = begin; p < end; ++p) {
                      const float* in = px + p * g.in_h * g.in_w;
                      float* out = py + p * g.out_h * g.out_w;
                      for (int64_t oh = 0; oh < g.out_h; ++oh)
                        for (int64_t ow = 0; ow < g.out_w; ++ow) out[oh * g.out_w + ow] = reduce(in, oh, ow);
                    }
                  });
}

Status max_pool_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const PoolSetup s, pool_setup(ctx));
  const WindowGeometry& g = s.g;
  for_each_window(ctx, s, [&g](const float* in, int64_t oh, int64_t ow) {
    float best = -std::numeric_limits<float>::infinity();
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
      if (ih < 0 || ih >= g.in_h) continue;
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
        if (iw >= 0 && iw < g.in_w) best = std::max(best, in[ih * g.in_w + iw]);
      }
    }
    return best;
  });
  return Status::ok();
}

// count_include_pad=1 divides by the taps that fall on the input or on the
// explicit pads, but not on the overhang ceil_mode adds past the end pad —
// the PyTorch and ONNX Runtime rule. count_include_pad=0 divides by the
// taps on the input only.
Status average_pool_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const PoolSetup s, pool_setup(ctx));
  HS_ASSIGN_OR_RETURN(const int64_t count_include_pad, ctx.attrs().get_int("count_include_pad", 0));
  const WindowGeometry& g = s.g;
  const bool include_pad = count_include_pad != 0;
  for_each_window(ctx, s, [&g, include_pad](const float* in, int64_t oh, int64_t ow) {
    double sum = 0.0;
    int64_t taps = 0;
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
      const bool h_in = ih >= 0 && ih < g.in_h;
      const bool h_padded = ih >= -g.pad_top && ih < g.in_h + g.pad_bottom;
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
        const bool w_in = iw >= 0 && iw < g.in_w;
        const bool w_padded = iw >= -g.pad_left && iw < g.in_w + g.pad_right;
        if (h_in && w_in) {
          sum += in[ih * g.in_w + iw];
          ++taps;
        } else if (include_pad && h_padded && w_padded) {
          ++taps;
        }
      }
    }
    return taps == 0 ? 0.f : static_cast<float>(sum / static_cast<double>(taps));
  });
  return Status::ok();
}

Status global_pool_kernel(const KernelContext& ctx, bool max) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kFloat32 || x.shape().size() < 3)
    return invalid_argument("input must be f32 of rank >= 3, got " + x.type().to_string());
  Shape out_shape(x.shape().size(), 1);
  out_shape[0] = x.shape()[0];
  out_shape[1] = x.shape()[1];
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kFloat32, std::move(out_shape)}));
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t plane = x.num_elements() / std::max<int64_t>(planes, 1);
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_chunks(planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(plane, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t p = begin; p < end; ++p) {
                      if (max) {
                        float m = -INFINITY;
                        for (int64_t i = 0; i < plane; ++i) m = std::max(m, px[p * plane + i]);
                        py[p] = m;
                        continue;
                      }
                      double sum = 0.0;
                      for (int64_t i = 0; i < plane; ++i) sum += px[p * plane + i];
                      py[p] = static_cast<float>(sum / static_cast<double>(plane));
                    }
                  });
  return Status::ok();
}

}  // namespace

void register_pool_kernels(KernelTable& table) {
  table["MaxPool"] = with_node_context(max_pool_kernel);
  table["AveragePool"] = with_node_context(average_pool_kernel);
  table["GlobalAveragePool"] =
      with_node_context([](const KernelContext& ctx) { return global_pool_kernel(ctx, false); });
  table["GlobalMaxPool"] = with_node_context([](const KernelContext& ctx) { return global_pool_kernel(ctx, true); });
}

}  // namespace hetsched::cpu
