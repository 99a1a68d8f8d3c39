#include "delegates/vgf/dispatch_plan.h"

#include <bit>
#include <cstring>

#include "delegates/vgf/tosa_ops.h"

namespace hetsched::vgf {

std::string_view kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::kUnary: return "unary";
    case Kernel::kBinary: return "binary";
    case Kernel::kCopy: return "copy";
    case Kernel::kPad: return "pad";
    case Kernel::kConv2d: return "conv2d";
    case Kernel::kDepthwiseConv2d: return "depthwise_conv2d";
    case Kernel::kPool2d: return "pool2d";
    case Kernel::kMatmul: return "matmul";
    case Kernel::kReduce: return "reduce";
    case Kernel::kResize: return "resize";
    case Kernel::kSelect: return "select";
    case Kernel::kTransposeConv2d: return "transpose_conv2d";
    case Kernel::kCastF16ToF32: return "cast_f16_to_f32";
    case Kernel::kCastF32ToF16: return "cast_f32_to_f16";
    case Kernel::kCastWords: return "cast_words";
    case Kernel::kCastToBool: return "cast_to_bool";
    case Kernel::kCastFromBool: return "cast_from_bool";
    case Kernel::kCustom: return "custom";
  }
  return "unknown";
}

uint32_t kernel_binding_count(Kernel kernel) {
  switch (kernel) {
    case Kernel::kBinary:
    case Kernel::kMatmul:
      return 3;
    case Kernel::kConv2d:
    case Kernel::kDepthwiseConv2d:
    case Kernel::kTransposeConv2d:
    case Kernel::kResize:
    case Kernel::kSelect:
      return 4;
    default:
      return 2;
  }
}

// The word counts of the push-constant blocks in shaders/*.comp.
uint32_t kernel_push_words(Kernel kernel) {
  switch (kernel) {
    case Kernel::kUnary: return 4;
    case Kernel::kBinary:
    case Kernel::kCopy:
    case Kernel::kPad:
      return 4 + 3 * kMaxRank;
    case Kernel::kConv2d:
    case Kernel::kDepthwiseConv2d:
    case Kernel::kTransposeConv2d:
      return 17;
    case Kernel::kPool2d: return 14;
    case Kernel::kMatmul: return 20;
    case Kernel::kReduce: return 5;
    case Kernel::kResize: return 8;
    case Kernel::kSelect: return 2 + 4 * kMaxRank;
    case Kernel::kCastF16ToF32:
    case Kernel::kCastF32ToF16: return 2;
    case Kernel::kCastWords:
    case Kernel::kCastToBool:
    case Kernel::kCastFromBool: return 3;
    case Kernel::kCustom: return 0;
  }
  return 0;
}

std::array<uint32_t, 3> element_groups(uint64_t elements) {
  constexpr uint64_t kMaxX = 65535;
  const uint64_t groups = std::max<uint64_t>(1, (elements + kWorkgroupSize - 1) / kWorkgroupSize);
  const uint64_t x = std::min(groups, kMaxX);
  return {static_cast<uint32_t>(x), static_cast<uint32_t>((groups + x - 1) / x), 1};
}

namespace {

// Codes of unary.comp's `op`.
enum UnaryCode : uint32_t {
  kCopyCode = 0,
  kAbsCode,
  kNegCode,
  kSinCode,
  kCosCode,
  kExpCode,
  kReciprocalCode,
  kRsqrtCode,
  kSigmoidCode,
  kTanhCode,
  kClampCode,
  kLogCode,
  kFloorCode,
  kCeilCode,
  kErfCode,
};

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }
uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

// Pads a per-dim list to the shaders' kMaxRank slots.
void put_dims(std::vector<uint32_t>& push, const std::vector<int64_t>& dims) {
  for (size_t d = 0; d < kMaxRank; ++d) push.push_back(d < dims.size() ? u32(dims[d]) : 0u);
}

// Dense strides with 0 for the dims of size 1, which broadcast.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides = dense_strides(shape);
  for (size_t d = 0; d < strides.size(); ++d)
    if (shape[d] == 1) strides[d] = 0;
  return strides;
}

class Planner {
 public:
  explicit Planner(const VgfFile& file) : file_(file) {}

  std::vector<SegmentDispatches> run() {
    std::vector<SegmentDispatches> out;
    for (size_t si = 0; si < file_.segments.size(); ++si) {
      const Segment& s = file_.segments[si];
      SegmentDispatches seg{s.name, {}};
      const Module& m = file_.modules[s.module];
      if (s.type == ModuleType::kCompute) {
        Dispatch d;
        d.kernel = Kernel::kCustom;
        d.module = s.module;
        d.bindings = s.inputs;
        d.bindings.insert(d.bindings.end(), s.outputs.begin(), s.outputs.end());
        d.push = s.push_constants;
        d.groups = {s.dispatch[0], s.dispatch[1], s.dispatch[2]};
        d.label = "segment " + std::to_string(si) + " (compute '" + m.name + "')";
        seg.dispatches.push_back(std::move(d));
      } else {
        for (size_t oi = 0; oi < m.ops.size(); ++oi) {
          const Operator& op = m.ops[oi];
          label_ = "segment " + std::to_string(si) + " operator " + std::to_string(oi) + " (" +
                   std::string(op_name(op.op)) + (op.name.empty() ? "" : " '" + op.name + "'") + ")";
          plan_op(op, seg.dispatches);
        }
      }
      out.push_back(std::move(seg));
    }
    return out;
  }

 private:
  const Resource& res(uint32_t id) const { return file_.resources[id]; }
  const std::vector<int64_t>& shape(uint32_t id) const { return file_.resources[id].shape; }

  void add(std::vector<Dispatch>& out, Kernel kernel, std::vector<uint32_t> bindings, std::vector<uint32_t> push,
           uint64_t elements) {
    Dispatch d;
    d.kernel = kernel;
    d.bindings = std::move(bindings);
    d.push = std::move(push);
    d.groups = element_groups(elements);
    d.label = label_;
    out.push_back(std::move(d));
  }

  // One strided copy over `iter`.
  void copy(std::vector<Dispatch>& out, uint32_t src, uint32_t dst, const std::vector<int64_t>& iter, int64_t src_offset,
            const std::vector<int64_t>& src_strides, int64_t dst_offset, const std::vector<int64_t>& dst_strides) {
    int64_t count = 1;
    for (int64_t d : iter) count *= d;
    std::vector<uint32_t> push = {u32(count), u32(static_cast<int64_t>(iter.size())), u32(src_offset), u32(dst_offset)};
    put_dims(push, iter);
    put_dims(push, src_strides);
    put_dims(push, dst_strides);
    add(out, Kernel::kCopy, {src, dst}, std::move(push), static_cast<uint64_t>(count));
  }

  void plan_op(const Operator& op, std::vector<Dispatch>& out) {
    const uint32_t y = op.outputs[0];
    const uint32_t x = op.inputs[0];
    const uint64_t count = static_cast<uint64_t>(res(y).elements());
    if (op.op == OpCode::kCast) {
      const DType from = res(x).dtype, to = res(y).dtype;
      if (is_half_float(from) || is_half_float(to)) {
        const Kernel k = is_half_float(from) ? Kernel::kCastF16ToF32 : Kernel::kCastF32ToF16;
        const uint32_t bf16 = from == DType::kBFloat16 || to == DType::kBFloat16 ? 1 : 0;
        add(out, k, {x, y}, {u32(res(y).elements()), bf16}, count);
        return;
      }
      // The word kinds of shared_gpu/shaders/cast_bits.glsl.
      auto kind = [](DType d) -> uint32_t { return d == DType::kInt32 ? 1 : d == DType::kInt64 ? 2 : 0; };
      const Kernel k = to == DType::kBool     ? Kernel::kCastToBool
                       : from == DType::kBool ? Kernel::kCastFromBool
                                              : Kernel::kCastWords;
      add(out, k, {x, y}, {u32(res(y).elements()), kind(from), kind(to)}, count);
      return;
    }
    if (is_unary(op.op)) {
      float lo = 0.f, hi = 0.f;
      if (const auto* c = std::get_if<ClampAttr>(&op.attr)) {
        lo = c->min;
        hi = c->max;
      }
      add(out, Kernel::kUnary, {x, y}, {u32(res(y).elements()), unary_code(op.op), bits(lo), bits(hi)}, count);
      return;
    }
    if (is_binary(op.op)) {
      const uint32_t code = op.op == OpCode::kAdd ? 0 : op.op == OpCode::kSub ? 1 : op.op == OpCode::kMul ? 2 : 3;
      const std::vector<int64_t>& out_shape = shape(y);
      std::vector<uint32_t> push = {u32(res(y).elements()), code, u32(static_cast<int64_t>(out_shape.size())), 0};
      put_dims(push, out_shape);
      for (uint32_t in : {op.inputs[0], op.inputs[1]}) put_dims(push, broadcast_strides(shape(in)));
      add(out, Kernel::kBinary, {op.inputs[0], op.inputs[1], y}, std::move(push), count);
      return;
    }
    if (op.op == OpCode::kSelect) {
      const std::vector<int64_t>& out_shape = shape(y);
      std::vector<uint32_t> push = {u32(res(y).elements()), u32(static_cast<int64_t>(out_shape.size()))};
      put_dims(push, out_shape);
      for (uint32_t in : op.inputs) put_dims(push, broadcast_strides(shape(in)));
      add(out, Kernel::kSelect, {op.inputs[0], op.inputs[1], op.inputs[2], y}, std::move(push), count);
      return;
    }
    switch (op.op) {
      case OpCode::kReshape:
        if (res(x).alias_group >= 0 && res(x).alias_group == res(y).alias_group) return;
        add(out, Kernel::kUnary, {x, y}, {u32(res(y).elements()), kCopyCode, 0, 0}, count);
        return;
      case OpCode::kTranspose: {
        const auto& perms = std::get<TransposeAttr>(op.attr).perms;
        const std::vector<int64_t> in_strides = dense_strides(shape(x));
        std::vector<int64_t> src(perms.size());
        for (size_t i = 0; i < perms.size(); ++i) src[i] = in_strides[perms[i]];
        copy(out, x, y, shape(y), 0, src, 0, dense_strides(shape(y)));
        return;
      }
      case OpCode::kSlice: {
        const auto& a = std::get<SliceAttr>(op.attr);
        const std::vector<int64_t> in_strides = dense_strides(shape(x));
        int64_t offset = 0;
        std::vector<int64_t> src(in_strides.size());
        for (size_t d = 0; d < in_strides.size(); ++d) {
          offset += a.start[d] * in_strides[d];
          src[d] = a.stride[d] * in_strides[d];
        }
        copy(out, x, y, shape(y), offset, src, 0, dense_strides(shape(y)));
        return;
      }
      case OpCode::kTile: {
        // Output dim d of multiple m over input dim n is walked as (m, n):
        // the first with source stride 0; dims not repeated (or of size 1) as one.
        const std::vector<int64_t> in_strides = dense_strides(shape(x));
        std::vector<int64_t> iter, src;
        for (size_t d = 0; d < in_strides.size(); ++d) {
          const int64_t n = shape(x)[d], m = shape(y)[d] / n;
          if (m > 1) {
            iter.push_back(m);
            src.push_back(0);
          }
          if (m == 1 || n > 1) {
            iter.push_back(n);
            src.push_back(n > 1 ? in_strides[d] : 0);
          }
        }
        copy(out, x, y, iter, 0, src, 0, dense_strides(iter));
        return;
      }
      case OpCode::kConcat: {
        const int32_t axis = std::get<AxisAttr>(op.attr).axis;
        const std::vector<int64_t> out_strides = dense_strides(shape(y));
        int64_t at = 0;
        for (uint32_t in : op.inputs) {
          copy(out, in, y, shape(in), 0, dense_strides(shape(in)), at * out_strides[axis], out_strides);
          at += shape(in)[axis];
        }
        return;
      }
      case OpCode::kPad: {
        const auto& a = std::get<PadAttr>(op.attr);
        std::vector<uint32_t> push = {u32(res(y).elements()), u32(static_cast<int64_t>(shape(y).size())), bits(a.pad_const), 0};
        std::vector<int64_t> before;
        for (size_t d = 0; d < shape(x).size(); ++d) before.push_back(a.padding[2 * d]);
        put_dims(push, shape(y));
        put_dims(push, before);
        put_dims(push, shape(x));
        add(out, Kernel::kPad, {x, y}, std::move(push), count);
        return;
      }
      case OpCode::kConv2d:
      case OpCode::kDepthwiseConv2d:
      case OpCode::kTransposeConv2d: {
        const auto& a = std::get<ConvAttr>(op.attr);
        const bool depthwise = op.op == OpCode::kDepthwiseConv2d;
        const auto &xs = shape(x), &ws = shape(op.inputs[1]), &ys = shape(y);
        const int64_t kh = depthwise ? ws[0] : ws[1], kw = depthwise ? ws[1] : ws[2];
        std::vector<uint32_t> push = {u32(xs[0]), u32(xs[1]), u32(xs[2]), u32(xs[3]), u32(ys[1]), u32(ys[2]),
                                      u32(ys[3]), u32(kh), u32(kw), u32(a.stride[0]), u32(a.stride[1]),
                                      u32(a.dilation[0]), u32(a.dilation[1]), u32(a.pad[0]), u32(a.pad[2]),
                                      depthwise ? u32(ws[3]) : 1u, u32(res(y).elements())};
        const Kernel kernel = depthwise ? Kernel::kDepthwiseConv2d
                              : op.op == OpCode::kTransposeConv2d ? Kernel::kTransposeConv2d : Kernel::kConv2d;
        add(out, kernel, {x, op.inputs[1], op.inputs[2], y},
            std::move(push), count);
        return;
      }
      case OpCode::kAvgPool2d:
      case OpCode::kMaxPool2d: {
        const auto& a = std::get<PoolAttr>(op.attr);
        const auto &xs = shape(x), &ys = shape(y);
        std::vector<uint32_t> push = {u32(xs[0]),       u32(xs[1]),       u32(xs[2]),    u32(xs[3]),
                                      u32(ys[1]),       u32(ys[2]),       u32(a.kernel[0]), u32(a.kernel[1]),
                                      u32(a.stride[0]), u32(a.stride[1]), u32(a.pad[0]), u32(a.pad[2]),
                                      op.op == OpCode::kMaxPool2d ? 1u : 0u, u32(res(y).elements())};
        add(out, Kernel::kPool2d, {x, y}, std::move(push), count);
        return;
      }
      case OpCode::kMatmul: {
        const uint32_t b = op.inputs[1];
        const auto &as = shape(x), &bs = shape(b), &ys = shape(y);
        const size_t r = ys.size();
        std::vector<uint32_t> push = {u32(as[r - 2]), u32(bs[r - 1]), u32(as[r - 1]), u32(static_cast<int64_t>(r - 2)),
                                      u32(res(y).elements()), 0, 0, 0};
        const std::vector<int64_t> sa = dense_strides(as), sb = dense_strides(bs);
        std::vector<int64_t> batch, stride_a, stride_b;
        for (size_t d = 0; d + 2 < r; ++d) {
          batch.push_back(ys[d]);
          stride_a.push_back(as[d] == 1 ? 0 : sa[d]);
          stride_b.push_back(bs[d] == 1 ? 0 : sb[d]);
        }
        for (const auto* v : {&batch, &stride_a, &stride_b})
          for (size_t d = 0; d < 4; ++d) push.push_back(d < v->size() ? u32((*v)[d]) : 0u);
        add(out, Kernel::kMatmul, {x, b, y}, std::move(push), count);
        return;
      }
      case OpCode::kReduceSum:
      case OpCode::kReduceMax: {
        const int32_t axis = std::get<AxisAttr>(op.attr).axis;
        const auto& xs = shape(x);
        int64_t outer = 1, inner = 1;
        for (size_t d = 0; d < xs.size(); ++d) {
          if (static_cast<int32_t>(d) < axis) outer *= xs[d];
          if (static_cast<int32_t>(d) > axis) inner *= xs[d];
        }
        add(out, Kernel::kReduce, {x, y},
            {u32(outer), u32(xs[axis]), u32(inner), op.op == OpCode::kReduceMax ? 1u : 0u, u32(res(y).elements())}, count);
        return;
      }
      case OpCode::kResize: {
        const bool bilinear = std::get<ResizeAttr>(op.attr).mode == ResizeMode::kBilinear;
        const auto &xs = shape(x), &ys = shape(y);
        add(out, Kernel::kResize, {x, op.inputs[1], op.inputs[2], y},
            {u32(xs[0]), u32(xs[1]), u32(xs[2]), u32(xs[3]), u32(ys[1]), u32(ys[2]), bilinear ? 1u : 0u,
             u32(res(y).elements())},
            count);
        return;
      }
      default:
        return;
    }
  }

  static uint32_t unary_code(OpCode op) {
    switch (op) {
      case OpCode::kAbs: return kAbsCode;
      case OpCode::kNeg: return kNegCode;
      case OpCode::kSin: return kSinCode;
      case OpCode::kCos: return kCosCode;
      case OpCode::kExp: return kExpCode;
      case OpCode::kReciprocal: return kReciprocalCode;
      case OpCode::kRsqrt: return kRsqrtCode;
      case OpCode::kSigmoid: return kSigmoidCode;
      case OpCode::kTanh: return kTanhCode;
      case OpCode::kClamp: return kClampCode;
      case OpCode::kLog: return kLogCode;
      case OpCode::kFloor: return kFloorCode;
      case OpCode::kCeil: return kCeilCode;
      case OpCode::kErf: return kErfCode;
      default: return kCopyCode;
    }
  }

  const VgfFile& file_;
  std::string label_;
};

}  // namespace

std::vector<SegmentDispatches> plan_dispatches(const VgfFile& file) { return Planner(file).run(); }

}  // namespace hetsched::vgf
