// From a VGF file's operators to compute dispatches: which of the VGF
// shaders (shaders/*.comp) each operator runs, with which buffers and push
// constants, over how many workgroups. The GPU-free half of the runtime, so
// it can be tested (and fuzzed with corrupt files) without a device.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "delegates/vgf/vgf_format.h"

namespace hetsched::vgf {

// The built-in shaders, plus kCustom for a compute module's own SPIR-V.
enum class Kernel : uint8_t {
  kUnary,
  kBinary,
  kCopy,
  kPad,
  kConv2d,
  kDepthwiseConv2d,
  kPool2d,
  kMatmul,
  kReduce,
  kResize,
  kSelect,
  kTransposeConv2d,
  kCastF16ToF32,  // cast (storageBuffer16BitAccess)
  kCastF32ToF16,
  kCastWords,     // cast between f32, i32 and i64 (32-bit words; i64 as pairs)
  kCastToBool,    // cast f32, i32 or i64 -> bool (storageBuffer8BitAccess)
  kCastFromBool,  // cast bool -> f32, i32 or i64
  kCustom,
};
inline constexpr size_t kBuiltinKernelCount = static_cast<size_t>(Kernel::kCustom);
std::string_view kernel_name(Kernel kernel);  // "unary", ...
// Storage buffers and push-constant words of a built-in kernel's shader.
uint32_t kernel_binding_count(Kernel kernel);
uint32_t kernel_push_words(Kernel kernel);

// Every VGF shader runs workgroups of this many invocations along x.
inline constexpr uint32_t kWorkgroupSize = 64;
// Workgroups for one invocation per element: x up to 65535, the rest in y.
std::array<uint32_t, 3> element_groups(uint64_t elements);

struct Dispatch {
  Kernel kernel = Kernel::kUnary;
  uint32_t module = 0;              // kCustom: the compute module
  std::vector<uint32_t> bindings;   // resource ids, in binding order
  std::vector<uint32_t> push;       // push-constant words
  std::array<uint32_t, 3> groups{1, 1, 1};
  std::string label;                // "segment 0 operator 2 (conv2d 'conv1')", for errors
};

// The dispatches of one segment, in order. A reshape between resources of
// one alias group is no dispatch at all.
struct SegmentDispatches {
  std::string name;
  std::vector<Dispatch> dispatches;
};

// Plans every segment of `file`, which must have passed check_vgf (decode_vgf
// and encode_vgf guarantee it): the dispatches stay inside every buffer.
std::vector<SegmentDispatches> plan_dispatches(const VgfFile& file);

}  // namespace hetsched::vgf
