// The portable kernel of graph/passes/fuse_channel_shuffle.h's op
// (registered from tensor.cc): Y[n, j*g + i] = X[n, i*(C/g) + j], one
// H*W plane at a time, in NCHW.
#include <cstring>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/passes/fuse_channel_shuffle.h"

namespace hetsched::cpu {

void register_channel_shuffle_kernel(KernelTable& table);

namespace {

Status channel_shuffle_kernel(const KernelContext& ctx) {
  const Tensor& x = ctx.in(0);
  Tensor& y = ctx.out(0);
  HS_ASSIGN_OR_RETURN(const int64_t g, ctx.attrs().require_int("group"));
  if (x.dtype() != DType::kFloat32 || x.shape().size() != 4 || y.type() != x.type())
    return ctx.error("expects an f32 [N,C,H,W] input and an output of its type, got " + x.type().to_string() +
                     " and " + y.type().to_string());
  const int64_t n = x.shape()[0], c = x.shape()[1], plane = x.shape()[2] * x.shape()[3];
  if (g < 1 || c % g != 0) return ctx.error("group " + std::to_string(g) + " does not divide " + std::to_string(c) + " channels");
  const int64_t per_group = c / g;
  const float* px = x.data<float>();
  float* py = y.data<float>();
  parallel_for_each(n * c, [&](int64_t out_plane) {
    const int64_t b = out_plane / c, oc = out_plane % c;
    const int64_t ic = oc % g * per_group + oc / g;  // oc = j*g + i reads channel i*(C/g) + j
    std::memcpy(py + out_plane * plane, px + (b * c + ic) * plane, static_cast<size_t>(plane) * sizeof(float));
  });
  return Status::ok();
}

}  // namespace

void register_channel_shuffle_kernel(KernelTable& table) {
  table.emplace(kChannelShuffleOp, with_node_context(channel_shuffle_kernel));
}

}  // namespace hetsched::cpu
