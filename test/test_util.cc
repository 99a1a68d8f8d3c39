#include "test/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <sys/wait.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace hetsched::testing {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("hetsched_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Tensor random_tensor(const Shape& shape, uint32_t seed, float lo, float hi) {
  Tensor t(TensorType{DType::kFloat32, shape});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (float& v : t.span<float>()) v = dist(rng);
  return t;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

CommandResult run_cli(const std::string& args) {
  const std::string cmd = std::string(HETSCHED_BINARY_DIR) + "/cli/hetsched " + args + " 2>&1";
  CommandResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) r.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::filesystem::path source_path(const std::string& relative) {
  return std::filesystem::path(HETSCHED_SOURCE_DIR) / relative;
}

float max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.type() != b.type() || a.type().dtype != DType::kFloat32) return std::numeric_limits<float>::infinity();
  float worst = 0;
  const auto x = a.span<float>();
  const auto y = b.span<float>();
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

float max_abs(const Tensor& a) {
  float largest = 0;
  for (float v : a.span<float>()) largest = std::max(largest, std::abs(v));
  return largest;
}

Graph build(GraphBuilder& b) {
  Result<Graph> g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return g.is_ok() ? std::move(g).value() : Graph();
}

Island whole_graph_island(const Graph& graph, const std::string& delegate, int id) {
  Island island;
  island.id = id;
  island.delegate = delegate;
  island.graph = &graph;
  island.nodes.resize(graph.num_nodes());
  std::iota(island.nodes.begin(), island.nodes.end(), 0);
  island.inputs = graph.inputs();
  island.outputs = graph.outputs();
  return island;
}

Result<CpuIslandRun> run_cpu_island(const Graph& graph, const std::vector<Tensor>& inputs,
                                    const DelegateOptions& options, int runs) {
  HS_ASSIGN_OR_RETURN(auto delegate, cpu::make_cpu_delegate(options));
  HS_ASSIGN_OR_RETURN(const Blob blob, delegate->compile(whole_graph_island(graph, "cpu"), {}));
  HS_ASSIGN_OR_RETURN(auto handle, delegate->init(blob, InitContext{}));
  CpuIslandRun run;
  std::vector<TensorRef> in_refs, out_refs;
  for (size_t i = 0; i < inputs.size(); ++i)
    in_refs.push_back({&graph.value(graph.inputs()[i]).type, const_cast<std::byte*>(inputs[i].raw())});
  for (ValueId v : graph.outputs()) run.outputs.emplace_back(graph.value(v).type);
  for (Tensor& t : run.outputs) out_refs.push_back({&t.type(), t.raw()});
  for (int r = 0; r < runs; ++r) {
    ExecContext ctx;
    ctx.run_index = r;
    HS_RETURN_IF_ERROR(handle->execute(ctx, in_refs, out_refs));
  }
  run.coverage = *cpu::cpu_engine_coverage(*handle);
  return run;
}

void expect_fast_cpu_matches_portable(const Graph& graph, const Shape& x, int fast, int segments, float bound,
                                      const std::string& label) {
  const Tensor input = random_tensor(x, 1, -2.f, 2.f);
  auto expected = run_cpu_island(graph, {input}, {{"engine", "portable"}, {"threads", "1"}});
  ASSERT_TRUE(expected.is_ok()) << expected.status().message();
  const Tensor& want = expected->outputs[0];
  const float* e = want.data<float>();
  float scale = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) scale = std::max(scale, std::abs(e[i]));
  ASSERT_GT(scale, 0.f);
  for (int threads : {1, 2}) {
    auto actual = run_cpu_island(graph, {input}, {{"engine", "xnnpack"}, {"threads", std::to_string(threads)}});
    ASSERT_TRUE(actual.is_ok()) << actual.status().message();
    EXPECT_EQ(actual->coverage.fast_ops, fast) << threads << " threads";
    EXPECT_EQ(actual->coverage.xnnpack_segments, segments) << threads << " threads";
    const Tensor& got = actual->outputs[0];
    ASSERT_EQ(got.type(), want.type());
    const float* a = got.data<float>();
    int reported = 0;
    double worst = 0;
    for (int64_t i = 0; i < got.num_elements(); ++i) {
      const float diff = std::abs(a[i] - e[i]);
      worst = std::max<double>(worst, diff);
      if (diff <= bound * scale + 1e-6f || reported >= 5) continue;
      ADD_FAILURE() << threads << " threads, element " << i << ": " << label << " " << a[i] << ", portable " << e[i];
      ++reported;
    }
    std::cout << "[" << label << "] " << graph.name() << " " << threads << " threads: max abs error " << worst
              << " (max |y| " << scale << ")\n";
  }
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) old_ = old;
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

ScopedEnv::~ScopedEnv() {
  if (old_) {
    setenv(name_, old_->c_str(), 1);
  } else {
    unsetenv(name_);
  }
}

}  // namespace hetsched::testing
