// The fast GEMM (delegates/cpu/fast/gemm.h) alone on one thread, in GFLOP/s,
// at transformer shapes: B packed once (as a linear layer's weights), then
// gemm_block over every column block, best of the runs. The micro-kernel is
// the one this CPU picks; HETSCHED_FAST_ISA=avx2 or =baseline caps it.
//
//   build/bench/gemm_bench [MxKxN ...]
// To compare with XNNPACK and ONNX Runtime on the same shapes, run a one-
// MatMul model through bench/ort_compare.sh (docs/models.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "delegates/cpu/fast/gemm.h"
#include "graph/tensor.h"

using namespace hetsched;
using namespace hetsched::cpu::fast;

namespace {

double best_ms(int64_t m, int64_t k, int64_t n) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), c(static_cast<size_t>(m * n));
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  const int64_t blocks = (n + kBlockColumns - 1) / kBlockColumns;
  AlignedBuffer panels(static_cast<size_t>(blocks * k * kBlockColumns) * sizeof(float));
  float* p = reinterpret_cast<float*>(panels.data());
  for (int64_t j = 0; j < n; j += kPanel) pack_panel(k, n, b.data(), n, false, j, p + j * k);
  double best = 1e30;
  for (int run = 0; run < 20; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t j = 0; j < n; j += kBlockColumns)
      gemm_block(m, k, std::min(kBlockColumns, n - j), a.data(), k, p + j * k, {}, c.data() + j, n);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> shapes(argv + 1, argv + argc);
  if (shapes.empty())
    shapes = {"64x128x512", "128x256x1024", "128x768x768", "128x768x3072", "128x3072x768", "197x768x3072"};
  std::printf("micro-kernel %s, 1 thread, best of 20\n%-14s %10s %10s\n", gemm_isa(), "MxKxN", "ms", "GFLOP/s");
  for (const std::string& s : shapes) {
    long long m = 0, k = 0, n = 0;
    if (std::sscanf(s.c_str(), "%lldx%lldx%lld", &m, &k, &n) != 3 || m <= 0 || k <= 0 || n <= 0) {
      std::fprintf(stderr, "gemm_bench: '%s' is not MxKxN\n", s.c_str());
      return 2;
    }
    const double ms = best_ms(m, k, n);
    std::printf("%-14s %10.3f %10.1f\n", s.c_str(), ms, 2.0 * m * k * n / ms / 1e6);
  }
  return 0;
}
