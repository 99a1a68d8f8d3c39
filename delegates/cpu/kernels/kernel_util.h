// Helpers shared by the portable CPU kernels: error context, parallel loops,
// broadcast indexing, sliding-window geometry and a blocked f32 GEMM.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "delegates/cpu/kernel.h"
#include "delegates/cpu/thread_pool.h"

namespace hetsched::cpu {

// Kernels report plain reasons; this puts "node 'n' (Op): " in front and
// keeps the status code.
inline KernelFn with_node_context(KernelFn fn) {
  return [fn = std::move(fn)](const KernelContext& ctx) -> Status {
    Status s = fn(ctx);
    if (s.is_ok()) return s;
    return Status(s.code(), ctx.error(s.message()).message());
  };
}

// Checks that output i is allocated with the type the kernel computes.
inline Status check_output(const KernelContext& ctx, size_t i, const TensorType& expected) {
  if (i >= ctx.outputs.size() || ctx.outputs[i] == nullptr)
    return invalid_argument("output " + std::to_string(i) + " is not allocated");
  if (ctx.out(i).type() != expected)
    return invalid_argument("output " + std::to_string(i) + " is " + ctx.out(i).type().to_string() + ", expected " +
                            expected.to_string());
  return Status::ok();
}

// Below this many elements (or multiply-adds) a loop runs on the calling
// thread: handing work to the pool's workers costs on the order of a
// microsecond, which a few thousand float operations already take.
inline constexpr int64_t kParallelGrain = 1 << 14;
// Unary and equal-shape binary loops are memory bound; this many elements
// per chunk keeps the split's overhead small.
inline constexpr int64_t kElementwiseGrain = 1 << 15;

// A shape seen as (outer, len, inner) around one axis: the element at
// (o, k, i) is at (o * len + k) * inner + i.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};
inline AxisSplit split_at_axis(const Shape& shape, int64_t axis) {
  AxisSplit a;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t ad = static_cast<int64_t>(d);
    (ad < axis ? a.outer : ad == axis ? a.len : a.inner) *= shape[d];
  }
  return a;
}

// Softmax's view of a shape (and Hardmax's, LogSoftmax's): before opset 13
// the input is flattened to 2-D at `axis` and whole rows are normalised, so
// `len` spans every dim from `axis` on; from 13 it is the one dim `axis`.
inline AxisSplit split_for_softmax(const Shape& shape, int64_t axis, int opset) {
  if (opset >= 13) return split_at_axis(shape, axis);
  AxisSplit a;
  for (size_t d = 0; d < shape.size(); ++d) (static_cast<int64_t>(d) < axis ? a.outer : a.len) *= shape[d];
  return a;
}

// Runs fn(begin, end) over ranges covering [0, n), of whole chunks of
// `grain` items, split over the CPU delegate's thread pool when this thread
// runs an island (thread_pool.h's current_pool(); the island's `threads`)
// and there is more than one chunk; on this thread alone otherwise (the
// reference evaluator, the pool's own workers, a loop inside a loop).
template <typename Fn>
void parallel_chunks(int64_t n, int64_t grain, Fn&& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  ThreadPool* pool = current_pool();
  if (n <= grain || pool == nullptr || pool->threads() < 2) {
    fn(int64_t{0}, n);
    return;
  }
  const auto chunks = static_cast<size_t>((n + grain - 1) / grain);
  pool->parallelize(chunks, 0, JobSource::kPortable, [&](size_t begin, size_t end) {
    fn(static_cast<int64_t>(begin) * grain, std::min(n, static_cast<int64_t>(end) * grain));
  });
}

// Runs fn(i) for every i in [0, n), split as parallel_chunks does with a
// grain of one.
template <typename Fn>
void parallel_for_each(int64_t n, Fn&& fn) {
  parallel_chunks(n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) fn(i);
  });
}

// Row-major element strides of `shape` as read by an output of shape `out`
// that it broadcasts to: right-aligned, 0 where the input dim is 1 or absent.
inline std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1) strides[out.size() - shape.size() + i] = stride;
    stride *= shape[i];
  }
  return strides;
}

// Walks the output of a binary broadcast one innermost row at a time and
// calls row(out_offset, a_offset, a_step, b_offset, b_step, length), where
// element j of the row reads a[a_offset + j*a_step] and b[b_offset + j*b_step]
// (a step is 0 when that input is broadcast along the row). Rows run in
// parallel when the output is large; `row` must be safe to call concurrently.
template <typename RowFn>
void for_each_broadcast_row(const Shape& a, const Shape& b, const Shape& out, RowFn&& row) {
  const int64_t total = shape_elements(out);
  if (total == 0) return;
  const std::vector<int64_t> sa = broadcast_strides(a, out);
  const std::vector<int64_t> sb = broadcast_strides(b, out);
  const size_t rank = out.size();
  const int64_t length = rank == 0 ? 1 : out.back();
  const int64_t a_step = rank == 0 ? 0 : sa.back();
  const int64_t b_step = rank == 0 ? 0 : sb.back();
  const int64_t rows = total / length;
  parallel_chunks(rows, std::max<int64_t>(1, kParallelGrain / length), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t a_off = 0, b_off = 0, rest = r;
      // Every dim but the innermost; none for a scalar (rank 0).
      for (size_t d = rank == 0 ? 0 : rank - 1; d-- > 0;) {
        const int64_t idx = rest % out[d];
        rest /= out[d];
        a_off += idx * sa[d];
        b_off += idx * sb[d];
      }
      row(r * length, a_off, a_step, b_off, b_step, length);
    }
  });
}

// Sliding-window geometry of Conv and the pools, always 2-D: a 1-D op runs
// as height 1. Pads are resolved from auto_pad.
struct WindowGeometry {
  int64_t in_h = 1, in_w = 1;
  int64_t out_h = 1, out_w = 1;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

// Reads strides, dilations, pads and auto_pad for input `x` (N, C, spatial)
// and the window `kernel`, and checks that the output `y` has the spatial
// dims they give. The kernels re-derive the geometry from the attributes
// rather than trust shape inference, and this check ties the two together.
// Defined in conv.cc.
Result<WindowGeometry> window_geometry(const KernelContext& ctx, const Shape& x, const std::vector<int64_t>& kernel,
                                       const Shape& y, bool ceil_mode);

// The same geometry over any number of spatial dims (3-D convs and pools
// of video and volume models), one entry per dim; window_geometry is this
// for 1 or 2 dims, in the 2-D form the kernels index with.
struct WindowGeometryNd {
  std::vector<int64_t> in, out, kernel, stride, dilation, begin, end;
  size_t dims() const { return in.size(); }
};
Result<WindowGeometryNd> window_geometry_nd(const KernelContext& ctx, const Shape& x, const std::vector<int64_t>& kernel,
                                            const Shape& y, bool ceil_mode);
// A 1-D or 2-D one in the 2-D form (1-D: a height-1 image).
Result<WindowGeometry> window_geometry_2d(const WindowGeometryNd& g);

// C (m x n) = A (m x k) . B (k x n), all row-major with row strides lda,
// ldb, ldc; with `accumulate` C += A . B. Runs on the calling thread.
// Defined in matmul.cc.
void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc, bool accumulate);
// The same, split into tiles of C that run in parallel.
void parallel_gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                       float* c, int64_t ldc, bool accumulate);

// Registration of the files under kernels/ that register_nn_kernels gathers.
void register_conv_kernels(KernelTable& table);     // conv.cc: Conv
void register_pool_kernels(KernelTable& table);     // pool.cc: MaxPool, AveragePool, GlobalAveragePool
void register_matmul_kernels(KernelTable& table);   // matmul.cc: MatMul, Gemm
void register_reduce_kernels(KernelTable& table);   // reduce.cc: ReduceMean
void register_softmax_kernels(KernelTable& table);  // softmax.cc: Softmax
void register_norm_kernels(KernelTable& table);     // norm.cc: LayerNormalization, GroupNormalization

}  // namespace hetsched::cpu
