#include "graph/graph_serialize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <fstream>
#include <iterator>

#include "graph/graph_generated.h"
#include "graph/shape_inference.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

// Bytes of a tensor, for exact comparison of constant data.
std::vector<uint8_t> bytes_of(const Tensor& t) {
  const auto* p = reinterpret_cast<const uint8_t*>(t.raw());
  return std::vector<uint8_t>(p, p + t.byte_size());
}

void expect_same_tensor(const Tensor& want, const Tensor& got, const std::string& what) {
  EXPECT_EQ(want.type(), got.type()) << what;
  EXPECT_EQ(bytes_of(want), bytes_of(got)) << what;
}

void expect_same_attribute(const Attribute& want, const Attribute& got, const std::string& what) {
  ASSERT_EQ(want.index(), got.index()) << what << ": kind " << attribute_kind_name(want) << " became "
                                       << attribute_kind_name(got);
  if (const auto* t = std::get_if<Tensor>(&want)) {
    expect_same_tensor(*t, std::get<Tensor>(got), what);
  } else if (const auto* f = std::get_if<float>(&want)) {
    // Bitwise, so -0.0 and NaN payloads count.
    uint32_t a, b;
    std::memcpy(&a, f, 4);
    std::memcpy(&b, &std::get<float>(got), 4);
    EXPECT_EQ(a, b) << what;
  } else if (const auto* fs = std::get_if<std::vector<float>>(&want)) {
    const auto& gs = std::get<std::vector<float>>(got);
    ASSERT_EQ(fs->size(), gs.size()) << what;
    EXPECT_EQ(0, std::memcmp(fs->data(), gs.data(), fs->size() * sizeof(float))) << what;
  } else if (const auto* i = std::get_if<int64_t>(&want)) {
    EXPECT_EQ(*i, std::get<int64_t>(got)) << what;
  } else if (const auto* str = std::get_if<std::string>(&want)) {
    EXPECT_EQ(*str, std::get<std::string>(got)) << what;
  } else {
    EXPECT_EQ(std::get<std::vector<int64_t>>(want), std::get<std::vector<int64_t>>(got)) << what;
  }
}

// Field-by-field equality of two graphs, ids included.
void expect_same_graph(const Graph& want, const Graph& got) {
  EXPECT_EQ(want.name(), got.name());
  EXPECT_EQ(want.opset(), got.opset());
  EXPECT_EQ(want.inputs(), got.inputs());
  EXPECT_EQ(want.outputs(), got.outputs());
  ASSERT_EQ(want.num_values(), got.num_values());
  for (ValueId id = 0; id < static_cast<ValueId>(want.num_values()); ++id) {
    const Value& w = want.value(id);
    const Value& g = got.value(id);
    const std::string what = "value " + std::to_string(id) + " '" + w.name + "'";
    EXPECT_EQ(w.name, g.name) << what;
    EXPECT_EQ(w.type, g.type) << what;
    EXPECT_EQ(w.type_known, g.type_known) << what;
    EXPECT_EQ(w.producer, g.producer) << what;
    ASSERT_EQ(w.is_constant(), g.is_constant()) << what;
    if (w.is_constant()) expect_same_tensor(*w.constant, *g.constant, what);
    EXPECT_EQ(got.find_value(w.name), id) << what;
  }
  ASSERT_EQ(want.num_nodes(), got.num_nodes());
  for (NodeId id = 0; id < static_cast<NodeId>(want.num_nodes()); ++id) {
    const Node& w = want.node(id);
    const Node& g = got.node(id);
    const std::string what = "node " + std::to_string(id) + " '" + w.name + "'";
    EXPECT_EQ(w.name, g.name) << what;
    EXPECT_EQ(w.op, g.op) << what;
    EXPECT_EQ(w.inputs, g.inputs) << what;
    EXPECT_EQ(w.outputs, g.outputs) << what;
    ASSERT_EQ(w.attrs.size(), g.attrs.size()) << what;
    for (const auto& [name, a] : w.attrs.all()) {
      const Attribute* ga = g.attrs.find(name);
      ASSERT_NE(ga, nullptr) << what << " lost attribute " << name;
      expect_same_attribute(a, *ga, what + " attribute " + name);
    }
  }
}

// A graph exercising every field: all attribute kinds, constants of every
// dtype, omitted inputs, unknown and dynamic types, a multi-output node with
// an unused output, graph outputs out of id order. Shape inference is not
// run: types are set by hand, so no op implementation is needed.
Graph make_rich_graph() {
  Graph g("rich net");
  g.set_opset(13);
  ValueId x = g.add_input("x", {DType::kFloat32, {1, 3, 4, 4}});
  ValueId dyn = g.add_input("dyn", {DType::kInt64, {kDynamicDim, 3}});
  ValueId w = g.add_constant(
      "w", Tensor::from_vector<float>(DType::kFloat32, {2, 3}, {1.5f, -0.f, 3e38f, -1e-38f, 0.25f, 7.f}));
  ValueId i64 = g.add_constant("i64", Tensor::from_vector<int64_t>(DType::kInt64, {3}, {0, -5, int64_t{1} << 40}));
  ValueId i32 = g.add_constant("i32", Tensor::from_vector<int32_t>(DType::kInt32, {2}, {-7, 2147483647}));
  ValueId b = g.add_constant("b", Tensor::from_vector<uint8_t>(DType::kBool, {3}, {1, 0, 1}));
  ValueId u8 = g.add_constant("u8", Tensor::from_vector<uint8_t>(DType::kUInt8, {2, 1}, {0, 255}));
  ValueId i8 = g.add_constant("i8", Tensor::from_vector<int8_t>(DType::kInt8, {2}, {-128, 127}));
  // 1.0 and -2.0 in IEEE half precision.
  ValueId f16 = g.add_constant("f16", Tensor::from_vector<uint16_t>(DType::kFloat16, {2}, {0x3C00, 0xC000}));
  ValueId scalar = g.add_constant("scalar", Tensor::from_vector<float>(DType::kFloat32, {}, {42.f}));
  ValueId empty = g.add_constant("empty", Tensor(TensorType{DType::kFloat32, {0, 4}}));

  Attributes conv_attrs;
  conv_attrs.set("group", int64_t{-3});
  conv_attrs.set("alpha", 1.5f);
  conv_attrs.set("neg_zero", -0.0f);
  conv_attrs.set("auto_pad", std::string("SAME_UPPER"));
  conv_attrs.set("with_nul", std::string("a\0b", 3));
  conv_attrs.set("empty_string", std::string());
  conv_attrs.set("pads",
                 std::vector<int64_t>{1, -1, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()});
  conv_attrs.set("no_ints", std::vector<int64_t>{});
  conv_attrs.set("scales", std::vector<float>{0.5f, -2.25f, std::numeric_limits<float>::infinity()});
  conv_attrs.set("value", Tensor::from_vector<int32_t>(DType::kInt32, {2, 2}, {1, 2, 3, 4}));
  conv_attrs.set("value_f16", Tensor::from_vector<uint16_t>(DType::kFloat16, {1}, {0x7BFF}));
  NodeId conv = g.add_node("Conv", "conv/0", {x, w, kNoValue}, {"y"}, std::move(conv_attrs));
  ValueId y = g.node(conv).outputs[0];
  g.value(y).type = {DType::kFloat32, {1, 2, 4, 4}};
  g.value(y).type_known = true;

  NodeId split = g.add_node("Split", "split", {y, kNoValue, i64}, {"s0", "s1", "unused"}, [] {
    Attributes a;
    a.set("axis", int64_t{1});
    return a;
  }());
  ValueId s0 = g.node(split).outputs[0];
  ValueId s1 = g.node(split).outputs[1];
  g.value(s0).type = {DType::kFloat32, {1, 1, 4, 4}};
  g.value(s0).type_known = true;  // s1 and "unused" stay unknown

  NodeId mix = g.add_node("Mix", "mix", {s0, s1, dyn, i32, b, u8, i8, f16, scalar, empty}, {"out"});
  g.add_output(g.node(mix).outputs[0]);
  g.add_output(s0);
  return g;
}

TEST(GraphSerializeTest, RoundTripKeepsEveryField) {
  Graph g = make_rich_graph();
  ASSERT_TRUE(g.validate().is_ok()) << g.validate().message();
  Blob blob = serialize_graph(g);
  Result<Graph> back = deserialize_graph(blob);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  expect_same_graph(g, *back);

  // A few fields against literals, in case both sides agreed on a wrong value.
  const Graph& r = *back;
  EXPECT_EQ(r.name(), "rich net");
  EXPECT_EQ(r.opset(), 13);
  const Node& conv = r.node(r.find_node("conv/0"));
  EXPECT_EQ(conv.inputs[2], kNoValue);
  EXPECT_EQ(std::get<std::string>(*conv.attrs.find("with_nul")), std::string("a\0b", 3));
  EXPECT_TRUE(std::signbit(std::get<float>(*conv.attrs.find("neg_zero"))));
  EXPECT_EQ(std::get<int64_t>(*conv.attrs.find("group")), -3);
  EXPECT_EQ(std::get<std::vector<int64_t>>(*conv.attrs.find("pads"))[3], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(r.value(r.find_value("i64")).constant->span<int64_t>()[2], 1099511627776);
  EXPECT_EQ(r.value(r.find_value("f16")).constant->span<uint16_t>()[1], 0xC000);
  EXPECT_EQ(r.value(r.find_value("dyn")).type.shape, (Shape{-1, 3}));
  EXPECT_FALSE(r.value(r.find_value("s1")).type_known);
  EXPECT_EQ(r.value(r.find_value("unused")).producer, r.find_node("split"));
}

TEST(GraphSerializeTest, RoundTripKeepsIdsWhenValuesAreInterleaved) {
  // Constants and inputs added after nodes, then a node removed by compact():
  // ids no longer follow a build order that the loader could replay naively.
  Graph g("interleaved");
  ValueId x = g.add_input("x", {DType::kFloat32, {4}});
  NodeId a = g.add_node("Relu", "a", {x}, {"a_out"});
  ValueId c = g.add_constant("c", Tensor::from_vector<float>(DType::kFloat32, {4}, {1, 2, 3, 4}));
  g.add_node("Relu", "dead", {x}, {"dead_out"});
  NodeId add = g.add_node("Add", "add", {g.node(a).outputs[0], c}, {"add_out"});
  ValueId late = g.add_input("late", {DType::kFloat32, {4}});
  NodeId mul = g.add_node("Mul", "mul", {g.node(add).outputs[0], late}, {"mul_out"});
  g.add_output(g.node(mul).outputs[0]);
  g.compact({true, false, true, true});
  ASSERT_TRUE(g.validate().is_ok()) << g.validate().message();
  // Hand-derived ids after compact: x=0 a_out=1 c=2 add_out=3 late=4 mul_out=5.
  ASSERT_EQ(g.find_value("late"), 4);

  Result<Graph> back = deserialize_graph(serialize_graph(g));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  expect_same_graph(g, *back);
  EXPECT_EQ(back->inputs(), (std::vector<ValueId>{0, 4}));
  EXPECT_EQ(back->value(2).name, "c");
  EXPECT_TRUE(back->value(2).is_constant());
}

TEST(GraphSerializeTest, SharedConstantIsStoredOnceAndSharedAfterLoading) {
  Graph g("shared");
  ValueId x = g.add_input("x", {DType::kFloat32, {4096}});
  auto weights = std::make_shared<const Tensor>(Tensor(TensorType{DType::kFloat32, {4096}}));
  ValueId w1 = g.add_constant("w1", weights);
  ValueId w2 = g.add_constant("w2", weights);
  NodeId n = g.add_node("Add", "add", {x, w1}, {"s"});
  NodeId m = g.add_node("Add", "add2", {g.node(n).outputs[0], w2}, {"t"});
  g.add_output(g.node(m).outputs[0]);

  Blob blob = serialize_graph(g);
  // 16 KiB of weights stored twice would make the blob larger than 32 KiB.
  EXPECT_LT(blob.size(), 20000u);
  Result<Graph> back = deserialize_graph(blob);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->value(w1).constant.get(), back->value(w2).constant.get());
}

TEST(GraphSerializeTest, LoadsFromUnalignedAddress) {
  Graph g = make_rich_graph();
  Blob blob = serialize_graph(g);
  std::vector<uint8_t> shifted(blob.size() + 1);
  std::memcpy(shifted.data() + 1, blob.data(), blob.size());
  Result<Graph> back = deserialize_graph(std::span<const uint8_t>(shifted).subspan(1));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  expect_same_graph(g, *back);
}

TEST(GraphSerializeTest, RejectsEmptyBufferAndWrongIdentifier) {
  Result<Graph> empty = deserialize_graph({});
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(empty.status().message(),
            "failed to load graph: buffer of 0 bytes is not a hetsched graph (expected identifier HSGR)");

  Blob blob = serialize_graph(make_rich_graph());
  std::memcpy(blob.data() + 8, "HSPG", 4);
  Result<Graph> wrong = deserialize_graph(blob);
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(wrong.status().message().find("expected identifier HSGR"), std::string::npos) << wrong.status().message();
}

TEST(GraphSerializeTest, RejectsEveryTruncation) {
  Graph g("small");
  ValueId x = g.add_input("x", {DType::kFloat32, {2}});
  Attributes attrs;
  attrs.set("alpha", 0.5f);
  NodeId n = g.add_node("LeakyRelu", "lr", {x}, {"y"}, std::move(attrs));
  g.add_output(g.node(n).outputs[0]);
  Blob blob = serialize_graph(g);
  ASSERT_TRUE(deserialize_graph(blob).is_ok());
  for (size_t len = 0; len < blob.size(); ++len) {
    Result<Graph> r = deserialize_graph(std::span<const uint8_t>(blob.data(), len));
    ASSERT_FALSE(r.is_ok()) << "prefix of " << len << " of " << blob.size() << " bytes was accepted";
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss) << len;
  }
}

TEST(GraphSerializeTest, FlippedBytesAreRefusedOrHarmless) {
  Blob blob = serialize_graph(make_rich_graph());
  size_t refused = 0, tries = 0;
  for (size_t pos = 0; pos < blob.size(); ++pos) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
      Blob bad = blob;
      bad[pos] ^= mask;
      Result<Graph> r = deserialize_graph(bad);
      ++tries;
      if (r.is_ok()) continue;  // e.g. a flipped byte inside constant data
      ++refused;
      EXPECT_TRUE(r.status().code() == StatusCode::kDataLoss || r.status().code() == StatusCode::kUnsupported)
          << pos << ": " << r.status().message();
      EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
    }
  }
  // Most of a graph blob is offsets and ids; flipping them must mostly be caught.
  EXPECT_GT(refused, tries / 4) << refused << " of " << tries;
}

TEST(GraphSerializeTest, RandomCorruptionIsRefusedOrHarmless) {
  Blob blob = serialize_graph(make_rich_graph());
  std::mt19937 rng(7);
  size_t refused = 0;
  constexpr int kTries = 3000;
  for (int i = 0; i < kTries; ++i) {
    Blob bad = blob;
    // Keep the header intact half of the time, so the damage reaches the
    // verifier and the reader rather than stopping at the identifier.
    size_t first = i % 2 ? 12 : 0;
    int count = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < count; ++k) bad[first + rng() % (bad.size() - first)] = static_cast<uint8_t>(rng());
    if (i % 3 == 0) bad.resize(rng() % bad.size());
    if (!deserialize_graph(bad).is_ok()) ++refused;
  }
  EXPECT_GT(refused, static_cast<size_t>(kTries / 4));
}

// Hand-built graph blobs with one field broken, for the checks the verifier
// cannot make (it knows offsets, not what the ids mean).
struct RawGraph {
  uint32_t version = kGraphFormatVersion;
  uint8_t dtype = 0;
  int64_t dim = 2;
  int32_t node_input = 0;
  int32_t producer = 0;   // of value 1
  int32_t constant = -1;  // of value 0
  std::vector<int32_t> inputs = {0};
  int32_t output = 1;
  bool duplicate_attribute = false;
  uint8_t attribute_kind = static_cast<uint8_t>(fb::graph::AttributeValue::IntAttribute);

  Blob build() const {
    namespace fbg = fb::graph;
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<int64_t> shape{dim};
    std::vector<flatbuffers::Offset<fbg::Value>> values;
    values.push_back(fbg::CreateValueDirect(
        fbb, "x", fbg::CreateTensorTypeDirect(fbb, static_cast<fbg::DType>(dtype), &shape), true, -1, constant));
    values.push_back(fbg::CreateValueDirect(fbb, "y", fbg::CreateTensorTypeDirect(fbb, fbg::DType::Float32, &shape),
                                            false, producer, -1));
    std::vector<flatbuffers::Offset<fbg::Attribute>> attrs;
    for (int i = 0; i < (duplicate_attribute ? 2 : 1); ++i)
      attrs.push_back(fbg::CreateAttributeDirect(fbb, "axis", static_cast<fbg::AttributeValue>(attribute_kind),
                                                 fbg::CreateIntAttribute(fbb, 1).Union()));
    std::vector<int32_t> node_inputs{node_input};
    std::vector<int32_t> node_outputs{1};
    std::vector<flatbuffers::Offset<fbg::Node>> nodes{
        fbg::CreateNodeDirect(fbb, "relu", "Relu", &node_inputs, &node_outputs, &attrs)};
    std::vector<flatbuffers::Offset<fbg::TensorData>> tensors;
    std::vector<int32_t> outputs{output};
    auto root = fbg::CreateGraphDirect(fbb, version, "raw", 17, &values, &nodes, &tensors, &inputs, &outputs);
    fbb.FinishSizePrefixed(root, fbg::GraphIdentifier());
    return Blob(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  }
};

std::string load_error(const RawGraph& raw) {
  Result<Graph> r = deserialize_graph(raw.build());
  if (r.is_ok()) return "loaded";
  return std::string(status_code_name(r.status().code())) + ": " + r.status().message();
}

TEST(GraphSerializeTest, RawGraphBaselineLoads) { EXPECT_EQ(load_error(RawGraph{}), "loaded"); }

TEST(GraphSerializeTest, RejectsBrokenFieldsWithOneLineMessages) {
  auto with = [](auto change) {
    RawGraph raw;
    change(raw);
    return load_error(raw);
  };
  const std::string loss = std::string(status_code_name(StatusCode::kDataLoss)) + ": failed to load graph: ";
  EXPECT_EQ(with([](RawGraph& r) { r.dtype = 42; }), loss + "value 0 has unknown dtype 42");
  EXPECT_EQ(with([](RawGraph& r) { r.dim = -5; }), loss + "value 0 has dimension -5");
  EXPECT_EQ(with([](RawGraph& r) { r.node_input = 5; }), loss + "node 0 reads value 5, but the graph has 2 values");
  EXPECT_EQ(with([](RawGraph& r) { r.producer = 3; }),
            loss + "value 1 names producer node 3, but the graph has 1 nodes");
  EXPECT_EQ(with([](RawGraph& r) { r.constant = 0; }), loss + "value 0 refers to constant 0, but the graph has 0");
  EXPECT_EQ(with([](RawGraph& r) { r.inputs = {0, 0}; }), loss + "graph inputs are not in value order");
  EXPECT_EQ(with([](RawGraph& r) { r.inputs = {2}; }),
            loss + "graph input 0 refers to value 2, but the graph has 2 values");
  EXPECT_EQ(with([](RawGraph& r) { r.output = -1; }),
            loss + "graph output refers to value -1, but the graph has 2 values");
  EXPECT_EQ(with([](RawGraph& r) { r.duplicate_attribute = true; }), loss + "node 0 attribute 'axis' appears twice");
  EXPECT_EQ(with([](RawGraph& r) { r.attribute_kind = 99; }), loss + "node 0 attribute 'axis' has unknown kind 99");
  EXPECT_EQ(with([](RawGraph& r) { r.attribute_kind = 0; }), loss + "node 0 attribute 'axis' has unknown kind 0");
  EXPECT_EQ(with([](RawGraph& r) { r.version = 0; }), loss + "format version 0 does not exist");
  EXPECT_EQ(with([](RawGraph& r) { r.version = kGraphFormatVersion + 1; }),
            std::string(status_code_name(StatusCode::kUnsupported)) +
                ": failed to load graph: format version 2; this hetsched reads version 1");
  // Structural errors found by Graph::validate() come through with its text.
  EXPECT_EQ(with([](RawGraph& r) { r.node_input = 1; }),
            loss + "node 'relu' (Relu): input 'y' is not a graph input, a constant or the output of an earlier node");
}

TEST(GraphSerializeTest, RejectsConstantWhoseDataDoesNotMatchItsType) {
  Graph g("bad constant");
  // A default Tensor claims type f32[] (4 bytes) but holds no data.
  ValueId c = g.add_constant("c", Tensor());
  NodeId n = g.add_node("Relu", "r", {c}, {"y"});
  g.add_output(g.node(n).outputs[0]);
  Result<Graph> r = deserialize_graph(serialize_graph(g));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message(), "failed to load graph: constant 0 has 0 bytes of data; its type f32[] needs 4");
}

// The bytes of an input a fuzzer found (test/data/crafted/, docs/reliability.md).
std::vector<uint8_t> crafted_file(const std::string& name) {
  std::ifstream f(testing::source_path("test/data/crafted/" + name), std::ios::binary);
  EXPECT_TRUE(f) << name;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// graph_file_fuzz: a value whose shape multiplies past 2^63 elements loaded,
// and shape inference overflowed int64 counting it (UBSan: signed overflow in
// shape_elements, from infer_reshape).
TEST(GraphSerializeTest, CraftedValueLargerThan2To63BytesIsRefused) {
  const std::vector<uint8_t> bytes = crafted_file("graph_reshape_input_overflow.graph");
  Result<Graph> g = deserialize_graph(bytes);
  ASSERT_FALSE(g.is_ok());
  EXPECT_EQ(g.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(g.status().message().find("larger than 2^63 bytes"), std::string::npos) << g.status().message();
  EXPECT_EQ(g.status().message().find('\n'), std::string::npos);
}

// Shapes that no loader saw (a Reshape's target) are counted without
// overflowing: the count saturates and the reshape is refused.
TEST(GraphSerializeTest, ShapeElementsSaturatesInsteadOfOverflowing) {
  EXPECT_EQ(shape_elements({int64_t{1} << 40, int64_t{1} << 40}), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(shape_elements({2, 3, 4}), 24);
}

// graph_file_fuzz: a Conv whose pads are near 2^63. The graph loads (its
// attributes are just numbers), and shape inference overflowed int64 adding
// the pads to the input dim (UBSan). It now refuses the node.
TEST(GraphSerializeTest, CraftedConvWithHugePadsIsRefusedByShapeInference) {
  Result<Graph> g = deserialize_graph(crafted_file("graph_conv_window_overflow.graph"));
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const Status checked = check_graph(*g);
  ASSERT_FALSE(checked.is_ok());
  EXPECT_NE(checked.message().find("overflows 64 bits"), std::string::npos) << checked.message();
  EXPECT_EQ(checked.message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace hetsched
