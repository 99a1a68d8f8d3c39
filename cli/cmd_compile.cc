// hetsched compile MODEL -o FILE: plan and compile ahead of time into a program file.
#include <cstdio>

#include "cli/cli_common.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"
#include "scheduler/program_file.h"
#include "scheduler/shape_variants.h"

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
  auto variants = parse_shape_variants(o.common.input_shapes);
  if (!variants.is_ok()) return report_error(variants.status());
  if (model_format_of(o.model) == ModelFormat::kProgram)
    return report_error(invalid_argument("'" + o.model + "' is already a compiled program; compile a model (" +
                                         accepted_model_formats() + ")"));
  auto programs = build_program_variants(o.model, *profile, *variants);
  if (!programs.is_ok()) return report_error(programs.status());
  if (Status s = write_program_variants_file(*programs, o.output); !s.is_ok()) return report_error(s);
  for (const Program& program : *programs) {
    std::string delegates;
    for (const auto& island : program.islands) delegates += (delegates.empty() ? "" : ", ") + island.delegate;
    std::string variant = programs->size() > 1 ? " for " + input_shapes_label(program) : "";
    std::printf("wrote %s%s: %zu island(s) [%s], %zu step(s)\n", o.output.c_str(), variant.c_str(),
                program.islands.size(), delegates.c_str(), program.steps.size());
  }
  return kExitOk;
}
}  // namespace

void register_compile(CLI::App& app, std::function<int()>& run) {
  auto options = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand("compile", "Partition and compile a model into a program file (.hsp); an input's --input-shape given k times compiles k shape variants");
  cmd->add_option("model", options->model, "Model file (" + accepted_model_formats() + ")")->required();
  cmd->add_option("--output,-o", options->output, "Program file to write (.hsp)")->required();
  add_common_options(*cmd, options->common);
  cmd->callback([options, &run] { run = [options] { return run_compile(*options); }; });
}

}  // namespace hetsched::cli
