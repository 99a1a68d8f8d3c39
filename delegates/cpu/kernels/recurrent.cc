// Portable kernels of graph/ops_recurrent.cc: RNN, GRU and LSTM.
//
// Each direction first multiplies every time step's input by W in one GEMM
// (X [seq * batch, input] . W^T, biases added), which is most of the work
// for short hidden states; then it walks the steps, adding H . R^T to the
// step's rows and applying the gates. W and R are transposed once so that
// the per-step product runs along contiguous rows of R^T (GCC vectorises the
// axpy form without -ffast-math). sequence_lens: an entry past its length
// keeps its state and writes zeros to Y; the reverse direction starts from
// the entry's own last valid step. A length of 0 leaves the state at its
// initial value.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "delegates/cpu/kernel.h"
#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/recurrent_spec.h"

namespace hetsched::cpu {

namespace {

// The switch is outside the loops so that each loop is a plain one.
void activate(const RecurrentActivation& act, float* x, int64_t n) {
  const float alpha = act.alpha, beta = act.beta;
  switch (act.kind) {
    case RecurrentActivationKind::kRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.f);
      return;
    case RecurrentActivationKind::kTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
      return;
    case RecurrentActivationKind::kSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = 1.f / (1.f + std::exp(-x[i]));
      return;
    case RecurrentActivationKind::kAffine:
      for (int64_t i = 0; i < n; ++i) x[i] = alpha * x[i] + beta;
      return;
    case RecurrentActivationKind::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] < 0.f ? alpha * x[i] : x[i];
      return;
    case RecurrentActivationKind::kThresholdedRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > alpha ? x[i] : 0.f;
      return;
    case RecurrentActivationKind::kScaledTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = alpha * std::tanh(beta * x[i]);
      return;
    case RecurrentActivationKind::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(alpha * x[i] + beta, 0.f, 1.f);
      return;
    case RecurrentActivationKind::kElu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] < 0.f ? alpha * (std::exp(x[i]) - 1.f) : x[i];
      return;
    case RecurrentActivationKind::kSoftsign:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.f + std::abs(x[i]));
      return;
    case RecurrentActivationKind::kSoftplus:
      // log(1 + e^x) without overflow for large x.
      for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.f) + std::log1p(std::exp(-std::abs(x[i])));
      return;
  }
}

// ONNX applies clip to the input of the activations.
void clip_then_activate(const RecurrentActivation& act, float clip, float* x, int64_t n) {
  if (clip > 0.f)
    for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], -clip, clip);
  activate(act, x, n);
}

// dst [cols, rows] = src [rows, cols]^T.
void transpose(const float* src, int64_t rows, int64_t cols, float* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
}

// c [m, n] += a [m, k] . bt [k, n] (row strides lda, ldb, ldc). With few
// rows (batch-1 inference) the packing of the blocked GEMM would cost as much
// as the product, so rows of bt are added in directly, split over columns.
void accumulate_product(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* bt, int64_t ldb,
                        float* c, int64_t ldc) {
  if (m >= 8) {
    parallel_gemm_f32(m, n, k, a, lda, bt, ldb, c, ldc, true);
    return;
  }
  const int64_t grain = std::max<int64_t>(64, (kParallelGrain / std::max<int64_t>(1, m * k) + 15) / 16 * 16);
  parallel_chunks(n, grain, [&](int64_t j0, int64_t j1) {
    for (int64_t i = 0; i < m; ++i) {
      float* ci = c + i * ldc;
      for (int64_t kk = 0; kk < k; ++kk) {
        const float av = a[i * lda + kk];
        const float* b = bt + kk * ldb;
        for (int64_t j = j0; j < j1; ++j) ci[j] += av * b[j];
      }
    }
  });
}

// Runs fn(b) for each batch entry, in parallel when a step's gate work is large.
template <typename Fn>
void for_each_entry(int64_t batch, int64_t work_per_entry, Fn&& fn) {
  parallel_chunks(batch, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work_per_entry)),
                  [&](int64_t b0, int64_t b1) {
                    for (int64_t b = b0; b < b1; ++b) fn(b);
                  });
}

struct Operands {
  const float* x = nullptr;
  const float* w = nullptr;
  const float* r = nullptr;
  const float* bias = nullptr;  // nullptr: no B
  const float* initial_h = nullptr;
  const float* initial_c = nullptr;
  const float* peepholes = nullptr;
  std::vector<int64_t> lens;  // one per batch entry
  float* y = nullptr;
  float* y_h = nullptr;  // each may be nullptr when the output is not wanted
  float* y_c = nullptr;
};

// One direction d of the node.
void run_direction(const RecurrentSpec& s, int64_t d, const Operands& io) {
  const int64_t H = s.hidden, G = s.gates, GH = G * H, batch = s.batch, seq = s.seq, dirs = s.directions;
  const bool reverse = s.reverse || d == 1;
  const bool gru = s.op == RecurrentOp::kGru, lstm = s.op == RecurrentOp::kLstm;
  // GRU with linear_before_reset multiplies r into (H . Rh^T + Rbh): that
  // part of R's product and bias stays apart from the input's.
  const bool separate_h_gate = gru && s.linear_before_reset;

  const auto x_row = [&](int64_t t, int64_t b) { return s.layout == 0 ? t * batch + b : b * seq + t; };
  const auto y_at = [&](int64_t t, int64_t b) {
    return (s.layout == 0 ? (t * dirs + d) * batch + b : (b * seq + t) * dirs + d) * H;
  };
  const auto state_at = [&](int64_t b) { return (s.layout == 0 ? d * batch + b : b * dirs + d) * H; };

  std::vector<float> wt(static_cast<size_t>(s.input * GH)), rt(static_cast<size_t>(H * GH));
  transpose(io.w + d * GH * s.input, GH, s.input, wt.data());
  transpose(io.r + d * GH * H, GH, H, rt.data());

  // xw [seq * batch, GH] in X's row order: X . W^T + Wb + Rb.
  std::vector<float> xw(static_cast<size_t>(seq * batch * GH), 0.f);
  parallel_gemm_f32(seq * batch, GH, s.input, io.x, s.input, wt.data(), GH, xw.data(), GH, true);
  std::vector<float> rb_h(static_cast<size_t>(H), 0.f);  // GRU linear_before_reset: Rbh
  if (io.bias) {
    const float* wb = io.bias + d * 2 * GH;
    const float* rb = wb + GH;
    std::vector<float> folded(wb, wb + GH);
    for (int64_t j = 0; j < GH; ++j)
      if (!(separate_h_gate && j >= 2 * H)) folded[static_cast<size_t>(j)] += rb[j];
    if (separate_h_gate) std::copy(rb + 2 * H, rb + 3 * H, rb_h.begin());
    for (int64_t row = 0; row < seq * batch; ++row) {
      float* p = xw.data() + row * GH;
      for (int64_t j = 0; j < GH; ++j) p[j] += folded[static_cast<size_t>(j)];
    }
  }

  std::vector<float> h(static_cast<size_t>(batch * H), 0.f), c(lstm ? static_cast<size_t>(batch * H) : 0, 0.f);
  for (int64_t b = 0; b < batch; ++b) {
    if (io.initial_h) std::copy_n(io.initial_h + state_at(b), H, h.data() + b * H);
    if (lstm && io.initial_c) std::copy_n(io.initial_c + state_at(b), H, c.data() + b * H);
  }
  const float* p_i = io.peepholes ? io.peepholes + d * 3 * H : nullptr;
  const float* p_o = p_i ? p_i + H : nullptr;
  const float* p_f = p_i ? p_i + 2 * H : nullptr;
  const RecurrentActivation& f = s.activation(d, 0);
  const RecurrentActivation& g = s.activation(d, gru || lstm ? 1 : 0);
  const RecurrentActivation& h_act = s.activation(d, lstm ? 2 : 0);

  std::vector<float> gates(static_cast<size_t>(batch * GH));
  std::vector<float> hr(separate_h_gate ? static_cast<size_t>(batch * H) : 0);          // H . Rh^T (+ Rbh)
  std::vector<float> rh(gru && !separate_h_gate ? static_cast<size_t>(batch * H) : 0);  // r (.) H
  std::vector<int64_t> step_t(static_cast<size_t>(batch));
  const int64_t longest = batch == 0 ? 0 : *std::max_element(io.lens.begin(), io.lens.end());
  for (int64_t step = 0; step < longest; ++step) {
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = io.lens[static_cast<size_t>(b)];
      const int64_t t = step >= len ? -1 : reverse ? len - 1 - step : step;
      step_t[static_cast<size_t>(b)] = t;
      float* row = gates.data() + b * GH;
      if (t < 0)
        std::fill(row, row + GH, 0.f);
      else
        std::copy_n(xw.data() + x_row(t, b) * GH, GH, row);
    }
    if (gru) {
      // z and r first: the h gate's product reads r (.) H.
      accumulate_product(batch, 2 * H, H, h.data(), H, rt.data(), GH, gates.data(), GH);
      if (separate_h_gate) {
        for (int64_t b = 0; b < batch; ++b) std::copy(rb_h.begin(), rb_h.end(), hr.begin() + b * H);
        accumulate_product(batch, H, H, h.data(), H, rt.data() + 2 * H, GH, hr.data(), H);
      }
      for_each_entry(batch, 2 * H, [&](int64_t b) {
        float* zr = gates.data() + b * GH;
        clip_then_activate(f, s.clip, zr, 2 * H);
        if (!separate_h_gate)
          for (int64_t j = 0; j < H; ++j)
            rh[static_cast<size_t>(b * H + j)] = zr[H + j] * h[static_cast<size_t>(b * H + j)];
      });
      if (!separate_h_gate)
        accumulate_product(batch, H, H, rh.data(), H, rt.data() + 2 * H, GH, gates.data() + 2 * H, GH);
    } else {
      accumulate_product(batch, GH, H, h.data(), H, rt.data(), GH, gates.data(), GH);
    }

    for_each_entry(batch, GH, [&](int64_t b) {
      const int64_t t = step_t[static_cast<size_t>(b)];
      if (t < 0) return;
      float* gb = gates.data() + b * GH;
      float* hb = h.data() + b * H;
      if (s.op == RecurrentOp::kRnn) {
        clip_then_activate(f, s.clip, gb, H);
        std::copy_n(gb, H, hb);
      } else if (gru) {
        const float* z = gb;
        const float* r = gb + H;
        float* n = gb + 2 * H;
        if (separate_h_gate) {
          const float* hrb = hr.data() + b * H;
          for (int64_t j = 0; j < H; ++j) n[j] += r[j] * hrb[j];
        }
        clip_then_activate(g, s.clip, n, H);
        for (int64_t j = 0; j < H; ++j) hb[j] = (1.f - z[j]) * n[j] + z[j] * hb[j];
      } else {
        float* i = gb;
        float* o = gb + H;
        float* fg = gb + 2 * H;
        float* cand = gb + 3 * H;
        float* cb = c.data() + b * H;
        if (p_i)
          for (int64_t j = 0; j < H; ++j) i[j] += p_i[j] * cb[j];
        clip_then_activate(f, s.clip, i, H);
        if (s.input_forget) {
          for (int64_t j = 0; j < H; ++j) fg[j] = 1.f - i[j];
        } else {
          if (p_f)
            for (int64_t j = 0; j < H; ++j) fg[j] += p_f[j] * cb[j];
          clip_then_activate(f, s.clip, fg, H);
        }
        clip_then_activate(g, s.clip, cand, H);
        for (int64_t j = 0; j < H; ++j) cb[j] = fg[j] * cb[j] + i[j] * cand[j];
        // The output gate's peephole reads the new cell state.
        if (p_o)
          for (int64_t j = 0; j < H; ++j) o[j] += p_o[j] * cb[j];
        clip_then_activate(f, s.clip, o, H);
        std::copy_n(cb, H, cand);
        activate(h_act, cand, H);
        for (int64_t j = 0; j < H; ++j) hb[j] = o[j] * cand[j];
      }
      if (io.y) std::copy_n(hb, H, io.y + y_at(t, b));
    });
  }
  for (int64_t b = 0; b < batch; ++b) {
    if (io.y_h) std::copy_n(h.data() + b * H, H, io.y_h + state_at(b));
    if (io.y_c) std::copy_n(c.data() + b * H, H, io.y_c + state_at(b));
  }
}

Status recurrent_kernel(const KernelContext& ctx) {
  std::vector<TensorType> types(ctx.inputs.size());
  std::vector<const TensorType*> inputs(ctx.inputs.size(), nullptr);
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    if (ctx.has_input(i)) {
      types[i] = ctx.in(i).type();
      inputs[i] = &types[i];
    }
  HS_ASSIGN_OR_RETURN(const RecurrentSpec s, read_recurrent_spec(ctx.node.op, ctx.attrs(), inputs));
  const auto wanted = [&](size_t i) { return i < ctx.outputs.size() && ctx.outputs[i] != nullptr; };
  Operands io;
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    if (!wanted(i)) continue;
    HS_RETURN_IF_ERROR(check_output(ctx, i, TensorType{DType::kFloat32, i == 0 ? s.y_shape() : s.state_shape()}));
    float* p = ctx.out(i).data<float>();
    (i == 0 ? io.y : i == 1 ? io.y_h : io.y_c) = p;
  }
  if (io.y) std::fill_n(io.y, shape_elements(s.y_shape()), 0.f);
  const auto data = [&](size_t i) { return ctx.has_input(i) ? ctx.in(i).data<float>() : nullptr; };
  io.x = data(kRecurrentX);
  io.w = data(kRecurrentW);
  io.r = data(kRecurrentR);
  io.bias = data(kRecurrentB);
  io.initial_h = data(kRecurrentInitialH);
  if (s.op == RecurrentOp::kLstm) {
    io.initial_c = data(kRecurrentInitialC);
    io.peepholes = data(kRecurrentP);
  }
  HS_RETURN_IF_ERROR(
      read_sequence_lens(s, ctx.has_input(kRecurrentSeqLens) ? &ctx.in(kRecurrentSeqLens) : nullptr, io.lens));
  // The two directions are independent: side by side when each step is too
  // small for the pool to pay inside it; one after the other, with each step
  // split over the pool, otherwise.
  const int64_t step_work = s.batch * s.gates * s.hidden * s.hidden;
  if (s.directions == 2 && step_work < 8 * kParallelGrain) {
    parallel_for_each(2, [&](int64_t d) { run_direction(s, d, io); });
  } else {
    for (int64_t d = 0; d < s.directions; ++d) run_direction(s, d, io);
  }
  return Status::ok();
}

}  // namespace

void register_recurrent_kernels(KernelTable& table) {
  for (const char* op : {"RNN", "GRU", "LSTM"}) table[op] = with_node_context(recurrent_kernel);
}

}  // namespace hetsched::cpu
