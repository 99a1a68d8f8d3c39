// The ONNX importer (graph/onnx_import.h) and the .onnx path of the model
// loader and CLI.
//
// Test models are built here with the onnx protobuf classes and saved into a
// TempDir, one per form the importer must read: initializer encodings,
// attribute kinds, dynamic dims, Constant nodes, and for the ops whose
// attributes moved to inputs at some opset, each form end to end
// (import → clean-up → check_graph → CPU kernels) against values worked out
// by hand or printed by numpy (/usr/bin/python3) and pasted.
#include "graph/onnx_import.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_reference.h"
#include "scheduler/model_loader.h"
#include "test/onnx_model_builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using namespace onnx_test;  // NOLINT: the model builders read as plain names

// --- reading the model ------------------------------------------------------------------

TEST(OnnxImportTest, StoresTheOpsetAndTheGraph) {
  auto r = import_model(relu_model(13));
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const Graph& g = r->graph;
  EXPECT_EQ(g.opset(), 13);
  EXPECT_EQ(g.name(), "test_model");
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(0).op, "Relu");
  EXPECT_EQ(g.value(g.inputs()[0]).type, (TensorType{DType::kFloat32, {2, 3}}));
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
  EXPECT_TRUE(r->unsupported.empty());
}

TEST(OnnxImportTest, ReadsInitializersFromRawDataAndTypedFields) {
  OnnxModel m(13);
  m.input("x", kFloat, {2});
  m.initializer("raw_f32", f32_proto({2}, {1.5f, -2.f}, true));
  m.initializer("typed_f32", f32_proto({2}, {3.f, 4.f}, false));
  m.initializer("raw_i64", i64_proto({3}, {1, -2, 1LL << 40}, true));
  m.initializer("typed_i64", i64_proto({1}, {-7}));
  onnx::TensorProto i32;
  i32.set_data_type(onnx::TensorProto::INT32);
  i32.add_dims(2);
  i32.add_int32_data(-5);
  i32.add_int32_data(6);
  m.initializer("typed_i32", i32);
  onnx::TensorProto flags;
  flags.set_data_type(onnx::TensorProto::BOOL);
  flags.add_dims(3);
  for (int v : {1, 0, 1}) flags.add_int32_data(v);
  m.initializer("typed_bool", flags);
  onnx::TensorProto bytes;
  bytes.set_data_type(onnx::TensorProto::UINT8);
  bytes.add_dims(2);
  bytes.add_int32_data(200);
  bytes.add_int32_data(7);
  m.initializer("typed_u8", bytes);
  std::vector<std::string> all = {"x", "raw_f32", "typed_f32"};
  m.node("Sum", all, {"y"});
  m.output("y");
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const Graph& g = r->graph;
  auto constant = [&](const std::string& name) -> const Tensor& { return *g.value(g.find_value(name)).constant; };
  EXPECT_EQ(constant("raw_f32").to_float_vector(), (Floats{1.5f, -2.f}));
  EXPECT_EQ(constant("typed_f32").to_float_vector(), (Floats{3.f, 4.f}));
  EXPECT_EQ(constant("raw_i64").to_int64_vector(), (Ints{1, -2, 1LL << 40}));
  EXPECT_EQ(constant("typed_i64").to_int64_vector(), (Ints{-7}));
  EXPECT_EQ(constant("typed_i32").dtype(), DType::kInt32);
  EXPECT_EQ(constant("typed_i32").to_int64_vector(), (Ints{-5, 6}));
  EXPECT_EQ(constant("typed_bool").dtype(), DType::kBool);
  EXPECT_EQ(constant("typed_bool").to_int64_vector(), (Ints{1, 0, 1}));
  EXPECT_EQ(constant("typed_u8").to_int64_vector(), (Ints{200, 7}));
  // x + [1.5, -2] + [3, 4] through the loader.
  expect_f32(load_and_run(m, {f32({2}, {1.f, 1.f})}), {2}, {5.5f, 3.f});
}

// External data is read (onnx_opset18_test.cc); a file that is not there is an error naming it.
TEST(OnnxImportTest, RefusesInitializersWhoseExternalFileIsMissing) {
  OnnxModel m = relu_model(13);
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(kFloat);
  t.add_dims(4);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = t.add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  *m.graph().add_initializer() = t;
  auto r = import_model(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("initializer 'w': external data 'weights.bin'"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("cannot be read"), std::string::npos)
      << r.status().message();
}

TEST(OnnxImportTest, RefusesInitializersWithTooFewValues) {
  OnnxModel m = relu_model(13);
  m.initializer("w", f32_proto({3}, {1.f, 2.f}, false));
  auto r = import_model(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("initializer 'w' has 2 values in float_data, expected 3"), std::string::npos)
      << r.status().message();
}

TEST(OnnxImportTest, RefusesInitializersWithImpossibleShapesBeforeAllocating) {
  OnnxModel m = relu_model(13);
  m.initializer("w", f32_proto({int64_t{1} << 40, int64_t{1} << 40}, {}, false));
  auto r = import_model(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("initializer 'w' has an invalid shape"), std::string::npos)
      << r.status().message();
}

TEST(OnnxImportTest, RefusesElementTypesWithoutDtype) {
  OnnxModel m(13);
  m.input("x", onnx::TensorProto::DOUBLE, {2});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  auto r = import_model(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("input 'x' has element type DOUBLE"), std::string::npos) << r.status().message();
}

TEST(OnnxImportTest, ReadsEveryRepresentableAttributeKind) {
  OnnxModel m = relu_model(13);
  onnx::NodeProto& n = *m.graph().mutable_node(0);
  attr(n, "i", int64_t{-3});
  attr(n, "f", 0.25f);
  attr(n, "s", std::string("NOTSET"));
  attr(n, "ints", Ints{1, 2, 3});
  attr(n, "floats", Floats{0.5f, 1.5f});
  attr(n, "t", i64_proto({2}, {4, 5}));
  // IR version 1 writers left out the type; the field that is set tells it.
  auto* untyped = n.add_attribute();
  untyped->set_name("untyped");
  untyped->set_f(2.f);
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const Attributes& a = r->graph.node(0).attrs;
  EXPECT_EQ(a.get_int("i", 0).value(), -3);
  EXPECT_EQ(a.get_float("f", 0).value(), 0.25f);
  EXPECT_EQ(a.get_string("s", "").value(), "NOTSET");
  EXPECT_EQ(a.get_ints("ints", {}).value(), (Ints{1, 2, 3}));
  EXPECT_EQ(a.get_floats("floats", {}).value(), (Floats{0.5f, 1.5f}));
  ASSERT_NE(a.find("t"), nullptr);
  EXPECT_EQ(std::get<Tensor>(*a.find("t")).to_int64_vector(), (Ints{4, 5}));
  EXPECT_EQ(std::string(attribute_kind_name(*a.find("untyped"))), "float");
}

TEST(OnnxImportTest, AttributeKindsWithoutARepresentationMakeTheNodeUnsupported) {
  OnnxModel m = relu_model(13);
  auto& strings = add_attr(*m.graph().mutable_node(0), "names", onnx::AttributeProto::STRINGS);
  strings.add_strings("a");
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->unsupported.size(), 1u);
  EXPECT_EQ(r->unsupported[0].describe(),
            "node 'relu' (Relu, opset 13): attribute 'names' is of kind STRINGS, which hetsched does not represent");
}

TEST(OnnxImportTest, DynamicDimsStayDynamicUntilInputShapesFixThem) {
  OnnxModel m(13);
  m.input("x", kFloat, {"batch", 3});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->graph.value(r->graph.inputs()[0]).type.shape, (Shape{kDynamicDim, 3}));
  testing::TempDir dir;
  const std::string path = m.save(dir);
  auto unresolved = load_onnx(path);
  ASSERT_FALSE(unresolved.is_ok());
  EXPECT_NE(unresolved.status().message().find("input 'x' has a dynamic shape f32[?,3]; give it with --input-shape x="),
            std::string::npos)
      << unresolved.status().message();
  auto resolved = load_onnx(path, {{"x", {4, 3}}});
  ASSERT_TRUE(resolved.is_ok()) << resolved.status().message();
  EXPECT_EQ(resolved->value(resolved->inputs()[0]).type.shape, (Shape{4, 3}));
  auto wrong = load_onnx(path, {{"x", {4, 5}}});
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("has static dim 1 = 3"), std::string::npos) << wrong.status().message();
}

TEST(OnnxImportTest, AnInputWithoutAnyShapeTakesTheGivenOne) {
  OnnxModel m(13);
  auto* vi = m.graph().add_input();
  vi->set_name("x");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(kFloat);
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  auto r = import_model(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("input 'x' declares no shape"), std::string::npos) << r.status().message();
  expect_f32(load_and_run(m, {f32({2}, {-1.f, 1.f})}, {{"x", {2}}}), {2}, {0.f, 1.f});
}

TEST(OnnxImportTest, AGraphInputThatIsAlsoAnInitializerIsAConstant) {
  OnnxModel m(13);
  m.input("x", kFloat, {2});
  m.input("bias", kFloat, {2});
  m.initializer("bias", f32_proto({2}, {10.f, 20.f}, true));
  m.node("Add", {"x", "bias"}, {"y"});
  m.output("y");
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->graph.inputs().size(), 1u);
  EXPECT_TRUE(r->graph.value(r->graph.find_value("bias")).is_constant());
  expect_f32(load_and_run(m, {f32({2}, {1.f, 2.f})}), {2}, {11.f, 22.f});
}

TEST(OnnxImportTest, ConstantNodesOfEveryValueFormBecomeConstants) {
  OnnxModel m(13);
  m.input("x", kFloat, {2});
  attr(m.node("Constant", {}, {"c_tensor"}), "value", f32_proto({2}, {1.f, 2.f}, true));
  attr(m.node("Constant", {}, {"c_float"}), "value_float", 0.5f);
  attr(m.node("Constant", {}, {"c_floats"}), "value_floats", Floats{3.f, 4.f});
  attr(m.node("Constant", {}, {"c_int"}), "value_int", int64_t{7});
  attr(m.node("Constant", {}, {"c_ints"}), "value_ints", Ints{8, 9});
  m.node("Sum", {"x", "c_tensor", "c_float", "c_floats"}, {"y"});
  m.output("y");
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const Graph& g = r->graph;
  EXPECT_EQ(g.num_nodes(), 1u);  // only Sum
  EXPECT_EQ(g.value(g.find_value("c_float")).constant->type(), (TensorType{DType::kFloat32, {}}));
  EXPECT_EQ(g.value(g.find_value("c_int")).constant->type(), (TensorType{DType::kInt64, {}}));
  EXPECT_EQ(g.value(g.find_value("c_int")).constant->to_int64_vector(), (Ints{7}));
  EXPECT_EQ(g.value(g.find_value("c_ints")).constant->to_int64_vector(), (Ints{8, 9}));
  // x + [1,2] + 0.5 + [3,4]
  expect_f32(load_and_run(m, {f32({2}, {0.f, 10.f})}), {2}, {4.5f, 16.5f});
}

TEST(OnnxImportTest, AStringConstantIsListedAsUnsupported) {
  OnnxModel m = relu_model(13);
  add_attr(m.node("Constant", {}, {"label"}, "label_const"), "value_string", onnx::AttributeProto::STRING).set_s("hi");
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->unsupported.size(), 1u);
  EXPECT_EQ(r->unsupported[0].name, "label_const");
  EXPECT_NE(r->unsupported[0].reason.find("value, value_float(s) and value_int(s)"), std::string::npos);
}

TEST(OnnxImportTest, AConstantOfAnElementTypeWithoutDtypeIsListedAsUnsupported) {
  OnnxModel m = relu_model(13);
  onnx::TensorProto d;
  d.set_data_type(onnx::TensorProto::DOUBLE);
  d.add_double_data(1.0);
  attr(m.node("Constant", {}, {"c"}, "double_const"), "value", d);
  m.node("Cast", {"c"}, {"c32"});
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->unsupported.size(), 1u);
  EXPECT_EQ(r->unsupported[0].describe(),
            "node 'double_const' (Constant, opset 13): attribute 'value' has element type DOUBLE, which hetsched has "
            "no dtype for (supported: FLOAT, INT64, INT32, BOOL, UINT8, INT8, FLOAT16, BFLOAT16)");
}

TEST(OnnxImportTest, NodeNamesAreMadeUniqueAndNonEmpty) {
  OnnxModel m(13);
  m.input("x", kFloat, {2});
  m.node("Relu", {"x"}, {"a"}, "act");
  m.node("Relu", {"a"}, {"b"}, "act");
  m.node("Neg", {"b"}, {"c"});
  m.node("Neg", {"c"}, {"d"});
  m.output("d");
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  std::vector<std::string> names;
  for (const Node& n : r->graph.nodes()) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"act", "act_1", "Neg_2", "Neg_3"}));
}

TEST(OnnxImportTest, EmptyInputNamesAreOmittedInputs) {
  // Clip (opset 11) with only a max: Clip(x, "", max); a trailing empty input is dropped.
  OnnxModel m(11);
  m.input("x", kFloat, {3});
  m.initializer("hi", f32_proto({}, {1.f}, false));
  m.node("Clip", {"x", "", "hi", ""}, {"y"});
  m.output("y");
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->graph.node(0).inputs.size(), 3u);
  EXPECT_EQ(r->graph.node(0).inputs[1], kNoValue);
  expect_f32(load_and_run(m, {f32({3}, {-1.f, 0.5f, 3.f})}), {3}, {-1.f, 0.5f, 1.f});
}

TEST(OnnxImportTest, RequiresNodesInTopologicalOrder) {
  OnnxModel m(13);
  m.input("x", kFloat, {2});
  m.node("Neg", {"a"}, {"y"}, "late");
  m.node("Relu", {"x"}, {"a"}, "early");
  m.output("y");
  auto r = import_model(m);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("node 'late' (Neg): input 'a' is not a graph input"), std::string::npos)
      << r.status().message();
}

// --- what cannot be imported ---------------------------------------------------------------

TEST(OnnxImportTest, RefusesOpsetsOutsideTheSupportedRange) {
  for (int opset : {6, 22}) {
    auto r = import_model(relu_model(opset));
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(r.status().message().find("default-domain opset " + std::to_string(opset) +
                                        " is not supported (supported: 7 to 21)"),
              std::string::npos)
        << r.status().message();
  }
}

OnnxModel model_with_nms() {
  OnnxModel m(11);
  m.input("boxes", kFloat, {1, 4, 4});
  m.input("scores", kFloat, {1, 1, 4});
  m.node("NonMaxSuppression", {"boxes", "scores"}, {"selected"}, "nms");
  auto& foreign = m.node("FusedConv", {"boxes"}, {"fused"}, "fc");
  foreign.set_domain("com.microsoft");
  auto* ms = m.proto.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  m.node("Relu", {"boxes"}, {"y"}, "relu");
  m.output("y");
  m.output("selected");
  return m;
}

TEST(OnnxImportTest, ReportsUnsupportedOpsAndDomainsWithoutFailing) {
  auto r = import_model(model_with_nms());
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->unsupported.size(), 2u);
  EXPECT_EQ(r->unsupported[0].describe(), "node 'nms' (NonMaxSuppression, opset 11): op not in the hetsched op set");
  EXPECT_EQ(r->unsupported[1].op, "com.microsoft.FusedConv");
  EXPECT_EQ(r->unsupported[1].describe(),
            "node 'fc' (FusedConv, domain com.microsoft): domain 'com.microsoft' is not supported; hetsched reads the "
            "default ONNX domain only");
  // The report's graph still holds the whole model.
  EXPECT_EQ(r->graph.num_nodes(), 3u);
}

TEST(OnnxImportTest, LoadOnnxRefusesUnsupportedNodesNamingThem) {
  testing::TempDir dir;
  auto g = load_onnx(model_with_nms().save(dir));
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(g.status().message().find("node 'nms' (NonMaxSuppression, opset 11): op not in the hetsched op set; "
                                      "node 'fc' (FusedConv, domain com.microsoft)"),
            std::string::npos)
      << g.status().message();
}

TEST(OnnxImportTest, AnOpNewerThanTheModelOpsetIsUnsupported) {
  OnnxModel m(13);
  m.input("x", kFloat, {2});
  m.node("HardSwish", {"x"}, {"y"}, "hs");
  m.output("y");
  auto r = import_model(m);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->unsupported.size(), 1u);
  EXPECT_EQ(r->unsupported[0].describe(),
            "node 'hs' (HardSwish, opset 13): op does not exist at this opset (ONNX added it in opset 14)");
}

TEST(OnnxImportTest, RefusesBytesThatAreNotAModel) {
  const std::vector<uint8_t> junk = {0xff, 0xff, 0xff, 0x01};
  auto r = import_onnx_bytes(junk, "junk.onnx");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
}

// --- opset-specific forms, end to end ----------------------------------------------------------

TEST(OnnxImportTest, ClipBoundsAreAttributesUpToOpset10AndInputsFrom11) {
  OnnxModel old_form(10);
  old_form.input("x", kFloat, {3});
  auto& n = old_form.node("Clip", {"x"}, {"y"});
  attr(n, "min", 0.f);
  attr(n, "max", 2.f);
  old_form.output("y");
  expect_f32(load_and_run(old_form, {f32({3}, {-1.f, 0.5f, 3.f})}), {3}, {0.f, 0.5f, 2.f});

  OnnxModel new_form(11);
  new_form.input("x", kFloat, {3});
  new_form.initializer("lo", f32_proto({}, {0.f}, false));
  new_form.initializer("hi", f32_proto({}, {2.f}, false));
  new_form.node("Clip", {"x", "lo", "hi"}, {"y"});
  new_form.output("y");
  expect_f32(load_and_run(new_form, {f32({3}, {-1.f, 0.5f, 3.f})}), {3}, {0.f, 0.5f, 2.f});
}

TEST(OnnxImportTest, SliceTakesAttributesBeforeOpset10AndInputsFrom10) {
  const Tensor x = f32({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  OnnxModel old_form(9);
  old_form.input("x", kFloat, {2, 4});
  auto& n = old_form.node("Slice", {"x"}, {"y"});
  attr(n, "starts", Ints{1});
  attr(n, "ends", Ints{3});
  attr(n, "axes", Ints{1});
  old_form.output("y");
  expect_f32(load_and_run(old_form, {x}), {2, 2}, {1, 2, 5, 6});

  // Columns backwards with step -2 from the last: 3, 1.
  OnnxModel new_form(10);
  new_form.input("x", kFloat, {2, 4});
  new_form.initializer("starts", i64_proto({1}, {-1}));
  new_form.initializer("ends", i64_proto({1}, {-5}));
  new_form.initializer("axes", i64_proto({1}, {1}));
  new_form.initializer("steps", i64_proto({1}, {-2}));
  new_form.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  new_form.output("y");
  expect_f32(load_and_run(new_form, {x}), {2, 2}, {3, 1, 7, 5});
}

TEST(OnnxImportTest, SqueezeAndUnsqueezeAxesAreAttributesUpTo12AndInputsFrom13) {
  const Tensor x = f32({1, 3}, {1, 2, 3});
  for (int opset : {12, 13}) {
    OnnxModel m(opset);
    m.input("x", kFloat, {1, 3});
    if (opset == 12) {
      attr(m.node("Squeeze", {"x"}, {"s"}), "axes", Ints{0});
      attr(m.node("Unsqueeze", {"s"}, {"y"}), "axes", Ints{0, 2});
    } else {
      m.initializer("sq_axes", i64_proto({1}, {0}));
      m.initializer("unsq_axes", i64_proto({2}, {0, 2}));
      m.node("Squeeze", {"x", "sq_axes"}, {"s"});
      m.node("Unsqueeze", {"s", "unsq_axes"}, {"y"});
    }
    m.output("y");
    expect_f32(load_and_run(m, {x}), {1, 3, 1}, {1, 2, 3});
  }
}

TEST(OnnxImportTest, ResizeReadsTheOpset10And11And13Forms) {
  const Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const Floats nearest = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  OnnxModel v10(10);  // (X, scales), asymmetric nearest floor
  v10.input("x", kFloat, {1, 1, 2, 2});
  v10.initializer("scales", f32_proto({4}, {1, 1, 2, 2}, false));
  v10.node("Resize", {"x", "scales"}, {"y"});
  v10.output("y");
  expect_f32(load_and_run(v10, {x}), {1, 1, 4, 4}, nearest);

  OnnxModel v11(11);  // (X, roi, scales)
  v11.input("x", kFloat, {1, 1, 2, 2});
  v11.initializer("roi", f32_proto({0}, {}, false));
  v11.initializer("scales", f32_proto({4}, {1, 1, 2, 2}, false));
  v11.node("Resize", {"x", "roi", "scales"}, {"y"});
  v11.output("y");
  expect_f32(load_and_run(v11, {x}), {1, 1, 4, 4}, nearest);

  // (X, "", "", sizes), bilinear half_pixel: rows [1,2] → [1, 1.25, 1.75, 2],
  // then the same weights down the columns.
  OnnxModel v13(13);
  v13.input("x", kFloat, {1, 1, 2, 2});
  v13.initializer("sizes", i64_proto({4}, {1, 1, 4, 4}));
  attr(v13.node("Resize", {"x", "", "", "sizes"}, {"y"}), "mode", std::string("linear"));
  v13.output("y");
  expect_f32(load_and_run(v13, {x}), {1, 1, 4, 4},
             {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4});
}

TEST(OnnxImportTest, UpsampleOfOpset9ImportsAsResize) {
  OnnxModel m(9);
  m.input("x", kFloat, {1, 1, 2, 2});
  m.initializer("scales", f32_proto({4}, {1, 1, 2, 2}, false));
  attr(m.node("Upsample", {"x", "scales"}, {"y"}), "mode", std::string("nearest"));
  m.output("y");
  expect_f32(load_and_run(m, {f32({1, 1, 2, 2}, {1, 2, 3, 4})}), {1, 1, 4, 4},
             {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(OnnxImportTest, SoftmaxFlattensAtAxis1BeforeOpset13AndUsesTheLastAxisFrom13) {
  const Tensor x = f32({1, 2, 2}, {1, 2, 3, 4});
  for (int opset : {11, 13}) {
    OnnxModel m(opset);
    m.input("x", kFloat, {1, 2, 2});
    m.node("Softmax", {"x"}, {"y"});
    m.output("y");
    // numpy: softmax over [1,2,3,4] at 11 (one row of 4); over [1,2] and [3,4] at 13.
    const Floats expected =
        opset == 11 ? Floats{0.03205860328008498f, 0.08714431874203256f, 0.23688281808991016f, 0.6439142598879724f}
                    : Floats{0.26894142136999516f, 0.7310585786300049f, 0.26894142136999516f, 0.7310585786300049f};
    expect_f32(load_and_run(m, {x}), {1, 2, 2}, expected, 1e-5f);
  }
}

TEST(OnnxImportTest, ReduceMeanAndReduceSumReadTheirAxesForms) {
  const Tensor x = f32({2, 2}, {1, 2, 3, 4});
  OnnxModel mean(13);
  mean.input("x", kFloat, {2, 2});
  auto& n = mean.node("ReduceMean", {"x"}, {"y"});
  attr(n, "axes", Ints{1});
  attr(n, "keepdims", int64_t{0});
  mean.output("y");
  expect_f32(load_and_run(mean, {x}), {2}, {1.5f, 3.5f});

  OnnxModel sum12(12);
  sum12.input("x", kFloat, {2, 2});
  attr(sum12.node("ReduceSum", {"x"}, {"y"}), "axes", Ints{0});
  sum12.output("y");
  expect_f32(load_and_run(sum12, {x}), {1, 2}, {4, 6});

  OnnxModel sum13(13);
  sum13.input("x", kFloat, {2, 2});
  sum13.initializer("axes", i64_proto({1}, {0}));
  sum13.node("ReduceSum", {"x", "axes"}, {"y"});
  sum13.output("y");
  expect_f32(load_and_run(sum13, {x}), {1, 2}, {4, 6});
}

TEST(OnnxImportTest, SplitAndPadReadTheirAttributeAndInputForms) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  for (int opset : {10, 13}) {
    // Pad one zero column in front, then split the 4 columns into [1, 3] and keep the second part.
    OnnxModel m(opset);
    m.input("x", kFloat, {2, 3});
    if (opset == 10) {
      attr(m.node("Pad", {"x"}, {"p"}), "pads", Ints{0, 1, 0, 0});
      auto& split = m.node("Split", {"p"}, {"a", "b"});
      attr(split, "axis", int64_t{1});
      attr(split, "split", Ints{1, 3});
    } else {
      m.initializer("pads", i64_proto({4}, {0, 1, 0, 0}));
      m.initializer("split", i64_proto({2}, {1, 3}));
      m.node("Pad", {"x", "pads"}, {"p"});
      attr(m.node("Split", {"p", "split"}, {"a", "b"}), "axis", int64_t{1});
    }
    m.node("Neg", {"b"}, {"y"});
    m.output("y");
    expect_f32(load_and_run(m, {x}), {2, 3}, {-1, -2, -3, -4, -5, -6});
  }
}

// --- clean-ups through the loader ------------------------------------------------------------

TEST(OnnxImportTest, LoadModelFoldsTheShapeChainOfADynamicBatch) {
  // Flatten the way exporters write it: Reshape(x, Concat(Gather(Shape(x), 0), [-1])).
  OnnxModel m(13);
  m.input("x", kFloat, {"N", 2, 2});
  m.initializer("zero", i64_proto({1}, {0}));
  m.initializer("minus_one", i64_proto({1}, {-1}));
  m.node("Shape", {"x"}, {"shape"});
  attr(m.node("Gather", {"shape", "zero"}, {"batch"}), "axis", int64_t{0});
  attr(m.node("Concat", {"batch", "minus_one"}, {"target"}), "axis", int64_t{0});
  m.node("Reshape", {"x", "target"}, {"flat"});
  m.node("Identity", {"flat"}, {"y"});
  m.output("y");
  testing::TempDir dir;
  auto g = load_model(m.save(dir), {{"x", {3, 2, 2}}});
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1u);
  EXPECT_EQ(g->node(0).op, "Reshape");
  EXPECT_EQ(g->value(g->outputs()[0]).name, "y");
  EXPECT_EQ(g->value(g->outputs()[0]).type, (TensorType{DType::kFloat32, {3, 4}}));
  const Tensor x = f32({3, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto out = cpu::run_graph_reference(*g, {x});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ((*out)[0].to_float_vector(), x.to_float_vector());
}

TEST(OnnxImportTest, LoadModelFoldsScalarArithmeticOnDims) {
  // Reshape x [N,3,4] to [-1, d1 * d2] with d1, d2 gathered as scalars from Shape(x).
  OnnxModel m(13);
  m.input("x", kFloat, {"N", 3, 4});
  m.initializer("one", i64_proto({}, {1}));
  m.initializer("two", i64_proto({}, {2}));
  m.initializer("axes", i64_proto({1}, {0}));
  m.initializer("minus_one", i64_proto({1}, {-1}));
  m.node("Shape", {"x"}, {"shape"});
  m.node("Gather", {"shape", "one"}, {"d1"});
  m.node("Gather", {"shape", "two"}, {"d2"});
  m.node("Mul", {"d1", "d2"}, {"inner"});
  m.node("Unsqueeze", {"inner", "axes"}, {"inner1"});
  attr(m.node("Concat", {"minus_one", "inner1"}, {"target"}), "axis", int64_t{0});
  m.node("Reshape", {"x", "target"}, {"y"});
  m.output("y");
  testing::TempDir dir;
  auto g = load_model(m.save(dir), {{"x", {2, 3, 4}}});
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1u);
  EXPECT_EQ(g->value(g->node(0).inputs[1]).constant->to_int64_vector(), (Ints{-1, 12}));
  EXPECT_EQ(g->value(g->outputs()[0]).type.shape, (Shape{2, 12}));
}

TEST(OnnxImportTest, LoadModelFusesBatchNormAndActivationIntoConv) {
  // Conv 1x1 (weight 2) → BN (scale 1, bias 1, mean 0, var 1 - eps) → Relu: y = relu(2x + 1).
  OnnxModel m(13);
  m.input("x", kFloat, {1, 1, 1, 3});
  m.initializer("w", f32_proto({1, 1, 1, 1}, {2.f}, true));
  m.initializer("scale", f32_proto({1}, {1.f}, false));
  m.initializer("shift", f32_proto({1}, {1.f}, false));
  m.initializer("mean", f32_proto({1}, {0.f}, false));
  m.initializer("var", f32_proto({1}, {1.f - 1e-5f}, false));
  m.node("Conv", {"x", "w"}, {"c"}, "conv");
  m.node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"bn"});
  m.node("Relu", {"bn"}, {"y"});
  m.output("y");
  testing::TempDir dir;
  auto g = load_model(m.save(dir));
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1u);
  EXPECT_EQ(g->node(0).attrs.get_string("activation", "").value(), "Relu");
  auto out = cpu::run_graph_reference(*g, {f32({1, 1, 1, 3}, {-2.f, 0.f, 1.f})});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  const std::vector<float> y = (*out)[0].to_float_vector();
  EXPECT_NEAR(y[0], 0.f, 1e-5f);
  EXPECT_NEAR(y[1], 1.f, 1e-5f);
  EXPECT_NEAR(y[2], 3.f, 1e-5f);
}

TEST(OnnxImportTest, ModelLoaderAcceptsOnnxAndListsUnsupportedNodes) {
  EXPECT_EQ(model_format_of("a/b.onnx"), ModelFormat::kOnnx);
  EXPECT_NE(accepted_model_formats().find(".onnx (ONNX model)"), std::string::npos);
  testing::TempDir dir;
  auto lines = unsupported_onnx_nodes(model_with_nms().save(dir));
  ASSERT_TRUE(lines.is_ok()) << lines.status().message();
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[0], "node 'nms' (NonMaxSuppression, opset 11): op not in the hetsched op set");
  auto clean = unsupported_onnx_nodes(relu_model(13).save(dir, "relu.onnx"));
  ASSERT_TRUE(clean.is_ok());
  EXPECT_TRUE(clean->empty());
}

// --- the command line -----------------------------------------------------------------------------

using testing::run_cli;

TEST(OnnxImportCliTest, ImportWritesAGraphFileThatLoads) {
  testing::TempDir dir;
  OnnxModel m(13);
  m.input("x", kFloat, {"N", 3});
  m.node("Relu", {"x"}, {"y"});
  m.output("y");
  const std::string model = m.save(dir);
  const std::string out = (dir / "model.hsg").string();
  auto r = run_cli("import " + model + " -o " + out + " --input-shape x=2x3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote " + out + ": graph 'test_model', opset 13, 1 nodes"), std::string::npos) << r.output;
  auto g = load_model(out);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_EQ(g->value(g->inputs()[0]).type.shape, (Shape{2, 3}));
  // Without the shape the dynamic batch is refused, naming the flag.
  auto missing = run_cli("import " + model + " -o " + out);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("--input-shape x="), std::string::npos) << missing.output;
}

TEST(OnnxImportCliTest, PreviewListsEveryUnsupportedNode) {
  testing::TempDir dir;
  auto r = run_cli("preview " + model_with_nms().save(dir));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unsupported nodes (2):\n  node 'nms' (NonMaxSuppression, opset 11): op not in the hetsched "
                          "op set\n  node 'fc' (FusedConv, domain com.microsoft)"),
            std::string::npos)
      << r.output;
}

// onnx_import_fuzz: a Constant node with an empty value_ints, in a mutated
// model. The importer memcpy'd the empty list from a null pointer (undefined
// even for 0 bytes; UBSan's nonnull-attribute check, so this fails under
// scripts/asan.sh before the fix) before reaching the model's real fault, a
// node that reads a value nothing has made yet.
TEST(OnnxImportTest, CraftedConstantWithEmptyValueIntsReachesTheModelsRealError) {
  Result<ImportReport> r = import_onnx(testing::source_path("test/data/crafted/onnx_empty_value_ints.onnx").string());
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("node 'Pow_5' (Pow): input "), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("(ONNX requires nodes in topological order)"), std::string::npos)
      << r.status().message();
}

// An empty value_ints in a well-formed model is a zero-element 1-D constant.
TEST(OnnxImportTest, ConstantWithEmptyValueIntsIsAnEmptyTensor) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("empty_ints");
  onnx::NodeProto* c = g->add_node();
  c->set_op_type("Constant");
  c->set_name("c");
  c->add_output("k");
  onnx::AttributeProto* a = c->add_attribute();
  a->set_name("value_ints");
  a->set_type(onnx::AttributeProto::INTS);
  onnx::ValueInfoProto* out = g->add_output();
  out->set_name("k");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  const std::string bytes = m.SerializeAsString();
  Result<ImportReport> r =
      import_onnx_bytes(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "empty_ints");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const ValueId k = r->graph.find_value("k");
  ASSERT_NE(r->graph.value(k).constant, nullptr);
  EXPECT_EQ(r->graph.value(k).constant->type(), (TensorType{DType::kInt64, {0}}));
}

}  // namespace
}  // namespace hetsched
