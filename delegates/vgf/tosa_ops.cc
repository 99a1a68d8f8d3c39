#include "delegates/vgf/tosa_ops.h"

#include <algorithm>
#include <string>

namespace hetsched::vgf {

std::string_view op_name(OpCode op) {
  switch (op) {
    case OpCode::kConv2d: return "conv2d";
    case OpCode::kDepthwiseConv2d: return "depthwise_conv2d";
    case OpCode::kMatmul: return "matmul";
    case OpCode::kAvgPool2d: return "avg_pool2d";
    case OpCode::kMaxPool2d: return "max_pool2d";
    case OpCode::kTranspose: return "transpose";
    case OpCode::kReshape: return "reshape";
    case OpCode::kConcat: return "concat";
    case OpCode::kSlice: return "slice";
    case OpCode::kPad: return "pad";
    case OpCode::kResize: return "resize";
    case OpCode::kReduceSum: return "reduce_sum";
    case OpCode::kReduceMax: return "reduce_max";
    case OpCode::kClamp: return "clamp";
    case OpCode::kAdd: return "add";
    case OpCode::kSub: return "sub";
    case OpCode::kMul: return "mul";
    case OpCode::kPow: return "pow";
    case OpCode::kAbs: return "abs";
    case OpCode::kNeg: return "neg";
    case OpCode::kSin: return "sin";
    case OpCode::kCos: return "cos";
    case OpCode::kExp: return "exp";
    case OpCode::kReciprocal: return "reciprocal";
    case OpCode::kRsqrt: return "rsqrt";
    case OpCode::kSigmoid: return "sigmoid";
    case OpCode::kTanh: return "tanh";
    case OpCode::kLog: return "log";
    case OpCode::kFloor: return "floor";
    case OpCode::kCeil: return "ceil";
    case OpCode::kErf: return "erf";
    case OpCode::kSelect: return "select";
    case OpCode::kTile: return "tile";
    case OpCode::kTransposeConv2d: return "transpose_conv2d";
    case OpCode::kCast: return "cast";
  }
  return "unknown";
}

bool is_binary(OpCode op) {
  return op == OpCode::kAdd || op == OpCode::kSub || op == OpCode::kMul || op == OpCode::kPow;
}

bool is_unary(OpCode op) {
  switch (op) {
    case OpCode::kAbs:
    case OpCode::kNeg:
    case OpCode::kSin:
    case OpCode::kCos:
    case OpCode::kExp:
    case OpCode::kReciprocal:
    case OpCode::kRsqrt:
    case OpCode::kSigmoid:
    case OpCode::kTanh:
    case OpCode::kLog:
    case OpCode::kFloor:
    case OpCode::kCeil:
    case OpCode::kErf:
    case OpCode::kClamp:
      return true;
    default:
      return false;
  }
}

int64_t window_output_size(int64_t in, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t stride,
                           int64_t dilation) {
  const int64_t span = in + pad_before + pad_after - ((kernel - 1) * dilation + 1);
  if (span < 0 || stride < 1) return 0;
  return span / stride + 1;
}

namespace {

using Shape64 = std::vector<int64_t>;

std::string text(const Shape64& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// The checks below read operand shapes by position; this gathers them once.
struct Operands {
  std::vector<const Shape64*> in;
  std::vector<const Shape64*> out;
  const Shape64& i(size_t k) const { return *in[k]; }
  const Shape64& o(size_t k) const { return *out[k]; }
};

Status arity(const Operator& op, size_t min_in, size_t max_in, size_t outputs) {
  if (op.inputs.size() < min_in || op.inputs.size() > max_in) {
    const std::string want = min_in == max_in ? std::to_string(min_in) : std::to_string(min_in) + "+";
    return invalid_argument("has " + std::to_string(op.inputs.size()) + " inputs, expected " + want);
  }
  if (op.outputs.size() != outputs)
    return invalid_argument("has " + std::to_string(op.outputs.size()) + " outputs, expected " + std::to_string(outputs));
  return Status::ok();
}

template <typename A>
Result<const A*> attr_of(const Operator& op, const char* name) {
  const A* a = std::get_if<A>(&op.attr);
  if (!a) return invalid_argument(std::string("needs a ") + name + " attribute");
  return a;
}

Status require_no_attr(const Operator& op) {
  if (!std::holds_alternative<NoAttr>(op.attr)) return invalid_argument("takes no attribute");
  return Status::ok();
}

Status lengths(const std::vector<int64_t>& v, size_t n, const char* what) {
  if (v.size() != n)
    return invalid_argument(std::string(what) + " has " + std::to_string(v.size()) + " values, expected " + std::to_string(n));
  return Status::ok();
}

Status same_shape(const Shape64& a, const Shape64& b, const char* what) {
  if (a != b) return invalid_argument(std::string(what) + " " + text(b) + " differs from the input " + text(a));
  return Status::ok();
}

Status check_binary(const Operands& s) {
  const Shape64& out = s.o(0);
  for (size_t k = 0; k < 2; ++k) {
    const Shape64& in = s.i(k);
    if (in.size() != out.size())
      return invalid_argument("operand " + std::to_string(k) + " " + text(in) + " has a different rank from the output " + text(out));
  }
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t a = s.i(0)[d], b = s.i(1)[d];
    const int64_t want = a == 1 ? b : a;
    if ((b != 1 && b != a && a != 1) || out[d] != want)
      return invalid_argument("operands " + text(s.i(0)) + " and " + text(s.i(1)) + " do not broadcast to the output " +
                              text(out));
  }
  return Status::ok();
}

// select: three operands of the output's rank, each dim equal to the
// output's or 1 (broadcast); the output is their broadcast shape.
Status check_select(const Operands& s) {
  const Shape64& out = s.o(0);
  for (size_t k = 0; k < 3; ++k)
    if (s.i(k).size() != out.size())
      return invalid_argument("operand " + std::to_string(k) + " " + text(s.i(k)) + " has a different rank from the output " +
                              text(out));
  for (size_t d = 0; d < out.size(); ++d) {
    int64_t want = 1;
    for (size_t k = 0; k < 3; ++k) {
      const int64_t v = s.i(k)[d];
      if (v != 1 && want != 1 && v != want)
        return invalid_argument("operands do not broadcast in dim " + std::to_string(d));
      if (v != 1) want = v;
    }
    if (out[d] != want)
      return invalid_argument("output " + text(out) + " is not the operands' broadcast shape in dim " + std::to_string(d));
  }
  return Status::ok();
}

// tile: the output's rank, each dim a multiple of the input's; the copy
// behind it walks a (multiple, dim) pair per dim repeated above size 1, so
// those pairs must fit kMaxRank dims.
Status check_tile(const Operands& s) {
  const Shape64 &in = s.i(0), &out = s.o(0);
  if (in.size() != out.size()) return invalid_argument("output " + text(out) + " has a different rank from " + text(in));
  size_t walked = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    if (out[d] % in[d] != 0) return invalid_argument("output " + text(out) + " is no tiling of " + text(in));
    walked += out[d] != in[d] && in[d] > 1 ? 2 : 1;
  }
  if (walked > kMaxRank) return invalid_argument("tiling " + text(in) + " to " + text(out) + " walks more than 6 dims");
  return Status::ok();
}

Status check_window(int64_t in, int64_t out, int64_t pb, int64_t pa, int64_t k, int64_t stride, int64_t dilation,
                    const char* axis) {
  // Bounded, so the window arithmetic cannot overflow.
  constexpr int64_t kLimit = int64_t{1} << 30;
  const auto in_range = [](int64_t v, int64_t lo) { return v >= lo && v <= kLimit; };
  if (!in_range(k, 1) || !in_range(stride, 1) || !in_range(dilation, 1) || !in_range(pb, 0) || !in_range(pa, 0))
    return invalid_argument(std::string("has a kernel, stride, dilation or pad outside [1|0, 2^30] along ") + axis);
  const int64_t want = window_output_size(in, pb, pa, k, stride, dilation);
  if (want < 1 || out != want)
    return invalid_argument(std::string("output size ") + std::to_string(out) + " along " + axis + " does not follow from input " +
                            std::to_string(in) + ", pads " + std::to_string(pb) + "+" + std::to_string(pa) + ", kernel " +
                            std::to_string(k) + ", stride " + std::to_string(stride) + " and dilation " +
                            std::to_string(dilation) + " (expected " + std::to_string(want) + ")");
  return Status::ok();
}

// transpose_conv2d along one axis: out = (in - 1) * stride - pad_before -
// pad_after + (kernel - 1) * dilation + 1. Pads crop the full output and may
// be negative (ONNX's output_padding extends the end).
Status check_transpose_window(int64_t in, int64_t out, int64_t pb, int64_t pa, int64_t k, int64_t stride,
                              int64_t dilation, const char* axis) {
  constexpr int64_t kLimit = int64_t{1} << 20;
  const auto in_range = [](int64_t v, int64_t lo) { return v >= lo && v <= kLimit; };
  if (!in_range(k, 1) || !in_range(stride, 1) || !in_range(dilation, 1) || !in_range(pb, -kLimit) ||
      !in_range(pa, -kLimit) || !in_range(in, 1))
    return invalid_argument(std::string("has a kernel, stride, dilation or pad outside [1|-2^20, 2^20] along ") + axis);
  const int64_t want = (in - 1) * stride - pb - pa + (k - 1) * dilation + 1;
  if (want < 1 || out != want)
    return invalid_argument(std::string("output size ") + std::to_string(out) + " along " + axis +
                            " does not follow from input " + std::to_string(in) + " (expected " + std::to_string(want) + ")");
  return Status::ok();
}

Status check_conv(const Operator& op, const Operands& s, bool depthwise) {
  HS_RETURN_IF_ERROR(arity(op, 3, 3, 1));
  HS_ASSIGN_OR_RETURN(const ConvAttr* a, attr_of<ConvAttr>(op, "conv"));
  HS_RETURN_IF_ERROR(lengths(a->pad, 4, "pad"));
  HS_RETURN_IF_ERROR(lengths(a->stride, 2, "stride"));
  HS_RETURN_IF_ERROR(lengths(a->dilation, 2, "dilation"));
  const Shape64 &x = s.i(0), &w = s.i(1), &b = s.i(2), &y = s.o(0);
  if (x.size() != 4 || w.size() != 4 || y.size() != 4 || b.size() != 1)
    return invalid_argument("expects rank-4 input, weight and output and a rank-1 bias, got " + text(x) + ", " + text(w) +
                            ", " + text(y) + " and " + text(b));
  const int64_t kh = depthwise ? w[0] : w[1], kw = depthwise ? w[1] : w[2];
  const int64_t out_channels = depthwise ? w[2] * w[3] : w[0];
  if (depthwise ? w[2] != x[3] : w[3] != x[3])
    return invalid_argument("weight " + text(w) + " does not match the " + std::to_string(x[3]) + " input channels");
  if (y[0] != x[0] || y[3] != out_channels || b[0] != out_channels)
    return invalid_argument("output " + text(y) + " or bias " + text(b) + " does not match " + std::to_string(out_channels) +
                            " output channels of batch " + std::to_string(x[0]));
  if (op.op == OpCode::kTransposeConv2d) {
    HS_RETURN_IF_ERROR(check_transpose_window(x[1], y[1], a->pad[0], a->pad[1], kh, a->stride[0], a->dilation[0], "y"));
    return check_transpose_window(x[2], y[2], a->pad[2], a->pad[3], kw, a->stride[1], a->dilation[1], "x");
  }
  HS_RETURN_IF_ERROR(check_window(x[1], y[1], a->pad[0], a->pad[1], kh, a->stride[0], a->dilation[0], "y"));
  return check_window(x[2], y[2], a->pad[2], a->pad[3], kw, a->stride[1], a->dilation[1], "x");
}

Status check_pool(const Operator& op, const Operands& s) {
  HS_RETURN_IF_ERROR(arity(op, 1, 1, 1));
  HS_ASSIGN_OR_RETURN(const PoolAttr* a, attr_of<PoolAttr>(op, "pool"));
  HS_RETURN_IF_ERROR(lengths(a->kernel, 2, "kernel"));
  HS_RETURN_IF_ERROR(lengths(a->stride, 2, "stride"));
  HS_RETURN_IF_ERROR(lengths(a->pad, 4, "pad"));
  const Shape64 &x = s.i(0), &y = s.o(0);
  if (x.size() != 4 || y.size() != 4 || y[0] != x[0] || y[3] != x[3])
    return invalid_argument("expects NHWC input and output with the same N and C, got " + text(x) + " and " + text(y));
  HS_RETURN_IF_ERROR(check_window(x[1], y[1], a->pad[0], a->pad[1], a->kernel[0], a->stride[0], 1, "y"));
  return check_window(x[2], y[2], a->pad[2], a->pad[3], a->kernel[1], a->stride[1], 1, "x");
}

Status check_matmul(const Operator& op, const Operands& s) {
  HS_RETURN_IF_ERROR(arity(op, 2, 2, 1));
  HS_RETURN_IF_ERROR(require_no_attr(op));
  const Shape64 &a = s.i(0), &b = s.i(1), &y = s.o(0);
  const size_t r = y.size();
  if (r < 2 || a.size() != r || b.size() != r)
    return invalid_argument("expects operands and output of one rank >= 2, got " + text(a) + ", " + text(b) + " and " + text(y));
  if (a[r - 1] != b[r - 2] || y[r - 2] != a[r - 2] || y[r - 1] != b[r - 1])
    return invalid_argument("shapes " + text(a) + " x " + text(b) + " do not give " + text(y));
  for (size_t d = 0; d + 2 < r; ++d)
    if ((a[d] != 1 && a[d] != y[d]) || (b[d] != 1 && b[d] != y[d]) || y[d] != std::max(a[d], b[d]))
      return invalid_argument("batch dims of " + text(a) + " and " + text(b) + " do not broadcast to " + text(y));
  return Status::ok();
}

Status check_transpose(const Operator& op, const Operands& s) {
  HS_RETURN_IF_ERROR(arity(op, 1, 1, 1));
  HS_ASSIGN_OR_RETURN(const TransposeAttr* a, attr_of<TransposeAttr>(op, "transpose"));
  const Shape64 &x = s.i(0), &y = s.o(0);
  std::vector<bool> used(x.size(), false);
  bool ok = a->perms.size() == x.size() && y.size() == x.size();
  for (size_t i = 0; ok && i < a->perms.size(); ++i) {
    const int32_t p = a->perms[i];
    ok = p >= 0 && static_cast<size_t>(p) < x.size() && !used[p] && y[i] == x[p];
    if (ok) used[p] = true;
  }
  if (!ok) return invalid_argument("perms do not permute input " + text(x) + " into output " + text(y));
  return Status::ok();
}

Status check_axis(const AxisAttr& a, size_t rank) {
  if (a.axis < 0 || static_cast<size_t>(a.axis) >= rank)
    return invalid_argument("axis " + std::to_string(a.axis) + " is outside rank " + std::to_string(rank));
  return Status::ok();
}

Status check_concat(const Operator& op, const Operands& s) {
  HS_RETURN_IF_ERROR(arity(op, 1, 64, 1));
  HS_ASSIGN_OR_RETURN(const AxisAttr* a, attr_of<AxisAttr>(op, "axis"));
  const Shape64& y = s.o(0);
  HS_RETURN_IF_ERROR(check_axis(*a, y.size()));
  int64_t total = 0;
  for (size_t k = 0; k < s.in.size(); ++k) {
    const Shape64& x = s.i(k);
    bool ok = x.size() == y.size();
    for (size_t d = 0; ok && d < x.size(); ++d) ok = static_cast<int32_t>(d) == a->axis || x[d] == y[d];
    if (!ok) return invalid_argument("input " + std::to_string(k) + " " + text(x) + " does not fit output " + text(y));
    total += x[a->axis];
  }
  if (total != y[a->axis])
    return invalid_argument("inputs add up to " + std::to_string(total) + " along axis " + std::to_string(a->axis) +
                            ", output has " + std::to_string(y[a->axis]));
  return Status::ok();
}

Status check_slice(const Operator& op, const Operands& s) {
  HS_RETURN_IF_ERROR(arity(op, 1, 1, 1));
  HS_ASSIGN_OR_RETURN(const SliceAttr* a, attr_of<SliceAttr>(op, "slice"));
  const Shape64 &x = s.i(0), &y = s.o(0);
  HS_RETURN_IF_ERROR(lengths(a->start, x.size(), "start"));
  HS_RETURN_IF_ERROR(lengths(a->size, x.size(), "size"));
  HS_RETURN_IF_ERROR(lengths(a->stride, x.size(), "stride"));
  if (y != a->size) return invalid_argument("size " + text(a->size) + " differs from the output " + text(y));
  for (size_t d = 0; d < x.size(); ++d) {
    const int64_t first = a->start[d];
    const int64_t step = a->stride[d];
    // Bounded first, so the product below cannot overflow.
    if (step == 0 || step < -x[d] || step > x[d] || first < 0 || first >= x[d])
      return invalid_argument("start " + text(a->start) + " or stride " + text(a->stride) + " is outside input " + text(x));
    const int64_t last = first + (a->size[d] - 1) * step;
    if (last < 0 || last >= x[d])
      return invalid_argument("start " + text(a->start) + ", size " + text(a->size) + " and stride " + text(a->stride) +
                              " read outside input " + text(x));
  }
  return Status::ok();
}

Status check_pad(const Operator& op, const Operands& s) {
  HS_RETURN_IF_ERROR(arity(op, 1, 1, 1));
  HS_ASSIGN_OR_RETURN(const PadAttr* a, attr_of<PadAttr>(op, "pad"));
  const Shape64 &x = s.i(0), &y = s.o(0);
  HS_RETURN_IF_ERROR(lengths(a->padding, 2 * x.size(), "padding"));
  if (y.size() != x.size()) return invalid_argument("output " + text(y) + " has a different rank from input " + text(x));
  for (int64_t p : a->padding)
    if (p < 0 || p > (int64_t{1} << 30)) return invalid_argument("padding " + text(a->padding) + " is outside [0, 2^30]");
  for (size_t d = 0; d < x.size(); ++d)
    if (y[d] != x[d] + a->padding[2 * d] + a->padding[2 * d + 1])
      return invalid_argument("padding " + text(a->padding) + " does not take input " + text(x) + " to output " + text(y));
  return Status::ok();
}

// resize: input [N, IH, IW, C], taps [OH, 3] and [OW, 3] (each row: first
// source index, second source index, weight of the second), output [N, OH,
// OW, C]. The taps carry the coordinate transformation; the shader clamps
// their indices into the input.
Status check_resize(const Operator& op, const Operands& s) {
  HS_RETURN_IF_ERROR(arity(op, 3, 3, 1));
  HS_RETURN_IF_ERROR(attr_of<ResizeAttr>(op, "resize").status());
  const Shape64 &x = s.i(0), &ty = s.i(1), &tx = s.i(2), &y = s.o(0);
  if (x.size() != 4 || y.size() != 4 || y[0] != x[0] || y[3] != x[3])
    return invalid_argument("expects NHWC input and output with the same N and C, got " + text(x) + " and " + text(y));
  if (ty != Shape64{y[1], 3} || tx != Shape64{y[2], 3})
    return invalid_argument("tap tables " + text(ty) + " and " + text(tx) + " do not match output " + text(y));
  return Status::ok();
}

Status check_reduce(const Operator& op, const Operands& s) {
  HS_RETURN_IF_ERROR(arity(op, 1, 1, 1));
  HS_ASSIGN_OR_RETURN(const AxisAttr* a, attr_of<AxisAttr>(op, "axis"));
  const Shape64 &x = s.i(0), &y = s.o(0);
  HS_RETURN_IF_ERROR(check_axis(*a, x.size()));
  Shape64 want = x;
  want[a->axis] = 1;
  if (y != want) return invalid_argument("output " + text(y) + " is not input " + text(x) + " reduced along axis " + std::to_string(a->axis));
  return Status::ok();
}

int64_t elements(const Shape64& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

}  // namespace

Status check_operator(const Operator& op, const std::vector<Resource>& resources) {
  Operands s;
  for (uint32_t id : op.inputs) s.in.push_back(&resources[id].shape);
  for (uint32_t id : op.outputs) s.out.push_back(&resources[id].shape);
  // The shaders read and write f32, except cast's other side: an operator
  // on a resource of another dtype would read past its end.
  if (op.op == OpCode::kCast) {
    HS_RETURN_IF_ERROR(arity(op, 1, 1, 1));
    HS_RETURN_IF_ERROR(require_no_attr(op));
    const DType from = resources[op.inputs[0]].dtype, to = resources[op.outputs[0]].dtype;
    // f16 and bf16 only with f32 (their shaders); f32, i32, i64 and bool
    // among themselves.
    const bool half = is_half_float(from) || is_half_float(to);
    if (from == to || (half && from != DType::kFloat32 && to != DType::kFloat32))
      return invalid_argument("cast from " + std::string(dtype_name(from)) + " to " + std::string(dtype_name(to)) +
                              ": casts go between f16 or bf16 and f32, or between two of f32, i32, i64 and bool");
    return same_shape(s.i(0), s.o(0), "output");
  }
  for (const auto* ids : {&op.inputs, &op.outputs})
    for (uint32_t id : *ids)
      if (resources[id].dtype != DType::kFloat32)
        return invalid_argument("resource " + std::to_string(id) + " is " + std::string(dtype_name(resources[id].dtype)) +
                                ": only cast reads or writes a dtype other than f32");
  switch (op.op) {
    case OpCode::kConv2d:
    case OpCode::kTransposeConv2d:
      return check_conv(op, s, false);
    case OpCode::kDepthwiseConv2d:
      return check_conv(op, s, true);
    case OpCode::kMatmul:
      return check_matmul(op, s);
    case OpCode::kAvgPool2d:
    case OpCode::kMaxPool2d:
      return check_pool(op, s);
    case OpCode::kTranspose:
      return check_transpose(op, s);
    case OpCode::kReshape:
      HS_RETURN_IF_ERROR(arity(op, 1, 1, 1));
      HS_RETURN_IF_ERROR(require_no_attr(op));
      if (elements(s.i(0)) != elements(s.o(0)))
        return invalid_argument("input " + text(s.i(0)) + " and output " + text(s.o(0)) + " differ in element count");
      return Status::ok();
    case OpCode::kConcat:
      return check_concat(op, s);
    case OpCode::kSlice:
      return check_slice(op, s);
    case OpCode::kPad:
      return check_pad(op, s);
    case OpCode::kResize:
      return check_resize(op, s);
    case OpCode::kReduceSum:
    case OpCode::kReduceMax:
      return check_reduce(op, s);
    case OpCode::kClamp:
      HS_RETURN_IF_ERROR(arity(op, 1, 1, 1));
      HS_RETURN_IF_ERROR(attr_of<ClampAttr>(op, "clamp").status());
      return same_shape(s.i(0), s.o(0), "output");
    case OpCode::kTile:
      HS_RETURN_IF_ERROR(arity(op, 1, 1, 1));
      HS_RETURN_IF_ERROR(require_no_attr(op));
      return check_tile(s);
    case OpCode::kSelect:
      HS_RETURN_IF_ERROR(arity(op, 3, 3, 1));
      HS_RETURN_IF_ERROR(require_no_attr(op));
      return check_select(s);
    default:
      break;
  }
  if (is_binary(op.op)) {
    HS_RETURN_IF_ERROR(arity(op, 2, 2, 1));
    HS_RETURN_IF_ERROR(require_no_attr(op));
    return check_binary(s);
  }
  HS_RETURN_IF_ERROR(arity(op, 1, 1, 1));
  HS_RETURN_IF_ERROR(require_no_attr(op));
  return same_shape(s.i(0), s.o(0), "output");
}

}  // namespace hetsched::vgf
