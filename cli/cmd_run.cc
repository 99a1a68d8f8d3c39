// hetsched run MODEL: run it once (or --repeat N times) and write or show the outputs.
#include <spdlog/spdlog.h>

#include <cstdio>

#include "cli/cli_common.h"
#include "cli/input_parse.h"
#include "cli/output_check.h"
#include "cli/tensor_io.h"
#include "scheduler/pipeline.h"

namespace hetsched::cli {

namespace {
struct RunOptions {
  CommonOptions common;
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  int repeat = 1;
  std::string trace;
  bool check = false;
};

// --check: the same model and inputs on the portable CPU kernels, and one
// line per output comparing the run's outputs with them.
Status check_outputs(const RunOptions& o, const Session& session, const std::vector<Tensor>& inputs,
                     const std::vector<Tensor>& outputs) {
  if (o.model.size() >= 4 && o.model.compare(o.model.size() - 4, 4, ".hsp") == 0)
    return invalid_argument("--check needs the model as .onnx or .hsg: a compiled program (.hsp) holds only its "
                            "islands, not the graph the reference runs");
  HS_ASSIGN_OR_RETURN(InputShapes shapes, parse_input_shapes(o.common.input_shapes));
  HS_ASSIGN_OR_RETURN(std::unique_ptr<Session> reference, open_session(o.model, reference_profile(), shapes));
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> want, reference->run(inputs));
  HS_ASSIGN_OR_RETURN(std::vector<OutputCheck> checks, compare_outputs(session.output_names(), outputs, want));
  std::printf("check against the portable CPU kernels (f32):\n");
  for (const OutputCheck& c : checks) std::printf("  %s\n", format_check(c).c_str());
  return Status::ok();
}

Status write_outputs(const Session& session, const std::vector<Tensor>& outputs, const std::vector<std::string>& args,
                     std::vector<std::string>& written_to) {
  const auto names = session.output_names();
  written_to.assign(names.size(), "");
  size_t next_positional = 0;
  for (const std::string& arg : args) {
    TensorFileArg a = parse_tensor_file_arg(arg);
    size_t idx = names.size();
    if (a.name.empty()) {
      idx = next_positional++;
    } else {
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == a.name) idx = i;
    }
    if (idx >= names.size())
      return invalid_argument("--output '" + arg + "' does not name one of the model's " +
                              std::to_string(names.size()) + " outputs");
    HS_RETURN_IF_ERROR(write_tensor_file(outputs[idx], a.path));
    written_to[idx] = a.path;
  }
  return Status::ok();
}

int run_run(const RunOptions& o) {
  auto profile = load_profile_for(o.common);
  if (!profile.is_ok()) return report_error(profile.status());
  auto ready = open_with_inputs(*profile, o.common, o.model, o.inputs);
  if (!ready.is_ok()) return report_error(ready.status());
  Session& s = *ready->session;
  const std::vector<Tensor>* inputs = &ready->inputs;

  RunStats stats;
  Result<std::vector<Tensor>> outputs = std::vector<Tensor>{};
  double best_ms = 1e300, total_ms = 0;
  for (int i = 0; i < o.repeat; ++i) {
    stats = RunStats{};
    outputs = s.run(*inputs, &stats);
    if (!outputs.is_ok()) return report_error(outputs.status());
    best_ms = std::min(best_ms, stats.total_ms);
    total_ms += stats.total_ms;
  }
  std::vector<std::string> written_to;
  if (Status st = write_outputs(s, *outputs, o.outputs, written_to); !st.is_ok()) return report_error(st);

  const auto names = s.output_names();
  for (size_t i = 0; i < outputs->size(); ++i) {
    const Tensor& t = (*outputs)[i];
    if (!written_to[i].empty())
      std::printf("output %s %s written to %s\n", names[i].c_str(), t.type().to_string().c_str(), written_to[i].c_str());
    else
      std::printf("output %s %s %s\n", names[i].c_str(), t.type().to_string().c_str(), summarize_tensor(t).c_str());
  }
  if (o.repeat > 1)
    std::printf("%d runs · best %.3f ms · mean %.3f ms · %d host waits per run\n", o.repeat, best_ms,
                total_ms / o.repeat, stats.host_waits);
  else
    std::printf("%.3f ms · %d host wait%s\n", stats.total_ms, stats.host_waits, stats.host_waits == 1 ? "" : "s");
  // logging.trace is written by the session after every run; --trace names another file.
  if (!o.trace.empty())
    if (Status st = write_trace(stats, o.trace); !st.is_ok()) return report_error(st);
  if (o.check)
    if (Status st = check_outputs(o, s, *inputs, *outputs); !st.is_ok()) return report_error(st);
  const std::string trace = o.trace.empty() ? profile->trace_path : o.trace;
  if (!trace.empty()) std::printf("trace written to %s (open in Perfetto)\n", trace.c_str());
  for (const TraceEvent& e : stats.events)
    spdlog::info("[sched] {} on {}: {:.3f} ms{}", e.name, e.track, e.ms, e.gpu_clock ? " (GPU timestamps)" : "");
  return kExitOk;
}
}  // namespace

void register_run(CLI::App& app, std::function<int()>& run) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model (graph or compiled program) and write or show its outputs");
  cmd->add_option("model", options->model, "Model file (.hsg graph or .hsp program)")->required();
  cmd->add_option("--input,-i", options->inputs,
                  "[NAME=]FILE raw little-endian input (repeatable; deterministic data for inputs not given)");
  cmd->add_option("--output,-o", options->outputs, "[NAME=]FILE to write an output to (repeatable)");
  cmd->add_option("--repeat,-n", options->repeat, "Run N times and report best/mean latency")->check(CLI::PositiveNumber);
  cmd->add_option("--trace", options->trace, "Write the last run as Chrome trace JSON (overrides logging.trace)");
  cmd->add_flag("--check", options->check,
                "Also run the model on the portable CPU kernels (the f32 reference) with the same inputs and print "
                "each output's largest difference from it and both argmaxes (.onnx or .hsg models)");
  add_common_options(*cmd, options->common);
  cmd->callback([options, &run] { run = [options] { return run_run(*options); }; });
}

}  // namespace hetsched::cli
