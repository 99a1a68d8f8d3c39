// ONNX opsets 18 to 21 in the importer: each op form that changed (Reduce*
// axes as an input, Split's num_outputs, Pad's axes input and wrap mode,
// Resize's new attributes, Cast's saturate), the ops added
// (LayerNormalization 17, GroupNormalization 18/21, Gelu 20) end to end
// through load_model and the CPU kernels, and external tensor data.
//
// Expected values come from numpy (/usr/bin/python3), written out in the
// comments where they are not obvious, and pasted.
#include <gtest/gtest.h>

#include <cmath>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "graph/onnx_import.h"
#include "test/onnx_model_builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using namespace onnx_test;  // NOLINT: the model builders read as plain names

namespace fs = std::filesystem;

// x [2, 2] → op with axes input → y.
OnnxModel reduce_model(const std::string& op, int opset, const Ints& axes, bool keepdims) {
  OnnxModel m(opset);
  m.input("x", kFloat, {2, 2});
  m.initializer("axes", i64_proto({static_cast<int64_t>(axes.size())}, axes));
  attr(m.node(op, {"x", "axes"}, {"y"}), "keepdims", int64_t{keepdims});
  m.output("y");
  return m;
}

TEST(OnnxOpset18Test, AcceptsOpsets18To21AndRefusesNewer) {
  for (int opset : {18, 19, 20, 21}) {
    auto r = import_model(relu_model(opset));
    ASSERT_TRUE(r.is_ok()) << opset << ": " << r.status().message();
    EXPECT_EQ(r->graph.opset(), opset);
  }
  auto r = import_model(relu_model(22));
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("opset 22 is not supported (supported: 7 to 21)"), std::string::npos)
      << r.status().message();
}

TEST(OnnxOpset18Test, EveryReductionTakesAxesAsAnInputFromOpset18) {
  const Tensor x = f32({2, 2}, {1, 2, 3, 4});
  expect_f32(load_and_run(reduce_model("ReduceMean", 18, {1}, false), {x}), {2}, {1.5f, 3.5f});
  expect_f32(load_and_run(reduce_model("ReduceMax", 18, {0}, true), {x}), {1, 2}, {3, 4});
  expect_f32(load_and_run(reduce_model("ReduceMin", 18, {-1}, false), {x}), {2}, {1, 3});
  expect_f32(load_and_run(reduce_model("ReduceProd", 18, {0}, false), {x}), {2}, {3, 8});
  // Before 18 the input form does not exist for these.
  auto old = load_and_run(reduce_model("ReduceMax", 17, {0}, true), {x});
  ASSERT_FALSE(old.is_ok());
  EXPECT_NE(old.status().message().find("takes axes as an attribute at opset 17"), std::string::npos)
      << old.status().message();
  // From 18 the attribute form is refused, naming the opset.
  OnnxModel m(18);
  m.input("x", kFloat, {2, 2});
  attr(m.node("ReduceMean", {"x"}, {"y"}), "axes", Ints{1});
  m.output("y");
  auto r = load_and_run(m, {x});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("axes is input 1 of ReduceMean from opset 18 on"), std::string::npos)
      << r.status().message();
}

TEST(OnnxOpset18Test, NoopWithEmptyAxesPassesTheInputThrough) {
  const Tensor x = f32({2, 2}, {1, 2, 3, 4});
  OnnxModel m(18);
  m.input("x", kFloat, {2, 2});
  auto& n = m.node("ReduceMin", {"x"}, {"y"});
  attr(n, "noop_with_empty_axes", int64_t{1});
  m.output("y");
  expect_f32(load_and_run(m, {x}), {2, 2}, {1, 2, 3, 4});
}

TEST(OnnxOpset18Test, SplitNumOutputsMakesEqualChunksAndASmallerLastOne) {
  // 7 columns into 3: ceil(7 / 3) = 3, so [3, 3, 1].
  OnnxModel m(18);
  m.input("x", kFloat, {1, 7});
  auto& split = m.node("Split", {"x"}, {"a", "b", "c"});
  attr(split, "axis", int64_t{1});
  attr(split, "num_outputs", int64_t{3});
  m.output("a");
  m.output("b");
  m.output("c");
  testing::TempDir dir;
  auto g = load_model(m.save(dir));
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto out = cpu::run_graph_reference(*g, {f32({1, 7}, {0, 1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].to_float_vector(), (Floats{0, 1, 2}));
  EXPECT_EQ((*out)[1].to_float_vector(), (Floats{3, 4, 5}));
  EXPECT_EQ((*out)[2].to_float_vector(), (Floats{6}));

  // num_outputs must match the node's outputs, and is no attribute before 18.
  for (int opset : {17, 18}) {
    OnnxModel bad(opset);
    bad.input("x", kFloat, {1, 7});
    auto& s = bad.node("Split", {"x"}, {"a", "b"});
    attr(s, "axis", int64_t{1});
    attr(s, "num_outputs", int64_t{opset == 17 ? 2 : 3});
    bad.output("a");
    bad.output("b");
    testing::TempDir d;
    auto r = load_model(bad.save(d));
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find(opset == 17 ? "exists from opset 18 on" : "is 3, but the node has 2 outputs"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(OnnxOpset18Test, PadAxesInputPadsOnlyTheNamedDims) {
  // Pad [[1,2,3],[4,5,6]] on axis -1 only: one zero in front, two behind.
  OnnxModel m(18);
  m.input("x", kFloat, {2, 3});
  m.initializer("pads", i64_proto({2}, {1, 2}));
  m.initializer("axes", i64_proto({1}, {-1}));
  m.node("Pad", {"x", "pads", "", "axes"}, {"y"});
  m.output("y");
  expect_f32(load_and_run(m, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}), {2, 6}, {0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0});
}

TEST(OnnxOpset18Test, PadWrapModeFromOpset19) {
  // np.pad(x, ((0, 0), (2, 1)), mode='wrap')
  for (int opset : {18, 19}) {
    OnnxModel m(opset);
    m.input("x", kFloat, {2, 3});
    m.initializer("pads", i64_proto({4}, {0, 2, 0, 1}));
    attr(m.node("Pad", {"x", "pads"}, {"y"}), "mode", std::string("wrap"));
    m.output("y");
    auto r = load_and_run(m, {f32({2, 3}, {1, 2, 3, 4, 5, 6})});
    if (opset == 18) {
      ASSERT_FALSE(r.is_ok());
      EXPECT_NE(r.status().message().find("wrap from opset 19"), std::string::npos) << r.status().message();
    } else {
      expect_f32(r, {2, 6}, {2, 3, 1, 2, 3, 1, 5, 6, 4, 5, 6, 4});
    }
  }
}

// Nearest upsampling by 2 of a 1x1x1x2 image with the given extra attributes.
OnnxModel resize_model(int opset, const std::string& mode, const std::vector<std::pair<std::string, Ints>>& ints,
                       const std::string& coordinate_mode = "half_pixel") {
  OnnxModel m(opset);
  m.input("x", kFloat, {1, 1, 1, 2});
  m.initializer("scales", f32_proto({4}, {1, 1, 1, 2}, false));
  auto& n = m.node("Resize", {"x", "", "scales"}, {"y"});
  attr(n, "mode", mode);
  attr(n, "coordinate_transformation_mode", coordinate_mode);
  for (const auto& [name, v] : ints) {
    if (v.size() == 1 && name != "axes")
      attr(n, name, v[0]);
    else
      attr(n, name, v);
  }
  m.output("y");
  return m;
}

TEST(OnnxOpset18Test, ResizeAcceptsTheOpset18Attributes) {
  const Tensor x = f32({1, 1, 1, 2}, {1, 3});
  // Every dim in order, and antialias when nothing shrinks: as without them.
  expect_f32(load_and_run(resize_model(18, "nearest", {{"axes", {0, 1, 2, 3}}}), {x}), {1, 1, 1, 4}, {1, 1, 3, 3});
  // Linear half_pixel upsampling of [1, 3] by 2: [1, 1.5, 2.5, 3].
  expect_f32(load_and_run(resize_model(18, "linear", {{"antialias", {1}}}), {x}), {1, 1, 1, 4}, {1, 1.5f, 2.5f, 3});
  // Axes naming some dims: scales for those only.
  OnnxModel w(18);
  w.input("x", kFloat, {1, 1, 1, 2});
  w.initializer("scales", f32_proto({1}, {2}, false));
  attr(w.node("Resize", {"x", "", "scales"}, {"y"}), "axes", Ints{3});
  w.output("y");
  expect_f32(load_and_run(w, {x}), {1, 1, 1, 4}, {1, 1, 3, 3});
  // Opset 19's half_pixel_symmetric: by 1.7, 2 -> 3 pixels (3.4 unrounded);
  // the region shifts by 2 / 2 x (1 - 3 / 3.4) so that output 1 samples
  // 0.5 exactly (half_pixel: 0.38, giving 1.76).
  OnnxModel h(19);
  h.input("x", kFloat, {1, 1, 1, 2});
  h.initializer("scales", f32_proto({4}, {1, 1, 1, 1.7f}, false));
  auto& hn = h.node("Resize", {"x", "", "scales"}, {"y"});
  attr(hn, "mode", std::string("linear"));
  attr(hn, "coordinate_transformation_mode", std::string("half_pixel_symmetric"));
  h.output("y");
  expect_f32(load_and_run(h, {x}), {1, 1, 1, 3}, {1, 2, 3});
}

TEST(OnnxOpset18Test, ResizeRefusesKeepAspectRatioWithSizesByName) {
  const Tensor x = f32({1, 1, 1, 2}, {1, 3});
  // keep_aspect_ratio_policy matters only with sizes.
  OnnxModel sizes(18);
  sizes.input("x", kFloat, {1, 1, 1, 2});
  sizes.initializer("sizes", i64_proto({4}, {1, 1, 1, 4}));
  attr(sizes.node("Resize", {"x", "", "", "sizes"}, {"y"}), "keep_aspect_ratio_policy", std::string("not_larger"));
  sizes.output("y");
  auto r = load_and_run(sizes, {x});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported) << r.status().message();
  EXPECT_NE(r.status().message().find("attribute 'keep_aspect_ratio_policy' = 'not_larger' is not supported"),
            std::string::npos)
      << r.status().message();
}

TEST(OnnxOpset18Test, CastAcceptsSaturate) {
  OnnxModel m(19);
  m.input("x", kFloat, {2});
  auto& n = m.node("Cast", {"x"}, {"y"});
  attr(n, "to", int64_t{kFloat});
  attr(n, "saturate", int64_t{1});
  m.output("y");
  expect_f32(load_and_run(m, {f32({2}, {1.5f, -2})}), {2}, {1.5f, -2});
}

// --- the new ops -----------------------------------------------------------------------------

TEST(OnnxOpset18Test, LayerNormalizationWithMeanAndInvStdDev) {
  // numpy: m = x.mean(-1), v = ((x - m)**2).mean(-1), y = (x - m) / sqrt(v + 1e-5) * scale + bias
  OnnxModel m(17);
  m.input("x", kFloat, {2, 4});
  m.initializer("scale", f32_proto({4}, {1, 0.5f, 2, -1}, false));
  m.initializer("bias", f32_proto({4}, {0, 1, 0, 0.5f}, true));
  m.node("LayerNormalization", {"x", "scale", "bias"}, {"y", "mean", "inv"});
  m.output("y");
  m.output("mean");
  m.output("inv");
  testing::TempDir dir;
  auto g = load_model(m.save(dir));
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto out = cpu::run_graph_reference(*g, {f32({2, 4}, {1, 2, 3, 4, 2, -1, 0.5f, 3})});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  ASSERT_EQ(out->size(), 3u);
  const Floats y = {-1.3416354f, 0.7763941f, 0.8944236f, -0.8416354f, 0.5773490f, 0.2989333f, -0.8247843f, -0.7371765f};
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR((*out)[0].data<float>()[i], y[i], 1e-6f) << i;
  EXPECT_EQ((*out)[1].shape(), (Shape{2, 1}));
  EXPECT_NEAR((*out)[1].data<float>()[1], 1.125f, 1e-6f);
  EXPECT_NEAR((*out)[2].data<float>()[0], 0.8944236f, 1e-6f);
  EXPECT_NEAR((*out)[2].data<float>()[1], 0.6598274f, 1e-6f);
}

TEST(OnnxOpset18Test, LayerNormalizationIsNoOpBeforeOpset17) {
  OnnxModel m(16);
  m.input("x", kFloat, {2, 4});
  m.initializer("scale", f32_proto({4}, {1, 1, 1, 1}, false));
  m.node("LayerNormalization", {"x", "scale"}, {"y"});
  m.output("y");
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->unsupported.size(), 1u);
  EXPECT_NE(r->unsupported[0].reason.find("ONNX added it in opset 17"), std::string::npos);
}

TEST(OnnxOpset18Test, GeluExactAndTanh) {
  const Floats x = {-3, -1, -0.5f, 0, 0.5f, 1, 3};
  const Floats exact = {-0.0040496941f, -0.1586552539f, -0.1542687694f, 0, 0.3457312306f, 0.8413447461f, 2.9959503059f};
  const Floats tanh = {-0.0036373921f, -0.1588080094f, -0.1542859902f, 0, 0.3457140098f, 0.8411919906f, 2.9963626079f};
  for (const std::string approximate : {"none", "tanh"}) {
    OnnxModel m(20);
    m.input("x", kFloat, {7});
    attr(m.node("Gelu", {"x"}, {"y"}), "approximate", approximate);
    m.output("y");
    expect_f32(load_and_run(m, {f32({7}, x)}), {7}, approximate == "tanh" ? tanh : exact, 1e-6f);
  }
}

// x [1, 4, 2] in 2 groups; scale and bias per group at opset 18, per channel at 21.
OnnxModel group_norm_model(int opset, const Floats& scale, const Floats& bias) {
  OnnxModel m(opset);
  m.input("x", kFloat, {1, 4, 2});
  const int64_t n = static_cast<int64_t>(scale.size());
  m.initializer("scale", f32_proto({n}, scale, false));
  m.initializer("bias", f32_proto({n}, bias, false));
  attr(m.node("GroupNormalization", {"x", "scale", "bias"}, {"y"}), "num_groups", int64_t{2});
  m.output("y");
  return m;
}

TEST(OnnxOpset18Test, GroupNormalizationScalesPerGroupAt18AndPerChannelAt21) {
  const Tensor x = f32({1, 4, 2}, {1, 2, 3, 4, -1, 0, 2, 7});
  expect_f32(load_and_run(group_norm_model(18, {2, -1}, {0.5f, 1}), {x}), {1, 4, 2},
             {-2.1832708f, -0.3944236f, 1.3944236f, 3.1832708f, 1.9733280f, 1.6488853f, 1.0f, -0.6222134f}, 1e-6f);
  expect_f32(load_and_run(group_norm_model(21, {1, 2, 3, 4}, {0, 0.5f, 1, 1.5f}), {x}), {1, 4, 2},
             {-1.3416354f, -0.4472118f, 1.3944236f, 3.1832708f, -1.9199840f, -0.9466560f, 1.5f, 7.9888534f}, 1e-6f);
  // A per-group scale at opset 21 is the wrong form, and the error says which is right.
  auto r = load_and_run(group_norm_model(21, {2, -1}, {0.5f, 1}), {x});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("must be [4], one value per channel (opset 21)"), std::string::npos)
      << r.status().message();
}

// --- external data ---------------------------------------------------------------------------

// A model reading initializer "w" (f32[4]) from `location` at `offset`:
// y = x + w.
OnnxModel external_model(const std::string& location, int64_t offset, int64_t length) {
  OnnxModel m(18);
  m.input("x", kFloat, {4});
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(kFloat);
  t.add_dims(4);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& key, const std::string& value) {
    auto* e = t.add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  *m.graph().add_initializer() = t;
  m.node("Add", {"x", "w"}, {"y"});
  m.output("y");
  return m;
}

// Writes 8 bytes of padding then the f32s 1, 2, 3, 4 to `path`.
void write_weights(const fs::path& path) {
  const Floats w = {1, 2, 3, 4};
  std::ofstream f(path, std::ios::binary);
  f.write("padding!", 8);
  f.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * sizeof(float)));
}

TEST(OnnxExternalDataTest, ReadsTensorsFromAFileBesideTheModel) {
  testing::TempDir dir;
  fs::create_directories(dir / "sub");
  write_weights(dir / "sub" / "model.onnx.data");
  const std::string path = external_model("model.onnx.data", 8, 16).save(dir, "sub/model.onnx");
  // From another working directory too: the location is relative to the model.
  auto g = load_model(path);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto out = cpu::run_graph_reference(*g, {f32({4}, {10, 20, 30, 40})});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].to_float_vector(), (Floats{11, 22, 33, 44}));
}

TEST(OnnxExternalDataTest, RefusesLocationsOutsideTheModelDirectory) {
  testing::TempDir dir;
  fs::create_directories(dir / "models");
  write_weights(dir / "w.bin");
  fs::create_symlink(dir / "w.bin", dir / "models" / "link.bin");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {(dir / "w.bin").string(), "is absolute"},
      {"../w.bin", "leaves the model's directory"},
      {"a/../../w.bin", "leaves the model's directory"},
      {"link.bin", "outside the model's directory"},
  };
  for (const auto& [location, message] : cases) {
    auto r = import_onnx(external_model(location, 8, 16).save(dir, "models/model.onnx"));
    ASSERT_FALSE(r.is_ok()) << location;
    EXPECT_NE(r.status().message().find(message), std::string::npos) << location << ": " << r.status().message();
  }
}

TEST(OnnxExternalDataTest, RefusesMissingFilesAndShortData) {
  testing::TempDir dir;
  write_weights(dir / "w.bin");  // 24 bytes
  struct Case {
    std::string location;
    int64_t offset, length;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"missing.bin", 0, 16, "cannot be read"},
      {"w.bin", 16, 16, "offset 16 + length 16 lies beyond the end of the file (24 bytes)"},
      {"w.bin", 0, 8, "has length 8, but the tensor needs 16 bytes"},
      {"w.bin", -1, -1, "offset 0 + length 16"},  // no offset: 0; no length: the tensor's size, which fits
  };
  for (const Case& c : cases) {
    auto r = import_onnx(external_model(c.location, c.offset, c.length).save(dir));
    if (c.offset < 0) {
      EXPECT_TRUE(r.is_ok()) << r.status().message();
      continue;
    }
    ASSERT_FALSE(r.is_ok()) << c.location;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("initializer 'w'"), std::string::npos) << r.status().message();
  }
}

TEST(OnnxExternalDataTest, BytesWithoutAPathCannotReachExternalData) {
  const OnnxModel m = external_model("model.onnx.data", 0, 16);
  std::string bytes;
  ASSERT_TRUE(m.proto.SerializeToString(&bytes));
  auto r = import_onnx_bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                             "in-memory");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("a model given as bytes cannot reach"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace hetsched

namespace hetsched::onnx_test {
namespace {

// Opsets 7 and 8 (the oldest accepted): Upsample's scales are an attribute,
// read as Resize's constant input; BatchNormalization's spatial 0 is refused.
TEST(OnnxOldOpsetTest, UpsampleTakesItsScalesAsAnAttributeBeforeOpset9) {
  OnnxModel m(8);
  m.input("x", kFloat, {1, 1, 2, 2});
  auto& up = m.node("Upsample", {"x"}, {"y"});
  attr(up, "scales", Floats{1, 1, 2, 2});
  attr(up, "mode", std::string("nearest"));
  m.output("y");
  expect_f32(load_and_run(m, {f32({1, 1, 2, 2}, {1, 2, 3, 4})}), {1, 1, 4, 4},
             {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(OnnxOldOpsetTest, OpsetsBelow7AreRefusedByName) {
  OnnxModel m(6);
  m.input("x", kFloat, {2});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  auto r = load_and_run(m, {f32({2}, {-1, 1})});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("default-domain opset 6 is not supported (supported: 7 to 21)"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace hetsched::onnx_test

namespace hetsched::onnx_test {
namespace {

// CumSum and InstanceNormalization: the ONNX node tests have them only in
// f64 or at opset 6, so here against values worked out by hand.
TEST(OnnxMiscOpsTest, CumSumInEveryDirection) {
  const auto run = [](int64_t exclusive, int64_t reverse, const Ints& axis, const Ints& dims, const Floats& x) {
    OnnxModel m(14);
    m.input("x", kFloat, std::vector<Dim>(dims.begin(), dims.end()));
    m.initializer("axis", i64_proto({}, axis));
    auto& n = m.node("CumSum", {"x", "axis"}, {"y"});
    attr(n, "exclusive", exclusive);
    attr(n, "reverse", reverse);
    m.output("y");
    return load_and_run(m, {f32(dims, x)});
  };
  expect_f32(run(0, 0, {0}, {4}, {1, 2, 3, 4}), {4}, {1, 3, 6, 10});
  expect_f32(run(1, 0, {0}, {4}, {1, 2, 3, 4}), {4}, {0, 1, 3, 6});
  expect_f32(run(0, 1, {0}, {4}, {1, 2, 3, 4}), {4}, {10, 9, 7, 4});
  expect_f32(run(1, 1, {0}, {4}, {1, 2, 3, 4}), {4}, {9, 7, 4, 0});
  expect_f32(run(0, 0, {-1}, {2, 3}, {1, 2, 3, 4, 5, 6}), {2, 3}, {1, 3, 6, 4, 9, 15});
  expect_f32(run(0, 0, {0}, {2, 3}, {1, 2, 3, 4, 5, 6}), {2, 3}, {1, 2, 3, 5, 7, 9});
}

TEST(OnnxMiscOpsTest, GlobalMaxPoolTakesEachPlanesMaximum) {
  OnnxModel m(13);
  m.input("x", kFloat, {1, 2, 2, 2});
  m.node("GlobalMaxPool", {"x"}, {"y"});
  m.output("y");
  expect_f32(load_and_run(m, {f32({1, 2, 2, 2}, {1, -5, 3, 2, -4, -1, -3, -2})}), {1, 2, 1, 1}, {3, -1});
}

TEST(OnnxMiscOpsTest, InstanceNormalizationPerSampleAndChannel) {
  OnnxModel m(13);
  m.input("x", kFloat, {1, 2, 2});
  m.initializer("scale", f32_proto({2}, {2, 1}, false));
  m.initializer("b", f32_proto({2}, {0.5f, 0}, false));
  m.node("InstanceNormalization", {"x", "scale", "b"}, {"y"});
  m.output("y");
  // Channel 0: mean 2, variance 1; channel 1 is constant: 0 before B.
  const float k = 1.f / std::sqrt(1.f + 1e-5f);
  expect_f32(load_and_run(m, {f32({1, 2, 2}, {1, 3, 5, 5})}), {1, 2, 2}, {-2 * k + 0.5f, 2 * k + 0.5f, 0, 0});
}

}  // namespace
}  // namespace hetsched::onnx_test
