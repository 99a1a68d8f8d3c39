#include "graph/graph_serialize.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <type_traits>

#include "graph/flatbuffers_read.h"
#include "graph/tensor_size.h"
#include "graph/graph_generated.h"

namespace hetsched {

namespace fbg = fb::graph;

namespace {

static_assert(static_cast<uint8_t>(fbg::DType::Float32) == static_cast<uint8_t>(DType::kFloat32) &&
                  static_cast<uint8_t>(fbg::DType::Int64) == static_cast<uint8_t>(DType::kInt64) &&
                  static_cast<uint8_t>(fbg::DType::Int32) == static_cast<uint8_t>(DType::kInt32) &&
                  static_cast<uint8_t>(fbg::DType::Bool) == static_cast<uint8_t>(DType::kBool) &&
                  static_cast<uint8_t>(fbg::DType::UInt8) == static_cast<uint8_t>(DType::kUInt8) &&
                  static_cast<uint8_t>(fbg::DType::Int8) == static_cast<uint8_t>(DType::kInt8) &&
                  static_cast<uint8_t>(fbg::DType::Float16) == static_cast<uint8_t>(DType::kFloat16) &&
                  static_cast<uint8_t>(fbg::DType::BFloat16) == static_cast<uint8_t>(DType::kBFloat16),
              "graph.fbs DType must number dtypes as hetsched::DType does");

// --- writing -------------------------------------------------------------------

class GraphWriter {
 public:
  Blob write(const Graph& graph) {
    // Without forced defaults a float attribute of -0.0 compares equal to the
    // default 0.0 and is dropped, and comes back as +0.0.
    fbb_.ForceDefaults(true);
    std::vector<flatbuffers::Offset<fbg::Value>> values;
    values.reserve(graph.num_values());
    for (const Value& v : graph.values()) values.push_back(write_value(v));
    std::vector<flatbuffers::Offset<fbg::Node>> nodes;
    nodes.reserve(graph.num_nodes());
    for (const Node& n : graph.nodes()) nodes.push_back(write_node(n));
    auto name = write_string(graph.name());
    auto fb_values = fbb_.CreateVector(values);
    auto fb_nodes = fbb_.CreateVector(nodes);
    auto fb_tensors = fbb_.CreateVector(tensors_);
    auto root = fbg::CreateGraph(fbb_, kGraphFormatVersion, name, graph.opset(), fb_values, fb_nodes, fb_tensors,
                                 fbb_.CreateVector(graph.inputs()), fbb_.CreateVector(graph.outputs()));
    fbb_.FinishSizePrefixed(root, fbg::GraphIdentifier());
    return Blob(fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize());
  }

 private:
  flatbuffers::Offset<flatbuffers::String> write_string(const std::string& s) {
    return fbb_.CreateString(s.data(), s.size());
  }

  flatbuffers::Offset<fbg::TensorType> write_type(const TensorType& type) {
    return fbg::CreateTensorTypeDirect(fbb_, static_cast<fbg::DType>(type.dtype), &type.shape);
  }

  flatbuffers::Offset<fbg::TensorData> write_tensor(const Tensor& t) {
    auto type = write_type(t.type());
    auto data = fbb_.CreateVector(reinterpret_cast<const uint8_t*>(t.raw()), t.byte_size());
    return fbg::CreateTensorData(fbb_, type, data);
  }

  int constant_index(const std::shared_ptr<const Tensor>& tensor) {
    auto [it, inserted] = tensor_index_.emplace(tensor.get(), static_cast<int>(tensors_.size()));
    if (inserted) tensors_.push_back(write_tensor(*tensor));
    return it->second;
  }

  flatbuffers::Offset<fbg::Value> write_value(const Value& v) {
    auto name = write_string(v.name);
    auto type = write_type(v.type);
    int constant = v.constant ? constant_index(v.constant) : -1;
    return fbg::CreateValue(fbb_, name, type, v.type_known, v.producer, constant);
  }

  flatbuffers::Offset<fbg::Attribute> write_attribute(const std::string& name, const Attribute& a) {
    auto fb_name = write_string(name);
    fbg::AttributeValue kind = fbg::AttributeValue::NONE;
    flatbuffers::Offset<void> value;
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            kind = fbg::AttributeValue::IntAttribute;
            value = fbg::CreateIntAttribute(fbb_, x).Union();
          } else if constexpr (std::is_same_v<T, float>) {
            kind = fbg::AttributeValue::FloatAttribute;
            value = fbg::CreateFloatAttribute(fbb_, x).Union();
          } else if constexpr (std::is_same_v<T, std::string>) {
            kind = fbg::AttributeValue::StringAttribute;
            value = fbg::CreateStringAttribute(fbb_, write_string(x)).Union();
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            kind = fbg::AttributeValue::IntsAttribute;
            value = fbg::CreateIntsAttributeDirect(fbb_, &x).Union();
          } else if constexpr (std::is_same_v<T, std::vector<float>>) {
            kind = fbg::AttributeValue::FloatsAttribute;
            value = fbg::CreateFloatsAttributeDirect(fbb_, &x).Union();
          } else {
            static_assert(std::is_same_v<T, Tensor>, "every Attribute alternative needs a schema table");
            kind = fbg::AttributeValue::TensorAttribute;
            value = fbg::CreateTensorAttribute(fbb_, write_tensor(x)).Union();
          }
        },
        a);
    return fbg::CreateAttribute(fbb_, fb_name, kind, value);
  }

  flatbuffers::Offset<fbg::Node> write_node(const Node& n) {
    std::vector<flatbuffers::Offset<fbg::Attribute>> attrs;
    for (const auto& [name, a] : n.attrs.all()) attrs.push_back(write_attribute(name, a));
    auto name = write_string(n.name);
    auto op = write_string(n.op);
    return fbg::CreateNode(fbb_, name, op, fbb_.CreateVector(n.inputs), fbb_.CreateVector(n.outputs),
                           fbb_.CreateVector(attrs));
  }

  flatbuffers::FlatBufferBuilder fbb_{1024};
  std::vector<flatbuffers::Offset<fbg::TensorData>> tensors_;
  std::map<const Tensor*, int> tensor_index_;
};

// --- reading -------------------------------------------------------------------

Status corrupt(const std::string& what) { return data_loss("failed to load graph: " + what); }

std::string str(const flatbuffers::String* s) { return copy_fb_string(s); }

template <typename T>
std::vector<T> vec(const flatbuffers::Vector<T>* v) {
  return copy_fb_vector(v);
}


Result<TensorType> read_type(const fbg::TensorType* t, const std::string& what) {
  if (!t) return corrupt(what + " has no type");
  auto dtype = static_cast<uint8_t>(t->dtype());
  if (dtype > static_cast<uint8_t>(fbg::DType::MAX))
    return corrupt(what + " has unknown dtype " + std::to_string(dtype));
  TensorType type{static_cast<DType>(dtype), vec(t->shape())};
  for (int64_t d : type.shape)
    if (d < kDynamicDim) return corrupt(what + " has dimension " + std::to_string(d));
  if (!has_representable_size(type))
    return corrupt(what + " has type " + type.to_string() + ", larger than 2^63 bytes");
  return type;
}

Result<Tensor> read_tensor(const fbg::TensorData* t, const std::string& what) {
  if (!t) return corrupt(what + " has no data");
  HS_ASSIGN_OR_RETURN(TensorType type, read_type(t->type(), what));
  size_t have = t->data() ? t->data()->size() : 0;
  size_t want = 0;
  if (type.is_static()) {
    std::optional<size_t> bytes = checked_byte_size(type);
    if (!bytes) return corrupt(what + " has type " + type.to_string() + ", too large to hold");
    want = *bytes;
  }
  if (have != want)
    return corrupt(what + " has " + std::to_string(have) + " bytes of data; its type " + type.to_string() + " needs " +
                   std::to_string(want));
  Tensor tensor(type);
  if (have) std::memcpy(tensor.raw(), t->data()->data(), have);
  return tensor;
}

Result<Attribute> read_attribute(const fbg::Attribute& a, const std::string& what) {
  switch (a.value_type()) {
    case fbg::AttributeValue::IntAttribute:
      if (const auto* x = a.value_as_IntAttribute()) return Attribute(x->value());
      break;
    case fbg::AttributeValue::FloatAttribute:
      if (const auto* x = a.value_as_FloatAttribute()) return Attribute(x->value());
      break;
    case fbg::AttributeValue::StringAttribute:
      if (const auto* x = a.value_as_StringAttribute()) return Attribute(str(x->value()));
      break;
    case fbg::AttributeValue::IntsAttribute:
      if (const auto* x = a.value_as_IntsAttribute()) return Attribute(vec(x->values()));
      break;
    case fbg::AttributeValue::FloatsAttribute:
      if (const auto* x = a.value_as_FloatsAttribute()) return Attribute(vec(x->values()));
      break;
    case fbg::AttributeValue::TensorAttribute:
      if (const auto* x = a.value_as_TensorAttribute()) {
        HS_ASSIGN_OR_RETURN(Tensor t, read_tensor(x->value(), what));
        return Attribute(std::move(t));
      }
      break;
    default:
      return corrupt(what + " has unknown kind " + std::to_string(static_cast<int>(a.value_type())));
  }
  return corrupt(what + " has no value");
}

// Reads the root table's format_version through the verifier's bounds checks
// and nothing else: a newer writer may have changed the rest so that the full
// verifier fails, and its reader should then hear "newer version", not
// "corrupt".
std::optional<uint32_t> read_format_version(std::span<const uint8_t> bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  constexpr size_t kRootOffsetAt = sizeof(flatbuffers::uoffset_t);  // after the size prefix
  flatbuffers::uoffset_t root = verifier.VerifyOffset(kRootOffsetAt);
  if (!root) return std::nullopt;
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(bytes.data() + kRootOffsetAt + root);
  if (!table->VerifyTableStart(verifier) ||
      !table->VerifyField<uint32_t>(verifier, fbg::Graph::VT_FORMAT_VERSION, sizeof(uint32_t)))
    return std::nullopt;
  return table->GetField<uint32_t>(fbg::Graph::VT_FORMAT_VERSION, 0);
}

class GraphReader {
 public:
  explicit GraphReader(const fbg::Graph& root) : root_(root) {}

  Result<Graph> read() {
    const auto* values = root_.values();
    const auto* nodes = root_.nodes();
    num_values_ = values ? values->size() : 0;
    num_nodes_ = nodes ? nodes->size() : 0;
    HS_RETURN_IF_ERROR(read_constants());

    Graph graph(str(root_.name()));
    graph.set_opset(root_.opset());

    // Graph has an append call for inputs, one for constants and one for
    // node outputs, but none that places a value at a chosen id. Graph
    // inputs only ever grow in id order (add_input appends a fresh value and
    // compact() keeps the order), so walking the values in id order and
    // calling add_input for the inputs rebuilds both the ids and the input
    // list. Every other value is appended with add_constant, the one call
    // that appends a value and records nothing else, and then given its
    // real fields.
    std::vector<ValueId> inputs = vec(root_.inputs());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!in_range(inputs[i], num_values_))
        return corrupt("graph input " + std::to_string(i) + " refers to value " + std::to_string(inputs[i]) +
                       ", but the graph has " + std::to_string(num_values_) + " values");
      if (i > 0 && inputs[i] <= inputs[i - 1]) return corrupt("graph inputs are not in value order");
    }
    size_t next_input = 0;
    static const auto kPlaceholder = std::make_shared<const Tensor>();
    for (uint32_t id = 0; id < num_values_; ++id) {
      const std::string what = "value " + std::to_string(id);
      const fbg::Value* fv = values->Get(id);
      HS_ASSIGN_OR_RETURN(TensorType type, read_type(fv->type(), what));
      if (fv->producer() != kNoNode && !in_range(fv->producer(), num_nodes_))
        return corrupt(what + " names producer node " + std::to_string(fv->producer()) + ", but the graph has " +
                       std::to_string(num_nodes_) + " nodes");
      std::shared_ptr<const Tensor> constant;
      if (fv->constant() != -1) {
        if (!in_range(fv->constant(), constants_.size()))
          return corrupt(what + " refers to constant " + std::to_string(fv->constant()) + ", but the graph has " +
                         std::to_string(constants_.size()));
        constant = constants_[static_cast<size_t>(fv->constant())];
      }
      bool is_input = next_input < inputs.size() && inputs[next_input] == static_cast<ValueId>(id);
      ValueId added =
          is_input ? graph.add_input(str(fv->name()), type) : graph.add_constant(str(fv->name()), kPlaceholder);
      if (is_input) ++next_input;
      Value& v = graph.value(added);
      v.type = std::move(type);
      v.type_known = fv->type_known();
      v.producer = fv->producer();
      v.constant = std::move(constant);
    }

    for (uint32_t id = 0; id < num_nodes_; ++id) {
      const std::string what = "node " + std::to_string(id);
      const fbg::Node* fn = nodes->Get(id);
      std::vector<ValueId> node_inputs = vec(fn->inputs());
      std::vector<ValueId> node_outputs = vec(fn->outputs());
      for (ValueId in : node_inputs)
        if (in != kNoValue && !in_range(in, num_values_))
          return corrupt(what + " reads value " + std::to_string(in) + ", but the graph has " +
                         std::to_string(num_values_) + " values");
      for (ValueId out : node_outputs)
        if (!in_range(out, num_values_))
          return corrupt(what + " writes value " + std::to_string(out) + ", but the graph has " +
                         std::to_string(num_values_) + " values");
      Attributes attrs;
      if (fn->attributes()) {
        for (const fbg::Attribute* fa : *fn->attributes()) {
          std::string name = str(fa->name());
          const std::string attr_what = what + " attribute '" + name + "'";
          if (attrs.has(name)) return corrupt(attr_what + " appears twice");
          HS_ASSIGN_OR_RETURN(Attribute a, read_attribute(*fa, attr_what));
          attrs.set(std::move(name), std::move(a));
        }
      }
      NodeId added = graph.add_node(str(fn->op()), str(fn->name()), std::move(node_inputs), {}, std::move(attrs));
      graph.node(added).outputs = std::move(node_outputs);
    }

    for (ValueId out : vec(root_.outputs())) {
      if (!in_range(out, num_values_))
        return corrupt("graph output refers to value " + std::to_string(out) + ", but the graph has " +
                       std::to_string(num_values_) + " values");
      graph.add_output(out);
    }

    Status valid = graph.validate();
    if (!valid.is_ok()) return corrupt(valid.message());
    return graph;
  }

 private:
  static bool in_range(int64_t id, size_t size) { return id >= 0 && static_cast<uint64_t>(id) < size; }

  Status read_constants() {
    if (!root_.tensors()) return Status::ok();
    for (uint32_t i = 0; i < root_.tensors()->size(); ++i) {
      HS_ASSIGN_OR_RETURN(Tensor t, read_tensor(root_.tensors()->Get(i), "constant " + std::to_string(i)));
      constants_.push_back(std::make_shared<const Tensor>(std::move(t)));
    }
    return Status::ok();
  }

  const fbg::Graph& root_;
  size_t num_values_ = 0;
  size_t num_nodes_ = 0;
  std::vector<std::shared_ptr<const Tensor>> constants_;
};

}  // namespace

Blob serialize_graph(const Graph& graph) { return GraphWriter().write(graph); }

Result<Graph> deserialize_graph(std::span<const uint8_t> bytes) {
  // FlatBuffers reads scalars in place; a buffer at an odd address (a slice
  // of a larger file) is copied to one the allocator aligned.
  Blob aligned;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) != 0) {
    aligned.assign(bytes.begin(), bytes.end());
    bytes = aligned;
  }
  // The size prefix, the root offset, then the identifier.
  constexpr size_t kHeaderSize = 3 * sizeof(flatbuffers::uoffset_t);
  if (bytes.size() < kHeaderSize || !flatbuffers::BufferHasIdentifier(bytes.data(), fbg::GraphIdentifier(), true))
    return corrupt("buffer of " + std::to_string(bytes.size()) +
                   " bytes is not a hetsched graph (expected identifier " + fbg::GraphIdentifier() + ")");
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) return corrupt("buffer is larger than FlatBuffers' 2 GiB limit");
  std::optional<uint32_t> version = read_format_version(bytes);
  if (!version) return corrupt("truncated or corrupt (FlatBuffers verification failed)");
  if (*version > kGraphFormatVersion)
    return unsupported("failed to load graph: format version " + std::to_string(*version) +
                       "; this hetsched reads version " + std::to_string(kGraphFormatVersion));
  if (*version == 0) return corrupt("format version 0 does not exist");

  flatbuffers::Verifier::Options options;
  // The default cap of a million tables is hit by large but honest graphs
  // (a table per value, node, type and attribute). The cap exists to bound
  // verification time, which already grows with the buffer, so it grows with
  // the buffer too: no table is smaller than 4 bytes.
  options.max_tables =
      std::max<flatbuffers::uoffset_t>(options.max_tables, static_cast<flatbuffers::uoffset_t>(bytes.size() / 4));
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(), options);
  if (!fbg::VerifySizePrefixedGraphBuffer(verifier))
    return corrupt("truncated or corrupt (FlatBuffers verification failed)");
  return GraphReader(*fbg::GetSizePrefixedGraph(bytes.data())).read();
}

}  // namespace hetsched
