#include "graph/onnx_import.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "graph/onnx_proto.h"
#include "graph/op_schema.h"
#include "graph/passes/compute_f16_in_f32.h"

namespace hetsched {

namespace {

// A 1-D constant of a Constant node's value_floats / value_ints. An empty
// list is a zero-element tensor, made without memcpy: its data pointers are
// null then, and memcpy from null is undefined even for 0 bytes (the ONNX
// fuzz target's first find, through Tensor::from_vector).
template <typename T, typename List>
Tensor list_constant(DType dtype, const List& values) {
  Tensor t(TensorType{dtype, {static_cast<int64_t>(values.size())}});
  if (!values.empty()) std::memcpy(t.raw(), values.data(), static_cast<size_t>(values.size()) * sizeof(T));
  return t;
}

using onnx_import::attribute_from_proto;
using onnx_import::tensor_from_proto;
using onnx_import::tensor_type_from_proto;

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// Ops of the hetsched op set that ONNX added after opset 9: in a model of an
// older opset they do not exist (a custom op of that name could mean anything).
int first_opset_of(const std::string& op) {
  static const std::map<std::string, int, std::less<>> kSince = {
      {"Resize", 10},      {"Range", 11},          {"Round", 11},     {"GatherElements", 11},
      {"LessOrEqual", 12}, {"GreaterOrEqual", 12}, {"HardSwish", 14},
      {"ThresholdedRelu", 10}, {"Celu", 12},       {"Mish", 18},      {"Trilu", 14},
      {"Mod", 10},             {"IsInf", 10},       {"CumSum", 11},    {"GatherND", 11},
      {"ScatterND", 11},       {"ScatterElements", 11}, {"CastLike", 15},  {"OneHot", 9},
      {"EyeLike", 9},    {"LayerNormalization", 17},
      {"GroupNormalization", 18}, {"Gelu", 20},   {"GridSample", 16},
      {"ReverseSequence", 10},    {"MeanVarianceNormalization", 9}, {"RoiAlign", 10}, {"Scatter", 9},
      {"MaxUnpool", 9},
      {"QuantizeLinear", 10}, {"DequantizeLinear", 10}, {"QLinearConv", 10}, {"QLinearMatMul", 10},
      {"MatMulInteger", 10},  {"ConvInteger", 10},      {"DynamicQuantizeLinear", 11},
  };
  auto it = kSince.find(op);
  return it == kSince.end() ? 0 : it->second;
}

std::string list_domains(const onnx::ModelProto& model) {
  std::string s;
  for (const auto& o : model.opset_import())
    s += (s.empty() ? "" : ", ") + (o.domain().empty() ? std::string("(default)") : o.domain()) + " " +
         std::to_string(o.version());
  return s.empty() ? "none" : s;
}

// RNN, GRU and LSTM name their activation functions in a list of strings,
// which hetsched's attributes cannot hold (other string lists keep a node
// unsupported); the names travel as one comma-separated string, which
// graph/recurrent_spec.h splits. No activation name has a comma.
bool is_recurrent_activations(const std::string& op, const onnx::AttributeProto& a) {
  return (op == "RNN" || op == "GRU" || op == "LSTM") && a.name() == "activations" &&
         a.type() == onnx::AttributeProto::STRINGS;
}
std::string join_activations(const onnx::AttributeProto& a) {
  std::string joined;
  for (int i = 0; i < a.strings_size(); ++i) joined += (i ? "," : "") + a.strings(i);
  return joined;
}

// Builds the Graph of one ModelProto. Holds the name → value map of the
// values defined so far, which is what makes node inputs resolvable in
// topological order.
class Importer {
 public:
  // `external` reads external tensor data; nullptr when the model has no
  // directory (given as bytes).
  Importer(const onnx::ModelProto& model, std::string source, const OnnxImportOptions& options,
           const onnx_import::ExternalDataReader* external)
      : model_(model), source_(std::move(source)), options_(options), external_(external) {}

  Result<ImportReport> run() {
    HS_RETURN_IF_ERROR(read_opset());
    const onnx::GraphProto& g = model_.graph();
    report_.graph.set_name(g.name().empty() ? std::filesystem::path(source_).stem().string() : g.name());
    report_.graph.set_opset(opset_);
    HS_RETURN_IF_ERROR(add_initializers(g));
    HS_RETURN_IF_ERROR(add_inputs(g));
    for (int i = 0; i < g.node_size(); ++i) HS_RETURN_IF_ERROR(add_node(g.node(i), i));
    HS_RETURN_IF_ERROR(add_outputs(g));
    Status valid = report_.graph.validate();
    if (!valid.is_ok()) return valid.with_context(prefix());
    // fp16 and bf16 models run in f32 behind their 16-bit interface
    // (passes/compute_f16_in_f32.h).
    std::vector<DType> output_dtypes;
    for (const auto& out : g.output())
      output_dtypes.push_back(dtype_from_onnx(out.type().tensor_type().elem_type()).value_or(DType::kFloat32));
    if (has_f16_tensors(report_.graph) ||
        std::any_of(output_dtypes.begin(), output_dtypes.end(), [](DType d) { return is_half_float(d); })) {
      Result<Graph> widened = compute_f16_in_f32(report_.graph, output_dtypes);
      if (!widened.is_ok()) return widened.status().with_context(prefix());
      report_.graph = std::move(widened).value();
    }
    return std::move(report_);
  }

 private:
  std::string prefix() const { return "failed to import ONNX model '" + source_ + "': "; }

  Status read_opset() {
    bool found = false;
    for (const auto& o : model_.opset_import())
      if (is_default_domain(o.domain())) {
        opset_ = static_cast<int>(o.version());
        found = true;
      }
    if (!found)
      return invalid_argument(prefix() + "the model imports no opset of the default ONNX domain (opset imports: " +
                              list_domains(model_) + ")");
    if (opset_ < kMinOnnxOpset || opset_ > kMaxOnnxOpset)
      return unsupported(prefix() + "default-domain opset " + std::to_string(opset_) +
                         " is not supported (supported: " + std::to_string(kMinOnnxOpset) + " to " +
                         std::to_string(kMaxOnnxOpset) + ")");
    return Status::ok();
  }

  // A new value name must not be taken yet: ONNX names every value once.
  Status check_fresh(const std::string& name, const std::string& what) const {
    if (name.empty()) return invalid_argument(prefix() + what + " has an empty name");
    if (report_.graph.find_value(name) != kNoValue)
      return invalid_argument(prefix() + what + " '" + name + "' reuses the name of an earlier value");
    return Status::ok();
  }

  Status add_initializers(const onnx::GraphProto& g) {
    if (g.sparse_initializer_size() > 0)
      return unsupported(prefix() + "sparse initializer '" + g.sparse_initializer(0).values().name() +
                         "' is not supported");
    for (const auto& init : g.initializer()) {
      HS_RETURN_IF_ERROR(check_fresh(init.name(), "initializer"));
      auto t = tensor_from_proto(init, "initializer '" + init.name() + "'", external_);
      if (!t.is_ok()) return t.status().with_context(prefix());
      report_.graph.add_constant(init.name(), std::move(t).value());
    }
    return Status::ok();
  }

  // An input that is also an initializer is a constant with a default value
  // (IR version < 4 lists every initializer as an input, too).
  Status add_inputs(const onnx::GraphProto& g) {
    for (const auto& in : g.input()) {
      const ValueId existing = report_.graph.find_value(in.name());
      if (existing != kNoValue && report_.graph.value(existing).is_constant()) continue;
      HS_RETURN_IF_ERROR(check_fresh(in.name(), "graph input"));
      bool has_shape = true;
      auto type = tensor_type_from_proto(in, has_shape);
      if (!type.is_ok()) return type.status().with_context(prefix());
      if (!has_shape) {
        auto given = options_.input_shapes.find(in.name());
        if (given == options_.input_shapes.end())
          return invalid_argument(prefix() + "input '" + in.name() +
                                  "' declares no shape (not even its rank); give it with --input-shape " + in.name() +
                                  "=<dims, e.g. 1x3x224x224>");
        type->shape = given->second;
      }
      report_.graph.add_input(in.name(), std::move(type).value());
    }
    return Status::ok();
  }

  std::string unique_node_name(const onnx::NodeProto& node, int index) {
    std::string stem = node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
    std::string name = stem;
    for (int i = 1; !node_names_.insert(name).second; ++i) name = stem + "_" + std::to_string(i);
    return name;
  }

  void mark_unsupported(const std::string& name, const std::string& op, const std::string& domain, std::string reason) {
    UnsupportedNode u;
    u.name = name;
    u.op = is_default_domain(domain) ? op : domain + "." + op;
    u.reason = std::move(reason);
    u.opset = opset_;
    report_.unsupported.push_back(std::move(u));
  }

  // A Constant node of a form the IR can hold becomes a graph constant and
  // "" is returned; otherwise nothing is added and the reason is returned.
  Result<std::string> add_constant_node(const onnx::NodeProto& node, const std::string& name) {
    const std::string kForms = "only the value, value_float(s) and value_int(s) forms of Constant are supported";
    if (node.attribute_size() != 1 || node.output_size() != 1) return kForms;
    const onnx::AttributeProto& a = node.attribute(0);
    std::optional<Tensor> t;
    if (a.name() == "value") {
      auto r = tensor_from_proto(a.t(), "attribute 'value'", external_);
      if (!r.is_ok() && r.status().code() == StatusCode::kUnsupported) return r.status().message();
      if (!r.is_ok()) return r.status().with_context(prefix() + "node '" + name + "' (Constant): ");
      t = std::move(r).value();
    } else if (a.name() == "value_float") {
      t = Tensor::from_vector<float>(DType::kFloat32, {}, {a.f()});
    } else if (a.name() == "value_floats") {
      t = list_constant<float>(DType::kFloat32, a.floats());
    } else if (a.name() == "value_int") {
      t = Tensor::from_vector<int64_t>(DType::kInt64, {}, {a.i()});
    } else if (a.name() == "value_ints") {
      t = list_constant<int64_t>(DType::kInt64, a.ints());
    } else {
      return kForms;
    }
    HS_RETURN_IF_ERROR(check_fresh(node.output(0), "output of node '" + name + "' (Constant)"));
    report_.graph.add_constant(node.output(0), std::move(*t));
    return std::string();
  }

  Status add_node(const onnx::NodeProto& node, int index) {
    const std::string name = unique_node_name(node, index);
    std::string op = node.op_type();
    const bool default_domain = is_default_domain(node.domain());
    if (default_domain && op == "Constant") {
      HS_ASSIGN_OR_RETURN(const std::string why_not, add_constant_node(node, name));
      if (why_not.empty()) return Status::ok();
      mark_unsupported(name, op, node.domain(), why_not);
    } else if (!default_domain) {
      mark_unsupported(name, op, node.domain(),
                       "domain '" + node.domain() + "' is not supported; hetsched reads the default ONNX domain only");
    } else {
      // Upsample (deprecated in opset 10) is Resize with opset-10 inputs (X, scales).
      if (op == "Upsample" && opset_ <= 10) op = "Resize";
      if (!find_op_schema(op)) {
        mark_unsupported(name, op, node.domain(), "op not in the hetsched op set");
      } else if (first_opset_of(node.op_type()) > opset_) {
        mark_unsupported(name, op, node.domain(),
                         "op does not exist at this opset (ONNX added it in opset " +
                             std::to_string(first_opset_of(node.op_type())) + ")");
      }
    }
    // Unsupported nodes stay in the graph under their own op name (prefixed
    // with their domain), so the values they produce exist for their readers.
    if (!default_domain) op = node.domain() + "." + op;

    Attributes attrs;
    for (const auto& a : node.attribute()) {
      if (default_domain && is_recurrent_activations(node.op_type(), a)) {
        attrs.set(a.name(), join_activations(a));
        continue;
      }
      auto value = attribute_from_proto(a, external_);
      if (!value.is_ok()) {
        if (value.status().code() != StatusCode::kUnsupported)
          return value.status().with_context(prefix() + "node '" + name + "' (" + node.op_type() + "): ");
        if (report_.unsupported.empty() || report_.unsupported.back().name != name)
          mark_unsupported(name, node.op_type(), node.domain(), value.status().message());
        continue;
      }
      attrs.set(a.name(), std::move(value).value());
    }

    // Omitted optional inputs and outputs have empty names; trailing ones
    // are dropped, as if the node had been written without them.
    int num_inputs = node.input_size();
    while (num_inputs > 0 && node.input(num_inputs - 1).empty()) --num_inputs;
    std::vector<ValueId> inputs;
    for (int i = 0; i < num_inputs; ++i) {
      const std::string& in = node.input(i);
      if (in.empty()) {
        inputs.push_back(kNoValue);
        continue;
      }
      const ValueId id = report_.graph.find_value(in);
      if (id == kNoValue)
        return invalid_argument(prefix() + "node '" + name + "' (" + node.op_type() + "): input '" + in +
                                "' is not a graph input, an initializer or the output of an earlier node "
                                "(ONNX requires nodes in topological order)");
      inputs.push_back(id);
    }
    // Upsample before opset 9 takes its scales as an attribute: the constant
    // input Resize (opset 10's form, which it becomes) reads.
    if (default_domain && node.op_type() == "Upsample" && opset_ < 9 && inputs.size() == 1 && attrs.has("scales")) {
      auto scales = attrs.get_floats("scales", {});
      if (!scales.is_ok()) return scales.status().with_context(prefix() + "node '" + name + "' (Upsample): ");
      const int64_t n = static_cast<int64_t>(scales->size());
      inputs.push_back(report_.graph.add_constant(report_.graph.unique_value_name(name + "_scales"),
                                                  Tensor::from_vector(DType::kFloat32, {n}, *scales)));
    }
    int num_outputs = node.output_size();
    while (num_outputs > 0 && node.output(num_outputs - 1).empty()) --num_outputs;
    if (num_outputs == 0)
      return invalid_argument(prefix() + "node '" + name + "' (" + node.op_type() + ") has no outputs");
    std::vector<std::string> outputs;
    for (int i = 0; i < num_outputs; ++i) {
      std::string out = node.output(i);
      if (out.empty()) {
        out = report_.graph.unique_value_name(name + "_unused_" + std::to_string(i));
      } else {
        HS_RETURN_IF_ERROR(check_fresh(out, "output of node '" + name + "' (" + node.op_type() + ")"));
      }
      outputs.push_back(std::move(out));
    }
    report_.graph.add_node(op, name, std::move(inputs), std::move(outputs), std::move(attrs));
    return Status::ok();
  }

  Status add_outputs(const onnx::GraphProto& g) {
    for (const auto& out : g.output()) {
      const ValueId id = report_.graph.find_value(out.name());
      if (id == kNoValue) return invalid_argument(prefix() + "graph output '" + out.name() + "' is never written");
      report_.graph.add_output(id);
    }
    return Status::ok();
  }

  const onnx::ModelProto& model_;
  std::string source_;
  const OnnxImportOptions& options_;
  const onnx_import::ExternalDataReader* external_;
  int opset_ = 0;
  std::set<std::string> node_names_;
  ImportReport report_;
};

}  // namespace

std::string UnsupportedNode::describe() const {
  const auto dot = op.rfind('.');
  const std::string where = dot == std::string::npos ? op + ", opset " + std::to_string(opset)
                                                     : op.substr(dot + 1) + ", domain " + op.substr(0, dot);
  return "node '" + name + "' (" + where + "): " + reason;
}

namespace {

// Parses the bytes of a ModelProto and imports it; `external` as for Importer.
Result<ImportReport> import_model(std::span<const uint8_t> bytes, const std::string& source,
                                  const OnnxImportOptions& options, const onnx_import::ExternalDataReader* external) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return unsupported("failed to import ONNX model '" + source + "': models of 2 GiB or more are not supported");
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return data_loss("failed to import ONNX model '" + source +
                     "': the file is not a valid ONNX model (protobuf parse failed)");
  if (!model.has_graph()) return data_loss("failed to import ONNX model '" + source + "': the model has no graph");
  return Importer(model, source, options, external).run();
}

}  // namespace

Result<ImportReport> import_onnx_bytes(std::span<const uint8_t> bytes, const std::string& source,
                                       const OnnxImportOptions& options) {
  return import_model(bytes, source, options, nullptr);
}

Result<ImportReport> import_onnx(const std::string& path, const OnnxImportOptions& options) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("failed to import ONNX model '" + path + "': " + std::strerror(errno));
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // External data lives beside the model: locations are relative to its directory.
  const onnx_import::ExternalDataReader external(std::filesystem::path(path).parent_path());
  return import_model(bytes, path, options, &external);
}

Result<Graph> load_onnx(const std::string& path, const InputShapes& input_shapes) {
  OnnxImportOptions options;
  options.input_shapes = input_shapes;
  HS_ASSIGN_OR_RETURN(ImportReport report, import_onnx(path, options));
  if (!report.unsupported.empty()) {
    // Name a few; `hetsched preview` lists them all.
    constexpr size_t kNamed = 5;
    std::string what;
    for (size_t i = 0; i < std::min(kNamed, report.unsupported.size()); ++i)
      what += (i ? "; " : "") + report.unsupported[i].describe();
    if (report.unsupported.size() > kNamed)
      what += "; and " + std::to_string(report.unsupported.size() - kNamed) + " more (see `hetsched preview`)";
    return unsupported("failed to import ONNX model '" + path + "': " + what);
  }
  Status shapes = apply_input_shapes(report.graph, input_shapes);
  if (!shapes.is_ok()) return shapes.with_context("failed to import ONNX model '" + path + "': ");
  return std::move(report.graph);
}

}  // namespace hetsched
