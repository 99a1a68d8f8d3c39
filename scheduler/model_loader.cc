#include "scheduler/model_loader.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "graph/graph_serialize.h"
#include "graph/onnx_import.h"
#include "scheduler/graph_cleanup.h"

namespace hetsched {

namespace {
constexpr char kGraphMagic[4] = {'H', 'S', 'G', 'R'};
constexpr size_t kGraphHeaderSize = 8;  // magic + u32 version

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

ModelFormat model_format_of(const std::string& path) {
  if (ends_with(path, ".hsg")) return ModelFormat::kGraph;
  if (ends_with(path, ".hsp")) return ModelFormat::kProgram;
  if (ends_with(path, ".onnx")) return ModelFormat::kOnnx;
  return ModelFormat::kUnknown;
}

std::string accepted_model_formats() {
  return "accepted: .hsg (hetsched graph), .hsp (compiled program), .onnx (ONNX model)";
}

Status write_graph_file(const Graph& graph, const std::string& path) {
  const auto body = serialize_graph(graph);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return not_found("failed to write graph file '" + path + "': " + std::strerror(errno));
  const uint32_t version = kGraphFileVersion;
  f.write(kGraphMagic, 4);
  f.write(reinterpret_cast<const char*>(&version), 4);
  f.write(reinterpret_cast<const char*>(body.data()), static_cast<std::streamsize>(body.size()));
  if (!f) return internal_error("failed to write graph file '" + path + "': write error");
  return Status::ok();
}

Result<Graph> read_graph_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("failed to read graph file '" + path + "': " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < kGraphHeaderSize || std::memcmp(bytes.data(), kGraphMagic, 4) != 0)
    return data_loss("'" + path + "' is not a hetsched graph file (expected it to start with HSGR)");
  uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 4, 4);
  if (version > kGraphFileVersion)
    return unsupported("graph file '" + path + "' has format version " + std::to_string(version) +
                       "; this hetsched reads version " + std::to_string(kGraphFileVersion));
  auto graph = deserialize_graph(std::span<const uint8_t>(bytes).subspan(kGraphHeaderSize));
  if (!graph.is_ok()) return graph.status().with_context("failed to load graph file '" + path + "': ");
  return graph;
}

Result<Graph> load_model(const std::string& path, const InputShapes& input_shapes) {
  switch (model_format_of(path)) {
    case ModelFormat::kGraph: {
      HS_ASSIGN_OR_RETURN(Graph graph, read_graph_file(path));
      HS_RETURN_IF_ERROR(check_graph(graph, input_shapes));
      return graph;
    }
    case ModelFormat::kProgram:
      return invalid_argument("'" + path + "' is a compiled program, not a graph; run it with `hetsched run`");
    case ModelFormat::kOnnx: {
      HS_ASSIGN_OR_RETURN(Graph graph, load_onnx(path, input_shapes));
      auto cleaned = cleanup_graph(graph, input_shapes);
      if (!cleaned.is_ok()) return cleaned.status().with_context("failed to load ONNX model '" + path + "': ");
      HS_RETURN_IF_ERROR(check_graph(graph));
      return graph;
    }
    case ModelFormat::kUnknown: break;
  }
  return invalid_argument("failed to load model '" + path + "': unknown file type (" + accepted_model_formats() + ")");
}

Result<std::vector<std::string>> unsupported_onnx_nodes(const std::string& path) {
  HS_ASSIGN_OR_RETURN(ImportReport report, import_onnx(path));
  std::vector<std::string> lines;
  for (const UnsupportedNode& u : report.unsupported) lines.push_back(u.describe());
  return lines;
}

}  // namespace hetsched
