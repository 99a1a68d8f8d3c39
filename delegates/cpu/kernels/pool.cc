// Pooling kernels: MaxPool (with its Indices output too), AveragePool (any
// number of spatial dims), GlobalAveragePool, GlobalMaxPool and MaxUnpool.
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

// Whether a MaxPool node asks for its Indices output.
bool wants_indices(const KernelContext& ctx) { return ctx.outputs.size() > 1 && ctx.outputs[1] != nullptr; }

// The pool's window over X's spatial dims (any number), after checking X,
// the outputs and that output 0 has the shape the window gives.
Result<WindowGeometryNd> pool_window(const KernelContext& ctx, bool indices_ok = false) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kFloat32) return invalid_argument("input must be f32, got " + x.type().to_string());
  if (wants_indices(ctx) && !indices_ok) return unsupported("Indices output is not supported here");
  if (ctx.outputs.empty() || ctx.outputs[0] == nullptr) return invalid_argument("output 0 is not allocated");
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel, ctx.attrs().require_ints("kernel_shape"));
  HS_ASSIGN_OR_RETURN(const int64_t ceil_mode, ctx.attrs().get_int("ceil_mode", 0));
  HS_ASSIGN_OR_RETURN(WindowGeometryNd g,
                      window_geometry_nd(ctx, x.shape(), kernel, ctx.out(0).shape(), ceil_mode != 0));
  Shape out_shape{x.shape()[0], x.shape()[1]};
  out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kFloat32, std::move(out_shape)}));
  return g;
}

Result<PoolSetup> pool_setup(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const WindowGeometryNd g, pool_window(ctx));
  PoolSetup setup;
  HS_ASSIGN_OR_RETURN(setup.g, window_geometry_2d(g));
  setup.planes = ctx.in(0).shape()[0] * ctx.in(0).shape()[1];
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

// MaxPool and AveragePool over 3 or more spatial dims, and MaxPool with its
// Indices output over any: per output element, every tap of its window,
// reduce(sum or max, taps on the input, taps on the input or the explicit
// pads). A Reduce with kIndexed also gives the flat position in X of its
// result, written to output 1.
template <typename Reduce>
Status pool_nd(const KernelContext& ctx, Reduce reduce) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const WindowGeometryNd g, pool_window(ctx, Reduce::kIndexed));
  int64_t* indices = nullptr;
  bool column_major = false;
  if constexpr (Reduce::kIndexed) {
    HS_ASSIGN_OR_RETURN(const int64_t storage_order, ctx.attrs().get_int("storage_order", 0));
    column_major = storage_order == 1;
    HS_RETURN_IF_ERROR(check_output(ctx, 1, TensorType{DType::kInt64, ctx.out(0).shape()}));
    indices = ctx.out(1).data<int64_t>();
  }
  const size_t nsp = g.dims();
  int64_t in_volume = 1, out_volume = 1, taps = 1;
  for (size_t d = 0; d < nsp; ++d) {
    in_volume *= g.in[d];
    out_volume *= g.out[d];
    taps *= g.kernel[d];
  }
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_for_each(x.shape()[0] * x.shape()[1], [&](int64_t plane) {
    const float* in = px + plane * in_volume;
    std::vector<int64_t> o(nsp), k(nsp);
    for (int64_t e = 0; e < out_volume; ++e) {
      for (int64_t rest = e, d = static_cast<int64_t>(nsp) - 1; d >= 0; --d) {
        o[static_cast<size_t>(d)] = rest % g.out[static_cast<size_t>(d)];
        rest /= g.out[static_cast<size_t>(d)];
      }
      typename Reduce::State state;
      for (int64_t t = 0; t < taps; ++t) {
        for (int64_t rest = t, d = static_cast<int64_t>(nsp) - 1; d >= 0; --d) {
          k[static_cast<size_t>(d)] = rest % g.kernel[static_cast<size_t>(d)];
          rest /= g.kernel[static_cast<size_t>(d)];
        }
        int64_t index = 0;
        bool inside = true, padded = true;
        for (size_t d = 0; d < nsp; ++d) {
          const int64_t i = o[d] * g.stride[d] - g.begin[d] + k[d] * g.dilation[d];
          inside = inside && i >= 0 && i < g.in[d];
          padded = padded && i >= -g.begin[d] && i < g.in[d] + g.end[d];
          index = index * g.in[d] + i;
        }
        if (inside) {
          reduce.add(state, in[index], index);
        } else if (padded) {
          reduce.pad(state);
        }
      }
      py[plane * out_volume + e] = reduce.result(state);
      if constexpr (Reduce::kIndexed) {
        // Row-major within the plane; storage_order 1 wants column-major
        // (the first spatial dim fastest).
        int64_t position = state.at;
        if (column_major) {
          position = 0;
          for (int64_t rest = state.at, d = static_cast<int64_t>(nsp) - 1; d >= 0; --d) {
            k[static_cast<size_t>(d)] = rest % g.in[static_cast<size_t>(d)];  // the maximum's coordinates
            rest /= g.in[static_cast<size_t>(d)];
          }
          for (size_t d = nsp; d-- > 0;) position = position * g.in[d] + k[d];
        }
        indices[plane * out_volume + e] = plane * in_volume + position;
      }
    }
  });
  return Status::ok();
}

struct MaxReduce {
  static constexpr bool kIndexed = false;
  struct State {
    float best = -std::numeric_limits<float>::infinity();
  };
  void add(State& s, float v, int64_t) const { s.best = std::max(s.best, v); }
  void pad(State&) const {}
  float result(const State& s) const { return s.best; }
};

// MaxPool's Indices: the first of equal maxima and where it is, as ONNX
// Runtime writes them.
struct IndexedMaxReduce {
  static constexpr bool kIndexed = true;
  struct State {
    float best = -std::numeric_limits<float>::infinity();
    int64_t at = 0;  // row-major within the plane
    bool found = false;
  };
  void add(State& s, float v, int64_t index) const {
    if (s.found && !(v > s.best)) return;
    s.best = v;
    s.at = index;
    s.found = true;
  }
  void pad(State&) const {}
  float result(const State& s) const { return s.best; }
};

// The divisor rule of average_pool_kernel's below.
struct AverageReduce {
  static constexpr bool kIndexed = false;
  bool include_pad = false;
  struct State {
    double sum = 0.0;
    int64_t taps = 0;
  };
  void add(State& s, float v, int64_t) const {
    s.sum += v;
    ++s.taps;
  }
  void pad(State& s) const { s.taps += include_pad ? 1 : 0; }
  float result(const State& s) const { return s.taps == 0 ? 0.f : static_cast<float>(s.sum / static_cast<double>(s.taps)); }
};

// MaxUnpool: zeros, then each of X's values where I puts it. I's flat
// positions are in the unpooled shape the window gives ((in - 1) x stride -
// pads + kernel); with a larger output_shape each lands at the same
// coordinates in the larger output, as ONNX's example and ORT place them.
Status max_unpool_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& idx = ctx.in(1);
  if (x.dtype() != DType::kFloat32 || idx.dtype() != DType::kInt64 || idx.shape() != x.shape() || x.shape().size() < 3)
    return invalid_argument("MaxUnpool wants f32 X of rank 3 or more and i64 I of its shape, got " +
                            x.type().to_string() + " and " + idx.type().to_string());
  if (ctx.outputs.empty() || ctx.outputs[0] == nullptr) return invalid_argument("output 0 is not allocated");
  const size_t nsp = x.shape().size() - 2;
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel, ctx.attrs().require_ints("kernel_shape"));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, ctx.attrs().get_ints("strides", std::vector<int64_t>(nsp, 1)));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, ctx.attrs().get_ints("pads", std::vector<int64_t>(2 * nsp, 0)));
  if (kernel.size() != nsp || strides.size() != nsp || pads.size() != 2 * nsp)
    return invalid_argument("attributes kernel_shape, strides and pads do not fit X " + x.type().to_string());
  Tensor& y = ctx.out(0);
  const Shape& ys = y.shape();
  std::vector<int64_t> unpooled(nsp);
  int64_t unpooled_volume = 1, out_volume = 1;
  for (size_t d = 0; d < nsp; ++d) {
    unpooled[d] = (x.shape()[2 + d] - 1) * strides[d] - pads[d] - pads[nsp + d] + kernel[d];
    unpooled_volume *= unpooled[d];
    out_volume *= ys[2 + d];
  }
  const int64_t planes = x.shape()[0] * x.shape()[1];
  float* py = y.data<float>();
  std::fill(py, py + y.num_elements(), 0.f);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t at = idx.data<int64_t>()[i];
    if (at < 0 || at >= planes * unpooled_volume)
      return invalid_argument("I[" + std::to_string(i) + "] = " + std::to_string(at) + " is outside the unpooled " +
                              std::to_string(planes) + " planes of " + shape_to_string(unpooled));
    // The position's coordinates in the unpooled plane, at the same
    // coordinates of the output's plane.
    int64_t rest = at % unpooled_volume, position = 0, scale = 1;
    bool inside = true;
    for (size_t d = nsp; d-- > 0;) {
      const int64_t c = rest % unpooled[d];
      rest /= unpooled[d];
      inside = inside && c < ys[2 + d];
      position += c * scale;
      scale *= ys[2 + d];
    }
    if (!inside)
      return invalid_argument("I[" + std::to_string(i) + "] = " + std::to_string(at) + " falls outside output_shape " +
                              y.type().to_string());
    py[at / unpooled_volume * out_volume + position] = x.data<float>()[i];
  }
  return Status::ok();
}

Status max_pool_kernel(const KernelContext& ctx) {
  if (wants_indices(ctx)) return pool_nd(ctx, IndexedMaxReduce{});
  if (ctx.in(0).shape().size() > 4) return pool_nd(ctx, MaxReduce{});
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
  HS_ASSIGN_OR_RETURN(const int64_t count_include_pad, ctx.attrs().get_int("count_include_pad", 0));
  if (ctx.in(0).shape().size() > 4) return pool_nd(ctx, AverageReduce{count_include_pad != 0});
  HS_ASSIGN_OR_RETURN(const PoolSetup s, pool_setup(ctx));
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
  table["MaxUnpool"] = with_node_context(max_unpool_kernel);
  table["AveragePool"] = with_node_context(average_pool_kernel);
  table["GlobalAveragePool"] =
      with_node_context([](const KernelContext& ctx) { return global_pool_kernel(ctx, false); });
  table["GlobalMaxPool"] = with_node_context([](const KernelContext& ctx) { return global_pool_kernel(ctx, true); });
}

}  // namespace hetsched::cpu
