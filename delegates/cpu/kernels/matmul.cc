// The blocked f32 GEMM shared by Conv, MatMul and Gemm, and the MatMul and
// Gemm kernels.

#include <algorithm>
#include <vector>

#include "delegates/cpu/kernels/kernel_util.h"
#include "graph/op_schema.h"

namespace hetsched::cpu {

namespace {

// Register tile of the micro-kernel: 4 rows x 8 columns keeps 8 SSE
// accumulators plus operands inside the 16 vector registers of baseline
// x86-64, which GCC then vectorises without spilling (4x16 and 6x8 both
// measured several times slower).
constexpr int64_t kMr = 4;
constexpr int64_t kNr = 8;
// Cache blocking: a packed B panel of kKc x kNc floats (512 KiB) sits in
// L2; one kMr x kKc sliver of A (4 KiB) and one kKc x kNr sliver of B
// (8 KiB) sit in L1 while the micro-kernel runs.
constexpr int64_t kKc = 256;
constexpr int64_t kNc = 512;

// acc = A sliver (kc x kMr, packed k-major) . B sliver (kc x kNr, packed
// k-major); writes or adds the valid mr x nr corner into C.
void micro_kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int64_t mr, int64_t nr,
                  bool accumulate) {
  float acc[kMr][kNr] = {};
  for (int64_t k = 0; k < kc; ++k) {
    const float* ak = a + k * kMr;
    const float* bk = b + k * kNr;
    for (int64_t r = 0; r < kMr; ++r)
      for (int64_t j = 0; j < kNr; ++j) acc[r][j] += ak[r] * bk[j];
  }
  for (int64_t r = 0; r < mr; ++r) {
    float* crow = c + r * ldc;
    for (int64_t j = 0; j < nr; ++j) crow[j] = accumulate ? crow[j] + acc[r][j] : acc[r][j];
  }
}

// Packs rows [0, m) x columns [k0, k0 + kc) of A into kMr-row slivers,
// zero-padding the last one.
void pack_a(int64_t m, int64_t kc, const float* a, int64_t lda, int64_t k0, float* dst) {
  for (int64_t i0 = 0; i0 < m; i0 += kMr) {
    float* sliver = dst + i0 * kc;
    for (int64_t r = 0; r < kMr; ++r) {
      if (i0 + r < m) {
        const float* src = a + (i0 + r) * lda + k0;
        for (int64_t k = 0; k < kc; ++k) sliver[k * kMr + r] = src[k];
      } else {
        for (int64_t k = 0; k < kc; ++k) sliver[k * kMr + r] = 0.f;
      }
    }
  }
}

// Packs rows [k0, k0 + kc) x columns [j0, j0 + nc) of B into kNr-column
// slivers, zero-padding the last one.
void pack_b(int64_t kc, int64_t nc, const float* b, int64_t ldb, int64_t k0, int64_t j0, float* dst) {
  for (int64_t js = 0; js < nc; js += kNr) {
    float* sliver = dst + js * kc;
    const int64_t width = std::min(kNr, nc - js);
    for (int64_t k = 0; k < kc; ++k) {
      const float* src = b + (k0 + k) * ldb + j0 + js;
      for (int64_t j = 0; j < width; ++j) sliver[k * kNr + j] = src[j];
      for (int64_t j = width; j < kNr; ++j) sliver[k * kNr + j] = 0.f;
    }
  }
}

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

}  // namespace

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.f);
    return;
  }
  // Per-thread packing buffers, reused across calls so that the many small
  // GEMMs of a conv do not each allocate.
  thread_local std::vector<float> packed_a, packed_b;
  packed_a.resize(static_cast<size_t>(round_up(m, kMr) * std::min(k, kKc)));
  packed_b.resize(static_cast<size_t>(std::min(k, kKc) * round_up(std::min(n, kNc), kNr)));
  for (int64_t k0 = 0; k0 < k; k0 += kKc) {
    const int64_t kc = std::min(kKc, k - k0);
    const bool acc = accumulate || k0 > 0;
    pack_a(m, kc, a, lda, k0, packed_a.data());
    for (int64_t j0 = 0; j0 < n; j0 += kNc) {
      const int64_t nc = std::min(kNc, n - j0);
      pack_b(kc, nc, b, ldb, k0, j0, packed_b.data());
      for (int64_t js = 0; js < nc; js += kNr)
        for (int64_t i0 = 0; i0 < m; i0 += kMr)
          micro_kernel(kc, packed_a.data() + i0 * kc, packed_b.data() + js * kc, c + i0 * ldc + j0 + js, ldc,
                       std::min(kMr, m - i0), std::min(kNr, nc - js), acc);
    }
  }
}

void parallel_gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                       float* c, int64_t ldc, bool accumulate) {
  // Tiles of 64 x 256 outputs: each repacks its own slivers, which costs
  // about 1/64 of its multiply-adds.
  constexpr int64_t kTileM = 64, kTileN = 256;
  if (m * n * k <= 8 * kParallelGrain || (m <= kTileM && n <= kTileN)) {
    gemm_f32(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
    return;
  }
  const int64_t col_tiles = (n + kTileN - 1) / kTileN;
  parallel_for_each((m + kTileM - 1) / kTileM * col_tiles, [&](int64_t tile) {
    const int64_t i0 = tile / col_tiles * kTileM, j0 = tile % col_tiles * kTileN;
    gemm_f32(std::min(kTileM, m - i0), std::min(kTileN, n - j0), k, a + i0 * lda, lda, b + j0, ldb,
             c + i0 * ldc + j0, ldc, accumulate);
  });
}

namespace {

// numpy.matmul with broadcast batch dims; a 1-D A is one row, a 1-D B one
// column.
Status matmul_kernel(const KernelContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  if (a.dtype() != DType::kFloat32 || b.dtype() != DType::kFloat32 || a.shape().empty() || b.shape().empty())
    return invalid_argument("expects f32 inputs of rank >= 1, got A " + a.type().to_string() + " and B " +
                            b.type().to_string());
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  const int64_t m = as.size() >= 2 ? as[as.size() - 2] : 1;
  const int64_t k = as.back();
  const int64_t n = bs.size() >= 2 ? bs.back() : 1;
  const int64_t k_b = bs.size() >= 2 ? bs[bs.size() - 2] : bs[0];
  if (k != k_b)
    return invalid_argument("inner dimensions differ: A " + a.type().to_string() + ", B " + b.type().to_string());
  const Shape batch_a(as.begin(), as.end() - std::min<size_t>(as.size(), 2));
  const Shape batch_b(bs.begin(), bs.end() - std::min<size_t>(bs.size(), 2));
  HS_ASSIGN_OR_RETURN(const Shape batch, broadcast_shapes(batch_a, batch_b));
  Shape out_shape = batch;
  if (as.size() >= 2) out_shape.push_back(m);
  if (bs.size() >= 2) out_shape.push_back(n);
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kFloat32, out_shape}));

  // Strides in whole matrices, 0 along the batch dims an input broadcasts.
  const std::vector<int64_t> stride_a = broadcast_strides(batch_a, batch);
  const std::vector<int64_t> stride_b = broadcast_strides(batch_b, batch);
  const int64_t batches = shape_elements(batch);
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_for_each(batches, [&](int64_t i) {
    int64_t ia = 0, ib = 0, rest = i;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      ia += idx * stride_a[d];
      ib += idx * stride_b[d];
    }
    parallel_gemm_f32(m, n, k, pa + ia * m * k, k, pb + ib * k * n, n, py + i * m * n, n, false);
  });
  return Status::ok();
}

std::vector<float> transposed(const Tensor& t) {
  const int64_t rows = t.shape()[0], cols = t.shape()[1];
  const float* src = t.data<float>();
  std::vector<float> dst(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
  return dst;
}

// Y = alpha * op(A) . op(B) + beta * C, op() transposing when asked. The
// transposed operands are copied so one row-major GEMM serves every case.
Status gemm_kernel(const KernelContext& ctx) {
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  if (a.dtype() != DType::kFloat32 || b.dtype() != DType::kFloat32 || a.shape().size() != 2 || b.shape().size() != 2)
    return invalid_argument("expects 2-D f32 inputs, got A " + a.type().to_string() + " and B " + b.type().to_string());
  HS_ASSIGN_OR_RETURN(const int64_t trans_a, ctx.attrs().get_int("transA", 0));
  HS_ASSIGN_OR_RETURN(const int64_t trans_b, ctx.attrs().get_int("transB", 0));
  HS_ASSIGN_OR_RETURN(const float alpha, ctx.attrs().get_float("alpha", 1.f));
  HS_ASSIGN_OR_RETURN(const float beta, ctx.attrs().get_float("beta", 1.f));
  const int64_t m = trans_a ? a.shape()[1] : a.shape()[0];
  const int64_t k = trans_a ? a.shape()[0] : a.shape()[1];
  const int64_t n = trans_b ? b.shape()[0] : b.shape()[1];
  if ((trans_b ? b.shape()[1] : b.shape()[0]) != k)
    return invalid_argument("inner dimensions differ: A " + a.type().to_string() + ", B " + b.type().to_string());
  HS_RETURN_IF_ERROR(check_output(ctx, 0, TensorType{DType::kFloat32, {m, n}}));

  std::vector<float> a_t, b_t;
  if (trans_a) a_t = transposed(a);
  if (trans_b) b_t = transposed(b);
  const float* pa = trans_a ? a_t.data() : a.data<float>();
  const float* pb = trans_b ? b_t.data() : b.data<float>();
  float* py = ctx.out(0).data<float>();
  parallel_gemm_f32(m, n, k, pa, k, pb, n, py, n, false);

  const bool has_c = ctx.has_input(2);
  if (alpha == 1.f && !has_c) return Status::ok();
  const float* pc = has_c ? ctx.in(2).data<float>() : nullptr;
  // C broadcasts unidirectionally to (M, N): its strides are 0 along the dims it repeats.
  const std::vector<int64_t> sc = has_c ? broadcast_strides(ctx.in(2).shape(), {m, n}) : std::vector<int64_t>{0, 0};
  parallel_chunks(m, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float& y = py[i * n + j];
        y = alpha * y + (has_c ? beta * pc[i * sc[0] + j * sc[1]] : 0.f);
      }
  });
  return Status::ok();
}

}  // namespace

void register_matmul_kernels(KernelTable& table) {
  table["MatMul"] = with_node_context(matmul_kernel);
  table["Gemm"] = with_node_context(gemm_kernel);
}

}  // namespace hetsched::cpu
