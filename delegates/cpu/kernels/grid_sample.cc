// GridSample's portable kernel (graph/grid_sample.h): per output pixel, the
// grid point's taps (1, 2 x 2 or 4 x 4) and their weights are worked out
// once and applied to every channel.
#include <algorithm>
#include <cmath>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/grid_sample.h"

namespace hetsched::cpu {

namespace {

// Keys' cubic convolution weights (a = -0.75, as PyTorch and ONNX) of the
// taps at -1, 0, 1, 2 from floor(x), t = x - floor(x).
void cubic_weights(float t, float w[4]) {
  constexpr float a = -0.75f;
  const float t1 = t + 1.f, t2 = 1.f - t, t3 = 2.f - t;
  w[0] = ((a * t1 - 5.f * a) * t1 + 8.f * a) * t1 - 4.f * a;
  w[1] = ((a + 2.f) * t - (a + 3.f)) * t * t + 1.f;
  w[2] = ((a + 2.f) * t2 - (a + 3.f)) * t2 * t2 + 1.f;
  w[3] = ((a * t3 - 5.f * a) * t3 + 8.f * a) * t3 - 4.f * a;
}

// One dim's taps: input indices (-1: a zero) and weights.
struct Taps {
  int count = 0;
  int64_t index[4] = {};
  float weight[4] = {};
};

Taps dim_taps(double coordinate, int64_t length, const GridSampleParams& p) {
  const GridSampleBorder border = grid_sample_border(length, p.align_corners);
  // A NaN or huge grid value lies far off the input (zeros padding reads 0,
  // border clamps, reflection folds back): kept finite so that the index
  // arithmetic below stays defined.
  constexpr double kFar = 1e9;
  double x = std::isnan(coordinate) ? -kFar : std::clamp(coordinate, -kFar, kFar);
  if (p.mode == GridSampleMode::kNearest) x = std::nearbyint(x);  // ties to even, as PyTorch
  x = grid_sample_fold(x, length, p.padding, border);
  Taps taps;
  auto tap = [&](int64_t i, float w) {
    taps.index[taps.count] = grid_sample_index(i, length, p.padding, border);
    taps.weight[taps.count++] = w;
  };
  if (p.mode == GridSampleMode::kNearest) {
    tap(static_cast<int64_t>(x), 1.f);
    return taps;
  }
  const double x0 = std::floor(x);
  const float t = static_cast<float>(x - x0);
  const int64_t i0 = static_cast<int64_t>(x0);
  if (p.mode == GridSampleMode::kLinear) {
    tap(i0, 1.f - t);
    tap(i0 + 1, t);
    return taps;
  }
  float w[4];
  cubic_weights(t, w);
  for (int k = 0; k < 4; ++k) tap(i0 - 1 + k, w[k]);
  return taps;
}

}  // namespace

Status grid_sample_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  const Tensor& grid = ctx.in(1);
  if (x.dtype() != DType::kFloat32 || grid.dtype() != DType::kFloat32)
    return invalid_argument("inputs X and grid must be f32, got " + x.type().to_string() + " and " +
                            grid.type().to_string());
  HS_ASSIGN_OR_RETURN(const GridSampleParams p, grid_sample_params(ctx.attrs(), ctx.opset));
  HS_ASSIGN_OR_RETURN(const Shape out, grid_sample_output_shape(x.shape(), grid.shape()));
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kFloat32, out}));
  const int64_t C = x.shape()[1], H = x.shape()[2], W = x.shape()[3], Ho = out[2], Wo = out[3];
  const float* px = x.data<float>();
  const float* pg = grid.data<float>();
  float* py = ctx.out(0).data<float>();
  // One task per (image, output row).
  parallel_chunks(out[0] * Ho, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, Wo * C * 4)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t r = begin; r < end; ++r) {
                      const int64_t n = r / Ho, oy = r % Ho;
                      for (int64_t ox = 0; ox < Wo; ++ox) {
                        const float* g = pg + ((n * Ho + oy) * Wo + ox) * 2;
                        // The grid's last dim is (x, y): width first.
                        const Taps tx = dim_taps(grid_sample_denormalize(g[0], W, p.align_corners), W, p);
                        const Taps ty = dim_taps(grid_sample_denormalize(g[1], H, p.align_corners), H, p);
                        for (int64_t c = 0; c < C; ++c) {
                          const float* plane = px + (n * C + c) * H * W;
                          float sum = 0.f;
                          for (int j = 0; j < ty.count; ++j) {
                            if (ty.index[j] < 0) continue;
                            float row = 0.f;
                            for (int i = 0; i < tx.count; ++i)
                              if (tx.index[i] >= 0) row += tx.weight[i] * plane[ty.index[j] * W + tx.index[i]];
                            sum += ty.weight[j] * row;
                          }
                          py[((n * C + c) * Ho + oy) * Wo + ox] = sum;
                        }
                      }
                    }
                  });
  return Status::ok();
}

}  // namespace hetsched::cpu
