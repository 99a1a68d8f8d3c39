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

Result<std::vector<InputShapes>> parse_shape_variants(const std::vector<std::string>& specs) {
  std::map<std::string, std::vector<Shape>> by_name;  // each input's shapes, in the order given
  std::vector<std::string> order;
  for (const std::string& spec : specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalid_argument("--input-shape '" + spec + "' must be NAME=DIMS, e.g. x=1x3x224x224");
    auto shape = parse_shape(spec.substr(eq + 1));
    if (!shape.is_ok()) return shape.status().with_context("--input-shape '" + spec + "': ");
    const std::string name = spec.substr(0, eq);
    if (!by_name.count(name)) order.push_back(name);
    by_name[name].push_back(std::move(shape).value());
  }
  // The k-th variant takes each input's k-th shape, or its only one.
  size_t count = 1;
  for (const std::string& name : order) {
    const size_t n = by_name[name].size();
    if (n == 1) continue;
    if (count > 1 && n != count)
      return invalid_argument("--input-shape gives '" + name + "' " + std::to_string(n) + " shapes but another input " +
                              std::to_string(count) + "; inputs with several shapes (shape variants) need as many each");
    count = n;
  }
  std::vector<InputShapes> variants(count);
  for (const std::string& name : order)
    for (size_t k = 0; k < count; ++k) variants[k][name] = by_name[name][by_name[name].size() == 1 ? 0 : k];
  return variants;
}

Result<InputShapes> parse_input_shapes(const std::vector<std::string>& specs) {
  HS_ASSIGN_OR_RETURN(std::vector<InputShapes> variants, parse_shape_variants(specs));
  if (variants.size() > 1)
    return invalid_argument("--input-shape names an input more than once; several shapes for one input make shape "
                            "variants, which only `hetsched compile` builds (a run takes one shape per input)");
  return std::move(variants.front());
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
