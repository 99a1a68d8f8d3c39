// hetsched import MODEL.onnx -o MODEL.hsg: import an ONNX model, clean it up
// and write it as a hetsched graph file.
#include <cstdio>

#include "cli/cli_common.h"
#include "scheduler/model_loader.h"

namespace hetsched::cli {

namespace {
struct ImportOptions {
  std::string model;
  std::string output;
  std::string log_level = "warn";
  std::vector<std::string> input_shapes;
};

int run_import(const ImportOptions& o) {
  if (Status s = apply_log_level(o.log_level); !s.is_ok()) return report_error(s);
  if (model_format_of(o.model) != ModelFormat::kOnnx)
    return report_error(invalid_argument("failed to import '" + o.model + "': expected an ONNX model (.onnx)"));
  auto shapes = parse_input_shapes(o.input_shapes);
  if (!shapes.is_ok()) return report_error(shapes.status());
  // load_model imports strictly, folds constants, applies the clean-ups and
  // infers every shape, so the graph file loads without further work.
  auto graph = load_model(o.model, *shapes);
  if (!graph.is_ok()) return report_error(graph.status());
  if (Status s = write_graph_file(*graph, o.output); !s.is_ok()) return report_error(s);
  std::printf("wrote %s: graph '%s', opset %d, %zu nodes, %zu inputs, %zu outputs\n", o.output.c_str(),
              graph->name().c_str(), graph->opset(), graph->num_nodes(), graph->inputs().size(),
              graph->outputs().size());
  return kExitOk;
}
}  // namespace

void register_import(CLI::App& app, std::function<int()>& run) {
  auto options = std::make_shared<ImportOptions>();
  CLI::App* cmd = app.add_subcommand("import", "Import an ONNX model into a hetsched graph file (.hsg)");
  cmd->add_option("model", options->model, "ONNX model (.onnx)")->required();
  cmd->add_option("--output,-o", options->output, "Graph file to write (.hsg)")->required();
  cmd->add_option("--input-shape", options->input_shapes, "Shape for a dynamic input, NAME=1x3x224x224 (repeatable)");
  cmd->add_option("--log-level", options->log_level, "error | warn | info | debug (default: warn)")
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}));
  cmd->callback([options, &run] { run = [options] { return run_import(*options); }; });
}

}  // namespace hetsched::cli
