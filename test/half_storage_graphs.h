// What both GPU delegates' f16-storage tests share
// (test/vulkan_half_storage_test.cc, test/vgf_half_storage_test.cc): the
// graphs that put every kernel of either delegate between f16 tensors
// (compared there with the portable CPU kernels), and the refusal on a
// device without storageBuffer16BitAccess. Header-only (test/CMakeLists
// compiles only test_util.cc beside each test).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <functional>
#include <memory>

#include "delegates/delegate.h"
#include "graph/builder.h"
#include "shared_gpu/shared_gpu_registry.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"
#include "test/vulkan_test_driver.h"

namespace hetsched::testing::half_graphs {

using Ints = std::vector<int64_t>;

inline ValueId weights(GraphBuilder& b, const std::string& name, Shape shape, uint32_t seed, float scale = 0.3f) {
  return b.constant(name, random_tensor(shape, seed, -scale, scale));
}

// Conv + BatchNormalization + Relu, a 1x1 conv with a residual Add, a
// depthwise conv + HardSwish, max and average pools, Resize, Pad,
// ConvTranspose, GlobalAveragePool, Flatten, Gemm, Softmax. Outputs: the
// Softmax, and a Sigmoid of the ConvTranspose's every pixel.
inline Graph cnn() {
  GraphBuilder b("half_cnn");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 8, 13, 11}});
  ValueId a = b.op("Conv", {x, weights(b, "w1", {16, 8, 3, 3}, 1), weights(b, "b1", {16}, 2)}, {{"pads", Ints{1, 1, 1, 1}}});
  a = b.op("BatchNormalization", {a, b.constant("s", random_tensor({16}, 3, 0.5f, 1.5f)), weights(b, "bb", {16}, 4),
                                  weights(b, "m", {16}, 5), b.constant("v", random_tensor({16}, 6, 0.5f, 2.f))});
  a = b.op("Relu", {a});
  ValueId r = b.op("Conv", {a, weights(b, "w2", {16, 16, 1, 1}, 7)});
  r = b.op("Relu", {b.op("Add", {r, a})});
  ValueId d = b.op("Conv", {r, weights(b, "w3", {16, 1, 3, 3}, 8)}, {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{16}}});
  d = b.op("HardSwish", {d});
  const ValueId m = b.op("MaxPool", {d}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
  const ValueId p = b.op("AveragePool", {m}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}});
  const ValueId z = b.op("Resize", {p, kNoValue, b.constant_f32("sc", {4}, {1, 1, 2, 2})}, {{"mode", std::string("linear")}});
  const ValueId q = b.op("Pad", {z, b.constant_i64("pads", {8}, {0, 0, 1, 0, 0, 0, 1, 2}), b.constant_f32("pv", {}, {0.25f})});
  const ValueId t = b.op("ConvTranspose", {q, weights(b, "w4", {16, 4, 2, 2}, 9)}, {{"strides", Ints{2, 2}}});
  b.output(b.op("Sigmoid", {t}));  // every pixel, so an error upstream is not averaged away
  const ValueId g = b.op("Flatten", {b.op("GlobalAveragePool", {t})});
  const ValueId y = b.op("Gemm", {g, weights(b, "w5", {4, 10}, 10), weights(b, "b5", {10}, 11)});
  b.output(b.op("Softmax", {y}, {{"axis", int64_t{1}}}));
  return build(b);
}

// A LayerNorm, three projections, attention through Reshapes and
// Transposes with a scaled, softmaxed product of run-time matrices, the
// heads merged back, a residual from the island input (an f32 binding beside
// f16 ones), Gather, Slice, Concat, Expand, a ReduceMean and a Where.
inline Graph attention() {
  GraphBuilder b("half_attention");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 7, 24}});
  const ValueId n = b.op("LayerNormalization", {x, b.constant("g", random_tensor({24}, 20, 0.5f, 1.5f)), weights(b, "be", {24}, 21)},
                         {{"axis", int64_t{-1}}});
  auto heads = [&](const std::string& name, uint32_t seed, Ints perm) {
    const ValueId proj = b.op("MatMul", {n, weights(b, name, {24, 24}, seed)});
    return b.op("Transpose", {b.op("Reshape", {proj, b.constant_i64(name + "s", {4}, {2, 7, 4, 6})})}, {{"perm", perm}});
  };
  const ValueId q = heads("wq", 22, {0, 2, 1, 3});
  const ValueId kt = heads("wk", 23, {0, 2, 3, 1});
  const ValueId v = heads("wv", 24, {0, 2, 1, 3});
  const ValueId s = b.op("Softmax", {b.op("Div", {b.op("MatMul", {q, kt}), b.constant_f32("d", {}, {2.449f})})}, {{"axis", int64_t{-1}}});
  const ValueId o = b.op("MatMul", {s, v});
  const ValueId merged = b.op("Reshape", {b.op("Transpose", {o}, {{"perm", Ints{0, 2, 1, 3}}}), b.constant_i64("ms", {3}, {2, 7, 24})});
  const ValueId h = b.op("Tanh", {b.op("Add", {merged, x})});
  const ValueId picked = b.op("Gather", {h, b.constant_i64("idx", {3}, {0, 2, 4})}, {{"axis", int64_t{1}}});
  const ValueId sliced = b.op("Slice", {h, b.constant_i64("st", {1}, {1}), b.constant_i64("en", {1}, {5}), b.constant_i64("ax", {1}, {1})});
  const ValueId joined = b.op("Concat", {picked, sliced}, {{"axis", int64_t{1}}});
  const ValueId mean = b.op("ReduceMean", {joined}, {{"axes", Ints{-1}}});
  const ValueId wide = b.op("Expand", {mean, b.constant_i64("es", {3}, {2, 7, 3})});
  const ValueId diff = b.op("Sub", {b.op("Slice", {joined, b.constant_i64("s0", {1}, {0}), b.constant_i64("s1", {1}, {3}),
                                                   b.constant_i64("s2", {1}, {2})}),
                                    wide});
  std::vector<uint8_t> mask(7 * 3);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = i % 3 != 1;
  const ValueId keep = b.constant("mask", Tensor::from_vector(DType::kBool, {1, 7, 3}, mask));
  b.output(b.op("Where", {keep, b.op("Exp", {diff}), b.op("Neg", {diff})}));
  return build(b);
}

// Three 3x3 convs with K of 288 and 576 on a 4x4 image, the last two with
// a residual: few pixels and a long K, so the tiling sums K slices in f32
// partials and conv2d_reduce reads the f16 residual and writes f16.
inline Graph split_k() {
  GraphBuilder b("half_split_k");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 32, 4, 4}});
  auto conv = [&](ValueId in, const std::string& w, Shape shape, uint32_t seed, float scale) {
    return b.op("Conv", {in, weights(b, w, shape, seed, scale)}, {{"pads", Ints{1, 1, 1, 1}}});
  };
  const ValueId a = b.op("Relu", {conv(x, "w1", {64, 32, 3, 3}, 30, 0.1f)});
  const ValueId c = b.op("Relu", {b.op("Add", {conv(a, "w2", {64, 64, 3, 3}, 31, 0.05f), a})});
  const ValueId d = b.op("Add", {conv(c, "w3", {64, 64, 3, 3}, 32, 0.05f), c});
  b.output(b.op("Sigmoid", {d}));
  return build(b);
}

// A DenseNet block: Concats of conv outputs (each piece copied into place)
// and a grouped conv.
inline Graph dense_block() {
  GraphBuilder b("half_dense");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 8, 8}});
  std::vector<ValueId> features = {b.op("Conv", {x, weights(b, "w0", {4, 3, 3, 3}, 40)}, {{"pads", Ints{1, 1, 1, 1}}})};
  for (int k = 1; k <= 3; ++k) {
    const ValueId in = features.size() == 1 ? features[0] : b.op("Concat", features, {{"axis", int64_t{1}}});
    const ValueId w = weights(b, "w" + std::to_string(k), {4, 4 * static_cast<int64_t>(features.size()), 3, 3},
                              40 + static_cast<uint32_t>(k), 0.2f);
    features.push_back(b.op("Conv", {b.op("Relu", {in}), w}, {{"pads", Ints{1, 1, 1, 1}}}));
  }
  const ValueId all = b.op("Relu", {b.op("Concat", features, {{"axis", int64_t{1}}})});
  b.output(b.op("Conv", {all, weights(b, "wg", {8, 4, 3, 3}, 50, 0.2f)}, {{"pads", Ints{1, 1, 1, 1}}, {"group", int64_t{4}}}));
  return build(b);
}

// `g` on `delegate` with the init options `options` (storage fp16 among
// them) against the portable CPU kernels on the same random inputs: every
// output within 1e-2 of its largest |value|, printed after "[label]".
inline void expect_half_run_matches_cpu(Delegate& delegate, const Graph& g, const DelegateOptions& options,
                                        const std::string& label) {
  expect_runs_match_cpu(
      delegate, g, options, 1,
      [&](uint32_t) {
        std::vector<Tensor> inputs;
        for (size_t i = 0; i < g.inputs().size(); ++i)
          inputs.push_back(random_tensor(g.value(g.inputs()[i]).type.shape, 200 + static_cast<uint32_t>(i)));
        return inputs;
      },
      1e-2f, label + " " + g.name());
}

// A host lends `host`'s device without storageBuffer16BitAccess enabled
// (registered as token `token`): the delegate `make` makes from context
// options refuses storage fp16 at init naming the feature, and at auto
// keeps f32 and runs.
inline void expect_fp16_storage_refused_without_the_feature(
    const SharedGpuContext& host, const std::string& token,
    const std::function<Result<std::unique_ptr<Delegate>>(const DelegateOptions&)>& make) {
  SharedGpuContextCreateInfo info = lend_info(host);
  info.enabled_features.storage_buffer_16bit_access = false;
  struct Unregister {
    ~Unregister() { SharedGpuContextRegistry::get().clear_for_testing(); }
  } unregister;
  auto borrowed = SharedGpuContext::borrow(info);
  ASSERT_TRUE(borrowed.is_ok()) << borrowed.status().message();
  ASSERT_TRUE(SharedGpuContextRegistry::get().register_context(token + ":0", *borrowed).is_ok());
  Result<std::unique_ptr<Delegate>> delegate =
      make({{"gpu_shared_context_token", token}, {"gpu_shared_context_mode", "lookup_only"}});
  ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
  const Graph g = split_k();
  Result<GpuIslandDriver> refused = GpuIslandDriver::create(**delegate, g, {{{"storage", "fp16"}}, 0});
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("storage fp16 needs storageBuffer16BitAccess, which device"),
            std::string::npos)
      << refused.status().message();
  Result<GpuIslandDriver> f32 = GpuIslandDriver::create(**delegate, g, {{{"storage", "auto"}}, 0});
  ASSERT_TRUE(f32.is_ok()) << f32.status().message();
  EXPECT_TRUE(f32->run({random_tensor(g.value(g.inputs()[0]).type.shape, 1)}).is_ok());
}

}  // namespace hetsched::testing::half_graphs
