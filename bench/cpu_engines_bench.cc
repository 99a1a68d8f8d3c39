// The CPU delegate's two engines on a ResNet-style block stack:
// engine=xnnpack against engine=portable, at 1 and 2 threads, in one run.
//
//   x f32[1,64,56,56] -> 4 x [conv3x3+bias (BN folded) -> relu -> conv3x3+bias
//                             -> add skip -> relu]
//
// Each configuration is one CPU island made through the delegate contract
// (compile, init, execute), warmed up, then timed over repeated runs; the
// median is reported. Usage: cpu_engines_bench [--runs N] [--blocks N] [--size HW]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "examples/resnet_stack.h"
#include "graph/builder.h"

namespace hetsched {
namespace {

constexpr int64_t kChannels = 64;

struct BenchOptions {
  int runs = 10;
  int blocks = 4;
  int64_t size = 56;
};

// The conv-heavy workload all benches share (examples/resnet_stack.h).
Result<Graph> block_stack(const BenchOptions& o) {
  return examples::make_resnet_stack({o.blocks, kChannels, o.size});
}

struct Timing {
  double median_ms = 0;
  double best_ms = 0;
  Tensor output;
  cpu::CpuEngineCoverage coverage;
};

Result<Timing> time_engine(const Graph& graph, const Tensor& input, const std::string& engine, int threads,
                           int runs) {
  HS_ASSIGN_OR_RETURN(auto delegate,
                      cpu::make_cpu_delegate({{"engine", engine}, {"threads", std::to_string(threads)}}));
  Island island;
  island.delegate = "cpu";
  island.graph = &graph;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) island.nodes.push_back(n);
  island.inputs = graph.inputs();
  island.outputs = graph.outputs();
  HS_ASSIGN_OR_RETURN(const Blob blob, delegate->compile(island, {}));
  HS_ASSIGN_OR_RETURN(auto handle, delegate->init(blob, InitContext{}));
  Timing t;
  t.output = Tensor(graph.value(graph.outputs()[0]).type);
  const TensorRef in_ref{&input.type(), const_cast<std::byte*>(input.raw())};
  const TensorRef out_ref{&t.output.type(), t.output.raw()};
  std::vector<double> ms;
  for (int r = -2; r < runs; ++r) {  // two warm-up runs
    ExecContext ctx;
    const auto start = std::chrono::steady_clock::now();
    HS_RETURN_IF_ERROR(handle->execute(ctx, {&in_ref, 1}, {&out_ref, 1}));
    const auto end = std::chrono::steady_clock::now();
    if (r >= 0) ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(ms.begin(), ms.end());
  t.median_ms = ms[ms.size() / 2];
  t.best_ms = ms.front();
  t.coverage = *cpu::cpu_engine_coverage(*handle);
  return t;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  double d = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i)
    d = std::max(d, static_cast<double>(std::abs(a.data<float>()[i] - b.data<float>()[i])));
  return d;
}

int run(const BenchOptions& o) {
  auto graph = block_stack(o);
  if (!graph.is_ok()) {
    std::fprintf(stderr, "error: %s\n", graph.status().message().c_str());
    return 1;
  }
  const Tensor input = examples::seeded_tensor({1, kChannels, o.size, o.size}, 1000, 1.f);
  const double gflop = 2.0 * 2 * o.blocks * kChannels * kChannels * 9 * o.size * o.size / 1e9;
  std::printf("cpu_engines_bench: x f32[1,%lld,%lld,%lld], %d blocks (%d conv3x3), %.2f GFLOP per run, median of %d runs\n",
              static_cast<long long>(kChannels), static_cast<long long>(o.size), static_cast<long long>(o.size),
              o.blocks, 2 * o.blocks, gflop, o.runs);
  std::printf("%-8s %20s %20s %9s %16s  %s\n", "threads", "portable ms (best)", "xnnpack ms (best)", "speedup",
              "xnnpack GFLOP/s", "xnnpack coverage");
  for (int threads : {1, 2}) {
    auto portable = time_engine(*graph, input, "portable", threads, o.runs);
    auto xnn = time_engine(*graph, input, "xnnpack", threads, o.runs);
    if (!portable.is_ok() || !xnn.is_ok()) {
      std::fprintf(stderr, "error: %s\n",
                   (portable.is_ok() ? xnn.status() : portable.status()).message().c_str());
      return 1;
    }
    std::printf("%-8d %11.2f (%6.2f) %11.2f (%6.2f) %8.2fx %16.1f  %d/%d ops in %d segment(s), max |diff| %.2g\n",
                threads, portable->median_ms, portable->best_ms, xnn->median_ms, xnn->best_ms,
                portable->median_ms / xnn->median_ms,
                gflop / (xnn->median_ms / 1e3), xnn->coverage.xnnpack_ops,
                xnn->coverage.xnnpack_ops + xnn->coverage.portable_ops, xnn->coverage.xnnpack_segments,
                max_abs_diff(xnn->output, portable->output));
  }
  return 0;
}

}  // namespace
}  // namespace hetsched

int main(int argc, char** argv) {
  hetsched::BenchOptions o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--runs" && value > 0) {
      o.runs = value;
    } else if (flag == "--blocks" && value > 0) {
      o.blocks = value;
    } else if (flag == "--size" && value > 0) {
      o.size = value;
    } else {
      std::fprintf(stderr, "usage: %s [--runs N] [--blocks N] [--size HW]\n", argv[0]);
      return 2;
    }
  }
  return hetsched::run(o);
}
