// The Vulkan delegate's shaders include this: the elementwise op codes and
// their semantics live in shared_gpu/shaders/gpu_ops.glsl, which the shared
// kernels (conv2d.comp and its kin in shared_gpu/shaders/) use too.
#include "../../../shared_gpu/shaders/gpu_ops.glsl"
