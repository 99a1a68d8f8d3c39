#include "delegates/vgf/dispatch_plan.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "delegates/vgf/epilogue_fusion.h"
#include "delegates/vgf/tosa_ops.h"
#include "shared_gpu/conv_kernel.h"

namespace hetsched::vgf {

std::string_view kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::kUnary: return "unary";
    case Kernel::kBinary: return "binary";
    case Kernel::kCopy: return "copy";
    case Kernel::kPad: return "pad";
    case Kernel::kConv2d: return "conv2d";
    case Kernel::kConv2dCoopmat: return "conv2d_coopmat";
    case Kernel::kSeScale: return "se_scale";
    case Kernel::kPointwiseConv: return "pointwise_conv";
    case Kernel::kDepthwiseMean: return "depthwise_mean";
    case Kernel::kConv2dReduce: return "conv2d_reduce";
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

namespace {
// The tail the element-wise kernels end in (shaders/tail.glsl): channels
// (0: no affine), epilogue ops, four epilogue parameters.
constexpr uint32_t kTailWords = 6;
}  // namespace

uint32_t kernel_binding_count(Kernel kernel) {
  switch (kernel) {
    case Kernel::kUnary:
    case Kernel::kReduce:
    case Kernel::kMatmul:
      return 3;
    case Kernel::kBinary: return 4;
    case Kernel::kConv2d:
    case Kernel::kConv2dCoopmat: return gpu::kConv2dBindings;
    case Kernel::kConv2dReduce: return gpu::kConv2dReduceBindings;
    case Kernel::kDepthwiseConv2d: return gpu::kDepthwiseConv2dBindings;
    case Kernel::kSeScale: return gpu::kSeScaleBindings;
    case Kernel::kPointwiseConv: return gpu::kPointwiseBindings;
    case Kernel::kDepthwiseMean: return gpu::kDepthwiseMeanBindings;
    case Kernel::kTransposeConv2d:
    case Kernel::kResize:
    case Kernel::kSelect:
      return 4;
    default:
      return 2;
  }
}

uint32_t kernel_half_capable_bindings(Kernel kernel) {
  constexpr auto bit = [](uint32_t b) { return uint32_t{1} << b; };
  switch (kernel) {
    case Kernel::kUnary:
    case Kernel::kReduce: return bit(0) | bit(2);  // x, y (1: the affine)
    case Kernel::kBinary: return bit(0) | bit(1) | bit(3);
    case Kernel::kCopy:
    case Kernel::kPad:
    case Kernel::kPool2d: return bit(0) | bit(1);
    case Kernel::kMatmul: return bit(0) | bit(1) | bit(2);  // B may be a run-time tensor (attention)
    case Kernel::kSelect: return bit(0) | bit(1) | bit(2) | bit(3);
    case Kernel::kResize:
    case Kernel::kTransposeConv2d: return bit(0) | bit(3);  // 1, 2: constant taps, weights, bias
    // shared_gpu/conv_kernel.h: X, Y and the residual; the reduce's Y and residual.
    case Kernel::kConv2d:
    case Kernel::kConv2dCoopmat: return bit(0) | bit(3) | bit(5);
    case Kernel::kConv2dReduce: return bit(2) | bit(3);
    case Kernel::kDepthwiseConv2d: return bit(0) | bit(3);
    case Kernel::kSeScale: return bit(0) | bit(1) | bit(3);  // X, the means, Y (2: the packed weights)
    case Kernel::kPointwiseConv: return bit(0) | bit(3) | bit(4);  // X, Y, the residual
    case Kernel::kDepthwiseMean: return bit(0) | bit(3) | bit(4);  // X, Y, the means
    default: return 0;
  }
}

// The word counts of the push-constant blocks in shaders/*.comp (and of
// the shared conv kernels' ConvPush).
uint32_t kernel_push_words(Kernel kernel) {
  switch (kernel) {
    // The element-wise kernels end in their folded tail: channels,
    // epilogue ops and four epilogue parameters (Planner::tail_of).
    case Kernel::kUnary: return 4 + kTailWords;
    case Kernel::kBinary: return 4 + 3 * kMaxRank + kTailWords - 1;
    case Kernel::kCopy:
    case Kernel::kPad:
      return 4 + 3 * kMaxRank;
    case Kernel::kConv2d:
    case Kernel::kConv2dCoopmat:
    case Kernel::kConv2dReduce:
    case Kernel::kDepthwiseConv2d:
    case Kernel::kDepthwiseMean:
      return sizeof(gpu::ConvPush) / sizeof(uint32_t);
    case Kernel::kTransposeConv2d: return 17;
    case Kernel::kSeScale: return sizeof(gpu::SeScalePush) / sizeof(uint32_t);
    case Kernel::kPointwiseConv: return sizeof(gpu::PointwisePush) / sizeof(uint32_t);
    case Kernel::kPool2d: return 14;
    case Kernel::kMatmul: return 20;
    case Kernel::kReduce: return 6 + kTailWords;
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

size_t DispatchPlan::dispatch_count() const {
  size_t n = 0;
  for (const SegmentDispatches& s : segments) n += s.dispatches.size();
  return n;
}

namespace {

// Workgroups of `size` invocations for one invocation per element: x up
// to 65535, the rest in y.
std::array<uint32_t, 3> groups_of(uint64_t elements, uint64_t size) {
  constexpr uint64_t kMaxX = 65535;
  const uint64_t groups = std::max<uint64_t>(1, (elements + size - 1) / size);
  const uint64_t x = std::min(groups, kMaxX);
  return {static_cast<uint32_t>(x), static_cast<uint32_t>((groups + x - 1) / x), 1};
}

template <class T>
std::vector<uint32_t> words_of(const std::vector<T>& v) {
  static_assert(sizeof(T) == sizeof(uint32_t));
  std::vector<uint32_t> w(v.size());
  std::memcpy(w.data(), v.data(), v.size() * sizeof(uint32_t));
  return w;
}

template <class T>
std::vector<uint32_t> words_of_struct(const T& t) {
  static_assert(sizeof(T) % sizeof(uint32_t) == 0);
  std::vector<uint32_t> w(sizeof(T) / sizeof(uint32_t));
  std::memcpy(w.data(), &t, sizeof(T));
  return w;
}

}  // namespace

std::array<uint32_t, 3> element_groups(uint64_t elements) { return groups_of(elements, kWorkgroupSize); }

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

// Tensor-core conv tiles keep at most this many channels: two accumulator
// fragments per subgroup (delegates/vulkan/lowering.cc's kCoopmatTile
// has the H100 figures).
constexpr uint32_t kCoopmatTileChannels = 64;

class Planner {
 public:
  Planner(const VgfFile& file, const std::optional<gpu::CoopMatConv>& coopmat) : file_(file), coopmat_(coopmat) {}

  // Walks the file's operators and compute segments in execution order;
  // a convolution may fold the items after it (fuse_tail), which then
  // plan nothing of their own.
  DispatchPlan run() {
    DispatchPlan plan;
    plan_ = &plan;
    readers_ = count_readers(file_);
    for (size_t si = 0; si < file_.segments.size(); ++si) {
      const Segment& s = file_.segments[si];
      plan.segments.push_back({s.name, {}});
      if (s.type == ModuleType::kCompute) {
        items_.push_back({static_cast<uint32_t>(si), nullptr});
        continue;
      }
      for (const Operator& op : file_.modules[s.module].ops) items_.push_back({static_cast<uint32_t>(si), &op});
    }
    for (size_t i = 0; i < items_.size(); ++i) {
      const uint32_t si = items_[i].segment;
      const Segment& s = file_.segments[si];
      const Module& m = file_.modules[s.module];
      std::vector<Dispatch>& out = plan.segments[si].dispatches;
      if (!items_[i].op) {
        Dispatch d;
        d.kernel = Kernel::kCustom;
        d.module = s.module;
        d.bindings = s.inputs;
        d.bindings.insert(d.bindings.end(), s.outputs.begin(), s.outputs.end());
        d.writes = s.outputs;
        d.push = s.push_constants;
        d.groups = {s.dispatch[0], s.dispatch[1], s.dispatch[2]};
        d.label = "segment " + std::to_string(si) + " (compute '" + m.name + "')";
        d.nodes = {s.name};
        d.ops = {m.name};
        out.push_back(std::move(d));
        continue;
      }
      const Operator& op = *items_[i].op;
      const size_t oi = static_cast<size_t>(&op - m.ops.data());
      label_ = "segment " + std::to_string(si) + " operator " + std::to_string(oi) + " (" +
               std::string(op_name(op.op)) + (op.name.empty() ? "" : " '" + op.name + "'") + ")";
      op_ = &op;
      i += plan_op(i, op, out);
    }
    for (SegmentDispatches& seg : plan.segments)
      for (Dispatch& d : seg.dispatches) d.half_bindings = half_bindings_of(d);
    return plan;
  }

 private:
  const Resource& res(uint32_t id) const { return file_.resources[id]; }

  // The bindings of `d` whose resources are f16 where its kernel takes
  // f16. Derived buffers (past the resources) are f32.
  uint32_t half_bindings_of(const Dispatch& d) const {
    if (d.kernel == Kernel::kCustom) return 0;
    const uint32_t capable = kernel_half_capable_bindings(d.kernel);
    uint32_t mask = 0;
    for (size_t b = 0; b < d.bindings.size() && b < 32; ++b) {
      const uint32_t id = d.bindings[b];
      if ((capable >> b & 1u) != 0 && id < file_.resources.size() && res(id).dtype == DType::kFloat16)
        mask |= uint32_t{1} << b;
    }
    return mask;
  }
  const std::vector<int64_t>& shape(uint32_t id) const { return file_.resources[id].shape; }

  void add(std::vector<Dispatch>& out, Kernel kernel, std::vector<uint32_t> bindings, std::vector<uint32_t> push,
           uint64_t elements) {
    Dispatch d;
    d.kernel = kernel;
    // Every built-in shader but the conv kernels writes its last binding.
    d.writes = {bindings.back()};
    d.bindings = std::move(bindings);
    d.push = std::move(push);
    d.groups = element_groups(elements);
    d.label = label_;
    d.nodes = {op_->name};
    d.ops = {std::string(op_name(op_->op))};
    out.push_back(std::move(d));
  }

  uint32_t derive(DerivedBuffer buffer) {
    plan_->derived.push_back(std::move(buffer));
    return static_cast<uint32_t>(file_.resources.size() + plan_->derived.size() - 1);
  }

  std::vector<float> floats(uint32_t id) const {
    const Resource& r = res(id);
    std::vector<float> v(static_cast<size_t>(r.elements()));
    std::memcpy(v.data(), file_.constants.data() + r.constant_offset, v.size() * sizeof(float));
    return v;
  }

  // The shared conv kernels on NHWC tensors, for a conv2d, a
  // depthwise_conv2d or (as a 1x1 conv over its rows) a matmul by constant
  // weights; `weight(oc, c, tap)` reads the file's weights in ONNX order.
  // Returns the items folded into it.
  template <class WeightAt>
  size_t conv(size_t item, gpu::ConvPush p, uint32_t x, uint32_t y, std::vector<float> bias, WeightAt weight,
              std::vector<Dispatch>& out) {
    // depthwise_conv2d.comp has no residual binding.
    const FusedTail tail =
        fuse_tail(file_, items_, item, y, p.out_channels, readers_, op_->op != OpCode::kDepthwiseConv2d);
    for (size_t c = 0; c < bias.size(); ++c) bias[c] = bias[c] * tail.scale[c] + tail.shift[c];
    p.has_bias = 1;
    p.epilogue_ops = tail.epilogue_ops;
    std::memcpy(p.epilogue_params, tail.epilogue_params, sizeof(p.epilogue_params));
    p.has_residual = tail.residual ? 1 : 0;
    const auto scaled = [&](int64_t oc, int64_t c, int64_t tap) { return weight(oc, c, tap) * tail.scale[oc]; };
    const std::string name = op_->name.empty() ? label_ : op_->name;
    const uint32_t b = derive({name + "/bias", words_of(bias), 0});
    const std::vector<uint32_t> push = words_of_struct(p);
    Dispatch d;
    d.push = push;
    d.label = label_;
    d.nodes = {op_->name};
    d.ops = {std::string(op_name(op_->op))};
    for (size_t i = 0; i < tail.nodes.size(); ++i) {
      // A Gemm's matmul and bias add are one node: named once.
      if (tail.nodes[i] == d.nodes.back()) continue;
      d.nodes.push_back(tail.nodes[i]);
      d.ops.push_back(tail.ops[i]);
    }
    if (op_->op == OpCode::kDepthwiseConv2d) {
      // depthwise_conv2d.comp reads [tap][out channel] in NHWC (the file's
      // [KH, KW, C, M], scaled).
      const int64_t taps = int64_t{p.kernel_h} * p.kernel_w;
      std::vector<float> w(static_cast<size_t>(p.out_channels * taps));
      for (int64_t oc = 0; oc < p.out_channels; ++oc)
        for (int64_t tap = 0; tap < taps; ++tap) w[static_cast<size_t>(tap * p.out_channels + oc)] = scaled(oc, 0, tap);
      d.kernel = Kernel::kDepthwiseConv2d;
      d.bindings = {x, derive({name + "/weights", words_of(w), 0}), b, tail.output};
      d.writes = {tail.output};
      d.specialization = {1};  // NHWC
      d.groups = groups_of(static_cast<uint64_t>(res(tail.output).elements()), gpu::kConvGroupSize);
      out.push_back(std::move(d));
      return tail.items;
    }
    if (gpu::pointwise_fits(p)) {
      // One dispatch, K split inside the workgroup; without a residual the
      // bias stands in, unread.
      const gpu::PointwisePush q = gpu::pointwise_push(p, true, tail.residual.has_value());
      const uint32_t slices = gpu::pointwise_slices(q);
      const std::vector<float> w = gpu::pointwise_weights(p, [&](int64_t oc, int64_t c) { return scaled(oc, c, 0); });
      d.kernel = Kernel::kPointwiseConv;
      d.push = words_of_struct(q);
      d.bindings = {x, derive({name + "/weights", words_of(w), 0}), b, tail.output, tail.residual.value_or(b)};
      d.writes = {tail.output};
      d.specialization = {slices, 1};  // NHWC
      d.groups = gpu::pointwise_workgroups(q, slices);
      out.push_back(std::move(d));
      return tail.items;
    }
    const gpu::ConvGemmShape gemm = gpu::conv_gemm_shape(p);
    const gpu::ConvTiling tiling =
        gpu::clamp_conv_tiling(gpu::choose_conv_tiling(gemm, coopmat_ ? kCoopmatTileChannels : 128), gemm);
    const uint64_t arranged_bytes = static_cast<uint64_t>(gemm.groups * gpu::conv_k_steps(gemm) * gpu::kConvTileK) *
                                    ((gemm.group_out + tiling.tile_channels - 1) / tiling.tile_channels) *
                                    tiling.tile_channels * sizeof(float);
    DerivedBuffer weights{name + "/weights", {}, 0};
    if (arranged_bytes > kMaxDerivedBytes)
      weights.oversized_bytes = arranged_bytes;
    else
      weights.words = words_of(gpu::arrange_conv_weights(p, tiling, scaled));
    const uint32_t w = derive(std::move(weights));
    // Tap-major convs need no table: the weights stand in (read-only, unread).
    const std::vector<uint32_t> table = gpu::conv_taps(p, gpu::ConvLayout::kNhwc);
    const uint32_t taps = table.empty() ? w : derive({name + "/taps", table, 0});
    d.kernel = Kernel::kConv2d;
    d.specialization = words_of_struct(gpu::conv_specialization(p, tiling, gpu::ConvLayout::kNhwc));
    if (coopmat_) {
      const std::vector<uint32_t> tensor_cores =
          gpu::coopmat_specialization(*coopmat_, tiling.tile_channels, tiling.tile_pixels);
      if (!tensor_cores.empty()) {
        d.kernel = Kernel::kConv2dCoopmat;
        d.specialization.insert(d.specialization.end(), tensor_cores.begin(), tensor_cores.end());
      }
    }
    d.groups = gpu::conv_workgroups(p, tiling);
    if (tiling.splits == 1) {
      // Without a residual the weights stand in, unread.
      d.bindings = {x, w, b, tail.output, taps, tail.residual.value_or(w)};
      d.writes = {tail.output};
      out.push_back(std::move(d));
      return tail.items;
    }
    // Slices write partial sums (binding 2 unread); the reduce adds them,
    // the bias and the epilogue.
    if (partial_ < 0) partial_ = static_cast<int64_t>(derive({"conv partial sums", {}, 0}));
    DerivedBuffer& partial = plan_->derived[static_cast<size_t>(partial_) - file_.resources.size()];
    partial.scratch_bytes = std::max(partial.scratch_bytes, gpu::conv_partial_bytes(p, tiling));
    d.bindings = {x, w, b, static_cast<uint32_t>(partial_), taps, w};
    d.writes = {static_cast<uint32_t>(partial_)};
    Dispatch reduce = d;
    out.push_back(std::move(d));
    reduce.kernel = Kernel::kConv2dReduce;
    reduce.bindings = {static_cast<uint32_t>(partial_), b, tail.output, tail.residual.value_or(b)};
    reduce.writes = {tail.output};
    reduce.specialization = {tiling.splits, 1};  // NHWC
    reduce.groups = groups_of(static_cast<uint64_t>(res(tail.output).elements()), gpu::kConvGroupSize);
    out.push_back(std::move(reduce));
    return tail.items;
  }

  // The shared conv kernels' push constants for NHWC x and y of shapes xs
  // and ys, a window `a` of kernel_h x kernel_w, and groups of
  // group_channels in, group_out out.
  static gpu::ConvPush nhwc_conv_push(const std::vector<int64_t>& xs, const std::vector<int64_t>& ys,
                                      const ConvAttr& a, int64_t kernel_h, int64_t kernel_w, int64_t group_channels,
                                      int64_t group_out) {
    gpu::ConvPush p{};
    p.batch = u32(xs[0]);
    p.in_h = u32(xs[1]);
    p.in_w = u32(xs[2]);
    p.channels = u32(xs[3]);
    p.out_h = u32(ys[1]);
    p.out_w = u32(ys[2]);
    p.out_channels = u32(ys[3]);
    p.kernel_h = u32(kernel_h);
    p.kernel_w = u32(kernel_w);
    p.group_channels = u32(group_channels);
    p.group_out = u32(group_out);
    p.stride_h = u32(a.stride[0]);
    p.stride_w = u32(a.stride[1]);
    p.dilation_h = u32(a.dilation[0]);
    p.dilation_w = u32(a.dilation[1]);
    p.pad_top = u32(a.pad[0]);
    p.pad_left = u32(a.pad[2]);
    return p;
  }

  size_t plan_conv(size_t item, const Operator& op, std::vector<Dispatch>& out) {
    if (const std::optional<size_t> folded = plan_se_scale(item, op, out)) return *folded;
    const bool depthwise = op.op == OpCode::kDepthwiseConv2d;
    const uint32_t x = op.inputs[0], wid = op.inputs[1], y = op.outputs[0];
    const auto &xs = shape(x), &ws = shape(wid), &ys = shape(y);
    const gpu::ConvPush p =
        depthwise ? nhwc_conv_push(xs, ys, std::get<ConvAttr>(op.attr), ws[0], ws[1], 1, ws[3])
                  : nhwc_conv_push(xs, ys, std::get<ConvAttr>(op.attr), ws[1], ws[2], xs[3], ys[3]);
    const std::vector<float> w = floats(wid);
    const int64_t taps = int64_t{p.kernel_h} * p.kernel_w, ic = p.channels, oc_count = p.out_channels;
    if (depthwise)  // [KH, KW, C, M]: output channel oc = c * M + m at [tap][oc]
      return conv(item, p, x, y, floats(op.inputs[2]),
                  [&](int64_t oc, int64_t, int64_t tap) { return w[static_cast<size_t>(tap * oc_count + oc)]; }, out);
    // OHWI
    return conv(item, p, x, y, floats(op.inputs[2]),
                [&](int64_t oc, int64_t c, int64_t tap) { return w[static_cast<size_t>((oc * taps + tap) * ic + c)]; },
                out);
  }

  // The item after `item` when it is an operator (a tail may end in a
  // compute segment the lowering wrote, as fuse_tail's HardSwish, so the
  // next operator may open the next segment).
  const Operator* next_op(size_t item) const { return item + 1 < items_.size() ? items_[item + 1].op : nullptr; }

  // A 1x1 conv2d over [n, 1, 1, c_in] to `c_out` channels, unpadded and
  // unstrided: a squeeze-and-excitation block's fc1 or fc2.
  bool is_one_pixel_conv(const Operator& op, int64_t c_in, int64_t c_out) const {
    if (op.op != OpCode::kConv2d || op.inputs.size() < 3) return false;
    const auto &xs = shape(op.inputs[0]), &ws = shape(op.inputs[1]);
    const ConvAttr& a = std::get<ConvAttr>(op.attr);
    return xs.size() == 4 && xs[1] == 1 && xs[2] == 1 && xs[3] == c_in && ws.size() == 4 && ws[0] == c_out &&
           ws[1] == 1 && ws[2] == 1 && res(op.inputs[1]).kind == ResourceKind::kConstant &&
           res(op.inputs[2]).kind == ResourceKind::kConstant &&
           std::all_of(a.pad.begin(), a.pad.end(), [](int64_t v) { return v == 0; });
  }

  // The second half of a squeeze-and-excitation block as the Vulkan
  // delegate runs it (lowering.cc's plan_se_scale): fc1 (this conv2d, on
  // per-channel values m [n, 1, 1, c], the block's pooled means however the
  // file computes them) and its tail, fc2 and its tail, and the Mul of some
  // x [n, h, w, c] by fc2's result, items in a row, each result read only
  // by the next, become one se_scale.comp dispatch in NHWC where fc1 stood;
  // m stays what made it. Returns the items folded, or nothing when `fc1`
  // heads no such block.
  std::optional<size_t> plan_se_scale(size_t item, const Operator& fc1, std::vector<Dispatch>& out) {
    if (fc1.op != OpCode::kConv2d) return std::nullopt;
    const uint32_t means = fc1.inputs[0];
    const std::vector<int64_t>& ms = shape(means);
    if (ms.size() != 4 || ms[1] != 1 || ms[2] != 1) return std::nullopt;
    const int64_t batch = ms[0], channels = ms[3], squeeze = shape(fc1.outputs[0]).back();
    if (!is_one_pixel_conv(fc1, channels, squeeze) || !gpu::se_scale_fits(channels, squeeze)) return std::nullopt;
    const FusedTail t1 = fuse_tail(file_, items_, item, fc1.outputs[0], squeeze, readers_);
    const size_t fc2_item = item + t1.items + 1;
    const Operator* fc2 = next_op(item + t1.items);
    if (!fc2 || fc2->inputs[0] != t1.output || readers_[t1.output] != 1 || !is_one_pixel_conv(*fc2, squeeze, channels))
      return std::nullopt;
    const FusedTail t2 = fuse_tail(file_, items_, fc2_item, fc2->outputs[0], channels, readers_);
    const size_t mul_item = fc2_item + t2.items + 1;
    const Operator* mul = next_op(fc2_item + t2.items);
    if (!mul || mul->op != OpCode::kMul || readers_[t2.output] != 1 ||
        (mul->inputs[0] != t2.output) == (mul->inputs[1] != t2.output))
      return std::nullopt;
    const uint32_t x = mul->inputs[0] == t2.output ? mul->inputs[1] : mul->inputs[0];
    const std::vector<int64_t>& xs = shape(x);
    if (xs.size() != 4 || xs[0] != batch || xs[3] != channels || shape(mul->outputs[0]) != xs) return std::nullopt;

    // The convs' weights are OHWI ([out][1][1][in]), scaled by their tails.
    const std::vector<float> w1 = floats(fc1.inputs[1]), w2 = floats(fc2->inputs[1]);
    std::vector<float> b1 = floats(fc1.inputs[2]), b2 = floats(fc2->inputs[2]);
    for (int64_t j = 0; j < squeeze; ++j) b1[j] = b1[j] * t1.scale[j] + t1.shift[j];
    for (int64_t c = 0; c < channels; ++c) b2[c] = b2[c] * t2.scale[c] + t2.shift[c];
    const std::vector<float> weights = gpu::pack_se_weights(
        channels, squeeze, [&](int64_t j, int64_t c) { return w1[j * channels + c] * t1.scale[j]; }, b1,
        [&](int64_t c, int64_t j) { return w2[c * squeeze + j] * t2.scale[c]; }, b2);
    gpu::SeScalePush p{};
    p.batch = u32(batch);
    p.channels = u32(channels);
    p.squeeze = u32(squeeze);
    p.plane = u32(xs[1] * xs[2]);
    p.chunks = u32((channels * xs[1] * xs[2] + gpu::kSeScaleChunk - 1) / gpu::kSeScaleChunk);
    p.ops1 = t1.epilogue_ops;
    p.ops2 = t2.epilogue_ops;
    std::memcpy(p.params1, t1.epilogue_params, sizeof(p.params1));
    std::memcpy(p.params2, t2.epilogue_params, sizeof(p.params2));
    const std::string name = fc1.name.empty() ? label_ : fc1.name;
    Dispatch d;
    d.kernel = Kernel::kSeScale;
    d.bindings = {x, means, derive({name + "/se weights", words_of(weights), 0}), mul->outputs[0]};
    d.writes = {mul->outputs[0]};
    d.push = words_of_struct(p);
    d.specialization = {1};  // NHWC
    d.groups = groups_of(static_cast<uint64_t>(batch) * p.chunks, 1);
    d.label = label_;
    d.nodes = {fc1.name};
    d.ops = {std::string(op_name(fc1.op))};
    name_tail(d, t1);
    d.nodes.push_back(fc2->name);
    d.ops.push_back(std::string(op_name(fc2->op)));
    name_tail(d, t2);
    d.nodes.push_back(mul->name);
    d.ops.push_back(std::string(op_name(mul->op)));
    out.push_back(std::move(d));
    return mul_item - item;
  }

  // A matmul whose B is a constant without batch dims (a linear layer) is
  // a 1x1 conv over A's rows: NHWC [rows, 1, 1, K] by K x N weights.
  bool constant_weights_matmul(const Operator& op) const {
    const Resource& b = res(op.inputs[1]);
    if (b.kind != ResourceKind::kConstant || b.dtype != DType::kFloat32) return false;
    for (size_t d = 0; d + 2 < b.shape.size(); ++d)
      if (b.shape[d] != 1) return false;
    return res(op.inputs[0]).elements() <= int64_t{UINT32_MAX} && res(op.outputs[0]).elements() <= int64_t{UINT32_MAX};
  }

  size_t plan_linear(size_t item, const Operator& op, std::vector<Dispatch>& out) {
    const auto& bs = shape(op.inputs[1]);
    const int64_t k = bs[bs.size() - 2], n = bs.back();
    gpu::ConvPush p{};
    p.batch = u32(res(op.inputs[0]).elements() / k);
    p.in_h = p.in_w = p.out_h = p.out_w = 1;
    p.channels = p.group_channels = u32(k);
    p.out_channels = p.group_out = u32(n);
    p.kernel_h = p.kernel_w = p.stride_h = p.stride_w = p.dilation_h = p.dilation_w = 1;
    const std::vector<float> w = floats(op.inputs[1]);
    return conv(item, p, op.inputs[0], op.outputs[0], std::vector<float>(static_cast<size_t>(n), 0.f),
                [&](int64_t oc, int64_t c, int64_t) { return w[static_cast<size_t>(c * n + oc)]; }, out);
  }

  // reduce.comp over x viewed as [outer, len, inner] (op 0 sum, 1 max, 2
  // mean): a power-of-two number of lanes per output, up to the workgroup
  // (64), at most what the row has.
  // Returns the items folded into it (LayerNormalization's mean scale;
  // its variance's scale, epsilon and rsqrt).
  size_t reduce(size_t item, std::vector<Dispatch>& out, uint32_t x, uint32_t y, int64_t outer, int64_t len,
                int64_t inner, uint32_t op) {
    uint32_t lanes = 1;
    while (lanes < kWorkgroupSize && lanes < len) lanes *= 2;
    const uint64_t count = static_cast<uint64_t>(outer * inner);
    const Tail tail = tail_of(item, y, x);
    const size_t conv_names = plan_last_names();
    if (Dispatch* conv = fold_mean_into_depthwise(x, outer, len, inner, op, tail)) {
      reduced_ = conv;
      reduced_at_ = conv_names;
      return tail.fused.items;
    }
    std::vector<uint32_t> push = {u32(outer), u32(len), u32(inner), op, u32(static_cast<int64_t>(count)), lanes};
    push.insert(push.end(), tail.push.begin(), tail.push.end());
    add(out, Kernel::kReduce, {x, tail.affine, tail.fused.output}, std::move(push), count * lanes);
    name_tail(out.back(), tail.fused);
    reduced_ = &out.back();
    reduced_at_ = 0;
    return tail.fused.items;
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

  // A grouped convolution as the lowering writes it (lowering.cc's
  // lower_conv: per group a slice of x's channels and a conv2d of it, then
  // one concat of the parts on the channel axis), starting at the slice
  // items_[item]: G >= 2 slices of x in channel order covering them all,
  // each read by the next item alone, a conv2d with the first one's window
  // and weight shape; the parts read by the concat alone, in order. Then
  // the shared conv kernel runs it as one dispatch with G groups (RegNet's
  // and ResNeXt's blocks were G slices, G convs and a concat each).
  // Returns the items after the first slice folded in, or nothing.
  std::optional<size_t> plan_grouped_conv(size_t item, std::vector<Dispatch>& out) {
    const Operator& first_slice = *items_[item].op;
    const uint32_t x = first_slice.inputs[0];
    const std::vector<int64_t>& xs = shape(x);
    if (xs.size() != 4) return std::nullopt;
    const auto private_part = [&](uint32_t id) {
      return res(id).kind == ResourceKind::kIntermediate && res(id).alias_group < 0 && readers_[id] == 1;
    };
    std::vector<const Operator*> convs;
    int64_t icg = 0;
    size_t at = item;
    for (; at + 1 < items_.size(); at += 2) {
      const Operator* slice = items_[at].op;
      const Operator* conv = items_[at + 1].op;
      if (!slice || !conv || slice->op != OpCode::kSlice || conv->op != OpCode::kConv2d || slice->inputs[0] != x)
        break;
      const auto& s = std::get<SliceAttr>(slice->attr);
      const int64_t g = static_cast<int64_t>(convs.size());
      if (g == 0) icg = s.size.size() == 4 ? s.size[3] : 0;
      const std::vector<int64_t> start = {0, 0, 0, g * icg}, size = {xs[0], xs[1], xs[2], icg};
      if (icg <= 0 || s.start != start || s.size != size ||
          !std::all_of(s.stride.begin(), s.stride.end(), [](int64_t v) { return v == 1; }))
        break;
      if (conv->inputs[0] != slice->outputs[0] || !private_part(slice->outputs[0]) || !private_part(conv->outputs[0]))
        break;
      if (!convs.empty() && (conv->attr != convs[0]->attr || shape(conv->inputs[1]) != shape(convs[0]->inputs[1]) ||
                             shape(conv->outputs[0]) != shape(convs[0]->outputs[0])))
        break;
      convs.push_back(conv);
    }
    const int64_t groups = static_cast<int64_t>(convs.size());
    if (groups < 2 || groups * icg != xs[3] || at >= items_.size() || !items_[at].op) return std::nullopt;
    const Operator& concat = *items_[at].op;
    if (concat.op != OpCode::kConcat || std::get<AxisAttr>(concat.attr).axis != 3 ||
        concat.inputs.size() != convs.size())
      return std::nullopt;
    for (size_t g = 0; g < convs.size(); ++g)
      if (concat.inputs[g] != convs[g]->outputs[0]) return std::nullopt;
    const uint32_t y = concat.outputs[0];
    const auto& ws = shape(convs[0]->inputs[1]);  // [ocg, KH, KW, icg]
    const gpu::ConvPush p = nhwc_conv_push(xs, shape(y), std::get<ConvAttr>(convs[0]->attr), ws[1], ws[2], icg, ws[0]);
    std::vector<std::vector<float>> weights;
    std::vector<float> bias;
    for (const Operator* conv : convs) {
      weights.push_back(floats(conv->inputs[1]));
      const std::vector<float> b = floats(conv->inputs[2]);
      bias.insert(bias.end(), b.begin(), b.end());
    }
    const int64_t taps = int64_t{p.kernel_h} * p.kernel_w, ocg = ws[0];
    op_ = convs[0];
    // The fused tail starts after the concat; the items before it are this dispatch's.
    const size_t folded =
        conv(at, p, x, y, std::move(bias),
             [&](int64_t oc, int64_t c, int64_t tap) {
               return weights[static_cast<size_t>(oc / ocg)][static_cast<size_t>(((oc % ocg) * taps + tap) * icg + c)];
             },
             out);
    return at - item + folded;
  }

  // Plans `op` (items_[item]); returns how many items after it were folded in.
  size_t plan_op(size_t item, const Operator& op, std::vector<Dispatch>& out) {
    if (op.op == OpCode::kSlice)
      if (const std::optional<size_t> folded = plan_grouped_conv(item, out)) return *folded;
    if (op.op == OpCode::kConv2d || op.op == OpCode::kDepthwiseConv2d) return plan_conv(item, op, out);
    if (op.op == OpCode::kMatmul && constant_weights_matmul(op)) return plan_linear(item, op, out);
    if (is_binary(op.op)) return plan_binary(item, op, out);
    return plan_simple_op(item, op, out);
  }

  // What follows items_[item] (which writes `y`) and folds into its
  // dispatch (epilogue_fusion.h): per element of y's last dim an affine
  // (a derived buffer of scales then shifts, absent when it is the
  // identity), then up to two epilogue ops. The element-wise shaders apply
  // it to each result (gpu_ops.glsl's apply_epilogue); `unused` is bound in
  // the affine's place when there is none.
  struct Tail {
    FusedTail fused;
    uint32_t affine = 0;
    std::vector<uint32_t> push;  // kTailWords
  };
  Tail tail_of(size_t item, uint32_t y, uint32_t unused) {
    Tail t;
    const int64_t channels = shape(y).empty() ? 1 : shape(y).back();
    t.fused = fuse_tail(file_, items_, item, y, channels, readers_);
    t.affine = unused;
    bool identity = true;
    for (size_t c = 0; c < t.fused.scale.size(); ++c) identity &= t.fused.scale[c] == 1.f && t.fused.shift[c] == 0.f;
    if (!identity) {
      std::vector<float> words = t.fused.scale;
      words.insert(words.end(), t.fused.shift.begin(), t.fused.shift.end());
      t.affine = derive({(op_->name.empty() ? label_ : op_->name) + "/affine", words_of(words), 0});
    }
    t.push = {identity ? 0u : u32(channels), t.fused.epilogue_ops};
    for (float v : t.fused.epilogue_params) t.push.push_back(bits(v));
    return t;
  }

  // Names the folded items after the dispatch's own node.
  static void name_tail(Dispatch& d, const FusedTail& tail) {
    d.nodes.insert(d.nodes.end(), tail.nodes.begin(), tail.nodes.end());
    d.ops.insert(d.ops.end(), tail.ops.begin(), tail.ops.end());
  }

  // How many nodes the plan's last dispatch names (0: no dispatch yet).
  size_t plan_last_names() const {
    for (auto seg = plan_->segments.rbegin(); seg != plan_->segments.rend(); ++seg)
      if (!seg->dispatches.empty()) return seg->dispatches.back().nodes.size();
    return 0;
  }

  // The spatial mean of a depthwise conv's output (the squeeze of a
  // squeeze-and-excitation block), planned right after the conv's dispatch,
  // is written by that dispatch (depthwise_mean.comp) instead of a reduce of
  // its own, as the Vulkan delegate does (plan_depthwise_means). `op`: the
  // reduce kernel's (0 sum, 2 mean); a sum counts only with its tail
  // scaling by exactly 1 / len (ReduceMean as the lowering writes it), a
  // mean with no tail. Planes of at most gpu::kDepthwiseMeanMaxPlane.
  // Returns the conv's dispatch, or null where the mean stays a reduce.
  Dispatch* fold_mean_into_depthwise(uint32_t x, int64_t outer, int64_t len, int64_t inner, uint32_t op,
                                     const Tail& tail) {
    // The plan's last dispatch, maybe in an earlier segment (a HardSwish
    // compute segment folded into the conv lies between them).
    Dispatch* last = nullptr;
    for (auto seg = plan_->segments.rbegin(); seg != plan_->segments.rend() && !last; ++seg)
      if (!seg->dispatches.empty()) last = &seg->dispatches.back();
    if (!last || last->kernel != Kernel::kDepthwiseConv2d || last->writes != std::vector<uint32_t>{x}) return nullptr;
    const std::vector<int64_t>& xs = shape(x);
    if (xs.size() != 4 || outer != xs[0] || len != xs[1] * xs[2] || inner != xs[3] ||
        len > gpu::kDepthwiseMeanMaxPlane || tail.fused.epilogue_ops != 0 || (op != 0 && op != 2))
      return nullptr;
    const float scale = op == 0 ? 1.f / static_cast<float>(len) : 1.f;
    for (size_t c = 0; c < tail.fused.scale.size(); ++c)
      if (std::abs(tail.fused.scale[c] - scale) > 1e-6f * scale || tail.fused.shift[c] != 0.f) return nullptr;
    Dispatch& d = *last;
    d.kernel = Kernel::kDepthwiseMean;
    d.bindings.push_back(tail.fused.output);
    d.writes.push_back(tail.fused.output);
    d.specialization = {gpu::depthwise_mean_group_size(len), 1};  // NHWC
    d.groups = groups_of(static_cast<uint64_t>(outer * inner), 1);  // a workgroup per plane
    d.nodes.push_back(op_->name);
    d.ops.push_back(std::string(op_name(op_->op)));
    name_tail(d, tail.fused);
    return &d;
  }

  // A binary op, and the tail that folds into it (a residual Add and its
  // ReLU; LayerNormalization's normalised value times gamma plus beta).
  size_t plan_binary(size_t item, const Operator& op, std::vector<Dispatch>& out) {
    const uint32_t code = op.op == OpCode::kAdd ? 0 : op.op == OpCode::kSub ? 1 : op.op == OpCode::kMul ? 2 : 3;
    const uint32_t produced = op.outputs[0];
    const std::vector<int64_t>& out_shape = shape(produced);
    const Tail tail = tail_of(item, produced, op.inputs[0]);
    const uint32_t y = tail.fused.output;
    // Operands shaped like the output (no broadcast: a residual Add) are
    // walked as one dim, which spares the shader its per-dim index split.
    const bool dense = shape(op.inputs[0]) == out_shape && shape(op.inputs[1]) == out_shape;
    const std::vector<int64_t> walked = dense ? std::vector<int64_t>{res(y).elements()} : out_shape;
    std::vector<uint32_t> push = {u32(res(y).elements()), code, u32(static_cast<int64_t>(walked.size())), tail.push[0]};
    put_dims(push, walked);
    for (uint32_t in : {op.inputs[0], op.inputs[1]}) put_dims(push, broadcast_strides(dense ? walked : shape(in)));
    push.insert(push.end(), tail.push.begin() + 1, tail.push.end());
    add(out, Kernel::kBinary, {op.inputs[0], op.inputs[1], tail.affine, y}, std::move(push),
        static_cast<uint64_t>(res(y).elements()));
    name_tail(out.back(), tail.fused);
    return tail.fused.items;
  }

  // Every other operator; returns how many items after it were folded in.
  size_t plan_simple_op(size_t item, const Operator& op, std::vector<Dispatch>& out) {
    const uint32_t y = op.outputs[0];
    const uint32_t x = op.inputs[0];
    const uint64_t count = static_cast<uint64_t>(res(y).elements());
    if (op.op == OpCode::kCast) {
      const DType from = res(x).dtype, to = res(y).dtype;
      if (is_half_float(from) || is_half_float(to)) {
        const Kernel k = is_half_float(from) ? Kernel::kCastF16ToF32 : Kernel::kCastF32ToF16;
        const uint32_t bf16 = from == DType::kBFloat16 || to == DType::kBFloat16 ? 1 : 0;
        add(out, k, {x, y}, {u32(res(y).elements()), bf16}, count);
        return 0;
      }
      // The word kinds of shared_gpu/shaders/cast_bits.glsl.
      auto kind = [](DType d) -> uint32_t { return d == DType::kInt32 ? 1 : d == DType::kInt64 ? 2 : 0; };
      const Kernel k = to == DType::kBool     ? Kernel::kCastToBool
                       : from == DType::kBool ? Kernel::kCastFromBool
                                              : Kernel::kCastWords;
      add(out, k, {x, y}, {u32(res(y).elements()), kind(from), kind(to)}, count);
      return 0;
    }
    if (is_unary(op.op)) {
      float lo = 0.f, hi = 0.f;
      if (const auto* c = std::get_if<ClampAttr>(&op.attr)) {
        lo = c->min;
        hi = c->max;
      }
      const Tail tail = tail_of(item, y, x);
      const uint32_t z = tail.fused.output;
      std::vector<uint32_t> push = {u32(res(z).elements()), unary_code(op.op), bits(lo), bits(hi)};
      push.insert(push.end(), tail.push.begin(), tail.push.end());
      add(out, Kernel::kUnary, {x, tail.affine, z}, std::move(push), count);
      name_tail(out.back(), tail.fused);
      return tail.fused.items;
    }
    if (op.op == OpCode::kSelect) {
      const std::vector<int64_t>& out_shape = shape(y);
      std::vector<uint32_t> push = {u32(res(y).elements()), u32(static_cast<int64_t>(out_shape.size()))};
      put_dims(push, out_shape);
      for (uint32_t in : op.inputs) put_dims(push, broadcast_strides(shape(in)));
      add(out, Kernel::kSelect, {op.inputs[0], op.inputs[1], op.inputs[2], y}, std::move(push), count);
      return 0;
    }
    switch (op.op) {
      case OpCode::kReshape:
        if (res(x).alias_group >= 0 && res(x).alias_group == res(y).alias_group) return 0;
        add(out, Kernel::kUnary, {x, x, y}, {u32(res(y).elements()), kCopyCode, 0, 0, 0, 0, 0, 0, 0, 0}, count);
        return 0;
      case OpCode::kTranspose: {
        const auto& perms = std::get<TransposeAttr>(op.attr).perms;
        const std::vector<int64_t> in_strides = dense_strides(shape(x));
        std::vector<int64_t> src(perms.size());
        for (size_t i = 0; i < perms.size(); ++i) src[i] = in_strides[perms[i]];
        copy(out, x, y, shape(y), 0, src, 0, dense_strides(shape(y)));
        return 0;
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
        return 0;
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
        return 0;
      }
      case OpCode::kConcat: {
        const int32_t axis = std::get<AxisAttr>(op.attr).axis;
        const std::vector<int64_t> out_strides = dense_strides(shape(y));
        int64_t at = 0;
        const int group = next_write_group_++;
        for (uint32_t in : op.inputs) {
          copy(out, in, y, shape(in), 0, dense_strides(shape(in)), at * out_strides[axis], out_strides);
          out.back().write_group = group;
          at += shape(in)[axis];
        }
        return 0;
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
        return 0;
      }
      case OpCode::kTransposeConv2d: {
        const auto& a = std::get<ConvAttr>(op.attr);
        const auto &xs = shape(x), &ws = shape(op.inputs[1]), &ys = shape(y);
        std::vector<uint32_t> push = {u32(xs[0]), u32(xs[1]), u32(xs[2]), u32(xs[3]), u32(ys[1]), u32(ys[2]),
                                      u32(ys[3]), u32(ws[1]), u32(ws[2]), u32(a.stride[0]), u32(a.stride[1]),
                                      u32(a.dilation[0]), u32(a.dilation[1]), u32(a.pad[0]), u32(a.pad[2]),
                                      1u, u32(res(y).elements())};
        add(out, Kernel::kTransposeConv2d, {x, op.inputs[1], op.inputs[2], y}, std::move(push), count);
        return 0;
      }
      case OpCode::kAvgPool2d:
      case OpCode::kMaxPool2d: {
        const auto& a = std::get<PoolAttr>(op.attr);
        const auto &xs = shape(x), &ys = shape(y);
        // A window over the whole unpadded input (GlobalAveragePool, a
        // squeeze-excite's mean): a reduction of each image's pixels per
        // channel, NHWC [n, h*w, c].
        if (a.kernel[0] == xs[1] && a.kernel[1] == xs[2] && ys[1] == 1 && ys[2] == 1 &&
            std::all_of(std::begin(a.pad), std::end(a.pad), [](int64_t v) { return v == 0; })) {
          return reduce(item, out, x, y, xs[0], xs[1] * xs[2], xs[3], op.op == OpCode::kMaxPool2d ? 1u : 2u);
        }
        std::vector<uint32_t> push = {u32(xs[0]),       u32(xs[1]),       u32(xs[2]),    u32(xs[3]),
                                      u32(ys[1]),       u32(ys[2]),       u32(a.kernel[0]), u32(a.kernel[1]),
                                      u32(a.stride[0]), u32(a.stride[1]), u32(a.pad[0]), u32(a.pad[2]),
                                      op.op == OpCode::kMaxPool2d ? 1u : 0u, u32(res(y).elements())};
        add(out, Kernel::kPool2d, {x, y}, std::move(push), count);
        return 0;
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
        return 0;
      }
      case OpCode::kReduceSum:
      case OpCode::kReduceMax: {
        const int32_t axis = std::get<AxisAttr>(op.attr).axis;
        const auto& xs = shape(x);
        // The same reduction over the next axes, each reading only the
        // last one's result (a ReduceMean over H and W: NHWC axes 1 and
        // 2), joins it: one reduction over the run of axes.
        int32_t last = axis;
        uint32_t result = y;
        size_t joined = 0;
        while (item + joined + 1 < items_.size()) {
          const Operator* next = items_[item + joined + 1].op;
          if (!next || next->op != op.op || next->inputs[0] != result || readers_[result] != 1 ||
              res(result).kind != ResourceKind::kIntermediate || res(result).alias_group >= 0 ||
              std::get<AxisAttr>(next->attr).axis != last + 1)
            break;
          ++last;
          result = next->outputs[0];
          ++joined;
        }
        int64_t outer = 1, len = 1, inner = 1;
        for (size_t d = 0; d < xs.size(); ++d) {
          const int32_t at = static_cast<int32_t>(d);
          (at < axis ? outer : at > last ? inner : len) *= xs[d];
        }
        const size_t folded =
            reduce(item + joined, out, x, result, outer, len, inner, op.op == OpCode::kReduceMax ? 1u : 0u);
        // The joined items' names follow the first's, in the dispatch
        // reduce() planned or folded the mean into.
        Dispatch& d = *reduced_;
        for (size_t k = 1; k <= joined; ++k) {
          const auto at = static_cast<std::ptrdiff_t>(reduced_at_ + k);
          d.nodes.insert(d.nodes.begin() + at, items_[item + k].op->name);
          d.ops.insert(d.ops.begin() + at, std::string(op_name(items_[item + k].op->op)));
        }
        return joined + folded;
      }
      case OpCode::kResize: {
        const bool bilinear = std::get<ResizeAttr>(op.attr).mode == ResizeMode::kBilinear;
        const auto &xs = shape(x), &ys = shape(y);
        add(out, Kernel::kResize, {x, op.inputs[1], op.inputs[2], y},
            {u32(xs[0]), u32(xs[1]), u32(xs[2]), u32(xs[3]), u32(ys[1]), u32(ys[2]), bilinear ? 1u : 0u,
             u32(res(y).elements())},
            count);
        return 0;
      }
      default:
        return 0;
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
  const std::optional<gpu::CoopMatConv> coopmat_;
  DispatchPlan* plan_ = nullptr;
  std::vector<PlanItem> items_;
  std::vector<uint32_t> readers_;
  const Operator* op_ = nullptr;  // the operator being planned
  std::string label_;
  int next_write_group_ = 0;
  int64_t partial_ = -1;
  // The dispatch reduce() last planned (or folded its mean into), and where
  // its operator's name is in that dispatch's nodes.
  Dispatch* reduced_ = nullptr;
  size_t reduced_at_ = 0;  // the derived id of the split-K partial sums, once one conv needs them
};

}  // namespace

DispatchPlan plan_dispatches(const VgfFile& file, const std::optional<gpu::CoopMatConv>& coopmat) {
  return Planner(file, coopmat).run();
}

}  // namespace hetsched::vgf
