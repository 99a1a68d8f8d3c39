#include "examples/resnet_stack.h"

#include <cmath>
#include <random>

#include "graph/builder.h"

namespace hetsched::examples {

Tensor seeded_tensor(const Shape& shape, uint32_t seed, float scale) {
  Tensor t(TensorType{DType::kFloat32, shape});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

Result<Graph> make_resnet_stack(const ResnetStackOptions& o) {
  GraphBuilder b("resnet_stack");
  const int64_t c = o.channels;
  ValueId x = b.input("x", {DType::kFloat32, {1, c, o.size, o.size}});
  // He-style uniform scale keeps activations of order 1 through the stack.
  const float w_scale = std::sqrt(6.f / static_cast<float>(c * 9));
  const std::vector<int64_t> pads{1, 1, 1, 1};
  uint32_t seed = 1;
  for (int i = 0; i < o.blocks; ++i) {
    const std::string n = "block" + std::to_string(i);
    const auto conv = [&](ValueId in, const std::string& name) {
      return b.op("Conv",
                  {in, b.constant(name + "_w", seeded_tensor({c, c, 3, 3}, seed++, w_scale)),
                   b.constant(name + "_b", seeded_tensor({c}, seed++, 0.1f))},
                  {{"pads", pads}}, name);
    };
    ValueId y = b.op("Relu", {conv(x, n + "_conv1")}, {}, n + "_relu1");
    y = conv(y, n + "_conv2");
    x = b.op("Relu", {b.op("Add", {y, x}, {}, n + "_add")}, {}, n + "_relu2");
  }
  b.output(x);
  return b.build();
}

}  // namespace hetsched::examples
