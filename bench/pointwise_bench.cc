// Convs on the fast GEMM (delegates/cpu/fast/pointwise_conv.cc) against
// XNNPACK's own conv operator, in one run: 1x1 ones and, marked "kN", dense
// NxN ones with pads N/2 (their windows gathered into the GEMM's A;
// dense_conv_rule.h): the pointwise convs of ResNet
// bottlenecks, MobileNetV3 / EfficientNet expand and project layers,
// RegNet, ResNet's stride-2 downsample and odd sizes, NHWC in and out (as
// between XNNPACK segments). A shape marked "+res" ends like a bottleneck:
// conv -> Add(identity) -> Relu, which XNNPACK runs as its conv and its add
// operator (Relu as the add's clamp) and the fast op as one GEMM with the
// Add and the Relu in its epilogue; the others carry a fused Relu.
// XNNPACK and the fast op run on one pool of `--threads` threads, as in the
// CPU delegate (with a pool each, until session 19, the idle pool's worker
// spun for 2 ms after each run on the core the other needed: 2 threads ran
// a 256x256 conv at 56x56 1.1x faster than 1, where one pool runs it 1.9x),
// in alternating rounds so that other load on the machine slows both alike. Prints per shape the median
// of each side, the ratio and what pointwise_rule.h decides.
// (In a network the plan takes a 1x1 conv only where it then runs as an
// NHWC step between segments, delegates/cpu/fast/fast_plan.h, which this
// does not see.)
//
//   build/bench/pointwise_bench [--threads "1 2"] [--runs 20] [--rounds 5] [--cold] [--shape CINxCOUTxHxW[s2][kN][+res] ...]
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "delegates/cpu/fast/dense_conv_rule.h"
#include "delegates/cpu/fast/pointwise_conv.h"
#include "delegates/cpu/fast/pointwise_rule.h"
#include "delegates/cpu/xnnpack/threadpool.h"
#include "delegates/cpu/xnnpack/xnnpack_library.h"
#include "graph/builder.h"
#include "graph/passes/fused_activation.h"

namespace hetsched {
namespace {

struct ConvShape {
  int64_t cin, cout, h, w;  // h, w: the input's
  int64_t stride;
  bool residual;
  const char* family;
  int64_t kernel = 1;  // kernel x kernel, pads kernel / 2 (no residual then)
};

const std::vector<ConvShape> kShapes = {
    {64, 256, 56, 56, 1, true, "ResNet-50 l1 expand"},      {256, 64, 56, 56, 1, false, "ResNet-50 l1 reduce"},
    {512, 128, 28, 28, 1, false, "ResNet-50 l2 reduce"},    {128, 512, 28, 28, 1, true, "ResNet-50 l2 expand"},
    {1024, 256, 14, 14, 1, false, "ResNet-50 l3 reduce"},   {256, 1024, 14, 14, 1, true, "ResNet-50 l3 expand"},
    {2048, 512, 7, 7, 1, false, "ResNet-50 l4 reduce"},     {512, 2048, 7, 7, 1, true, "ResNet-50 l4 expand"},
    {64, 64, 56, 56, 1, false, "ResNet-50 l1 first"},       {256, 512, 56, 56, 2, false, "ResNet-50 downsample"},
    {512, 1024, 28, 28, 2, false, "ResNet-50 downsample"},  {1024, 2048, 14, 14, 2, false, "ResNet-50 downsample"},
    {16, 96, 56, 56, 1, false, "MBv3/EffNet expand"},       {24, 144, 56, 56, 1, false, "MBv3/EffNet expand"},
    {144, 24, 56, 56, 1, true, "EffNet project +res"},      {40, 240, 28, 28, 1, false, "MBv3/EffNet expand"},
    {240, 40, 28, 28, 1, true, "EffNet project +res"},      {112, 672, 14, 14, 1, false, "MBv3/EffNet expand"},
    {672, 112, 14, 14, 1, true, "EffNet project +res"},    {320, 1280, 7, 7, 1, false, "MBv3/EffNet head"},
    {16, 16, 112, 112, 1, false, "MBv3 early"},             {576, 96, 7, 7, 1, false, "MBv3-Small project"},
    {48, 104, 28, 28, 1, false, "RegNetY-400MF"},           {104, 104, 28, 28, 1, true, "RegNetY-400MF +res"},
    {208, 208, 14, 14, 1, true, "RegNetY-400MF +res"},      {440, 440, 7, 7, 1, true, "RegNetY-400MF +res"},
    {8, 8, 64, 64, 1, false, "tiny channels"},              {13, 29, 17, 23, 1, true, "odd"},
    {100, 37, 9, 11, 1, false, "odd small"},                {1000, 33, 3, 3, 1, false, "few pixels"},
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct XnnOp {
  xnn_operator_t op = nullptr;
  ~XnnOp() {
    if (op) xnn_delete_operator(op);
  }
};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "pointwise_bench: %s\n", what.c_str());
  std::exit(1);
}

// --cold: before each timed run, both sides' weights and inputs are
// evicted by writing a buffer larger than the L3, as in a whole network,
// where each conv's weights are read once per run, from memory.
bool g_cold = false;
void evict_caches() {
  static std::vector<char> junk(size_t{96} << 20);
  static char value = 0;
  std::memset(junk.data(), ++value, junk.size());
}

void run_shape(const ConvShape& s, int threads, int runs, int rounds) {
  const int64_t k = s.kernel, pad = k / 2, taps = k * k;
  const int64_t oh = (s.h + 2 * pad - k) / s.stride + 1, ow = (s.w + 2 * pad - k) / s.stride + 1;
  const std::vector<float> filter = random_floats(static_cast<size_t>(s.cout * s.cin * taps), 2);  // ONNX OIHW
  std::vector<float> filter_ohwi(filter.size());  // XNNPACK's order
  for (int64_t o = 0; o < s.cout; ++o)
    for (int64_t c = 0; c < s.cin; ++c)
      for (int64_t t = 0; t < taps; ++t) filter_ohwi[(o * taps + t) * s.cin + c] = filter[(o * s.cin + c) * taps + t];
  const std::vector<float> bias = random_floats(static_cast<size_t>(s.cout), 3);
  std::vector<float> x = random_floats(static_cast<size_t>(s.cin * s.h * s.w) + 64, 1);
  std::vector<float> res = random_floats(static_cast<size_t>(s.cout * oh * ow) + 64, 4);

  // XNNPACK: the conv (Relu as its clamp, or none before the add), then
  // the add with Relu as its clamp.
  auto pool = cpu::xnnpack::make_threadpool(threads);
  if (!pool.is_ok()) fail(pool.status().message());
  XnnOp conv, add;
  std::vector<float> y_conv(static_cast<size_t>(s.cout * oh * ow) + 64), y_xnn(y_conv.size());
  const float conv_min = s.residual ? -INFINITY : 0.f;
  const uint32_t p32 = static_cast<uint32_t>(pad), k32 = static_cast<uint32_t>(k);
  if (xnn_create_convolution2d_nhwc_f32(p32, p32, p32, p32, k32, k32, static_cast<uint32_t>(s.stride),
                                        static_cast<uint32_t>(s.stride), 1, 1, 1, s.cin, s.cout, s.cin, s.cout,
                                        filter_ohwi.data(), bias.data(), conv_min, INFINITY, 0,
                                        &conv.op) != xnn_status_success ||
      xnn_setup_convolution2d_nhwc_f32(conv.op, 1, s.h, s.w, x.data(), y_conv.data(), pool->get()) !=
          xnn_status_success)
    fail("failed to create the XNNPACK conv");
  if (s.residual) {
    const size_t shape[4] = {1, static_cast<size_t>(oh), static_cast<size_t>(ow), static_cast<size_t>(s.cout)};
    if (xnn_create_add_nd_f32(0.f, INFINITY, 0, &add.op) != xnn_status_success ||
        xnn_setup_add_nd_f32(add.op, 4, shape, 4, shape, y_conv.data(), res.data(), y_xnn.data(), pool->get()) !=
            xnn_status_success)
      fail("failed to create the XNNPACK add");
  }

  // The fast op, made as the CPU delegate makes it from Conv [-> Add -> Relu].
  GraphBuilder b("pointwise");
  const ValueId xv = b.input("x", TensorType{DType::kFloat32, {1, s.cin, s.h, s.w}});
  const ValueId rv = s.residual ? b.input("r", TensorType{DType::kFloat32, {1, s.cout, oh, ow}}) : kNoValue;
  Tensor w(TensorType{DType::kFloat32, {s.cout, s.cin, k, k}});
  std::copy(filter.begin(), filter.end(), w.data<float>());
  Tensor bt(TensorType{DType::kFloat32, {s.cout}});
  std::copy(bias.begin(), bias.end(), bt.data<float>());
  ValueId yv = b.op("Conv", {xv, b.constant("w", std::move(w)), b.constant("b", std::move(bt))},
                    {{"strides", std::vector<int64_t>{s.stride, s.stride}}, {"kernel_shape", std::vector<int64_t>{k, k}},
                     {"pads", std::vector<int64_t>{pad, pad, pad, pad}}},
                    "conv");
  if (s.residual) {
    yv = b.op("Relu", {b.op("Add", {yv, rv}, {}, "add")}, {}, "relu");
  } else {
    write_fused_activation(FusedActivation{FusedActivation::Kind::kRelu}, b.raw().node(b.raw().find_node("conv")).attrs);
  }
  b.output(yv);
  Graph graph = std::move(b.build()).value();
  std::vector<Tensor> tensors;
  tensors.reserve(graph.num_values());
  for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v) tensors.emplace_back(graph.value(v).type);
  std::copy(x.begin(), x.begin() + s.cin * s.h * s.w, tensors[xv].data<float>());
  if (s.residual) std::copy(res.begin(), res.begin() + s.cout * oh * ow, tensors[rv].data<float>());
  cpu::fast::TaskPool* task_pool = cpu::xnnpack::thread_pool_of(pool->get());  // one pool for both
  Result<std::unique_ptr<cpu::fast::FastOp>> op = unavailable("no op");
  if (k == 1) {
    setenv("HETSCHED_POINTWISE", "on", 1);
    const std::vector<cpu::fast::ConvGroup> groups = cpu::fast::find_pointwise_groups(graph);
    if (groups.size() != 1 || (s.residual && groups[0].activation == kNoNode)) fail("the group was not found");
    cpu::fast::FastOpContext ctx{graph, graph.node(groups[0].conv), threads > 1 ? task_pool : nullptr,
                                 [&](ValueId v) -> Tensor& { return tensors[v]; }};
    ctx.nhwc = true;
    op = cpu::fast::make_conv_group(ctx, groups[0]);
    unsetenv("HETSCHED_POINTWISE");
  } else {
    if (s.residual) fail("+res is for 1x1 shapes");
    setenv("HETSCHED_DENSE_CONV", "on", 1);
    setenv("HETSCHED_WINOGRAD", "off", 1);
    cpu::fast::FastOpContext ctx{graph, graph.node(graph.find_node("conv")), threads > 1 ? task_pool : nullptr,
                                 [&](ValueId v) -> Tensor& { return tensors[v]; }};
    ctx.nhwc = true;
    op = cpu::fast::make_fast_op(ctx);
    unsetenv("HETSCHED_DENSE_CONV");
    unsetenv("HETSCHED_WINOGRAD");
  }
  if (!op.is_ok()) fail(op.status().message());

  // Both read the same NHWC bytes; check that they agree before timing.
  (void)xnn_run_operator(conv.op, pool->get());
  if (s.residual) (void)xnn_run_operator(add.op, pool->get());
  (void)(*op)->run();
  const float* fast_y = tensors[yv].data<float>();
  const float* xnn_y = s.residual ? y_xnn.data() : y_conv.data();
  double max_diff = 0, max_abs = 0;
  for (int64_t i = 0; i < s.cout * oh * ow; ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(fast_y[i] - xnn_y[i])));
    max_abs = std::max(max_abs, static_cast<double>(std::fabs(xnn_y[i])));
  }
  if (max_diff > 1e-4 * std::max(1.0, max_abs)) fail("the fast op and XNNPACK disagree: " + std::to_string(max_diff));

  std::vector<double> xnn_ms, fast_ms;
  for (int r = 0; r < rounds; ++r) {
    std::vector<double> a, c;
    for (int i = 0; i < runs + 2; ++i) {
      if (g_cold) evict_caches();
      const double t0 = now_ms();
      (void)xnn_run_operator(conv.op, pool->get());
      if (s.residual) (void)xnn_run_operator(add.op, pool->get());
      const double t1 = now_ms();
      if (g_cold) evict_caches();
      const double t2a = now_ms();
      (void)(*op)->run();
      const double t2 = now_ms();
      if (i >= 2) {
        a.push_back(t1 - t0);
        c.push_back(t2 - t2a);
      }
    }
    xnn_ms.push_back(median(a));
    fast_ms.push_back(median(c));
  }
  const double xm = median(xnn_ms), fm = median(fast_ms);
  const double gflop = 2.0 * static_cast<double>(s.cin * s.cout * taps * oh * ow) * 1e-9;
  const cpu::fast::PointwiseShape shape{s.cin, s.cout, oh * ow, s.stride};
  // "fast, Add apart": the conv on the fast GEMM, the Add left to XNNPACK.
  const char* windows = std::getenv("HETSCHED_CONV_WINDOWS");
  const bool in_place = !(windows && std::string(windows) == "off");
  const char* rule = k > 1 ? (cpu::fast::dense_conv_pays({s.cin, s.cout, taps, oh * ow, s.stride, in_place}) ? "fast" : "xnnpack")
                     : !cpu::fast::pointwise_pays(shape)                          ? "xnnpack"
                     : !s.residual || cpu::fast::pointwise_residual_pays(shape)   ? "fast"
                                                                                  : "fast, Add apart";
  const std::string kernel = k > 1 ? " k" + std::to_string(k) : "";
  std::printf("| %s | %ldx%ldx%ldx%ld%s%s%s | %d | %.3f (%.0f GF/s) | %.3f (%.0f GF/s) | %.2f | %s |\n", s.family,
              static_cast<long>(s.cin), static_cast<long>(s.cout), static_cast<long>(s.h), static_cast<long>(s.w),
              s.stride > 1 ? " s2" : "", kernel.c_str(), s.residual ? " +res" : "", threads, xm, gflop / xm * 1e3, fm,
              gflop / fm * 1e3, fm / xm, rule);
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
    } else if (a == "--cold") {
      g_cold = true;
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (a == "--shape" && i + 1 < argc) {
      long c = 0, m = 0, h = 0, w = 0;
      int used = 0;
      const char* spec = argv[++i];
      if (std::sscanf(spec, "%ldx%ldx%ldx%ld%n", &c, &m, &h, &w, &used) != 4 || c <= 0 || m <= 0 || h <= 0 || w <= 0) {
        std::fprintf(stderr, "pointwise_bench: --shape wants CINxCOUTxHxW[s2][kN][+res], got '%s'\n", spec);
        return 2;
      }
      const std::string rest = spec + used;
      const size_t kpos = rest.find('k');
      const int64_t kernel = kpos == std::string::npos ? 1 : std::atol(rest.c_str() + kpos + 1);
      if (kernel < 1) {
        std::fprintf(stderr, "pointwise_bench: kN wants a kernel size of 1 or more, got '%s'\n", spec);
        return 2;
      }
      shapes.push_back({c, m, h, w, rest.find("s2") != std::string::npos ? 2 : 1,
                        rest.find("+res") != std::string::npos, "given", kernel});
    } else {
      std::fprintf(stderr,
                   "usage: pointwise_bench [--threads \"1 2\"] [--runs N] [--rounds N] [--cold] [--shape CINxCOUTxHxW[s2][kN][+res] ...]\n");
      return 2;
    }
  }
  if (shapes.empty()) shapes = kShapes;
  if (!cpu::xnnpack::ensure_initialized().is_ok()) fail("XNNPACK is unavailable");
  std::printf("| shape family | Cin x Cout x H x W | threads | XNNPACK ms | fast GEMM ms | fast / XNNPACK | rule |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (int t : threads)
    for (const ConvShape& s : shapes) run_shape(s, t, runs, rounds);
  return 0;
}
