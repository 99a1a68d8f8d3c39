#version 450
#extension GL_GOOGLE_include_directive : require
// gemm_coopmat_fixed.glsl: 128 x 256 tiles, K steps of 32 in one shared
// buffer, 2 x 8 subgroups of 4 x 2 fragments (512 invocations).
#define GEMM_TILE_M 128
#define GEMM_TILE_N 256
#define GEMM_TILE_K 32
#define GEMM_WARPS_M 2
#define GEMM_WARPS_N 8
#define GEMM_STAGES 1
#include "gemm_coopmat_fixed.glsl"
