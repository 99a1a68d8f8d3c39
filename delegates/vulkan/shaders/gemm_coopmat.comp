#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_coopmat.glsl with 256 invocations per workgroup.
#define GEMM_INVOCATIONS 256
#include "gemm_coopmat.glsl"
