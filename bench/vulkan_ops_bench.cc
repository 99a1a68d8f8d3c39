// Throughput of the Vulkan delegate's main shaders, timed on the GPU: each
// case is a one-node island whose recorded command buffer is replayed,
// with timestamps written at its start and end (VulkanIsland's
// gpu_timestamps option), after warm-up runs.
//
//   vulkan_ops_bench [--device SELECTOR] [--small] [--replays N] [--check]
//                    [--cases SUBSTR,...] [--conv-tilings TILING,...]
//                    [--precisions fp32,fp16,auto] [--gemm-kernels KERNEL,...]
//
// --small uses lavapipe-sized shapes; --check also runs each case on the
// portable CPU kernels and compares: the largest |gpu - cpu| relative to
// the largest |cpu| must stay below 1e-5 (per-element relative error is no
// measure for sums of thousands of products that cancel to near zero).
// --cases runs only the cases whose label contains one of the substrings.
// --conv-tilings times each conv case once per tiling ("auto", or
// channels x pixels / splits as in "128x64/4": the delegate's conv_tiling
// option), to compare them in one run; --precisions likewise for the
// delegate's precision option for the conv and MatMul cases (fp16: the
// tensor-core kernels; --check then allows 5e-3); --gemm-kernels for the
// delegate's gemm_kernel option on the MatMul cases at fp16 ("auto" or a
// gemm_coopmat kernel's name, e.g. gemm_coopmat_128x256).
// The `chain` case times 64 dependent tiny dispatches: what one dispatch
// costs behind its barrier when it has almost nothing to do.
// Prints one line per case (and tiling):
//   conv3x3 1x256x56x56: 1234.5 GFLOP/s (median 3.01 ms over 20 replays)
//   conv3x3 1x256x56x56 [128x64/4]: ...
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "delegates/vulkan/vulkan_delegate.h"
#include "delegates/vulkan/vulkan_island.h"
#include "graph/builder.h"
#include "shared_gpu/buffer.h"
#include "shared_gpu/command_pool.h"

namespace hetsched {
namespace {

struct BenchOptions {
  std::string device = "auto";
  bool small = false;
  int replays = 20;
  bool check = false;
  std::vector<std::string> cases;                 // label substrings; empty: all
  std::vector<std::string> conv_tilings{"auto"};  // conv_tiling option values
  std::vector<std::string> precisions{"fp32"};    // precision option values (convs)
  std::vector<std::string> gemm_kernels{"auto"};  // gemm_kernel option values (MatMuls at fp16)
};

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

// Uniform values in [-1, 1) from a fixed LCG: the numbers only need to be
// finite and varied.
Tensor filled(const Shape& shape, uint32_t seed) {
  Tensor t(TensorType{DType::kFloat32, shape});
  uint32_t state = seed * 2654435761u + 1;
  for (float& v : t.span<float>()) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.f;
  }
  return t;
}

struct Case {
  std::string label;  // "conv3x3 1x256x56x56"
  Graph graph;
  double work = 0;  // flops, or bytes for memory-bound cases
  const char* unit = "GFLOP/s";
  // Set: the case's time is this op's dispatch alone (per-dispatch
  // timestamps), not the island's, and `options` join the delegate's.
  std::string timed_op = {};
  CompileSpecs options = {};
};

// A square conv of `in` channels to `out` on a `size` x `size` image, padded
// to keep the size (over the stride).
Result<Case> conv_case(int64_t in, int64_t out, int64_t size, int64_t kernel, int64_t stride) {
  GraphBuilder b("conv");
  const ValueId x = b.input("x", {DType::kFloat32, {1, in, size, size}});
  const ValueId w = b.constant("w", filled({out, in, kernel, kernel}, 1));
  const int64_t pad = kernel / 2;
  b.output(
      b.op("Conv", {x, w},
           {{"pads", std::vector<int64_t>{pad, pad, pad, pad}}, {"strides", std::vector<int64_t>{stride, stride}}}));
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  const int64_t out_size = (size + 2 * pad - kernel) / stride + 1;
  const double flops = 2.0 * static_cast<double>(out * out_size * out_size) * static_cast<double>(in * kernel * kernel);
  const std::string k = std::to_string(kernel), hw = std::to_string(size);
  return Case{"conv" + k + "x" + k + (stride > 1 ? "s" + std::to_string(stride) : "") + " 1x" + std::to_string(in) +
                  "x" + hw + "x" + hw + (out != in ? "->" + std::to_string(out) : ""),
              std::move(g), flops};
}

// 3x3 convs like ResNet's stages at 224x224 input (64x56x56, 128x28x28,
// 512x7x7), a wide one the GPU can fill, and ResNet's stem (3 channels:
// conv2d.comp's channel-major K, through its tap table).
Result<Case> wide_conv_case(bool small) { return small ? conv_case(32, 32, 28, 3, 1) : conv_case(256, 256, 56, 3, 1); }
Result<Case> narrow_conv_case(bool small) { return small ? conv_case(16, 16, 28, 3, 1) : conv_case(64, 64, 56, 3, 1); }
Result<Case> middle_conv_case(bool small) {
  return small ? conv_case(32, 32, 14, 3, 1) : conv_case(128, 128, 28, 3, 1);
}
Result<Case> deep_conv_case(bool small) { return small ? conv_case(64, 64, 7, 3, 1) : conv_case(512, 512, 7, 3, 1); }
Result<Case> stem_conv_case(bool small) { return small ? conv_case(3, 16, 32, 7, 2) : conv_case(3, 64, 224, 7, 2); }

// Square MatMuls of two run-time operands (gemm.comp, or gemm_coopmat.comp
// at precision fp16): 2048 and the 4096 that cuBLAS figures are quoted at.
Result<Case> square_matmul_case(int64_t n) {
  GraphBuilder b("matmul");
  b.output(b.op("MatMul", {b.input("a", {DType::kFloat32, {n, n}}), b.input("b", {DType::kFloat32, {n, n}})}));
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  const std::string s = std::to_string(n);
  return Case{"matmul " + s + "x" + s + "x" + s, std::move(g), 2.0 * static_cast<double>(n) * n * n};
}
Result<Case> matmul_case(bool small) { return square_matmul_case(small ? 256 : 2048); }
Result<Case> big_matmul_case(bool small) { return square_matmul_case(small ? 512 : 4096); }

// The same MatMuls with f16 operands in memory, as cuBLAS's fp16 GEMM
// reads them: each input passes a Relu, whose output the island stores in
// f16 (`storage: fp16`), and the MatMul's dispatch alone is timed.
Result<Case> square_matmul_f16_case(int64_t n) {
  GraphBuilder b("matmul_f16");
  const ValueId a = b.op("Relu", {b.input("a", {DType::kFloat32, {n, n}})});
  b.output(b.op("MatMul", {a, b.op("Relu", {b.input("b", {DType::kFloat32, {n, n}})})}));
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  const std::string s = std::to_string(n);
  return Case{"matmul " + s + "x" + s + "x" + s + " f16 operands", std::move(g), 2.0 * static_cast<double>(n) * n * n,
              "GFLOP/s", "MatMul", {{"storage", "fp16"}}};
}
Result<Case> matmul_f16_case(bool small) { return square_matmul_f16_case(small ? 256 : 2048); }
Result<Case> big_matmul_f16_case(bool small) { return square_matmul_f16_case(small ? 512 : 4096); }

// A transformer's linear layer at ViT-B/16's 197 tokens, 768 -> 3072:
// constant weights (the conv kernel, as a 1x1 conv over the rows) or a
// run-time B of the same shape (gemm.comp / gemm_coopmat.comp).
Result<Case> linear_case(bool small, bool constant_weights) {
  const int64_t m = small ? 37 : 197, k = small ? 64 : 768, n = small ? 96 : 3072;
  GraphBuilder b("linear");
  const ValueId a = b.input("a", {DType::kFloat32, {1, m, k}});
  const ValueId w = constant_weights ? b.constant("w", filled({k, n}, 1)) : b.input("w", {DType::kFloat32, {k, n}});
  b.output(b.op("MatMul", {a, w}));
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  const std::string shape = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  return Case{(constant_weights ? "linear " : "matmul ") + shape, std::move(g), 2.0 * static_cast<double>(m) * k * n};
}
Result<Case> linear_weights_case(bool small) { return linear_case(small, true); }
Result<Case> linear_runtime_case(bool small) { return linear_case(small, false); }

// Attention's scores at BERT-base's shape: 12 heads of [128 x 64] . [64 x 128].
Result<Case> attention_case(bool small) {
  const int64_t heads = small ? 2 : 12, seq = small ? 32 : 128, dim = 64;
  GraphBuilder b("attention");
  b.output(b.op("MatMul", {b.input("q", {DType::kFloat32, {1, heads, seq, dim}}),
                           b.input("k", {DType::kFloat32, {1, heads, dim, seq}})}));
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  return Case{"attention " + std::to_string(heads) + "x" + std::to_string(seq) + "x" + std::to_string(dim), std::move(g),
              2.0 * static_cast<double>(heads) * seq * seq * dim};
}

Result<Case> add_case(bool small) {
  const int64_t n = small ? (int64_t{1} << 20) : (int64_t{64} << 20);
  GraphBuilder b("add");
  b.output(b.op("Add", {b.input("a", {DType::kFloat32, {n}}), b.input("b", {DType::kFloat32, {n}})}));
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  // Two reads and one write of 4 bytes per element.
  return Case{"add " + std::to_string(n >> 20) + "M", std::move(g), 3.0 * 4.0 * static_cast<double>(n), "GB/s"};
}

// A chain of dependent dispatches that do almost nothing: `length` 1x1
// convs (each with its Relu, one dispatch) of 64 channels on a 7x7 map, each
// reading the one before. Its time over `length` is what a dependent
// dispatch costs on its own: the barrier, the launch, the ramp and the tail.
// Printed as k dispatches/s (1000 / that is microseconds per dispatch).
Result<Case> chain_case(bool small) {
  const int64_t length = 64, channels = small ? 16 : 64, size = 7;
  GraphBuilder b("chain");
  ValueId x = b.input("x", {DType::kFloat32, {1, channels, size, size}});
  for (int64_t i = 0; i < length; ++i) {
    const ValueId w = b.constant("w" + std::to_string(i), filled({channels, channels, 1, 1}, static_cast<uint32_t>(i + 3)));
    x = b.op("Relu", {b.op("Conv", {x, w})});
  }
  b.output(x);
  HS_ASSIGN_OR_RETURN(Graph g, b.build());
  return Case{"chain " + std::to_string(length) + " x conv1x1 1x" + std::to_string(channels) + "x7x7", std::move(g),
              static_cast<double>(length) * 1e6, "k dispatches/s"};
}

// What timing a case found.
struct Timing {
  double seconds = 0;  // median GPU seconds per replay
  std::string device;
  std::vector<Tensor> inputs;
  Tensor output;  // of the last replay
};

// Runs `c` on `delegate` `replays` times after a warm-up, the island
// initialised with `options`.
Result<Timing> time_case(Delegate& delegate, const Case& c, int replays, CompileSpecs options) {
  Island island;
  island.delegate = "vulkan";
  island.graph = &c.graph;
  for (NodeId i = 0; i < static_cast<NodeId>(c.graph.num_nodes()); ++i) island.nodes.push_back(i);
  island.inputs = c.graph.inputs();
  island.outputs = c.graph.outputs();
  HS_ASSIGN_OR_RETURN(const Blob blob, delegate.compile(island, {}));
  options.insert(options.end(), c.options.begin(), c.options.end());
  HS_ASSIGN_OR_RETURN(std::unique_ptr<IslandHandle> handle,
                      delegate.init(blob, {options, 0, nullptr, /*profile_ops=*/!c.timed_op.empty()}));
  auto* vk_island = dynamic_cast<vulkan::VulkanIsland*>(handle.get());
  if (!vk_island) return internal_error("failed to time " + c.label + ": not a Vulkan island");
  SharedGpuContext& context = *handle->gpu_context();
  Timing timing;
  timing.device = context.device_name();
  HS_ASSIGN_OR_RETURN(CommandPool pool, CommandPool::create(context));
  for (size_t i = 0; i < c.graph.inputs().size(); ++i) {
    timing.inputs.push_back(filled(c.graph.value(c.graph.inputs()[i]).type.shape, static_cast<uint32_t>(i + 7)));
    const Tensor& t = timing.inputs.back();
    const DeviceTensor* dt = handle->device_input(i);
    HS_RETURN_IF_ERROR(upload(pool, *dt->buffer, std::span(t.raw(), t.byte_size()), dt->offset));
  }
  constexpr int kWarmup = 3;
  std::vector<double> seconds;
  for (int r = 0; r < kWarmup + replays; ++r) {
    ExecContext ctx;
    ctx.gpu.signal = true;
    HS_RETURN_IF_ERROR(handle->execute(ctx, {}, {}));
    HS_RETURN_IF_ERROR(context.wait(ctx.signalled_value));
    double s = 0;
    if (c.timed_op.empty()) {
      HS_ASSIGN_OR_RETURN(s, vk_island->last_gpu_seconds());
    } else {
      HS_ASSIGN_OR_RETURN(const std::vector<OpTiming> ops, vk_island->op_timings());
      for (const OpTiming& op : ops)
        if (std::find(op.ops.begin(), op.ops.end(), c.timed_op) != op.ops.end()) s += op.ms * 1e-3;
    }
    if (r >= kWarmup) seconds.push_back(s);
  }
  std::sort(seconds.begin(), seconds.end());
  timing.seconds = seconds[seconds.size() / 2];
  timing.output = Tensor(c.graph.value(c.graph.outputs()[0]).type);
  const DeviceTensor* out = handle->device_output(0);
  HS_RETURN_IF_ERROR(
      readback(pool, *out->buffer, std::span(timing.output.raw(), timing.output.byte_size()), out->offset));
  return timing;
}

// Largest |gpu - cpu| over largest |cpu| that --check accepts. fp32 sums of
// a few thousand products differ by ~1e-6 of their scale between summation
// orders; a wrong index or a lost tile shows up as ~1.
constexpr double kCheckTolerance = 1e-5;

// The case on the portable CPU kernels, with the inputs the GPU got.
Result<Tensor> run_on_cpu(const Case& c, const Timing& timing) {
  HS_ASSIGN_OR_RETURN(std::unique_ptr<Delegate> cpu, cpu::make_cpu_delegate({{"engine", "portable"}}));
  Island island;
  island.delegate = "cpu";
  island.graph = &c.graph;
  for (NodeId i = 0; i < static_cast<NodeId>(c.graph.num_nodes()); ++i) island.nodes.push_back(i);
  island.inputs = c.graph.inputs();
  island.outputs = c.graph.outputs();
  HS_ASSIGN_OR_RETURN(const Blob blob, cpu->compile(island, {}));
  HS_ASSIGN_OR_RETURN(std::unique_ptr<IslandHandle> handle, cpu->init(blob, {}));
  Tensor want(timing.output.type());
  std::vector<TensorRef> in;
  for (const Tensor& t : timing.inputs) in.push_back({&t.type(), const_cast<std::byte*>(t.raw())});
  const TensorRef out{&want.type(), want.raw()};
  ExecContext ctx;
  HS_RETURN_IF_ERROR(handle->execute(ctx, in, std::span(&out, 1)));
  return want;
}

// The largest |got - want| relative to the largest |want|.
double max_error(const Tensor& got, const Tensor& want) {
  double worst = 0, scale = 0;
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(g[i]) - w[i]));
    scale = std::max(scale, std::abs(static_cast<double>(w[i])));
  }
  return scale == 0 ? worst : worst / scale;
}

bool selected(const BenchOptions& options, const std::string& label) {
  if (options.cases.empty()) return true;
  return std::any_of(options.cases.begin(), options.cases.end(),
                     [&](const std::string& s) { return label.find(s) != std::string::npos; });
}

int run(const BenchOptions& options) {
  Result<std::unique_ptr<Delegate>> delegate = vulkan::make_vulkan_delegate({{"device", options.device},
                                                                             {"gpu_shared_context_token", "bench"},
                                                                             {"gpu_shared_context_mode", "disabled"},
                                                                             {"gpu_timestamps", "1"}});
  if (!delegate.is_ok()) {
    std::fprintf(stderr, "error: %s\n", delegate.status().message().c_str());
    return 1;
  }
  int failures = 0;
  std::string device;
  for (auto make :
       {wide_conv_case, narrow_conv_case, middle_conv_case, deep_conv_case, stem_conv_case, matmul_case, big_matmul_case,
        matmul_f16_case, big_matmul_f16_case,
        attention_case, linear_weights_case, linear_runtime_case, add_case, chain_case}) {
    Result<Case> c = make(options.small);
    if (!c.is_ok()) {
      std::fprintf(stderr, "error: %s\n", c.status().message().c_str());
      return 1;
    }
    if (!selected(options, c->label)) continue;
    const bool conv = c->graph.node(0).op == "Conv";
    bool products = conv;  // what `precision` changes
    for (NodeId i = 0; i < static_cast<NodeId>(c->graph.num_nodes()); ++i) products |= c->graph.node(i).op == "MatMul";
    // The CPU's answer, computed once per case: every variant gets the same inputs.
    std::optional<Result<Tensor>> want;
    for (const std::string& precision : products ? options.precisions : std::vector<std::string>{"fp32"})
    for (const std::string& tiling : conv ? options.conv_tilings : std::vector<std::string>{"auto"})
    for (const std::string& gemm_kernel : products && !conv && precision != "fp32" ? options.gemm_kernels
                                                                                   : std::vector<std::string>{"auto"}) {
      const std::string label = c->label + (conv && options.conv_tilings.size() > 1 ? " [" + tiling + "]" : "") +
                                (products && options.precisions.size() > 1 ? " " + precision : "") +
                                (products && !conv && options.gemm_kernels.size() > 1 && precision != "fp32"
                                     ? " [" + gemm_kernel + "]"
                                     : "");
      // fp16 rounds the operands to f16 (2^-11 relative each): sums of
      // thousands of such products stay within a few 1e-3 of the range.
      // f16 operand storage (the case's options) rounds them likewise.
      const double tolerance = precision == "fp32" && c->options.empty() ? kCheckTolerance : 5e-3;
      Result<Timing> timing =
          time_case(**delegate, *c, options.replays,
                    {{"conv_tiling", tiling}, {"precision", precision}, {"gemm_kernel", gemm_kernel}});
      if (!timing.is_ok()) {
        std::printf("%s: failed: %s\n", label.c_str(), timing.status().message().c_str());
        ++failures;
        continue;
      }
      if (device.empty()) {
        device = timing->device;
        std::printf("device: %s\n", device.c_str());
      }
      std::string verdict;
      if (options.check) {
        if (!want) want = run_on_cpu(*c, *timing);
        if (!want->is_ok()) {
          verdict = ", check failed: " + want->status().message();
          ++failures;
        } else {
          const double worst = max_error(timing->output, **want);
          char text[64];
          std::snprintf(text, sizeof(text), ", check %s: max error %.1e of max |value|",
                        worst <= tolerance ? "ok" : "FAILED", worst);
          verdict = text;
          if (worst > tolerance) ++failures;
        }
      }
      std::printf("%s: %.1f %s (median %.3f ms over %d replays%s)\n", label.c_str(), c->work / timing->seconds * 1e-9,
                  c->unit, timing->seconds * 1e3, options.replays, verdict.c_str());
      std::fflush(stdout);
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hetsched

int main(int argc, char** argv) {
  hetsched::BenchOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--small") {
      options.small = true;
    } else if (arg == "--check") {
      options.check = true;
    } else if (arg == "--device" && i + 1 < argc) {
      options.device = argv[++i];
    } else if (arg == "--replays" && i + 1 < argc) {
      options.replays = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--cases" && i + 1 < argc) {
      options.cases = hetsched::split_list(argv[++i]);
    } else if (arg == "--conv-tilings" && i + 1 < argc) {
      options.conv_tilings = hetsched::split_list(argv[++i]);
    } else if (arg == "--precisions" && i + 1 < argc) {
      options.precisions = hetsched::split_list(argv[++i]);
    } else if (arg == "--gemm-kernels" && i + 1 < argc) {
      options.gemm_kernels = hetsched::split_list(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--device SELECTOR] [--small] [--replays N] [--check] [--cases SUBSTR,...]"
                   " [--conv-tilings TILING,...] [--precisions fp32,fp16,auto]\n"
                   "       [--gemm-kernels KERNEL,...]\n",
                   argv[0]);
      return arg == "--help" ? 0 : 2;
    }
  }
  return hetsched::run(options);
}
