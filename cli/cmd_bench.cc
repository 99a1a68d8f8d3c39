// hetsched bench MODEL: many requests through the resource scheduler —
// latency percentiles, throughput and how busy each resource was.
#include <string>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <future>
#include <map>
#include <optional>
#include <sstream>

#include "cli/bench_device_io.h"
#include "cli/bench_policies.h"
#include "cli/cli_common.h"
#include "cli/op_profile.h"
#include "cli/tensor_io.h"
#include "partitioner/preview.h"  // json_quote
#include "scheduler/pipeline.h"

namespace hetsched::cli {

namespace {
struct BenchOptions {
  CommonOptions common;
  std::string model;
  std::vector<std::string> inputs;
  int in_flight = 0;   // 0: the profile's scheduler.max_in_flight
  int requests = 200;
  int warmup = 5;
  int threads = -1;    // -1: the profile's cpu threads
  bool json = false;
  std::string trace;
  bool compare_policies = false;
  bool profile_ops = false;
  int op_rows = 12;
  bool device_io = false;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double idx = p * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(idx);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (idx - static_cast<double>(lo));
}

// A one-line progress bar on stderr, redrawn at most every 100 ms, only on a terminal.
class Progress {
 public:
  Progress(int total, bool enabled) : total_(total), enabled_(enabled && isatty(STDERR_FILENO)) {}
  void update(int done) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const int width = 30, filled = total_ ? width * done / total_ : width;
    std::fprintf(stderr, "\r[%s%s] %d/%d requests", std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), done, total_);
    if (done == total_) std::fprintf(stderr, "\n");
  }

 private:
  int total_;
  bool enabled_;
  std::chrono::steady_clock::time_point last_{};
};

// What timing a session measured.
struct Measurement {
  std::vector<double> latencies;  // ms per request, in completion order
  std::vector<RunStats> stats;
  double wall_ms = 0;
  int in_flight = 1;
  std::optional<double> device_io_difference;  // --device-io: its outputs against run()'s
};

// `warmup` untimed runs, then `requests` timed ones with the session's
// max_in_flight requests submitted at all times.
Result<Measurement> measure(Session& s, const std::vector<Tensor>& inputs, int requests, int warmup,
                            bool show_progress) {
  HS_RETURN_IF_ERROR(warm_up(s, inputs, warmup));

  // Keep `in_flight` requests submitted at all times: the session's lanes
  // bound how many run at once.
  Measurement m;
  const int in_flight = m.in_flight = s.max_in_flight();
  std::deque<std::pair<std::chrono::steady_clock::time_point, std::future<Result<RunStats>>>> pending;
  std::vector<double>& latencies = m.latencies;
  std::vector<RunStats>& stats = m.stats;
  stats.reserve(static_cast<size_t>(requests));
  Progress progress(requests, show_progress);
  // One set of outputs per request in flight, kept across requests as a
  // server would: request i writes set i % in_flight, free again once
  // request i - in_flight has been taken off `pending`.
  std::vector<std::vector<Tensor>> output_sets(static_cast<size_t>(in_flight));
  for (auto& set : output_sets)
    for (const TensorType& t : s.output_types()) set.emplace_back(t);
  const auto start = std::chrono::steady_clock::now();
  int submitted = 0;
  while (static_cast<int>(latencies.size()) < requests) {
    if (in_flight == 1) {
      // One at a time: the caller's thread runs it, as a synchronous caller
      // would (submit_into would add two thread hand-offs to every latency).
      RunStats run_stats;
      const auto t0 = std::chrono::steady_clock::now();
      HS_RETURN_IF_ERROR(s.run_into(inputs, output_sets[0], &run_stats));
      latencies.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      stats.push_back(std::move(run_stats));
      progress.update(static_cast<int>(latencies.size()));
      continue;
    }
    while (submitted < requests && static_cast<int>(pending.size()) < in_flight) {
      pending.emplace_back(std::chrono::steady_clock::now(),
                           s.submit_into(inputs, output_sets[static_cast<size_t>(submitted % in_flight)], true));
      ++submitted;
    }
    auto [t0, future] = std::move(pending.front());
    pending.pop_front();
    Result<RunStats> r = future.get();
    if (!r.is_ok()) {
      for (auto& p : pending) p.second.wait();  // they write output_sets
      return r.status();
    }
    latencies.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    stats.push_back(std::move(r).value());
    progress.update(static_cast<int>(latencies.size()));
  }
  m.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return m;
}

int run_bench(BenchOptions o) {
  auto profile = load_profile_for(o.common);
  if (!profile.is_ok()) return report_error(profile.status());
  if (o.in_flight > 0) profile->max_in_flight = o.in_flight;
  if (o.threads >= 0) profile->delegates["cpu"].threads = o.threads;
  if (o.profile_ops) profile->profile_ops = true;
  // Refused before anything is timed, not after.
  if (o.compare_policies)
    if (Status s = check_comparable(o.model); !s.is_ok()) return report_error(s);
  if (o.device_io && (o.compare_policies || o.in_flight > 1))
    return report_error(invalid_argument("--device-io times one request at a time on one model: it takes neither "
                                         "--compare-policies nor --in-flight above 1"));
  if (o.device_io) profile->max_in_flight = 1;
  // Each GPU island's recorded dispatches and barriers, as the session's
  // handles recorded them (what `preview` counts from the blobs).
  std::vector<std::pair<std::string, CommandStreamCounts>> commands;
  Result<Measurement> measured = [&]() -> Result<Measurement> {
    // The session is closed before the policies are compared (each opens its own).
    HS_ASSIGN_OR_RETURN(ReadySession ready, open_with_inputs(*profile, o.common, o.model, o.inputs));
    for (const auto& [island, counts] : ready.session->command_streams()) {
      const ProgramIsland* pi = nullptr;
      for (const ProgramIsland& candidate : ready.session->program().islands)
        if (candidate.id == island) pi = &candidate;
      commands.push_back({(pi ? pi->delegate : std::string("?")) + "#" + std::to_string(island), counts});
    }
    if (!o.device_io) return measure(*ready.session, ready.inputs, o.requests, o.warmup, !o.json);
    HS_ASSIGN_OR_RETURN(DeviceIoMeasurement d, measure_device_io(*ready.session, ready.inputs, o.requests, o.warmup));
    Measurement m;
    m.latencies = std::move(d.latencies);
    m.stats = std::move(d.stats);
    m.wall_ms = d.wall_ms;
    m.device_io_difference = d.max_abs_difference;
    return m;
  }();
  if (!measured.is_ok()) return report_error(measured.status());
  const std::vector<double>& latencies = measured->latencies;
  const std::vector<RunStats>& stats = measured->stats;
  const int in_flight = measured->in_flight;
  const double wall_ms = measured->wall_ms;

  // --compare-policies: one row per policy and per delegate alone, each
  // measured as above (after the main figures are printed, in text).
  const auto compare = [&]() -> Result<std::vector<PolicyRow>> {
    const MeasureP50 p50_of = [&](Session& session, const std::vector<Tensor>& inputs) -> Result<double> {
      HS_ASSIGN_OR_RETURN(Measurement m, measure(session, inputs, o.requests, o.warmup, !o.json));
      return percentile(m.latencies, 0.5);
    };
    return compare_policies(*profile, o.common, o.model, o.inputs, p50_of);
  };
  bool policy_failed = false;

  std::vector<const RunStats*> runs;
  for (const RunStats& r : stats) runs.push_back(&r);
  double from = 1e300, to = 0;
  for (const RunStats& r : stats) {
    from = std::min(from, r.start_ms);
    to = std::max(to, r.start_ms + r.total_ms);
  }
  const auto busy = busy_fractions(runs, from, to);
  const double p50 = percentile(latencies, 0.5), p99 = percentile(latencies, 0.99);
  const double rps = wall_ms > 0 ? 1000.0 * o.requests / wall_ms : 0;
  std::vector<double> run_ms;
  for (const RunStats& r : stats) run_ms.push_back(r.total_ms);
  // Per track, the p50 over requests of the time its islands took (GPU
  // islands by GPU timestamps): what the resource spent on one request.
  std::map<std::string, std::vector<double>> island_ms;
  for (const RunStats& r : stats) {
    std::map<std::string, double> sum;
    for (const TraceEvent& e : r.events)
      if (e.name.rfind("island ", 0) == 0) sum[e.track] += e.ms;
    for (const auto& [track, ms] : sum) island_ms[track].push_back(ms);
  }

  if (o.json) {
    std::ostringstream j;
    j << "{\"model\": " << json_quote(o.model) << ", \"profile\": " << json_quote(profile->name)
      << ", \"requests\": " << o.requests << ", \"in_flight\": " << in_flight
      << ", \"device_io\": " << (o.device_io ? "true" : "false")
      << ", \"latency_ms\": {\"p50\": " << p50 << ", \"p99\": " << p99 << ", \"min\": "
      << *std::min_element(latencies.begin(), latencies.end()) << "}, \"run_ms\": {\"p50\": "
      << percentile(run_ms, 0.5) << "}, \"island_ms\": {";
    bool first = true;
    for (const auto& [track, v] : island_ms) {
      j << (first ? "" : ", ") << json_quote(track) << ": " << percentile(v, 0.5);
      first = false;
    }
    j << "}, \"commands\": {";
    for (size_t i = 0; i < commands.size(); ++i)
      j << (i ? ", " : "") << json_quote(commands[i].first) << ": {\"dispatches\": " << commands[i].second.dispatches
        << ", \"copies\": " << commands[i].second.copies << ", \"barriers\": " << commands[i].second.barriers << "}";
    j << "}";
    if (measured->device_io_difference) j << ", \"device_io_max_abs_difference\": " << *measured->device_io_difference;
    j << ", \"throughput_rps\": " << rps << ", \"wall_ms\": " << wall_ms << ", \"busy\": {";
    for (size_t i = 0; i < busy.size(); ++i) j << (i ? ", " : "") << json_quote(busy[i].first) << ": " << busy[i].second;
    j << "}";
    if (profile->profile_ops) j << ", \"ops\": " << op_profile_json(summarize_op_profile(stats));
    if (o.compare_policies) {
      auto rows = compare();
      if (!rows.is_ok()) return report_error(rows.status());
      j << ", \"policies\": " << policies_json(*rows);
      policy_failed = any_policy_failed(*rows);
    }
    j << "}";
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("model    %s · profile %s · %d requests, %d in flight\n", o.model.c_str(), profile->name.c_str(),
                o.requests, in_flight);
    std::printf("latency  p50 %.3f ms · p99 %.3f ms · min %.3f ms (%s)\n", p50, p99,
                *std::min_element(latencies.begin(), latencies.end()),
                o.device_io         ? "GPU buffers in and out: submit to the GPU's completion"
                : in_flight == 1 ? "run_into() on this thread"
                                   : "submit to result");
    if (measured->device_io_difference)
      std::printf("         outputs left in the GPU buffers against run()'s: max abs difference %.3g\n",
                  *measured->device_io_difference);
    std::printf("         run p50 %.3f ms (on its lane, queueing excluded)\n", percentile(run_ms, 0.5));
    std::printf("through  %.1f requests/s over %.1f ms\n", rps, wall_ms);
    for (const auto& [track, fraction] : busy) std::printf("busy     %-32s %5.1f %%\n", track.c_str(), 100 * fraction);
    for (const auto& [track, v] : island_ms)
      std::printf("islands  %-32s p50 %.3f ms per request\n", track.c_str(), percentile(v, 0.5));
    for (const auto& [island, c] : commands)
      std::printf("commands %-32s dispatches %llu · barriers %llu%s\n", island.c_str(),
                  static_cast<unsigned long long>(c.dispatches), static_cast<unsigned long long>(c.barriers),
                  c.copies ? (" · copies " + std::to_string(c.copies)).c_str() : "");
    if (profile->profile_ops) print_op_profile(summarize_op_profile(stats), o.op_rows);
    if (o.compare_policies) {
      std::fflush(stdout);  // the figures above stay on screen while the policies run
      auto rows = compare();
      if (!rows.is_ok()) return report_error(rows.status());
      std::printf("\npolicies (p50 latency of %d requests each, %d in flight)\n", o.requests, in_flight);
      print_policy_table(*rows);
      policy_failed = any_policy_failed(*rows);
    }
  }
  if (!o.trace.empty()) {
    if (Status st = write_trace(runs, o.trace); !st.is_ok()) return report_error(st);
    if (!o.json) std::printf("trace of all %d requests written to %s\n", o.requests, o.trace.c_str());
  }
  // Every row is printed; a policy that could not run still fails the command.
  return policy_failed ? kExitFailure : kExitOk;
}
}  // namespace

void register_bench(CLI::App& app, std::function<int()>& run) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Run many requests through the scheduler: latency p50/p99, throughput, busy % per resource");
  cmd->add_option("model", options->model, "Model file (.onnx, .hsg graph or .hsp program)")->required();
  cmd->add_option("--input,-i", options->inputs,
                  "[NAME=]FILE raw little-endian input (repeatable; deterministic data for inputs not given)");
  cmd->add_option("--in-flight", options->in_flight,
                  "Requests in flight at once (overrides scheduler.max_in_flight)")->check(CLI::PositiveNumber);
  cmd->add_option("--requests,-n", options->requests, "Requests to time (default 200)")->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", options->warmup, "Untimed requests first (default 5)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--threads", options->threads, "CPU delegate threads (overrides delegates.cpu.threads; 0 = all cores, less one per extra request in flight)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", options->json,
                "Print one JSON object: latency_ms {p50, p99, min}, throughput_rps, busy {resource: fraction}, ...");
  cmd->add_option("--trace", options->trace, "Write every timed request as Chrome trace JSON");
  cmd->add_flag("--compare-policies", options->compare_policies,
                "Also time the model under every partition policy and each enabled delegate alone: a table, "
                "or a `policies` list with --json");
  cmd->add_flag("--profile-ops", options->profile_ops,
                "Time every kernel, XNNPACK segment and GPU dispatch (logging.profile_ops) and print where each "
                "request's time goes, per piece and per op type (`ops` with --json)");
  cmd->add_flag("--device-io", options->device_io,
                "Inputs uploaded once to the model's GPU and outputs left there (run_on_vulkan_buffers' path): "
                "each request timed from submit to the GPU's completion, no host copies; for models whose "
                "inputs and outputs only GPU islands touch");
  cmd->add_option("--op-rows", options->op_rows,
                  "With --profile-ops: pieces shown per island, longest first (default 12; 0: only the totals by op "
                  "type)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              size_t used = 0;
              if (std::stoi(text, &used) >= 0 && used == text.size()) return "";
            } catch (const std::exception&) {
            }
            return "wants a count of 0 or more, got '" + text + "'";
          },
          "COUNT"));
  add_common_options(*cmd, options->common);
  cmd->callback([options, &run] { run = [options] { return run_bench(*options); }; });
}

}  // namespace hetsched::cli
