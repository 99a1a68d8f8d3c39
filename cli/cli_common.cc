#include "cli/cli_common.h"

#include <map>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace hetsched::cli {

void add_common_options(CLI::App& cmd, CommonOptions& options, bool model_options) {
  cmd.add_option("--profile,-p", options.profile_path, "Deployment profile (YAML); default: the CPU-only default");
  cmd.add_option("--log-level", options.log_level, "error | warn | info | debug (default: the profile's)")
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}));
  if (!model_options) return;
  cmd.add_option("--input-shape", options.input_shapes, "Shape for an input, NAME=1x3x224x224 (repeatable; of a compiled program: picks its shape variant)");
  cmd.add_option("--policy", options.policy,
                 "Partition policy instead of the profile's: auto | vgf_first | vulkan_first | cpu_first | a "
                 "delegate list such as vulkan,cpu");
  cmd.add_option("--costs", options.costs,
                 "Cost figures (a file from hetsched calibrate) instead of the profile's partition.costs");
}

Status apply_policy_option(const std::string& policy, Profile& profile) {
  if (policy.empty()) return Status::ok();
  if (policy == "auto" || policy == "vgf_first" || policy == "vulkan_first" || policy == "cpu_first") {
    profile.partition.prefer = policy;
    profile.partition.order.clear();
    return Status::ok();
  }
  std::vector<std::string> order;
  for (size_t start = 0; start <= policy.size();) {
    const size_t comma = std::min(policy.find(',', start), policy.size());
    const std::string name = policy.substr(start, comma - start);
    const auto& known = known_delegate_names();
    if (std::find(known.begin(), known.end(), name) == known.end())
      return invalid_argument("--policy '" + policy + "': '" + name +
                              "' is not a policy or delegate (accepted: auto, vgf_first, vulkan_first, cpu_first, or "
                              "a comma-separated list of cpu, vulkan, vgf)");
    order.push_back(name);
    start = comma + 1;
  }
  profile.partition.prefer = "list";
  profile.partition.order = std::move(order);
  return Status::ok();
}

Status apply_log_level(const std::string& level) {
  // Runtime log lines carry their own component tag ("[VGF] init: ...").
  spdlog::set_pattern("%v");
  if (level == "error") spdlog::set_level(spdlog::level::err);
  else if (level == "warn") spdlog::set_level(spdlog::level::warn);
  else if (level == "info") spdlog::set_level(spdlog::level::info);
  else if (level == "debug") spdlog::set_level(spdlog::level::debug);
  else return invalid_argument("log level '" + level + "' is not one of error, warn, info, debug");
  return Status::ok();
}

Result<Profile> load_profile_for(const CommonOptions& options) {
  Profile profile = default_profile();
  if (!options.profile_path.empty()) {
    HS_ASSIGN_OR_RETURN(profile, load_profile(options.profile_path));
  }
  HS_RETURN_IF_ERROR(apply_policy_option(options.policy, profile));
  if (!options.costs.empty()) profile.partition.costs = options.costs;
  HS_RETURN_IF_ERROR(apply_log_level(options.log_level.empty() ? profile.log_level : options.log_level));
  return profile;
}

Status warm_up(Session& session, const std::vector<Tensor>& inputs, int runs) {
  if (runs <= 0) return Status::ok();
  std::vector<Tensor> outputs;
  for (const TensorType& t : session.output_types()) outputs.emplace_back(t);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  for (int i = 0; i < runs || elapsed_ms() < kWarmUpMs; ++i) HS_RETURN_IF_ERROR(session.run_into(inputs, outputs));
  return Status::ok();
}

int report_error(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kDataLoss:
    case StatusCode::kUnsupported:
    case StatusCode::kAlreadyExists:
      return kExitBadInput;
    default:
      return kExitFailure;
  }
}

}  // namespace hetsched::cli
