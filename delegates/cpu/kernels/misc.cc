// Portable kernels of graph/ops_misc.cc: Size, IsNaN, IsInf, DepthToSpace,
// SpaceToDepth, CumSum and InstanceNormalization.
#include <cmath>
#include <vector>

#include "delegates/cpu/kernel.h"
#include "delegates/cpu/kernels/extra_util.h"
#include "graph/op_schema.h"

namespace hetsched::cpu {

namespace {

Status size_kernel(const KernelContext& ctx) {
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{DType::kInt64, {}}));
  ctx.out(0).data<int64_t>()[0] = ctx.in(0).num_elements();
  return Status::ok();
}

KernelFn is_special(bool nan) {
  return [nan](const KernelContext& ctx) -> Status {
    const Tensor& x = ctx.in(0);
    if (x.dtype() != DType::kFloat32) return invalid_argument("input must be f32, got " + x.type().to_string());
    HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{DType::kBool, x.shape()}));
    HS_ASSIGN_OR_RETURN(const int64_t neg, ctx.attrs().get_int("detect_negative", 1));
    HS_ASSIGN_OR_RETURN(const int64_t pos, ctx.attrs().get_int("detect_positive", 1));
    const float* px = x.data<float>();
    uint8_t* py = ctx.out(0).data<uint8_t>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      const float v = px[i];
      py[i] = nan ? std::isnan(v) : (std::isinf(v) && ((v > 0 && pos) || (v < 0 && neg)));
    }
    return Status::ok();
  };
}

// y[n, c, h, w] = x[n, c', h', w'] with the index maps of ONNX's definitions
// (DepthToSpace DCR: depth, column, row; CRD: column, row, depth).
Status depth_space_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const int64_t b, ctx.attrs().require_int("blocksize"));
  const bool to_space = ctx.node.op == "DepthToSpace";
  HS_ASSIGN_OR_RETURN(const std::string mode, ctx.attrs().get_string("mode", "DCR"));
  const Shape& s = x.shape();
  const Shape out = to_space ? Shape{s[0], s[1] / (b * b), s[2] * b, s[3] * b}
                             : Shape{s[0], s[1] * b * b, s[2] / b, s[3] / b};
  HS_RETURN_IF_ERROR(check_single_output(ctx, TensorType{x.dtype(), out}));
  const float* px = x.data<float>();
  float* py = ctx.out(0).data<float>();
  const int64_t C = s[1], H = s[2], W = s[3];
  // Walk the depth-side tensor (x for DepthToSpace, y for SpaceToDepth) and
  // move each element between it and the space side.
  const int64_t Cs = to_space ? C / (b * b) : C;        // channels on the space side
  const int64_t Hd = to_space ? H : H / b, Wd = to_space ? W : W / b;  // depth side's spatial dims
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < Cs; ++c)
      for (int64_t i = 0; i < b; ++i)
        for (int64_t j = 0; j < b; ++j) {
          const int64_t dc = !to_space || mode == "DCR" ? (i * b + j) * Cs + c : c * b * b + i * b + j;
          for (int64_t h = 0; h < Hd; ++h)
            for (int64_t w = 0; w < Wd; ++w) {
              const int64_t depth = ((n * Cs * b * b + dc) * Hd + h) * Wd + w;
              const int64_t space = ((n * Cs + c) * Hd * b + h * b + i) * Wd * b + w * b + j;
              if (to_space)
                py[space] = px[depth];
              else
                py[depth] = px[space];
            }
        }
  return Status::ok();
}

template <typename T>
void cumsum_typed(const Tensor& x, Tensor& y, int64_t axis, bool exclusive, bool reverse) {
  const Shape& s = x.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= s[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < s.size(); ++d) inner *= s[d];
  const int64_t len = s[static_cast<size_t>(axis)];
  const T* px = x.data<T>();
  T* py = y.data<T>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      T acc = 0;
      for (int64_t k = 0; k < len; ++k) {
        const int64_t at = (o * len + (reverse ? len - 1 - k : k)) * inner + i;
        if (exclusive) {
          py[at] = acc;
          acc += px[at];
        } else {
          acc += px[at];
          py[at] = acc;
        }
      }
    }
}

Status cumsum_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const int64_t axis,
                      normalize_axis(ctx.in(1).int_at(0), static_cast<int64_t>(x.shape().size())));
  HS_ASSIGN_OR_RETURN(const int64_t exclusive, ctx.attrs().get_int("exclusive", 0));
  HS_ASSIGN_OR_RETURN(const int64_t reverse, ctx.attrs().get_int("reverse", 0));
  HS_RETURN_IF_ERROR(check_single_output(ctx, x.type()));
  const bool ok = visit_numeric(x.dtype(), [&](auto t) {
    cumsum_typed<decltype(t)>(x, ctx.out(0), axis, exclusive != 0, reverse != 0);
  });
  if (!ok) return invalid_argument("expects f32, i64 or i32 input, got " + x.type().to_string());
  return Status::ok();
}

// y = scale[c] * (x - mean) / sqrt(var + epsilon) + B[c] over each (n, c)'s
// spatial elements; statistics in double.
Status instance_norm_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  HS_ASSIGN_OR_RETURN(const float epsilon, ctx.attrs().get_float("epsilon", 1e-5f));
  HS_RETURN_IF_ERROR(check_single_output(ctx, x.type()));
  const int64_t N = x.shape()[0], C = x.shape()[1], inner = x.num_elements() / std::max<int64_t>(N * C, 1);
  const float* px = x.data<float>();
  const float* scale = ctx.in(1).data<float>();
  const float* bias = ctx.in(2).data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_chunks(N * C, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const float* in = px + r * inner;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < inner; ++i) sum += in[i];
      const double mean = sum / static_cast<double>(inner);
      for (int64_t i = 0; i < inner; ++i) sq += (in[i] - mean) * (in[i] - mean);
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + epsilon);
      const int64_t c = r % C;
      for (int64_t i = 0; i < inner; ++i)
        py[r * inner + i] = static_cast<float>(scale[c] * (in[i] - mean) * inv + bias[c]);
    }
  });
  return Status::ok();
}

}  // namespace

void register_misc_kernels(KernelTable& table) {
  table["Size"] = with_node_context(size_kernel);
  table["IsNaN"] = with_node_context(is_special(true));
  table["IsInf"] = with_node_context(is_special(false));
  table["DepthToSpace"] = with_node_context(depth_space_kernel);
  table["SpaceToDepth"] = with_node_context(depth_space_kernel);
  table["CumSum"] = with_node_context(cumsum_kernel);
  table["InstanceNormalization"] = with_node_context(instance_norm_kernel);
}

}  // namespace hetsched::cpu
