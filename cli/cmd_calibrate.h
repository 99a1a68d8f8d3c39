// hetsched calibrate: registered beside the commands of cli_common.h.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace hetsched::cli {

void register_calibrate(CLI::App& app, std::function<int()>& run);

}  // namespace hetsched::cli
