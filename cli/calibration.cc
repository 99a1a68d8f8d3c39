#include "cli/calibration.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "cli/cli_common.h"  // warm_up
#include "graph/builder.h"
#include "graph/op_work.h"
#include "scheduler/delegate_set.h"
#include "scheduler/pipeline.h"
#include "shared_gpu/device_info.h"

namespace hetsched::cli {
namespace {

// Floors: a fit from noisy timings may come out at zero or below; the cost
// model divides by rates and adds fixed costs, so both stay positive.
constexpr double kMinRate = 1e-3;    // GFLOP/s, GB/s
constexpr double kMinMicros = 0.1;   // dispatch, island and handoff latency
// A probe's time less its fixed costs (island + dispatches) is kept to at
// least this share of the time, so an overestimated fixed cost cannot turn
// a rate infinite.
constexpr double kMinWorkShare = 0.1;
// kFree nodes re-label memory: nothing limits them (node_seconds charges
// them nothing either).
constexpr double kFreeRate = 1e6;
constexpr int kChainLength = 8;
// Handoff probes: two sizes for a two-point fit (16 KiB and 4 MiB of f32).
constexpr int64_t kSmallElements = 4096;
constexpr int64_t kLargeElements = int64_t{1} << 20;

// --- probe graphs ---------------------------------------------------------

// Deterministic, non-zero data: zeros can take fast paths real data does not.
Tensor patterned(const TensorType& type) {
  Tensor t(type);
  if (type.dtype != DType::kFloat32) return t;
  auto v = t.span<float>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 17) - 8) / 64.f;
  return t;
}

ValueId weights(GraphBuilder& b, const std::string& name, Shape shape) {
  return b.constant(name, patterned({DType::kFloat32, std::move(shape)}));
}

// n Transposes of a tiny tensor, for the fixed costs. Transpose because no
// engine fuses it into its neighbour (a chain of Relus is one dispatch on
// the Vulkan delegate, which would measure no dispatch cost at all).
Result<Graph> chain_graph(int n) {
  GraphBuilder b("calibrate_chain" + std::to_string(n));
  ValueId x = b.input("x", {DType::kFloat32, {1, 4, 4, 4}});
  for (int i = 0; i < n; ++i) x = b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  b.output(x);
  return b.build();
}

// Each class graph does milliseconds of work on a software Vulkan device,
// with nodes no engine fuses, so the roofline of its nodes is what is timed.
Result<Graph> conv_graph() {
  GraphBuilder b("calibrate_conv");
  ValueId x = b.input("x", {DType::kFloat32, {1, 32, 56, 56}});
  for (int i = 0; i < 2; ++i) {
    const std::string n = "conv" + std::to_string(i);
    x = b.op("Conv", {x, weights(b, n + "_w", {32, 32, 3, 3}), weights(b, n + "_b", {32})},
             {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, n);
  }
  b.output(x);
  return b.build();
}

Result<Graph> matmul_graph() {
  GraphBuilder b("calibrate_matmul");
  ValueId x = b.input("x", {DType::kFloat32, {256, 256}});
  for (int i = 0; i < 2; ++i) x = b.op("MatMul", {x, weights(b, "w" + std::to_string(i), {256, 256})});
  b.output(x);
  return b.build();
}

// The memory-bound classes move 2 MiB activations, the size of a typical
// CNN or transformer activation: on a CPU such tensors live in the caches,
// which a probe of tens of MiB would miss by several times.
// A chain of four (Add, Mul, Add, Mul with per-column constants), timed as
// a whole: a lone op on the CPU pays its island's edges more than its work,
// and the Vulkan delegate fuses such chains; a chain's average per node is
// what a model's runs of elementwise ops cost on either.
Result<Graph> elementwise_graph() {
  GraphBuilder b("calibrate_elementwise");
  ValueId x = b.input("x", {DType::kFloat32, {512, 1024}});
  for (int i = 0; i < 4; ++i)
    x = b.op(i % 2 ? "Mul" : "Add", {x, weights(b, "c" + std::to_string(i), {1024})});
  b.output(x);
  return b.build();
}

// Island edges of a host delegate: an elementwise chain of `n` nodes on an
// 8 MiB tensor, large enough that copying it in and out is timed, not lost
// in the fixed costs; two lengths tell the nodes from the edges.
Result<Graph> edge_graph(int n) {
  GraphBuilder b("calibrate_edges" + std::to_string(n));
  ValueId x = b.input("x", {DType::kFloat32, {2048, 1024}});
  for (int i = 0; i < n; ++i)
    x = b.op(i % 2 ? "Mul" : "Add", {x, weights(b, "c" + std::to_string(i), {1024})});
  b.output(x);
  return b.build();
}
constexpr int kEdgeChainLength = 3;  // the notes say "3 nodes"

Result<Graph> reduce_graph() {
  GraphBuilder b("calibrate_reduce");
  ValueId x = b.input("x", {DType::kFloat32, {512, 1024}});
  for (int i = 0; i < 2; ++i) x = b.op("Softmax", {x}, {{"axis", int64_t{-1}}});
  b.output(x);
  return b.build();
}

Result<Graph> movement_graph() {
  GraphBuilder b("calibrate_movement");
  ValueId x = b.input("x", {DType::kFloat32, {1, 32, 128, 128}});
  x = b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}});
  x = b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}});
  b.output(x);
  return b.build();
}

// A CPU node → a GPU node → a CPU node (pinned by name): an upload and a
// readback of `shape` between two CPU islands, as a model's transitions run
// them: next to the CPU delegate's threads, which spin a while after each
// island (a lone 4 MiB upload probe read 0.2 ms for a 6 MiB upload that
// took 0.63 ms between two CPU islands on the H100 machine). Without a CPU
// delegate, the host's own bytes go up and come back.
Result<Graph> handoff_graph(Shape shape, bool cpu_around) {
  GraphBuilder b("calibrate_handoff");
  ValueId x = b.input("x", {DType::kFloat32, std::move(shape)});
  if (cpu_around) x = b.op("Relu", {x}, {}, "on_cpu_before");
  x = b.op("Relu", {x}, {}, "on_gpu");
  if (cpu_around) x = b.op("Relu", {x}, {}, "on_cpu_after");
  b.output(x);
  return b.build();
}

// A Vulkan node feeding a VGF node (pinned by name): one GPU-to-GPU handoff.
Result<Graph> two_gpu_graph(Shape shape) {
  GraphBuilder b("calibrate_gpu_to_gpu");
  ValueId x = b.input("x", {DType::kFloat32, std::move(shape)});
  x = b.op("Relu", {x}, {}, "on_vulkan");
  b.output(b.op("Relu", {x}, {}, "on_vgf"));
  return b.build();
}

struct ClassProbe {
  OpClass op_class;
  Result<Graph> (*build)();
};
// Elementwise first: the conv and matmul bandwidths are its bandwidth.
constexpr ClassProbe kClassProbes[] = {
    {OpClass::kElementwise, elementwise_graph}, {OpClass::kConv, conv_graph},         {OpClass::kMatMul, matmul_graph},
    {OpClass::kReduce, reduce_graph},           {OpClass::kMovement, movement_graph},
};
constexpr int kProbesPerDelegate = 2 + static_cast<int>(std::size(kClassProbes));

// The cost model's kind of a handoff step, from the trace label the session
// gives it (scheduler/session.cc, handoff.cc): "upload 'x' host → vulkan#0",
// "device copy 'v' vulkan#0 → vgf#1 (device copy + NCHW→NHWC)", "... (through
// the host: different GPU contexts)". Aliases and host copies move nothing.
std::optional<CutKind> handoff_kind(const std::string& label) {
  if (label.starts_with("upload ")) return CutKind::kUpload;
  if (label.starts_with("readback ")) return CutKind::kReadback;
  if (label.starts_with("device copy ")) {
    if (label.find("through the host") != std::string::npos) return CutKind::kDeviceCopy;
    if (label.find(" + ") != std::string::npos) return CutKind::kLayoutConversion;
    return CutKind::kDeviceCopy;
  }
  return std::nullopt;
}

// --- timing ---------------------------------------------------------------

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}


struct ProbeTiming {
  // Median over runs of the request's wall time less its handoff steps: the
  // islands with their launch, submit and completion, as the model sees them.
  double island_us = 0;
  std::map<CutKind, double> handoff_us;  // median per kind seen in every run
};

Result<ProbeTiming> time_graph(const Graph& graph, const Profile& profile, const std::vector<std::string>& delegates,
                               const CalibrationOptions& o) {
  HS_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, open_session_for_graph(graph, profile));
  for (const ProgramIsland& island : session->program().islands) {
    if (std::find(delegates.begin(), delegates.end(), island.delegate) == delegates.end())
      return failed_precondition("island " + std::to_string(island.id) + " went to " + island.delegate);
  }
  std::vector<Tensor> inputs, outputs;
  for (const TensorType& t : session->input_types()) inputs.push_back(patterned(t));
  for (const TensorType& t : session->output_types()) outputs.emplace_back(t);
  HS_RETURN_IF_ERROR(warm_up(*session, inputs, o.warmup));

  std::vector<double> island_us;
  std::map<CutKind, std::vector<double>> handoff_us;
  for (int r = 0; r < o.repeats; ++r) {
    RunStats stats;
    HS_RETURN_IF_ERROR(session->run_into(inputs, outputs, &stats));
    double moved_ms = 0;
    std::map<CutKind, double> per_kind;
    for (const TraceEvent& e : stats.events) {
      if (e.track != "handoffs") continue;
      moved_ms += e.ms;
      if (std::optional<CutKind> k = handoff_kind(e.name)) per_kind[*k] += e.ms * 1e3;
    }
    island_us.push_back(std::max(0.0, stats.total_ms - moved_ms) * 1e3);
    for (const auto& [k, us] : per_kind) handoff_us[k].push_back(us);
  }
  ProbeTiming t;
  t.island_us = median(island_us);
  for (const auto& [k, v] : handoff_us)
    if (static_cast<int>(v.size()) == o.repeats) t.handoff_us[k] = median(v);
  return t;
}

struct Work {
  double flops = 0, bytes = 0;
  int nodes = 0;  // nodes that do work (each costs a dispatch)
};

// op_work over the probe, as the planner will count the same nodes.
Work work_of(const Graph& g) {
  Work w;
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n) {
    const OpWork ow = op_work(g, n);
    if (ow.op_class == OpClass::kFree) continue;
    w.flops += ow.flops;
    w.bytes += ow.bytes;
    w.nodes++;
  }
  return w;
}

// "" when `d` takes every node of `g`, else the first refusal.
std::string refusal(const Graph& g, const Delegate& d) {
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n) {
    const Capability c = d.supports(g, n);
    if (!c.supported) return g.describe_node(n) + ": " + c.reason;
  }
  return "";
}

// Two sizes' times → latency + bytes / bandwidth.
TransferCost fit_transfer(double bytes1, double us1, double bytes2, double us2) {
  TransferCost t;
  const double us_per_byte = (us2 - us1) / (bytes2 - bytes1);
  if (us_per_byte > 0) {
    t.gbps = 1e-3 / us_per_byte;  // bytes/µs = 1e-3 GB/s
    t.latency_us = us1 - bytes1 * us_per_byte;
  } else {
    // Noise hid the size's effect: all of the large copy's time as bandwidth.
    t.gbps = us2 > 0 ? bytes2 / us2 * 1e-3 : 0;
    t.latency_us = us1;
  }
  t.gbps = std::max(t.gbps, kMinRate);
  t.latency_us = std::max(t.latency_us, kMinMicros);
  return t;
}

std::string fmt(const char* format, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, format, a, b, c);
  return buf;
}

// A profile that runs probe graphs on `enabled` only, in that order: the
// user's delegate settings and sync mode, none of their partition choices.
Profile probe_profile(const Profile& base, const std::vector<std::string>& enabled) {
  Profile p = base;
  for (auto& [name, d] : p.delegates) d.enabled = std::find(enabled.begin(), enabled.end(), name) != enabled.end();
  p.partition = PartitionProfile{};
  p.partition.prefer = "list";
  p.partition.order = enabled;
  p.partition.min_partition_size = 1;
  p.max_in_flight = 1;
  p.trace_path.clear();
  // Probes open one session after another on the same keys: each joins the
  // context the first made (a host application's context, which
  // lookup_only expects, does not exist under the CLI).
  for (auto& [name, d] : p.delegates)
    if (d.shared_gpu.mode != SharedContextMode::kDisabled) d.shared_gpu.mode = SharedContextMode::kLookupOrCreate;
  return p;
}

std::string host_description() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown host");
  std::string cpu = "unknown cpu";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (!line.starts_with("model name")) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) cpu = line.substr(line.find_first_not_of(" \t", colon + 1));
    break;
  }
  return std::string(host) + ", " + cpu + ", " + std::to_string(std::max(1u, std::thread::hardware_concurrency())) +
         " hardware threads";
}

// The Vulkan device a GPU delegate's selector picks (what `hetsched devices` lists).
std::string gpu_device_name(const std::string& selector) {
  Result<std::vector<DeviceInfo>> devices = enumerate_devices();
  if (!devices.is_ok()) return "unknown device";
  Result<uint32_t> index = select_device(*devices, selector);
  if (!index.is_ok()) return "unknown device";
  return (*devices)[*index].name;
}

void round_figures(CostTable& t) {
  for (auto& [name, c] : t.delegates) {
    c.dispatch_us = significant(c.dispatch_us);
    c.island_us = significant(c.island_us);
    c.edge_gbps = significant(c.edge_gbps);
    for (ClassRate& r : c.classes) r = {significant(r.gflops), significant(r.gbps)};
  }
  for (TransferCost& tc : t.transfers) tc = {significant(tc.latency_us), significant(tc.gbps)};
}

class Calibrator {
 public:
  Calibrator(const Profile& profile, const CalibrationOptions& o) : profile_(profile), o_(o) {}

  Result<Calibration> run() {
    const bool vulkan = profile_.delegate_enabled("vulkan"), vgf = profile_.delegate_enabled("vgf");
    const std::string gpu = vulkan ? "vulkan" : vgf ? "vgf" : "";
    total_ = kProbesPerDelegate * static_cast<int>(enabled().size()) + (gpu.empty() ? 0 : 2) + (vulkan && vgf ? 2 : 0) +
             (profile_.delegate_enabled("cpu") ? 2 : 0);
    out_.machine = host_description();

    std::string gpu_class;
    for (const std::string& name : enabled()) {
      HS_ASSIGN_OR_RETURN(Prepared prepared, prepare(name));
      const std::string& device_class = prepared.device_class;
      if (name == "cpu") {
        out_.devices.push_back("cpu: engine " + profile_.delegates.at("cpu").engine + ", threads " +
                               std::to_string(threads()) + " [cpu]");
      } else {
        const std::string device = gpu_device_name(profile_.delegates.at(name).device);
        out_.devices.push_back(name + ": " + device + " [" + device_class + "]");
        if (out_.gpu_name.empty()) out_.gpu_name = device;
        if (name == gpu) gpu_class = device_class;
      }
      HS_ASSIGN_OR_RETURN(out_.table.delegates[name], calibrate_delegate(name, prepared));
    }

    out_.table.transfers = builtin_transfer_costs(gpu_class);
    if (gpu.empty()) {
      out_.notes.push_back("handoffs: no GPU delegate enabled, nothing to measure: built-in figures");
    } else {
      calibrate_upload_readback(gpu);
      if (vulkan && vgf) {
        calibrate_layout_conversion();
      } else {
        out_.notes.push_back("handoffs: layout_conversion needs vulkan and vgf both enabled: built-in figure");
      }
    }
    out_.table.transfer(CutKind::kAlias) = {0, 1e9};  // the reader uses the writer's bytes: nothing moves
    round_figures(out_.table);
    return std::move(out_);
  }

 private:
  // The enabled delegates, in known_delegate_names() order (cpu, vulkan, vgf).
  std::vector<std::string> enabled() const {
    std::vector<std::string> names;
    for (const std::string& name : known_delegate_names())
      if (profile_.delegate_enabled(name)) names.push_back(name);
    return names;
  }

  int threads() const {
    auto it = profile_.delegates.find("cpu");
    const int t = it == profile_.delegates.end() ? 0 : it->second.threads;
    return t > 0 ? t : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }

  void step(const std::string& section, const std::string& probe) {
    if (o_.progress) o_.progress(section, probe, done_, total_);
    done_++;
  }

  Result<ProbeTiming> time(const Result<Graph>& graph, const Profile& profile, const std::vector<std::string>& on) {
    if (!graph.is_ok()) return graph.status().with_context("failed to build a calibration graph: ");
    return time_graph(*graph, profile, on, o_);
  }

  // What is asked of a delegate before its probes run: its device class, and
  // which probe graphs it takes.
  struct Prepared {
    std::string device_class;
    std::vector<Graph> graphs;          // by kClassProbes
    std::vector<std::string> refusals;  // by kClassProbes; "" = takes every node
  };

  // The delegate asked here is gone before any probe runs, so each probe's
  // session is the only user of the engine in the process (no second CPU
  // thread pool, no second hold on a GPU context).
  Result<Prepared> prepare(const std::string& name) const {
    HS_ASSIGN_OR_RETURN(DelegateSet set, DelegateSet::create(probe_profile(profile_, {name})));
    const Delegate* d = set.find(name);
    if (d == nullptr) return internal_error("delegate '" + name + "' was not made");
    Prepared p;
    p.device_class = d->device_class();
    for (const ClassProbe& probe : kClassProbes) {
      Result<Graph> graph = probe.build();
      if (!graph.is_ok())
        return graph.status().with_context("failed to build the " + std::string(op_class_name(probe.op_class)) +
                                           " probe: ");
      p.refusals.push_back(refusal(*graph, *d));
      p.graphs.push_back(std::move(graph).value());
    }
    return p;
  }

  Result<DelegateCosts> calibrate_delegate(const std::string& name, const Prepared& prepared) {
    const DelegateCosts builtin =
        builtin_delegate_costs(name, prepared.device_class, name == "cpu" ? threads() : 0);
    DelegateCosts c = builtin;
    const Profile profile = probe_profile(profile_, {name});
    const std::vector<std::string> on{name};

    // Fixed costs: a 1-node and an n-node chain of nodes with next to no work.
    step(name, "dispatch");
    Result<ProbeTiming> one = time(chain_graph(1), profile, on);
    if (!one.is_ok()) return one.status().with_context("failed to calibrate " + name + ": ");
    step(name, "dispatch x" + std::to_string(kChainLength));
    Result<ProbeTiming> many = time(chain_graph(kChainLength), profile, on);
    if (!many.is_ok()) return many.status().with_context("failed to calibrate " + name + ": ");
    c.dispatch_us = std::max((many->island_us - one->island_us) / (kChainLength - 1), kMinMicros);
    c.island_us = std::max(one->island_us - c.dispatch_us, kMinMicros);
    out_.notes.push_back(name + ": fixed costs " + fmt("1 node %.1f us, %g nodes %.1f us", one->island_us,
                                                       kChainLength, many->island_us));

    if (prepared.device_class == "cpu") {
      HS_RETURN_IF_ERROR(calibrate_edges(name, profile, c));
    } else {
      c.edge_gbps = 0;  // a device delegate's edges are the handoffs, measured below
    }

    std::optional<double> elementwise_gbps;
    for (size_t i = 0; i < std::size(kClassProbes); ++i) {
      const ClassProbe& probe = kClassProbes[i];
      const std::string class_name(op_class_name(probe.op_class));
      step(name, class_name);
      const Graph& graph = prepared.graphs[i];
      const std::string& why = prepared.refusals[i];
      Result<ProbeTiming> timing =
          why.empty() ? time_graph(graph, profile, on, o_) : Result<ProbeTiming>(unsupported(why));
      if (!timing.is_ok()) {
        out_.notes.push_back(name + ": " + class_name + " not measured (" + timing.status().message() +
                             "): built-in figure kept");
        continue;
      }
      const Work w = work_of(graph);
      const double fixed_us = c.island_us + w.nodes * c.dispatch_us + edge_us(c, graph);
      const double seconds = std::max(timing->island_us - fixed_us, kMinWorkShare * timing->island_us) * 1e-6;
      ClassRate& rate = c.rate(probe.op_class);
      if (probe.op_class == OpClass::kConv || probe.op_class == OpClass::kMatMul) {
        // FLOP-bound: the time is the FLOP rate; the bandwidth is what the
        // elementwise probe measured (its own traffic hides behind compute).
        rate.gflops = std::max(w.flops / seconds * 1e-9, kMinRate);
        if (elementwise_gbps) rate.gbps = *elementwise_gbps;
      } else {
        // Both terms of the roofline reproduce the measurement.
        rate.gbps = std::max(w.bytes / seconds * 1e-9, kMinRate);
        if (w.flops > 0) rate.gflops = std::max(w.flops / seconds * 1e-9, kMinRate);
        if (probe.op_class == OpClass::kElementwise) elementwise_gbps = rate.gbps;
      }
      out_.notes.push_back(name + ": " + class_name + " " + std::to_string(w.nodes) +
                           (w.nodes == 1 ? " node, " : " nodes, ") +
                           fmt("%.1f MFLOP, %.1f MB in %.3f ms", w.flops * 1e-6, w.bytes * 1e-6,
                               timing->island_us * 1e-3));
    }
    c.rate(OpClass::kFree) = {kFreeRate, kFreeRate};
    return c;
  }

  // A host delegate's edge copies (DelegateCosts::edge_gbps): a 1-node and
  // a kEdgeChainLength-node chain on 8 MiB; what the longer chain adds per
  // node is the node, what the short one takes beyond its node and fixed
  // costs is its two edges.
  Status calibrate_edges(const std::string& name, const Profile& profile, DelegateCosts& c) {
    const std::vector<std::string> on{name};
    step(name, "edges");
    Result<Graph> one_graph = edge_graph(1);
    Result<ProbeTiming> one = time(one_graph, profile, on);
    if (!one.is_ok()) return one.status().with_context("failed to calibrate " + name + " edges: ");
    step(name, "edges x" + std::to_string(kEdgeChainLength));
    Result<ProbeTiming> chain = time(edge_graph(kEdgeChainLength), profile, on);
    if (!chain.is_ok()) return chain.status().with_context("failed to calibrate " + name + " edges: ");
    // A chain timed faster than one node is noise: then its nodes count as
    // free and the faster time bounds the edges.
    const double node_us = std::max(0.0, (chain->island_us - one->island_us) / (kEdgeChainLength - 1));
    const double edges_us = std::max(std::min(one->island_us, chain->island_us) - c.island_us - c.dispatch_us - node_us,
                                     kMinWorkShare * one->island_us);
    const double bytes = edge_bytes(*one_graph);
    c.edge_gbps = std::max(bytes / (edges_us * 1e-6) * 1e-9, kMinRate);
    out_.notes.push_back(name + ": edges " + fmt("%.1f MB in and out, 1 node %.3f ms, 3 nodes %.3f ms", bytes * 1e-6,
                                                 one->island_us * 1e-3, chain->island_us * 1e-3));
    return Status::ok();
  }

  // Bytes a probe's one island copies at its edges: its inputs and outputs.
  static double edge_bytes(const Graph& g) {
    double bytes = 0;
    for (ValueId v : g.inputs()) bytes += static_cast<double>(g.value(v).type.byte_size());
    for (ValueId v : g.outputs()) bytes += static_cast<double>(g.value(v).type.byte_size());
    return bytes;
  }
  static double edge_us(const DelegateCosts& c, const Graph& g) {
    return c.edge_gbps > 0 ? edge_bytes(g) / (c.edge_gbps * 1e9) * 1e6 : 0.0;
  }

  // Upload and readback through one GPU node, at two sizes.
  void calibrate_upload_readback(const std::string& gpu) {
    const bool cpu = profile_.delegate_enabled("cpu");
    std::vector<std::string> on{gpu};
    if (cpu) on.push_back("cpu");
    Profile profile = probe_profile(profile_, on);
    profile.partition.pins = {{"", "on_gpu", gpu}};
    if (cpu) {
      profile.partition.pins.push_back({"", "on_cpu_before", "cpu"});
      profile.partition.pins.push_back({"", "on_cpu_after", "cpu"});
    }
    std::map<CutKind, double> small, large;
    for (int64_t elements : {kSmallElements, kLargeElements}) {
      step("handoffs", "upload/readback " + std::to_string(elements * 4 / 1024) + " KiB");
      Result<ProbeTiming> t = time(handoff_graph({1, elements}, cpu), profile, on);
      if (!t.is_ok()) {
        out_.notes.push_back("handoffs: upload and readback not measured (" + t.status().message() +
                             "): built-in figures");
        derive_device_copy(false);
        return;
      }
      (elements == kSmallElements ? small : large) = t->handoff_us;
    }
    bool measured = true;
    for (CutKind k : {CutKind::kUpload, CutKind::kReadback})
      measured = fit(k, small, large, "through " + gpu) && measured;
    derive_device_copy(measured);
  }

  // A Vulkan island feeding a VGF island on one context: their layouts of
  // a rank-4 tensor differ (NCHW, NHWC), so the copy permutes on the GPU.
  void calibrate_layout_conversion() {
    const CutKind kind = CutKind::kLayoutConversion;
    Profile profile = probe_profile(profile_, {"vulkan", "vgf"});
    profile.delegates["vgf"].shared_gpu = profile.delegates["vulkan"].shared_gpu;
    profile.delegates["vgf"].shared_gpu.mode = profile.delegates["vulkan"].shared_gpu.mode =
        SharedContextMode::kLookupOrCreate;  // one context, whatever the profile says
    profile.partition.pins = {{"", "on_vulkan", "vulkan"}, {"", "on_vgf", "vgf"}};
    if (profile.sync == SyncMode::kNone) profile.sync = SyncMode::kTimeline;  // none refuses GPU-to-GPU copies
    std::map<CutKind, double> small, large;
    for (int64_t elements : {kSmallElements, kLargeElements}) {
      step("handoffs", "layout_conversion " + std::to_string(elements * 4 / 1024) + " KiB");
      // Feature-map shapes: 16x16x16 and 64x128x128.
      const int64_t side = elements == kSmallElements ? 16 : 128;
      const Shape shape{1, elements / (side * side), side, side};
      Result<ProbeTiming> t = time(two_gpu_graph(shape), profile, {"vulkan", "vgf"});
      if (!t.is_ok()) {
        out_.notes.push_back("handoffs: layout_conversion not measured (" + t.status().message() +
                             "): built-in figure");
        return;
      }
      (elements == kSmallElements ? small : large) = t->handoff_us;
    }
    fit(kind, small, large, "vulkan → vgf");
  }

  // Between GPU delegates on two contexts the runtime copies through the
  // host: a readback, then an upload (scheduler/handoff.h). Its figures are
  // those two in series, from their measured fits.
  void derive_device_copy(bool measured) {
    if (!measured) {
      out_.notes.push_back("handoffs: device_copy is a readback then an upload, neither measured: built-in figure");
      return;
    }
    const TransferCost& up = out_.table.transfer(CutKind::kUpload);
    const TransferCost& back = out_.table.transfer(CutKind::kReadback);
    TransferCost& copy = out_.table.transfer(CutKind::kDeviceCopy);
    copy.latency_us = up.latency_us + back.latency_us;
    copy.gbps = std::max(1 / (1 / up.gbps + 1 / back.gbps), kMinRate);
    out_.notes.push_back("handoffs: device_copy (two contexts: through the host) = readback + upload");
  }

  // Fits kind `k` from the two sizes' timings; false (built-in figure kept) when a probe had no such step.
  bool fit(CutKind k, const std::map<CutKind, double>& small, const std::map<CutKind, double>& large,
           const std::string& how) {
    const std::string name(cut_kind_name(k));
    auto s = small.find(k), l = large.find(k);
    if (s == small.end() || l == large.end()) {
      out_.notes.push_back("handoffs: " + name + " not measured (no such step in the probe's trace): built-in figure");
      return false;
    }
    out_.table.transfer(k) = fit_transfer(kSmallElements * 4.0, s->second, kLargeElements * 4.0, l->second);
    out_.notes.push_back("handoffs: " + name + " " + how +
                         fmt(": 16 KiB %.1f us, 4 MiB %.1f us", s->second, l->second));
    return true;
  }

  const Profile& profile_;
  const CalibrationOptions& o_;
  int done_ = 0, total_ = 0;
  Calibration out_;
};

}  // namespace


double significant(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, 3 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

Result<Calibration> calibrate(const Profile& profile, const CalibrationOptions& options) {
  if (options.repeats < 1) return invalid_argument("--repeats must be at least 1");
  return Calibrator(profile, options).run();
}

}  // namespace hetsched::cli
