// The portable kernel of graph/passes/fuse_channel_shuffle.h's op
// (registered from tensor.cc): X the inputs concatenated along C,
// Y[n, j*g + i] = X[n, i*(C/g) + j], one H*W plane at a time, in NCHW.
#include <cstring>
#include <utility>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/passes/fuse_channel_shuffle.h"

namespace hetsched::cpu {

void register_channel_shuffle_kernel(KernelTable& table);

namespace {

Status channel_shuffle_kernel(const KernelContext& ctx) {
  Tensor& y = ctx.out(0);
  HS_ASSIGN_OR_RETURN(const int64_t g, ctx.attrs().require_int("group"));
  if (y.dtype() != DType::kFloat32 || y.shape().size() != 4)
    return ctx.error("expects an f32 [N,C,H,W] output, got " + y.type().to_string());
  const int64_t n = y.shape()[0], c = y.shape()[1], plane = y.shape()[2] * y.shape()[3];
  // The input and its channel that each channel of the concatenation is.
  std::vector<std::pair<const Tensor*, int64_t>> source;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const Tensor& x = ctx.in(i);
    if (x.dtype() != DType::kFloat32 || x.shape().size() != 4 || x.shape()[0] != n ||
        x.shape()[2] * x.shape()[3] != plane)
      return ctx.error("input " + std::to_string(i) + " " + x.type().to_string() + " does not fit output " +
                       y.type().to_string());
    for (int64_t k = 0; k < x.shape()[1]; ++k) source.emplace_back(&x, k);
  }
  if (static_cast<int64_t>(source.size()) != c || g < 1 || c % g != 0)
    return ctx.error("inputs of " + std::to_string(source.size()) + " channels and group " + std::to_string(g) +
                     " do not make output " + y.type().to_string());
  const int64_t per_group = c / g;
  float* py = y.data<float>();
  parallel_for_each(n * c, [&](int64_t out_plane) {
    const int64_t b = out_plane / c, oc = out_plane % c;
    const auto& [x, k] = source[static_cast<size_t>(oc % g * per_group + oc / g)];  // oc = j*g + i reads i*(C/g) + j
    const int64_t xc = x->shape()[1];
    std::memcpy(py + out_plane * plane, x->data<float>() + (b * xc + k) * plane,
                static_cast<size_t>(plane) * sizeof(float));
  });
  return Status::ok();
}

}  // namespace

void register_channel_shuffle_kernel(KernelTable& table) {
  table.emplace(kChannelShuffleOp, with_node_context(channel_shuffle_kernel));
}

}  // namespace hetsched::cpu
