#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_coopmat_fixed.glsl: 128 x 128 tiles, K steps of 32 in two shared
// buffers, 2 x 4 subgroups of 4 x 2 fragments (256 invocations).
#define GEMM_TILE_M 128
#define GEMM_TILE_N 128
#define GEMM_TILE_K 32
#define GEMM_WARPS_M 2
#define GEMM_WARPS_N 4
#define GEMM_STAGES 2
#include "gemm_coopmat_fixed.glsl"
