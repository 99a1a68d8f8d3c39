// Which of a VGF file's tensors the runtime keeps in f16 between its
// kernels (the delegate's `storage` option, shared_gpu/precision.h): the
// f32 intermediates its own built-in kernels write and read, never its
// edges. Inputs and outputs keep their dtype (the executor, handoffs and
// the host's layout conversion see what the file says), constants stay f32
// (the plan arranges weights from them), and whatever a cast or a compute
// module binds keeps its dtype: the casts' shaders are made for theirs, and
// a module's SPIR-V (gelu, softmax, ...) reads f32. Every other kernel
// reads and writes f16 per binding through shared_gpu/shaders/half_io.glsl
// and computes in f32 (dispatch_plan.h's Dispatch::half_bindings).
//
// An alias group (a Reshape between intermediates) is one set of bytes,
// kept whole or not at all. Concat pieces are copied into their output, so
// they are resources of their own.
//
// GPU-free: device_memory plans the halved file's scratch without a device.
#pragma once

#include <set>

#include "delegates/vgf/vgf_format.h"

namespace hetsched::vgf {

// The resources of `file` (checked, check_vgf) that may be stored as f16.
std::set<uint32_t> choose_half_resources(const VgfFile& file);

// `file` with those resources retyped to f16, so bytes, the transient plan
// and the dispatches' half_bindings follow. No longer passes check_vgf
// (which keeps non-f32 dtypes to the casts): check the file before.
VgfFile with_half_storage(const VgfFile& file);

}  // namespace hetsched::vgf
