#include "delegates/vulkan/lowering.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <type_traits>

#include "delegates/vulkan/half_storage.h"
#include "delegates/vulkan/kernel_params.h"
#include "delegates/vulkan/movement_semantics.h"
#include "delegates/vulkan/norm_semantics.h"
#include "delegates/vulkan/op_semantics.h"
#include "graph/op_schema.h"
#include "graph/ops_extra.h"
#include "memory/arena_planner.h"
#include "shared_gpu/barrier_plan.h"

namespace hetsched::vulkan {

std::string_view kernel_name(Kernel kernel) {
  switch (kernel) {
    case Kernel::kElementwise: return "elementwise";
    case Kernel::kGemm: return "gemm";
    case Kernel::kConv2d: return "conv2d";
    case Kernel::kConv2dReduce: return "conv2d_reduce";
    case Kernel::kDepthwiseConv2d: return "depthwise_conv2d";
    case Kernel::kPool2d: return "pool2d";
    case Kernel::kReduce: return "reduce";
    case Kernel::kSoftmax: return "softmax";
    case Kernel::kStridedCopy: return "strided_copy";
    case Kernel::kGather: return "gather";
    case Kernel::kResize: return "resize";
    case Kernel::kNormalize: return "normalize";
    case Kernel::kPad: return "pad";
    case Kernel::kConvTranspose2d: return "conv_transpose2d";
    case Kernel::kCastF16ToF32: return "cast_f16_to_f32";
    case Kernel::kCastF32ToF16: return "cast_f32_to_f16";
    case Kernel::kConv2dCoopmat: return "conv2d_coopmat";
    case Kernel::kGemmCoopmat: return "gemm_coopmat";
    case Kernel::kGemmCoopmat512: return "gemm_coopmat_512";
    case Kernel::kGemmCoopmat1024: return "gemm_coopmat_1024";
    case Kernel::kGemmCoopmat128x128: return "gemm_coopmat_128x128";
    case Kernel::kGemmCoopmat128x256: return "gemm_coopmat_128x256";
    case Kernel::kSeScale: return "se_scale";
    case Kernel::kDepthwiseMean: return "depthwise_mean";
    case Kernel::kPointwiseConv: return "pointwise_conv";
    case Kernel::kExpandDepthwise: return "expand_depthwise";
    case Kernel::kCastWords: return "cast_words";
    case Kernel::kCastToBool: return "cast_to_bool";
    case Kernel::kCastFromBool: return "cast_from_bool";
  }
  return "?";
}

std::optional<Kernel> gemm_coopmat_kernel(std::string_view name) {
  for (Kernel k : {Kernel::kGemmCoopmat, Kernel::kGemmCoopmat512, Kernel::kGemmCoopmat1024, Kernel::kGemmCoopmat128x128,
                   Kernel::kGemmCoopmat128x256})
    if (kernel_name(k) == name) return k;
  return std::nullopt;
}

bool kernel_has_half_variant(Kernel kernel) {
  switch (kernel) {
    case Kernel::kCastF16ToF32:
    case Kernel::kCastF32ToF16:
    case Kernel::kCastWords:
    case Kernel::kCastToBool:
    case Kernel::kCastFromBool: return false;
    default: return true;
  }
}

uint32_t kernel_binding_count(Kernel kernel) {
  switch (kernel) {
    case Kernel::kElementwise: return 2 + kMaxOperands;
    case Kernel::kConv2d:
    case Kernel::kConv2dCoopmat: return gpu::kConv2dBindings;
    case Kernel::kGemm:
    case Kernel::kGemmCoopmat:
    case Kernel::kGemmCoopmat512:
    case Kernel::kGemmCoopmat1024:
    case Kernel::kGemmCoopmat128x128:
    case Kernel::kGemmCoopmat128x256:
    case Kernel::kDepthwiseConv2d:
    case Kernel::kGather:
    case Kernel::kPad:
    case Kernel::kConvTranspose2d: return 4;
    case Kernel::kConv2dReduce: return gpu::kConv2dReduceBindings;
    case Kernel::kSeScale: return gpu::kSeScaleBindings;
    case Kernel::kDepthwiseMean:
    case Kernel::kPointwiseConv: return gpu::kPointwiseBindings;
    case Kernel::kExpandDepthwise: return 7;
    case Kernel::kNormalize:
    case Kernel::kReduce:
    case Kernel::kStridedCopy:
    case Kernel::kResize: return 3;
    case Kernel::kPool2d:
    case Kernel::kSoftmax:
    case Kernel::kCastF16ToF32:
    case Kernel::kCastF32ToF16:
    case Kernel::kCastWords:
    case Kernel::kCastToBool:
    case Kernel::kCastFromBool: return 2;
  }
  return 0;
}

uint32_t kernel_push_constant_size(Kernel kernel) {
  switch (kernel) {
    case Kernel::kElementwise:
    case Kernel::kReduce:
    case Kernel::kStridedCopy:
    case Kernel::kGather:
    case Kernel::kPad: return sizeof(ParamsPush);
    case Kernel::kNormalize: return sizeof(NormPush);
    case Kernel::kGemm:
    case Kernel::kGemmCoopmat:
    case Kernel::kGemmCoopmat512:
    case Kernel::kGemmCoopmat1024:
    case Kernel::kGemmCoopmat128x128:
    case Kernel::kGemmCoopmat128x256: return sizeof(GemmPush);
    case Kernel::kConv2d:
    case Kernel::kConv2dCoopmat:
    case Kernel::kConv2dReduce:
    case Kernel::kDepthwiseConv2d:
    case Kernel::kDepthwiseMean:
    case Kernel::kConvTranspose2d: return sizeof(ConvPush);
    case Kernel::kPool2d: return sizeof(PoolPush);
    case Kernel::kSeScale: return sizeof(SeScalePush);
    case Kernel::kPointwiseConv: return sizeof(PointwisePush);
    case Kernel::kExpandDepthwise: return sizeof(ExpandDepthwisePush);
    case Kernel::kSoftmax: return sizeof(SoftmaxPush);
    case Kernel::kResize: return sizeof(ResizePush);
    case Kernel::kCastF16ToF32:
    case Kernel::kCastF32ToF16: return sizeof(CastPush);
    case Kernel::kCastWords:
    case Kernel::kCastToBool:
    case Kernel::kCastFromBool: return sizeof(CastWordsPush);
  }
  return 0;
}

size_t LoweredIsland::dispatch_count() const {
  return static_cast<size_t>(
      std::count_if(steps.begin(), steps.end(), [](const Step& s) { return s.kind == Step::Kind::kDispatch; }));
}

size_t LoweredIsland::copy_count() const { return steps.size() - dispatch_count(); }

size_t LoweredIsland::barrier_count() const {
  return static_cast<size_t>(std::count_if(steps.begin(), steps.end(), [](const Step& s) { return s.barrier_before; }));
}

namespace {

using Strides = std::vector<int64_t>;

Strides row_major_strides(const Shape& shape) {
  Strides s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// Element strides of `shape` read as `out`, which it broadcasts to
// (right-aligned, numpy rules): 0 along the dims it repeats.
Strides broadcast_strides(const Shape& shape, const Shape& out) {
  Strides strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1) strides[out.size() - shape.size() + i] = stride;
    stride *= shape[i];
  }
  return strides;
}

// An iteration space with the strides of each tensor it walks, after
// dropping size-1 dims and merging neighbours that are contiguous in every
// tensor, so generic kernels divide as little as possible.
struct Walk {
  std::vector<int64_t> dims;                  // outermost first
  std::vector<std::vector<int64_t>> strides;  // [tensor][dim]
};

Walk coalesce(const Shape& dims, const std::vector<Strides>& strides) {
  Walk w;
  w.strides.resize(strides.size());
  // Built innermost first, reversed at the end.
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] == 1) continue;
    bool merge = !w.dims.empty();
    for (size_t t = 0; merge && t < strides.size(); ++t) merge = strides[t][d] == w.strides[t].back() * w.dims.back();
    if (merge) {
      w.dims.back() *= dims[d];
      continue;
    }
    w.dims.push_back(dims[d]);
    for (size_t t = 0; t < strides.size(); ++t) w.strides[t].push_back(strides[t][d]);
  }
  if (w.dims.empty()) {
    w.dims.push_back(1);
    for (auto& s : w.strides) s.push_back(0);
  }
  std::reverse(w.dims.begin(), w.dims.end());
  for (auto& s : w.strides) std::reverse(s.begin(), s.end());
  return w;
}

// A 1-D count of workgroups as a grid whose dimensions each stay within
// kMaxGroupsPerDim; shaders recover the index with linear_group().
std::array<uint32_t, 3> grid_1d(uint64_t groups) {
  groups = std::max<uint64_t>(groups, 1);
  if (groups <= kMaxGroupsPerDim) return {static_cast<uint32_t>(groups), 1, 1};
  return {kMaxGroupsPerDim, static_cast<uint32_t>((groups + kMaxGroupsPerDim - 1) / kMaxGroupsPerDim), 1};
}

// The tile side of the tensor-core kernels (gemm_coopmat.comp,
// conv2d_coopmat.comp) as the lowering chooses them.
constexpr uint32_t kCoopmatTile = 64;
// Workgroups that keep a large GPU busy enough without split-K (an H100
// has 132 multiprocessors): gemm_coopmat's tiles grow while they make at
// least this many, and linear layers leave the conv kernel at fp16 when
// they do (linear_on_conv_kernel).
constexpr int64_t kBusyWorkgroups = 64;

uint32_t ceil_div(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }
uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& v) {
  std::vector<std::byte> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

template <typename T>
std::vector<uint32_t> words_of(const T& value) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % 4 == 0);
  std::vector<uint32_t> words(sizeof(T) / 4);
  std::memcpy(words.data(), &value, sizeof(T));
  return words;
}

// An operand of an elementwise chain: a graph value, or per-channel factors
// made on the host (a folded BatchNormalization).
struct Operand {
  ValueId value = kNoValue;
  std::shared_ptr<const std::vector<float>> data;
  Shape shape;
};

struct ChainOp {
  OpCode code = OpCode::kNone;
  float p0 = 0.f, p1 = 0.f;
  uint32_t operand = 0;
  bool reversed = false;   // the chain value is the right-hand side (Where: the false side)
  bool immediate = false;  // the other side is p0
  uint32_t condition = 0;  // Where: the operand holding the condition
};

enum class GroupKind { kElementwise, kConv, kGemm, kSingle, kAlias };

// Nodes that become one dispatch (or, for kSingle/kAlias, one node's steps).
struct Group {
  GroupKind kind = GroupKind::kSingle;
  std::vector<NodeId> nodes;       // nodes[0] is the head
  ValueId output = kNoValue;       // the value the group writes
  std::vector<Operand> operands;   // kElementwise
  std::vector<ChainOp> ops;        // kElementwise: the chain; kConv/kGemm: the epilogue
  NodeId batch_norm = kNoNode;     // kConv: a BatchNormalization folded into weights and bias
  std::vector<ValueId> bias_adds;  // kConv/kGemm: constants added before the epilogue
  ValueId residual = kNoValue;     // kConv: a tensor of the output's shape added before the epilogue
  // MatMul of two run-time operands: operand i read through the strides of
  // the Transposes that made it (fold_transposes), from their source.
  struct OperandView {
    ValueId source = kNoValue;
    Strides strides;  // per dim of the operand, in elements of the source's buffer
  };
  std::array<std::optional<OperandView>, 2> views;
  // MatMul of two run-time operands: the values it multiplies once scalar
  // Muls and Divs before it are folded into alpha (fold_scales).
  std::array<ValueId, 2> matmul_operands{kNoValue, kNoValue};
  float alpha = 1.f;
};

class Lowering {
 public:
  Lowering(const Graph& graph, const LoweringOptions& options, std::set<ValueId> half_values = {})
      : g_(graph), options_(options), half_values_(std::move(half_values)) {}

  Result<LoweredIsland> run() {
    out_.node_count = g_.num_nodes();
    out_.buffers.push_back({BufferPlan::Role::kConstant, 0, -1, {}, "params"});
    for (size_t i = 0; i < g_.inputs().size(); ++i) {
      const Value& v = g_.value(g_.inputs()[i]);
      out_.buffers.push_back({BufferPlan::Role::kInput, v.type.byte_size(), static_cast<int>(i), {}, v.name});
      const int buffer = static_cast<int>(out_.buffers.size()) - 1;
      out_.input_buffers.push_back(buffer);
      buffer_of_value_.emplace(g_.inputs()[i], buffer);
    }
    for (ValueId v : g_.outputs()) is_output_.insert(v);
    for (const Node& n : g_.nodes())
      for (ValueId in : n.inputs)
        if (in != kNoValue) ++uses_[in];

    HS_RETURN_IF_ERROR(group_nodes());
    HS_RETURN_IF_ERROR(plan_se_scale());
    HS_RETURN_IF_ERROR(plan_depthwise_means());
    plan_expand_depthwise();
    place_concat_inputs();
    HS_RETURN_IF_ERROR(emit_groups());
    HS_RETURN_IF_ERROR(bind_outputs());
    HS_RETURN_IF_ERROR(plan_scratch());
    plan_barriers();
    HS_RETURN_IF_ERROR(mark_half_bindings());
    // The parameter buffer also stands in for unused bindings, so it is never empty.
    if (params_.empty()) params_.assign(4, 0u);
    out_.buffers[kParamsBuffer].data = bytes_of(params_);
    out_.buffers[kParamsBuffer].bytes = out_.buffers[kParamsBuffer].data.size();
    return std::move(out_);
  }

 private:
  // --- pass 1: grouping ---------------------------------------------------

  // The Mul that makes Sigmoid node `id` half of a Swish, x * Sigmoid(x),
  // when x is read by those two nodes alone and the Sigmoid by the Mul
  // alone; kNoNode otherwise.
  NodeId swish_mul(NodeId id) const {
    const Node& sig = g_.node(id);
    if (sig.op != "Sigmoid" || sig.inputs.size() != 1) return kNoNode;
    const ValueId x = sig.inputs[0], s = sig.outputs[0];
    if (uses_.at(x) != 2 || uses_.count(s) == 0 || uses_.at(s) != 1 || is_output_.count(x) || is_output_.count(s))
      return kNoNode;
    for (NodeId m = id + 1; m < static_cast<NodeId>(g_.num_nodes()); ++m) {
      const Node& mul = g_.node(m);
      if (mul.op == "Mul" && mul.inputs.size() == 2 &&
          ((mul.inputs[0] == x && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == x)))
        return m;
    }
    return kNoNode;
  }

  // Fuses Sigmoid node `id` and its Swish Mul into the group that makes
  // their x, as one epilogue (or chain) op: EfficientNet's SiLU after every
  // conv would otherwise be two dispatches. Returns whether it did.
  bool fuse_swish(NodeId id) {
    const NodeId mul = swish_mul(id);
    if (mul == kNoNode) return false;
    auto it = group_of_output_.find(g_.node(id).inputs[0]);
    if (it == group_of_output_.end()) return false;
    Group& group = groups_[it->second];
    const bool epilogue = group.kind == GroupKind::kConv || group.kind == GroupKind::kGemm;
    if (!epilogue && group.kind != GroupKind::kElementwise) return false;
    if (group.ops.size() >= (epilogue ? kMaxEpilogueOps : kMaxChainOps)) return false;
    group.ops.push_back(ChainOp{OpCode::kSwish, 0.f, 0.f});
    group.nodes.push_back(id);
    group.nodes.push_back(mul);
    group.output = g_.node(mul).outputs[0];
    group_of_output_.erase(it);
    group_of_output_.emplace(group.output, &group - groups_.data());
    fused_later_.insert(mul);
    return true;
  }

  // Whether Add node `add` of the group's output and `other`, a run-time
  // tensor of the same type, joins a conv group as its residual (a ResNet
  // block's skip connection, added after the bias, before the epilogue
  // ops). `other` must exist when the conv runs: made by a node before the
  // conv (whose group is emitted earlier), or an island input. Depthwise
  // and transposed convs have no residual binding.
  bool fuse_residual(Group& group, const Node& add, ValueId other) const {
    const Node& head = g_.node(group.nodes[0]);
    if (group.kind != GroupKind::kConv || head.op != "Conv" || group.residual != kNoValue) return false;
    if (other == group.output || g_.value(other).type != g_.value(group.output).type ||
        g_.value(add.outputs[0]).type != g_.value(group.output).type)
      return false;
    // A node before the head belongs to a group made before this one; so
    // does the output of an open group of a lower index.
    const NodeId producer = g_.value(other).producer;
    const auto made_by = group_of_output_.find(other);
    const bool earlier = producer == kNoNode || producer < group.nodes[0] ||
                         (made_by != group_of_output_.end() && made_by->second < index_of(group));
    if (!earlier) return false;
    // Depthwise as emit_conv decides it (any rank: a 1-D one too).
    const Shape& w = g_.value(head.inputs[1]).type.shape;
    const Result<int64_t> groups = head.attrs.get_int("group", 1);
    if (!groups.is_ok() || (*groups > 1 && w.size() > 1 && w[1] == 1)) return false;
    group.residual = other;
    return true;
  }

  size_t index_of(const Group& group) const { return static_cast<size_t>(&group - groups_.data()); }

  bool runtime_operands(const Group& group) const {
    for (ValueId in : group.matmul_operands)
      if (in == kNoValue || g_.value(in).is_constant()) return false;
    return true;
  }

  // A MatMul of two run-time operands takes an elementwise chain made only
  // of Muls by scalar constants and Divs by them, read by the MatMul alone,
  // as its alpha: attention's query and key scaling, (c·A)·B = c·(A·B).
  // The chain is elided; fold_transposes then looks behind it.
  void fold_scales(Group& group) {
    if (!runtime_operands(group)) return;
    for (ValueId& operand : group.matmul_operands) {
      const auto made_by = group_of_output_.find(operand);
      if (uses_[operand] != 1 || is_output_.count(operand) != 0 || made_by == group_of_output_.end()) continue;
      const Group& chain = groups_[made_by->second];
      if (chain.kind != GroupKind::kElementwise) continue;
      float scale = 1.f;
      ValueId source = kNoValue;   // what the chain scales
      ValueId running = kNoValue;  // the chain's value so far
      bool scaling = true;
      for (size_t j = 0; j < chain.nodes.size() && scaling; ++j) {
        const Node& op = g_.node(chain.nodes[j]);
        const int side = op.inputs.size() != 2                               ? -1
                         : is_scalar_constant(op.inputs[1])                  ? 1
                         : op.op == "Mul" && is_scalar_constant(op.inputs[0]) ? 0
                                                                             : -1;
        const ValueId other = side < 0 ? kNoValue : op.inputs[1 - static_cast<size_t>(side)];
        scaling = (op.op == "Mul" || op.op == "Div") && other != kNoValue && (j == 0 || other == running);
        if (!scaling) break;
        const float c = g_.value(op.inputs[static_cast<size_t>(side)]).constant->to_float_vector()[0];
        // inf or NaN products would differ by the order of operations.
        scaling = std::isfinite(c) && !(op.op == "Div" && c == 0.f);
        if (j == 0) {
          source = other;
          scaling = scaling && !g_.value(other).is_constant() && g_.value(other).type == g_.value(operand).type;
        }
        scale = op.op == "Mul" ? scale * c : scale / c;
        running = op.outputs[0];
      }
      if (!scaling || source == kNoValue) continue;
      group.alpha *= scale;
      elided_.insert(chain.nodes[0]);
      operand = source;
    }
  }

  // A MatMul of two run-time operands (attention's Q·Kᵀ and scores·V)
  // reads each operand that Transposes made, read by nothing else, through
  // their strides from the tensor they transposed: gemm.comp and
  // gemm_coopmat take any row, column and batch strides, so those
  // Transposes record no copy (elided_). A chain of Transposes composes.
  Status fold_transposes(Group& group) {
    if (!runtime_operands(group)) return Status::ok();
    for (size_t i = 0; i < 2; ++i) {
      ValueId source = group.matmul_operands[i];
      std::vector<NodeId> chain;  // from the MatMul back
      for (;;) {
        const NodeId p = g_.value(source).producer;
        if (p == kNoNode || g_.node(p).op != "Transpose" || uses_[source] != 1 || is_output_.count(source) != 0)
          break;
        chain.push_back(p);
        source = g_.node(p).inputs[0];
      }
      if (chain.empty()) continue;
      Strides strides = row_major_strides(g_.value(source).type.shape);
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const Node& t = g_.node(*it);
        std::vector<int64_t> perm(strides.size());
        std::iota(perm.rbegin(), perm.rend(), 0);
        HS_ASSIGN_OR_RETURN(perm, t.attrs.get_ints("perm", perm));
        Strides permuted(perm.size());
        for (size_t d = 0; d < perm.size(); ++d) permuted[d] = strides[static_cast<size_t>(perm[d])];
        strides = std::move(permuted);
      }
      group.views[i] = Group::OperandView{source, std::move(strides)};
      for (NodeId p : chain) elided_.insert(p);
    }
    return Status::ok();
  }

  // --- pass 1b: concat inputs in place ----------------------------------

  // Where a value lies inside another's bytes: `root` (a concat's output,
  // itself inside no other) from byte `offset`.
  struct Placement {
    ValueId root;
    int64_t offset;
  };

  std::optional<Placement> placement_of(ValueId v) const {
    auto it = placements_.find(v);
    if (it == placements_.end()) return std::nullopt;
    return it->second;
  }

  // A computed value whose producer can write it anywhere: not an island
  // input or output, a constant, an alias of another value's buffer, or
  // empty (its 4-byte stand-in binding would reach past its place).
  bool placeable(ValueId v) const {
    const Value& val = g_.value(v);
    if (val.is_constant() || val.producer == kNoNode || is_output_.count(v) != 0 || val.type.byte_size() == 0)
      return false;
    return !is_alias_node(g_, g_.node(val.producer));
  }

  // A Concat along an axis with only 1s before it puts each input in one
  // contiguous run of its output: the input's producer can write it there
  // and the Concat copies nothing. Concats are visited last first, so one
  // whose output is an input of a later one places its inputs inside that
  // one's bytes; and one whose inputs all lie, in order, in one root
  // becomes a view of it and records no step — DenseNet's blocks, where
  // each layer's input is a prefix of the block's final concat, copy
  // nothing at all. A value has one place: inputs placed elsewhere, island
  // inputs and outputs, constants and aliases are copied as before. Places
  // lie at multiples of kDeviceArenaAlignment in their root, as the views'
  // descriptor offsets must on any device: the largest
  // minStorageBufferOffsetAlignment Vulkan allows. (Not the device's own:
  // device_memory() lowers without a device, and the scratch it reports
  // must be what init's lowering uses.)
  void place_concat_inputs() {
    const auto aligned = [](int64_t offset) {
      return offset >= 0 && offset % static_cast<int64_t>(kDeviceArenaAlignment) == 0;
    };
    for (NodeId id = static_cast<NodeId>(g_.num_nodes()); id-- > 0;) {
      const Node& n = g_.node(id);
      if (n.op != "Concat" || n.outputs.empty()) continue;
      const ValueId y = n.outputs[0];
      const TensorType& type = g_.value(y).type;
      const Result<int64_t> raw_axis = n.attrs.require_int("axis");
      if (is_output_.count(y) != 0 || !raw_axis.is_ok()) continue;
      const Result<int64_t> axis = normalize_axis(*raw_axis, static_cast<int64_t>(type.shape.size()));
      if (!axis.is_ok()) continue;
      bool contiguous = true;
      for (int64_t d = 0; d < *axis; ++d) contiguous = contiguous && type.shape[static_cast<size_t>(d)] == 1;
      if (!contiguous) continue;
      const int64_t unit = row_major_strides(type.shape)[static_cast<size_t>(*axis)] *
                           static_cast<int64_t>(dtype_size(type.dtype));
      std::vector<int64_t> offsets;  // each input's first byte in y
      int64_t at = 0;
      for (ValueId in : n.inputs) {
        offsets.push_back(at * unit);
        at += g_.value(in).type.shape[static_cast<size_t>(*axis)];
      }
      if (placements_.count(y) == 0) {
        std::optional<Placement> inside;  // where y would start if its inputs lie in order in one root
        bool all = true;
        for (size_t i = 0; i < n.inputs.size() && all; ++i) {
          const std::optional<Placement> p = placement_of(n.inputs[i]);
          if (!p) {
            all = false;
          } else if (!inside) {
            inside = Placement{p->root, p->offset - offsets[i]};
          } else {
            all = p->root == inside->root && p->offset == inside->offset + offsets[i];
          }
        }
        if (all && inside && aligned(inside->offset)) {
          placements_.emplace(y, *inside);
          continue;
        }
      }
      const Placement base = placement_of(y).value_or(Placement{y, 0});
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        const ValueId in = n.inputs[i];
        if (in == kNoValue || !placeable(in) || placements_.count(in) != 0 || !aligned(base.offset + offsets[i]))
          continue;
        placements_.emplace(in, Placement{base.root, base.offset + offsets[i]});
      }
    }
  }

  Status group_nodes() {
    for (NodeId id = 0; id < static_cast<NodeId>(g_.num_nodes()); ++id) {
      const Node& n = g_.node(id);
      if (fused_later_.count(id) != 0) continue;  // the Mul of a fused Swish
      if (fuse_swish(id)) continue;
      bool fused = false;
      // Where's chain value may be X or Y (inputs 1 and 2); input 0 is its condition.
      const size_t fusible = n.op == "Where" ? 3 : 2;
      for (size_t i = 0; i < std::min(n.inputs.size(), fusible) && !fused; ++i) {
        const ValueId v = n.inputs[i];
        if (v == kNoValue) continue;
        auto it = group_of_output_.find(v);
        // Only a value read once, by this node, and not needed outside the
        // island may stay inside a group.
        if (it == group_of_output_.end() || uses_[v] != 1 || is_output_.count(v) != 0) continue;
        Group& group = groups_[it->second];
        HS_ASSIGN_OR_RETURN(fused, fuse_into(group, id, i));
        if (fused) {
          group.nodes.push_back(id);
          group.output = n.outputs[0];
          group_of_output_.erase(it);
          group_of_output_.emplace(group.output, &group - groups_.data());
        }
      }
      if (fused) continue;
      HS_ASSIGN_OR_RETURN(Group group, start_group(id));
      groups_.push_back(std::move(group));
      if (groups_.back().kind != GroupKind::kAlias) group_of_output_.emplace(groups_.back().output, groups_.size() - 1);
    }
    return Status::ok();
  }

  Result<Group> start_group(NodeId id) {
    const Node& n = g_.node(id);
    Group group;
    group.nodes.push_back(id);
    group.output = n.outputs[0];
    if (is_alias_node(g_, n)) {
      group.kind = GroupKind::kAlias;
    } else if (n.op == "ConvTranspose") {
      // Folds BatchNormalization, bias Adds and an epilogue as Conv does.
      group.kind = GroupKind::kConv;
    } else if (n.op == "Conv") {
      group.kind = GroupKind::kConv;
      // An activation fused at import is the first epilogue op; it also stops
      // later bias/BatchNormalization folding, which must come before it.
      HS_ASSIGN_OR_RETURN(const std::optional<UnaryOp> act, read_conv_activation(n));
      if (act) group.ops.push_back(ChainOp{act->code, act->p0, act->p1});
    } else if (n.op == "MatMul" || n.op == "Gemm") {
      group.kind = GroupKind::kGemm;
      if (n.op == "MatMul" && n.inputs.size() == 2) {
        group.matmul_operands = {n.inputs[0], n.inputs[1]};
        fold_scales(group);
        HS_RETURN_IF_ERROR(fold_transposes(group));
      }
    } else if (is_unary_elementwise(n.op)) {
      group.kind = GroupKind::kElementwise;
      group.operands.push_back(operand(n.inputs[0]));
      HS_ASSIGN_OR_RETURN(ChainOp op, unary_op(id));
      group.ops.push_back(op);
    } else if (binary_op_code(n.op)) {
      group.kind = GroupKind::kElementwise;
      // The chain starts from a tensor; a scalar constant on the left
      // becomes an immediate with the operands swapped.
      const bool swap = is_scalar_constant(n.inputs[0]) && !is_scalar_constant(n.inputs[1]);
      group.operands.push_back(operand(n.inputs[swap ? 1 : 0]));
      HS_RETURN_IF_ERROR(add_binary(group, id, swap ? 1 : 0));
    } else if (n.op == "BatchNormalization") {
      group.kind = GroupKind::kElementwise;
      group.operands.push_back(operand(n.inputs[0]));
      HS_RETURN_IF_ERROR(add_batch_norm(group, id));
    } else if (n.op == "Where") {
      group.kind = GroupKind::kElementwise;
      // As for binary ops, the chain starts from a tensor: X, unless only Y is one.
      const size_t from = is_scalar_constant(n.inputs[1]) && !is_scalar_constant(n.inputs[2]) ? 2 : 1;
      group.operands.push_back(operand(n.inputs[from]));
      HS_RETURN_IF_ERROR(add_where(group, id, from));
    } else {
      group.kind = GroupKind::kSingle;
    }
    return group;
  }

  // Whether node `id`, reading the group's output as input `chain_input`,
  // joins the group (and if so, records what it adds). Elementwise chains
  // take unary ops, binary ops (the other side a scalar immediate or an
  // operand binding) and BatchNormalization; Conv/MatMul/Gemm take a
  // folded BatchNormalization (Conv), an Add of a constant bias, and up to
  // kMaxEpilogueOps unary ops.
  Result<bool> fuse_into(Group& group, NodeId id, size_t chain_input) {
    const Node& n = g_.node(id);
    const bool unary = is_unary_elementwise(n.op);
    if (group.kind == GroupKind::kElementwise) {
      if (unary) {
        if (group.ops.size() >= kMaxChainOps) return false;
        HS_ASSIGN_OR_RETURN(ChainOp op, unary_op(id));
        group.ops.push_back(op);
        return true;
      }
      if (binary_op_code(n.op)) {
        const ValueId other = n.inputs[1 - chain_input];
        if (other == n.inputs[chain_input] || group.ops.size() >= kMaxChainOps) return false;
        if (!is_scalar_constant(other) && find_operand(group, other) < 0 && group.operands.size() >= kMaxOperands)
          return false;
        HS_RETURN_IF_ERROR(add_binary(group, id, chain_input));
        return true;
      }
      if (n.op == "BatchNormalization" && chain_input == 0) {
        if (group.ops.size() + 2 > kMaxChainOps || group.operands.size() + 2 > kMaxOperands) return false;
        HS_RETURN_IF_ERROR(add_batch_norm(group, id));
        return true;
      }
      if (n.op == "Where" && chain_input > 0) {
        const ValueId other = n.inputs[chain_input == 1 ? 2 : 1];
        const size_t more = 1 + (!is_scalar_constant(other) && find_operand(group, other) < 0 ? 1 : 0);
        if (other == n.inputs[chain_input] || group.ops.size() >= kMaxChainOps ||
            group.operands.size() + more > kMaxOperands)
          return false;
        HS_RETURN_IF_ERROR(add_where(group, id, chain_input));
        return true;
      }
      return false;
    }
    if (group.kind != GroupKind::kConv && group.kind != GroupKind::kGemm) return false;
    if (unary) {
      if (group.ops.size() >= kMaxEpilogueOps) return false;
      HS_ASSIGN_OR_RETURN(ChainOp op, unary_op(id));
      group.ops.push_back(op);
      return true;
    }
    // Folding into weights and bias happens before the epilogue ops.
    if (!group.ops.empty()) return false;
    const Node& head = g_.node(group.nodes[0]);
    if (group.residual != kNoValue) return false;  // folds apply to the conv alone
    if (group.kind == GroupKind::kConv && n.op == "BatchNormalization" && chain_input == 0 &&
        group.batch_norm == kNoNode && group.bias_adds.empty()) {
      group.batch_norm = id;
      return true;
    }
    if (n.op != "Add") return false;
    const ValueId other = n.inputs[1 - chain_input];
    const Value& c = g_.value(other);
    if (!c.is_constant()) return fuse_residual(group, n, other);
    if (g_.value(n.outputs[0]).type.shape != g_.value(group.output).type.shape) return false;
    const Shape& out = g_.value(group.output).type.shape;
    if (group.kind == GroupKind::kConv) {
      // A per-channel (or scalar) constant: it broadcasts along every dim but 1.
      const Strides s = broadcast_strides(c.type.shape, out);
      for (size_t d = 0; d < s.size(); ++d)
        if (d != 1 && s[d] != 0) return false;
      group.bias_adds.push_back(other);
      return true;
    }
    // Gemm/MatMul: the constant becomes C, so it must not vary along the
    // batch dims and the node must not have a C of its own.
    if (head.op == "Gemm" && head.inputs.size() > 2 && head.inputs[2] != kNoValue) return false;
    if (!group.bias_adds.empty()) return false;
    if (head.op == "MatMul" && (g_.value(head.inputs[0]).type.rank() < 2 || g_.value(head.inputs[1]).type.rank() < 2))
      return false;
    const Strides s = broadcast_strides(c.type.shape, out);
    for (size_t d = 0; d + 2 < s.size(); ++d)
      if (s[d] != 0) return false;
    group.bias_adds.push_back(other);
    return true;
  }

  Operand operand(ValueId v) const { return Operand{v, nullptr, g_.value(v).type.shape}; }

  static int find_operand(const Group& group, ValueId v) {
    for (size_t i = 0; i < group.operands.size(); ++i)
      if (group.operands[i].value == v) return static_cast<int>(i);
    return -1;
  }

  bool is_scalar_constant(ValueId v) const {
    const Value& val = g_.value(v);
    return val.is_constant() && val.type.dtype == DType::kFloat32 && val.type.num_elements() == 1;
  }

  Result<ChainOp> unary_op(NodeId id) const {
    HS_ASSIGN_OR_RETURN(UnaryOp u, read_unary_op(g_, id));
    return ChainOp{u.code, u.p0, u.p1};
  }

  // Appends binary node `id` whose input `chain_input` is the chain value.
  Status add_binary(Group& group, NodeId id, size_t chain_input) {
    const Node& n = g_.node(id);
    ChainOp op;
    op.code = *binary_op_code(n.op);
    op.reversed = chain_input == 1;
    set_other_side(group, op, n.inputs[1 - chain_input]);
    group.ops.push_back(op);
    return Status::ok();
  }

  // Appends Where node `id` whose input `chain_input` (1: X, 2: Y) is the
  // chain value; its constant bool condition becomes an f32 0/1 operand.
  Status add_where(Group& group, NodeId id, size_t chain_input) {
    const Node& n = g_.node(id);
    const Value& cond = g_.value(n.inputs[0]);
    if (!cond.is_constant()) return unsupported("Where's condition must be a constant");
    ChainOp op;
    op.code = OpCode::kWhere;
    op.reversed = chain_input == 2;
    set_other_side(group, op, n.inputs[chain_input == 1 ? 2 : 1]);
    auto mask = std::make_shared<const std::vector<float>>(cond.constant->to_float_vector());
    group.operands.push_back(Operand{kNoValue, std::move(mask), cond.type.shape});
    op.condition = static_cast<uint32_t>(group.operands.size() - 1);
    group.ops.push_back(op);
    return Status::ok();
  }

  // The side of `op` that is not the chain value: an immediate when it is a
  // scalar constant, else an operand binding (shared when already bound).
  void set_other_side(Group& group, ChainOp& op, ValueId other) {
    if (is_scalar_constant(other)) {
      op.immediate = true;
      op.p0 = g_.value(other).constant->data<float>()[0];
    } else {
      int slot = find_operand(group, other);
      if (slot < 0) {
        group.operands.push_back(operand(other));
        slot = static_cast<int>(group.operands.size()) - 1;
      }
      op.operand = static_cast<uint32_t>(slot);
    }
  }

  // y = x * mul + add with per-channel factors, shaped [C, 1, ...] so they
  // broadcast along dim 1 of x.
  Status add_batch_norm(Group& group, NodeId id) {
    HS_ASSIGN_OR_RETURN(BatchNormFactors f, read_batch_norm(g_, id));
    const Shape& x = g_.value(g_.node(id).inputs[0]).type.shape;
    Shape shape(x.size() - 1, 1);
    shape[0] = x[1];
    for (auto* factors : {&f.mul, &f.add}) {
      group.operands.push_back(
          Operand{kNoValue, std::make_shared<const std::vector<float>>(std::move(*factors)), shape});
      ChainOp op;
      op.code = factors == &f.mul ? OpCode::kMul : OpCode::kAdd;
      op.operand = static_cast<uint32_t>(group.operands.size() - 1);
      group.ops.push_back(op);
    }
    return Status::ok();
  }

  // --- pass 2: emission ---------------------------------------------------

  Status emit_groups() {
    // Each group runs where its last node stood: every value it reads is
    // produced by an earlier node, and nothing outside it reads its inner values.
    std::vector<const Group*> order;
    for (const Group& group : groups_) order.push_back(&group);
    std::stable_sort(order.begin(), order.end(),
                     [](const Group* a, const Group* b) { return a->nodes.back() < b->nodes.back(); });
    for (const Group* group : order) {
      if (elided_.count(group->nodes[0]) != 0) continue;  // a Transpose or scalar Mul a MatMul reads through
      if (in_se_scale_.count(group->nodes[0]) != 0) continue;  // runs with its block's Mul (se_scale_at_)
      if (mean_in_depthwise_.count(group->nodes[0]) != 0) continue;  // written by its depthwise conv
      if (expand_in_depthwise_.count(group->nodes[0]) != 0) continue;  // computed by its depthwise conv
      label_.clear();
      node_names_.clear();
      node_ops_.clear();
      name_nodes(*group);
      Status status = emit(*group);
      if (!status.is_ok()) return status.with_context(g_.describe_node(group->nodes[0]) + ": ");
    }
    return Status::ok();
  }

  // The dispatch being recorded runs `group`'s nodes too: its label, and the
  // names and ops its timestamps are reported under.
  void name_nodes(const Group& group) {
    for (NodeId id : group.nodes) {
      label_ += (label_.empty() ? "" : "+") + g_.node(id).name;
      node_names_.push_back(g_.node(id).name);
      node_ops_.push_back(g_.node(id).op);
    }
  }

  Status emit(const Group& group) {
    const Node& head = g_.node(group.nodes[0]);
    if (auto se = se_scale_at_.find(group.nodes[0]); se != se_scale_at_.end()) return emit_se_scale(se->second);
    switch (group.kind) {
      case GroupKind::kAlias: return emit_alias(group);
      case GroupKind::kElementwise: return emit_elementwise(group);
      case GroupKind::kConv: return head.op == "ConvTranspose" ? emit_conv_transpose(group) : emit_conv(group);
      case GroupKind::kGemm: return head.op == "Gemm" ? emit_gemm(group) : emit_matmul(group);
      case GroupKind::kSingle: break;
    }
    if (head.op == "MaxPool" || head.op == "AveragePool") return emit_pool(group);
    if (head.op == "GlobalAveragePool" || is_reduce_op(head.op)) return emit_reduce(group);
    if (head.op == "Softmax") return emit_softmax(group);
    if (head.op == "Transpose") return emit_transpose(group);
    if (head.op == "Slice") return emit_slice(group);
    if (head.op == "Concat") return emit_concat(group);
    if (head.op == "Gather" || head.op == "GatherElements") return emit_gather(group);
    if (head.op == "Resize") return emit_resize(group);
    if (head.op == "LayerNormalization" || head.op == "GroupNormalization") return emit_normalization(group);
    if (head.op == "Split") return emit_split(group);
    if (head.op == "Expand") return emit_expand(group);
    if (head.op == "Tile") return emit_tile(group);
    if (head.op == "Pad") return emit_pad(group);
    if (head.op == "Cast") return emit_cast(group);
    return unsupported("op " + head.op + " not implemented");
  }

  // Aliases share their input's buffer, unless the island hands the value
  // out: an output gets a buffer of its own (the executor may keep it in
  // host-visible memory), filled by a copy.
  Status emit_alias(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    HS_ASSIGN_OR_RETURN(const int source, buffer_of(n.inputs[0]));
    if (is_output_.count(group.output) == 0) {
      buffer_of_value_.emplace(group.output, source);
      return Status::ok();
    }
    const int target = new_value_buffer(group.output);
    add_copy(source, target, g_.value(group.output).type.byte_size());
    return Status::ok();
  }

  Status emit_elementwise(const Group& group) {
    const Shape& out_shape = g_.value(group.output).type.shape;
    std::vector<int> buffers;
    std::vector<Strides> strides;
    for (const Operand& o : group.operands) {
      if (o.value != kNoValue) {
        HS_ASSIGN_OR_RETURN(const int b, buffer_of(o.value));
        buffers.push_back(b);
      } else {
        buffers.push_back(constant_buffer(bytes_of(*o.data), label_ + "/factors"));
      }
      strides.push_back(broadcast_strides(o.shape, out_shape));
    }
    const Walk walk = coalesce(out_shape, strides);
    if (walk.dims.size() > kMaxRank)
      return unsupported("rank " + std::to_string(walk.dims.size()) + " > " + std::to_string(kMaxRank));
    ElementwiseParams p{};
    ElementwiseSpecialization spec{};
    p.total = u32(shape_elements(out_shape));
    p.rank = u32(walk.dims.size());
    spec.operands = u32(group.operands.size());
    spec.ops = u32(group.ops.size());
    const Strides contiguous = row_major_strides(walk.dims);
    for (size_t d = 0; d < walk.dims.size(); ++d) p.dims[d] = u32(walk.dims[d]);
    for (size_t o = 0; o < group.operands.size(); ++o) {
      for (size_t d = 0; d < walk.dims.size(); ++d) p.strides[o][d] = static_cast<int32_t>(walk.strides[o][d]);
      if (walk.strides[o] == contiguous) spec.contiguous_mask |= 1u << o;
    }
    for (size_t i = 0; i < group.ops.size(); ++i) {
      const ChainOp& op = group.ops[i];
      spec.op_words[i] = static_cast<uint32_t>(op.code) | (op.operand << 8) | (op.reversed ? kOpReversed : 0u) |
                         (op.immediate ? kOpImmediate : 0u) | (op.condition << kOpConditionShift);
      p.op_params[i][0] = op.p0;
      p.op_params[i][1] = op.p1;
    }
    const int out = new_value_buffer(group.output);
    Step step = dispatch(Kernel::kElementwise, param_push(p),
                         grid_1d(ceil_div(p.total, kElementwiseGroupSize * kElementwisePerThread)));
    step.specialization = words_of(spec);
    step.bindings = {kParamsBuffer, out};
    for (uint32_t o = 0; o < kMaxOperands; ++o)
      step.bindings.push_back(o < buffers.size() ? buffers[o] : kParamsBuffer);
    step.reads = buffers;
    step.writes = {out};
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  // Epilogue ops packed one per byte, their parameters in order.
  static void pack_epilogue(const Group& group, uint32_t& ops, float (&params)[4]) {
    ops = 0;
    for (size_t i = 0; i < group.ops.size() && i < kMaxEpilogueOps; ++i) {
      ops |= static_cast<uint32_t>(group.ops[i].code) << (8 * i);
      params[2 * i] = group.ops[i].p0;
      params[2 * i + 1] = group.ops[i].p1;
    }
  }

  Status emit_conv(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const TensorType& x = g_.value(n.inputs[0]).type;
    const Value& w_value = g_.value(n.inputs[1]);
    const Shape& y = g_.value(n.outputs[0]).type.shape;
    if (!w_value.is_constant()) return unsupported("weight W must be a constant");
    const Shape& w = w_value.type.shape;
    HS_ASSIGN_OR_RETURN(const int64_t groups, n.attrs.get_int("group", 1));
    const std::vector<int64_t> kernel(w.begin() + 2, w.end());
    HS_ASSIGN_OR_RETURN(const Window2d win, window_2d(n.attrs, x.shape, kernel, y, false));
    const int64_t out_channels = w[0];
    const int64_t group_channels = x.shape[1] / groups;
    const int64_t group_k = group_channels * win.kernel_h * win.kernel_w;

    HS_ASSIGN_OR_RETURN(const ChannelAffine affine, fold_channel_affine(group, out_channels));
    const std::vector<float> weights = w_value.constant->to_float_vector();
    ConvPush p{};
    p.batch = u32(x.shape[0]);
    p.channels = u32(x.shape[1]);
    p.in_h = u32(win.in_h);
    p.in_w = u32(win.in_w);
    p.out_channels = u32(out_channels);
    p.out_h = u32(win.out_h);
    p.out_w = u32(win.out_w);
    p.group_channels = u32(group_channels);
    p.group_out = u32(out_channels / groups);
    p.kernel_h = u32(win.kernel_h);
    p.kernel_w = u32(win.kernel_w);
    p.stride_h = u32(win.stride_h);
    p.stride_w = u32(win.stride_w);
    p.dilation_h = u32(win.dilation_h);
    p.dilation_w = u32(win.dilation_w);
    p.pad_top = u32(win.pad_top);
    p.pad_left = u32(win.pad_left);
    p.has_bias = affine.has_bias ? 1 : 0;
    p.has_residual = group.residual != kNoValue ? 1 : 0;
    pack_epilogue(group, p.epilogue_ops, p.epilogue_params);
    auto weight = [&](int64_t oc, int64_t k) { return weights[oc * group_k + k] * affine.scale[oc]; };

    if (groups > 1 && group_channels == 1) {
      // depthwise_conv2d.comp keeps ONNX's [channel][k].
      std::vector<float> arranged(weights.size());
      for (int64_t oc = 0; oc < out_channels; ++oc)
        for (int64_t k = 0; k < group_k; ++k) arranged[oc * group_k + k] = weight(oc, k);
      // Its input is not made: the expand conv runs inside this dispatch.
      if (auto expand = expand_of_depthwise_.find(group.nodes[0]); expand != expand_of_depthwise_.end())
        return emit_expand_depthwise(group, *expand->second, p, arranged, affine.bias);
      HS_ASSIGN_OR_RETURN(const int in, buffer_of(n.inputs[0]));
      const int w_buffer = constant_buffer(bytes_of(arranged), w_value.name);
      const int b_buffer = affine.has_bias ? constant_buffer(bytes_of(affine.bias), label_ + "/bias") : kParamsBuffer;
      const int out = new_value_buffer(group.output);
      if (auto fused = depthwise_mean_of_.find(group.nodes[0]); fused != depthwise_mean_of_.end()) {
        // depthwise_mean.comp: one workgroup per output plane, which also
        // writes the plane's mean (plan_depthwise_means).
        const Group& mean = *fused->second;
        name_nodes(mean);
        const int means = new_value_buffer(mean.output);
        Step step = dispatch(Kernel::kDepthwiseMean, words_of(p), grid_1d(static_cast<uint64_t>(x.shape[0] * out_channels)));
        step.specialization = {gpu::depthwise_mean_group_size(int64_t{win.out_h} * win.out_w), 0};  // NCHW
        step.bindings = {in, w_buffer, b_buffer, out, means};
        step.reads = {in, w_buffer, b_buffer};
        step.writes = {out, means};
        out_.steps.push_back(std::move(step));
        return Status::ok();
      }
      const int64_t pixels = x.shape[0] * win.out_h * win.out_w;
      Step step =
          dispatch(Kernel::kDepthwiseConv2d, words_of(p), grid_1d(ceil_div(pixels * out_channels, kGenericGroupSize)));
      step.bindings = {in, w_buffer, b_buffer, out};
      step.reads = {in, w_buffer, b_buffer};
      step.writes = {out};
      out_.steps.push_back(std::move(step));
      return Status::ok();
    }
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(n.inputs[0]));
    return emit_implicit_gemm(group, p, weight, affine.has_bias ? affine.bias : std::vector<float>{}, in, w_value.name);
  }

  // The dispatches of a conv as an implicit GEMM (conv2d.comp, or
  // conv2d_coopmat.comp at precision fp16; split-K adds conv2d_reduce.comp)
  // whose push constants are `p` (epilogue packed), weights weight(oc, k)
  // with k = c * taps + tap within oc's group (as ONNX orders them), bias
  // per output channel (empty: none). Weights, tap table, tiling and
  // workgroups as the VGF runtime makes them (shared_gpu/conv_kernel.h).
  template <class WeightAt>
  Status emit_implicit_gemm(const Group& group, const ConvPush& p, WeightAt weight, const std::vector<float>& bias,
                            int in, const std::string& w_name) {
    if (pointwise_fits(p)) return emit_pointwise(group, p, weight, bias, in);
    const ConvGemmShape gemm = gpu::conv_gemm_shape(p);
    // Tensor-core tiles stay 64 x 64 (gemm_coopmat says why;
    // conv2d_coopmat.comp at 1x256x56x56 on an H100: 0.074 ms at 64x64/1,
    // 0.174 at 128x64/1, 0.254 at 128x128/1).
    const ConvTiling tiling = clamp_conv_tiling(
        options_.conv_tiling.value_or(choose_conv_tiling(gemm, options_.coopmat ? kCoopmatTile : 128)), gemm);
    const int64_t window = int64_t{p.kernel_h} * p.kernel_w;
    const std::vector<float> arranged = gpu::arrange_conv_weights(
        p, tiling, [&](int64_t oc, int64_t c, int64_t tap) { return weight(oc, c * window + tap); });
    const int w_buffer = constant_buffer(bytes_of(arranged), w_name);
    const int b_buffer = bias.empty() ? kParamsBuffer : constant_buffer(bytes_of(bias), label_ + "/bias");
    // The residual's binding; without one the parameter buffer stands in, unread.
    int residual = kParamsBuffer;
    std::vector<int> residual_reads;
    if (group.residual != kNoValue) {
      HS_ASSIGN_OR_RETURN(residual, buffer_of(group.residual));
      residual_reads = {residual};
    }
    const int out = new_value_buffer(group.output);
    // Tap-major convs need no table; the binding then points at the parameter buffer.
    const std::vector<uint32_t> table = gpu::conv_taps(p, gpu::ConvLayout::kNchw);
    const int taps = table.empty() ? kParamsBuffer : constant_buffer(bytes_of(table), label_ + "/taps");
    const ConvSpecialization spec = gpu::conv_specialization(p, tiling, gpu::ConvLayout::kNchw);
    const std::array<uint32_t, 3> grid = gpu::conv_workgroups(p, tiling);
    std::vector<uint32_t> tensor_cores;
    if (options_.coopmat)
      tensor_cores = coopmat_specialization(*options_.coopmat, tiling.tile_channels, tiling.tile_pixels);
    Step step = dispatch(tensor_cores.empty() ? Kernel::kConv2d : Kernel::kConv2dCoopmat, words_of(p), grid);
    step.specialization = words_of(spec);
    step.specialization.insert(step.specialization.end(), tensor_cores.begin(), tensor_cores.end());
    if (tiling.splits == 1) {
      step.bindings = {in, w_buffer, b_buffer, out, taps, residual};
      step.reads = {in, w_buffer, b_buffer, taps};
      step.reads.insert(step.reads.end(), residual_reads.begin(), residual_reads.end());
    } else {
      // Slices write partial sums (no bias: binding 2 is unused); the
      // reduce step adds them, the bias and the epilogue.
      const int64_t y_elements = gemm.pixels * p.out_channels;
      const int partial = partial_sums_buffer(gpu::conv_partial_bytes(p, tiling));
      step.bindings = {in, w_buffer, kParamsBuffer, partial, taps, kParamsBuffer};
      step.reads = {in, w_buffer, taps};
      step.writes = {partial};
      out_.steps.push_back(std::move(step));
      step = dispatch(Kernel::kConv2dReduce, words_of(p), grid_1d(ceil_div(y_elements, kConvGroupSize)));
      step.specialization = {tiling.splits};
      step.bindings = {partial, b_buffer, out, residual};
      step.reads = {partial, b_buffer};
      step.reads.insert(step.reads.end(), residual_reads.begin(), residual_reads.end());
    }
    step.writes = {out};
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  // Whether the conv `p` describes runs pointwise_conv.comp
  // (gpu::pointwise_fits), unless a benchmark forces a tiling.
  bool pointwise_fits(const ConvPush& p) const { return !options_.conv_tiling && gpu::pointwise_fits(p); }

  // A 1x1 expand conv (one group, stride 1, no padding, no residual,
  // constant weights) whose output only a depthwise conv reads runs inside
  // that conv's dispatch (expand_depthwise.comp) where both planes have at
  // most kExpandDepthwiseMaxPlane pixels and the expand's K times the input
  // plane is at most kExpandDepthwiseMaxFmas.
  void plan_expand_depthwise() {
    std::map<ValueId, const Group*> writer;
    for (const Group& group : groups_) writer[group.output] = &group;
    for (const Group& dw : groups_) {
      if (!is_depthwise_2d(dw)) continue;
      const Node& d = g_.node(dw.nodes[0]);
      auto made = writer.find(d.inputs[0]);
      if (made == writer.end() || uses_[d.inputs[0]] != 1 || is_output_.count(d.inputs[0]) != 0 ||
          placement_of(d.inputs[0]))
        continue;
      const Group& e = *made->second;
      if (e.kind != GroupKind::kConv || e.residual != kNoValue || elided_.count(e.nodes[0]) != 0 ||
          in_se_scale_.count(e.nodes[0]) != 0)
        continue;
      const Node& en = g_.node(e.nodes[0]);
      if (en.op != "Conv" || en.inputs.size() < 2 || !g_.value(en.inputs[1]).is_constant()) continue;
      const Shape& ex = g_.value(en.inputs[0]).type.shape;
      const Shape& ew = g_.value(en.inputs[1]).type.shape;
      const Shape& ey = g_.value(e.output).type.shape;
      const Shape& dy = g_.value(dw.output).type.shape;
      Result<int64_t> groups = en.attrs.get_int("group", 1);
      if (!groups.is_ok() || *groups != 1 || ex.size() != 4 || ew.size() != 4 || ey.size() != 4 || ew[2] != 1 ||
          ew[3] != 1 || ex[2] != ey[2] || ex[3] != ey[3] || ex[1] != ew[1])
        continue;
      // Stride 1, no padding: the output plane is the input's.
      Result<std::vector<int64_t>> strides = en.attrs.get_ints("strides", {1, 1});
      Result<std::vector<int64_t>> pads = en.attrs.get_ints("pads", {0, 0, 0, 0});
      if (!strides.is_ok() || !pads.is_ok() || *strides != std::vector<int64_t>{1, 1} ||
          *pads != std::vector<int64_t>{0, 0, 0, 0})
        continue;
      const int64_t in_plane = ey[2] * ey[3];
      if (in_plane > kExpandDepthwiseMaxPlane || dy[2] * dy[3] > kExpandDepthwiseMaxPlane ||
          in_plane * ex[1] > kExpandDepthwiseMaxFmas)
        continue;
      expand_of_depthwise_[dw.nodes[0]] = &e;
      expand_in_depthwise_.insert(e.nodes[0]);
    }
  }

  // The depthwise conv `dw` (push constants p, weights arranged
  // [out channel][tap], bias per output channel) with the expand conv before it, and its
  // output means where plan_depthwise_means took them: one
  // expand_depthwise.comp dispatch.
  Status emit_expand_depthwise(const Group& dw, const Group& expand, const ConvPush& p,
                               const std::vector<float>& dw_weights, const std::vector<float>& dw_bias) {
    const Node& en = g_.node(expand.nodes[0]);
    const Shape& ex = g_.value(en.inputs[0]).type.shape;
    const int64_t channels = g_.value(expand.output).type.shape[1], k = ex[1];
    HS_ASSIGN_OR_RETURN(const ChannelAffine ea, fold_channel_affine(expand, channels));
    const std::vector<float> ew = g_.value(en.inputs[1]).constant->to_float_vector();  // [channels][k]
    std::vector<float> expand_weights(ew.size());
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < k; ++i) expand_weights[c * k + i] = ew[c * k + i] * ea.scale[c];
    // The expand's nodes go first in the label and profile names.
    std::string label;
    std::vector<std::string> names, ops;
    for (NodeId id : expand.nodes) {
      label += (label.empty() ? "" : "+") + g_.node(id).name;
      names.push_back(g_.node(id).name);
      ops.push_back(g_.node(id).op);
    }
    label_ = label + "+" + label_;
    node_names_.insert(node_names_.begin(), names.begin(), names.end());
    node_ops_.insert(node_ops_.begin(), ops.begin(), ops.end());
    ExpandDepthwisePush q{};
    q.batch = p.batch;
    q.channels = p.channels;
    q.in_h = p.in_h;
    q.in_w = p.in_w;
    q.out_channels = p.out_channels;
    q.out_h = p.out_h;
    q.out_w = p.out_w;
    q.group_out = p.group_out;
    q.kernel_h = p.kernel_h;
    q.kernel_w = p.kernel_w;
    q.stride_h = p.stride_h;
    q.stride_w = p.stride_w;
    q.dilation_h = p.dilation_h;
    q.dilation_w = p.dilation_w;
    q.pad_top = p.pad_top;
    q.pad_left = p.pad_left;
    q.k = u32(k);
    pack_epilogue(expand, q.expand_ops, q.expand_params);
    q.depthwise_ops = p.epilogue_ops;
    std::copy(std::begin(p.epilogue_params), std::end(p.epilogue_params), std::begin(q.depthwise_params));
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(en.inputs[0]));
    const int we = constant_buffer(bytes_of(expand_weights), label_ + "/expand_weights");
    const int be = constant_buffer(bytes_of(ea.bias), label_ + "/expand_bias");
    const int wd = constant_buffer(bytes_of(dw_weights), label_ + "/depthwise_weights");
    const int bd = constant_buffer(bytes_of(dw_bias), label_ + "/depthwise_bias");
    const int out = new_value_buffer(dw.output);
    std::vector<int> writes = {out};
    int means = kParamsBuffer;
    if (auto fused = depthwise_mean_of_.find(dw.nodes[0]); fused != depthwise_mean_of_.end()) {
      const Group& mean = *fused->second;
      name_nodes(mean);
      means = new_value_buffer(mean.output);
      writes.push_back(means);
      q.has_mean = 1;
    }
    Step step = dispatch(Kernel::kExpandDepthwise, words_of(q), grid_1d(uint64_t{p.batch} * p.out_channels));
    // 256 invocations; K split over those a pixel of the input plane leaves.
    uint32_t slices = 1;
    while (slices < 64 && 256 / (slices * 2) >= p.in_h * p.in_w && slices * 2 * 4 <= k) slices *= 2;
    step.specialization = {256, slices};
    step.bindings = {in, we, be, wd, bd, out, means};
    step.reads = {in, we, be, wd, bd};
    step.writes = std::move(writes);
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  // A conv pointwise_fits admits, as one pointwise_conv.comp dispatch:
  // weights weight(oc, k) arranged [k][out channel] in vec4s, bias per
  // output channel (empty: none), the group's residual and epilogue.
  template <class WeightAt>
  Status emit_pointwise(const Group& group, const ConvPush& p, WeightAt weight, const std::vector<float>& bias,
                        int in) {
    const std::vector<float> arranged = gpu::pointwise_weights(p, weight);
    const PointwisePush q = gpu::pointwise_push(p, !bias.empty(), group.residual != kNoValue);
    const int w_buffer = constant_buffer(bytes_of(arranged), label_ + "/weights");
    const int b_buffer = bias.empty() ? kParamsBuffer : constant_buffer(bytes_of(bias), label_ + "/bias");
    int residual = kParamsBuffer;
    std::vector<int> reads = {in, w_buffer, b_buffer};
    if (group.residual != kNoValue) {
      HS_ASSIGN_OR_RETURN(residual, buffer_of(group.residual));
      reads.push_back(residual);
    }
    const int out = new_value_buffer(group.output);
    const uint32_t slices = gpu::pointwise_slices(q);
    Step step = dispatch(Kernel::kPointwiseConv, words_of(q), gpu::pointwise_workgroups(q, slices));
    step.specialization = {slices, 0};  // NCHW
    step.bindings = {in, w_buffer, b_buffer, out, residual};
    step.reads = std::move(reads);
    step.writes = {out};
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  // Whether a linear layer of `rows` x `columns` outputs runs on the conv
  // kernel (emit_linear) rather than as a GEMM with a constant B. Always at
  // f32. At fp16 only layers too small to fill the GPU with gemm_coopmat's
  // 64 x 64 tiles: the conv kernel has split-K (gemm_coopmat has none), but
  // its tensor-core tiles stay 64 x 64 where gemm_coopmat's grow. On an
  // H100: ViT-B/16's 197 x 768 -> 3072 took 0.097 ms on the conv kernel and
  // 0.039 on gemm_coopmat_512; BERT's 128 x 768 -> 768 (24 tiles of 64 x 64)
  // and a classifier's single row need the split-K (without it BERT-base
  // ran 2.9x slower).
  bool linear_on_conv_kernel(int64_t rows, int64_t columns) const {
    return !options_.coopmat || int64_t{ceil_div(rows, 64)} * ceil_div(columns, 64) < kBusyWorkgroups;
  }

  // A linear layer — Y[m, n] = sum_k A[m, k] W[n, k] + bias[n], A the
  // island's row-major [M, K] tensor, W constant — as a 1x1 conv over M
  // images of K channels, so it gets the conv kernel's tiling and split-K (a
  // classifier's M = 1 row: gemm.comp ran ResNet-50's 2048 -> 1000 layer in
  // 0.2 ms on an H100, 16 workgroups walking K alone) and the tensor cores
  // at precision fp16.
  template <class WeightAt>
  Status emit_linear(const Group& group, int a_buffer, int64_t m, int64_t k, int64_t n, WeightAt weight,
                     const std::vector<float>& bias) {
    ConvPush p{};
    p.batch = u32(m);
    p.channels = u32(k);
    p.in_h = p.in_w = p.out_h = p.out_w = 1;
    p.out_channels = u32(n);
    p.group_channels = u32(k);
    p.group_out = u32(n);
    p.kernel_h = p.kernel_w = p.stride_h = p.stride_w = p.dilation_h = p.dilation_w = 1;
    p.has_bias = bias.empty() ? 0 : 1;
    pack_epilogue(group, p.epilogue_ops, p.epilogue_params);
    return emit_implicit_gemm(group, p, weight, bias, a_buffer, label_ + "/linear");
  }

  // A conv's (or ConvTranspose's) per-output-channel scale and bias after
  // folding its bias input, a BatchNormalization and bias Adds.
  struct ChannelAffine {
    std::vector<float> scale, bias;
    bool has_bias = false;
  };
  Result<ChannelAffine> fold_channel_affine(const Group& group, int64_t out_channels) const {
    const Node& n = g_.node(group.nodes[0]);
    ChannelAffine a;
    a.scale.assign(static_cast<size_t>(out_channels), 1.f);
    a.bias.assign(static_cast<size_t>(out_channels), 0.f);
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      const Value& b = g_.value(n.inputs[2]);
      if (!b.is_constant()) return unsupported("bias B must be a constant");
      a.bias = b.constant->to_float_vector();
      a.has_bias = true;
    }
    if (group.batch_norm != kNoNode) {
      HS_ASSIGN_OR_RETURN(const BatchNormFactors f, read_batch_norm(g_, group.batch_norm));
      for (int64_t c = 0; c < out_channels; ++c) {
        a.scale[c] = f.mul[c];
        a.bias[c] = a.bias[c] * f.mul[c] + f.add[c];
      }
      a.has_bias = true;
    }
    for (ValueId add : group.bias_adds) {
      const Tensor& t = *g_.value(add).constant;
      const std::vector<float> v = t.to_float_vector();
      for (int64_t c = 0; c < out_channels; ++c) a.bias[c] += v[t.num_elements() == 1 ? 0 : c];
      a.has_bias = true;
    }
    return a;
  }

  // One invocation per output element (conv_transpose2d.comp), weights in
  // their ONNX layout scaled per output channel.
  Status emit_conv_transpose(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& x = g_.value(n.inputs[0]).type.shape;
    const Value& w_value = g_.value(n.inputs[1]);
    if (!w_value.is_constant()) return unsupported("weight W must be a constant");
    HS_ASSIGN_OR_RETURN(const ConvTransposeGeometry geo, conv_transpose_geometry(n.attrs, x, w_value.type.shape));
    HS_ASSIGN_OR_RETURN(const ChannelAffine affine, fold_channel_affine(group, geo.out_channels));
    const bool two_d = geo.in.size() == 2;
    const int64_t group_in = x[1] / geo.group, group_out = geo.out_channels / geo.group;
    const int64_t taps = shape_elements(geo.kernel);
    // W is [in channel][out channel of group][tap]: element i belongs to
    // output channel (its group) * group_out + (its channel in the group).
    std::vector<float> weights = w_value.constant->to_float_vector();
    for (size_t i = 0; i < weights.size(); ++i) {
      const int64_t row = static_cast<int64_t>(i) / taps;  // in channel * group_out + m
      const int64_t in_channel = row / group_out;
      weights[i] *= affine.scale[static_cast<size_t>(in_channel / group_in * group_out + row % group_out)];
    }
    ConvPush p{};
    p.batch = u32(x[0]);
    p.channels = u32(x[1]);
    p.in_h = u32(two_d ? geo.in[0] : 1);
    p.in_w = u32(geo.in.back());
    p.out_channels = u32(geo.out_channels);
    p.out_h = u32(two_d ? geo.out[0] : 1);
    p.out_w = u32(geo.out.back());
    p.group_channels = u32(group_in);
    p.group_out = u32(group_out);
    p.kernel_h = u32(two_d ? geo.kernel[0] : 1);
    p.kernel_w = u32(geo.kernel.back());
    p.stride_h = u32(two_d ? geo.strides[0] : 1);
    p.stride_w = u32(geo.strides.back());
    p.dilation_h = u32(two_d ? geo.dilations[0] : 1);
    p.dilation_w = u32(geo.dilations.back());
    // Signed: conv_transpose2d.comp reads them back as int.
    p.pad_top = static_cast<uint32_t>(static_cast<int32_t>(two_d ? geo.pad_begin[0] : 0));
    p.pad_left = static_cast<uint32_t>(static_cast<int32_t>(geo.pad_begin.back()));
    p.has_bias = affine.has_bias ? 1 : 0;
    pack_epilogue(group, p.epilogue_ops, p.epilogue_params);
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(n.inputs[0]));
    const int w_buffer = constant_buffer(bytes_of(weights), w_value.name);
    const int b_buffer = affine.has_bias ? constant_buffer(bytes_of(affine.bias), label_ + "/bias") : kParamsBuffer;
    const int out = new_value_buffer(group.output);
    const int64_t total = shape_elements(g_.value(n.outputs[0]).type.shape);
    Step step = dispatch(Kernel::kConvTranspose2d, words_of(p), grid_1d(ceil_div(total, kGenericGroupSize)));
    step.bindings = {in, w_buffer, b_buffer, out};
    step.reads = {in, w_buffer, b_buffer};
    step.writes = {out};
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  // The scratch buffer of split-K convs' partial sums, grown to `bytes`.
  // One serves every conv of the island: each conv's sums are dead once
  // its reduce step read them, and the next conv's write of them waits
  // for that read (plan_barriers).
  int partial_sums_buffer(uint64_t bytes) {
    if (partial_sums_ < 0) {
      BufferPlan plan;
      plan.role = BufferPlan::Role::kIntermediate;
      plan.name = "conv partial sums";
      out_.buffers.push_back(std::move(plan));
      partial_sums_ = static_cast<int>(out_.buffers.size()) - 1;
    }
    BufferPlan& plan = out_.buffers[partial_sums_];
    plan.bytes = std::max(plan.bytes, bytes);
    return partial_sums_;
  }

  // conv2d.comp's table: for each k = (c, kh, kw) of a group, the input
  // offset of that tap from the window's origin and its (row, column)
  // displacement, so the shader gathers patches without dividing.
  Status emit_gemm(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Value& a = g_.value(n.inputs[0]);
    const Value& b = g_.value(n.inputs[1]);
    HS_ASSIGN_OR_RETURN(const int64_t trans_a, n.attrs.get_int("transA", 0));
    HS_ASSIGN_OR_RETURN(const int64_t trans_b, n.attrs.get_int("transB", 0));
    HS_ASSIGN_OR_RETURN(const float alpha, n.attrs.get_float("alpha", 1.f));
    HS_ASSIGN_OR_RETURN(const float beta, n.attrs.get_float("beta", 1.f));
    const int64_t m = trans_a ? a.type.shape[1] : a.type.shape[0];
    const int64_t k = trans_a ? a.type.shape[0] : a.type.shape[1];
    const int64_t nn = trans_b ? b.type.shape[0] : b.type.shape[1];

    // A linear layer (constant B, a C that is a bias per column) runs on
    // the conv kernel.
    if (b.is_constant() && !a.is_constant() && !trans_a && linear_on_conv_kernel(m, nn)) {
      const bool fused_c = n.inputs.size() <= 2 || n.inputs[2] == kNoValue;
      const ValueId c = fused_c ? (group.bias_adds.empty() ? kNoValue : group.bias_adds[0]) : n.inputs[2];
      if (std::optional<std::vector<float>> bias = column_bias(c, nn, fused_c ? 1.f : beta)) {
        HS_ASSIGN_OR_RETURN(const int a_buffer, buffer_of(n.inputs[0]));
        const std::vector<float> w = b.constant->to_float_vector();
        return emit_linear(group, a_buffer, m, k, nn,
                           [&](int64_t col, int64_t kk) { return alpha * (trans_b ? w[col * k + kk] : w[kk * nn + col]); },
                           *bias);
      }
    }

    GemmPush p{};
    p.m = u32(m);
    p.n = u32(nn);
    p.k = u32(k);
    p.batch1 = p.batch2 = 1;
    p.alpha = alpha;
    p.beta = beta;
    // Constant operands are stored untransposed, so their tile loads run
    // along contiguous memory; others are read through swapped strides.
    int a_buffer = -1, b_buffer = -1;
    if (a.is_constant() && trans_a) {
      a_buffer = constant_buffer(bytes_of(transposed(*a.constant)), a.name + "/T");
      p.a_row_stride = u32(k), p.a_col_stride = 1;
    } else {
      HS_ASSIGN_OR_RETURN(a_buffer, buffer_of(n.inputs[0]));
      p.a_row_stride = static_cast<int32_t>(trans_a ? 1 : k);
      p.a_col_stride = static_cast<int32_t>(trans_a ? m : 1);
    }
    if (b.is_constant() && trans_b) {
      b_buffer = constant_buffer(bytes_of(transposed(*b.constant)), b.name + "/T");
      p.b_row_stride = static_cast<int32_t>(nn), p.b_col_stride = 1;
    } else {
      HS_ASSIGN_OR_RETURN(b_buffer, buffer_of(n.inputs[1]));
      p.b_row_stride = static_cast<int32_t>(trans_b ? 1 : nn);
      p.b_col_stride = static_cast<int32_t>(trans_b ? k : 1);
    }
    ValueId c = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
    if (c == kNoValue && !group.bias_adds.empty()) {
      c = group.bias_adds[0];
      p.beta = 1.f;
    }
    return finish_gemm(group, p, a_buffer, b_buffer, c, 1);
  }

  Status emit_matmul(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    // The operands once scalar Muls were folded (fold_scales): same shapes.
    const ValueId a_value = group.matmul_operands[0] != kNoValue ? group.matmul_operands[0] : n.inputs[0];
    const ValueId b_value = group.matmul_operands[1] != kNoValue ? group.matmul_operands[1] : n.inputs[1];
    const Shape& as = g_.value(a_value).type.shape;
    const Shape& bs = g_.value(b_value).type.shape;
    const Strides a_strides = group.views[0] ? group.views[0]->strides : row_major_strides(as);
    const Strides b_strides = group.views[1] ? group.views[1]->strides : row_major_strides(bs);
    HS_ASSIGN_OR_RETURN(const MatmulLayout layout, matmul_layout(as, a_strides, bs, b_strides));
    GemmPush p{};
    p.m = u32(layout.m);
    p.n = u32(layout.n);
    p.k = u32(layout.k);
    p.a_row_stride = static_cast<int32_t>(layout.a_row_stride);
    p.a_col_stride = static_cast<int32_t>(layout.a_col_stride);
    p.b_row_stride = static_cast<int32_t>(layout.b_row_stride);
    p.b_col_stride = static_cast<int32_t>(layout.b_col_stride);
    p.batch1 = u32(layout.batch[1]);
    p.batch2 = u32(layout.batch[2]);
    for (size_t i = 0; i < 3; ++i) {
      p.a_batch_stride[i] = static_cast<int32_t>(layout.a_batch_stride[i]);
      p.b_batch_stride[i] = static_cast<int32_t>(layout.b_batch_stride[i]);
    }
    p.alpha = group.alpha;
    p.beta = 1.f;
    HS_ASSIGN_OR_RETURN(const int a_buffer, buffer_of(group.views[0] ? group.views[0]->source : a_value));
    const ValueId c = group.bias_adds.empty() ? kNoValue : group.bias_adds[0];
    const Value& b = g_.value(b_value);
    // A constant 2-D B has no batch dims: A's rows, batches included, are
    // one contiguous [M, K] matrix.
    if (b.is_constant() && bs.size() == 2 && !g_.value(a_value).is_constant() &&
        linear_on_conv_kernel(layout.m * layout.batch_count(), layout.n)) {
      if (std::optional<std::vector<float>> bias = column_bias(c, layout.n, 1.f)) {
        const std::vector<float> w = b.constant->to_float_vector();
        const int64_t cols = layout.n, depth = layout.k;
        return emit_linear(group, a_buffer, layout.m * layout.batch_count(), depth, cols,
                           [&](int64_t col, int64_t kk) { return w[kk * cols + col]; }, *bias);
      }
    }
    HS_ASSIGN_OR_RETURN(const int b_buffer, buffer_of(group.views[1] ? group.views[1]->source : b_value));
    // A B without batch dims multiplies every batch of A's rows alike: one
    // GEMM over all of them, as the conv route does (a seq-first [128, 1,
    // 768] A made 128 GEMMs of one row each, 0.57 ms on an H100 where one of
    // 128 rows takes 0.03).
    auto c_varies_by_row = [&] {
      if (c == kNoValue) return false;
      const Shape& cs = g_.value(c).type.shape;
      return cs.size() >= 2 && cs[cs.size() - 2] != 1;
    };
    if (bs.size() <= 2 && layout.batch_count() > 1 && !c_varies_by_row() && !group.views[0]) {
      p.m = u32(layout.m * layout.batch_count());
      p.batch1 = p.batch2 = 1;
      for (size_t i = 0; i < 3; ++i) p.a_batch_stride[i] = p.b_batch_stride[i] = 0;
      return finish_gemm(group, p, a_buffer, b_buffer, c, 1);
    }
    return finish_gemm(group, p, a_buffer, b_buffer, c, layout.batch_count());
  }

  // beta * C as a bias per output column when C (kNoValue: none, an empty
  // bias) is a constant that varies along its last dim alone, or a scalar;
  // nullopt otherwise (gemm.comp then reads C as a matrix).
  std::optional<std::vector<float>> column_bias(ValueId c, int64_t columns, float beta) const {
    if (c == kNoValue) return std::vector<float>{};
    const Value& v = g_.value(c);
    if (!v.is_constant() || v.type.dtype != DType::kFloat32) return std::nullopt;
    const Shape& shape = v.type.shape;
    for (size_t d = 0; d + 1 < shape.size(); ++d)
      if (shape[d] != 1) return std::nullopt;
    const std::vector<float> values = v.constant->to_float_vector();
    if (values.size() != 1 && static_cast<int64_t>(values.size()) != columns) return std::nullopt;
    std::vector<float> bias(static_cast<size_t>(columns));
    for (int64_t i = 0; i < columns; ++i) bias[i] = beta * values[values.size() == 1 ? 0 : i];
    return bias;
  }

  Status finish_gemm(const Group& group, GemmPush& p, int a_buffer, int b_buffer, ValueId c, int64_t batches) {
    int c_buffer = kParamsBuffer;
    if (c != kNoValue) {
      HS_ASSIGN_OR_RETURN(c_buffer, buffer_of(c));
      // C is read as an (M, N) matrix; leading dims are 1 (checked when fused).
      Shape c_shape = g_.value(c).type.shape;
      while (c_shape.size() > 2 && c_shape.front() == 1) c_shape.erase(c_shape.begin());
      const Strides s = broadcast_strides(c_shape, {p.m, p.n});
      p.c_row_stride = static_cast<int32_t>(s[0]);
      p.c_col_stride = static_cast<int32_t>(s[1]);
      p.has_c = 1;
    }
    pack_epilogue(group, p.epilogue_ops, p.epilogue_params);
    const int out = new_value_buffer(group.output);
    const std::optional<GemmCoopmat> tensor_cores = gemm_coopmat(p, batches);
    Step step = !tensor_cores
                    ? dispatch(Kernel::kGemm, words_of(p), {ceil_div(p.n, kGemmTile), ceil_div(p.m, kGemmTile), u32(batches)})
                    : dispatch(tensor_cores->kernel, words_of(p),
                               {ceil_div(p.n, tensor_cores->tile[1]), ceil_div(p.m, tensor_cores->tile[0]), u32(batches)});
    if (tensor_cores) step.specialization = tensor_cores->specialization;
    step.bindings = {a_buffer, b_buffer, c_buffer, out};
    step.reads = {a_buffer, b_buffer, c_buffer};
    step.writes = {out};
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  // gemm_coopmat*.comp for `p` at precision fp16: the kernel and its
  // specialisation; nullopt at f32 or when none fits, and gemm.comp runs.
  // gemm_coopmat_fixed's kernels where the device's fragment shape and
  // subgroup size are theirs (16x16x16, 32), else gemm_coopmat.glsl's.
  struct GemmCoopmat {
    Kernel kernel;
    std::vector<uint32_t> specialization;
    std::array<uint32_t, 2> tile;  // rows, columns
  };
  std::optional<GemmCoopmat> gemm_coopmat(const GemmPush& p, int64_t batches) const {
    if (!options_.coopmat) return std::nullopt;
    if (std::optional<GemmCoopmat> fixed = gemm_coopmat_fixed(p, batches)) return fixed;
    return gemm_coopmat_by_spec(p, batches);
  }

  // Four consecutive elements are one aligned vec4 (eight: one uvec4 of
  // halves) when the operand is contiguous along that dim and every row
  // and batch starts on a multiple of `elements`.
  static bool aligned(int32_t col_stride, int32_t row_stride, const int32_t (&batch)[3], uint32_t length,
                      int32_t elements) {
    return col_stride == 1 && row_stride % elements == 0 && int64_t{length} % elements == 0 &&
           batch[0] % elements == 0 && batch[1] % elements == 0 && batch[2] % elements == 0;
  }

  // gemm_coopmat_fixed.glsl's kernels (tile, K step and subgroups fixed at
  // compile time, so each subgroup holds 4 x 2 accumulator fragments): the
  // first that makes kBusyWorkgroups workgroups runs. On an H100, 4096^3
  // took 1.07 ms from f32 operands and 0.74 from f16 ones at 128 x 256
  // (1.22 and 1.00 at 128 x 128; gemm_coopmat_1024 1.60 and 2.13); 8
  // subgroups of 4 x 4 fragments over the same tile 1.03 and 0.85, and
  // 2048^3 0.158 / 0.123 ms against their 0.168 / 0.134. Tiles of 256 x
  // 128, K steps of 16 or 64, and loads two steps ahead (a second register
  // set: 1.24 / 0.74 ms) ran no faster.
  struct FixedGemm {
    Kernel kernel;
    uint32_t rows, columns, tile_k, stages, invocations;
  };
  static constexpr FixedGemm kFixedGemms[] = {{Kernel::kGemmCoopmat128x256, 128, 256, 32, 1, 512},
                                              {Kernel::kGemmCoopmat128x128, 128, 128, 32, 2, 256}};
  // Its shared memory: `stages` buffers of A (rows x tile_k halves) and B
  // (tile_k x columns), rows padded by 16 bytes, and one 16 x 16 f32
  // staging block per subgroup.
  static uint32_t fixed_gemm_shared_bytes(const FixedGemm& f) {
    return f.stages * (f.rows * (f.tile_k / 8 + 1) + f.tile_k * (f.columns / 8 + 1)) * 16 + f.invocations / 32 * 1024;
  }

  std::optional<GemmCoopmat> gemm_coopmat_fixed(const GemmPush& p, int64_t batches) const {
    const CoopMatConv& cm = *options_.coopmat;
    if (cm.frag_m != 16 || cm.frag_n != 16 || cm.frag_k != 16 || cm.subgroup_size != 32) return std::nullopt;
    for (const FixedGemm& f : kFixedGemms) {
      if (options_.gemm_kernel && *options_.gemm_kernel != f.kernel) continue;
      if (f.invocations > cm.max_invocations || fixed_gemm_shared_bytes(f) > cm.max_shared_bytes) continue;
      const int64_t workgroups = int64_t{ceil_div(p.m, f.rows)} * ceil_div(p.n, f.columns) * batches;
      if (!options_.gemm_kernel && workgroups < kBusyWorkgroups) continue;
      const uint32_t vec_a = aligned(p.a_col_stride, p.a_row_stride, p.a_batch_stride, p.k, 4);
      const uint32_t vec_b = aligned(p.b_col_stride, p.b_row_stride, p.b_batch_stride, p.n, 4);
      const uint32_t oct_a = aligned(p.a_col_stride, p.a_row_stride, p.a_batch_stride, p.k, 8);
      const uint32_t oct_b = aligned(p.b_col_stride, p.b_row_stride, p.b_batch_stride, p.n, 8);
      return GemmCoopmat{f.kernel, {vec_a, vec_b, oct_a, oct_b, 0}, {f.rows, f.columns}};
    }
    return std::nullopt;
  }

  // gemm_coopmat.glsl's kernels (by workgroup size): their specialisation
  // is tile rows and columns, vec4 loads of A and B, then
  // coopmat_specialization's subgroup grid and fragment shape.
  //
  // Each subgroup holds two accumulator fragments: on an H100 (driver 580)
  // more per subgroup ran the products 5x slower (4096^3 with loads and
  // stores skipped: 160 TFLOP/s at 64 x 64 tiles of 256 invocations, 31 at
  // 128 x 64 and 128 x 128), so bigger tiles take more invocations: 64 x 64
  // 256, 64 x 128 512, 128 x 128 1024 (4096^3: 44, 58, 87 TFLOP/s). The
  // biggest tile that still makes kBusyWorkgroups workgroups is taken:
  // 197 x 768 x 3072 (a ViT linear layer) ran 0.052 / 0.039 / 0.055 ms at
  // those three, 12 heads of 128 x 64 x 128 0.015 / 0.019 / 0.029.
  // gemm_coopmat.glsl's shared memory for a tile: two buffers of A
  // (rows x 32 halves) and B (32 x columns), rows padded by 16 bytes, and
  // the staging blocks of at most eight subgroups (16 x 16 floats each).
  static uint32_t gemm_coopmat_shared_bytes(uint32_t rows, uint32_t columns) {
    return 2 * rows * (32 / 8 + 1) * 16 + 2 * 32 * (columns / 8 + 1) * 16 + 8 * 16 * 16 * 4;
  }

  std::optional<GemmCoopmat> gemm_coopmat_by_spec(const GemmPush& p, int64_t batches) const {
    const CoopMatConv& cm = *options_.coopmat;
    // The shader addresses shared memory in groups of eight halves.
    if (cm.frag_k % 8 != 0 || cm.frag_n % 8 != 0) return std::nullopt;
    struct Shape {
      uint32_t rows, columns;
      Kernel kernel;
    };
    static constexpr Shape kShapes[] = {{128, 128, Kernel::kGemmCoopmat1024},
                                        {64, 128, Kernel::kGemmCoopmat512},
                                        {64, 64, Kernel::kGemmCoopmat}};
    const bool forced = options_.gemm_kernel && std::any_of(std::begin(kShapes), std::end(kShapes), [&](const Shape& s) {
                          return s.kernel == *options_.gemm_kernel;
                        });
    for (const Shape& shape : kShapes) {
      if (forced && shape.kernel != *options_.gemm_kernel) continue;
      const int64_t workgroups = int64_t{ceil_div(p.m, shape.rows)} * ceil_div(p.n, shape.columns) * batches;
      if (!forced && workgroups < kBusyWorkgroups && shape.kernel != Kernel::kGemmCoopmat) continue;
      const uint32_t invocations = shape.rows * shape.columns / (2 * cm.frag_m * cm.frag_n) * cm.subgroup_size;
      const uint32_t wanted = shape.kernel == Kernel::kGemmCoopmat ? 256 : shape.kernel == Kernel::kGemmCoopmat512 ? 512 : 1024;
      // A fragment shape or subgroup size that needs another workgroup size,
      // or a device that cannot run this one: try a smaller tile.
      if (invocations != wanted || invocations > cm.max_invocations || gemm_coopmat_shared_bytes(shape.rows, shape.columns) > cm.max_shared_bytes) continue;
      const std::vector<uint32_t> grid = coopmat_specialization(cm, shape.rows, shape.columns, invocations);
      if (grid.empty()) continue;
      const bool vec_a = aligned(p.a_col_stride, p.a_row_stride, p.a_batch_stride, p.k, 4);
      const bool vec_b = aligned(p.b_col_stride, p.b_row_stride, p.b_batch_stride, p.n, 4);
      GemmCoopmat out{shape.kernel, {shape.rows, shape.columns, vec_a ? 1u : 0u, vec_b ? 1u : 0u}, {shape.rows, shape.columns}};
      out.specialization.insert(out.specialization.end(), grid.begin(), grid.end());
      return out;
    }
    return std::nullopt;
  }

  static std::vector<float> transposed(const Tensor& t) {
    const int64_t rows = t.shape()[0], cols = t.shape()[1];
    const float* src = t.data<float>();
    std::vector<float> dst(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
    return dst;
  }

  Status emit_pool(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& x = g_.value(n.inputs[0]).type.shape;
    const Shape& y = g_.value(n.outputs[0]).type.shape;
    HS_ASSIGN_OR_RETURN(const std::vector<int64_t> kernel, n.attrs.require_ints("kernel_shape"));
    HS_ASSIGN_OR_RETURN(const int64_t ceil_mode, n.attrs.get_int("ceil_mode", 0));
    HS_ASSIGN_OR_RETURN(const Window2d win, window_2d(n.attrs, x, kernel, y, ceil_mode != 0));
    PoolPush p{};
    p.planes = u32(x[0] * x[1]);
    p.in_h = u32(win.in_h), p.in_w = u32(win.in_w), p.out_h = u32(win.out_h), p.out_w = u32(win.out_w);
    p.kernel_h = u32(win.kernel_h), p.kernel_w = u32(win.kernel_w);
    p.stride_h = u32(win.stride_h), p.stride_w = u32(win.stride_w);
    p.dilation_h = u32(win.dilation_h), p.dilation_w = u32(win.dilation_w);
    p.pad_top = u32(win.pad_top), p.pad_left = u32(win.pad_left);
    p.pad_bottom = u32(win.pad_bottom), p.pad_right = u32(win.pad_right);
    if (n.op == "AveragePool") {
      HS_ASSIGN_OR_RETURN(const int64_t include_pad, n.attrs.get_int("count_include_pad", 0));
      p.mode = include_pad ? 2 : 1;
    }
    return emit_simple(Kernel::kPool2d, words_of(p), n.inputs[0], group.output,
                       grid_1d(ceil_div(int64_t{p.planes} * p.out_h * p.out_w, kGenericGroupSize)));
  }

  // --- squeeze-and-excitation ----------------------------------------------

  struct SeBlock {
    const Group* mean = nullptr;    // emitted as it is
    const Group* reduce = nullptr;  // 1x1 conv to `squeeze` channels, on the means
    const Group* expand = nullptr;  // 1x1 conv back: the gate
    const Group* mul = nullptr;     // x * gate
    ValueId x = kNoValue;
  };

  // A Mul of x by a gate that a 1x1 conv makes from a 1x1 conv of x's
  // spatial mean (GlobalAveragePool, or ReduceMean over H and W keeping
  // them), each conv's output read once: the second half of a
  // squeeze-and-excitation block. The two convs and the Mul become one
  // se_scale.comp dispatch, emitted where the Mul stood; the mean stays a
  // dispatch of its own (every workgroup of se_scale reads all of it).
  // Blocks past gpu::se_scale_fits (too many weights in a matrix) stay as
  // they are.
  Status plan_se_scale() {
    std::map<ValueId, const Group*> writer;
    for (const Group& group : groups_) writer[group.output] = &group;
    auto read_once = [&](ValueId v) {
      auto it = uses_.find(v);
      return it != uses_.end() && it->second == 1 && is_output_.count(v) == 0;
    };
    for (const Group& mul : groups_) {
      if (mul.kind != GroupKind::kElementwise || mul.nodes.size() != 1 || g_.node(mul.nodes[0]).op != "Mul") continue;
      const Node& m = g_.node(mul.nodes[0]);
      for (int side = 0; side < 2; ++side) {
        const ValueId x = m.inputs[side], gate = m.inputs[1 - side];
        auto expand = writer.find(gate);
        if (expand == writer.end() || !is_one_pixel_conv(*expand->second) || !read_once(gate)) continue;
        auto reduce = writer.find(g_.node(expand->second->nodes[0]).inputs[0]);
        if (reduce == writer.end() || !is_one_pixel_conv(*reduce->second) || !read_once(reduce->second->output))
          continue;
        auto mean = writer.find(g_.node(reduce->second->nodes[0]).inputs[0]);
        if (mean == writer.end() || g_.node(mean->second->nodes[0]).inputs[0] != x) continue;
        HS_ASSIGN_OR_RETURN(const bool spatial, is_spatial_mean(*mean->second));
        const Shape& xs = g_.value(x).type.shape;
        if (!spatial || g_.value(mul.output).type.shape != xs || g_.value(gate).type.shape[1] != xs[1] ||
            !gpu::se_scale_fits(xs[1], g_.value(reduce->second->output).type.shape[1]))
          continue;
        se_scale_at_[mul.nodes[0]] = {mean->second, reduce->second, expand->second, &mul, x};
        in_se_scale_.insert(reduce->second->nodes[0]);
        in_se_scale_.insert(expand->second->nodes[0]);
        break;
      }
    }
    return Status::ok();
  }

  // The spatial mean (GlobalAveragePool, or ReduceMean over H and W) of a
  // depthwise conv's output — the squeeze of a squeeze-and-excitation
  // block, read by se_scale or by the block's first 1x1 conv — is written
  // by the conv itself (depthwise_mean.comp: a workgroup per output plane)
  // when the planes have at most kDepthwiseMeanMaxPlane pixels: the mean's
  // dispatch, and the barrier before it, go. The conv's output is written
  // as before (the block's Mul reads it).
  Status plan_depthwise_means() {
    std::map<ValueId, const Group*> writer;
    for (const Group& group : groups_) writer[group.output] = &group;
    for (const Group& mean : groups_) {
      if (elided_.count(mean.nodes[0]) != 0 || in_se_scale_.count(mean.nodes[0]) != 0) continue;
      HS_ASSIGN_OR_RETURN(const bool spatial, is_spatial_mean(mean));
      if (!spatial) continue;
      auto conv = writer.find(g_.node(mean.nodes[0]).inputs[0]);
      if (conv == writer.end() || !is_depthwise_2d(*conv->second)) continue;
      const Shape& y = g_.value(conv->second->output).type.shape;
      if (y[2] * y[3] > kDepthwiseMeanMaxPlane || depthwise_mean_of_.count(conv->second->nodes[0]) != 0) continue;
      depthwise_mean_of_[conv->second->nodes[0]] = &mean;
      mean_in_depthwise_.insert(mean.nodes[0]);
    }
    return Status::ok();
  }

  // A Conv group's X, W and Y shapes and its `group` attribute, for a
  // group of rank-4 tensors with constant weights and no residual;
  // nullopt otherwise.
  struct ConvShapes {
    Shape x, w, y;
    int64_t groups;
  };
  std::optional<ConvShapes> constant_conv_shapes(const Group& group) const {
    if (group.kind != GroupKind::kConv || group.residual != kNoValue) return std::nullopt;
    const Node& n = g_.node(group.nodes[0]);
    if (n.op != "Conv" || n.inputs.size() < 2 || !g_.value(n.inputs[1]).is_constant()) return std::nullopt;
    const Result<int64_t> groups = n.attrs.get_int("group", 1);
    ConvShapes s{g_.value(n.inputs[0]).type.shape, g_.value(n.inputs[1]).type.shape, g_.value(group.output).type.shape,
                 groups.is_ok() ? *groups : 0};
    if (!groups.is_ok() || s.x.size() != 4 || s.w.size() != 4 || s.y.size() != 4) return std::nullopt;
    return s;
  }

  // A Conv group of rank-4 tensors whose groups each read one input
  // channel (emit_conv runs it on a depthwise kernel), with constant
  // weights and no residual.
  bool is_depthwise_2d(const Group& group) const {
    const std::optional<ConvShapes> s = constant_conv_shapes(group);
    return s && s->groups > 1 && s->x[1] == s->groups && s->w[1] == 1;
  }

  // A Conv group on a one-pixel input with 1x1 constant weights, one
  // group and nothing added but its bias (and folded BatchNormalization).
  bool is_one_pixel_conv(const Group& group) const {
    const std::optional<ConvShapes> s = constant_conv_shapes(group);
    return s && s->groups == 1 && s->w[2] == 1 && s->w[3] == 1 && s->x[2] == 1 && s->x[3] == 1 && s->y[2] == 1 &&
           s->y[3] == 1 && s->w[1] == s->x[1] && s->y[1] == s->w[0];
  }

  // GlobalAveragePool, or ReduceMean over exactly H and W of a rank-4
  // tensor keeping them.
  Result<bool> is_spatial_mean(const Group& group) const {
    const Node& n = g_.node(group.nodes[0]);
    if (group.kind != GroupKind::kSingle || group.nodes.size() != 1) return false;
    const Shape& x = g_.value(n.inputs[0]).type.shape;
    const Shape& y = g_.value(group.output).type.shape;
    if (x.size() != 4 || y.size() != 4 || y[0] != x[0] || y[1] != x[1] || y[2] != 1 || y[3] != 1) return false;
    if (n.op == "GlobalAveragePool") return true;
    if (n.op != "ReduceMean") return false;
    HS_ASSIGN_OR_RETURN(const std::optional<std::vector<int64_t>> axes, read_reduce_axes(g_, group.nodes[0]));
    if (!axes) return false;
    std::vector<int64_t> sorted = *axes;
    std::sort(sorted.begin(), sorted.end());
    return sorted == std::vector<int64_t>{2, 3};
  }

  Status emit_se_scale(const SeBlock& se) {
    const Node& reduce = g_.node(se.reduce->nodes[0]);
    const Node& expand = g_.node(se.expand->nodes[0]);
    const Shape& x = g_.value(se.x).type.shape;
    const int64_t batch = x[0], channels = x[1], plane = x[2] * x[3];
    const int64_t squeeze = g_.value(se.reduce->output).type.shape[1];
    HS_ASSIGN_OR_RETURN(const ChannelAffine a1, fold_channel_affine(*se.reduce, squeeze));
    HS_ASSIGN_OR_RETURN(const ChannelAffine a2, fold_channel_affine(*se.expand, channels));
    const std::vector<float> w1 = g_.value(reduce.inputs[1]).constant->to_float_vector();  // [squeeze][channels]
    const std::vector<float> w2 = g_.value(expand.inputs[1]).constant->to_float_vector();  // [channels][squeeze]
    const std::vector<float> weights = gpu::pack_se_weights(
        channels, squeeze, [&](int64_t j, int64_t c) { return w1[j * channels + c] * a1.scale[j]; }, a1.bias,
        [&](int64_t c, int64_t j) { return w2[c * squeeze + j] * a2.scale[c]; }, a2.bias);

    SeScalePush p{};
    p.batch = u32(batch);
    p.channels = u32(channels);
    p.squeeze = u32(squeeze);
    p.plane = u32(plane);
    p.chunks = ceil_div(channels * plane, gpu::kSeScaleChunk);
    pack_epilogue(*se.reduce, p.ops1, p.params1);
    pack_epilogue(*se.expand, p.ops2, p.params2);
    // The label and profile names cover the three groups it runs.
    std::string label;
    std::vector<std::string> names, ops;
    for (const Group* group : {se.reduce, se.expand, se.mul})
      for (NodeId id : group->nodes) {
        label += (label.empty() ? "" : "+") + g_.node(id).name;
        names.push_back(g_.node(id).name);
        ops.push_back(g_.node(id).op);
      }
    label_ = label;
    node_names_ = names;
    node_ops_ = ops;
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(se.x));
    HS_ASSIGN_OR_RETURN(const int means, buffer_of(se.mean->output));
    const int w_buffer = constant_buffer(bytes_of(weights), label_ + "/weights");
    const int out = new_value_buffer(se.mul->output);
    Step step = dispatch(Kernel::kSeScale, words_of(p), grid_1d(static_cast<uint64_t>(batch) * p.chunks));
    step.specialization = {0};  // NCHW
    step.bindings = {in, means, w_buffer, out};
    step.reads = {in, means, w_buffer};
    step.writes = {out};
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  Status emit_reduce(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& x = g_.value(n.inputs[0]).type.shape;
    std::vector<bool> reduced(x.size(), false);
    if (n.op == "GlobalAveragePool") {
      for (size_t d = 2; d < x.size(); ++d) reduced[d] = true;
    } else {
      HS_ASSIGN_OR_RETURN(const std::optional<std::vector<int64_t>> axes, read_reduce_axes(g_, group.nodes[0]));
      if (!axes) {
        // noop_with_empty_axes: the output is the input.
        HS_ASSIGN_OR_RETURN(const int source, buffer_of(n.inputs[0]));
        add_copy(source, new_value_buffer(group.output), g_.value(group.output).type.byte_size());
        return Status::ok();
      }
      for (int64_t a : *axes) reduced[static_cast<size_t>(a)] = true;
    }
    const Strides strides = row_major_strides(x);
    ReduceParams p{};
    Shape kept_dims, red_dims;
    Strides kept_strides, red_strides;
    for (size_t d = 0; d < x.size(); ++d) {
      Shape& dims = reduced[d] ? red_dims : kept_dims;
      Strides& dim_strides = reduced[d] ? red_strides : kept_strides;
      // A dim that continues the one before it in memory merges into it
      // (the walk's order is the same): a global pool's H and W become one
      // run of stride 1, which reduce.comp walks without dividing.
      if (!dims.empty() && dim_strides.back() == strides[d] * x[d]) {
        dims.back() *= x[d];
        dim_strides.back() = strides[d];
        continue;
      }
      dims.push_back(x[d]);
      dim_strides.push_back(strides[d]);
    }
    p.outputs = u32(shape_elements(kept_dims));
    p.count = u32(shape_elements(red_dims));
    p.kept_rank = u32(kept_dims.size());
    p.reduced_rank = u32(red_dims.size());
    const bool mean = n.op == "GlobalAveragePool" || n.op == "ReduceMean";
    p.scale = !mean ? 1.f : p.count == 0 ? 0.f : static_cast<float>(1.0 / static_cast<double>(p.count));
    for (size_t d = 0; d < kept_dims.size(); ++d)
      p.kept_dims[d] = u32(kept_dims[d]), p.kept_strides[d] = u32(kept_strides[d]);
    for (size_t d = 0; d < red_dims.size(); ++d)
      p.reduced_dims[d] = u32(red_dims[d]), p.reduced_strides[d] = u32(red_strides[d]);
    HS_RETURN_IF_ERROR(
        emit_with_params(Kernel::kReduce, param_push(p), n.inputs[0], group.output, grid_1d(p.outputs)));
    // reduce.comp's kReduceOp: 0 sum (times scale), 1 max, 2 min, 3 product.
    out_.steps.back().specialization = {n.op == "ReduceMax"    ? 1u
                                        : n.op == "ReduceMin"  ? 2u
                                        : n.op == "ReduceProd" ? 3u
                                                               : 0u};
    return Status::ok();
  }

  Status emit_softmax(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& x = g_.value(n.inputs[0]).type.shape;
    const bool per_axis = g_.opset() >= 13;
    HS_ASSIGN_OR_RETURN(const int64_t attr_axis, n.attrs.get_int("axis", per_axis ? -1 : 1));
    HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(attr_axis, static_cast<int64_t>(x.size())));
    int64_t outer = 1, length = 1, inner = 1;
    for (int64_t d = 0; d < static_cast<int64_t>(x.size()); ++d) {
      if (d < axis)
        outer *= x[d];
      else if (d == axis || !per_axis)
        length *= x[d];
      else
        inner *= x[d];
    }
    const SoftmaxPush p{u32(outer * inner), u32(length), u32(inner)};
    return emit_simple(Kernel::kSoftmax, words_of(p), n.inputs[0], group.output, grid_1d(p.rows));
  }

  // A strided copy of `src` into the group's output over `dims`.
  Status add_strided_copy(int src, int dst, const Shape& dims, const Strides& src_strides, int64_t src_offset,
                          const Strides& dst_strides, int64_t dst_offset, int write_group = -1) {
    const Walk walk = coalesce(dims, {src_strides, dst_strides});
    if (walk.dims.size() > kMaxRank)
      return unsupported("rank " + std::to_string(walk.dims.size()) + " > " + std::to_string(kMaxRank));
    CopyParams p{};
    p.total = u32(shape_elements(dims));
    p.rank = u32(walk.dims.size());
    p.src_offset = static_cast<int32_t>(src_offset);
    p.dst_offset = static_cast<int32_t>(dst_offset);
    for (size_t d = 0; d < walk.dims.size(); ++d) {
      p.dims[d] = u32(walk.dims[d]);
      p.src_strides[d] = static_cast<int32_t>(walk.strides[0][d]);
      p.dst_strides[d] = static_cast<int32_t>(walk.strides[1][d]);
    }
    Step step = dispatch(Kernel::kStridedCopy, param_push(p), grid_1d(ceil_div(p.total, kGenericGroupSize)));
    step.bindings = {kParamsBuffer, src, dst};
    step.reads = {src};
    step.writes = {dst};
    step.write_group = write_group;
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  // The group's output, written in row-major order over `dims`, as a
  // strided copy of `input` read with `src` strides from `src_offset`.
  Status copy_to_output(const Group& group, ValueId input, const Shape& dims, const Strides& src, int64_t src_offset) {
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(input));
    return add_strided_copy(in, new_value_buffer(group.output), dims, src, src_offset, row_major_strides(dims), 0);
  }

  Status emit_transpose(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& x = g_.value(n.inputs[0]).type.shape;
    const Shape& y = g_.value(n.outputs[0]).type.shape;
    std::vector<int64_t> perm(x.size());
    std::iota(perm.rbegin(), perm.rend(), 0);
    HS_ASSIGN_OR_RETURN(perm, n.attrs.get_ints("perm", perm));
    const Strides in_strides = row_major_strides(x);
    Strides src(y.size());
    for (size_t d = 0; d < y.size(); ++d) src[d] = in_strides[static_cast<size_t>(perm[d])];
    return copy_to_output(group, n.inputs[0], y, src, 0);
  }

  Status emit_slice(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& x = g_.value(n.inputs[0]).type.shape;
    const Shape& y = g_.value(n.outputs[0]).type.shape;
    HS_ASSIGN_OR_RETURN(const SliceWindow win, read_slice(g_, g_.node(group.nodes[0])));
    if (win.shape != y)
      return internal_error("slice shape " + shape_to_string(win.shape) + " differs from the inferred " +
                            shape_to_string(y));
    const Strides in_strides = row_major_strides(x);
    Strides src(x.size());
    int64_t offset = 0;
    for (size_t d = 0; d < x.size(); ++d) {
      src[d] = win.step[d] * in_strides[d];
      offset += win.start[d] * in_strides[d];
    }
    return copy_to_output(group, n.inputs[0], y, src, offset);
  }

  Status emit_concat(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& y = g_.value(n.outputs[0]).type.shape;
    HS_ASSIGN_OR_RETURN(const int64_t raw_axis, n.attrs.require_int("axis"));
    HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(raw_axis, static_cast<int64_t>(y.size())));
    const int out = value_buffer(group.output);
    const Strides out_strides = row_major_strides(y);
    const int write_group = next_write_group_++;
    const Placement whole = placement_of(group.output).value_or(Placement{group.output, 0});
    const int64_t unit = out_strides[static_cast<size_t>(axis)] * static_cast<int64_t>(dtype_size(g_.value(group.output).type.dtype));
    int64_t at = 0;
    for (ValueId in : n.inputs) {
      const Shape& s = g_.value(in).type.shape;
      // An input its producer wrote in place (place_concat_inputs) needs no copy.
      const std::optional<Placement> piece = placement_of(in);
      const bool in_place = piece && piece->root == whole.root && piece->offset == whole.offset + at * unit;
      if (shape_elements(s) != 0 && !in_place) {
        HS_ASSIGN_OR_RETURN(const int src, buffer_of(in));
        HS_RETURN_IF_ERROR(add_strided_copy(src, out, s, row_major_strides(s), 0, out_strides,
                                            at * out_strides[static_cast<size_t>(axis)], write_group));
      }
      at += s[static_cast<size_t>(axis)];
    }
    return Status::ok();
  }

  Status emit_gather(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& data = g_.value(n.inputs[0]).type.shape;
    const Shape& y = g_.value(n.outputs[0]).type.shape;
    const Value& indices = g_.value(n.inputs[1]);
    HS_ASSIGN_OR_RETURN(const int64_t raw_axis, n.attrs.get_int("axis", 0));
    HS_ASSIGN_OR_RETURN(const int64_t axis, normalize_axis(raw_axis, static_cast<int64_t>(data.size())));
    HS_ASSIGN_OR_RETURN(const std::vector<int32_t> idx, read_gather_indices(g_, group.nodes[0]));
    const Strides data_strides = row_major_strides(data);
    const Shape& is = indices.type.shape;
    GatherParams p{};
    p.total = u32(shape_elements(y));
    p.rank = u32(y.size());
    p.axis_stride = u32(data_strides[static_cast<size_t>(axis)]);
    if (y.size() > kMaxRank) return unsupported("rank " + std::to_string(y.size()) + " > " + std::to_string(kMaxRank));
    for (size_t d = 0; d < y.size(); ++d) p.dims[d] = u32(y[d]);
    if (n.op == "Gather") {
      const Strides index_strides = row_major_strides(is);
      const size_t a = static_cast<size_t>(axis);
      for (size_t d = 0; d < y.size(); ++d) {
        if (d < a) {
          p.data_strides[d] = u32(data_strides[d]);
        } else if (d < a + is.size()) {
          p.index_strides[d] = u32(index_strides[d - a]);
        } else {
          p.data_strides[d] = u32(data_strides[d - is.size() + 1]);
        }
      }
    } else {
      const Strides index_strides = row_major_strides(is);
      for (size_t d = 0; d < y.size(); ++d) {
        p.data_strides[d] = d == static_cast<size_t>(axis) ? 0 : u32(data_strides[d]);
        p.index_strides[d] = u32(index_strides[d]);
      }
    }
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(n.inputs[0]));
    const int idx_buffer = constant_buffer(bytes_of(idx), indices.name + "/i32");
    const int out = new_value_buffer(group.output);
    Step step = dispatch(Kernel::kGather, param_push(p), grid_1d(ceil_div(p.total, kGenericGroupSize)));
    step.bindings = {kParamsBuffer, in, idx_buffer, out};
    step.reads = {in, idx_buffer};
    step.writes = {out};
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  Status emit_resize(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& x = g_.value(n.inputs[0]).type.shape;
    const Shape& y = g_.value(n.outputs[0]).type.shape;
    HS_ASSIGN_OR_RETURN(const ResizeTaps taps, resize_taps(g_, group.nodes[0]));
    std::vector<uint32_t> table;
    for (const auto* axis : {&taps.rows, &taps.cols})
      for (const ResizeTap& t : *axis) {
        uint32_t w;
        std::memcpy(&w, &t.weight, 4);
        table.insert(table.end(), {u32(t.lo), u32(t.hi), w});
      }
    const ResizePush p{u32(x[0] * x[1]), u32(x[2]), u32(x[3]), u32(y[2]), u32(y[3]), taps.linear ? 1u : 0u};
    return emit_with_table(Kernel::kResize, words_of(p), n.inputs[0], bytes_of(table), "/taps", group.output,
                           grid_1d(ceil_div(shape_elements(y), kGenericGroupSize)));
  }

  Status emit_normalization(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    HS_ASSIGN_OR_RETURN(const Normalization norm, read_normalization(g_, group.nodes[0]));
    const NormPush p{u32(norm.rows), u32(norm.inner), u32(norm.param_rows), norm.epsilon};
    return emit_with_table(Kernel::kNormalize, words_of(p), n.inputs[0], bytes_of(norm.table), "/scale_bias",
                           group.output, grid_1d(u32(norm.rows)));
  }

  // Each output is a strided copy of its slab of the input.
  Status emit_split(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& x = g_.value(n.inputs[0]).type.shape;
    HS_ASSIGN_OR_RETURN(const SplitParts parts, read_split(g_, group.nodes[0]));
    const Strides in_strides = row_major_strides(x);
    const size_t axis = static_cast<size_t>(parts.axis);
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(n.inputs[0]));
    int64_t at = 0;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const ValueId y = n.outputs[k];
      if (y != kNoValue && uses_[y] + is_output_.count(y) != 0) {
        const Shape& shape = g_.value(y).type.shape;
        HS_RETURN_IF_ERROR(add_strided_copy(in, new_value_buffer(y), shape, in_strides, at * in_strides[axis],
                                            row_major_strides(shape), 0));
      }
      at += parts.sizes[k];
    }
    return Status::ok();
  }

  // A strided copy that reads the input with its broadcast strides.
  Status emit_expand(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& y = g_.value(n.outputs[0]).type.shape;
    return copy_to_output(group, n.inputs[0], y, broadcast_strides(g_.value(n.inputs[0]).type.shape, y), 0);
  }

  // Output dim d of repeats[d] * x[d] elements walked as (repeat, element):
  // a strided copy over twice the dims, the repeat's source stride 0.
  Status emit_tile(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& x = g_.value(n.inputs[0]).type.shape;
    const Strides in_strides = row_major_strides(x);
    Shape dims;
    Strides src;
    for (size_t d = 0; d < x.size(); ++d) {
      dims.insert(dims.end(), {g_.value(n.outputs[0]).type.shape[d] / x[d], x[d]});
      src.insert(src.end(), {0, in_strides[d]});
    }
    return copy_to_output(group, n.inputs[0], dims, src, 0);
  }

  Status emit_pad(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const Shape& x = g_.value(n.inputs[0]).type.shape;
    const Shape& y = g_.value(n.outputs[0]).type.shape;
    HS_ASSIGN_OR_RETURN(const PadMaps maps, read_pad(g_, group.nodes[0]));
    if (y.size() > kMaxRank) return unsupported("rank " + std::to_string(y.size()) + " > " + std::to_string(kMaxRank));
    const Strides in_strides = row_major_strides(x);
    PadParams p{};
    p.total = u32(shape_elements(y));
    p.rank = u32(y.size());
    p.fill = maps.value;
    std::vector<int32_t> table;
    for (size_t d = 0; d < y.size(); ++d) {
      p.dims[d] = u32(y[d]);
      p.table_start[d] = u32(static_cast<int64_t>(table.size()));
      for (int64_t s : maps.source[d]) table.push_back(static_cast<int32_t>(s < 0 ? -1 : s * in_strides[d]));
    }
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(n.inputs[0]));
    const int table_buffer = constant_buffer(bytes_of(table), label_ + "/map");
    const int out = new_value_buffer(group.output);
    Step step = dispatch(Kernel::kPad, param_push(p), grid_1d(ceil_div(p.total, kGenericGroupSize)));
    step.bindings = {kParamsBuffer, in, table_buffer, out};
    step.reads = {in, table_buffer};
    step.writes = {out};
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  // Between f32, f16, bf16, i32, i64 and bool (what op_support.cc admits).
  // The 16-bit floats have their own kernels to and from f32; to or from
  // anything else they go through an f32 intermediate (exact: every f16 and
  // bf16 is an f32, and the CPU kernel goes through f32 too).
  Status emit_cast(const Group& group) {
    const Node& n = g_.node(group.nodes[0]);
    const DType from = g_.value(n.inputs[0]).type.dtype;
    const DType to = g_.value(group.output).type.dtype;
    const uint32_t count = u32(g_.value(group.output).type.num_elements());
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(n.inputs[0]));
    const bool one_step =
        (!is_half_float(from) && !is_half_float(to)) || from == DType::kFloat32 || to == DType::kFloat32;
    if (one_step) {
      add_cast_step(from, to, count, in, new_value_buffer(group.output));
      return Status::ok();
    }
    const int wide = new_temp_buffer(uint64_t{count} * 4, g_.value(group.output).name + "/f32");
    add_cast_step(from, DType::kFloat32, count, in, wide);
    add_cast_step(DType::kFloat32, to, count, wide, new_value_buffer(group.output));
    return Status::ok();
  }

  // One cast dispatch of `count` elements from buffer `in` to `out`: one of
  // the pairs the cast kernels take (f16 and bf16 with f32 only).
  void add_cast_step(DType from, DType to, uint32_t count, int in, int out) {
    auto kind = [](DType d) -> uint32_t { return d == DType::kInt32 ? 1 : d == DType::kInt64 ? 2 : 0; };
    Kernel kernel = Kernel::kCastWords;
    std::vector<uint32_t> push = words_of(CastWordsPush{count, kind(from), kind(to)});
    if (is_half_float(from) || is_half_float(to)) {
      kernel = is_half_float(from) ? Kernel::kCastF16ToF32 : Kernel::kCastF32ToF16;
      const bool bf16 = from == DType::kBFloat16 || to == DType::kBFloat16;
      push = words_of(CastPush{count, bf16 ? 1u : 0u});
    } else if (to == DType::kBool) {
      kernel = Kernel::kCastToBool;
    } else if (from == DType::kBool) {
      kernel = Kernel::kCastFromBool;
    }
    Step step = dispatch(kernel, std::move(push), grid_1d(ceil_div(count, kGenericGroupSize)));
    step.bindings = {in, out};
    step.reads = {in};
    step.writes = {out};
    out_.steps.push_back(std::move(step));
  }

  // A scratch buffer of `bytes` that holds no graph value (a cast's f32
  // intermediate).
  int new_temp_buffer(uint64_t bytes, std::string name) {
    BufferPlan plan;
    plan.role = BufferPlan::Role::kIntermediate;
    plan.bytes = bytes;
    plan.name = std::move(name);
    out_.buffers.push_back(std::move(plan));
    return static_cast<int>(out_.buffers.size()) - 1;
  }

  // One input, one output, push constants only.
  Status emit_simple(Kernel kernel, std::vector<uint32_t> push, ValueId input, ValueId output,
                     std::array<uint32_t, 3> groups) {
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(input));
    const int out = new_value_buffer(output);
    Step step = dispatch(kernel, std::move(push), groups);
    step.bindings = {in, out};
    step.reads = {in};
    step.writes = {out};
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  // One input, a constant table made on the host (named label + `suffix`),
  // one output, push constants only.
  Status emit_with_table(Kernel kernel, std::vector<uint32_t> push, ValueId input, std::vector<std::byte> table,
                         const char* suffix, ValueId output, std::array<uint32_t, 3> groups) {
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(input));
    const int table_buffer = constant_buffer(std::move(table), label_ + suffix);
    const int out = new_value_buffer(output);
    Step step = dispatch(kernel, std::move(push), groups);
    step.bindings = {in, table_buffer, out};
    step.reads = {in, table_buffer};
    step.writes = {out};
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  // One input, one output, a parameter block at binding 0.
  Status emit_with_params(Kernel kernel, std::vector<uint32_t> push, ValueId input, ValueId output,
                          std::array<uint32_t, 3> groups) {
    HS_ASSIGN_OR_RETURN(const int in, buffer_of(input));
    const int out = new_value_buffer(output);
    Step step = dispatch(kernel, std::move(push), groups);
    step.bindings = {kParamsBuffer, in, out};
    step.reads = {in};
    step.writes = {out};
    out_.steps.push_back(std::move(step));
    return Status::ok();
  }

  Step dispatch(Kernel kernel, std::vector<uint32_t> push, std::array<uint32_t, 3> groups) const {
    Step step;
    step.kind = Step::Kind::kDispatch;
    step.kernel = kernel;
    step.push_constants = std::move(push);
    step.groups = groups;
    step.label = label_;
    step.node_names = node_names_;
    step.node_ops = node_ops_;
    return step;
  }

  void add_copy(int src, int dst, uint64_t bytes) {
    Step step;
    step.kind = Step::Kind::kCopy;
    step.reads = {src};
    step.writes = {dst};
    step.copy_bytes = bytes;
    step.label = label_;
    step.node_names = node_names_;
    step.node_ops = node_ops_;
    out_.steps.push_back(std::move(step));
  }

  // Appends a parameter block and returns the push constants that address it.
  template <typename T>
  std::vector<uint32_t> param_push(const T& block) {
    const uint32_t base = u32(params_.size());
    const std::vector<uint32_t> words = words_of(block);
    params_.insert(params_.end(), words.begin(), words.end());
    return {base};
  }

  // --- buffers ------------------------------------------------------------

  // The buffer holding `v`: an input's, a constant's (uploaded on first
  // use), or the one its producer was given.
  Result<int> buffer_of(ValueId v) {
    auto it = buffer_of_value_.find(v);
    if (it != buffer_of_value_.end()) return it->second;
    const Value& val = g_.value(v);
    if (!val.is_constant()) return internal_error("value '" + val.name + "' is read before its producer ran");
    if (val.type.dtype != DType::kFloat32)
      return unsupported("constant '" + val.name + "' has dtype " + std::string(dtype_name(val.type.dtype)) +
                         ", only f32 data is supported");
    std::vector<std::byte> data(val.constant->byte_size());
    if (!data.empty()) std::memcpy(data.data(), val.constant->raw(), data.size());
    const int b = constant_buffer(std::move(data), val.name);
    buffer_of_value_.emplace(v, b);
    return b;
  }

  int constant_buffer(std::vector<std::byte> data, std::string name) {
    BufferPlan plan;
    plan.role = BufferPlan::Role::kConstant;
    plan.bytes = data.size();
    plan.data = std::move(data);
    plan.name = std::move(name);
    out_.buffers.push_back(std::move(plan));
    return static_cast<int>(out_.buffers.size()) - 1;
  }

  // The buffer of computed value `v`, made if it has none yet (a concat's
  // output may have been made early, as the root of its inputs' places).
  int value_buffer(ValueId v) {
    auto it = buffer_of_value_.find(v);
    return it != buffer_of_value_.end() ? it->second : new_value_buffer(v);
  }

  // A new buffer for computed value `v`: an output buffer when the island
  // hands it out; a view into its root's bytes when place_concat_inputs
  // placed it there.
  int new_value_buffer(ValueId v) {
    const Value& val = g_.value(v);
    if (const std::optional<Placement> place = placement_of(v); place && place->root != v) {
      const int root = value_buffer(place->root);
      BufferPlan plan;
      plan.role = BufferPlan::Role::kIntermediate;
      plan.bytes = val.type.byte_size();
      plan.name = val.name;
      plan.half = half_values_.count(v) != 0;
      out_.buffers.push_back(std::move(plan));
      const int b = static_cast<int>(out_.buffers.size()) - 1;
      views_.emplace(b, View{root, static_cast<uint64_t>(place->offset)});
      buffer_of_value_[v] = b;
      return b;
    }
    BufferPlan plan;
    plan.role = is_output_.count(v) != 0 ? BufferPlan::Role::kOutput : BufferPlan::Role::kIntermediate;
    plan.bytes = val.type.byte_size();
    plan.name = val.name;
    plan.half = half_values_.count(v) != 0;
    out_.buffers.push_back(std::move(plan));
    const int b = static_cast<int>(out_.buffers.size()) - 1;
    buffer_of_value_[v] = b;
    return b;
  }

  // --- pass 3: outputs ----------------------------------------------------

  Status bind_outputs() {
    label_ = "outputs";
    node_names_.clear();  // copies into output buffers belong to no node
    node_ops_.clear();
    for (ValueId v : g_.outputs()) {
      HS_ASSIGN_OR_RETURN(int b, buffer_of(v));
      if (out_.buffers[b].role != BufferPlan::Role::kOutput) {
        // An input passed straight through (or a constant): the output
        // needs its own buffer, filled by a copy.
        const int source = b;
        b = new_value_buffer(v);
        add_copy(source, b, g_.value(v).type.byte_size());
      }
      out_.output_buffers.push_back(b);
    }
    return Status::ok();
  }

  // --- pass 4: scratch -----------------------------------------------------

  // Every intermediate lives from the first step that touches it to the
  // last; the arena planner gives those never live together the same bytes.
  Status plan_scratch() {
    std::vector<int> first(out_.buffers.size(), -1), last(out_.buffers.size(), -1);
    // A view's steps count for its root: the root's bytes live while any
    // of its views does.
    const auto root_of = [&](int b) {
      auto it = views_.find(b);
      return it == views_.end() ? b : it->second.root;
    };
    for (size_t s = 0; s < out_.steps.size(); ++s)
      for (const auto* list : {&out_.steps[s].reads, &out_.steps[s].writes})
        for (int touched : *list) {
          const int b = root_of(touched);
          if (first[b] < 0) first[b] = static_cast<int>(s);
          last[b] = static_cast<int>(s);
        }
    std::vector<memory::BufferRequest> requests;
    std::vector<int> buffer_of;
    for (size_t b = 0; b < out_.buffers.size(); ++b) {
      if (out_.buffers[b].role != BufferPlan::Role::kIntermediate || views_.count(static_cast<int>(b))) continue;
      // A buffer no step touches (none today) still gets bytes of its own.
      const int from = first[b] < 0 ? 0 : first[b];
      const int to = first[b] < 0 ? static_cast<int>(out_.steps.size()) : last[b];
      requests.push_back({out_.buffers[b].name, std::max<uint64_t>(out_.buffers[b].bytes, 4), kDeviceArenaAlignment,
                          from, to});
      buffer_of.push_back(static_cast<int>(b));
    }
    Result<memory::ArenaPlan> plan = memory::plan_arena(requests);
    if (!plan.is_ok()) return plan.status().with_context("failed to plan the island's scratch memory: ");
    for (size_t i = 0; i < requests.size(); ++i) out_.buffers[buffer_of[i]].offset = plan->offsets[i];
    for (const auto& [b, view] : views_) out_.buffers[b].offset = out_.buffers[view.root].offset + view.offset;
    out_.scratch_bytes = plan->planned_bytes;
    out_.scratch_lower_bound = plan->lower_bound;
    return Status::ok();
  }

  // --- pass 5: barriers ---------------------------------------------------

  // The bytes buffer b occupies: intermediates share the scratch block
  // (space 0: two of them may overlap, as the scratch plan placed them);
  // every other buffer is a space of its own.
  gpu::ByteRange range_of(int b) const {
    const BufferPlan& plan = out_.buffers[b];
    const uint64_t bytes = std::max<uint64_t>(plan.bytes, 4);
    if (plan.role == BufferPlan::Role::kIntermediate) return {0, plan.offset, plan.offset + bytes};
    return {static_cast<uint32_t>(b) + 1, 0, bytes};
  }

  // A step waits (barrier_before) on the hazards of shared_gpu/barrier_plan.h;
  // the pieces of one Concat share a write group (disjoint ranges of one
  // buffer).
  void plan_barriers() {
    std::vector<gpu::StepAccess> access(out_.steps.size());
    for (size_t i = 0; i < out_.steps.size(); ++i) {
      const Step& step = out_.steps[i];
      for (int r : step.reads) access[i].reads.push_back(range_of(r));
      for (int w : step.writes) access[i].writes.push_back(range_of(w));
      access[i].write_group = step.write_group;
    }
    const std::vector<bool> barriers = gpu::plan_barriers(access);
    for (size_t i = 0; i < out_.steps.size(); ++i) out_.steps[i].barrier_before = barriers[i];
  }

  // --- pass 6: 16-bit storage ----------------------------------------------

  // Each dispatch learns which of its bindings hold f16 (half_io.glsl's
  // kHalfBindings). A byte copy cannot convert, so its two ends must agree:
  // half_storage.h's classes see to that, and this checks it.
  Status mark_half_bindings() {
    for (Step& step : out_.steps) {
      if (step.kind == Step::Kind::kCopy) {
        if (out_.buffers[step.reads[0]].half != out_.buffers[step.writes[0]].half)
          return internal_error("copy '" + step.label + "' between an f16 and an f32 buffer");
        continue;
      }
      for (size_t b = 0; b < step.bindings.size(); ++b)
        if (out_.buffers[step.bindings[b]].half) step.half_bindings |= 1u << b;
      if (step.half_bindings != 0 && !kernel_has_half_variant(step.kernel))
        return internal_error("step '" + step.label + "' binds f16 storage to " + std::string(kernel_name(step.kernel)));
    }
    return Status::ok();
  }

  const Graph& g_;
  const LoweringOptions& options_;
  const std::set<ValueId> half_values_;  // stored as f16 (half_storage.h)
  LoweredIsland out_;
  std::vector<uint32_t> params_;
  std::vector<Group> groups_;
  std::map<ValueId, size_t> group_of_output_;  // open groups by the value they currently end in
  std::map<ValueId, int> buffer_of_value_;
  // place_concat_inputs' decisions, and the buffers made as views (their
  // root buffer and byte offset in it).
  std::map<ValueId, Placement> placements_;
  struct View {
    int root;
    uint64_t offset;
  };
  std::map<int, View> views_;
  std::set<NodeId> elided_;  // Transposes and scalar Muls folded into their MatMul
  // plan_se_scale's blocks by their Mul, and the heads of the conv groups
  // they absorb.
  std::map<NodeId, SeBlock> se_scale_at_;
  std::set<NodeId> in_se_scale_;
  // plan_depthwise_means' fusions: a depthwise conv group's head -> the
  // spatial mean group it also writes; those mean groups' heads.
  std::map<NodeId, const Group*> depthwise_mean_of_;
  std::set<NodeId> mean_in_depthwise_;
  // plan_expand_depthwise's fusions: a depthwise conv group's head -> the
  // expand conv group before it; those expand groups' heads.
  std::map<NodeId, const Group*> expand_of_depthwise_;
  std::set<NodeId> expand_in_depthwise_;
  std::map<ValueId, int> uses_;
  std::set<ValueId> is_output_;
  std::set<NodeId> fused_later_;  // Muls already fused with their Sigmoid (fuse_swish)
  std::string label_;
  std::vector<std::string> node_names_, node_ops_;  // of the group being emitted
  int next_write_group_ = 0;
  int partial_sums_ = -1;  // partial_sums_buffer's, once made
};

}  // namespace

Result<MatmulLayout> matmul_layout(const Shape& a, const Shape& b) {
  return matmul_layout(a, row_major_strides(a), b, row_major_strides(b));
}

namespace {

// The strides of an operand's batch dims (all its dims but the last two)
// broadcast to `batch`: its own stride where it has the dim, 0 where it
// broadcasts (size 1 or missing).
Strides batch_strides(const Shape& shape, const Strides& strides, const Shape& batch) {
  const size_t dims = shape.size() - std::min<size_t>(shape.size(), 2);
  Strides out(batch.size(), 0);
  for (size_t i = 0; i < dims; ++i) {
    const size_t j = batch.size() - dims + i;
    if (shape[i] == batch[j] && shape[i] != 1) out[j] = strides[i];
  }
  return out;
}

}  // namespace

Result<MatmulLayout> matmul_layout(const Shape& a, const Strides& a_strides, const Shape& b, const Strides& b_strides) {
  MatmulLayout layout;
  layout.m = a.size() >= 2 ? a[a.size() - 2] : 1;
  layout.k = a.back();
  layout.n = b.size() >= 2 ? b.back() : 1;
  layout.a_row_stride = a.size() >= 2 ? a_strides[a.size() - 2] : layout.k;
  layout.a_col_stride = a_strides.back();
  // A 1-D B is one column: K rows.
  layout.b_row_stride = b.size() >= 2 ? b_strides[b.size() - 2] : b_strides.back();
  layout.b_col_stride = b.size() >= 2 ? b_strides.back() : 1;
  const Shape batch_a(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
  const Shape batch_b(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
  HS_ASSIGN_OR_RETURN(const Shape batch, broadcast_shapes(batch_a, batch_b));
  const Strides sa = batch_strides(a, a_strides, batch);
  const Strides sb = batch_strides(b, b_strides, batch);
  const Walk walk = coalesce(batch, {sa, sb});
  if (walk.dims.size() > 3)
    return unsupported("batch dims " + shape_to_string(batch) + " of A " + shape_to_string(a) + " and B " +
                       shape_to_string(b) + " do not merge into 3");
  const size_t first = 3 - walk.dims.size();
  for (size_t i = 0; i < walk.dims.size(); ++i) {
    layout.batch[first + i] = walk.dims[i];
    layout.a_batch_stride[first + i] = walk.strides[0][i];
    layout.b_batch_stride[first + i] = walk.strides[1][i];
  }
  return layout;
}

DeviceMemoryNeeds device_memory_needs(const LoweredIsland& lowered) {
  DeviceMemoryNeeds needs;
  needs.scratch_bytes = lowered.scratch_bytes;
  needs.scratch_lower_bound = lowered.scratch_lower_bound;
  for (int b : lowered.input_buffers) {
    needs.input_bytes.push_back(std::max<uint64_t>(lowered.buffers[b].bytes, 4));
    needs.input_layouts.push_back(TensorLayout::kNchw);
  }
  for (int b : lowered.output_buffers) {
    needs.output_bytes.push_back(std::max<uint64_t>(lowered.buffers[b].bytes, 4));
    needs.output_layouts.push_back(TensorLayout::kNchw);
  }
  return needs;
}

Result<LoweredIsland> lower_island(const Graph& graph, const LoweringOptions& options) {
  if (!options.half_storage) return Lowering(graph, options).run();
  std::set<ValueId> half = choose_half_values(graph);
  const Graph retyped = with_half_values(graph, half);
  return Lowering(retyped, options, std::move(half)).run();
}

}  // namespace hetsched::vulkan
