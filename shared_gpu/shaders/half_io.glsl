// 16-bit storage of the tensors between kernels, per binding. A kernel that
// takes it declares each tensor binding's f32 array (`x`) as before plus
// HALF_IN(binding, Block, x) / HALF_OUT(...) beside it, and reads and writes
// through LOAD(binding, x, i) / STORE(binding, x, i, v). Compiled without
// HS_HALF_IO (every device) these are the plain f32 accesses. cmake builds
// a second SPIR-V of such a kernel with HS_HALF_IO defined (`<stem>_half`,
// which needs storageBuffer16BitAccess); there bit b of the specialisation
// constant kHalfBindings (constant_id 64, set by the host per dispatch)
// says binding b holds f16 elements — an f16 alias of the same buffer is
// read or written instead, and values convert to and from f32 at the
// access, so the arithmetic stays f32. A buffer holds one type: the host
// marks whole values, never parts of one.
#ifdef HS_HALF_IO
#extension GL_EXT_shader_16bit_storage : require
layout(constant_id = 64) const uint kHalfBindings = 0u;
#define HALF_BINDING(b) ((kHalfBindings & (1u << (b))) != 0u)
#define HALF_IN(b, Block, name) layout(set = 0, binding = b) readonly restrict buffer Block { float16_t name##_h[]; };
#define HALF_IN4(b, Block, name) layout(set = 0, binding = b) readonly restrict buffer Block { f16vec4 name##_h4[]; };
#define HALF_OUT(b, Block, name) layout(set = 0, binding = b) writeonly restrict buffer Block { float16_t name##_h[]; };
#define HALF_OUT4(b, Block, name) layout(set = 0, binding = b) writeonly restrict buffer Block { f16vec4 name##_h4[]; };
#define LOAD(b, name, i) (HALF_BINDING(b) ? float(name##_h[i]) : name[i])
#define LOAD4(b, name, i) (HALF_BINDING(b) ? vec4(name##_h4[i]) : name##4[i])
#define STORE(b, name, i, v) \
  if (HALF_BINDING(b)) name##_h[i] = float16_t(v); else name[i] = (v)
#define STORE4(b, name, i, v) \
  if (HALF_BINDING(b)) name##_h4[i] = f16vec4(v); else name##4[i] = (v)
#else
#define HALF_BINDING(b) false
#define HALF_IN(b, Block, name)
#define HALF_IN4(b, Block, name)
#define HALF_OUT(b, Block, name)
#define HALF_OUT4(b, Block, name)
#define LOAD(b, name, i) name[i]
#define LOAD4(b, name, i) name##4[i]
#define STORE(b, name, i, v) name[i] = (v)
#define STORE4(b, name, i, v) name##4[i] = (v)
#endif
