// Pieces every hetsched subcommand shares: options, loading, error output.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cli/input_parse.h"  // parse_input_shapes
#include "graph/shape_inference.h"
#include "hetsched/status.h"
#include "profile/profile.h"
#include "scheduler/session.h"

namespace hetsched::cli {

// Exit codes: 0 ok, 1 a failure while doing the work, 2 bad usage or input.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

struct CommonOptions {
  std::string profile_path;                 // --profile; empty = built-in default (configs/default.yaml)
  std::string log_level;                    // --log-level; empty = the profile's
  std::vector<std::string> input_shapes;    // --input-shape NAME=DIMS
  std::string policy;                       // --policy; empty = the profile's partition.prefer
  std::string costs;                        // --costs; empty = the profile's partition.costs
};

// --profile, --log-level; with `model_options` also --input-shape, --policy
// and --costs (commands that plan a model).
void add_common_options(CLI::App& cmd, CommonOptions& options, bool model_options = true);
// Loads the profile and applies the log level (flag beats profile).
Result<Profile> load_profile_for(const CommonOptions& options);

// Untimed runs before timing: `runs` of them and, when runs > 0, more until
// kWarmUpMs have passed. A GPU clocks down while a new session compiles and
// uploads its weights, and takes many runs to clock up again: ResNet-50 on
// the H100 measured a p50 of 3.7-5.7 ms over 40 runs after 3 warm-up runs,
// 1.45 ms once warm.
inline constexpr double kWarmUpMs = 300;
Status warm_up(Session& session, const std::vector<Tensor>& inputs, int runs);
Status apply_log_level(const std::string& level);
// --policy: sets the profile's partition.prefer (and order, for a list).
Status apply_policy_option(const std::string& policy, Profile& profile);
// Prints "error: <message>" to stderr and returns the exit code for `status`.
int report_error(const Status& status);

// Subcommands. Each registers itself on `app` and returns its run function's flag.
void register_preview(CLI::App& app, std::function<int()>& run);
void register_run(CLI::App& app, std::function<int()>& run);
void register_compile(CLI::App& app, std::function<int()>& run);
void register_devices(CLI::App& app, std::function<int()>& run);
void register_import(CLI::App& app, std::function<int()>& run);  // import: .onnx → .hsg
void register_vgf(CLI::App& app, std::function<int()>& run);  // export-vgf, run-vgf
void register_bench(CLI::App& app, std::function<int()>& run);

}  // namespace hetsched::cli
