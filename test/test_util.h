// Helpers shared by the tests.
#pragma once

#include <filesystem>
#include <optional>
#include <random>
#include <string>

#include "delegates/cpu/cpu_delegate.h"
#include "graph/builder.h"
#include "graph/tensor.h"

namespace hetsched::testing {

// The builder's graph; a build error fails the current test (and returns
// an empty graph).
Graph build(GraphBuilder& b);

// A fresh empty directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// The type of a static f32 tensor of `shape` (a graph input's, in tests
// that build graphs).
inline TensorType f32(Shape shape) { return TensorType{DType::kFloat32, std::move(shape)}; }

// Uniform random f32 tensor in [lo, hi), reproducible from `seed`.
Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -1.f, float hi = 1.f);

// Largest |a - b| over the elements of two f32 tensors of one type
// (infinity when the types differ).
float max_abs_diff(const Tensor& a, const Tensor& b);

// Largest |a| over an f32 tensor's elements (the scale an error bound is
// relative to).
float max_abs(const Tensor& a);

// Writes `text` to `path`.
void write_file(const std::filesystem::path& path, const std::string& text);

// What running the hetsched command printed and returned.
struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};
// Runs the built `hetsched` with `args` (a shell fragment) and captures its output.
CommandResult run_cli(const std::string& args);

// Path of a file in the source tree, e.g. source_path("configs/default.yaml").
std::filesystem::path source_path(const std::string& relative);

// The whole graph as one island of a CPU delegate made with `options`, run
// An island of every node of `graph`, reading its inputs and writing its outputs.
Island whole_graph_island(const Graph& graph, const std::string& delegate, int id = 0);

// `runs` times on `inputs`: its outputs, and what ran on which engine.
struct CpuIslandRun {
  std::vector<Tensor> outputs;
  cpu::CpuEngineCoverage coverage;
};
Result<CpuIslandRun> run_cpu_island(const Graph& graph, const std::vector<Tensor>& inputs,
                                    const DelegateOptions& options, int runs = 1);

// Runs one-input `graph` on the CPU delegate's portable engine (1 thread)
// and its xnnpack engine (1 and 2 threads): each xnnpack run must put
// `fast` nodes on fast kernels in `segments` XNNPACK segments and stay
// within bound x max |portable| + 1e-6 of the portable output. Prints the
// largest error after "[label]".
void expect_fast_cpu_matches_portable(const Graph& graph, const Shape& x, int fast, int segments, float bound,
                                      const std::string& label);

// Sets an environment variable for a scope (nullptr: unsets it) and puts
// back what it was after: for switches read at init (HETSCHED_WINOGRAD,
// VK_DRIVER_FILES).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace hetsched::testing
