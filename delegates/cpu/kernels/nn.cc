// BatchNormalization, and the registration of every NN kernel family.
#include <cmath>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"

namespace hetsched::cpu {

namespace {

// Inference form: y = (x - mean) / sqrt(var + epsilon) * scale + B, folded
// into one multiply-add per element with per-channel factors.
Status batch_norm_kernel(const KernelContext& ctx) {
  if (ctx.outputs.size() > 1) return unsupported("training mode is unsupported: only output Y is supported");
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kFloat32 || x.shape().size() < 2)
    return invalid_argument("input X must be f32 of rank >= 2, got " + x.type().to_string());
  const int64_t channels = x.shape()[1];
  for (size_t i = 1; i < 5; ++i)
    if (ctx.in(i).dtype() != DType::kFloat32 || ctx.in(i).num_elements() != channels)
      return invalid_argument("input " + std::to_string(i) + " must be f32[" + std::to_string(channels) + "], got " +
                              ctx.in(i).type().to_string());
  HS_RETURN_IF_ERROR(check_output(ctx, 0, x.type()));
  HS_ASSIGN_OR_RETURN(const float epsilon, ctx.attrs().get_float("epsilon", 1e-5f));
  const float* scale = ctx.in(1).data<float>();
  const float* shift = ctx.in(2).data<float>();
  const float* mean = ctx.in(3).data<float>();
  const float* var = ctx.in(4).data<float>();
  std::vector<float> mul(static_cast<size_t>(channels)), add(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    mul[c] = scale[c] / std::sqrt(var[c] + epsilon);
    add[c] = shift[c] - mean[c] * mul[c];
  }
  const int64_t planes = x.shape()[0] * channels;
  const int64_t plane = planes == 0 ? 0 : x.num_elements() / planes;
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_chunks(planes, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(plane, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t p = begin; p < end; ++p) {
                      const float m = mul[p % channels], a = add[p % channels];
                      for (int64_t i = p * plane; i < (p + 1) * plane; ++i) py[i] = px[i] * m + a;
                    }
                  });
  return Status::ok();
}

}  // namespace

void register_nn_kernels(KernelTable& table) {
  table["BatchNormalization"] = with_node_context(batch_norm_kernel);
  register_conv_kernels(table);
  register_pool_kernels(table);
  register_matmul_kernels(table);
  register_reduce_kernels(table);
  register_softmax_kernels(table);
  register_norm_kernels(table);
}

}  // namespace hetsched::cpu
