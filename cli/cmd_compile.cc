// hetsched compile MODEL -o FILE: plan and compile ahead of time into a program file.
#include <cstdio>

#include "cli/cli_common.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"
#include "scheduler/program_file.h"

namespace hetsched::cli {

namespace {
struct CompileOptions {
  CommonOptions common;
  std::string model;
  std::string output;
};

int run_compile(const CompileOptions& o) {
  auto profile = load_profile_for(o.common);
  if (!profile.is_ok()) return report_error(profile.status());
  auto shapes = parse_input_shapes(o.common.input_shapes);
  if (!shapes.is_ok()) return report_error(shapes.status());
  auto graph = load_model(o.model, *shapes);
  if (!graph.is_ok()) return report_error(graph.status());
  auto program = build_program(*graph, *profile);
  if (!program.is_ok()) return report_error(program.status());
  if (Status s = write_program_file(*program, o.output); !s.is_ok()) return report_error(s);
  std::string delegates;
  for (const auto& island : program->islands) delegates += (delegates.empty() ? "" : ", ") + island.delegate;
  std::printf("wrote %s: %zu island(s) [%s], %zu step(s)\n", o.output.c_str(), program->islands.size(),
              delegates.c_str(), program->steps.size());
  return kExitOk;
}
}  // namespace

void register_compile(CLI::App& app, std::function<int()>& run) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand("compile", "Partition and compile a model into a program file (.hsp)");
  cmd->add_option("model", options->model, "Model file (" + accepted_model_formats() + ")")->required();
  cmd->add_option("--output,-o", options->output, "Program file to write (.hsp)")->required();
  add_common_options(*cmd, options->common);
  cmd->callback([options, &run] { run = [options] { return run_compile(*options); }; });
}

}  // namespace hetsched::cli
