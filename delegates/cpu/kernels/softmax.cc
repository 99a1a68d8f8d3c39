// The Softmax and LogSoftmax kernels, in both of ONNX's forms.
#include <algorithm>
#include <cmath>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/op_schema.h"

namespace hetsched::cpu {

namespace {

// The input is viewed as (outer, length, inner) and normalised along
// `length`. Before opset 13 Softmax flattens to 2-D at `axis` (default 1) and
// normalises whole rows: length spans every dim from `axis` on. From opset 13
// it normalises along the single dim `axis` (default -1).
Status softmax_kernel(const KernelContext& ctx, bool log) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kFloat32 || x.shape().empty())
    return invalid_argument("input must be f32 of rank >= 1, got " + x.type().to_string());
  HS_RETURN_IF_ERROR(check_output(ctx, 0, x.type()));
  const bool per_axis = ctx.opset >= 13;
  HS_ASSIGN_OR_RETURN(const int64_t attr_axis, ctx.attrs().get_int("axis", per_axis ? -1 : 1));
  const Shape& shape = x.shape();
  HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, static_cast<int64_t>(shape.size())));
  const auto [outer, length, inner] = split_for_softmax(shape, axis, ctx.opset);
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_chunks(outer * inner, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(length, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t r = begin; r < end; ++r) {
                      const int64_t base = r / inner * length * inner + r % inner;
                      const float* in = px + base;
                      float* out = py + base;
                      // Subtracting the max keeps exp() from overflowing.
                      float max = -INFINITY;
                      for (int64_t i = 0; i < length; ++i) max = std::max(max, in[i * inner]);
                      double sum = 0.0;
                      for (int64_t i = 0; i < length; ++i) {
                        out[i * inner] = std::exp(in[i * inner] - max);
                        sum += out[i * inner];
                      }
                      if (log) {  // x - max - log(sum): no log of a rounded-off probability
                        const float shift = max + static_cast<float>(std::log(sum));
                        for (int64_t i = 0; i < length; ++i) out[i * inner] = in[i * inner] - shift;
                        continue;
                      }
                      const float scale = static_cast<float>(1.0 / sum);
                      for (int64_t i = 0; i < length; ++i) out[i * inner] *= scale;
                    }
                  });
  return Status::ok();
}

}  // namespace

void register_softmax_kernels(KernelTable& table) {
  table["Softmax"] = with_node_context([](const KernelContext& ctx) { return softmax_kernel(ctx, false); });
  table["LogSoftmax"] = with_node_context([](const KernelContext& ctx) { return softmax_kernel(ctx, true); });
}

}  // namespace hetsched::cpu
