// How the quantization ops (ops_quant.cc) read their scales, zero points and
// axes. Shape inference and the CPU kernels both call these, so the two can
// never read one node differently. Errors are plain reasons; callers put the
// node in front.
#pragma once

#include <cstdint>

#include "graph/attribute.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched {

// The axis along which QuantizeLinear's or DequantizeLinear's scale (and
// zero point) vary, normalised; -1 when the scale is one value for the
// whole tensor. `x` is the tensor being (de)quantized, `scale` the scale's
// type, `zero_point` the zero point's (nullptr when omitted). Accepts a
// scalar (or one-element) scale at every opset and, from opset 13, a 1-D
// scale of x.shape[axis] values (attribute axis, default 1). Blocked
// quantization (opset 21's block_size != 0) is refused as unsupported.
Result<int64_t> quant_axis(const Attributes& attrs, int opset, const Shape& x, const TensorType& scale,
                           const TensorType* zero_point);

// QuantizeLinear's output type: the zero point's when given (u8 or i8), else
// attribute output_dtype (opset 21; u8 or i8), else u8. int16, uint16, int4,
// uint4 and the fp8 types are not hetsched dtypes and are refused by name.
Result<DType> quantize_output_dtype(const Attributes& attrs, const TensorType* zero_point);

// True for the 8-bit integer types the quantized ops take (u8, i8).
inline bool is_quant8(DType d) { return d == DType::kUInt8 || d == DType::kInt8; }

}  // namespace hetsched
