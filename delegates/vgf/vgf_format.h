// The VGF artifact: a standalone container of one compiled VGF island, and its
// encoder and verifying decoder. docs/vgf.md is the format's reference.
//
//   offset 0   "VGF1", u32 version, u32 section count, u32 reserved (0)
//   16         section table: per section u32 kind, u32 reserved, u64 offset, u64 size
//   ...        sections, each at a 16-byte aligned offset, none overlapping:
//                modules (FlatBuffers ModuleTable), model sequence (ModelSequence),
//                resources (ResourceTable), constants (raw bytes)
//
// VgfFile is the decoded form: plain values, independent of FlatBuffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "delegates/delegate.h"
#include "hetsched/status.h"

namespace hetsched::vgf {

inline constexpr char kMagic[4] = {'V', 'G', 'F', '1'};
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kSectionEntrySize = 24;
// Sections and constants start at multiples of this: enough for any scalar
// and vector type a shader reads.
inline constexpr size_t kSectionAlignment = 16;
// Resources of higher rank are refused: shader push constants hold 6 dims.
inline constexpr size_t kMaxRank = 6;

enum class SectionKind : uint32_t { kModules = 1, kModelSequence = 2, kResources = 3, kConstants = 4 };
std::string_view section_kind_name(SectionKind kind);  // "modules", ...

// --- TOSA operators -------------------------------------------------------------

enum class OpCode : uint16_t {
  kConv2d = 1,
  kDepthwiseConv2d,
  kMatmul,
  kAvgPool2d,
  kMaxPool2d,
  kTranspose,
  kReshape,
  kConcat,
  kSlice,
  kPad,
  kResize,
  kReduceSum,
  kReduceMax,
  kClamp,
  kAdd,
  kSub,
  kMul,
  kPow,
  kAbs,
  kNeg,
  kSin,
  kCos,
  kExp,
  kReciprocal,
  kRsqrt,
  kSigmoid,
  kTanh,
  kLog,
  kFloor,
  kCeil,
  kErf,
  kSelect,  // select(cond, a, b): TOSA SELECT, the condition as f32 (non-zero: a)
  kTile,    // TOSA TILE, its multiples the output's dims over the input's
  kTransposeConv2d,  // ConvAttr: pad (top, bottom, left, right) of the output, may be negative
  kCast,             // TOSA CAST, f32 <-> f16, i32, i64, bool (the only operator that touches non-f32 resources)
};
inline constexpr uint16_t kMaxOpCode = static_cast<uint16_t>(OpCode::kCast);
// TOSA spelling: "conv2d", "avg_pool2d", "reduce_sum", ...
std::string_view op_name(OpCode op);

struct NoAttr {
  bool operator==(const NoAttr&) const = default;
};
struct ConvAttr {
  std::vector<int64_t> pad;       // top, bottom, left, right
  std::vector<int64_t> stride;    // y, x
  std::vector<int64_t> dilation;  // y, x
  bool operator==(const ConvAttr&) const = default;
};
struct PoolAttr {
  std::vector<int64_t> kernel;  // y, x
  std::vector<int64_t> stride;  // y, x
  std::vector<int64_t> pad;     // top, bottom, left, right
  bool operator==(const PoolAttr&) const = default;
};
struct TransposeAttr {
  std::vector<int32_t> perms;
  bool operator==(const TransposeAttr&) const = default;
};
struct AxisAttr {
  int32_t axis = 0;
  bool operator==(const AxisAttr&) const = default;
};
struct SliceAttr {
  std::vector<int64_t> start, size, stride;
  bool operator==(const SliceAttr&) const = default;
};
struct PadAttr {
  std::vector<int64_t> padding;  // before, after per dim
  float pad_const = 0.f;
  bool operator==(const PadAttr&) const = default;
};
struct ClampAttr {
  float min = 0.f, max = 0.f;
  bool operator==(const ClampAttr&) const = default;
};
enum class ResizeMode : uint8_t { kNearest = 0, kBilinear = 1 };
struct ResizeAttr {
  ResizeMode mode = ResizeMode::kNearest;
  bool operator==(const ResizeAttr&) const = default;
};
using OpAttr = std::variant<NoAttr, ConvAttr, PoolAttr, TransposeAttr, AxisAttr, SliceAttr, PadAttr, ClampAttr,
                            ResizeAttr>;

struct Operator {
  OpCode op = OpCode::kAdd;
  OpAttr attr;
  std::vector<uint32_t> inputs;   // resource ids
  std::vector<uint32_t> outputs;  // resource ids
  std::string name;               // the graph node it came from
  bool operator==(const Operator&) const = default;
};

enum class ModuleType : uint8_t { kGraph = 0, kCompute = 1 };

struct Module {
  ModuleType type = ModuleType::kGraph;
  std::string name;
  std::vector<Operator> ops;     // graph modules
  std::string entry_point;       // compute modules
  std::vector<uint32_t> spirv;   // compute modules
  bool operator==(const Module&) const = default;
};

struct Segment {
  ModuleType type = ModuleType::kGraph;
  uint32_t module = 0;
  std::string name;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  std::vector<uint32_t> dispatch;        // compute: x, y, z workgroups
  std::vector<uint32_t> push_constants;  // compute
  bool operator==(const Segment&) const = default;
};

// --- resources --------------------------------------------------------------------

enum class ResourceKind : uint8_t { kInput = 0, kOutput = 1, kIntermediate = 2, kConstant = 3 };
std::string_view resource_kind_name(ResourceKind kind);  // "input", ...

struct Resource {
  ResourceKind kind = ResourceKind::kIntermediate;
  DType dtype = DType::kFloat32;  // f32, or f16, bf16, i32, i64, bool (read or written by a cast only)
  std::vector<int64_t> shape;     // memory order
  std::vector<int64_t> strides;   // elements; dense row-major over shape
  TensorLayout layout = TensorLayout::kNchw;
  int32_t alias_group = -1;
  uint64_t constant_offset = 0;
  uint64_t constant_size = 0;
  std::string name;

  int64_t elements() const;
  uint64_t bytes() const { return static_cast<uint64_t>(elements()) * dtype_size(dtype); }
  // The graph tensor's own (NCHW) shape: [N, C, H, W] for NHWC resources.
  std::vector<int64_t> logical_shape() const;
  bool operator==(const Resource&) const = default;
};

// Dense row-major element strides of `shape`.
std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape);

struct VgfFile {
  std::vector<Module> modules;
  std::vector<Segment> segments;
  std::vector<uint32_t> inputs;   // island inputs in order
  std::vector<uint32_t> outputs;  // island outputs in order
  std::vector<Resource> resources;
  std::vector<uint8_t> constants;  // the constant section
  bool operator==(const VgfFile&) const = default;

  // Total operators over graph modules.
  size_t op_count() const;
};

// Serialises `file` into the container. Fails (kInvalidArgument) when the
// file would not pass decode_vgf's checks, so nothing unreadable is written.
Result<Blob> encode_vgf(const VgfFile& file);

// Parses and verifies a container: header, section table (bounds, overlaps,
// alignment, one of each kind), FlatBuffers verification of each table,
// every id, every constant range and every stride, and the data flow (each
// resource read is written earlier, each output is written). Errors are
// kDataLoss (corrupt bytes) or kUnsupported (a newer version), with a
// message "failed to decode VGF: <what is wrong>". Never reads out of bounds.
Result<VgfFile> decode_vgf(std::span<const uint8_t> bytes);

// The structural and data-flow checks decode_vgf runs after parsing (also
// run by encode_vgf). Plain-language reason on failure.
Status check_vgf(const VgfFile& file);

}  // namespace hetsched::vgf
