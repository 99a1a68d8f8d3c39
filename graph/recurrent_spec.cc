#include "graph/recurrent_spec.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace hetsched {

namespace {

struct ActivationName {
  const char* name;
  RecurrentActivationKind kind;
  // How many of activation_alpha / activation_beta it consumes, and their
  // values when the lists run out (ONNX Runtime's defaults).
  int takes_alpha, takes_beta;
  float alpha, beta;
};

constexpr ActivationName kActivations[] = {
    {"Relu", RecurrentActivationKind::kRelu, 0, 0, 0.f, 0.f},
    {"Tanh", RecurrentActivationKind::kTanh, 0, 0, 0.f, 0.f},
    {"Sigmoid", RecurrentActivationKind::kSigmoid, 0, 0, 0.f, 0.f},
    {"Affine", RecurrentActivationKind::kAffine, 1, 1, 1.f, 0.f},
    {"LeakyRelu", RecurrentActivationKind::kLeakyRelu, 1, 0, 0.01f, 0.f},
    {"ThresholdedRelu", RecurrentActivationKind::kThresholdedRelu, 1, 0, 1.f, 0.f},
    {"ScaledTanh", RecurrentActivationKind::kScaledTanh, 1, 1, 1.f, 1.f},
    {"HardSigmoid", RecurrentActivationKind::kHardSigmoid, 1, 1, 0.2f, 0.5f},
    {"Elu", RecurrentActivationKind::kElu, 1, 0, 1.f, 0.f},
    {"Softsign", RecurrentActivationKind::kSoftsign, 0, 0, 0.f, 0.f},
    {"Softplus", RecurrentActivationKind::kSoftplus, 0, 0, 0.f, 0.f},
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string known_activations() {
  std::string out;
  for (const ActivationName& a : kActivations) out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

// The importer keeps ONNX's list of strings as one comma-separated string
// (graph/onnx_import.cc): hetsched's attributes have no string list.
std::vector<std::string> split_names(const std::string& joined) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= joined.size()) {
    const size_t comma = std::min(joined.find(',', start), joined.size());
    names.push_back(joined.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

std::vector<std::string> default_activations(RecurrentOp op) {
  switch (op) {
    case RecurrentOp::kRnn:
      return {"Tanh"};
    case RecurrentOp::kGru:
      return {"Sigmoid", "Tanh"};
    case RecurrentOp::kLstm:
      return {"Sigmoid", "Tanh", "Tanh"};
  }
  return {};
}

Status read_activations(const Attributes& attrs, RecurrentSpec& spec) {
  const int64_t per_direction = RecurrentSpec::activations_per_direction(spec.op);
  const int64_t wanted = per_direction * spec.directions;
  std::vector<std::string> names;
  if (attrs.has("activations")) {
    HS_ASSIGN_OR_RETURN(const std::string joined, attrs.get_string("activations", ""));
    names = split_names(joined);
    if (static_cast<int64_t>(names.size()) != wanted)
      return invalid_argument("attribute 'activations' lists " + std::to_string(names.size()) + " functions (" +
                              joined + "); " + std::to_string(spec.directions) + " direction(s) need " +
                              std::to_string(wanted) + " (" + std::to_string(per_direction) + " per direction)");
  } else {
    for (int64_t d = 0; d < spec.directions; ++d)
      for (const std::string& n : default_activations(spec.op)) names.push_back(n);
  }
  HS_ASSIGN_OR_RETURN(const std::vector<float> alphas, attrs.get_floats("activation_alpha", {}));
  HS_ASSIGN_OR_RETURN(const std::vector<float> betas, attrs.get_floats("activation_beta", {}));
  // The lists are consumed in the order of the functions, by those that
  // take an alpha (a beta) only, as ONNX Runtime reads them.
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    const ActivationName* found = nullptr;
    for (const ActivationName& a : kActivations)
      if (lower(a.name) == lower(name)) found = &a;
    if (!found)
      return unsupported("activation '" + name + "' is not supported (supported: " + known_activations() + ")");
    RecurrentActivation act{found->kind, found->alpha, found->beta};
    if (found->takes_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (found->takes_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    spec.activations.push_back(act);
  }
  return Status::ok();
}

// "name must be f32[a,b,c], got ..." unless `t` is exactly that.
Status require_shape(const TensorType* t, const Shape& want, const std::string& what) {
  if (t->dtype != DType::kFloat32 || t->shape != want)
    return invalid_argument(what + " must be " + TensorType{DType::kFloat32, want}.to_string() + ", got " +
                            t->to_string());
  return Status::ok();
}

}  // namespace

bool recurrent_op_from_name(const std::string& op, RecurrentOp& out) {
  static constexpr std::pair<const char*, RecurrentOp> kOps[] = {
      {"RNN", RecurrentOp::kRnn}, {"GRU", RecurrentOp::kGru}, {"LSTM", RecurrentOp::kLstm}};
  for (const auto& [name, value] : kOps)
    if (op == name) {
      out = value;
      return true;
    }
  return false;
}

Shape RecurrentSpec::y_shape() const {
  return layout == 0 ? Shape{seq, directions, batch, hidden} : Shape{batch, seq, directions, hidden};
}

Shape RecurrentSpec::state_shape() const {
  return layout == 0 ? Shape{directions, batch, hidden} : Shape{batch, directions, hidden};
}

Result<RecurrentSpec> read_recurrent_spec(const std::string& op, const Attributes& attrs,
                                          const std::vector<const TensorType*>& inputs) {
  RecurrentSpec spec;
  if (!recurrent_op_from_name(op, spec.op)) return invalid_argument("'" + op + "' is not RNN, GRU or LSTM");
  spec.gates = spec.op == RecurrentOp::kRnn ? 1 : spec.op == RecurrentOp::kGru ? 3 : 4;
  const auto input = [&](size_t i) { return i < inputs.size() ? inputs[i] : nullptr; };
  if (!input(kRecurrentX) || !input(kRecurrentW) || !input(kRecurrentR))
    return invalid_argument("inputs X, W and R are required");

  HS_ASSIGN_OR_RETURN(spec.hidden, attrs.require_int("hidden_size"));
  if (spec.hidden < 1)
    return invalid_argument("attribute 'hidden_size' must be >= 1, got " + std::to_string(spec.hidden));
  HS_ASSIGN_OR_RETURN(const std::string direction, attrs.get_string("direction", "forward"));
  if (direction == "forward" || direction == "reverse") {
    spec.reverse = direction == "reverse";
  } else if (direction == "bidirectional") {
    spec.directions = 2;
  } else {
    return invalid_argument("attribute 'direction' must be forward, reverse or bidirectional, got '" + direction + "'");
  }
  HS_ASSIGN_OR_RETURN(spec.layout, attrs.get_int("layout", 0));
  if (spec.layout != 0 && spec.layout != 1)
    return invalid_argument("attribute 'layout' must be 0 or 1, got " + std::to_string(spec.layout));
  if (attrs.has("clip")) {
    HS_ASSIGN_OR_RETURN(spec.clip, attrs.get_float("clip", 0.f));
    if (!(spec.clip > 0.f)) return invalid_argument("attribute 'clip' must be > 0, got " + std::to_string(spec.clip));
  }
  if (spec.op == RecurrentOp::kGru) {
    HS_ASSIGN_OR_RETURN(const int64_t lbr, attrs.get_int("linear_before_reset", 0));
    spec.linear_before_reset = lbr != 0;
  }
  if (spec.op == RecurrentOp::kLstm) {
    HS_ASSIGN_OR_RETURN(const int64_t forget, attrs.get_int("input_forget", 0));
    spec.input_forget = forget != 0;
  }
  HS_RETURN_IF_ERROR(read_activations(attrs, spec));

  const TensorType& x = *input(kRecurrentX);
  if (x.dtype != DType::kFloat32 || x.rank() != 3)
    return invalid_argument(std::string("input X must be f32 ") +
                            (spec.layout == 0 ? "[seq, batch, input]" : "[batch, seq, input]") + ", got " +
                            x.to_string());
  if (!x.is_static()) return unsupported("input X " + x.to_string() + " must have known dims");
  spec.seq = x.shape[spec.layout == 0 ? 0 : 1];
  spec.batch = x.shape[spec.layout == 0 ? 1 : 0];
  spec.input = x.shape[2];

  const int64_t gh = spec.gates * spec.hidden;
  const std::string gates = std::to_string(spec.gates) + " gates";
  const TensorType& w = *input(kRecurrentW);
  if (w.rank() == 3 && w.shape[1] != gh && w.shape[1] > 0 && w.shape[1] % spec.gates == 0)
    return invalid_argument("input W " + w.to_string() + " is for hidden_size " +
                            std::to_string(w.shape[1] / spec.gates) + ", attribute 'hidden_size' is " +
                            std::to_string(spec.hidden));
  HS_RETURN_IF_ERROR(require_shape(&w, {spec.directions, gh, spec.input},
                                   "input W [directions, " + gates + " * hidden_size, input_size]"));
  HS_RETURN_IF_ERROR(require_shape(input(kRecurrentR), {spec.directions, gh, spec.hidden},
                                   "input R [directions, " + gates + " * hidden_size, hidden_size]"));
  if (const TensorType* b = input(kRecurrentB))
    HS_RETURN_IF_ERROR(
        require_shape(b, {spec.directions, 2 * gh}, "input B [directions, 2 * " + gates + " * hidden_size]"));
  if (const TensorType* lens = input(kRecurrentSeqLens)) {
    if ((lens->dtype != DType::kInt32 && lens->dtype != DType::kInt64) || lens->shape != Shape{spec.batch})
      return invalid_argument("input sequence_lens must be i32[" + std::to_string(spec.batch) + "], got " +
                              lens->to_string());
  }
  const std::string state = spec.layout == 0 ? "[directions, batch, hidden_size]" : "[batch, directions, hidden_size]";
  if (const TensorType* h = input(kRecurrentInitialH))
    HS_RETURN_IF_ERROR(require_shape(h, spec.state_shape(), "input initial_h " + state));
  if (spec.op == RecurrentOp::kLstm) {
    if (const TensorType* c = input(kRecurrentInitialC))
      HS_RETURN_IF_ERROR(require_shape(c, spec.state_shape(), "input initial_c " + state));
    if (const TensorType* p = input(kRecurrentP))
      HS_RETURN_IF_ERROR(require_shape(p, {spec.directions, 3 * spec.hidden}, "input P [directions, 3 * hidden_size]"));
  }
  return spec;
}

Status read_sequence_lens(const RecurrentSpec& spec, const Tensor* lens, std::vector<int64_t>& out) {
  out.assign(static_cast<size_t>(spec.batch), spec.seq);
  if (!lens) return Status::ok();
  for (int64_t b = 0; b < spec.batch; ++b) {
    const int64_t len = lens->int_at(b);
    if (len < 0 || len > spec.seq)
      return invalid_argument("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
                              " is outside [0, " + std::to_string(spec.seq) + "] (the sequence length)");
    out[static_cast<size_t>(b)] = len;
  }
  return Status::ok();
}

}  // namespace hetsched
