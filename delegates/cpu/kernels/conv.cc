// The Conv kernel (1-D and 2-D, grouped, NCHW) and the sliding-window
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

Result<WindowGeometry> window_geometry(const KernelContext& ctx, const Shape& x, const std::vector<int64_t>& kernel,
                                       const Shape& y, bool ceil_mode) {
  const size_t nsp = kernel.size();
  if (nsp < 1 || nsp > 2 || x.size() != nsp + 2 || y.size() != nsp + 2)
    return invalid_argument("expects 1-D or 2-D windows over (N, C, spatial...), got input " + shape_to_string(x) +
                            " and output " + shape_to_string(y));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, window_ints(ctx, "strides", nsp, 1));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> dilations, window_ints(ctx, "dilations", nsp, 1));
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> pads, window_ints(ctx, "pads", 2 * nsp, 0));
  HS_ASSIGN_OR_RETURN(const std::string auto_pad, ctx.attrs().get_string("auto_pad", "NOTSET"));

  std::vector<int64_t> in(nsp), out(nsp), begin(nsp), end(nsp);
  for (size_t i = 0; i < nsp; ++i) {
    in[i] = x[2 + i];
    const int64_t s = strides[i];
    const int64_t dk = (kernel[i] - 1) * dilations[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // Pad just enough for ceil(in / stride) windows; the odd pixel goes
      // at the end for SAME_UPPER and at the start for SAME_LOWER.
      out[i] = (in[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out[i] - 1) * s + dk - in[i]);
      begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end[i] = total - begin[i];
      continue;
    }
    const bool valid = auto_pad == "VALID";
    begin[i] = valid ? 0 : pads[i];
    end[i] = valid ? 0 : pads[nsp + i];
    const int64_t span = in[i] + begin[i] + end[i] - dk;
    out[i] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    // Under ceil_mode a last window starting in the end padding is dropped.
    if (ceil_mode && (out[i] - 1) * s >= in[i] + begin[i]) --out[i];
  }
  if (!std::equal(out.begin(), out.end(), y.begin() + 2))
    return invalid_argument("output " + shape_to_string(y) + " does not have the spatial dims " + shape_to_string(out) +
                            " that the window attributes give");

  WindowGeometry g;
  // 1-D windows run along the width of a height-1 image.
  const size_t w = nsp - 1;
  g.in_w = in[w];
  g.out_w = out[w];
  g.kernel_w = kernel[w];
  g.stride_w = strides[w];
  g.dilation_w = dilations[w];
  g.pad_left = begin[w];
  g.pad_right = end[w];
  if (nsp == 2) {
    g.in_h = in[0];
    g.out_h = out[0];
    g.kernel_h = kernel[0];
    g.stride_h = strides[0];
    g.dilation_h = dilations[0];
    g.pad_top = begin[0];
    g.pad_bottom = end[0];
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
Status conv_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  if (x.dtype() != DType::kFloat32 || w.dtype() != DType::kFloat32 || x.shape().size() != w.shape().size() ||
      (x.shape().size() != 3 && x.shape().size() != 4))
    return invalid_argument("expects f32 X and W of rank 3 or 4, got X " + x.type().to_string() + " and W " +
                            w.type().to_string());
  HS_ASSIGN_OR_RETURN(const int64_t group, ctx.attrs().get_int("group", 1));
  const int64_t batch = x.shape()[0], channels = x.shape()[1], out_channels = w.shape()[0];
  if (group < 1 || channels != w.shape()[1] * group || out_channels % group != 0)
    return invalid_argument("X " + x.type().to_string() + " and W " + w.type().to_string() + " do not fit group " +
                            std::to_string(group));
  const float* bias = nullptr;
  if (ctx.has_input(2)) {
    if (ctx.in(2).dtype() != DType::kFloat32 || ctx.in(2).num_elements() != out_channels)
      return invalid_argument("bias must be f32[" + std::to_string(out_channels) + "], got " +
                              ctx.in(2).type().to_string());
    bias = ctx.in(2).data<float>();
  }
  // A fused activation (graph/passes/fused_activation.h) runs on each tile after the bias.
  HS_ASSIGN_OR_RETURN(const FusedActivation activation, read_fused_activation(ctx.attrs()));
  const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  if (ctx.outputs.empty() || ctx.outputs[0] == nullptr) return invalid_argument("output 0 is not allocated");
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
    if (bias || activation.kind != FusedActivation::Kind::kNone)
      for (int64_t m = 0; m < m_count; ++m) {
        float* row = y + m * pixels;
        const float b = bias ? bias[first_out + m] : 0.f;
        if (activation.kind == FusedActivation::Kind::kNone) {
          for (int64_t j = 0; j < count; ++j) row[j] += b;
        } else {
          for (int64_t j = 0; j < count; ++j) row[j] = activation.apply(row[j] + b);
        }
      }
  });
  return Status::ok();
}

}  // namespace

void register_conv_kernels(KernelTable& table) { table["Conv"] = with_node_context(conv_kernel); }

}  // namespace hetsched::cpu
