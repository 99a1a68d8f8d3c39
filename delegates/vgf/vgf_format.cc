#include "delegates/vgf/vgf_format.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "delegates/vgf/tosa_ops.h"
#include "graph/flatbuffers_read.h"
#include "delegates/vgf_generated.h"

namespace hetsched::vgf {

std::string_view section_kind_name(SectionKind kind) {
  switch (kind) {
    case SectionKind::kModules:
      return "modules";
    case SectionKind::kModelSequence:
      return "model sequence";
    case SectionKind::kResources:
      return "resources";
    case SectionKind::kConstants:
      return "constants";
  }
  return "unknown";
}

std::string_view resource_kind_name(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::kInput:
      return "input";
    case ResourceKind::kOutput:
      return "output";
    case ResourceKind::kIntermediate:
      return "intermediate";
    case ResourceKind::kConstant:
      return "constant";
  }
  return "unknown";
}

int64_t Resource::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> Resource::logical_shape() const {
  if (layout == TensorLayout::kNhwc && shape.size() == 4) return {shape[0], shape[3], shape[1], shape[2]};
  return shape;
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

size_t VgfFile::op_count() const {
  size_t n = 0;
  for (const Module& m : modules) n += m.ops.size();
  return n;
}

namespace {

// Largest resource a shader can index with 32-bit element offsets.
constexpr int64_t kMaxElements = int64_t{1} << 30;
// Vulkan guarantees 128 bytes of push constants.
constexpr size_t kMaxPushWords = 32;
// maxComputeWorkGroupCount is at least 65535 per dimension.
constexpr uint32_t kMaxGroups = 65535;
constexpr uint32_t kSpirvMagic = 0x07230203;
// Bindings of one compute segment (its inputs, then outputs).
constexpr size_t kMaxComputeBindings = 8;

std::string ids_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Resource dtypes and their container codes.
constexpr std::pair<DType, fb::DataType> kDataTypes[] = {
    {DType::kFloat32, fb::DataType::F32}, {DType::kFloat16, fb::DataType::F16}, {DType::kInt32, fb::DataType::I32},
    {DType::kInt64, fb::DataType::I64},   {DType::kBool, fb::DataType::Bool}, {DType::kBFloat16, fb::DataType::BF16},
};

bool is_vgf_dtype(DType d) {
  return std::any_of(std::begin(kDataTypes), std::end(kDataTypes), [d](const auto& p) { return p.first == d; });
}

fb::DataType to_fb_dtype(DType d) {
  for (const auto& [dtype, code] : kDataTypes)
    if (dtype == d) return code;
  return fb::DataType::F32;  // check_vgf refused it before
}

std::optional<DType> from_fb_dtype(fb::DataType code) {
  for (const auto& [dtype, c] : kDataTypes)
    if (c == code) return dtype;
  return std::nullopt;
}

std::string resource_label(const std::vector<Resource>& resources, uint32_t id) {
  std::string s = "resource " + std::to_string(id);
  if (id < resources.size() && !resources[id].name.empty()) s += " ('" + resources[id].name + "')";
  return s;
}

Status check_resource(const VgfFile& file, size_t id) {
  const Resource& r = file.resources[id];
  const std::string what = resource_label(file.resources, static_cast<uint32_t>(id));
  if (!is_vgf_dtype(r.dtype))
    return invalid_argument(what + " has dtype " + std::string(dtype_name(r.dtype)) +
                            ", only f32, f16, bf16, i32, i64 and bool are supported");
  if (r.shape.size() > kMaxRank)
    return invalid_argument(what + " has rank " + std::to_string(r.shape.size()) + ", more than " +
                            std::to_string(kMaxRank));
  int64_t elements = 1;
  for (int64_t d : r.shape) {
    if (d < 1) return invalid_argument(what + " has shape " + ids_text(r.shape) + " with a dim below 1");
    if (d > kMaxElements || elements > kMaxElements / d)
      return invalid_argument(what + " has shape " + ids_text(r.shape) + " with more than 2^30 elements");
    elements *= d;
  }
  if (r.strides != dense_strides(r.shape))
    return invalid_argument(what + " has strides " + ids_text(r.strides) + " that are not the dense strides " +
                            ids_text(dense_strides(r.shape)) + " of its shape " + ids_text(r.shape));
  if (r.layout == TensorLayout::kNhwc && r.shape.size() != 4)
    return invalid_argument(what + " is NHWC but has rank " + std::to_string(r.shape.size()));
  if (r.kind == ResourceKind::kConstant) {
    if (r.constant_offset % kSectionAlignment != 0)
      return invalid_argument(what + " starts at constant offset " + std::to_string(r.constant_offset) +
                              ", not a multiple of 16");
    if (r.constant_size != r.bytes())
      return invalid_argument(what + " has " + std::to_string(r.constant_size) + " constant bytes, its shape needs " +
                              std::to_string(r.bytes()));
    if (r.constant_offset > file.constants.size() || r.constant_size > file.constants.size() - r.constant_offset)
      return invalid_argument(what + " constant range [" + std::to_string(r.constant_offset) + ", +" +
                              std::to_string(r.constant_size) + ") lies outside the constant section (" +
                              std::to_string(file.constants.size()) + " bytes)");
  } else if (r.constant_offset != 0 || r.constant_size != 0) {
    return invalid_argument(what + " is " + std::string(resource_kind_name(r.kind)) + " but has a constant range");
  }
  if (r.alias_group != -1) {
    if (r.alias_group < 0 || static_cast<size_t>(r.alias_group) >= file.resources.size())
      return invalid_argument(what + " has alias group " + std::to_string(r.alias_group) + ", outside [-1, " +
                              std::to_string(file.resources.size()) + ")");
    if (r.kind != ResourceKind::kIntermediate)
      return invalid_argument(what + " is " + std::string(resource_kind_name(r.kind)) +
                              " and cannot be in an alias group (only intermediates can)");
  }
  return Status::ok();
}

// The island's input (or output) list names every resource of that kind once.
Status check_io_list(const VgfFile& file, const std::vector<uint32_t>& list, ResourceKind kind) {
  const std::string which = kind == ResourceKind::kInput ? "inputs" : "outputs";
  std::set<uint32_t> seen;
  for (uint32_t id : list) {
    if (id >= file.resources.size())
      return invalid_argument("model " + which + " name resource " + std::to_string(id) + ", but there are only " +
                              std::to_string(file.resources.size()));
    if (file.resources[id].kind != kind)
      return invalid_argument("model " + which + " name " + resource_label(file.resources, id) + " of kind " +
                              std::string(resource_kind_name(file.resources[id].kind)));
    if (!seen.insert(id).second)
      return invalid_argument("model " + which + " name " + resource_label(file.resources, id) + " twice");
  }
  for (size_t id = 0; id < file.resources.size(); ++id)
    if (file.resources[id].kind == kind && !seen.count(static_cast<uint32_t>(id)))
      return invalid_argument(resource_label(file.resources, static_cast<uint32_t>(id)) + " is " +
                              std::string(resource_kind_name(kind)) + " but not in the model " + which);
  return Status::ok();
}

Status check_ids(const VgfFile& file, const std::vector<uint32_t>& ids, const std::string& owner) {
  for (uint32_t id : ids)
    if (id >= file.resources.size())
      return invalid_argument(owner + " names resource " + std::to_string(id) + ", but there are only " +
                              std::to_string(file.resources.size()));
  return Status::ok();
}

Status check_module(const VgfFile& file, size_t index) {
  const Module& m = file.modules[index];
  const std::string what = "module " + std::to_string(index) + " ('" + m.name + "')";
  if (m.type == ModuleType::kGraph) {
    if (m.ops.empty()) return invalid_argument(what + " is a graph module without operators");
    if (!m.spirv.empty() || !m.entry_point.empty()) return invalid_argument(what + " is a graph module with a shader");
    for (size_t i = 0; i < m.ops.size(); ++i) {
      const Operator& op = m.ops[i];
      const std::string owner = what + " operator " + std::to_string(i) + " (" + std::string(op_name(op.op)) +
                                (op.name.empty() ? "" : " '" + op.name + "'") + ")";
      HS_RETURN_IF_ERROR(check_ids(file, op.inputs, owner));
      HS_RETURN_IF_ERROR(check_ids(file, op.outputs, owner));
      HS_RETURN_IF_ERROR(check_operator(op, file.resources).with_context(owner + ": "));
    }
    return Status::ok();
  }
  if (!m.ops.empty()) return invalid_argument(what + " is a compute module with operators");
  if (m.entry_point.empty()) return invalid_argument(what + " is a compute module without an entry point");
  if (m.spirv.size() < 5 || m.spirv[0] != kSpirvMagic)
    return invalid_argument(what + " does not hold SPIR-V (no SPIR-V header)");
  return Status::ok();
}

Status check_segment(const VgfFile& file, size_t index) {
  const Segment& s = file.segments[index];
  const std::string what = "segment " + std::to_string(index) + " ('" + s.name + "')";
  if (s.module >= file.modules.size())
    return invalid_argument(what + " names module " + std::to_string(s.module) + ", but there are only " +
                            std::to_string(file.modules.size()));
  if (file.modules[s.module].type != s.type)
    return invalid_argument(what + " and its module " + std::to_string(s.module) + " differ in type (graph/compute)");
  HS_RETURN_IF_ERROR(check_ids(file, s.inputs, what));
  HS_RETURN_IF_ERROR(check_ids(file, s.outputs, what));
  if (s.type == ModuleType::kCompute)
    for (const auto* ids : {&s.inputs, &s.outputs})
      for (uint32_t id : *ids)
        if (file.resources[id].dtype != DType::kFloat32)
          return invalid_argument(what + " binds " + resource_label(file.resources, id) + " of dtype " +
                                  std::string(dtype_name(file.resources[id].dtype)) + ": compute modules read f32");
  if (s.type == ModuleType::kGraph) {
    if (!s.dispatch.empty() || !s.push_constants.empty())
      return invalid_argument(what + " is a graph segment with compute dispatch parameters");
    return Status::ok();
  }
  if (s.outputs.empty()) return invalid_argument(what + " is a compute segment without outputs");
  if (s.inputs.size() + s.outputs.size() > kMaxComputeBindings)
    return invalid_argument(what + " binds " + std::to_string(s.inputs.size() + s.outputs.size()) +
                            " buffers, more than " + std::to_string(kMaxComputeBindings));
  if (s.dispatch.size() != 3)
    return invalid_argument(what + " has " + std::to_string(s.dispatch.size()) + " dispatch sizes, expected 3");
  for (uint32_t g : s.dispatch)
    if (g < 1 || g > kMaxGroups)
      return invalid_argument(what + " dispatches " + std::to_string(g) + " workgroups in a dimension (1.." +
                              std::to_string(kMaxGroups) + ")");
  if (s.push_constants.size() > kMaxPushWords)
    return invalid_argument(what + " has " + std::to_string(s.push_constants.size()) + " push-constant words, more than " +
                            std::to_string(kMaxPushWords));
  return Status::ok();
}

// Replays the model sequence: every read must follow a write (inputs and
// constants count as written), every resource is written once, and alias
// groups have one writer: their root, the others are reshapes of it.
class DataFlow {
 public:
  explicit DataFlow(const VgfFile& file) : file_(file), written_(file.resources.size(), false) {
    for (size_t i = 0; i < file.resources.size(); ++i) {
      const ResourceKind k = file.resources[i].kind;
      written_[i] = k == ResourceKind::kInput || k == ResourceKind::kConstant;
    }
  }

  Status read(uint32_t id, const std::string& who) const {
    if (!written_[id])
      return invalid_argument(who + " reads " + resource_label(file_.resources, id) + " before anything writes it");
    return Status::ok();
  }

  // `reshape_source`: the input of the reshape that writes `id`, or -1.
  Status write(uint32_t id, const std::string& who, int64_t reshape_source) {
    const Resource& r = file_.resources[id];
    if (r.kind == ResourceKind::kInput || r.kind == ResourceKind::kConstant)
      return invalid_argument(who + " writes " + resource_label(file_.resources, id) + ", which is " +
                              std::string(resource_kind_name(r.kind)));
    if (written_[id]) return invalid_argument(who + " writes " + resource_label(file_.resources, id) + " a second time");
    written_[id] = true;
    if (r.alias_group >= 0) {
      const bool aliased_reshape =
          reshape_source >= 0 && file_.resources[reshape_source].alias_group == r.alias_group;
      if (!aliased_reshape && !rooted_groups_.insert(r.alias_group).second)
        return invalid_argument(who + " writes " + resource_label(file_.resources, id) + " of alias group " +
                                std::to_string(r.alias_group) + ", which another operator already wrote");
      if (!aliased_reshape) group_bytes_[r.alias_group] = r.bytes();
      if (group_bytes_.count(r.alias_group) && group_bytes_[r.alias_group] != r.bytes())
        return invalid_argument(resource_label(file_.resources, id) + " has " + std::to_string(r.bytes()) +
                                " bytes, unlike the rest of alias group " + std::to_string(r.alias_group));
    }
    return Status::ok();
  }

  Status run() {
    for (size_t si = 0; si < file_.segments.size(); ++si) {
      const Segment& s = file_.segments[si];
      const std::string seg = "segment " + std::to_string(si) + " ('" + s.name + "')";
      std::set<uint32_t> written_here;
      if (s.type == ModuleType::kGraph) {
        const Module& m = file_.modules[s.module];
        for (size_t oi = 0; oi < m.ops.size(); ++oi) {
          const Operator& op = m.ops[oi];
          const std::string who = seg + " operator " + std::to_string(oi) + " (" + std::string(op_name(op.op)) + ")";
          for (uint32_t in : op.inputs) HS_RETURN_IF_ERROR(read(in, who));
          const int64_t source = op.op == OpCode::kReshape ? int64_t{op.inputs[0]} : -1;
          for (uint32_t out : op.outputs) {
            HS_RETURN_IF_ERROR(write(out, who, source));
            written_here.insert(out);
          }
        }
      } else {
        for (uint32_t in : s.inputs) HS_RETURN_IF_ERROR(read(in, seg));
        for (uint32_t out : s.outputs) {
          HS_RETURN_IF_ERROR(write(out, seg, -1));
          written_here.insert(out);
        }
      }
      for (uint32_t out : s.outputs)
        if (!written_here.count(out))
          return invalid_argument(seg + " lists " + resource_label(file_.resources, out) +
                                  " as an output but does not write it");
    }
    for (uint32_t out : file_.outputs)
      if (!written_[out]) return invalid_argument("model output " + resource_label(file_.resources, out) + " is never written");
    return Status::ok();
  }

 private:
  const VgfFile& file_;
  std::vector<bool> written_;
  std::set<int32_t> rooted_groups_;
  std::map<int32_t, uint64_t> group_bytes_;
};

}  // namespace

Status check_vgf(const VgfFile& file) {
  if (file.segments.empty()) return invalid_argument("the model sequence has no segments");
  if (file.outputs.empty()) return invalid_argument("the model has no outputs");
  for (size_t i = 0; i < file.resources.size(); ++i) HS_RETURN_IF_ERROR(check_resource(file, i));
  HS_RETURN_IF_ERROR(check_io_list(file, file.inputs, ResourceKind::kInput));
  HS_RETURN_IF_ERROR(check_io_list(file, file.outputs, ResourceKind::kOutput));
  for (size_t i = 0; i < file.modules.size(); ++i) HS_RETURN_IF_ERROR(check_module(file, i));
  for (size_t i = 0; i < file.segments.size(); ++i) HS_RETURN_IF_ERROR(check_segment(file, i));
  DataFlow flow(file);
  return flow.run();
}

// --- encoding ----------------------------------------------------------------------

namespace {

namespace fb = ::hetsched::vgf::fb;

flatbuffers::Offset<flatbuffers::Vector<int64_t>> ints(flatbuffers::FlatBufferBuilder& b, const std::vector<int64_t>& v) {
  return b.CreateVector(v);
}

std::pair<fb::OpAttr, flatbuffers::Offset<void>> encode_attr(flatbuffers::FlatBufferBuilder& b, const OpAttr& attr) {
  struct Visitor {
    flatbuffers::FlatBufferBuilder& b;
    std::pair<fb::OpAttr, flatbuffers::Offset<void>> operator()(const NoAttr&) { return {fb::OpAttr::NONE, 0}; }
    std::pair<fb::OpAttr, flatbuffers::Offset<void>> operator()(const ConvAttr& a) {
      return {fb::OpAttr::ConvAttr,
              fb::CreateConvAttr(b, ints(b, a.pad), ints(b, a.stride), ints(b, a.dilation)).Union()};
    }
    std::pair<fb::OpAttr, flatbuffers::Offset<void>> operator()(const PoolAttr& a) {
      return {fb::OpAttr::PoolAttr, fb::CreatePoolAttr(b, ints(b, a.kernel), ints(b, a.stride), ints(b, a.pad)).Union()};
    }
    std::pair<fb::OpAttr, flatbuffers::Offset<void>> operator()(const TransposeAttr& a) {
      return {fb::OpAttr::TransposeAttr, fb::CreateTransposeAttr(b, b.CreateVector(a.perms)).Union()};
    }
    std::pair<fb::OpAttr, flatbuffers::Offset<void>> operator()(const AxisAttr& a) {
      return {fb::OpAttr::AxisAttr, fb::CreateAxisAttr(b, a.axis).Union()};
    }
    std::pair<fb::OpAttr, flatbuffers::Offset<void>> operator()(const SliceAttr& a) {
      return {fb::OpAttr::SliceAttr,
              fb::CreateSliceAttr(b, ints(b, a.start), ints(b, a.size), ints(b, a.stride)).Union()};
    }
    std::pair<fb::OpAttr, flatbuffers::Offset<void>> operator()(const PadAttr& a) {
      return {fb::OpAttr::PadAttr, fb::CreatePadAttr(b, ints(b, a.padding), a.pad_const).Union()};
    }
    std::pair<fb::OpAttr, flatbuffers::Offset<void>> operator()(const ClampAttr& a) {
      return {fb::OpAttr::ClampAttr, fb::CreateClampAttr(b, a.min, a.max).Union()};
    }
    std::pair<fb::OpAttr, flatbuffers::Offset<void>> operator()(const ResizeAttr& a) {
      return {fb::OpAttr::ResizeAttr, fb::CreateResizeAttr(b, static_cast<fb::ResizeMode>(a.mode)).Union()};
    }
  };
  return std::visit(Visitor{b}, attr);
}

std::vector<uint8_t> finish(flatbuffers::FlatBufferBuilder& b) {
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

std::vector<uint8_t> encode_modules(const VgfFile& file) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Module>> modules;
  for (const Module& m : file.modules) {
    std::vector<flatbuffers::Offset<fb::Operator>> ops;
    for (const Operator& op : m.ops) {
      auto [attr_type, attr] = encode_attr(b, op.attr);
      ops.push_back(fb::CreateOperator(b, static_cast<fb::OpCode>(op.op), attr_type, attr, b.CreateVector(op.inputs),
                                       b.CreateVector(op.outputs), b.CreateString(op.name)));
    }
    modules.push_back(fb::CreateModule(b, static_cast<fb::ModuleType>(m.type), b.CreateString(m.name),
                                       b.CreateVector(ops), b.CreateString(m.entry_point), b.CreateVector(m.spirv)));
  }
  b.Finish(fb::CreateModuleTable(b, b.CreateVector(modules)));
  return finish(b);
}

std::vector<uint8_t> encode_sequence(const VgfFile& file) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Segment>> segments;
  for (const Segment& s : file.segments)
    segments.push_back(fb::CreateSegment(b, static_cast<fb::ModuleType>(s.type), s.module, b.CreateString(s.name),
                                         b.CreateVector(s.inputs), b.CreateVector(s.outputs),
                                         b.CreateVector(s.dispatch), b.CreateVector(s.push_constants)));
  b.Finish(fb::CreateModelSequence(b, b.CreateVector(segments), b.CreateVector(file.inputs),
                                   b.CreateVector(file.outputs)));
  return finish(b);
}

std::vector<uint8_t> encode_resources(const VgfFile& file) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Resource>> resources;
  for (const Resource& r : file.resources)
    resources.push_back(fb::CreateResource(b, static_cast<fb::ResourceKind>(r.kind),
                                           to_fb_dtype(r.dtype),
                                           ints(b, r.shape), ints(b, r.strides),
                                           r.layout == TensorLayout::kNhwc ? fb::Layout::Nhwc : fb::Layout::Nchw,
                                           r.alias_group, r.constant_offset, r.constant_size,
                                           b.CreateString(r.name)));
  b.Finish(fb::CreateResourceTable(b, b.CreateVector(resources)));
  return finish(b);
}

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

void put_u32(Blob& out, size_t at, uint32_t v) { std::memcpy(out.data() + at, &v, 4); }
void put_u64(Blob& out, size_t at, uint64_t v) { std::memcpy(out.data() + at, &v, 8); }
uint32_t get_u32(std::span<const uint8_t> in, size_t at) {
  uint32_t v;
  std::memcpy(&v, in.data() + at, 4);
  return v;
}
uint64_t get_u64(std::span<const uint8_t> in, size_t at) {
  uint64_t v;
  std::memcpy(&v, in.data() + at, 8);
  return v;
}

}  // namespace

Result<Blob> encode_vgf(const VgfFile& file) {
  if (Status s = check_vgf(file); !s.is_ok()) return s.with_context("failed to encode VGF: ");
  const std::array<std::pair<SectionKind, std::vector<uint8_t>>, 4> sections = {{
      {SectionKind::kModules, encode_modules(file)},
      {SectionKind::kModelSequence, encode_sequence(file)},
      {SectionKind::kResources, encode_resources(file)},
      {SectionKind::kConstants, file.constants},
  }};
  size_t offset = align_up(kHeaderSize + sections.size() * kSectionEntrySize, kSectionAlignment);
  std::array<size_t, 4> offsets{};
  size_t end = offset;
  for (size_t i = 0; i < sections.size(); ++i) {
    offsets[i] = offset;
    end = offset + sections[i].second.size();
    offset = align_up(end, kSectionAlignment);
  }
  // The file ends with its last section: any truncation cuts into a section.
  Blob out(end, 0);
  std::memcpy(out.data(), kMagic, 4);
  put_u32(out, 4, kVersion);
  put_u32(out, 8, static_cast<uint32_t>(sections.size()));
  for (size_t i = 0; i < sections.size(); ++i) {
    const size_t entry = kHeaderSize + i * kSectionEntrySize;
    put_u32(out, entry, static_cast<uint32_t>(sections[i].first));
    put_u64(out, entry + 8, offsets[i]);
    put_u64(out, entry + 16, sections[i].second.size());
    if (!sections[i].second.empty()) std::memcpy(out.data() + offsets[i], sections[i].second.data(), sections[i].second.size());
  }
  return out;
}

// --- decoding -----------------------------------------------------------------------

namespace {

Status corrupt(const std::string& what) { return data_loss("failed to decode VGF: " + what); }

// A FlatBuffers section copied to 8-byte aligned storage: the verifier
// checks alignment relative to memory, and a caller's span may sit anywhere.
class AlignedCopy {
 public:
  explicit AlignedCopy(std::span<const uint8_t> bytes) : words_((bytes.size() + 7) / 8), size_(bytes.size()) {
    if (size_) std::memcpy(words_.data(), bytes.data(), size_);
  }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(words_.data()); }
  size_t size() const { return size_; }

 private:
  std::vector<uint64_t> words_;
  size_t size_;
};

template <typename Table>
Result<const Table*> verified_root(const AlignedCopy& copy, SectionKind kind) {
  flatbuffers::Verifier::Options options;
  options.max_depth = 32;
  options.max_tables = 1 << 20;
  flatbuffers::Verifier verifier(copy.data(), copy.size(), options);
  if (copy.size() < sizeof(flatbuffers::uoffset_t) || !verifier.VerifyBuffer<Table>(nullptr))
    return corrupt("the " + std::string(section_kind_name(kind)) + " section fails FlatBuffers verification");
  return flatbuffers::GetRoot<Table>(copy.data());
}

// Bytewise copies (graph/flatbuffers_read.h says why).
template <typename T>
std::vector<T> to_vector(const flatbuffers::Vector<T>* v) {
  return copy_fb_vector(v);
}

std::string to_string(const flatbuffers::String* s) { return copy_fb_string(s); }

// The union member `op` holds, through FlatBuffers' typed accessor, or an
// error when the type names a member but no value is stored: the verifier
// accepts a union type without its table (it verifies a null table as
// valid), so no union member is read without this check.
template <typename T>
Result<const T*> union_member(const T* member, const fb::Operator& op, const std::string& who) {
  if (!member)
    return corrupt(who + " has attribute type " + std::to_string(static_cast<int>(op.attr_type())) +
                   " but no attribute");
  return member;
}

Result<OpAttr> decode_attr(const fb::Operator& op, const std::string& who) {
  switch (op.attr_type()) {
    case fb::OpAttr::NONE:
      return OpAttr(NoAttr{});
    case fb::OpAttr::ConvAttr: {
      HS_ASSIGN_OR_RETURN(const auto* a, union_member(op.attr_as_ConvAttr(), op, who));
      return OpAttr(ConvAttr{to_vector(a->pad()), to_vector(a->stride()), to_vector(a->dilation())});
    }
    case fb::OpAttr::PoolAttr: {
      HS_ASSIGN_OR_RETURN(const auto* a, union_member(op.attr_as_PoolAttr(), op, who));
      return OpAttr(PoolAttr{to_vector(a->kernel()), to_vector(a->stride()), to_vector(a->pad())});
    }
    case fb::OpAttr::TransposeAttr: {
      HS_ASSIGN_OR_RETURN(const auto* a, union_member(op.attr_as_TransposeAttr(), op, who));
      return OpAttr(TransposeAttr{to_vector(a->perms())});
    }
    case fb::OpAttr::AxisAttr: {
      HS_ASSIGN_OR_RETURN(const auto* a, union_member(op.attr_as_AxisAttr(), op, who));
      return OpAttr(AxisAttr{a->axis()});
    }
    case fb::OpAttr::SliceAttr: {
      HS_ASSIGN_OR_RETURN(const auto* a, union_member(op.attr_as_SliceAttr(), op, who));
      return OpAttr(SliceAttr{to_vector(a->start()), to_vector(a->size()), to_vector(a->stride())});
    }
    case fb::OpAttr::PadAttr: {
      HS_ASSIGN_OR_RETURN(const auto* a, union_member(op.attr_as_PadAttr(), op, who));
      return OpAttr(PadAttr{to_vector(a->padding()), a->pad_const()});
    }
    case fb::OpAttr::ClampAttr: {
      HS_ASSIGN_OR_RETURN(const auto* a, union_member(op.attr_as_ClampAttr(), op, who));
      return OpAttr(ClampAttr{a->min(), a->max()});
    }
    case fb::OpAttr::ResizeAttr: {
      HS_ASSIGN_OR_RETURN(const auto* a, union_member(op.attr_as_ResizeAttr(), op, who));
      const auto mode = a->mode();
      if (mode != fb::ResizeMode::Nearest && mode != fb::ResizeMode::Bilinear)
        return corrupt(who + " has unknown resize mode " + std::to_string(static_cast<int>(mode)));
      return OpAttr(ResizeAttr{static_cast<ResizeMode>(mode)});
    }
  }
  return corrupt(who + " has unknown attribute type " + std::to_string(static_cast<int>(op.attr_type())));
}

Result<ModuleType> decode_module_type(fb::ModuleType t, const std::string& who) {
  if (t != fb::ModuleType::Graph && t != fb::ModuleType::Compute)
    return corrupt(who + " has unknown type " + std::to_string(static_cast<int>(t)));
  return static_cast<ModuleType>(t);
}

Status decode_modules(const fb::ModuleTable& table, VgfFile& file) {
  if (!table.modules()) return Status::ok();
  for (flatbuffers::uoffset_t mi = 0; mi < table.modules()->size(); ++mi) {
    const fb::Module& fm = *table.modules()->Get(mi);
    const std::string who = "module " + std::to_string(mi);
    Module m;
    HS_ASSIGN_OR_RETURN(m.type, decode_module_type(fm.type(), who));
    m.name = to_string(fm.name());
    m.entry_point = to_string(fm.entry_point());
    m.spirv = to_vector(fm.spirv());
    if (fm.ops()) {
      for (flatbuffers::uoffset_t oi = 0; oi < fm.ops()->size(); ++oi) {
        const fb::Operator& fo = *fm.ops()->Get(oi);
        const std::string op_who = who + " operator " + std::to_string(oi);
        const auto code = static_cast<uint16_t>(fo.op());
        if (code < 1 || code > kMaxOpCode) return corrupt(op_who + " has unknown op code " + std::to_string(code));
        Operator op;
        op.op = static_cast<OpCode>(code);
        HS_ASSIGN_OR_RETURN(op.attr, decode_attr(fo, op_who));
        op.inputs = to_vector(fo.inputs());
        op.outputs = to_vector(fo.outputs());
        op.name = to_string(fo.name());
        m.ops.push_back(std::move(op));
      }
    }
    file.modules.push_back(std::move(m));
  }
  return Status::ok();
}

Status decode_sequence(const fb::ModelSequence& seq, VgfFile& file) {
  if (seq.segments()) {
    for (flatbuffers::uoffset_t si = 0; si < seq.segments()->size(); ++si) {
      const fb::Segment& fs = *seq.segments()->Get(si);
      Segment s;
      HS_ASSIGN_OR_RETURN(s.type, decode_module_type(fs.type(), "segment " + std::to_string(si)));
      s.module = fs.module_();
      s.name = to_string(fs.name());
      s.inputs = to_vector(fs.inputs());
      s.outputs = to_vector(fs.outputs());
      s.dispatch = to_vector(fs.dispatch());
      s.push_constants = to_vector(fs.push_constants());
      file.segments.push_back(std::move(s));
    }
  }
  file.inputs = to_vector(seq.inputs());
  file.outputs = to_vector(seq.outputs());
  return Status::ok();
}

Status decode_resources(const fb::ResourceTable& table, VgfFile& file) {
  if (!table.resources()) return Status::ok();
  for (flatbuffers::uoffset_t i = 0; i < table.resources()->size(); ++i) {
    const fb::Resource& fr = *table.resources()->Get(i);
    const std::string who = "resource " + std::to_string(i);
    Resource r;
    const auto kind = static_cast<int>(fr.kind());
    if (kind < 0 || kind > static_cast<int>(ResourceKind::kConstant)) return corrupt(who + " has unknown kind " + std::to_string(kind));
    r.kind = static_cast<ResourceKind>(kind);
    const std::optional<DType> dtype = from_fb_dtype(fr.dtype());
    if (!dtype) return corrupt(who + " has unknown dtype " + std::to_string(static_cast<int>(fr.dtype())));
    r.dtype = *dtype;
    if (fr.layout() != fb::Layout::Nchw && fr.layout() != fb::Layout::Nhwc)
      return corrupt(who + " has unknown layout " + std::to_string(static_cast<int>(fr.layout())));
    r.layout = fr.layout() == fb::Layout::Nhwc ? TensorLayout::kNhwc : TensorLayout::kNchw;
    r.shape = to_vector(fr.shape());
    r.strides = to_vector(fr.strides());
    r.alias_group = fr.alias_group();
    r.constant_offset = fr.constant_offset();
    r.constant_size = fr.constant_size();
    r.name = to_string(fr.name());
    file.resources.push_back(std::move(r));
  }
  return Status::ok();
}

struct SectionEntry {
  SectionKind kind;
  uint64_t offset;
  uint64_t size;
};

Result<std::array<SectionEntry, 4>> read_section_table(std::span<const uint8_t> bytes) {
  const size_t n = bytes.size();
  if (n < kHeaderSize)
    return corrupt("file is " + std::to_string(n) + " bytes, shorter than the " + std::to_string(kHeaderSize) +
                   "-byte header");
  if (std::memcmp(bytes.data(), kMagic, 4) != 0) return corrupt("no VGF1 magic at offset 0 (not a VGF file)");
  const uint32_t version = get_u32(bytes, 4);
  if (version > kVersion)
    return unsupported("failed to decode VGF: container version " + std::to_string(version) +
                       " is newer than this reader's (" + std::to_string(kVersion) + ")");
  if (version == 0) return corrupt("container version 0 is not valid");
  const uint32_t count = get_u32(bytes, 8);
  // Four kinds exist, each at most once.
  if (count < 4 || count > 4)
    return corrupt("header lists " + std::to_string(count) + " sections, expected 4 (modules, model sequence, resources, constants)");
  const size_t table_end = kHeaderSize + count * kSectionEntrySize;
  if (n < table_end)
    return corrupt("file is " + std::to_string(n) + " bytes, too short for its " + std::to_string(count) +
                   "-entry section table (" + std::to_string(table_end) + " bytes)");
  std::array<std::optional<SectionEntry>, 4> by_kind;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = kHeaderSize + i * kSectionEntrySize;
    const uint32_t raw_kind = get_u32(bytes, at);
    if (raw_kind < 1 || raw_kind > 4)
      return corrupt("section table entry " + std::to_string(i) + " has unknown kind " + std::to_string(raw_kind));
    SectionEntry e{static_cast<SectionKind>(raw_kind), get_u64(bytes, at + 8), get_u64(bytes, at + 16)};
    const std::string name = "section '" + std::string(section_kind_name(e.kind)) + "'";
    if (by_kind[raw_kind - 1]) return corrupt(name + " appears twice in the section table");
    if (e.offset < table_end)
      return corrupt(name + " starts at offset " + std::to_string(e.offset) + ", inside the header and section table (" +
                     std::to_string(table_end) + " bytes)");
    if (e.offset % kSectionAlignment != 0)
      return corrupt(name + " starts at offset " + std::to_string(e.offset) + ", not a multiple of 16");
    if (e.offset > n || e.size > n - e.offset)
      return corrupt(name + " [offset " + std::to_string(e.offset) + ", size " + std::to_string(e.size) +
                     "] extends past the end of the file (" + std::to_string(n) + " bytes)");
    by_kind[raw_kind - 1] = e;
  }
  std::array<SectionEntry, 4> entries{};
  for (size_t i = 0; i < 4; ++i) entries[i] = *by_kind[i];
  std::array<SectionEntry, 4> sorted = entries;
  std::sort(sorted.begin(), sorted.end(), [](const SectionEntry& a, const SectionEntry& b) { return a.offset < b.offset; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i - 1].offset + sorted[i - 1].size > sorted[i].offset)
      return corrupt("sections '" + std::string(section_kind_name(sorted[i - 1].kind)) + "' and '" +
                     std::string(section_kind_name(sorted[i].kind)) + "' overlap");
  return entries;
}

}  // namespace

Result<VgfFile> decode_vgf(std::span<const uint8_t> bytes) {
  HS_ASSIGN_OR_RETURN(const auto entries, read_section_table(bytes));
  auto section = [&](SectionKind kind) {
    const SectionEntry& e = entries[static_cast<size_t>(kind) - 1];
    return bytes.subspan(static_cast<size_t>(e.offset), static_cast<size_t>(e.size));
  };
  VgfFile file;
  const AlignedCopy modules(section(SectionKind::kModules));
  HS_ASSIGN_OR_RETURN(const fb::ModuleTable* module_table, verified_root<fb::ModuleTable>(modules, SectionKind::kModules));
  HS_RETURN_IF_ERROR(decode_modules(*module_table, file));
  const AlignedCopy sequence(section(SectionKind::kModelSequence));
  HS_ASSIGN_OR_RETURN(const fb::ModelSequence* seq, verified_root<fb::ModelSequence>(sequence, SectionKind::kModelSequence));
  HS_RETURN_IF_ERROR(decode_sequence(*seq, file));
  const AlignedCopy resources(section(SectionKind::kResources));
  HS_ASSIGN_OR_RETURN(const fb::ResourceTable* resource_table,
                      verified_root<fb::ResourceTable>(resources, SectionKind::kResources));
  HS_RETURN_IF_ERROR(decode_resources(*resource_table, file));
  const auto constants = section(SectionKind::kConstants);
  file.constants.assign(constants.begin(), constants.end());
  if (Status s = check_vgf(file); !s.is_ok()) return corrupt(s.message());
  return file;
}

}  // namespace hetsched::vgf
