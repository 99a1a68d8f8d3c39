// The fast GEMM (delegates/cpu/fast/gemm.h) alone on one thread, in GFLOP/s,
// at transformer shapes: B packed once (as a linear layer's weights), then
// gemm_block over every column block, best of the runs. The micro-kernel is
// the one this CPU picks; HETSCHED_FAST_ISA=avx2 or =baseline caps it.
// With --cold, each run reads another copy of the packed weights, 64 MB of
// copies in all, so that they come from memory as in a model whose weights
// exceed the caches (BERT-base: 28 MB a layer), and C is written fresh.
//
//   build/bench/gemm_bench [--peak] [--cold] [MxKxN ...]
// To compare with XNNPACK and ONNX Runtime on the same shapes, run a one-
// MatMul model through bench/ort_compare.sh (docs/models.md). --peak first
// prints one core's AVX-512 FMA rate (16 independent chains), the ceiling
// the GFLOP/s compare with.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "delegates/cpu/fast/gemm.h"
#include "graph/tensor.h"

using namespace hetsched;
using namespace hetsched::cpu::fast;

namespace {

double best_ms(int64_t m, int64_t k, int64_t n, bool cold) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  const int64_t blocks = (n + kBlockColumns - 1) / kBlockColumns;
  const size_t panel_bytes = static_cast<size_t>(blocks * k * kBlockColumns) * sizeof(float);
  const size_t copies = cold ? std::max<size_t>(2, (size_t{64} << 20) / panel_bytes + 1) : 1;
  std::vector<AlignedBuffer> panels;
  std::vector<std::vector<float>> outputs;
  for (size_t i = 0; i < copies; ++i) {
    panels.emplace_back(panel_bytes);
    float* p = reinterpret_cast<float*>(panels.back().data());
    for (int64_t j = 0; j < n; j += kPanel) pack_panel(k, n, b.data(), n, false, j, p + j * k);
    outputs.emplace_back(static_cast<size_t>(m * n));
  }
  double best = 1e30;
  for (int run = 0; run < 20; ++run) {
    const float* p = reinterpret_cast<const float*>(panels[static_cast<size_t>(run) % copies].data());
    float* c = outputs[static_cast<size_t>(run) % copies].data();
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t j = 0; j < n; j += kBlockColumns) {
      // As fast/linear.cc: the first row tile prefetches the next block.
      const Epilogue e{nullptr, nullptr, j + kBlockColumns < n ? p + (j + kBlockColumns) * k : nullptr};
      gemm_block(m, k, std::min(kBlockColumns, n - j), a.data(), k, p + j * k, e, c + j, n);
    }
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

#if defined(__x86_64__)
// GFLOP/s of 16 independent chains of AVX-512 FMAs on this thread: enough
// chains to cover the FMA latency on both pipes.
__attribute__((target("avx512f"))) double fma_peak_gflops() {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  const __m512 b = _mm512_set1_ps(0.9999f), c = _mm512_set1_ps(1e-4f);
  const long steps = 20'000'000;
  const auto t0 = std::chrono::steady_clock::now();
  for (long n = 0; n < steps; ++n)
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(acc[i], b, c);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  float lanes[16], sink = 0;
  for (int i = 0; i < 16; ++i) {
    _mm512_storeu_ps(lanes, acc[i]);
    sink += lanes[0];
  }
  std::printf("(checksum %g)\n", sink);  // keeps the chains
  return static_cast<double>(steps) * 16 * 32 / s / 1e9;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> shapes(argv + 1, argv + argc);
  const bool peak = !shapes.empty() && shapes[0] == "--peak";
  if (peak) {
    shapes.erase(shapes.begin());
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) std::printf("AVX-512 FMA peak, 1 thread: %.1f GFLOP/s\n", fma_peak_gflops());
#endif
  }
  const bool cold = !shapes.empty() && shapes[0] == "--cold";
  if (cold) shapes.erase(shapes.begin());
  if (shapes.empty())
    shapes = {"64x128x512", "128x256x1024", "128x768x768", "128x768x3072", "128x3072x768", "197x768x3072"};
  std::printf("micro-kernel %s, 1 thread, best of 20%s\n%-14s %10s %10s\n", gemm_isa(),
              cold ? ", weights from memory (--cold)" : "", "MxKxN", "ms", "GFLOP/s");
  for (const std::string& s : shapes) {
    long long m = 0, k = 0, n = 0;
    if (std::sscanf(s.c_str(), "%lldx%lldx%lld", &m, &k, &n) != 3 || m <= 0 || k <= 0 || n <= 0) {
      std::fprintf(stderr, "gemm_bench: '%s' is not MxKxN\n", s.c_str());
      return 2;
    }
    const double ms = best_ms(m, k, n, cold);
    std::printf("%-14s %10.3f %10.1f\n", s.c_str(), ms, 2.0 * m * k * n / ms / 1e6);
  }
  return 0;
}
