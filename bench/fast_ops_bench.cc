// The fast kernels (delegates/cpu/fast/) against the portable kernels they
// replace, at a transformer block's shapes (d=128, 4 heads, seq 64, FF 512):
// each op is a one-node CPU island made through the delegate contract and
// timed around execute() (Google Benchmark), with engine xnnpack (the fast
// kernel; Softmax alone runs there too) and engine portable, on 1 thread.
//
//   build/bench/fast_ops_bench [--benchmark_filter=MatMul]
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "graph/builder.h"

namespace hetsched {
namespace {

TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// Values in [-2, 2) from a fixed seed.
Tensor random_tensor(const Shape& shape, uint32_t seed) {
  Tensor t(f32(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

Graph one_node(const std::string& op) {
  GraphBuilder b(op);
  if (op == "MatMul") {
    b.output(b.op("MatMul", {b.input("q", f32({1, 4, 64, 32})), b.input("kt", f32({1, 4, 32, 64}))}));
  } else if (op == "LayerNormalization") {
    b.output(b.op("LayerNormalization", {b.input("x", f32({1, 64, 128})),
                                          b.constant("scale", random_tensor({128}, 2)),
                                          b.constant("bias", random_tensor({128}, 3))}));
  } else if (op == "Softmax") {
    b.output(b.op("Softmax", {b.input("x", f32({1, 4, 64, 64}))}));
  } else {
    b.output(b.op(op, {b.input("x", f32({1, 64, 512}))}));
  }
  return std::move(b.build()).value();
}

void BM_Op(benchmark::State& state, const std::string& op, const std::string& engine) {
  const Graph graph = one_node(op);
  auto delegate = std::move(cpu::make_cpu_delegate({{"engine", engine}, {"threads", "1"}})).value();
  Island island;
  island.delegate = "cpu";
  island.graph = &graph;
  island.nodes = {0};
  island.inputs = graph.inputs();
  island.outputs = graph.outputs();
  const Blob blob = std::move(delegate->compile(island, {})).value();
  auto handle = std::move(delegate->init(blob, InitContext{})).value();
  std::vector<Tensor> inputs, outputs;
  std::vector<TensorRef> in_refs, out_refs;
  for (size_t i = 0; i < graph.inputs().size(); ++i)
    inputs.push_back(random_tensor(graph.value(graph.inputs()[i]).type.shape, uint32_t(i + 1)));
  for (size_t i = 0; i < inputs.size(); ++i) in_refs.push_back({&inputs[i].type(), inputs[i].raw()});
  for (ValueId v : graph.outputs()) outputs.emplace_back(graph.value(v).type);
  for (Tensor& t : outputs) out_refs.push_back({&t.type(), t.raw()});
  ExecContext ctx;
  for (auto _ : state) {
    if (!handle->execute(ctx, in_refs, out_refs).is_ok()) state.SkipWithError("execute failed");
  }
}

void register_all() {
  for (const char* op : {"MatMul", "LayerNormalization", "Gelu", "Erf", "Softmax"})
    for (const char* engine : {"xnnpack", "portable"})
      benchmark::RegisterBenchmark((std::string(op) + "/" + engine).c_str(), BM_Op, std::string(op),
                                   std::string(engine))
          ->Unit(benchmark::kMicrosecond);
}

}  // namespace
}  // namespace hetsched

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  hetsched::register_all();
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
