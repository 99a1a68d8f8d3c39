#include "delegates/vgf/epilogue_fusion.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <variant>

#include "shared_gpu/gpu_op_codes.h"

namespace hetsched::vgf {

// The HardSwish shader the lowering puts in a compute segment: a segment
// carrying exactly these words is known to compute HardSwish.
#include "delegates/vgf/shaders/gelu_spv.h"
#include "delegates/vgf/shaders/hardswish_spv.h"

namespace {

using GpuOp = gpu::OpCode;

// A tensor nothing else reads: folding the operator that reads it skips it.
bool private_intermediate(const VgfFile& file, uint32_t id, const std::vector<uint32_t>& readers) {
  const Resource& r = file.resources[id];
  return r.kind == ResourceKind::kIntermediate && r.alias_group < 0 && readers[id] == 1;
}

// The values of a constant of the running tensor's rank whose dims are all
// 1 but the last, which is 1 or `channels`: one value per channel (or one
// for all). Nothing otherwise.
std::optional<std::vector<float>> channel_constant(const VgfFile& file, uint32_t id, size_t rank, int64_t channels) {
  const Resource& r = file.resources[id];
  if (r.kind != ResourceKind::kConstant || r.dtype != DType::kFloat32 || r.shape.size() != rank) return std::nullopt;
  for (size_t d = 0; d + 1 < rank; ++d)
    if (r.shape[d] != 1) return std::nullopt;
  const int64_t n = r.shape.empty() ? 1 : r.shape.back();
  if (n != 1 && n != channels) return std::nullopt;
  std::vector<float> v(static_cast<size_t>(n));
  std::memcpy(v.data(), file.constants.data() + r.constant_offset, v.size() * sizeof(float));
  if (n == 1) v.assign(static_cast<size_t>(channels), v[0]);
  return v;
}

struct EpilogueOp {
  GpuOp op;
  float p0 = 0.f, p1 = 0.f;
};

// The epilogue ops a unary operator on the running tensor is (rsqrt: two,
// a square root and its reciprocal, as unary.comp computes it); none when
// it is not such an operator. gpu_ops.glsl's apply_unary computes each as
// unary.comp does.
std::vector<EpilogueOp> epilogue_of(const Operator& op) {
  switch (op.op) {
    case vgf::OpCode::kClamp: {
      const auto& c = std::get<ClampAttr>(op.attr);
      if (c.min == 0.f && c.max == std::numeric_limits<float>::infinity()) return {{GpuOp::kRelu}};
      return {{GpuOp::kClip, c.min, c.max}};
    }
    case vgf::OpCode::kSigmoid: return {{GpuOp::kSigmoid}};
    case vgf::OpCode::kTanh: return {{GpuOp::kTanh}};
    case vgf::OpCode::kExp: return {{GpuOp::kExp}};
    case vgf::OpCode::kAbs: return {{GpuOp::kAbs}};
    case vgf::OpCode::kNeg: return {{GpuOp::kNeg}};
    case vgf::OpCode::kSin: return {{GpuOp::kSin}};
    case vgf::OpCode::kCos: return {{GpuOp::kCos}};
    case vgf::OpCode::kReciprocal: return {{GpuOp::kReciprocal}};
    case vgf::OpCode::kRsqrt: return {{GpuOp::kSqrt}, {GpuOp::kReciprocal}};
    case vgf::OpCode::kLog: return {{GpuOp::kLog}};
    case vgf::OpCode::kFloor: return {{GpuOp::kFloor}};
    case vgf::OpCode::kCeil: return {{GpuOp::kCeil}};
    case vgf::OpCode::kErf: return {{GpuOp::kErf}};
    default: return {};
  }
}

// Whether items[i] and items[i + 1] are Swish of `running`: a sigmoid of it
// and a mul of it by that sigmoid, the two its only readers (the lowering
// writes SiLU so; the Vulkan lowering's fuse_swish matches the same pair in
// the graph).
bool is_swish(const VgfFile& file, std::span<const PlanItem> items, size_t i, uint32_t running,
              const std::vector<uint32_t>& readers) {
  if (i + 1 >= items.size() || !items[i].op || !items[i + 1].op) return false;
  const Resource& r = file.resources[running];
  if (r.kind != ResourceKind::kIntermediate || r.alias_group >= 0 || readers[running] != 2) return false;
  const Operator& sig = *items[i].op;
  const Operator& mul = *items[i + 1].op;
  if (sig.op != vgf::OpCode::kSigmoid || sig.inputs.size() != 1 || sig.inputs[0] != running || sig.outputs.size() != 1)
    return false;
  const uint32_t s = sig.outputs[0];
  if (!private_intermediate(file, s, readers)) return false;
  return mul.op == vgf::OpCode::kMul && mul.inputs.size() == 2 && mul.outputs.size() == 1 &&
         ((mul.inputs[0] == running && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == running)) &&
         file.resources[mul.outputs[0]].shape == r.shape;
}

bool runs(const Module& m, std::span<const uint32_t> spirv) {
  return m.type == ModuleType::kCompute && m.spirv.size() == spirv.size() &&
         std::equal(m.spirv.begin(), m.spirv.end(), spirv.begin());
}

// The epilogue op of a compute segment the lowering writes for an
// activation TOSA lacks: HardSwish, or Gelu (push constant 1: 1 for the
// tanh form).
std::optional<GpuOp> epilogue_of(const Segment& s, const Module& m) {
  if (runs(m, kHardswishSpv)) return GpuOp::kHardSwish;
  if (runs(m, kGeluSpv) && s.push_constants.size() == 2)
    return s.push_constants[1] == 1 ? GpuOp::kGeluTanh : GpuOp::kGelu;
  return std::nullopt;
}

}  // namespace

std::vector<uint32_t> count_readers(const VgfFile& file) {
  std::vector<uint32_t> readers(file.resources.size(), 0);
  for (const Segment& s : file.segments) {
    if (s.type == ModuleType::kCompute) {
      for (uint32_t id : s.inputs) ++readers[id];
      continue;
    }
    for (const Operator& op : file.modules[s.module].ops)
      for (uint32_t id : op.inputs) ++readers[id];
  }
  for (uint32_t id : file.outputs) ++readers[id];
  return readers;
}

FusedTail fuse_tail(const VgfFile& file, std::span<const PlanItem> items, size_t producer, uint32_t produced,
                    int64_t channels, const std::vector<uint32_t>& readers, bool residual_ok) {
  FusedTail tail;
  tail.output = produced;
  tail.scale.assign(static_cast<size_t>(channels), 1.f);
  tail.shift.assign(static_cast<size_t>(channels), 0.f);
  const size_t rank = file.resources[produced].shape.size();
  size_t epilogues = 0;
  for (size_t i = producer + 1; i < items.size(); ++i) {
    const uint32_t running = tail.output;
    if (is_swish(file, items, i, running, readers)) {
      if (epilogues == gpu::kMaxEpilogueOps) break;
      tail.epilogue_ops |= static_cast<uint32_t>(GpuOp::kSwish) << (8 * epilogues);
      ++epilogues;
      for (size_t k = i; k <= i + 1; ++k) {
        tail.nodes.push_back(items[k].op->name);
        tail.ops.push_back(std::string(op_name(items[k].op->op)));
      }
      tail.output = items[i + 1].op->outputs[0];
      tail.items = i + 1 - producer;
      ++i;
      continue;
    }
    if (!private_intermediate(file, running, readers)) break;
    const PlanItem& item = items[i];
    uint32_t next = 0;
    if (!item.op) {
      // A compute segment: HardSwish or Gelu of the running tensor, as one epilogue op.
      const Segment& s = file.segments[item.segment];
      const std::optional<GpuOp> e = epilogue_of(s, file.modules[s.module]);
      if (epilogues == gpu::kMaxEpilogueOps || !e || s.inputs.size() != 1 || s.inputs[0] != running ||
          s.outputs.size() != 1)
        break;
      tail.epilogue_ops |= static_cast<uint32_t>(*e) << (8 * epilogues);
      ++epilogues;
      next = s.outputs[0];
      tail.nodes.push_back(s.name);
      tail.ops.push_back(*e == GpuOp::kHardSwish ? "hardswish" : "gelu");
    } else {
      const Operator& op = *item.op;
      if (op.outputs.size() != 1 || file.resources[op.outputs[0]].shape != file.resources[running].shape) break;
      if (const std::vector<EpilogueOp> e = epilogue_of(op); !e.empty() && op.inputs[0] == running) {
        if (epilogues + e.size() > gpu::kMaxEpilogueOps) break;
        for (const EpilogueOp& one : e) {
          tail.epilogue_ops |= static_cast<uint32_t>(one.op) << (8 * epilogues);
          tail.epilogue_params[2 * epilogues] = one.p0;
          tail.epilogue_params[2 * epilogues + 1] = one.p1;
          ++epilogues;
        }
      } else if ((op.op == vgf::OpCode::kMul || op.op == vgf::OpCode::kAdd ||
                  (op.op == vgf::OpCode::kSub && op.inputs[0] == running)) &&
                 epilogues == 0 && !tail.residual && op.inputs.size() == 2 &&
                 (op.inputs[0] == running) != (op.inputs[1] == running)) {
        // Channel affine, only before any activation or residual: it folds
        // into the weights (scale) and bias (shift).
        const uint32_t other = op.inputs[0] == running ? op.inputs[1] : op.inputs[0];
        const std::optional<std::vector<float>> c = channel_constant(file, other, rank, channels);
        if (!c) {
          // A run-time tensor of the same shape: the residual. Every item
          // from the producer on is folded, so it was written before them.
          // f16 where half_storage.h stored it so: the conv kernels read it
          // through half_io.glsl, and the f16 plan must fold as the f32 one.
          const Resource& r = file.resources[other];
          if (!residual_ok || op.op != vgf::OpCode::kAdd || r.kind == ResourceKind::kConstant ||
              (r.dtype != DType::kFloat32 && r.dtype != DType::kFloat16) || r.shape != file.resources[running].shape)
            break;
          tail.residual = other;
        }
        for (size_t ch = 0; c && ch < c->size(); ++ch) {
          if (op.op == vgf::OpCode::kMul) {
            tail.scale[ch] *= (*c)[ch];
            tail.shift[ch] *= (*c)[ch];
          } else {
            tail.shift[ch] += op.op == vgf::OpCode::kAdd ? (*c)[ch] : -(*c)[ch];
          }
        }
      } else {
        break;
      }
      next = op.outputs[0];
      tail.nodes.push_back(op.name);
      tail.ops.push_back(std::string(op_name(op.op)));
    }
    tail.output = next;
    tail.items = i - producer;
  }
  return tail;
}

}  // namespace hetsched::vgf
