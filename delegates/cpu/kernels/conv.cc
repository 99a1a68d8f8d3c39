// The Conv kernel (1-D and 2-D, grouped, NCHW; 3-D and more by the same
// im2col and GEMM over flattened spatial dims) and the sliding-window
// geometry it shares with the pools.

#include <algorithm>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/passes/fused_activation.h"

namespace hetsched::cpu {

namespace {

Result<std::vector<int64_t>> window_ints(const KernelContext& ctx, const std::string& name, size_t count,
                                         int64_t fallback) {
  HS_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.attrs().get_ints(name, std::vector<int64_t>(count, fallback)));
  if (v.size() != count)
    return invalid_argument("attribute '" + name + "' has " + std::to_string(v.size()) + " values, expected " +
                            std::to_string(count));
  return v;
}

}  // namespace

Result<WindowGeometryNd> window_geometry_nd(const KernelContext& ctx, const Shape& x, const std::vector<int64_t>& kernel,
                                            const Shape& y, bool ceil_mode) {
  const size_t nsp = kernel.size();
  if (nsp < 1 || x.size() != nsp + 2 || y.size() != nsp + 2)
    return invalid_argument("expects windows over (N, C, spatial...), got input " + shape_to_string(x) + ", output " +
                            shape_to_string(y) + " and a " + std::to_string(nsp) + "-D window");
  WindowGeometryNd g;
  g.kernel = kernel;
  HS_ASSIGN_OR_RETURN(g.stride, window_ints(ctx, "strides", nsp, 1));
  HS_ASSIGN_OR_RETURN(g.dilation, window_ints(ctx, "dilations", nsp, 1));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, window_ints(ctx, "pads", 2 * nsp, 0));
  HS_ASSIGN_OR_RETURN(const std::string auto_pad, ctx.attrs().get_string("auto_pad", "NOTSET"));
  g.in.assign(x.begin() + 2, x.end());
  g.out.resize(nsp);
  g.begin.resize(nsp);
  g.end.resize(nsp);
  for (size_t i = 0; i < nsp; ++i) {
    const int64_t s = g.stride[i];
    const int64_t dk = (kernel[i] - 1) * g.dilation[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // Pad just enough for ceil(in / stride) windows; the odd pixel goes
      // at the end for SAME_UPPER and at the start for SAME_LOWER.
      g.out[i] = (g.in[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + dk - g.in[i]);
      g.begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.end[i] = total - g.begin[i];
      continue;
    }
    const bool valid = auto_pad == "VALID";
    g.begin[i] = valid ? 0 : pads[i];
    g.end[i] = valid ? 0 : pads[nsp + i];
    const int64_t span = g.in[i] + g.begin[i] + g.end[i] - dk;
    g.out[i] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    // Under ceil_mode a last window starting in the end padding is dropped.
    if (ceil_mode && (g.out[i] - 1) * s >= g.in[i] + g.begin[i]) --g.out[i];
  }
  if (!std::equal(g.out.begin(), g.out.end(), y.begin() + 2))
    return invalid_argument("output " + shape_to_string(y) + " does not have the spatial dims " + shape_to_string(g.out) +
                            " that the window attributes give");
  return g;
}

Result<WindowGeometry> window_geometry(const KernelContext& ctx, const Shape& x, const std::vector<int64_t>& kernel,
                                       const Shape& y, bool ceil_mode) {
  if (kernel.size() < 1 || kernel.size() > 2)
    return invalid_argument("expects 1-D or 2-D windows over (N, C, spatial...), got input " + shape_to_string(x) +
                            " and output " + shape_to_string(y));
  HS_ASSIGN_OR_RETURN(const WindowGeometryNd n, window_geometry_nd(ctx, x, kernel, y, ceil_mode));
  return window_geometry_2d(n);
}

Result<WindowGeometry> window_geometry_2d(const WindowGeometryNd& n) {
  if (n.dims() < 1 || n.dims() > 2)
    return invalid_argument("expects a 1-D or 2-D window, got " + std::to_string(n.dims()) + " spatial dims");
  WindowGeometry g;
  // 1-D windows run along the width of a height-1 image.
  const size_t w = n.dims() - 1;
  g.in_w = n.in[w];
  g.out_w = n.out[w];
  g.kernel_w = n.kernel[w];
  g.stride_w = n.stride[w];
  g.dilation_w = n.dilation[w];
  g.pad_left = n.begin[w];
  g.pad_right = n.end[w];
  if (n.dims() == 2) {
    g.in_h = n.in[0];
    g.out_h = n.out[0];
    g.kernel_h = n.kernel[0];
    g.stride_h = n.stride[0];
    g.dilation_h = n.dilation[0];
    g.pad_top = n.begin[0];
    g.pad_bottom = n.end[0];
  }
  return g;
}

namespace {

// Output pixels per task. A tile's im2col block (C/group * kh * kw rows of
// 128 floats) stays in L2 for the common layer sizes, and a 56x56 map gives
// 25 tiles to spread over the cores.
constexpr int64_t kPixelTile = 128;

// Copies the input patches of output pixels [p0, p0 + count) of one group
// into col (rows = c*kh*kw patch positions, columns = pixels), with zeros
// where a patch reaches into the padding.
void im2col_tile(const float* x, int64_t channels, const WindowGeometry& g, int64_t p0, int64_t count, float* col) {
  for (int64_t c = 0; c < channels; ++c) {
    const float* plane = x + c * g.in_h * g.in_w;
    for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
      for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
        float* dst = col + ((c * g.kernel_h + kh) * g.kernel_w + kw) * count;
        const int64_t w_offset = kw * g.dilation_w - g.pad_left;
        // One run per output row touched by the tile.
        for (int64_t j = 0; j < count;) {
          const int64_t oh = (p0 + j) / g.out_w;
          const int64_t ow0 = (p0 + j) % g.out_w;
          const int64_t run = std::min(g.out_w - ow0, count - j);
          const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
          if (ih < 0 || ih >= g.in_h) {
            std::fill(dst + j, dst + j + run, 0.f);
          } else {
            const float* row = plane + ih * g.in_w;
            for (int64_t t = 0; t < run; ++t) {
              const int64_t iw = (ow0 + t) * g.stride_w + w_offset;
              dst[j + t] = iw >= 0 && iw < g.in_w ? row[iw] : 0.f;
            }
          }
          j += run;
        }
      }
    }
  }
}

// Each task takes one image, one group, a slice of that group's output
// channels and a tile of output pixels: it gathers the tile's patches
// (im2col) and multiplies the group's weights (M/group x C/group*kh*kw) by
// them straight into the output. Output channels are sliced only when
// images x groups x tiles alone would leave cores idle.
struct ConvOperands {
  int64_t group = 1;
  const float* bias = nullptr;
  // A fused activation (graph/passes/fused_activation.h) runs on each tile after the bias.
  FusedActivation activation;
};

Result<ConvOperands> read_conv_operands(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  if (x.dtype() != DType::kFloat32 || w.dtype() != DType::kFloat32 || x.shape().size() != w.shape().size() ||
      x.shape().size() < 3)
    return invalid_argument("expects f32 X and W of one rank, 3 or more, got X " + x.type().to_string() + " and W " +
                            w.type().to_string());
  ConvOperands c;
  HS_ASSIGN_OR_RETURN(c.group, ctx.attrs().get_int("group", 1));
  const int64_t channels = x.shape()[1], out_channels = w.shape()[0];
  if (c.group < 1 || channels != w.shape()[1] * c.group || out_channels % c.group != 0)
    return invalid_argument("X " + x.type().to_string() + " and W " + w.type().to_string() + " do not fit group " +
                            std::to_string(c.group));
  if (ctx.has_input(2)) {
    if (ctx.in(2).dtype() != DType::kFloat32 || ctx.in(2).num_elements() != out_channels)
      return invalid_argument("bias must be f32[" + std::to_string(out_channels) + "], got " +
                              ctx.in(2).type().to_string());
    c.bias = ctx.in(2).data<float>();
  }
  HS_ASSIGN_OR_RETURN(c.activation, read_fused_activation(ctx.attrs()));
  if (ctx.outputs.empty() || ctx.outputs[0] == nullptr) return invalid_argument("output 0 is not allocated");
  return c;
}

// Adds the bias and applies the activation to `m_count` rows of `count`
// outputs (row stride `ld`) from output channel `first_out` on.
void bias_and_activation(const ConvOperands& c, int64_t first_out, int64_t m_count, int64_t count, float* y,
                         int64_t ld) {
  if (!c.bias && c.activation.kind == FusedActivation::Kind::kNone) return;
  for (int64_t m = 0; m < m_count; ++m) {
    float* row = y + m * ld;
    const float b = c.bias ? c.bias[first_out + m] : 0.f;
    if (c.activation.kind == FusedActivation::Kind::kNone) {
      for (int64_t j = 0; j < count; ++j) row[j] += b;
    } else {
      for (int64_t j = 0; j < count; ++j) row[j] = c.activation.apply(row[j] + b);
    }
  }
}

// Copies the patches of output pixels [p0, p0 + count) of one group, over
// any number of spatial dims, into col as im2col_tile does.
void im2col_nd_tile(const float* x, int64_t channels, const WindowGeometryNd& g, int64_t p0, int64_t count,
                    float* col) {
  const size_t nsp = g.dims();
  int64_t taps = 1, in_volume = 1;
  for (size_t d = 0; d < nsp; ++d) {
    taps *= g.kernel[d];
    in_volume *= g.in[d];
  }
  // Each pixel's first input coordinate per dim (before its tap's offset).
  std::vector<int64_t> origin(static_cast<size_t>(count) * nsp);
  for (int64_t j = 0; j < count; ++j)
    for (int64_t rest = p0 + j, d = static_cast<int64_t>(nsp) - 1; d >= 0; --d) {
      const size_t u = static_cast<size_t>(d);
      origin[static_cast<size_t>(j) * nsp + u] = rest % g.out[u] * g.stride[u] - g.begin[u];
      rest /= g.out[u];
    }
  std::vector<int64_t> offset(nsp);
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t rest = t, d = static_cast<int64_t>(nsp) - 1; d >= 0; --d) {
      const size_t u = static_cast<size_t>(d);
      offset[u] = rest % g.kernel[u] * g.dilation[u];
      rest /= g.kernel[u];
    }
    for (int64_t c = 0; c < channels; ++c) {
      const float* volume = x + c * in_volume;
      float* dst = col + (c * taps + t) * count;
      for (int64_t j = 0; j < count; ++j) {
        int64_t index = 0;
        bool inside = true;
        for (size_t d = 0; d < nsp && inside; ++d) {
          const int64_t i = origin[static_cast<size_t>(j) * nsp + d] + offset[d];
          inside = i >= 0 && i < g.in[d];
          index = index * g.in[d] + i;
        }
        dst[j] = inside ? volume[index] : 0.f;
      }
    }
  }
}

// Conv over 3 or more spatial dims: each task gathers the patches of one
// image's group for a tile of output pixels and multiplies the group's
// weights by them, as the 2-D kernel does without slicing channels.
Status conv_nd_kernel(const KernelContext& ctx) {
  HS_ASSIGN_OR_RETURN(const ConvOperands c, read_conv_operands(ctx));
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  HS_ASSIGN_OR_RETURN(const WindowGeometryNd g, window_geometry_nd(ctx, x.shape(), kernel, ctx.out(0).shape(), false));
  const int64_t batch = x.shape()[0], channels = x.shape()[1], out_channels = w.shape()[0];
  Shape out_shape{batch, out_channels};
  out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kFloat32, std::move(out_shape)}));
  int64_t pixels = 1, in_volume = 1, taps = 1;
  for (size_t d = 0; d < g.dims(); ++d) {
    pixels *= g.out[d];
    in_volume *= g.in[d];
    taps *= g.kernel[d];
  }
  const int64_t group_channels = channels / c.group, group_out = out_channels / c.group;
  const int64_t patch = group_channels * taps;
  const int64_t tiles = (pixels + kPixelTile - 1) / kPixelTile;
  const float* px = x.data<float>();
  const float* pw = w.data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_for_each(batch * c.group * tiles, [&](int64_t task) {
    const int64_t tile = task % tiles, gi = task / tiles % c.group, n = task / tiles / c.group;
    const int64_t p0 = tile * kPixelTile, count = std::min(kPixelTile, pixels - p0);
    thread_local std::vector<float> col;
    col.resize(static_cast<size_t>(patch * count));
    im2col_nd_tile(px + (n * channels + gi * group_channels) * in_volume, group_channels, g, p0, count, col.data());
    const int64_t first_out = gi * group_out;
    float* y = py + (n * out_channels + first_out) * pixels + p0;
    gemm_f32(group_out, count, patch, pw + first_out * patch, patch, col.data(), count, y, pixels, false);
    bias_and_activation(c, first_out, group_out, count, y, pixels);
  });
  return Status::ok();
}

Status conv_kernel(const KernelContext& ctx) {
  if (ctx.in(0).shape().size() > 4) return conv_nd_kernel(ctx);
  HS_ASSIGN_OR_RETURN(const ConvOperands operands, read_conv_operands(ctx));
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  const int64_t group = operands.group;
  const int64_t batch = x.shape()[0], channels = x.shape()[1], out_channels = w.shape()[0];
  const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  HS_ASSIGN_OR_RETURN(const WindowGeometry g, window_geometry(ctx, x.shape(), kernel, ctx.out(0).shape(), false));
  Shape out_shape{batch, out_channels, g.out_h, g.out_w};
  if (kernel.size() == 1) out_shape.erase(out_shape.begin() + 2);
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kFloat32, std::move(out_shape)}));

  const int64_t group_channels = channels / group;
  const int64_t group_out = out_channels / group;
  const int64_t patch = group_channels * g.kernel_h * g.kernel_w;
  const int64_t pixels = g.out_h * g.out_w;
  const int64_t in_plane = g.in_h * g.in_w;
  // A 1x1 stride-1 unpadded conv reads its patches straight from X.
  const bool pointwise = g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 &&
                         g.pad_left == 0 && g.pad_bottom == 0 && g.pad_right == 0;

  const int64_t tiles = (pixels + kPixelTile - 1) / kPixelTile;
  const int64_t base_tasks = batch * group * tiles;
  // Aim for 16 tasks, but keep at least 16 output channels per slice so
  // that repeating the im2col of a tile stays cheap next to its GEMM.
  constexpr int64_t kTargetTasks = 16, kMinSliceChannels = 16;
  const int64_t slices = std::clamp<int64_t>((kTargetTasks + base_tasks - 1) / base_tasks, 1,
                                             std::max<int64_t>(1, group_out / kMinSliceChannels));
  const int64_t slice_channels = (group_out + slices - 1) / slices;

  const float* px = x.data<float>();
  const float* pw = w.data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_for_each(base_tasks * slices, [&](int64_t task) {
    const int64_t slice = task % slices;
    const int64_t tile = task / slices % tiles;
    const int64_t gi = task / slices / tiles % group;
    const int64_t n = task / slices / tiles / group;
    const int64_t p0 = tile * kPixelTile;
    const int64_t count = std::min(kPixelTile, pixels - p0);
    const int64_t m0 = slice * slice_channels;
    const int64_t m_count = std::min(slice_channels, group_out - m0);
    if (m_count <= 0) return;

    const float* x_group = px + (n * channels + gi * group_channels) * in_plane;
    const float* patches;
    int64_t ld_patches;
    if (pointwise) {
      patches = x_group + p0;
      ld_patches = in_plane;
    } else {
      // One im2col buffer per thread, kept between runs.
      thread_local std::vector<float> col;
      col.resize(static_cast<size_t>(patch * count));
      im2col_tile(x_group, group_channels, g, p0, count, col.data());
      patches = col.data();
      ld_patches = count;
    }
    const int64_t first_out = gi * group_out + m0;
    float* y = py + (n * out_channels + first_out) * pixels + p0;
    gemm_f32(m_count, count, patch, pw + first_out * patch, patch, patches, ld_patches, y, pixels, false);
    bias_and_activation(operands, first_out, m_count, count, y, pixels);
  });
  return Status::ok();
}

}  // namespace

void register_conv_kernels(KernelTable& table) { table["Conv"] = with_node_context(conv_kernel); }

}  // namespace hetsched::cpu
