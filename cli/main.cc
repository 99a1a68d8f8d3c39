// hetsched: preview, compile and run models across CPU and GPU delegates.
#include <CLI/CLI.hpp>

#include <functional>

#include "cli/cli_common.h"
#include "cli/cmd_calibrate.h"
#include "hetsched/version.h"
#include "sync/fault_injection.h"

int main(int argc, char** argv) {
  using namespace hetsched::cli;
  CLI::App app{"hetsched — run one model across the CPU and GPU engines of this machine"};
  app.set_version_flag("--version", hetsched::kVersionString);
  app.require_subcommand(1);
  // Test-only: HETSCHED_FAULT=POINT:N:RESULT fails one Vulkan call, for the
  // CLI's fault tests (docs/reliability.md). Unset in normal use.
  if (hetsched::Status armed = hetsched::arm_fault_from_env(); !armed.is_ok()) return report_error(armed);
  std::function<int()> run;
  register_preview(app, run);
  register_run(app, run);
  register_bench(app, run);
  register_calibrate(app, run);
  register_compile(app, run);
  register_devices(app, run);
  register_import(app, run);
  register_vgf(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  return run ? run() : kExitBadInput;
}
