// LayerNormalization, GroupNormalization and MeanVarianceNormalization:
// statistics per row (per group, per kept index), accumulated in double so that the reference loses no precision,
// then one multiply-add per element.
#include <cmath>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/ops_norm.h"

namespace hetsched::cpu {

namespace {

struct Moments {
  double mean = 0.0;
  double inv_std = 0.0;
};

// Mean and 1/sqrt(variance + epsilon) of n values (two passes: the
// variance of centred values does not cancel as E[x^2] - E[x]^2 can).
Moments moments(const float* x, int64_t n, float epsilon) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const double mean = n == 0 ? 0.0 : sum / static_cast<double>(n);
  double sq = 0.0;
  for (int64_t i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
  const double var = n == 0 ? 0.0 : sq / static_cast<double>(n);
  return {mean, 1.0 / std::sqrt(var + static_cast<double>(epsilon))};
}

// A parameter broadcast (one way, right-aligned) to `inner` elements of the
// normalised dims, spelled out so a row reads it by index.
std::vector<float> expand_to_row(const Tensor& p, const Shape& row_dims) {
  const int64_t inner = shape_elements(row_dims);
  std::vector<float> out(static_cast<size_t>(inner));
  const std::vector<int64_t> strides = broadcast_strides(p.shape(), row_dims);
  const float* src = p.data<float>();
  for (int64_t i = 0; i < inner; ++i) {
    int64_t offset = 0, rest = i;
    for (size_t d = row_dims.size(); d-- > 0;) {
      offset += rest % row_dims[d] * strides[d];
      rest /= row_dims[d];
    }
    out[static_cast<size_t>(i)] = src[offset];
  }
  return out;
}

Status layer_norm_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    if (ctx.has_input(i) && ctx.in(i).dtype() != DType::kFloat32)
      return invalid_argument("input " + std::to_string(i) + " must be f32, got " + ctx.in(i).type().to_string());
  HS_RETURN_IF_ERROR(check_stash_type(ctx.attrs()));
  const Shape bias_shape = ctx.has_input(2) ? ctx.in(2).shape() : Shape{};
  HS_ASSIGN_OR_RETURN(const LayerNormParams p, layer_norm_params(ctx.attrs(), x.shape(), ctx.in(1).shape(),
                                                                 ctx.has_input(2) ? &bias_shape : nullptr));
  HS_RETURN_IF_ERROR(check_output(ctx, 0, x.type()));
  const TensorType stat{DType::kFloat32, layer_norm_stat_shape(x.shape(), p.axis)};
  // Omitted trailing outputs are absent; one in the middle is not allocated.
  float* mean_out = nullptr;
  float* inv_out = nullptr;
  if (ctx.outputs.size() > 1 && ctx.outputs[1]) {
    HS_RETURN_IF_ERROR(check_output(ctx, 1, stat));
    mean_out = ctx.out(1).data<float>();
  }
  if (ctx.outputs.size() > 2 && ctx.outputs[2]) {
    HS_RETURN_IF_ERROR(check_output(ctx, 2, stat));
    inv_out = ctx.out(2).data<float>();
  }
  const Shape row_dims(x.shape().begin() + p.axis, x.shape().end());
  const std::vector<float> scale = expand_to_row(ctx.in(1), row_dims);
  const std::vector<float> bias =
      ctx.has_input(2) ? expand_to_row(ctx.in(2), row_dims) : std::vector<float>(static_cast<size_t>(p.inner), 0.f);
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_chunks(p.outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(p.inner, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t r = begin; r < end; ++r) {
                      const float* row = px + r * p.inner;
                      const Moments m = moments(row, p.inner, p.epsilon);
                      for (int64_t i = 0; i < p.inner; ++i)
                        py[r * p.inner + i] = static_cast<float>((row[i] - m.mean) * m.inv_std * scale[i] + bias[i]);
                      if (mean_out) mean_out[r] = static_cast<float>(m.mean);
                      if (inv_out) inv_out[r] = static_cast<float>(m.inv_std);
                    }
                  });
  return Status::ok();
}

Status group_norm_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  for (size_t i = 0; i < 3; ++i)
    if (ctx.in(i).dtype() != DType::kFloat32)
      return invalid_argument("input " + std::to_string(i) + " must be f32, got " + ctx.in(i).type().to_string());
  HS_RETURN_IF_ERROR(check_stash_type(ctx.attrs()));
  HS_ASSIGN_OR_RETURN(const GroupNormParams p,
                      group_norm_params(ctx.attrs(), ctx.opset, x.shape(), ctx.in(1).shape(), ctx.in(2).shape()));
  HS_RETURN_IF_ERROR(check_output(ctx, 0, x.type()));
  const int64_t batch = x.shape()[0];
  const int64_t channels = x.shape()[1];
  const int64_t plane = batch * channels == 0 ? 0 : x.num_elements() / (batch * channels);
  const int64_t per_group = channels / p.groups;
  const int64_t group_size = per_group * plane;
  const float* scale = ctx.in(1).data<float>();
  const float* bias = ctx.in(2).data<float>();
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  // One task per (image, group): its channels are contiguous in NCHW.
  parallel_chunks(batch * p.groups, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(group_size, 1)),
                  [&](int64_t begin, int64_t end) {
                    for (int64_t ng = begin; ng < end; ++ng) {
                      const int64_t g = ng % p.groups;
                      const float* in = px + ng * group_size;
                      float* out = py + ng * group_size;
                      const Moments m = moments(in, group_size, p.epsilon);
                      for (int64_t c = 0; c < per_group; ++c) {
                        const int64_t k = p.per_channel ? g * per_group + c : g;
                        for (int64_t i = c * plane; i < (c + 1) * plane; ++i)
                          out[i] = static_cast<float>((in[i] - m.mean) * m.inv_std * scale[k] + bias[k]);
                      }
                    }
                  });
  return Status::ok();
}

// The statistics of MeanVarianceNormalization gather over any set of axes:
// each element adds into the slot of its index with the reduced axes
// dropped (stride 0 there). Two passes, as moments() does.
Status mvn_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.dtype() != DType::kFloat32) return invalid_argument("input X must be f32, got " + x.type().to_string());
  const Shape& s = x.shape();
  const int64_t rank = static_cast<int64_t>(s.size());
  HS_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, mvn_axes(ctx.attrs(), rank));
  HS_RETURN_IF_ERROR(check_output(ctx, 0, x.type()));
  Shape kept = s;
  for (const int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
  const std::vector<int64_t> slot_strides = broadcast_strides(kept, s);
  const int64_t n = x.num_elements(), slots = shape_elements(kept);
  const double per_slot = slots == 0 ? 0.0 : static_cast<double>(n) / static_cast<double>(slots);
  auto slot_of = [&](int64_t i) {
    int64_t slot = 0;
    for (int64_t d = rank; d-- > 0;) {
      slot += i % s[static_cast<size_t>(d)] * slot_strides[static_cast<size_t>(d)];
      i /= s[static_cast<size_t>(d)];
    }
    return slot;
  };
  const float* px = x.data<float>();
  std::vector<double> mean(static_cast<size_t>(slots), 0.0), var(static_cast<size_t>(slots), 0.0);
  for (int64_t i = 0; i < n; ++i) mean[static_cast<size_t>(slot_of(i))] += px[i];
  for (double& m : mean) m /= per_slot;
  for (int64_t i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(slot_of(i));
    var[k] += (px[i] - mean[k]) * (px[i] - mean[k]);
  }
  float* py = ctx.out(0).data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(slot_of(i));
    py[i] = static_cast<float>((px[i] - mean[k]) / (std::sqrt(var[k] / per_slot) + kMvnEpsilon));
  }
  return Status::ok();
}

}  // namespace

void register_norm_kernels(KernelTable& table) {
  table["MeanVarianceNormalization"] = with_node_context(mvn_kernel);
  table["LayerNormalization"] = with_node_context(layer_norm_kernel);
  table["GroupNormalization"] = with_node_context(group_norm_kernel);
}

}  // namespace hetsched::cpu
