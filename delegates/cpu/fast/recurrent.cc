// RNN, GRU and LSTM on the fast GEMM (gemm.h), for the xnnpack engine: the
// portable kernel (kernels/recurrent.cc) stays the oracle; it multiplied
// with plain loops, reread R for every batch entry and called libm's tanh
// and exp per element, and ran a 2-layer bidirectional LSTM 6-12x slower
// than ONNX Runtime.
//
// W and R are packed once, at init, into the GEMM's panels with the gates
// of each block of 16 hidden units side by side: panel (q, g) holds gate g
// of units [16q, 16q + 16). One gemm_block call then gives every gate of 16
// units for the whole batch, and the task that made them applies the gate
// equations to those units while they are in cache. A step is one task
// list over (direction, unit block), and R is read once per step whatever
// the batch. Both directions of a layer advance together, or one after the
// other where a thread's share of both R would not stay in its L2, or each
// on a thread of its own where a step is too small to split (the
// constructor says which); every other step walks the blocks backwards.
//
// The input's product X . W^T (+ both biases) is made ahead for a chunk of
// steps: each step's rows of X are gathered in step order first (the
// reverse direction and sequence_lens read a different time for each
// entry), so the product is one plain GEMM. GRU with linear_before_reset 0
// multiplies (r (.) H) by Rh: its steps take two task lists, z and r first.
//
// Supported: the default activations (LSTM and GRU sigmoid/tanh, RNN tanh
// or relu), clip, peepholes, input_forget, sequence_lens, initial states,
// both layouts. Other activations run on the portable kernel.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "delegates/cpu/fast/fast_op.h"
#include "delegates/cpu/fast/gemm.h"
#include "delegates/cpu/fast/rule_choice.h"
#include "delegates/cpu/fast/vector_math.h"
#include "graph/recurrent_spec.h"

namespace hetsched::cpu::fast {

namespace {

using Kind = RecurrentActivationKind;

// Floats of X . W^T made ahead per direction (4 MiB): a long sequence is
// projected a chunk of steps at a time.
constexpr int64_t kChunkFloats = int64_t{1} << 20;

// The bytes of packed R a thread may read per step and still find in its
// L2 at the next (half of a 2 MiB L2: the state, gates and the input's
// product pass through it too).
constexpr int64_t kL2Share = int64_t{1} << 20;

HETSCHED_FAST_INLINE float sigmoid_approx(float x) {
  const float s = 1.f / (1.f + exp_approx(-x));
  return x < -87.f ? 0.f : s;  // exp_approx saturates there
}

// tanh(x): an odd Taylor polynomial below |x| = 0.3 (the next term is under
// 1e-8 relative there), (1 - e) / (1 + e) with e = e^(-2|x|) above it, which
// cancels at most one bit at 0.3; both are computed and one picked, so the
// loop stays vectorised.
HETSCHED_FAST_INLINE float tanh_approx(float v) {
  const float a = v < 0.f ? -v : v;
  const float e = exp_approx(-2.f * a);
  float t = (1.f - e) / (1.f + e);
  t = v < 0.f ? -t : t;
  const float x2 = v * v;
  float p = 62.f / 2835.f;
  p = p * x2 - 17.f / 315.f;
  p = p * x2 + 2.f / 15.f;
  p = p * x2 - 1.f / 3.f;
  const float small = v + v * x2 * p;
  return a < 0.3f ? small : t;
}

// clip is +inf when the node has none: the clamp then keeps every value
// (NaN too), and the loops below stay free of branches.
HETSCHED_FAST_INLINE float clip_to(float x, float clip) {
  x = x > clip ? clip : x;
  return x < -clip ? -clip : x;
}

// The gate equations on one batch entry's 16 units of a block, compiled for
// AVX-512, AVX2 and baseline (vector_math.h's Clones). `g` holds the
// block's products with the state, gate by gate (16 floats each), `x` the
// input's (biases added), both in the gates' ONNX order. Flags are template
// arguments: GCC 12 leaves a loop with a bool operand scalar ("no
// vectype"). The pointers are restrict: otherwise the loops run the scalar
// copy GCC versions them with (its overlap test fails on P's rows `units`
// apart).

// LSTM (i, o, f, c): `p` the peepholes of i, then o and f `units` floats
// apart (zeros without P); `c` updated in place; kCouple input_forget.
template <bool kCouple>
HETSCHED_FAST_INLINE void lstm_lanes(const float* __restrict g, const float* __restrict x, const float* __restrict p,
                                     int64_t units, float* __restrict c, float* __restrict h, float clip) {
  for (int64_t j = 0; j < kPanel; ++j) {
    const float c_prev = c[j];
    const float i = sigmoid_approx(clip_to(g[j] + x[j] + p[j] * c_prev, clip));
    const float fs = sigmoid_approx(clip_to(g[2 * kPanel + j] + x[2 * kPanel + j] + p[2 * units + j] * c_prev, clip));
    const float f = kCouple ? 1.f - i : fs;
    const float cell = f * c_prev + i * tanh_approx(clip_to(g[3 * kPanel + j] + x[3 * kPanel + j], clip));
    c[j] = cell;
    // The output gate's peephole reads the new cell state.
    const float o = sigmoid_approx(clip_to(g[kPanel + j] + x[kPanel + j] + p[units + j] * cell, clip));
    h[j] = o * tanh_approx(cell);
  }
}

// GRU with linear_before_reset (z, r, h; `g`'s h part is H . Rh^T, to which
// Rbh is added before r multiplies it); `hp` the state before the step.
HETSCHED_FAST_INLINE void gru_lanes(const float* __restrict g, const float* __restrict x, const float* __restrict rbh,
                                    const float* __restrict hp, float* __restrict h, float clip) {
  for (int64_t j = 0; j < kPanel; ++j) {
    const float z = sigmoid_approx(clip_to(g[j] + x[j], clip));
    const float r = sigmoid_approx(clip_to(g[kPanel + j] + x[kPanel + j], clip));
    const float n = tanh_approx(clip_to(x[2 * kPanel + j] + r * (g[2 * kPanel + j] + rbh[j]), clip));
    h[j] = (1.f - z) * n + z * hp[j];
  }
}

// GRU, linear_before_reset 0, first half: z, and r (.) H for the h gate's product.
HETSCHED_FAST_INLINE void gru_zr_lanes(const float* __restrict g, const float* __restrict x, const float* __restrict hp,
                                       float* __restrict z, float* __restrict rh, float clip) {
  for (int64_t j = 0; j < kPanel; ++j) {
    z[j] = sigmoid_approx(clip_to(g[j] + x[j], clip));
    rh[j] = sigmoid_approx(clip_to(g[kPanel + j] + x[kPanel + j], clip)) * hp[j];
  }
}

// Its second half: `g` is (r (.) H) . Rh^T (Rbh is in `x`'s h part).
HETSCHED_FAST_INLINE void gru_n_lanes(const float* __restrict g, const float* __restrict x, const float* __restrict z,
                                      const float* __restrict hp, float* __restrict h, float clip) {
  for (int64_t j = 0; j < kPanel; ++j) {
    const float n = tanh_approx(clip_to(g[j] + x[2 * kPanel + j], clip));
    h[j] = (1.f - z[j]) * n + z[j] * hp[j];
  }
}

template <bool kRelu>
HETSCHED_FAST_INLINE void rnn_lanes(const float* __restrict g, const float* __restrict x, float* __restrict h,
                                    float clip) {
  for (int64_t j = 0; j < kPanel; ++j) {
    const float v = clip_to(g[j] + x[j], clip);
    h[j] = kRelu ? (v > 0.f ? v : 0.f) : tanh_approx(v);
  }
}

// Whether the node's activations are the defaults this kernel computes:
// LSTM sigmoid, tanh, tanh; GRU sigmoid, tanh; RNN tanh or relu.
bool default_activations(const RecurrentSpec& s) {
  for (int64_t d = 0; d < s.directions; ++d) {
    const Kind f = s.activation(d, 0).kind;
    if (s.op == RecurrentOp::kRnn) {
      if (f != Kind::kTanh && f != Kind::kRelu) return false;
      continue;
    }
    if (f != Kind::kSigmoid || s.activation(d, 1).kind != Kind::kTanh) return false;
    if (s.op == RecurrentOp::kLstm && s.activation(d, 2).kind != Kind::kTanh) return false;
  }
  return true;
}

Result<RecurrentSpec> read_spec(const Graph& graph, const Node& node) {
  std::vector<TensorType> types(node.inputs.size());
  std::vector<const TensorType*> inputs(node.inputs.size(), nullptr);
  for (size_t i = 0; i < node.inputs.size(); ++i)
    if (node.inputs[i] != kNoValue) {
      const Value& v = graph.value(node.inputs[i]);
      if (!v.type_known) return unsupported("an input has no known type");
      types[i] = v.type;
      inputs[i] = &types[i];
    }
  return read_recurrent_spec(node.op, node.attrs, inputs);
}

Status supports(const Graph& graph, const Node& node, int /*threads*/) {
  HS_ASSIGN_OR_RETURN(const RecurrentSpec s, read_spec(graph, node));
  if (node.outputs.empty() || node.outputs[0] == kNoValue)
    return unsupported("the fast recurrent kernel writes Y, which this node omits");
  const Value& x = graph.value(node.inputs[kRecurrentX]);
  if (!x.type.is_static() || x.type.dtype != DType::kFloat32)
    return unsupported("the fast recurrent kernel takes a static f32 X");
  for (size_t i : {kRecurrentW, kRecurrentR, kRecurrentB})
    if (i < node.inputs.size() && node.inputs[i] != kNoValue && !graph.value(node.inputs[i]).is_constant())
      return unsupported("the fast recurrent kernel packs W, R and B at init: they must be constants");
  for (size_t i = kRecurrentInitialH; i < node.inputs.size(); ++i)
    if (node.inputs[i] != kNoValue && graph.value(node.inputs[i]).type.dtype != DType::kFloat32)
      return unsupported("the fast recurrent kernel takes f32 states and peepholes");
  if (!default_activations(s))
    return unsupported("the fast recurrent kernel has the default activations only (LSTM sigmoid, tanh, tanh; GRU "
                       "sigmoid, tanh; RNN tanh or relu)");
  if (s.seq == 0 || s.batch == 0 || s.input == 0)
    return unsupported("an empty sequence, batch or input runs on the portable kernel");
  return Status::ok();
}

// One direction's packed weights and state.
struct Direction {
  AlignedBuffer w;       // X . W^T panels: (q, g) for every gate
  AlignedBuffer r1, r2;  // H . R^T panels: product 1's gates; GRU (linear_before_reset 0): h's
  std::vector<float> bias;  // per column of the X product, in panel order
  std::vector<float> rbh;   // GRU linear_before_reset: Rbh, per unit (padded)
  AlignedBuffer gathered;   // [chunk steps * batch, input]: X's rows in step order
  AlignedBuffer xw;         // [chunk steps * batch, units * gates]
  AlignedBuffer h[2];       // [batch, units]: the state before and after a step
  AlignedBuffer c;          // LSTM cell state [batch, units]
  AlignedBuffer z, rh;      // GRU (linear_before_reset 0): z, and r (.) H, [batch, units]
  std::vector<float> peep;  // LSTM P: i, o, f, each over `units` floats (padded)
};

float* floats(AlignedBuffer& b) { return reinterpret_cast<float*>(b.data()); }
const float* floats(const AlignedBuffer& b) { return reinterpret_cast<const float*>(b.data()); }
AlignedBuffer zeros(int64_t n) { return AlignedBuffer(static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float)); }

class Recurrent final : public FastOp {
 public:
  Recurrent(const FastOpContext& ctx, RecurrentSpec spec)
      : FastOp(ctx.output(0)),
        s_(std::move(spec)),
        clip_(s_.clip > 0.f ? s_.clip : std::numeric_limits<float>::infinity()),
        x_(ctx.input(kRecurrentX)),
        pool_(ctx.pool) {
    const Node& node = ctx.node;
    const auto present = [&](size_t i) { return i < node.inputs.size() && node.inputs[i] != kNoValue; };
    if (present(kRecurrentSeqLens)) lens_in_ = &ctx.input(kRecurrentSeqLens);
    if (present(kRecurrentInitialH)) initial_h_ = &ctx.input(kRecurrentInitialH);
    const bool lstm = s_.op == RecurrentOp::kLstm, gru = s_.op == RecurrentOp::kGru;
    if (lstm && present(kRecurrentInitialC)) initial_c_ = &ctx.input(kRecurrentInitialC);
    for (size_t i = 1; i < node.outputs.size() && i < 3; ++i)
      if (node.outputs[i] != kNoValue) (i == 1 ? y_h_ : y_c_) = ctx.output(i).data<float>();

    const int64_t H = s_.hidden, G = s_.gates;
    blocks_ = (H + kPanel - 1) / kPanel;
    units_ = blocks_ * kPanel;
    two_phase_ = gru && !s_.linear_before_reset;
    // Both directions in one task list halve the lists a step takes, but
    // also double the R each thread reads per step; where a thread's share
    // of both would not stay in its L2, the directions run one after the
    // other (2-layer bidirectional 512-unit LSTM on the 2-core Xeon: 49.8
    // -> 44.5 ms at 1 thread, 21.8 -> 18.9 at 2).
    const int64_t threads = pool_ ? static_cast<int64_t>(pool_->threads()) : 1;
    const int64_t r_bytes = s_.directions * blocks_ * G * H * kPanel * static_cast<int64_t>(sizeof(float));
    // A step too small to split over the pool (a batch-1 speech GRU of 256
    // units: 0.8 MFLOP a step for both directions) leaves each direction
    // to a thread of its own for the whole sequence, with no meeting per step.
    const double step_work = 2.0 * static_cast<double>(s_.batch * G * H * H);
    independent_ = s_.directions == 2 && threads >= 2 && 2 * step_work < parallel_work_threshold();
    // HETSCHED_RNN_APART=on|off overrides the rule (tests, benchmarks).
    const RuleChoice choice = rule_choice("HETSCHED_RNN_APART");
    apart_ = s_.directions == 2 &&
             (choice == RuleChoice::kRule ? r_bytes / threads > kL2Share : choice == RuleChoice::kOn);
    // The gates H . R^T gives in the step's first task list (GRU with
    // linear_before_reset 0: z and r; h comes from (r (.) H) . Rh^T).
    const int64_t gates1 = two_phase_ ? 2 : G;
    chunk_ = std::clamp<int64_t>(kChunkFloats / (s_.batch * units_ * G), 1, s_.seq);

    const float* w = ctx.input(kRecurrentW).data<float>();
    const float* r = ctx.input(kRecurrentR).data<float>();
    const float* b = present(kRecurrentB) ? ctx.input(kRecurrentB).data<float>() : nullptr;
    const float* p = lstm && present(kRecurrentP) ? ctx.input(kRecurrentP).data<float>() : nullptr;
    dirs_.resize(static_cast<size_t>(s_.directions));
    for (int64_t d = 0; d < s_.directions; ++d) {
      Direction& dir = dirs_[static_cast<size_t>(d)];
      const float* wd = w + d * G * H * s_.input;
      const float* rd = r + d * G * H * H;
      // Gate g's rows of W (of R) are B^T for that gate's H columns.
      dir.w = zeros(blocks_ * G * s_.input * kPanel);
      for (int64_t q = 0; q < blocks_; ++q)
        for (int64_t g = 0; g < G; ++g)
          pack_panel(s_.input, H, wd + g * H * s_.input, s_.input, true, q * kPanel,
                     floats(dir.w) + (q * G + g) * s_.input * kPanel);
      dir.r1 = zeros(blocks_ * gates1 * H * kPanel);
      for (int64_t q = 0; q < blocks_; ++q)
        for (int64_t g = 0; g < gates1; ++g)
          pack_panel(H, H, rd + g * H * H, H, true, q * kPanel, floats(dir.r1) + (q * gates1 + g) * H * kPanel);
      if (two_phase_) {
        dir.r2 = zeros(blocks_ * H * kPanel);
        for (int64_t q = 0; q < blocks_; ++q)
          pack_panel(H, H, rd + 2 * H * H, H, true, q * kPanel, floats(dir.r2) + q * H * kPanel);
      }
      // Wb + Rb, except GRU's Rbh with linear_before_reset, which r multiplies.
      dir.bias.assign(static_cast<size_t>(units_ * G), 0.f);
      dir.rbh.assign(static_cast<size_t>(units_), 0.f);
      if (b) {
        const float* wb = b + d * 2 * G * H;
        const float* rb = wb + G * H;
        for (int64_t g = 0; g < G; ++g)
          for (int64_t u = 0; u < H; ++u) {
            const bool apart = gru && s_.linear_before_reset && g == 2;
            dir.bias[static_cast<size_t>(((u / kPanel) * G + g) * kPanel + u % kPanel)] =
                wb[g * H + u] + (apart ? 0.f : rb[g * H + u]);
            if (apart) dir.rbh[static_cast<size_t>(u)] = rb[g * H + u];
          }
      }
      dir.gathered = zeros(chunk_ * s_.batch * s_.input);
      dir.xw = zeros(chunk_ * s_.batch * units_ * G);
      for (AlignedBuffer& h : dir.h) h = zeros(s_.batch * units_);
      if (lstm) dir.c = zeros(s_.batch * units_);
      if (two_phase_) {
        dir.z = zeros(s_.batch * units_);
        dir.rh = zeros(s_.batch * units_);
      }
      dir.peep.assign(static_cast<size_t>(3 * units_), 0.f);  // zeros without P
      if (p) {
        for (int64_t k = 0; k < 3; ++k)
          std::copy_n(p + (d * 3 + k) * H, H, dir.peep.begin() + k * units_);
      }
    }
  }

  Status run() override {
    HS_RETURN_IF_ERROR(read_sequence_lens(s_, lens_in_, lens_));
    const int64_t H = s_.hidden, batch = s_.batch;
    const bool short_entry = std::any_of(lens_.begin(), lens_.end(), [&](int64_t l) { return l < s_.seq; });
    // Y past an entry's length is zero.
    if (short_entry) std::fill_n(out(), shape_elements(s_.y_shape()), 0.f);
    for (int64_t d = 0; d < s_.directions; ++d) {
      Direction& dir = dirs_[static_cast<size_t>(d)];
      std::fill_n(floats(dir.h[0]), batch * units_, 0.f);
      if (s_.op == RecurrentOp::kLstm) std::fill_n(floats(dir.c), batch * units_, 0.f);
      for (int64_t b = 0; b < batch; ++b) {
        if (initial_h_) std::copy_n(initial_h_->data<float>() + state_at(d, b), H, floats(dir.h[0]) + b * units_);
        if (initial_c_) std::copy_n(initial_c_->data<float>() + state_at(d, b), H, floats(dir.c) + b * units_);
      }
    }
    longest_ = *std::max_element(lens_.begin(), lens_.end());
    if (independent_) {
      // Each direction's whole sequence on a thread of its own; their task
      // lists then run on that thread alone (thread_pool.h: one job at a time).
      const double work = 2.0 * static_cast<double>(s_.directions * longest_ * batch * s_.gates * H * (H + s_.input));
      parallel_tasks(pool_, 2, work, [&](size_t d) { sweep(static_cast<int64_t>(d), 1); });
    } else {
      const int64_t together = apart_ ? 1 : s_.directions;
      for (int64_t first = 0; first < s_.directions; first += together) sweep(first, together);
    }
    for (int64_t d = 0; d < s_.directions; ++d) {
      const Direction& dir = dirs_[static_cast<size_t>(d)];
      const float* h = floats(dir.h[longest_ % 2]);
      for (int64_t b = 0; b < batch; ++b) {
        if (y_h_) std::copy_n(h + b * units_, H, y_h_ + state_at(d, b));
        if (y_c_) std::copy_n(floats(dir.c) + b * units_, H, y_c_ + state_at(d, b));
      }
    }
    return Status::ok();
  }

 private:
  // The time entry b reads at `step` in direction d, or -1 past its length.
  int64_t time_of(int64_t d, int64_t step, int64_t b) const {
    const int64_t len = lens_[static_cast<size_t>(b)];
    if (step >= len) return -1;
    return s_.reverse || d == 1 ? len - 1 - step : step;
  }
  int64_t x_row(int64_t t, int64_t b) const { return s_.layout == 0 ? t * s_.batch + b : b * s_.seq + t; }
  int64_t state_at(int64_t d, int64_t b) const {
    return (s_.layout == 0 ? d * s_.batch + b : b * s_.directions + d) * s_.hidden;
  }
  int64_t y_at(int64_t d, int64_t t, int64_t b) const {
    return (s_.layout == 0 ? (t * s_.directions + d) * s_.batch + b : (b * s_.seq + t) * s_.directions + d) *
           s_.hidden;
  }

  // Every step of directions [first, first + count), a chunk at a time.
  void sweep(int64_t first, int64_t count) {
    for (int64_t s0 = 0; s0 < longest_; s0 += chunk_) {
      const int64_t steps = std::min(chunk_, longest_ - s0);
      project(s0, steps, first, count);
      for (int64_t step = s0; step < s0 + steps; ++step) advance(step, s0, first, count);
    }
  }

  // xw rows (step - s0) * batch + b = X's row for (time_of(step), b) . W^T +
  // bias, for steps [s0, s0 + steps) of directions [first, first + count).
  void project(int64_t s0, int64_t steps, int64_t first, int64_t count) {
    const int64_t batch = s_.batch, in = s_.input, G = s_.gates, cols = units_ * G;
    const int64_t rows = steps * batch;
    const int64_t col_blocks = (cols + kBlockColumns - 1) / kBlockColumns;
    const int64_t threads = pool_ ? static_cast<int64_t>(pool_->threads()) : 1;
    // Row bands of at least two row tiles, enough for four tasks a thread.
    const int64_t want = 4 * threads, base = col_blocks;
    const int64_t bands = std::clamp<int64_t>((want + base - 1) / base, 1, std::max<int64_t>(1, rows / 12));
    const int64_t band_rows = (rows + bands - 1) / bands;
    const double work = 2.0 * static_cast<double>(rows * in * cols);
    for (int64_t d = first; d < first + count; ++d) {
      Direction& dir = dirs_[static_cast<size_t>(d)];
      float* a = floats(dir.gathered);
      for (int64_t i = 0; i < steps; ++i)
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t t = time_of(d, s0 + i, b);
          float* row = a + (i * batch + b) * in;
          if (t < 0)
            std::fill_n(row, in, 0.f);
          else
            std::memcpy(row, x_.data<float>() + x_row(t, b) * in, static_cast<size_t>(in) * sizeof(float));
        }
      parallel_tasks(pool_, static_cast<size_t>(col_blocks * bands), work,
                     [&](size_t task) {
                       const int64_t cb = static_cast<int64_t>(task) % col_blocks;
                       const int64_t band = static_cast<int64_t>(task) / col_blocks;
                       const int64_t r0 = band * band_rows, r1 = std::min(rows, r0 + band_rows);
                       if (r0 >= r1) return;
                       const int64_t j0 = cb * kBlockColumns, width = std::min(kBlockColumns, cols - j0);
                       Epilogue e;
                       e.bias = dir.bias.data() + j0;
                       gemm_block(r1 - r0, in, width, a + r0 * in, in, floats(dir.w) + j0 * in, e,
                                  floats(dir.xw) + r0 * cols + j0, cols);
                     });
    }
  }

  // One step of directions [first, first + count): one task list (two for
  // GRU with linear_before_reset 0) over (direction, unit block).
  void advance(int64_t step, int64_t s0, int64_t first, int64_t count) {
    const int64_t tasks = count * blocks_;
    const double work = 2.0 * static_cast<double>(count * s_.batch * s_.gates * s_.hidden * s_.hidden);
    // Every other step walks each thread's share of the blocks backwards:
    // R rarely fits a core's L2 (a 512-unit LSTM's is 4 MiB a direction),
    // and a sweep that starts where the last one ended finds its first
    // blocks still there, where the same order each step would find none.
    // The shares are the pool's (thread_pool.h: thread i first takes items
    // [i n / T, (i + 1) n / T)), so each thread walks the blocks it had.
    const int64_t threads = worth_splitting(pool_, static_cast<size_t>(tasks), work) ? pool_->threads() : 1;
    const bool backwards = step % 2 == 1;
    const auto order = [&](size_t i) -> size_t {
      if (!backwards) return i;
      const int64_t n = tasks, t = static_cast<int64_t>(i);
      if (threads > n) return i;  // one task a thread
      int64_t share = t * threads / n;  // the share holding t, or the one before it
      while ((share + 1) * n / threads <= t) ++share;
      const int64_t begin = share * n / threads, end = (share + 1) * n / threads;
      return static_cast<size_t>(begin + end - 1 - t);
    };
    const auto block = [&](size_t i, auto&& fn) {
      const int64_t t = static_cast<int64_t>(order(i));
      fn(first + t / blocks_, t % blocks_);
    };
    if (two_phase_) {
      parallel_tasks(pool_, static_cast<size_t>(tasks), work * 2 / 3, [&](size_t i) {
        block(i, [&](int64_t d, int64_t q) { gru_zr(step, s0, d, q); });
      });
      parallel_tasks(pool_, static_cast<size_t>(tasks), work / 3, [&](size_t i) {
        block(i, [&](int64_t d, int64_t q) { gru_block(step, s0, d, q); });
      });
      return;
    }
    parallel_tasks(pool_, static_cast<size_t>(tasks), work, [&](size_t i) {
      block(i, [&](int64_t d, int64_t q) {
        if (s_.op == RecurrentOp::kLstm)
          lstm_block(step, s0, d, q);
        else if (s_.op == RecurrentOp::kGru)
          gru_block(step, s0, d, q);
        else
          rnn_block(step, s0, d, q);
      });
    });
  }

  // The products of block q's `gates` panels of `panels` with A's rows
  // ([batch, units]) into a thread's scratch [batch, gates * 16].
  float* product(const float* a, const AlignedBuffer& panels, int64_t gates, int64_t q) const {
    thread_local AlignedBuffer scratch;
    const size_t bytes = static_cast<size_t>(s_.batch * gates * kPanel) * sizeof(float);
    if (scratch.size() < bytes) scratch = AlignedBuffer::uninitialized(bytes);
    float* c = floats(scratch);
    gemm_block(s_.batch, s_.hidden, gates * kPanel, a, units_, floats(panels) + q * gates * s_.hidden * kPanel,
               Epilogue{}, c, gates * kPanel);
    return c;
  }

  // Where entry b's row of the input product is, or nullptr past its length;
  // the unit block's gate g starts at row + g * 16.
  const float* x_gates(const Direction& dir, int64_t step, int64_t s0, int64_t b, int64_t q) const {
    return floats(dir.xw) + ((step - s0) * s_.batch + b) * units_ * s_.gates + q * s_.gates * kPanel;
  }

  // After a step: entry b's new state for the block's units (valid ones),
  // written to Y at time t.
  void emit(int64_t d, int64_t t, int64_t b, int64_t q, const float* h) {
    const int64_t u0 = q * kPanel, n = std::min(kPanel, s_.hidden - u0);
    std::copy_n(h, n, out() + y_at(d, t, b) + u0);
  }

  // For each batch entry at `step`, block q of direction d: past the
  // entry's length its state carries over; otherwise fn(b, at, x, h) writes
  // the new state of the block's units to h (at: the entry's offset in the
  // state buffers, x: its input product's gates), which then goes to Y.
  template <typename Fn>
  void each_entry(int64_t step, int64_t s0, int64_t d, int64_t q, const Fn& fn) {
    Direction& dir = dirs_[static_cast<size_t>(d)];
    const float* h_in = floats(dir.h[step % 2]);
    float* h_out = floats(dir.h[(step + 1) % 2]);
    for (int64_t b = 0; b < s_.batch; ++b) {
      const int64_t t = time_of(d, step, b), at = b * units_ + q * kPanel;
      float* h = h_out + at;
      if (t < 0) {
        std::copy_n(h_in + at, kPanel, h);
        continue;
      }
      fn(b, at, x_gates(dir, step, s0, b, q), h);
      emit(d, t, b, q, h);
    }
  }

  void lstm_block(int64_t step, int64_t s0, int64_t d, int64_t q) {
    Direction& dir = dirs_[static_cast<size_t>(d)];
    const float* g = product(floats(dir.h[step % 2]), dir.r1, 4, q);
    static const auto coupled = Clones<lstm_lanes<true>>::best();
    static const auto apart = Clones<lstm_lanes<false>>::best();
    const auto lanes = s_.input_forget ? coupled : apart;
    const float* p = dir.peep.data() + q * kPanel;
    float* c = floats(dir.c);
    each_entry(step, s0, d, q, [&](int64_t b, int64_t at, const float* x, float* h) {
      lanes(g + b * 4 * kPanel, x, p, units_, c + at, h, clip_);
    });
  }

  // GRU: the new state, from H . R^T of all three gates (linear_before_reset)
  // or, with linear_before_reset 0, from (r (.) H) . Rh^T after gru_zr().
  void gru_block(int64_t step, int64_t s0, int64_t d, int64_t q) {
    Direction& dir = dirs_[static_cast<size_t>(d)];
    const float* h_in = floats(dir.h[step % 2]);
    if (two_phase_) {
      static const auto n_lanes = Clones<gru_n_lanes>::best();
      const float* g = product(floats(dir.rh), dir.r2, 1, q);
      const float* z = floats(dir.z);
      each_entry(step, s0, d, q, [&](int64_t b, int64_t at, const float* x, float* h) {
        n_lanes(g + b * kPanel, x, z + at, h_in + at, h, clip_);
      });
      return;
    }
    static const auto lanes = Clones<gru_lanes>::best();
    const float* g = product(h_in, dir.r1, 3, q);
    const float* rbh = dir.rbh.data() + q * kPanel;
    each_entry(step, s0, d, q, [&](int64_t b, int64_t at, const float* x, float* h) {
      lanes(g + b * 3 * kPanel, x, rbh, h_in + at, h, clip_);
    });
  }

  // GRU with linear_before_reset 0, first of a step's two task lists: z,
  // and r (.) H for the h gate's product.
  void gru_zr(int64_t step, int64_t s0, int64_t d, int64_t q) {
    Direction& dir = dirs_[static_cast<size_t>(d)];
    const float* h_in = floats(dir.h[step % 2]);
    static const auto zr_lanes = Clones<gru_zr_lanes>::best();
    const float* g = product(h_in, dir.r1, 2, q);
    for (int64_t b = 0; b < s_.batch; ++b) {
      const int64_t at = b * units_ + q * kPanel;
      if (time_of(d, step, b) < 0)
        std::fill_n(floats(dir.rh) + at, kPanel, 0.f);
      else
        zr_lanes(g + b * 2 * kPanel, x_gates(dir, step, s0, b, q), h_in + at, floats(dir.z) + at,
                 floats(dir.rh) + at, clip_);
    }
  }

  void rnn_block(int64_t step, int64_t s0, int64_t d, int64_t q) {
    Direction& dir = dirs_[static_cast<size_t>(d)];
    const float* g = product(floats(dir.h[step % 2]), dir.r1, 1, q);
    static const auto relu_lanes = Clones<rnn_lanes<true>>::best();
    static const auto tanh_lanes = Clones<rnn_lanes<false>>::best();
    const auto lanes = s_.activation(d, 0).kind == Kind::kRelu ? relu_lanes : tanh_lanes;
    each_entry(step, s0, d, q,
               [&](int64_t b, int64_t, const float* x, float* h) { lanes(g + b * kPanel, x, h, clip_); });
  }

  const RecurrentSpec s_;
  const float clip_;  // s_.clip, or +inf without one
  const Tensor& x_;
  const Tensor* lens_in_ = nullptr;
  const Tensor* initial_h_ = nullptr;
  const Tensor* initial_c_ = nullptr;
  float* y_h_ = nullptr;
  float* y_c_ = nullptr;
  TaskPool* pool_;
  int64_t blocks_ = 0, units_ = 0, chunk_ = 1, longest_ = 0;
  bool two_phase_ = false;
  bool apart_ = false;        // directions one after the other, not side by side
  bool independent_ = false;  // each direction's sequence on a thread of its own
  std::vector<Direction> dirs_;
  std::vector<int64_t> lens_;
};

Result<std::unique_ptr<FastOp>> create(const FastOpContext& ctx) {
  if (ctx.nhwc) return invalid_argument("the fast recurrent kernel runs in the graph's order only");
  HS_RETURN_IF_ERROR(supports(ctx.graph, ctx.node, ctx.threads()));
  HS_ASSIGN_OR_RETURN(RecurrentSpec s, read_spec(ctx.graph, ctx.node));
  return std::unique_ptr<FastOp>(new Recurrent(ctx, std::move(s)));
}

}  // namespace

FastOpKind rnn_kind() { return {"RNN", false, supports, create}; }
FastOpKind gru_kind() { return {"GRU", false, supports, create}; }
FastOpKind lstm_kind() { return {"LSTM", false, supports, create}; }

}  // namespace hetsched::cpu::fast
