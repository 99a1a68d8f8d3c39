// hetsched preview MODEL: where every part of the model runs, and why.
#include <cstdio>

#include "cli/cli_common.h"
#include "partitioner/preview.h"
#include "scheduler/compiler.h"
#include "scheduler/model_loader.h"
#include "scheduler/partition_profile.h"
#include "scheduler/program_preview.h"
#include "scheduler/pipeline.h"

namespace hetsched::cli {

namespace {
struct PreviewOptions {
  CommonOptions common;
  std::string model;
  std::string format = "text";
};

int run_preview(const PreviewOptions& o) {
  auto profile = load_profile_for(o.common);
  if (!profile.is_ok()) return report_error(profile.status());
  auto shapes = parse_input_shapes(o.common.input_shapes);
  if (!shapes.is_ok()) return report_error(shapes.status());
  auto graph = load_model(o.model, *shapes);
  if (!graph.is_ok()) {
    // The error names at most a few unsupported ONNX nodes; the preview lists them all.
    if (model_format_of(o.model) == ModelFormat::kOnnx)
      if (auto nodes = unsupported_onnx_nodes(o.model); nodes.is_ok() && !nodes->empty()) {
        std::printf("unsupported nodes (%zu):\n", nodes->size());
        for (const std::string& line : *nodes) std::printf("  %s\n", line.c_str());
      }
    return report_error(graph.status());
  }
  auto planned = plan_model(*graph, *profile);
  if (!planned.is_ok()) return report_error(planned.status());
  // The compiled program says how each handoff is done and plans memory.
  auto program = compile_program(*graph, planned->plan, planned->delegates, *profile);
  if (!program.is_ok()) return report_error(program.status());
  PreviewHeader extras;
  extras.handoffs = program_handoffs(*program);
  auto commands = program_commands(*program, planned->delegates);
  if (!commands.is_ok()) return report_error(commands.status());
  extras.commands = std::move(commands).value();
  extras.memory_text = format_memory_text(program->memory);
  extras.memory_json = format_memory_json(program->memory);
  const PreviewProfile shown = preview_profile_from(*profile);
  std::string text;
  if (o.format == "json") text = format_plan_json(*graph, planned->plan, shown, extras);
  else if (o.format == "dot") text = format_plan_dot(*graph, planned->plan);
  else text = format_plan_text(*graph, planned->plan, shown, extras);
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}
}  // namespace

void register_preview(CLI::App& app, std::function<int()>& run) {
  auto options = std::make_shared<PreviewOptions>();
  CLI::App* cmd = app.add_subcommand("preview", "Show the partition: islands, handoffs, coverage, reasons");
  cmd->add_option("model", options->model, "Model file (" + accepted_model_formats() + ")")->required();
  cmd->add_option("--format,-f", options->format, "text | json | dot")->check(CLI::IsMember({"text", "json", "dot"}));
  add_common_options(*cmd, options->common);
  cmd->callback([options, &run] { run = [options] { return run_preview(*options); }; });
}

}  // namespace hetsched::cli
