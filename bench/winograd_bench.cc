// Winograd (delegates/cpu/fast/winograd_conv.cc; the tile winograd_rule.h
// picks, or HETSCHED_WINOGRAD_TILE=2|4's) against XNNPACK's own
// convolution on the same dense 3x3 stride-1 convs, in one run: the
// shapes of ResNet, VGG, RegNet and PP-OCR det backbones and some odd
// ones, NHWC in and out (as between XNNPACK segments), pads 1, Relu.
// XNNPACK's operator and the Winograd op run on one pool of `--threads`
// threads, as in the CPU delegate (with a pool each, the idle pool's
// worker spun for 2 ms after each run on the core the other needed, and
// 2 threads ran barely faster than 1); the two are timed in alternating
// rounds so that other load on the machine slows both alike. Prints per shape the median of each side, the ratio and what
// winograd_rule.h decides, so the rule can be checked against the numbers.
//
//   build/bench/winograd_bench [--threads 1] [--runs 20] [--rounds 5] [--shape CINxCOUTxHxW ...]
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/winograd_rule.h"
#include "delegates/cpu/xnnpack/threadpool.h"
#include "delegates/cpu/xnnpack/xnnpack_library.h"
#include "graph/builder.h"
#include "graph/passes/fused_activation.h"

namespace hetsched {
namespace {

struct ConvShape {
  int64_t cin, cout, h, w;
  const char* family;
};

// Default shapes: the 3x3 stride-1 convs of the families the rule is for.
const std::vector<ConvShape> kShapes = {
    {64, 64, 56, 56, "ResNet layer1"},       {128, 128, 28, 28, "ResNet layer2"},
    {256, 256, 14, 14, "ResNet layer3"},     {512, 512, 7, 7, "ResNet layer4"},
    {64, 64, 112, 112, "VGG/UNet block1"},   {128, 128, 56, 56, "VGG block2"},
    {256, 256, 28, 28, "VGG block3"},        {512, 512, 14, 14, "VGG block4/5"},
    {3, 64, 224, 224, "first layer"},        {16, 16, 112, 112, "small-channel early"},
    {8, 16, 160, 160, "tiny channels"},      {32, 32, 56, 56, "small-channel mid"},
    {24, 24, 80, 80, "RegNet-like narrow"},  {48, 48, 28, 28, "RegNet-like"},
    {104, 104, 14, 14, "RegNet-like"},       {208, 208, 7, 7, "RegNet-like 7x7"},
    {96, 96, 40, 40, "PP-OCR det neck"},     {96, 24, 160, 160, "PP-OCR det head"},
    {32, 32, 13, 13, "odd small"},           {40, 72, 27, 33, "odd"},
    {128, 64, 9, 9, "few tiles"},            {64, 128, 17, 17, "odd 17x17"},
    {256, 128, 7, 7, "7x7 narrow"},          {1024, 1024, 4, 4, "4x4 wide"},
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// XNNPACK's NHWC conv operator for `s` (pads 1, Relu clamp).
struct XnnConv {
  xnn_operator_t op = nullptr;
  ~XnnConv() {
    if (op) xnn_delete_operator(op);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void run_shape(const ConvShape& s, int threads, int runs, int rounds) {
  const std::vector<float> filter = random_floats(static_cast<size_t>(s.cout * s.cin * 9), 2);  // OIHW (and OHWI: timing only)
  const std::vector<float> bias = random_floats(static_cast<size_t>(s.cout), 3);
  const std::vector<float> x = random_floats(static_cast<size_t>(s.cin * s.h * s.w), 1);

  // XNNPACK.
  auto pool = cpu::xnnpack::make_threadpool(threads);
  if (!pool.is_ok()) {
    std::fprintf(stderr, "winograd_bench: %s\n", pool.status().message().c_str());
    std::exit(1);
  }
  XnnConv xnn;
  std::vector<float> y_xnn(static_cast<size_t>(s.cout * s.h * s.w) + 64);
  std::vector<float> x_xnn(x);
  x_xnn.resize(x.size() + 64);  // XNN_EXTRA_BYTES
  if (xnn_create_convolution2d_nhwc_f32(1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, s.cin, s.cout, s.cin, s.cout, filter.data(),
                                        bias.data(), 0.f, INFINITY, 0, &xnn.op) != xnn_status_success ||
      xnn_setup_convolution2d_nhwc_f32(xnn.op, 1, s.h, s.w, x_xnn.data(), y_xnn.data(), pool->get()) !=
          xnn_status_success) {
    std::fprintf(stderr, "winograd_bench: failed to create the XNNPACK conv\n");
    std::exit(1);
  }

  // Winograd, made as the CPU delegate makes it (a one-node graph).
  GraphBuilder b("conv");
  const ValueId xv = b.input("x", TensorType{DType::kFloat32, {1, s.cin, s.h, s.w}});
  Tensor w(TensorType{DType::kFloat32, {s.cout, s.cin, 3, 3}});
  std::copy(filter.begin(), filter.end(), w.data<float>());
  Tensor bt(TensorType{DType::kFloat32, {s.cout}});
  std::copy(bias.begin(), bias.end(), bt.data<float>());
  const ValueId yv = b.op("Conv", {xv, b.constant("w", std::move(w)), b.constant("b", std::move(bt))},
                          {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
  write_fused_activation(FusedActivation{FusedActivation::Kind::kRelu}, b.raw().node(b.raw().find_node("conv")).attrs);
  b.output(yv);
  Graph graph = std::move(b.build()).value();
  Tensor xt(graph.value(xv).type), yt(graph.value(yv).type);
  std::copy(x.begin(), x.end(), xt.data<float>());
  cpu::fast::TaskPool* task_pool = cpu::xnnpack::thread_pool_of(pool->get());  // one pool for both
  setenv("HETSCHED_WINOGRAD", "on", 1);
  cpu::fast::FastOpContext ctx{graph, graph.node(0), threads > 1 ? task_pool : nullptr,
                               [&](ValueId v) -> Tensor& { return v == xv ? xt : yt; }};
  ctx.nhwc = true;
  auto op = cpu::fast::make_fast_op(ctx);
  unsetenv("HETSCHED_WINOGRAD");
  if (!op.is_ok()) {
    std::fprintf(stderr, "winograd_bench: %s\n", op.status().message().c_str());
    std::exit(1);
  }

  std::vector<double> xnn_ms, wino_ms;
  for (int r = 0; r < rounds; ++r) {
    std::vector<double> a, c;
    for (int i = 0; i < runs + 2; ++i) {
      const double t0 = now_ms();
      (void)xnn_run_operator(xnn.op, pool->get());
      const double t1 = now_ms();
      (void)(*op)->run();
      const double t2 = now_ms();
      if (i >= 2) {
        a.push_back(t1 - t0);
        c.push_back(t2 - t1);
      }
    }
    xnn_ms.push_back(median(a));
    wino_ms.push_back(median(c));
  }
  const double xm = median(xnn_ms), wm = median(wino_ms);
  const double gflop = 2.0 * 9 * static_cast<double>(s.cin * s.cout * s.h * s.w) * 1e-9;
  const bool rule = cpu::fast::winograd_pays({s.cin, s.cout, s.h, s.w, 1, threads});
  std::printf("| %s | %ldx%ldx%ldx%ld | %d | %.3f (%.0f GF/s) | %.3f (%.0f GF/s eq.) | %.2f | %s |\n", s.family,
              static_cast<long>(s.cin), static_cast<long>(s.cout), static_cast<long>(s.h), static_cast<long>(s.w),
              threads, xm, gflop / xm * 1e3, wm, gflop / wm * 1e3, wm / xm, rule ? "winograd" : "direct");
  std::fflush(stdout);
}

}  // namespace
}  // namespace hetsched

int main(int argc, char** argv) {
  using namespace hetsched;
  std::vector<int> threads{1};
  int runs = 20, rounds = 5;
  std::vector<ConvShape> shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads.clear();
      for (char* p = argv[++i]; *p;) {
        threads.push_back(static_cast<int>(std::strtol(p, &p, 10)));
        while (*p == ' ' || *p == ',') ++p;
      }
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (a == "--shape" && i + 1 < argc) {
      long c = 0, m = 0, h = 0, w = 0;
      if (std::sscanf(argv[++i], "%ldx%ldx%ldx%ld", &c, &m, &h, &w) != 4 || c <= 0 || m <= 0 || h <= 0 || w <= 0) {
        std::fprintf(stderr, "winograd_bench: --shape wants CINxCOUTxHxW, got '%s'\n", argv[i]);
        return 2;
      }
      shapes.push_back({c, m, h, w, "given"});
    } else {
      std::fprintf(stderr,
                   "usage: winograd_bench [--threads \"1 2\"] [--runs N] [--rounds N] [--shape CINxCOUTxHxW ...]\n");
      return 2;
    }
  }
  if (shapes.empty()) shapes = kShapes;
  if (!cpu::xnnpack::ensure_initialized().is_ok()) {
    std::fprintf(stderr, "winograd_bench: XNNPACK is unavailable\n");
    return 1;
  }
  std::printf("| shape family | Cin x Cout x H x W | threads | XNNPACK ms | Winograd ms | Winograd / XNNPACK | rule |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (int t : threads)
    for (const ConvShape& s : shapes) run_shape(s, t, runs, rounds);
  return 0;
}
