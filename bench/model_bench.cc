// Times one model on hetsched's CPU delegate: load (ONNX or .hsg), plan,
// compile, open a session, warm up, then time N runs of Session::run at a
// given thread count and engine. bench/ort_compare.sh runs it beside ONNX
// Runtime on the same model and input.
//
// usage: model_bench --model M.onnx --shape 1x3x640x640 [--input x.bin]
//                    [--threads 1] [--engine xnnpack|portable] [--warmup 3] [--runs 10]
//                    [--per-op N]
//
// --input: raw little-endian f32 of the input (e.g. an ORT reference's
// input_0.bin); without it the input is filled with 0.5. --shape applies to
// the model's first input. Prints a readable report, then one JSON line
// (prefix "json: ") with median/min/max ms, the per-step medians of RunStats
// (one step per island and handoff) and the CPU island's engine coverage.
//
// --per-op N: also times every node alone, as its own CPU island (N runs
// each, after 2 warm-up runs, inputs filled with values in [0.1, 1)), and
// prints the time by op type and the slowest nodes. RunStats has no per-op
// times; this is the estimate until it does. On the xnnpack engine a node
// alone also pays its NCHW<->NHWC conversions, which inside the model only
// segment edges pay, so the per-node sum overstates the model's time.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "delegates/cpu/xnnpack/coverage.h"
#include "delegates/registry.h"
#include "graph/onnx_import.h"
#include "profile/profile.h"
#include "scheduler/delegate_set.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"

namespace hetsched {
namespace {

constexpr char kUsage[] =
    "usage: model_bench --model M.onnx --shape 1x3x640x640 [--input x.bin] [--threads 1]\n"
    "                   [--engine xnnpack|portable] [--warmup 3] [--runs 10] [--per-op N]\n";

struct Options {
  std::string model;
  std::string shape;
  std::string input;
  int threads = 1;
  std::string engine = "xnnpack";
  int warmup = 3;
  int runs = 10;
  int per_op_runs = 0;  // 0: no per-op timing
};

Result<Options> parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) return invalid_argument("option '" + arg + "' needs a value\n" + kUsage);
    const std::string value = argv[++i];
    if (arg == "--model")
      o.model = value;
    else if (arg == "--shape")
      o.shape = value;
    else if (arg == "--input")
      o.input = value;
    else if (arg == "--threads")
      o.threads = std::atoi(value.c_str());
    else if (arg == "--engine")
      o.engine = value;
    else if (arg == "--warmup")
      o.warmup = std::atoi(value.c_str());
    else if (arg == "--runs")
      o.runs = std::atoi(value.c_str());
    else if (arg == "--per-op")
      o.per_op_runs = std::atoi(value.c_str());
    else
      return invalid_argument("unknown option '" + arg + "'\n" + kUsage);
  }
  if (o.model.empty() || o.shape.empty())
    return invalid_argument(std::string("--model and --shape are required\n") + kUsage);
  if (o.runs < 1 || o.threads < 1) return invalid_argument("--runs and --threads must be at least 1");
  return o;
}

// The name of the model's first input, which --shape applies to.
Result<std::string> first_input_name(const std::string& path) {
  if (model_format_of(path) == ModelFormat::kOnnx) {
    HS_ASSIGN_OR_RETURN(ImportReport report, import_onnx(path));
    if (report.graph.inputs().empty()) return invalid_argument("model '" + path + "' has no input");
    return report.graph.value(report.graph.inputs()[0]).name;
  }
  HS_ASSIGN_OR_RETURN(Graph graph, read_graph_file(path));
  if (graph.inputs().empty()) return invalid_argument("model '" + path + "' has no input");
  return graph.value(graph.inputs()[0]).name;
}

Result<Tensor> make_input(const TensorType& type, const std::string& file) {
  Tensor t(type);
  if (file.empty()) {
    if (type.dtype != DType::kFloat32) return invalid_argument("without --input only f32 inputs are filled");
    std::fill(t.span<float>().begin(), t.span<float>().end(), 0.5f);
    return t;
  }
  std::ifstream f(file, std::ios::binary);
  if (!f) return not_found("failed to read input '" + file + "': cannot open");
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() != t.byte_size())
    return invalid_argument("failed to read input '" + file + "': " + std::to_string(bytes.size()) +
                            " bytes, expected " + std::to_string(t.byte_size()) + " for " + type.to_string());
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(t.raw()));
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// The CPU island's coverage, made the way the session makes it (plan →
// compile → init); the session keeps its handles to itself.
Result<cpu::CpuEngineCoverage> island_coverage(const Graph& graph, const Profile& profile) {
  HS_ASSIGN_OR_RETURN(PlannedModel planned, plan_model(graph, profile));
  if (planned.plan.islands.size() != 1) return unsupported("coverage is printed for single-island plans only");
  const PlannedIsland& p = planned.plan.islands[0];
  const Island island{p.id, p.delegate, &graph, p.nodes, p.inputs, p.outputs};
  Delegate* cpu = planned.delegates.find("cpu");
  if (!cpu) return unsupported("no cpu delegate");
  const DelegateOptions options = delegate_options(profile, "cpu");
  HS_ASSIGN_OR_RETURN(Blob blob, cpu->compile(island, options));
  HS_ASSIGN_OR_RETURN(auto handle, cpu->init(blob, InitContext{options, 0}));
  const cpu::CpuEngineCoverage* coverage = cpu::cpu_engine_coverage(*handle);
  if (!coverage) return unsupported("not a CPU island");
  return *coverage;
}

struct NodeTiming {
  NodeId node = kNoNode;
  double median_ms = 0;
  std::string engine;  // what the single-node island ran on
};

// Times `node` alone as a CPU island. Not on the model's values: only
// shapes and op parameters decide these kernels' time.
Result<NodeTiming> time_node(const Graph& graph, NodeId node, Delegate& cpu, const DelegateOptions& options, int runs) {
  const Node& n = graph.node(node);
  Island island;
  island.delegate = "cpu";
  island.graph = &graph;
  island.nodes = {node};
  for (ValueId v : n.inputs)
    if (v != kNoValue && !graph.value(v).is_constant() &&
        std::find(island.inputs.begin(), island.inputs.end(), v) == island.inputs.end())
      island.inputs.push_back(v);
  for (ValueId v : n.outputs)
    if (v != kNoValue) island.outputs.push_back(v);
  HS_ASSIGN_OR_RETURN(Blob blob, cpu.compile(island, options));
  HS_ASSIGN_OR_RETURN(auto handle, cpu.init(blob, InitContext{options, 0}));

  std::mt19937 rng(static_cast<uint32_t>(node));
  std::uniform_real_distribution<float> dist(0.1f, 1.f);
  std::vector<Tensor> inputs, outputs;
  for (ValueId v : island.inputs) {
    Tensor t(graph.value(v).type);
    if (t.dtype() == DType::kFloat32)
      for (float& x : t.span<float>()) x = dist(rng);
    inputs.push_back(std::move(t));
  }
  for (ValueId v : island.outputs) outputs.emplace_back(graph.value(v).type);
  std::vector<TensorRef> in_refs, out_refs;
  for (Tensor& t : inputs) in_refs.push_back({&t.type(), t.raw()});
  for (Tensor& t : outputs) out_refs.push_back({&t.type(), t.raw()});
  std::vector<double> ms;
  for (int r = -2; r < runs; ++r) {
    ExecContext ctx;
    const auto start = std::chrono::steady_clock::now();
    HS_RETURN_IF_ERROR(handle->execute(ctx, in_refs, out_refs));
    if (r >= 0)
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  const cpu::CpuEngineCoverage* coverage = cpu::cpu_engine_coverage(*handle);
  return NodeTiming{node, median(ms), coverage ? coverage->engine : "?"};
}

Status print_per_op(const Graph& graph, const Profile& profile, int runs, double model_ms) {
  const DelegateOptions options = delegate_options(profile, "cpu");
  HS_ASSIGN_OR_RETURN(auto cpu, make_delegate("cpu", options));
  std::vector<NodeTiming> timings;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    auto t = time_node(graph, n, *cpu, options, runs);
    if (!t.is_ok()) return t.status().with_context("failed to time " + graph.describe_node(n) + ": ");
    timings.push_back(*t);
  }
  struct ByOp {
    int count = 0;
    int on_xnnpack = 0;
    double ms = 0;
  };
  std::map<std::string, ByOp> by_op;
  double total = 0;
  for (const NodeTiming& t : timings) {
    ByOp& b = by_op[graph.node(t.node).op];
    ++b.count;
    b.on_xnnpack += t.engine == "xnnpack";
    b.ms += t.median_ms;
    total += t.median_ms;
  }
  std::vector<std::pair<std::string, ByOp>> ops(by_op.begin(), by_op.end());
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  std::printf("  per op, each node alone (%d runs): sum %.3f ms (whole model %.3f ms)\n", runs, total, model_ms);
  std::printf("    %-22s %6s %9s %11s %7s\n", "op", "nodes", "xnnpack", "ms", "share");
  for (const auto& [op, b] : ops)
    std::printf("    %-22s %6d %9d %11.3f %6.1f%%\n", op.c_str(), b.count, b.on_xnnpack, b.ms, 100 * b.ms / total);
  std::sort(timings.begin(), timings.end(), [](const auto& a, const auto& b) { return a.median_ms > b.median_ms; });
  std::printf("  slowest nodes:\n");
  for (size_t i = 0; i < std::min<size_t>(10, timings.size()); ++i) {
    const NodeTiming& t = timings[i];
    const Node& n = graph.node(t.node);
    std::printf("    %-48s %-8s %9.3f ms  out %s\n", graph.describe_node(t.node).c_str(), t.engine.c_str(), t.median_ms,
                graph.value(n.outputs[0]).type.to_string().c_str());
  }
  if (profile.delegates.at("cpu").engine == "xnnpack") {
    std::printf("  nodes left to the portable kernels, and why:\n");
    for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
      const cpu::xnnpack::NodeCoverage c = cpu::xnnpack::xnnpack_coverage(graph, n);
      if (!c.covered)
        std::printf("    %-48s out %-22s %s\n", graph.describe_node(n).c_str(),
                    graph.value(graph.node(n).outputs[0]).type.to_string().c_str(), c.reason.c_str());
    }
  }
  return Status::ok();
}

Status run(const Options& o) {
  HS_ASSIGN_OR_RETURN(Shape shape, parse_shape(o.shape));
  HS_ASSIGN_OR_RETURN(std::string input_name, first_input_name(o.model));
  HS_ASSIGN_OR_RETURN(Graph graph, load_model(o.model, {{input_name, shape}}));

  Profile profile = default_profile();
  profile.delegates["cpu"].enabled = true;
  profile.delegates["cpu"].engine = o.engine;
  profile.delegates["cpu"].threads = o.threads;

  const auto t0 = std::chrono::steady_clock::now();
  HS_ASSIGN_OR_RETURN(Program program, build_program(graph, profile));
  HS_ASSIGN_OR_RETURN(auto session, Session::create(std::move(program), profile));
  const double setup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (session->input_types().size() != 1) return unsupported("model_bench feeds single-input models only");
  HS_ASSIGN_OR_RETURN(Tensor input, make_input(session->input_types()[0], o.input));
  const std::vector<Tensor> inputs{input};

  for (int i = 0; i < o.warmup; ++i) HS_RETURN_IF_ERROR(session->run(inputs).status());
  std::vector<double> totals;
  std::map<std::string, std::vector<double>> steps;  // label → per-run ms
  std::vector<std::string> step_order;
  for (int i = 0; i < o.runs; ++i) {
    RunStats stats;
    const auto start = std::chrono::steady_clock::now();
    HS_RETURN_IF_ERROR(session->run(inputs, &stats).status());
    totals.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    for (const TraceEvent& e : stats.events) {
      if (!steps.count(e.name)) step_order.push_back(e.name);
      steps[e.name].push_back(e.ms);
    }
  }
  auto coverage = island_coverage(graph, profile);

  std::printf(
      "model_bench: %s  input %s  engine=%s threads=%d  (%zu nodes after clean-up; plan+compile+init %.1f ms)\n",
      o.model.c_str(), session->input_types()[0].to_string().c_str(), o.engine.c_str(), o.threads, graph.num_nodes(),
      setup_ms);
  std::printf("  %d timed runs after %d warm-up: median %.3f ms, min %.3f ms, max %.3f ms\n", o.runs, o.warmup,
              median(totals), *std::min_element(totals.begin(), totals.end()),
              *std::max_element(totals.begin(), totals.end()));
  for (const std::string& label : step_order)
    std::printf("  step %-40s median %.3f ms\n", label.c_str(), median(steps[label]));
  if (coverage.is_ok())
    std::printf("  cpu island: engine %s, %d ops on XNNPACK in %d segment(s), %d on portable kernels\n",
                coverage->engine.c_str(), coverage->xnnpack_ops, coverage->xnnpack_segments, coverage->portable_ops);

  std::ostringstream json;
  json << "{\"runtime\":\"hetsched\",\"engine\":\"" << o.engine << "\",\"threads\":" << o.threads
       << ",\"runs\":" << o.runs << ",\"median_ms\":" << median(totals)
       << ",\"min_ms\":" << *std::min_element(totals.begin(), totals.end()) << ",\"steps\":[";
  for (size_t i = 0; i < step_order.size(); ++i)
    json << (i ? "," : "") << "{\"label\":\"" << step_order[i] << "\",\"median_ms\":" << median(steps[step_order[i]])
         << "}";
  json << "]";
  if (coverage.is_ok())
    json << ",\"xnnpack_ops\":" << coverage->xnnpack_ops << ",\"xnnpack_segments\":" << coverage->xnnpack_segments
         << ",\"portable_ops\":" << coverage->portable_ops;
  json << "}";
  std::printf("json: %s\n", json.str().c_str());
  if (o.per_op_runs > 0) HS_RETURN_IF_ERROR(print_per_op(graph, profile, o.per_op_runs, median(totals)));
  return Status::ok();
}

}  // namespace
}  // namespace hetsched

int main(int argc, char** argv) {
  auto options = hetsched::parse_args(argc, argv);
  if (!options.is_ok()) {
    std::fprintf(stderr, "model_bench: %s\n", options.status().message().c_str());
    return 2;
  }
  const hetsched::Status status = hetsched::run(*options);
  if (!status.is_ok()) {
    std::fprintf(stderr, "model_bench: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
