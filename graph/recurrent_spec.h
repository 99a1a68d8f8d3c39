// What an ONNX RNN, GRU or LSTM node computes, read from its attributes and
// input types once, so that shape inference (ops_recurrent.cc) and the CPU
// kernel (delegates/cpu/kernels/recurrent.cc) check and read the node the
// same way.
//
// The input and output slots, layouts and gate orders are ONNX's (opsets 7
// to 21; `layout` exists from opset 14):
//   inputs   X, W, R, B, sequence_lens, initial_h (LSTM: + initial_c, P)
//   outputs  Y, Y_h (LSTM: + Y_c)
//   gates    RNN i; GRU z, r, h; LSTM i, o, f, c
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace hetsched {

enum class RecurrentOp : uint8_t { kRnn, kGru, kLstm };

// The activation functions ONNX lists for the recurrent ops (alpha and beta
// as in the spec; functions that take neither ignore them).
enum class RecurrentActivationKind : uint8_t {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,           // alpha * x + beta
  kLeakyRelu,        // x < 0 ? alpha * x : x
  kThresholdedRelu,  // x > alpha ? x : 0
  kScaledTanh,       // alpha * tanh(beta * x)
  kHardSigmoid,      // clamp(alpha * x + beta, 0, 1)
  kElu,              // x < 0 ? alpha * (exp(x) - 1) : x
  kSoftsign,         // x / (1 + |x|)
  kSoftplus,         // log(1 + exp(x))
};

struct RecurrentActivation {
  RecurrentActivationKind kind = RecurrentActivationKind::kTanh;
  float alpha = 0.f;
  float beta = 0.f;
};

// Input slots.
inline constexpr size_t kRecurrentX = 0, kRecurrentW = 1, kRecurrentR = 2, kRecurrentB = 3, kRecurrentSeqLens = 4,
                        kRecurrentInitialH = 5, kRecurrentInitialC = 6, kRecurrentP = 7;

struct RecurrentSpec {
  RecurrentOp op = RecurrentOp::kRnn;
  int64_t gates = 1;  // RNN 1, GRU 3, LSTM 4
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  int64_t directions = 1;
  bool reverse = false;              // the only direction is reverse (directions == 1)
  int64_t layout = 0;                // 0: X [seq, batch, input]; 1: X [batch, seq, input]
  float clip = 0.f;                  // > 0: gate pre-activations are clamped to [-clip, clip]
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM: f = 1 - i
  // activations_per_direction() functions for direction 0, then for
  // direction 1: RNN f; GRU f, g; LSTM f, g, h.
  std::vector<RecurrentActivation> activations;

  static int64_t activations_per_direction(RecurrentOp op) {
    return op == RecurrentOp::kRnn ? 1 : op == RecurrentOp::kGru ? 2 : 3;
  }
  const RecurrentActivation& activation(int64_t direction, int64_t which) const {
    return activations[static_cast<size_t>(direction * activations_per_direction(op) + which)];
  }
  // Y: [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]).
  Shape y_shape() const;
  // Y_h, Y_c, initial_h, initial_c: [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
  Shape state_shape() const;
};

// "RNN" -> kRnn, ...; false for any other op.
bool recurrent_op_from_name(const std::string& op, RecurrentOp& out);

// Reads and checks the node: attributes (hidden_size, direction, layout,
// activations with activation_alpha/beta, clip, linear_before_reset,
// input_forget) and the types of the inputs that are present (`inputs[i]`
// nullptr when omitted). Errors name the attribute or input, what it is and
// what is accepted; activations hetsched does not implement are refused by
// name as unsupported.
Result<RecurrentSpec> read_recurrent_spec(const std::string& op, const Attributes& attrs,
                                          const std::vector<const TensorType*>& inputs);

// Each batch entry's sequence length: `lens` (the sequence_lens input), or
// spec.seq for every entry when it is nullptr. A length outside [0, seq] is
// an error naming the entry (the CPU's portable and fast kernels both read
// it so).
Status read_sequence_lens(const RecurrentSpec& spec, const Tensor* lens, std::vector<int64_t>& out);

}  // namespace hetsched
