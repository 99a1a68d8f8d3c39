// hetsched devices: the engines this machine offers.
#include <cstdio>
#include <thread>

#include "cli/cli_common.h"
#include "delegates/registry.h"
#include "shared_gpu/device_info.h"

namespace hetsched::cli {

namespace {
int run_devices(const std::string& log_level) {
  if (Status s = apply_log_level(log_level); !s.is_ok()) return report_error(s);
  std::printf("delegates built in:\n");
  for (const auto& info : delegate_infos()) std::printf("  %-8s %s\n", info.name.c_str(), info.description.c_str());
  std::printf("\ncpu: %u hardware threads\n", std::thread::hardware_concurrency());
  // No Vulkan (no loader, no driver) is not an error for this command: the
  // CPU delegate still works, and the line says what is missing.
  auto devices = enumerate_devices();
  if (!devices.is_ok()) {
    std::printf("\nvulkan: unavailable: %s\n", devices.status().message().c_str());
    return kExitOk;
  }
  std::printf("\nvulkan devices:\n%s", format_devices(*devices).c_str());
  return kExitOk;
}
}  // namespace

void register_devices(CLI::App& app, std::function<int()>& run) {
  auto level = std::make_shared<std::string>("warn");
  CLI::App* cmd = app.add_subcommand("devices", "List the delegates and devices (CPU, Vulkan GPUs) hetsched can use");
  cmd->add_option("--log-level", *level, "error | warn | info | debug")->check(CLI::IsMember({"error", "warn", "info", "debug"}));
  cmd->callback([level, &run] { run = [level] { return run_devices(*level); }; });
}

}  // namespace hetsched::cli
