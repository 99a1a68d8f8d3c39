// The elementwise operation codes of the GPU engines' shaders: the Vulkan
// delegate's elementwise chains and the conv/GEMM epilogues that both GPU
// engines fuse (shared_gpu/shaders/gpu_ops.glsl declares the same values;
// a change on one side must be made on the other).
#pragma once

#include <cstdint>

namespace hetsched::gpu {

// Elementwise operation codes (shaders/gpu_ops.glsl). Unary ops are below
// kFirstBinary; binary ops combine the chain value with another operand.
enum class OpCode : uint32_t {
  kNone = 0,
  kRelu = 1,
  kSigmoid = 2,
  kTanh = 3,
  kExp = 4,
  kNeg = 5,
  kAbs = 6,
  kClip = 7,         // p0 = min, p1 = max
  kHardSigmoid = 8,  // p0 = alpha, p1 = beta
  kHardSwish = 9,
  kSin = 10,
  kCos = 11,
  kReciprocal = 12,
  kSqrt = 13,
  kErf = 14,
  kGelu = 15,      // x/2 (1 + erf(x / sqrt 2))
  kGeluTanh = 16,  // Gelu's approximate="tanh" form
  kFloor = 17,
  kCeil = 18,
  kLog = 19,
  kRound = 20,  // halves to even
  kSwish = 21,  // x * Sigmoid(x): a Mul(x, Sigmoid(x)) pair fused (SiLU)
  kAdd = 32,
  kSub = 33,
  kMul = 34,
  kDiv = 35,
  kPow = 36,
  kMin = 37,
  kMax = 38,
  // Where: a select between the chain value and another operand (or
  // immediate), steered by a condition operand (a bool constant uploaded
  // as f32 0/1) named in bits 24-31 of the op word.
  kWhere = 48,
};
inline constexpr uint32_t kFirstBinary = 32;

// The unary ops a conv or GEMM epilogue applies after the bias, packed one
// per byte of a word (gpu_ops.glsl's apply_epilogue), with two parameters each.
inline constexpr uint32_t kMaxEpilogueOps = 2;

}  // namespace hetsched::gpu
