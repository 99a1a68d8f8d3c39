#include "delegates/cpu/fast/depthwise_nhwc.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "delegates/cpu/fast/conv_group.h"
#include "delegates/cpu/fast/rule_choice.h"
#include "delegates/cpu/fast/vector_math.h"
#include "delegates/cpu/xnnpack/op_params.h"
#include "graph/passes/fused_activation.h"

namespace hetsched::cpu::fast {

namespace {

// The weights' and bias's rows are padded to a multiple of this many
// channels (whole runs of 16 lanes).
constexpr int64_t kRun = 16;
// Filters up to this size (taps x Geometry's filter_channels x 4) run
// pixel by pixel, larger ones run by run of channels along the row
// (row_body).
constexpr int64_t kSmallFilterBytes = 16 * 1024;
// A task's share of one output row's input rows that stays in L1 (half of
// the Xeon's 48 KiB) beside the weights and the output, and the fewest
// runs of 16 channels a part of a row takes (DepthwiseNhwc::plan_tasks).
constexpr int64_t kSliceBytes = 24 * 1024;
constexpr int64_t kMinPartRuns = 4;

// ConvShape's cin is the channel count (cout equals it).
struct Geometry : ConvShape {
  int64_t padded = 0;  // channels rounded up to kRun: the weights' and bias's row length
  // Channels per group, in and out: 1 for a depthwise conv; 2 or 4 for a
  // grouped one (ResNeXt-50 32x4d's first stage), whose output
  // channel c reads input channels c - c % gw to c - c % gw + gw - 1.
  int64_t gw = 1;
  // The output columns [ox_in, ox_out) whose taps are all inside the
  // input, where tile() runs them; empty where it takes no such shape.
  int64_t ox_in = 0, ox_out = 0;
  // The channels whose filter a task's row_body weighs against
  // kSmallFilterBytes: all of them (padded), or a part's over a band of
  // rows (DepthwiseNhwc's plan).
  int64_t filter_channels = 0;
  // The fused Relu or Clip, in the stores (the other activations are a
  // pass over each finished row).
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
};

// v clamped to [g.lo, g.hi] (a NaN passes through).
HETSCHED_FAST_INLINE Lanes clamp_lanes(const Geometry& g, Lanes v) {
  const Lanes lo = Lanes{} + g.lo, hi = Lanes{} + g.hi;
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

// Sets g's tiled columns: kernel widths 3, 5 and 7, strides 1 and 2, no
// dilation along the row (tiled_row's cases in row_body).
void set_tiled_columns(Geometry& g) {
  const bool takes = g.gw == 1 && (g.kernel_w == 3 || g.kernel_w == 5 || g.kernel_w == 7) && (g.stride_w == 1 || g.stride_w == 2) &&
                     g.dilation_w == 1;
  if (!takes) return;
  // ox * s - pad_left >= 0, and ox * s - pad_left + kw - 1 < in_w.
  g.ox_in = std::min(g.out_w, (g.pad_left + g.stride_w - 1) / g.stride_w);
  const int64_t last = g.in_w - g.kernel_w + g.pad_left;
  g.ox_out = last < 0 ? g.ox_in : std::clamp(last / g.stride_w + 1, g.ox_in, g.out_w);
  // Fewer than 4 would be single columns, one chain of FMAs each: the
  // pixel-by-pixel order runs 4 channel runs side by side there (a 5x5 on
  // 7x7 has 3 such columns).
  if (g.ox_out - g.ox_in < 4) g.ox_out = g.ox_in;
}

// The taps [first, last) of a window starting at `origin` (stride and pad
// applied) with `count` taps `dilation` apart that land in [0, size).
HETSCHED_FAST_INLINE void inside(int64_t origin, int64_t count, int64_t dilation, int64_t size, int64_t& first,
                                 int64_t& last) {
  first = origin >= 0 ? 0 : (-origin + dilation - 1) / dilation;
  const int64_t end = size - origin;  // taps with origin + t * dilation < size
  last = end <= 0 ? 0 : std::min(count, (end + dilation - 1) / dilation);
  first = std::min(first, last);
}

// Lane l of a run of 16 channels (which starts at a multiple of GW) takes
// input channel l - l % GW + I of its group: a shuffle within the run
// (within 128-bit lanes, one vpermilps).
using LaneIndex = int __attribute__((vector_size(64)));

template <int GW, int I>
constexpr LaneIndex group_lane() {
  LaneIndex m{};
  for (int l = 0; l < 16; ++l) m[l] = l - l % GW + I;
  return m;
}

// acc[v][i % 2] += w[i][v] * (input i of each lane's group in in[v]) for
// the group's inputs i from I on: `w` holds GW rows of V x 16 lanes,
// `padded` apart (a depthwise conv, GW 1: acc[v][0] += w[v] * in[v]). Two
// sums per run of 16 channels for a group, so that consecutive inputs do
// not wait on each other's FMA (one sum ran ResNeXt-50's 4-wide groups at
// 0.68 ms a conv, two at 0.54).
template <int GW, int V, int I = 0>
HETSCHED_FAST_INLINE void group_step(Lanes (&acc)[V][2], const float* w, int64_t padded, const Lanes (&in)[V]) {
  if constexpr (GW == 1) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[v][0] += load_lanes(w + v * kLanes) * in[v];
  } else if constexpr (I < GW) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      acc[v][I & 1] += load_lanes(w + I * padded + v * kLanes) * __builtin_shuffle(in[v], group_lane<GW, I>());
    group_step<GW, V, I + 1>(acc, w, padded, in);
  }
}

// out[c] = bias[c] + sum over `rows` x `cols` taps of w[tap][c] *
// x[tap][c] (a grouped conv: sum over the group's inputs i too, w[tap][i][c]
// times x[tap][c - c % GW + i]) for the V * 16 channels from c, the sums in
// V registers of 16 lanes (GCC's generic vectors: one AVX-512 register,
// two AVX2 ones), two each for a group; `x` and `w` point at the first tap
// inside the input, channel c.
template <int V, int GW>
HETSCHED_FAST_INLINE void channels(const Geometry& g, const float* x, const float* w, const float* bias, int64_t rows,
                                   int64_t cols, float* out) {
  Lanes acc[V][2];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    acc[v][0] = load_lanes(bias + v * kLanes);
    acc[v][1] = Lanes{};
  }
  for (int64_t ky = 0; ky < rows; ++ky)
    for (int64_t kx = 0; kx < cols; ++kx) {
      const float* xt = x + (ky * g.dilation_h * g.in_w + kx * g.dilation_w) * g.cin;
      Lanes in[V];
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) in[v] = load_lanes(xt + v * kLanes);
      group_step<GW, V>(acc, w + (ky * g.kernel_w + kx) * GW * g.padded, g.padded, in);
    }
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    Lanes sum = acc[v][0];
    if constexpr (GW > 1) sum += acc[v][1];
    sum = clamp_lanes(g, sum);
    __builtin_memcpy(out + v * kLanes, &sum, sizeof(Lanes));
  }
}

// The taps of one output row inside the input, and where they start.
struct RowTaps {
  const float* image;     // the image's first element
  const int64_t* kx_range;  // per output column: its first and last + 1 column tap inside
  int64_t ky0, ky1;       // the row taps inside
  int64_t iy0;            // the window's first input row (tap 0, maybe in the padding)
  // The channels [c0, c1) this task computes: a whole row's, or with many
  // threads and few rows a part of them (at least 16, or all).
  int64_t c0, c1;
};

// P adjacent output columns, stride S, x 16 channels, where all KW column
// taps of every column are inside the input (dilation 1 along the row):
// per tap row, the KW weights are loaded once into registers and each of
// the (P - 1) S + KW input columns once, feeding every (column, tap) it
// meets: 0.6 loads per FMA at P 8 and 3x3, against 2 pixel by pixel (a
// weight and an input per FMA; ONNX Runtime's NCHWc kernel ran
// EfficientNet-B0's and MnasNet's depthwise convs 1.5-1.8x faster than that
// order, here and in XNNPACK). With kPin (AVX-512) each input stays in a
// register (pin_lanes): folded into every FMA that uses it, the loads held
// a 3x3 at 64 channels to 105 GFLOP/s, against 131 pinned, warm in L1 (a
// standalone copy of this loop, not in the repo; in the model, `hetsched
// bench M --profile-ops` gives each conv's time).
// `x` points at column 0's first tap (row ky0), `w` at tap (ky0, 0), both
// at the run's first channel.
template <bool kPin, int P, int KW, int S>
HETSCHED_FAST_INLINE void tile(const Geometry& g, const float* x, const float* w, const float* bias, int64_t rows,
                               float* out) {
  constexpr int kCols = (P - 1) * S + KW;
  Lanes acc[P];
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) acc[p] = load_lanes(bias);
  const int64_t x_row = g.dilation_h * g.in_w * g.cin, w_row = g.kernel_w * g.padded;
  for (int64_t ky = 0; ky < rows; ++ky, x += x_row, w += w_row) {
    Lanes wk[KW];
#pragma GCC unroll 16
    for (int kx = 0; kx < KW; ++kx) wk[kx] = load_lanes(w + kx * g.padded);
    const float* column = x;
#pragma GCC unroll 32
    for (int j = 0; j < kCols; ++j, column += g.cin) {
      // One pointer stepped column by column (the empty asm keeps it one):
      // GCC otherwise keeps each column's offset j cin apart, more than
      // there are general registers, and reloads them from the stack.
      asm("" : "+r"(column));
      Lanes in = load_lanes(column);
      pin_lanes<kPin>(in);
#pragma GCC unroll 16
      for (int p = 0; p < P; ++p) {
        const int kx = j - p * S;
        if (kx >= 0 && kx < KW) acc[p] += wk[kx] * in;
      }
    }
  }
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) {
    acc[p] = clamp_lanes(g, acc[p]);
    __builtin_memcpy(out + p * g.cin, &acc[p], sizeof(Lanes));
  }
}

// tile() for two output rows at once, stride 1 down the rows and every
// tap row inside for both: the KH + 1 input rows are each read once for
// both rows (row r feeds the first row's tap row r and the second's r - 1),
// where two tile() calls read the KH shared ones twice, from L2 once a row
// of input rows outgrows L1 (72 channels at 56 wide: 16 KB a row). 2P
// sums and two rows of KW weights: 16 + 14 registers at P 8 and 7x7, so
// only with AVX-512's 32 (kPin). On the 2-core Xeon (`bench/cpu_ab.sh
// --threads "1 2" --rounds 5 default HETSCHED_DEPTHWISE_PAIRS=off`):
// MnasNet 5.69 -> 5.53 ms at 1 thread and 3.35 -> 3.25 at 2, MobileNetV2
// 5.44 -> 5.31 and 3.29 -> 3.20, EfficientNet-B0 9.89 -> 9.59 and 5.63 ->
// 5.51; PP-OCRv4 det and ShuffleNetV2 unchanged. `x` points at the first
// row's first tap, `out0` and `out1` at the rows' first tile, channel c.
template <int P, int KW, int S>
HETSCHED_FAST_INLINE void tile2(const Geometry& g, const float* x, const float* w, const float* bias, float* out0,
                                float* out1) {
  constexpr int kCols = (P - 1) * S + KW;
  Lanes acc0[P], acc1[P];
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) acc0[p] = acc1[p] = load_lanes(bias);
  const int64_t x_row = g.in_w * g.cin, w_row = g.kernel_w * g.padded;
  // A square KW x KW filter: input row r is tap row r of the first output
  // row (r < KW) and r - 1 of the second (r > 0); unrolled, so that each
  // test is a constant.
#pragma GCC unroll 8
  for (int r = 0; r <= KW; ++r) {
    Lanes w0[KW], w1[KW];
#pragma GCC unroll 16
    for (int kx = 0; kx < KW; ++kx) {
      if (r < KW) w0[kx] = load_lanes(w + r * w_row + kx * g.padded);
      if (r > 0) w1[kx] = load_lanes(w + (r - 1) * w_row + kx * g.padded);
    }
    const float* column = x + r * x_row;
#pragma GCC unroll 32
    for (int j = 0; j < kCols; ++j, column += g.cin) {
      asm("" : "+r"(column));  // one pointer stepped column by column, as in tile()
      Lanes in = load_lanes(column);
      pin_lanes<true>(in);
#pragma GCC unroll 16
      for (int p = 0; p < P; ++p) {
        const int kx = j - p * S;
        if (kx < 0 || kx >= KW) continue;
        if (r < KW) acc0[p] += w0[kx] * in;
        if (r > 0) acc1[p] += w1[kx] * in;
      }
    }
  }
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) {
    acc0[p] = clamp_lanes(g, acc0[p]);
    acc1[p] = clamp_lanes(g, acc1[p]);
    __builtin_memcpy(out0 + p * g.cin, &acc0[p], sizeof(Lanes));
    __builtin_memcpy(out1 + p * g.cin, &acc1[p], sizeof(Lanes));
  }
}

// Channels [c, c + V * 16) of output columns [ox_first, ox_last).
// (Plain always-inline functions, not lambdas: a lambda's body is not
// compiled for the ISA of the function it sits in, Clones<> below.)
template <int V, int GW>
HETSCHED_FAST_INLINE void columns(const Geometry& g, const RowTaps& t, const float* w, const float* bias, int64_t c,
                                  int64_t ox_first, int64_t ox_last, float* out) {
  for (int64_t ox = ox_first; ox < ox_last; ++ox) {
    const int64_t kx0 = t.kx_range[2 * ox], kx1 = t.kx_range[2 * ox + 1];
    const int64_t ix = ox * g.stride_w - g.pad_left + kx0 * g.dilation_w;
    const float* x = t.image + ((t.iy0 + t.ky0 * g.dilation_h) * g.in_w + ix) * g.cin + c;
    channels<V, GW>(g, x, w + (t.ky0 * g.kernel_w + kx0) * GW * g.padded + c, bias + c, t.ky1 - t.ky0, kx1 - kx0,
                    out + ox * g.cin + c);
  }
}

// Channels [c, c1), fewer than 16, one at a time over columns
// [ox_first, ox_last).
HETSCHED_FAST_INLINE void leftover(const Geometry& g, const RowTaps& t, const float* w, const float* bias, int64_t c,
                                   int64_t ox_first, int64_t ox_last, float* out) {
  for (; c < t.c1; ++c)
    for (int64_t ox = ox_first; ox < ox_last; ++ox) {
      const int64_t kx0 = t.kx_range[2 * ox], kx1 = t.kx_range[2 * ox + 1];
      const int64_t ix = ox * g.stride_w - g.pad_left + kx0 * g.dilation_w;
      // The group's first input channel, and this output's weights.
      const float* x = t.image + ((t.iy0 + t.ky0 * g.dilation_h) * g.in_w + ix) * g.cin + c - c % g.gw;
      const float* wt = w + (t.ky0 * g.kernel_w + kx0) * g.gw * g.padded + c;
      float acc = bias[c];
      for (int64_t ky = 0; ky < t.ky1 - t.ky0; ++ky)
        for (int64_t kx = 0; kx < kx1 - kx0; ++kx)
          for (int64_t i = 0; i < g.gw; ++i)
            acc += wt[((ky * g.kernel_w + kx) * g.gw + i) * g.padded] *
                   x[(ky * g.dilation_h * g.in_w + kx * g.dilation_w) * g.cin + i];
      out[ox * g.cin + c] = acc < g.lo ? g.lo : acc > g.hi ? g.hi : acc;
    }
}

// The runs of 64, 32 and 16 of the task's channels [c0, c1) over columns
// [ox_first, ox_last), run by run, then the channels left one at a time.
// (A grouped conv's runs all start at multiples of its group width: the
// channels are, and so are 16 and the task's c0.)
template <int GW>
HETSCHED_FAST_INLINE void runs(const Geometry& g, const RowTaps& t, const float* w, const float* bias,
                               int64_t ox_first, int64_t ox_last, float* out) {
  int64_t c = t.c0;
  for (; c + 4 * kLanes <= t.c1; c += 4 * kLanes) columns<4, GW>(g, t, w, bias, c, ox_first, ox_last, out);
  if (c + 2 * kLanes <= t.c1) {
    columns<2, GW>(g, t, w, bias, c, ox_first, ox_last, out);
    c += 2 * kLanes;
  }
  for (; c < t.c1 && t.c1 - t.c0 >= kLanes; c += kLanes) {  // overlapping where fewer are left, as tiled_row does
    c = std::min(c, t.c1 - kLanes);
    columns<1, GW>(g, t, w, bias, c, ox_first, ox_last, out);
  }
  leftover(g, t, w, bias, c, ox_first, ox_last, out);
}

// P output columns from `ox`, all inside (see tile), channels [c, c + 16).
template <bool kPin, int P, int KW, int S>
HETSCHED_FAST_INLINE void tile_at(const Geometry& g, const RowTaps& t, const float* w, const float* bias, int64_t ox,
                                  int64_t c, float* out) {
  const float* x = t.image + (t.iy0 + t.ky0 * g.dilation_h) * g.in_w * g.cin + (ox * S - g.pad_left) * g.cin + c;
  tile<kPin, P, KW, S>(g, x, w + t.ky0 * g.kernel_w * g.padded + c, bias + c, t.ky1 - t.ky0, out + ox * g.cin + c);
}

// Columns [first, last), all inside, channels [c, c + 16): P at a time,
// the last tile moved back to end at `last` (overlapping the one before
// it, as the channel runs do) where there are P or more, else 4 at a time
// the same way, else one at a time (a single column's sums are one chain
// of dependent FMAs: 56 columns as 6 tiles of 8 and 6 single ones spent a
// third of their time on the single ones).
template <bool kPin, int P, int KW, int S>
HETSCHED_FAST_INLINE void run_columns(const Geometry& g, const RowTaps& t, const float* w, const float* bias, int64_t c,
                                      int64_t first, int64_t last, float* out) {
  constexpr int Q = P > 4 ? 4 : 1;
  if (last - first >= P) {
    for (int64_t ox = first; ox < last; ox += P) tile_at<kPin, P, KW, S>(g, t, w, bias, std::min(ox, last - P), c, out);
  } else if (last - first >= Q) {
    for (int64_t ox = first; ox < last; ox += Q) tile_at<kPin, Q, KW, S>(g, t, w, bias, std::min(ox, last - Q), c, out);
  } else {
    for (int64_t ox = first; ox < last; ++ox) tile_at<kPin, 1, KW, S>(g, t, w, bias, ox, c, out);
  }
}

// A row whose interior columns [ox_in, ox_out) run as tiles of 8 by runs
// of 16 channels, the last run overlapping the one before it where fewer
// are left (72 channels: 0-15, ..., 48-63, 56-71; the overlap's sums come
// out the same both times, and 8 channels one at a time took as long as
// the 64 before them); the edge columns, and channel counts below 16, as
// runs() does them. Small filters go tile by tile (a tile's input columns
// are read while in L1), large ones run by run along the row (the run's
// weights stay in L1), as row_body says.
template <bool kPin, int KW, int S>
HETSCHED_FAST_INLINE void tiled_row(const Geometry& g, const RowTaps& t, const float* w, const float* bias, bool small,
                                    float* out) {
  constexpr int P = 8;
  if (t.c1 - t.c0 < kLanes) return runs<1>(g, t, w, bias, 0, g.out_w, out);
  runs<1>(g, t, w, bias, 0, g.ox_in, out);
  if (small) {
    for (int64_t ox = g.ox_in; ox < g.ox_out; ox += P) {
      // Tiles of P, the last one moved back as run_columns does.
      const int64_t first = g.ox_out - g.ox_in >= P ? std::min(ox, g.ox_out - P) : ox;
      const int64_t last = std::min(first + P, g.ox_out);
      for (int64_t c = t.c0; c < t.c1; c += kLanes)
        run_columns<kPin, P, KW, S>(g, t, w, bias, std::min(c, t.c1 - kLanes), first, last, out);
    }
  } else {
    for (int64_t c = t.c0; c < t.c1; c += kLanes)
      run_columns<kPin, P, KW, S>(g, t, w, bias, std::min(c, t.c1 - kLanes), g.ox_in, g.ox_out, out);
  }
  runs<1>(g, t, w, bias, g.ox_out, g.out_w, out);
}

// One output row `oy` of image `image`: out[ox][c] = bias[c] + sum over
// the taps inside of w[tap][c] * in[iy][ix][c]. Small filters (3x3 x 96
// channels: 3.5 KB) stay in L1 whatever the order, so each pixel takes all
// its channels while its window is in L1 (a stride-2 row's window is 3
// input rows, more than L1); large ones (5x5 x 672: 67 KB) go run by run
// along the row, so that one run's weights stay in L1 (pixel by pixel
// they streamed from L2 at every pixel: 2x slower on EfficientNet-B0's
// 14x14 5x5s).
template <bool kPin, int GW>
HETSCHED_FAST_INLINE void row_body(const Geometry* gp, const int64_t* kx_range, const float* image, const float* w,
                                   const float* bias, int64_t oy, int64_t c0, int64_t c1, float* out) {
  const Geometry& g = *gp;
  RowTaps t{image, kx_range, 0, 0, oy * g.stride_h - g.pad_top, c0, c1};
  inside(t.iy0, g.kernel_h, g.dilation_h, g.in_h, t.ky0, t.ky1);
  const bool small =
      g.kernel_h * g.kernel_w * GW * g.filter_channels * static_cast<int64_t>(sizeof(float)) <= kSmallFilterBytes;
  if (GW == 1 && g.ox_in < g.ox_out) {
    switch (g.kernel_w * 4 + g.stride_w) {  // the shapes set_tiled_columns takes
      case 3 * 4 + 1: return tiled_row<kPin, 3, 1>(g, t, w, bias, small, out);
      case 3 * 4 + 2: return tiled_row<kPin, 3, 2>(g, t, w, bias, small, out);
      case 5 * 4 + 1: return tiled_row<kPin, 5, 1>(g, t, w, bias, small, out);
      case 5 * 4 + 2: return tiled_row<kPin, 5, 2>(g, t, w, bias, small, out);
      case 7 * 4 + 1: return tiled_row<kPin, 7, 1>(g, t, w, bias, small, out);
      case 7 * 4 + 2: return tiled_row<kPin, 7, 2>(g, t, w, bias, small, out);
      default: break;
    }
  }
  if (small) {
    for (int64_t ox = 0; ox < g.out_w; ++ox) runs<GW>(g, t, w, bias, ox, ox + 1, out);
  } else {
    runs<GW>(g, t, w, bias, 0, g.out_w, out);
  }
}

using RowBody = void (*)(const Geometry*, const int64_t*, const float*, const float*, const float*, int64_t, int64_t,
                         int64_t, float*);

// Output rows oy and oy + 1 (`out0`, `out1`) where pairs_of_rows() holds
// and both rows' taps are all inside the input: the inside columns by
// tile2(), the edge columns row by row as runs() does them.
template <int KW>
HETSCHED_FAST_INLINE void tiled_row_pair(const Geometry& g, const RowTaps& t0, const RowTaps& t1, const float* w,
                                         const float* bias, float* out0, float* out1) {
  constexpr int P = 8;
  runs<1>(g, t0, w, bias, 0, g.ox_in, out0);
  runs<1>(g, t1, w, bias, 0, g.ox_in, out1);
  const float* top = t0.image + t0.iy0 * g.in_w * g.cin;
  for (int64_t ox = g.ox_in; ox < g.ox_out; ox += P) {
    const int64_t first = std::min(ox, g.ox_out - P);  // the last tile moved back, as tiled_row does
    for (int64_t c = t0.c0; c < t0.c1; c += kLanes) {
      const int64_t cc = std::min(c, t0.c1 - kLanes);
      tile2<P, KW, 1>(g, top + (first - g.pad_left) * g.cin + cc, w + cc, bias + cc, out0 + first * g.cin + cc,
                      out1 + first * g.cin + cc);
    }
  }
  runs<1>(g, t0, w, bias, g.ox_out, g.out_w, out0);
  runs<1>(g, t1, w, bias, g.ox_out, g.out_w, out1);
}

// Whether g's rows may go two at a time (tiled_row_pair): a square 3x3,
// 5x5 or 7x7 depthwise filter at stride 1 without dilation, small enough
// for the tile-by-tile order, a run of 16 channels or more, and a tile of
// inside columns or more; on AVX-512 only (tile2's registers).
// HETSCHED_DEPTHWISE_PAIRS=off: row by row (A/B runs).
bool pairs_of_rows(const Geometry& g) {
  static const bool off = rule_choice("HETSCHED_DEPTHWISE_PAIRS") == RuleChoice::kOff;
  return !off && cpu_has_avx512f() && g.gw == 1 && g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 &&
         g.dilation_w == 1 && g.kernel_h == g.kernel_w && (g.kernel_w == 3 || g.kernel_w == 5 || g.kernel_w == 7) &&
         g.cin >= kLanes && g.ox_out - g.ox_in >= 8 &&
         g.kernel_h * g.kernel_w * g.filter_channels * static_cast<int64_t>(sizeof(float)) <= kSmallFilterBytes;
}

// Rows oy and oy + 1 of `image` by tiled_row_pair (whose preconditions the
// caller checked: pairs_of_rows, and both rows' taps inside).
template <int KW>
HETSCHED_FAST_INLINE void row_pair_body(const Geometry* gp, const int64_t* kx_range, const float* image, const float* w, const float* bias,
                   int64_t oy, int64_t c0, int64_t c1, float* out0, float* out1) {
  const Geometry& g = *gp;
  const RowTaps t0{image, kx_range, 0, g.kernel_h, oy - g.pad_top, c0, c1};
  const RowTaps t1{image, kx_range, 0, g.kernel_h, oy + 1 - g.pad_top, c0, c1};
  tiled_row_pair<KW>(g, t0, t1, w, bias, out0, out1);
}
using RowPairBody = void (*)(const Geometry*, const int64_t*, const float*, const float*, const float*, int64_t,
                             int64_t, int64_t, float*, float*);

// The pair body for g (pairs_of_rows), AVX-512 built.
RowPairBody row_pair_body_for(const Geometry& g) {
  switch (g.kernel_w) {
    case 3: return Clones<row_pair_body<3>>::avx512;
    case 5: return Clones<row_pair_body<5>>::avx512;
    default: return Clones<row_pair_body<7>>::avx512;
  }
}

// sums[c] = the sum over the row's `pixels` of channels [c0, c1) (`cin`
// apart), for a squeeze's means.
HETSCHED_FAST_INLINE void sum_row(const float* row, int64_t pixels, int64_t cin, int64_t c0, int64_t c1, float* sums) {
  int64_t c = c0;
  for (; c + kLanes <= c1; c += kLanes) {
    Lanes acc{};
    for (int64_t p = 0; p < pixels; ++p) acc += load_lanes(row + p * cin + c);
    __builtin_memcpy(sums + c, &acc, sizeof(Lanes));
  }
  for (; c < c1; ++c) {
    float acc = 0.f;
    for (int64_t p = 0; p < pixels; ++p) acc += row[p * cin + c];
    sums[c] = acc;
  }
}
using SumRow = void (*)(const float*, int64_t, int64_t, int64_t, int64_t, float*);

// The body for g's group width, for this CPU.
RowBody row_body_for(const Geometry& g) {
  switch (g.gw) {
    case 2: return Clones<row_body<false, 2>, row_body<true, 2>>::best();
    case 4: return Clones<row_body<false, 4>, row_body<true, 4>>::best();
    default: return Clones<row_body<false, 1>, row_body<true, 1>>::best();
  }
}

class DepthwiseNhwc final : public FastOp {
 public:
  DepthwiseNhwc(const Tensor& x, Tensor& y, Tensor* mean, const Geometry& g, std::vector<float> w,
                std::vector<float> bias, ActivationPass post, TaskPool* pool)
      : FastOp(y), x_(x), g_(g), w_(std::move(w)), bias_(std::move(bias)), post_(post), pool_(pool),
        body_(row_body_for(g_)), mean_(mean), sum_row_(Clones<sum_row, sum_row>::best()) {
    if (mean_) row_sums_.resize(static_cast<size_t>(g_.batch * g_.out_h * g_.cin));
    // Each output column's taps inside the input, worked out once: a
    // division per pixel cost as much as a small conv's sums.
    kx_range_.resize(static_cast<size_t>(2 * g_.out_w));
    for (int64_t ox = 0; ox < g_.out_w; ++ox)
      inside(ox * g_.stride_w - g_.pad_left, g_.kernel_w, g_.dilation_w, g_.in_w, kx_range_[2 * ox], kx_range_[2 * ox + 1]);
    plan_tasks();
  }

  // How run() splits the rows and channels into tasks: parts_ parts of
  // part_runs_ runs of 16 channels (the last part also takes the channels
  // past the last whole run), over bands of band_ rows.
  void plan_tasks() {
    const int64_t rows = g_.batch * g_.out_h;
    // Each row in parts of whole runs of 16 channels where the rows are
    // fewer than 4 tasks a thread (a 7x7 or 14x14 map on 16 threads: by
    // rows alone, MobileNetV3-Small and ShuffleNetV2 ran 10-25% slower
    // than on XNNPACK's kernel there).
    // Parts of whole runs, the last one also taking the channels past the
    // last whole run: each part has 16 channels or more, and the runs
    // never overlap across parts (two tasks would write the same bytes).
    const int64_t threads = pool_ ? pool_->threads() : 1;
    const int64_t whole = g_.cin / kLanes;
    int64_t parts = std::clamp<int64_t>((4 * threads + rows - 1) / rows, 1, std::max<int64_t>(1, whole));
    // Where one output row's input rows (kernel_h x in_w x C floats)
    // outgrow L1, a task takes a part of the channels whose input rows fit
    // (kSliceBytes), over a band of output rows, so that each input row
    // stays in L1 for the kernel_h output rows that read it (MnasNet's 3x3s
    // at 14x14 x 480-576 channels: 0.058 -> 0.044 ms on one thread of the
    // 2-core Xeon, its 17 depthwise convs 1.25 -> 1.17 ms). Parts of fewer
    // than kMinPartRuns runs lost (a 32-channel 112x112 map in parts of 16
    // channels ran 2x slower: half of each pixel's lines read by the other
    // part), so those keep whole rows.
    const int64_t slice = g_.kernel_h * g_.in_w * g_.cin * static_cast<int64_t>(sizeof(float));
    const int64_t runs_fit = kSliceBytes / (g_.kernel_h * g_.in_w * kLanes * static_cast<int64_t>(sizeof(float)));
    // Only such a task weighs its part's filter alone against
    // kSmallFilterBytes; the parts made for the threads keep the order they
    // had (this was measured at 1 and 2 threads only).
    const bool bands = slice > kSliceBytes && runs_fit >= kMinPartRuns;
    band_ = 1;
    if (bands) {
      parts = std::max(parts, (std::max<int64_t>(1, whole) + runs_fit - 1) / runs_fit);
      band_ = threads == 1 ? rows : std::max<int64_t>(1, rows * parts / (4 * threads));
    }
    part_runs_ = (std::max<int64_t>(1, whole) + parts - 1) / parts;
    parts_ = (std::max<int64_t>(1, whole) + part_runs_ - 1) / part_runs_;
    // The last part's filter: its runs and the channels past them.
    g_.filter_channels = bands ? std::min(g_.padded, (part_runs_ + 1) * kLanes) : g_.padded;
    // Rows two at a time (tiled_row_pair) where the tasks, two rows or
    // more each, still number 4 a thread.
    if (pairs_of_rows(g_) && (rows / 2) * parts_ >= (threads > 1 ? 4 * threads : 1)) {
      pair_body_ = row_pair_body_for(g_);
      band_ = std::max<int64_t>(band_, 2);
    }
  }

  Status run() override {
    const RowBody body = body_;
    const int64_t rows = g_.batch * g_.out_h, row_floats = g_.out_w * g_.cin;
    const double work = 2.0 * static_cast<double>(rows * row_floats * g_.kernel_h * g_.kernel_w);
    const float* x = x_.data<float>();
    float* y = out();
    const int64_t parts = parts_, part_runs = part_runs_, band = band_;
    parallel_tasks(pool_, static_cast<size_t>((rows + band - 1) / band * parts), work, [&](size_t task) {
      const int64_t b = static_cast<int64_t>(task) / parts, part = static_cast<int64_t>(task) % parts;
      const int64_t c0 = part * part_runs * kLanes, c1 = part + 1 == parts ? g_.cin : c0 + part_runs * kLanes;
      // The activation that is not a clamp and the squeeze's sums, over a
      // finished row.
      const auto finish = [&](int64_t r, float* row) {
        if (!post_.empty()) {
          if (c0 == 0 && c1 == g_.cin) {
            post_.run(row, row_floats);
          } else {
            for (int64_t ox = 0; ox < g_.out_w; ++ox) post_.run(row + ox * g_.cin + c0, c1 - c0);
          }
        }
        if (mean_) sum_row_(row, g_.out_w, g_.cin, c0, c1, row_sums_.data() + r * g_.cin);
      };
      const int64_t end = std::min(rows, (b + 1) * band);
      for (int64_t r = b * band; r < end; ++r) {
        const int64_t image = r / g_.out_h, oy = r % g_.out_h;
        const float* in = x + image * g_.in_h * g_.in_w * g_.cin;
        float* row = y + r * row_floats;
        if (pair_body_ && r + 1 < end && oy + 1 < g_.out_h && both_rows_inside(oy)) {
          pair_body_(&g_, kx_range_.data(), in, w_.data(), bias_.data(), oy, c0, c1, row, row + row_floats);
          finish(r, row);
          finish(r + 1, row + row_floats);
          ++r;
          continue;
        }
        body(&g_, kx_range_.data(), in, w_.data(), bias_.data(), oy, c0, c1, row);
        finish(r, row);
      }
    });
    if (mean_) write_means();
    return Status::ok();
  }

 private:
  // Whether output rows oy and oy + 1 read only rows inside the input (at
  // stride 1: rows oy - pad_top to oy + kernel_h - pad_top).
  bool both_rows_inside(int64_t oy) const {
    return oy - g_.pad_top >= 0 && oy + g_.kernel_h - g_.pad_top <= g_.in_h - 1;
  }

  // mean_[n][c] from the rows' sums (each row's written by the task that
  // computed the row).
  void write_means() {
    float* m = mean_->data<float>();
    const float scale = 1.f / static_cast<float>(g_.out_h * g_.out_w);
    for (int64_t n = 0; n < g_.batch; ++n) {
      float* mn = m + n * g_.cin;
      std::fill(mn, mn + g_.cin, 0.f);
      for (int64_t oy = 0; oy < g_.out_h; ++oy) {
        const float* s = row_sums_.data() + (n * g_.out_h + oy) * g_.cin;
        for (int64_t c = 0; c < g_.cin; ++c) mn[c] += s[c];
      }
      for (int64_t c = 0; c < g_.cin; ++c) mn[c] *= scale;
    }
  }

  const Tensor& x_;
  Geometry g_;
  std::vector<float> w_;     // [kh * kw][gw][padded]
  std::vector<float> bias_;  // [padded]
  std::vector<int64_t> kx_range_;  // [out_w][2]: the first and last + 1 column tap inside the input
  ActivationPass post_;
  TaskPool* pool_;
  RowBody body_;
  int64_t parts_ = 1, part_runs_ = 1, band_ = 1;  // plan_tasks()
  RowPairBody pair_body_ = nullptr;               // plan_tasks(): rows two at a time, where they may go so
  Tensor* mean_;                 // the squeeze's [N, C, 1, 1] means, or nullptr
  SumRow sum_row_;
  std::vector<float> row_sums_;  // with mean_: [N * H_out][C], each output row's channel sums
};

}  // namespace

namespace {

// `node`'s parameters when this kernel runs it, and its group width.
Result<std::pair<xnnpack::ConvParams, int64_t>> read_depthwise(const Graph& graph, const Node& node) {
  HS_ASSIGN_OR_RETURN(const xnnpack::ConvParams p, read_fast_conv(graph, node));
  if (p.depthwise && p.out_channels == p.in_channels) return std::pair{p, int64_t{1}};
  const int64_t gw = p.groups > 1 ? p.in_channels / p.groups : 0;
  // 8 channels a group ran ResNeXt-50's second stage at 0.87 ms a conv
  // against XNNPACK's 0.54 (1 thread, 2-core Xeon): vpermps across the
  // 128-bit lanes, and 73 KB of weights a pixel; left to XNNPACK.
  if (p.groups > 1 && p.out_channels == p.in_channels && (gw == 2 || gw == 4)) return std::pair{p, gw};
  return unsupported("not a depthwise conv of one output per channel, nor a grouped one of 2 or 4 channels a "
                     "group in and out");
}

}  // namespace

Status depthwise_nhwc_supported(const Graph& graph, const Node& node) { return read_depthwise(graph, node).status(); }

int64_t nhwc_group_width(const Graph& graph, const Node& node) {
  const auto r = read_depthwise(graph, node);
  return r.is_ok() ? r->second : 0;
}

Result<std::unique_ptr<FastOp>> make_depthwise_nhwc(const FastOpContext& ctx, ValueId output, ActivationPass post,
                                                    ValueId mean) {
  HS_ASSIGN_OR_RETURN(const auto read, read_depthwise(ctx.graph, ctx.node));
  const xnnpack::ConvParams& p = read.first;
  HS_ASSIGN_OR_RETURN(const FusedActivation fused, read_fused_activation(ctx.node.attrs));
  // Relu and Clip in the stores, sparing a pass over each finished row
  // (alone no change measured: the row is still in L1); the others as that
  // pass.
  HS_ASSIGN_OR_RETURN(const SplitActivation activation, split_activation(fused, post, true, "depthwise conv"));
  const Tensor& x = ctx.input(0);
  Geometry g;
  static_cast<ConvShape&>(g) = conv_shape(ctx.graph, ctx.node, p);
  g.padded = (g.cin + kRun - 1) / kRun * kRun;
  g.gw = read.second;
  set_tiled_columns(g);
  g.lo = activation.lo;
  g.hi = activation.hi;
  // ONNX's [C, gw, kh, kw] to [tap][i][channel], zeros past C.
  const float* filter = ctx.input(1).data<float>();
  const int64_t taps = g.kernel_h * g.kernel_w;
  std::vector<float> w(static_cast<size_t>(taps * g.gw * g.padded), 0.f);
  for (int64_t c = 0; c < g.cin; ++c)
    for (int64_t i = 0; i < g.gw; ++i)
      for (int64_t t = 0; t < taps; ++t)
        w[static_cast<size_t>((t * g.gw + i) * g.padded + c)] = filter[(c * g.gw + i) * taps + t];
  std::vector<float> bias(static_cast<size_t>(g.padded), 0.f);
  if (ctx.node.inputs.size() > 2 && ctx.node.inputs[2] != kNoValue)
    std::copy_n(ctx.input(2).data<float>(), g.cin, bias.begin());
  return std::unique_ptr<FastOp>(
      new DepthwiseNhwc(x, ctx.tensor_of(output), mean == kNoValue ? nullptr : &ctx.tensor_of(mean), g, std::move(w),
                        std::move(bias), activation.pass, ctx.pool));
}

}  // namespace hetsched::cpu::fast
