// The ConvTranspose kernel (any number of spatial dims, grouped, NCHW).
//
// Per image and group it multiplies the transposed weights (M/g*taps x C/g)
// by the input (C/g x spatial) into columns, one row per (output channel,
// kernel tap), then scatters each column row into the output plane it lands
// on (col2im). The geometry — pads from auto_pad or output_shape, the output
// size — comes from conv_transpose_geometry, the same function shape
// inference uses.

#include <algorithm>
#include <vector>

#include "delegates/cpu/kernels/extra_util.h"
#include "graph/ops_extra.h"

namespace hetsched::cpu {

namespace {

// Runs the GEMM of every (image, group): the group's transposed weights
// ((M/g x taps) x C/g) by its input (C/g x spatial) into columns, one row
// per (output channel, tap); then, per output channel, fills its plane with
// the bias and has scatter(columns of the channel's taps, plane) add them in.
// Each task owns whole output planes, so the scatter needs no locks.
template <typename Scatter>
void conv_transpose_by_columns(const KernelContext& ctx, const ConvTransposeGeometry& g, const float* bias,
                               const Scatter& scatter) {
  const Tensor& x = ctx.in(0);
  int64_t taps = 1, in_plane = 1, out_plane = 1;
  for (size_t d = 0; d < g.in.size(); ++d) {
    taps *= g.kernel[d];
    in_plane *= g.in[d];
    out_plane *= g.out[d];
  }
  const int64_t batch = x.shape()[0], channels = x.shape()[1];
  const int64_t group_in = channels / g.group, group_out = g.out_channels / g.group, rows = group_out * taps;
  // Weights of group gi as rows x group_in, so that one GEMM gives every column.
  std::vector<float> wt(static_cast<size_t>(g.group * rows * group_in));
  const float* pw = ctx.in(1).data<float>();
  for (int64_t gi = 0; gi < g.group; ++gi)
    for (int64_t c = 0; c < group_in; ++c)
      for (int64_t r = 0; r < rows; ++r)
        wt[static_cast<size_t>((gi * rows + r) * group_in + c)] = pw[(gi * group_in + c) * rows + r];
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  std::vector<float> col(static_cast<size_t>(rows * in_plane));
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t gi = 0; gi < g.group; ++gi) {
      parallel_gemm_f32(rows, in_plane, group_in, wt.data() + gi * rows * group_in, group_in,
                        px + (n * channels + gi * group_in) * in_plane, in_plane, col.data(), in_plane, false);
      parallel_for_each(group_out, [&](int64_t m) {
        const int64_t oc = gi * group_out + m;
        float* plane = py + (n * g.out_channels + oc) * out_plane;
        std::fill(plane, plane + out_plane, bias ? bias[oc] : 0.f);
        scatter(col.data() + m * taps * in_plane, plane);
      });
    }
}

Status conv_transpose_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& w = ctx.in(1);
  if (x.dtype() != DType::kFloat32 || w.dtype() != DType::kFloat32)
    return invalid_argument("expects f32 X and W, got X " + x.type().to_string() + " and W " + w.type().to_string());
  HS_ASSIGN_OR_RETURN(const ConvTransposeGeometry g, conv_transpose_geometry(ctx.attrs(), x.shape(), w.shape()));
  Shape out_shape{x.shape()[0], g.out_channels};
  out_shape.insert(out_shape.end(), g.out.begin(), g.out.end());
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{DType::kFloat32, out_shape}));
  const float* bias = nullptr;
  if (ctx.has_input(2)) {
    if (ctx.in(2).dtype() != DType::kFloat32 || ctx.in(2).num_elements() != g.out_channels)
      return invalid_argument("bias must be f32[" + std::to_string(g.out_channels) + "], got " +
                              ctx.in(2).type().to_string());
    bias = ctx.in(2).data<float>();
  }

  const size_t nsp = g.in.size();
  if (nsp > 2) {
    // 3 or more spatial dims (3-D decoders): every dim's index worked out
    // per input element.
    int64_t taps = 1, in_plane = 1;
    for (size_t d = 0; d < nsp; ++d) {
      taps *= g.kernel[d];
      in_plane *= g.in[d];
    }
    conv_transpose_by_columns(ctx, g, bias, [&](const float* columns, float* plane) {
      std::vector<int64_t> k(nsp), i(nsp);
      for (int64_t t = 0; t < taps; ++t) {
        for (int64_t rest = t, d = static_cast<int64_t>(nsp) - 1; d >= 0; --d) {
          k[static_cast<size_t>(d)] = rest % g.kernel[static_cast<size_t>(d)];
          rest /= g.kernel[static_cast<size_t>(d)];
        }
        const float* src = columns + t * in_plane;
        for (int64_t p = 0; p < in_plane; ++p) {
          for (int64_t rest = p, d = static_cast<int64_t>(nsp) - 1; d >= 0; --d) {
            i[static_cast<size_t>(d)] = rest % g.in[static_cast<size_t>(d)];
            rest /= g.in[static_cast<size_t>(d)];
          }
          int64_t index = 0;
          bool inside = true;
          for (size_t d = 0; d < nsp && inside; ++d) {
            const int64_t o = i[d] * g.strides[d] - g.pad_begin[d] + k[d] * g.dilations[d];
            inside = o >= 0 && o < g.out[d];
            index = index * g.out[d] + o;
          }
          if (inside) plane[index] += src[p];
        }
      }
    });
    return Status::ok();
  }
  // 1-D runs as a height-1 image.
  const bool two_d = nsp == 2;
  const int64_t in_h = two_d ? g.in[0] : 1, in_w = g.in.back();
  const int64_t out_h = two_d ? g.out[0] : 1, out_w = g.out.back();
  const int64_t k_h = two_d ? g.kernel[0] : 1, k_w = g.kernel.back();
  const int64_t s_h = two_d ? g.strides[0] : 1, s_w = g.strides.back();
  const int64_t d_h = two_d ? g.dilations[0] : 1, d_w = g.dilations.back();
  const int64_t p_h = two_d ? g.pad_begin[0] : 0, p_w = g.pad_begin.back();
  const int64_t in_plane = in_h * in_w;
  conv_transpose_by_columns(ctx, g, bias, [&](const float* columns, float* plane) {
    for (int64_t kh = 0; kh < k_h; ++kh)
      for (int64_t kw = 0; kw < k_w; ++kw) {
        const float* src = columns + (kh * k_w + kw) * in_plane;
        for (int64_t ih = 0; ih < in_h; ++ih) {
          const int64_t oh = ih * s_h - p_h + kh * d_h;
          if (oh < 0 || oh >= out_h) continue;
          float* dst = plane + oh * out_w;
          const float* row = src + ih * in_w;
          for (int64_t iw = 0; iw < in_w; ++iw) {
            const int64_t ow = iw * s_w - p_w + kw * d_w;
            if (ow >= 0 && ow < out_w) dst[ow] += row[iw];
          }
        }
      }
  });
  return Status::ok();
}

}  // namespace

void register_extra_conv_transpose_kernels(KernelTable& table) {
  table["ConvTranspose"] = with_node_context(conv_transpose_kernel);
}

}  // namespace hetsched::cpu
