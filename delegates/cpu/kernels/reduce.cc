// The ReduceMean kernel.
#include <algorithm>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/op_schema.h"
#include "graph/ops_extra.h"

namespace hetsched::cpu {

namespace {

// Axes as attribute or (opset 18) input, read by reduce_params as shape
// inference reads them. Each output element is the mean of the sub-block
// the reduced dims span, summed in double so that the oracle does not lose
// precision on long reductions.
Status reduce_mean_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kFloat32) return invalid_argument("input must be f32, got " + x.type().to_string());
  HS_ASSIGN_OR_RETURN(const ReduceParams p, reduce_params(ctx.node.op, ctx.attrs(), ctx.opset, x.shape(),
                                                          ctx.has_input(1), ctx.has_input(1) ? &ctx.in(1) : nullptr));
  const Shape& shape = x.shape();
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (p.noop) {
    HS_RETURN_IF_ERROR(check_output(ctx, 0, x.type()));
    std::copy_n(x.data<float>(), x.num_elements(), ctx.out(0).data<float>());
    return Status::ok();
  }
  const std::vector<bool>& reduced = p.reduced;
  const bool keepdims = p.keepdims;

  // Kept and reduced dims with their input strides, outermost first.
  Shape out_shape, kept_dims, kept_strides, red_dims, red_strides;
  int64_t stride = 1;
  std::vector<int64_t> strides(shape.size());
  for (int64_t d = rank; d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      red_dims.push_back(shape[d]);
      red_strides.push_back(strides[d]);
      if (keepdims) out_shape.push_back(1);
    } else {
      kept_dims.push_back(shape[d]);
      kept_strides.push_back(strides[d]);
      out_shape.push_back(shape[d]);
    }
  }
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kFloat32, out_shape}));
  const int64_t outputs = shape_elements(kept_dims);
  const int64_t count = shape_elements(red_dims);
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_chunks(outputs, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(count, 1)),
                  [&](int64_t begin, int64_t end) {
                    std::vector<int64_t> idx(red_dims.size());
                    for (int64_t o = begin; o < end; ++o) {
                      int64_t base = 0, rest = o;
                      for (size_t d = kept_dims.size(); d-- > 0;) {
                        base += rest % kept_dims[d] * kept_strides[d];
                        rest /= kept_dims[d];
                      }
                      // Odometer over the reduced dims.
                      std::fill(idx.begin(), idx.end(), 0);
                      double sum = 0.0;
                      int64_t offset = base;
                      for (int64_t i = 0; i < count; ++i) {
                        sum += px[offset];
                        for (size_t d = red_dims.size(); d-- > 0;) {
                          offset += red_strides[d];
                          if (++idx[d] < red_dims[d]) break;
                          offset -= idx[d] * red_strides[d];
                          idx[d] = 0;
                        }
                      }
                      py[o] = count == 0 ? 0.f : static_cast<float>(sum / static_cast<double>(count));
                    }
                  });
  return Status::ok();
}

}  // namespace

void register_reduce_kernels(KernelTable& table) { table["ReduceMean"] = with_node_context(reduce_mean_kernel); }

}  // namespace hetsched::cpu
