#include "examples/scheduler_models.h"

#include <cmath>
#include <string>

#include "examples/resnet_stack.h"
#include "graph/builder.h"

namespace hetsched::examples {

namespace {
// Appends `layers` 3×3 layers of `op` (Conv or ConvTranspose, stride 1, pad 1:
// the shape stays), with a Relu after each Conv.
ValueId stack(GraphBuilder& b, ValueId x, const std::string& op, int layers, int64_t c, const std::string& prefix,
              uint32_t& seed) {
  const float w_scale = std::sqrt(6.f / static_cast<float>(c * 9));
  for (int i = 0; i < layers; ++i) {
    const std::string n = prefix + std::to_string(i);
    x = b.op(op,
             {x, b.constant(n + "_w", seeded_tensor({c, c, 3, 3}, seed++, w_scale)),
              b.constant(n + "_b", seeded_tensor({c}, seed++, 0.1f))},
             {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, n);
    if (op == "Conv") x = b.op("Relu", {x}, {}, n + "_relu");
  }
  return x;
}
}  // namespace

Result<Graph> make_parallel_branches(const SchedulerModelOptions& o) {
  GraphBuilder b("parallel_branches");
  ValueId x = b.input("x", {DType::kFloat32, {1, o.channels, o.size, o.size}});
  uint32_t seed = 1;
  if (o.gpu_layers > 0) b.output(stack(b, x, "Conv", o.gpu_layers, o.channels, "gpu_conv", seed));
  if (o.cpu_layers > 0) b.output(stack(b, x, "ConvTranspose", o.cpu_layers, o.channels, "cpu_deconv", seed));
  return b.build();
}

Result<Graph> make_cpu_gpu_cpu(const SchedulerModelOptions& o) {
  GraphBuilder b("cpu_gpu_cpu");
  ValueId x = b.input("x", {DType::kFloat32, {1, o.channels, o.size, o.size}});
  uint32_t seed = 1;
  x = stack(b, x, "ConvTranspose", o.cpu_layers, o.channels, "pre_deconv", seed);
  x = stack(b, x, "Conv", o.gpu_layers, o.channels, "gpu_conv", seed);
  x = stack(b, x, "ConvTranspose", o.cpu_layers, o.channels, "post_deconv", seed);
  b.output(x);
  return b.build();
}

}  // namespace hetsched::examples
