#include "examples/policy_models.h"

#include <cmath>
#include <string>

#include "examples/resnet_stack.h"
#include "graph/builder.h"

namespace hetsched::examples {

namespace {
// LeakyRelu is the CPU-only op: cheap (XNNPACK), refused by Vulkan and VGF.
ValueId leaky_relu(GraphBuilder& b, ValueId x, const std::string& name) {
  return b.op("LeakyRelu", {x}, {{"alpha", 0.1f}}, name);
}
}  // namespace

Result<Graph> make_tiny_islands(const TinyIslandsOptions& o) {
  GraphBuilder b("tiny_islands");
  ValueId x = b.input("x", {DType::kFloat32, {1, o.channels, o.size, o.size}});
  uint32_t seed = 1;
  for (int i = 0; i < o.repeats; ++i) {
    const std::string n = "rep" + std::to_string(i);
    x = leaky_relu(b, x, n + "_leaky");
    x = b.op("Add", {x, b.constant(n + "_bias", seeded_tensor({1, o.channels, 1, 1}, seed++, 0.5f))}, {}, n + "_add");
    // Relu, not Tanh: XNNPACK has no Tanh here, and portable nodes between
    // XNNPACK segments would make the CPU plan slow for reasons of its own.
    x = b.op("Relu", {x}, {}, n + "_relu");
  }
  b.output(x);
  return b.build();
}

Result<Graph> make_gpu_heavy_op(const GpuHeavyOpOptions& o) {
  GraphBuilder b("gpu_heavy_op");
  const int64_t c = o.channels;
  ValueId x = b.input("x", {DType::kFloat32, {1, c, o.size, o.size}});
  x = leaky_relu(b, x, "leaky_in");
  // He-style scale, so activations neither vanish nor blow up across Convs.
  const float w_scale = std::sqrt(6.f / static_cast<float>(c * 9));
  uint32_t seed = 1;
  for (int i = 0; i < o.convs; ++i) {
    const std::string n = "conv" + std::to_string(i);
    x = b.op("Conv",
             {x, b.constant(n + "_w", seeded_tensor({c, c, 3, 3}, seed++, w_scale)),
              b.constant(n + "_b", seeded_tensor({c}, seed++, 0.1f))},
             {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, n);
    x = leaky_relu(b, x, n + "_leaky");
  }
  b.output(x);
  return b.build();
}

}  // namespace hetsched::examples
