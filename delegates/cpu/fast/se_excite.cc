#include "delegates/cpu/fast/se_excite.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "delegates/cpu/fast/activation_pass.h"
#include "delegates/cpu/fast/conv_group.h"
#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/fast/silu.h"
#include "delegates/cpu/fast/vector_math.h"

namespace hetsched::cpu::fast {

namespace {

// The scaling pass is memory-bound: a float read, multiplied and written
// costs the time of several flops (parallel_tasks' unit). 8 puts maps of
// 125K floats and more (14x14 of 640 channels) over two threads and keeps
// MobileNetV3-Small's 7x7 ones of 96 channels on the calling thread.
constexpr double kWorkPerElement = 8;
// And a weight of the gate's convs, read from memory (a 1536 x 64 fc1: 393
// KB, 0.03-0.04 ms on one thread of the 2-core Xeon).
constexpr double kWorkPerWeight = 32;
// Pixels per task: about 16K floats each.
constexpr int64_t kTaskElements = 16 << 10;

bool static_f32(const Value& v, size_t rank) {
  return v.type_known && v.type.is_static() && v.type.dtype == DType::kFloat32 && v.type.rank() == rank;
}

// Whether `n` is a 1x1 conv on one pixel of a run-time input the op can
// run: [N, C, 1, 1] -> [N, S, 1, 1], constant weights and bias.
bool one_pixel_conv(const Graph& graph, NodeId n) {
  if (n == kNoNode) return false;
  const Node& node = graph.node(n);
  const Result<xnnpack::ConvParams> p = read_fast_conv(graph, node);
  if (!p.is_ok() || p->groups != 1) return false;
  const Shape& x = graph.value(node.inputs[0]).type.shape;
  const Shape& y = graph.value(node.outputs[0]).type.shape;
  const Shape& w = graph.value(node.inputs[1]).type.shape;
  return x.size() == 4 && x[2] == 1 && x[3] == 1 && y.size() == 4 && y[0] == x[0] && y[2] == 1 && y[3] == 1 &&
         w == Shape{y[1], x[1], 1, 1} && p->window.pad_top == 0 && p->window.pad_left == 0 &&
         p->window.pad_bottom == 0 && p->window.pad_right == 0;
}

std::optional<SeGroup> match(const Graph& graph, NodeId n) {
  const Node& mul = graph.node(n);
  if (mul.op != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1) return std::nullopt;
  const Value& out = graph.value(mul.outputs[0]);
  if (!static_f32(out, 4)) return std::nullopt;
  const Shape& shape = out.type.shape;
  for (int side = 0; side < 2; ++side) {
    const ValueId map = mul.inputs[side], gate = mul.inputs[1 - side];
    if (map == kNoValue || gate == kNoValue || map == gate) continue;
    const Value& m = graph.value(map);
    if (m.is_constant() || !static_f32(m, 4) || m.type.shape != shape) continue;
    SeGroup g;
    g.fc2 = graph.value(gate).producer;
    if (!one_pixel_conv(graph, g.fc2) || sole_reader(graph, gate) != n) continue;
    if (graph.value(gate).type.shape != Shape{shape[0], shape[1], 1, 1}) continue;
    // fc2 alone reads fc1's output, or its SiLU.
    const ValueId hidden = graph.node(g.fc2).inputs[0];
    if (sole_reader(graph, hidden) != g.fc2) continue;
    NodeId fc1 = graph.value(hidden).producer;
    if (fc1 != kNoNode && graph.node(fc1).op == "Mul") {
      // A SiLU's Mul: fc1 is the conv before its Sigmoid.
      const Node& silu_mul = graph.node(fc1);
      fc1 = kNoNode;
      for (ValueId in : silu_mul.inputs) {
        const NodeId p = in == kNoValue ? kNoNode : graph.value(in).producer;
        if (p == kNoNode || graph.node(p).op != "Conv") continue;
        const std::optional<SiluGroup> silu = silu_reading(graph, in);
        const Result<FusedActivation> own = read_fused_activation(graph.node(p).attrs);
        if (silu && silu->output == hidden && own.is_ok() && own->kind == FusedActivation::Kind::kNone) {
          fc1 = p;
          g.silu_sigmoid = silu->sigmoid;
          g.silu_mul = silu->mul;
        }
      }
    }
    if (!one_pixel_conv(graph, fc1)) continue;
    g.fc1 = fc1;
    g.mean = graph.node(fc1).inputs[0];
    if (graph.value(g.mean).type.shape != Shape{shape[0], shape[1], 1, 1}) continue;
    g.mul = n;
    g.map = map;
    g.output = mul.outputs[0];
    return g;
  }
  return std::nullopt;
}

// y = x * gate per channel over `pixels` NHWC pixels of c channels.
HETSCHED_FAST_INLINE void scale_pixels(const float* x, float* y, int64_t pixels, int64_t c, const float* gate) {
  for (int64_t p = 0; p < pixels; ++p, x += c, y += c)
    for (int64_t j = 0; j < c; ++j) y[j] = x[j] * gate[j];
}

// y = x * s over one channel's plane of `size` floats (the graph's order).
HETSCHED_FAST_INLINE void scale_plane(const float* x, float* y, int64_t size, float s) {
  for (int64_t i = 0; i < size; ++i) y[i] = x[i] * s;
}

// One 1x1 conv on a pixel per image: C = A . W^T + bias, then `act`, on
// the fast GEMM (m = images), its weights packed once.
class OnePixelConv {
 public:
  OnePixelConv(const Graph& graph, const Node& node, ActivationPass act, TaskPool* pool) : act_(act), pool_(pool) {
    const Shape& w = graph.value(node.inputs[1]).type.shape;
    out_ = w[0];
    in_ = w[1];
    // Tasks of a panel of outputs where the pool splits them: the weights
    // come from memory on every run (a network's are MBs), and two cores
    // stream them faster. On one thread, whole blocks: a block's four
    // panels are four chains of FMAs at once, where one panel's wait on
    // each other (m is 1).
    work_ = kWorkPerWeight * static_cast<double>(in_ * out_);
    width_ = worth_splitting(pool_, static_cast<size_t>(out_ / kPanel), work_) ? kPanel : kBlockColumns;
    const int64_t padded = (out_ + kBlockColumns - 1) / kBlockColumns * kBlockColumns;
    panels_ = AlignedBuffer(static_cast<size_t>(padded * in_) * sizeof(float));
    float* panels = reinterpret_cast<float*>(panels_.data());
    const float* weights = graph.value(node.inputs[1]).constant->data<float>();
    for (int64_t j = 0; j < out_; j += kPanel) pack_panel(in_, out_, weights, in_, true, j, panels + j * in_);
    bias_.assign(static_cast<size_t>(padded), 0.f);
    if (node.inputs.size() > 2 && node.inputs[2] != kNoValue) {
      const float* b = graph.value(node.inputs[2]).constant->data<float>();
      std::copy(b, b + out_, bias_.begin());
    }
  }

  int64_t outputs() const { return out_; }

  // y[images x outputs] from x[images x inputs], in tasks of width_
  // outputs.
  void run(const float* x, float* y, int64_t images) const {
    const float* panels = reinterpret_cast<const float*>(panels_.data());
    const int64_t tasks = (out_ + width_ - 1) / width_;
    parallel_tasks(pool_, static_cast<size_t>(tasks), work_, [&](size_t t) {
      const int64_t j = static_cast<int64_t>(t) * width_, columns = std::min(width_, out_ - j);
      Epilogue e;
      e.bias = bias_.data() + j;
      gemm_block(images, in_, columns, x, in_, panels + j * in_, e, y + j, out_);
      for (int64_t n = 0; n < images; ++n) act_.run(y + n * out_ + j, columns);
    });
  }

 private:
  ActivationPass act_;
  TaskPool* pool_;
  int64_t in_ = 0, out_ = 0;
  double work_ = 0;     // parallel_tasks' units, all of the weights
  int64_t width_ = 0;   // outputs a task: kPanel where the pool splits, else kBlockColumns
  AlignedBuffer panels_;
  std::vector<float> bias_;
};

class SeExcite final : public FastOp {
 public:
  SeExcite(const Tensor& mean, const Tensor& map, Tensor& y, OnePixelConv fc1, OnePixelConv fc2, bool nhwc,
           TaskPool* pool)
      : FastOp(y), mean_(mean), map_(map), fc1_(std::move(fc1)), fc2_(std::move(fc2)), nhwc_(nhwc), pool_(pool) {
    const Shape& s = map.shape();
    images_ = s[0];
    channels_ = s[1];
    pixels_ = s[2] * s[3];
    hidden_.assign(static_cast<size_t>(images_ * fc1_.outputs()), 0.f);
    gate_.assign(static_cast<size_t>(images_ * channels_), 0.f);
  }

  Status run() override {
    fc1_.run(mean_.data<float>(), hidden_.data(), images_);
    fc2_.run(hidden_.data(), gate_.data(), images_);
    const float* x = map_.data<float>();
    float* y = out();
    const double work = kWorkPerElement * static_cast<double>(images_ * channels_ * pixels_);
    if (nhwc_) {
      // Bands of pixels in order, so that each thread scales the rows its
      // own share of the depthwise conv before wrote (task_pool.h: a
      // thread takes a contiguous share of the tasks first).
      static const auto fn = Clones<scale_pixels>::best();
      const int64_t per_task = std::max<int64_t>(1, kTaskElements / channels_);
      const int64_t tasks_per_image = (pixels_ + per_task - 1) / per_task;
      parallel_tasks(pool_, static_cast<size_t>(images_ * tasks_per_image), work, [&](size_t t) {
        const int64_t n = static_cast<int64_t>(t) / tasks_per_image;
        const int64_t p0 = static_cast<int64_t>(t) % tasks_per_image * per_task;
        const int64_t at = (n * pixels_ + p0) * channels_;
        fn(x + at, y + at, std::min(per_task, pixels_ - p0), channels_, gate_.data() + n * channels_);
      });
      return Status::ok();
    }
    static const auto fn = Clones<scale_plane>::best();
    parallel_tasks(pool_, static_cast<size_t>(images_ * channels_), work, [&](size_t q) {
      const int64_t at = static_cast<int64_t>(q) * pixels_;
      fn(x + at, y + at, pixels_, gate_[q]);
    });
    return Status::ok();
  }

 private:
  const Tensor& mean_;
  const Tensor& map_;
  OnePixelConv fc1_, fc2_;
  bool nhwc_;
  TaskPool* pool_;
  int64_t images_ = 0, channels_ = 0, pixels_ = 0;
  std::vector<float> hidden_, gate_;  // fc1's and fc2's outputs, [images x S] and [images x C]
};

}  // namespace

std::vector<NodeId> SeGroup::nodes() const {
  std::vector<NodeId> n{fc1};
  if (silu_sigmoid != kNoNode) n.insert(n.end(), {silu_sigmoid, silu_mul});
  n.insert(n.end(), {fc2, mul});
  return n;
}

std::vector<SeGroup> find_se_groups(const Graph& graph) {
  std::vector<SeGroup> groups;
  const char* choice = std::getenv("HETSCHED_SE_EXCITE");
  if (choice && std::string(choice) == "off") return groups;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
    if (std::optional<SeGroup> g = match(graph, n)) groups.push_back(*g);
  return groups;
}

Result<std::unique_ptr<FastOp>> make_se_excite(const FastOpContext& ctx, const SeGroup& group) {
  const Graph& graph = ctx.graph;
  HS_ASSIGN_OR_RETURN(const FusedActivation act1, read_fused_activation(graph.node(group.fc1).attrs));
  HS_ASSIGN_OR_RETURN(const FusedActivation act2, read_fused_activation(graph.node(group.fc2).attrs));
  OnePixelConv fc1(graph, graph.node(group.fc1),
                   group.silu_mul != kNoNode ? ActivationPass::silu() : ActivationPass(act1), ctx.pool);
  OnePixelConv fc2(graph, graph.node(group.fc2), ActivationPass(act2), ctx.pool);
  return std::unique_ptr<FastOp>(new SeExcite(ctx.tensor_of(group.mean), ctx.tensor_of(group.map),
                                              ctx.tensor_of(group.output), std::move(fc1), std::move(fc2), ctx.nhwc,
                                              ctx.pool));
}

}  // namespace hetsched::cpu::fast
