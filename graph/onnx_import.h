// Importing ONNX models (.onnx) into the graph IR.
//
//   Result<ImportReport> r = import_onnx("det.onnx");    // lenient: lists what hetsched cannot run
//   Result<Graph> g = load_onnx("det.onnx", shapes);      // strict: any unsupported node is an error
//
// The importer reads the default ONNX domain at opsets kMinOnnxOpset to
// kMaxOnnxOpset, and translates the model faithfully: ops keep their ONNX
// names, attributes and input order, and the graph records the opset, so
// that the op schemas (op_schema.h) apply the attribute forms of that opset
// (Clip's bounds as attributes or inputs, Squeeze's axes, Resize's inputs...).
// Initializers and Constant nodes become graph constants; a graph input that
// is also an initializer is a constant, as ONNX allows. Dims given by name
// (dim_param) or not at all become kDynamicDim until input shapes fix them.
//
// The importer changes nothing else: constant folding and the other
// clean-ups are passes (graph/passes/) that the model loader runs after it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/shape_inference.h"
#include "hetsched/status.h"

namespace hetsched {

// The default-domain opsets the importer and the op schemas understand.
inline constexpr int kMinOnnxOpset = 7;
inline constexpr int kMaxOnnxOpset = 21;

struct OnnxImportOptions {
  // Only consulted for graph inputs that declare no shape at all, which
  // leaves their rank unknown. Every other input shape is applied afterwards
  // with apply_input_shapes (load_onnx does that).
  InputShapes input_shapes;
};

// A node of the model that hetsched cannot run.
struct UnsupportedNode {
  std::string name;    // the node's name in the graph (made unique and non-empty)
  std::string op;      // ONNX op type; "domain.Op" for an op of another domain
  std::string reason;  // e.g. "op not in the hetsched op set"
  int opset = 0;       // the default-domain opset of the model

  // "node 'nms' (NonMaxSuppression, opset 11): op not in the hetsched op set"
  std::string describe() const;
};

struct ImportReport {
  // The whole model, unsupported nodes included (with their ONNX op names),
  // so that a preview can show where they sit. Not shape-inferred.
  Graph graph;
  std::vector<UnsupportedNode> unsupported;
};

// Reads the model at `path`. Tensors with external data (data_location
// EXTERNAL, as PyTorch's dynamo exporter writes them to model.onnx.data)
// are read from files relative to the model's directory, never outside it.
// Fails for what makes the whole model unreadable (not ONNX, an opset
// outside kMinOnnxOpset..kMaxOnnxOpset, missing or short external data, an
// element type hetsched has no dtype for, nodes out of topological order);
// nodes hetsched cannot run are listed in the report instead.
Result<ImportReport> import_onnx(const std::string& path, const OnnxImportOptions& options = {});
// The same from the bytes of a serialized ModelProto; `source` names it in
// errors. Bytes have no directory, so external data is refused.
Result<ImportReport> import_onnx_bytes(std::span<const uint8_t> bytes, const std::string& source,
                                       const OnnxImportOptions& options = {});

// import_onnx, then an error naming the unsupported nodes when there are
// any, then apply_input_shapes(input_shapes), which refuses inputs that are
// still dynamic. The graph is validated but not shape-inferred (the loader
// folds constants first; check_graph infers).
Result<Graph> load_onnx(const std::string& path, const InputShapes& input_shapes = {});

}  // namespace hetsched
