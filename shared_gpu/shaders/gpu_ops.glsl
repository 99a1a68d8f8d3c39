// The elementwise operation codes of both GPU engines' kernels (mirrored by
// hetsched::gpu::OpCode in shared_gpu/gpu_op_codes.h — change both
// together) and their semantics, which follow the portable CPU kernels
// (delegates/cpu/kernels/elementwise.cc). The Vulkan delegate's shaders
// reach it through their common.glsl; the shared kernels (conv2d.comp,
// conv2d_reduce.comp, depthwise_conv2d.comp) include it directly.
//
// Every shader declares its buffers `restrict`, so loads may be reordered
// around stores: neither engine binds a buffer a dispatch writes to another
// of its bindings (delegates/vulkan/lowering.h, delegates/vgf/dispatch_plan.h).

const uint OP_NONE = 0u;
const uint OP_RELU = 1u;
const uint OP_SIGMOID = 2u;
const uint OP_TANH = 3u;
const uint OP_EXP = 4u;
const uint OP_NEG = 5u;
const uint OP_ABS = 6u;
const uint OP_CLIP = 7u;          // p0 = min, p1 = max
const uint OP_HARD_SIGMOID = 8u;  // p0 = alpha, p1 = beta
const uint OP_HARD_SWISH = 9u;
const uint OP_SIN = 10u;
const uint OP_COS = 11u;
const uint OP_RECIPROCAL = 12u;
const uint OP_SQRT = 13u;
const uint OP_ERF = 14u;
const uint OP_GELU = 15u;
const uint OP_GELU_TANH = 16u;
const uint OP_FLOOR = 17u;
const uint OP_CEIL = 18u;
const uint OP_LOG = 19u;
const uint OP_ROUND = 20u;
const uint OP_SWISH = 21u;
const uint OP_ADD = 32u;
const uint OP_SUB = 33u;
const uint OP_MUL = 34u;
const uint OP_DIV = 35u;
const uint OP_POW = 36u;
const uint OP_MIN = 37u;
const uint OP_MAX = 38u;
const uint OP_WHERE = 48u;  // handled by elementwise.comp's run_op (it needs a third operand)

float quiet_nan() { return uintBitsToFloat(0x7fc00000u); }
float infinity() { return uintBitsToFloat(0x7f800000u); }

// tanh through exp(-2|x|), which cannot overflow (the textbook
// (e^2x - 1) / (e^2x + 1) turns into inf / inf for large x).
float stable_tanh(float x) {
  float t = exp(-2.0 * abs(x));
  float r = (1.0 - t) / (1.0 + t);
  return x < 0.0 ? -r : r;
}

// C's pow (what the CPU oracle calls): GLSL's pow is undefined for x < 0
// and for x == 0 with y <= 0.
float onnx_pow(float x, float y) {
  if (y == 0.0) return 1.0;
  if (x == 0.0) return y > 0.0 ? 0.0 : infinity();
  if (x < 0.0) {
    if (fract(y) != 0.0) return quiet_nan();
    float r = pow(-x, y);
    return mod(y, 2.0) == 1.0 ? -r : r;
  }
  return pow(x, y);
}

#include "erf.glsl"

float apply_unary(uint op, float x, float p0, float p1) {
  switch (op) {
    case OP_RELU: return max(x, 0.0);
    case OP_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case OP_TANH: return stable_tanh(x);
    case OP_EXP: return exp(x);
    case OP_NEG: return -x;
    case OP_ABS: return abs(x);
    case OP_CLIP: return min(max(x, p0), p1);
    case OP_HARD_SIGMOID: return max(0.0, min(1.0, p0 * x + p1));
    case OP_HARD_SWISH: return x * max(0.0, min(1.0, x * (1.0 / 6.0) + 0.5));
    case OP_SIN: return sin(x);
    case OP_COS: return cos(x);
    case OP_RECIPROCAL: return 1.0 / x;
    case OP_SQRT: return sqrt(x);
    case OP_ERF: return onnx_erf(x);
    case OP_GELU: return gelu(x);
    case OP_GELU_TANH: return gelu_tanh(x);
    case OP_FLOOR: return floor(x);
    case OP_CEIL: return ceil(x);
    case OP_LOG: return log(x);
    case OP_ROUND: return roundEven(x);
    // As the CPU runs Mul(x, Sigmoid(x)): the sigmoid, then the product.
    case OP_SWISH: return x * (1.0 / (1.0 + exp(-x)));
    default: return x;
  }
}

float apply_binary(uint op, float a, float b) {
  switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    case OP_POW: return onnx_pow(a, b);
    // As the CPU kernels compare, so a NaN on either side propagates alike.
    case OP_MIN: return b < a ? b : a;
    case OP_MAX: return b > a ? b : a;
    default: return a;
  }
}

// The fused activation of a GEMM or conv epilogue: up to two unary ops,
// packed one per byte of `ops`, with their parameters in p.
float apply_epilogue(uint ops, vec4 p, float x) {
  x = apply_unary(ops & 0xFFu, x, p.x, p.y);
  return apply_unary((ops >> 8) & 0xFFu, x, p.z, p.w);
}

// The linear index of a workgroup in a 2-D grid: 1-D work is split over x
// and y, since a dimension may hold no more than 65535 groups on some devices.
uint linear_group() { return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; }
