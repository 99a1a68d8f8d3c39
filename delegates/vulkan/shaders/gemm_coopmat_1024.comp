#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_coopmat.glsl with 1024 invocations per workgroup.
#define GEMM_INVOCATIONS 1024
#include "gemm_coopmat.glsl"
