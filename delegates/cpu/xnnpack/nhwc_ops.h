// Portable ops run on NHWC data between two XNNPACK segments, so that the
// values around them need no NCHW <-> NHWC conversion: Concat along the
// channels, Slice of a channel range, Split along the channels (YOLOv8's
// C2f blocks, as exporters write its chunk), ShuffleNet's channel shuffle
// (graph/passes/fuse_channel_shuffle.h) and nearest Resize, which this
// XNNPACK snapshot lacks.
#pragma once

#include <pthreadpool.h>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched::cpu::xnnpack {

// Whether `node` has an NHWC kernel here: Concat of rank-4 f32 run-time
// values along axis 1, Slice of a rank-4 f32 value along axis 1 only (step
// 1, opset 10 and later), Split of a rank-4 f32 value along axis 1 into
// outputs of static shape (the only NHWC node with several outputs), the
// channel shuffle of rank-4 f32 values, or nearest Resize of a rank-4 f32
// value on H and W (opset 11 and later).
// kUnsupported with the reason otherwise.
Status nhwc_kernel_supports(const Graph& graph, const Node& node);

class NhwcNode {
 public:
  // The island's tensor for a value; it holds NHWC data for this node's
  // inputs and output although its shape says NCHW.
  using TensorOf = std::function<Tensor&(ValueId)>;
  // Needs nhwc_kernel_supports(graph, node) to have passed. `pool` is not
  // retained and may be nullptr (the calling thread).
  static Result<std::unique_ptr<NhwcNode>> create(const Graph& graph, const Node& node, pthreadpool_t pool,
                                                  const TensorOf& tensor_of);
  Status run();
  // Writes the output to `dst` (as many bytes as the output tensor) instead
  // of the island's tensor: the staging buffer of the one segment reading
  // it (Segment::adopt_input), which then skips its copy. Nodes of one
  // output only (not Split).
  void write_to(float* dst) { out_ = dst; }
  // Where the output goes (the island's tensor, or write_to's buffer).
  float* output() const { return out_; }
  // A Concat's input `i` is already in its place in the output (its
  // producer wrote it there: fast::FastOp::write_channels_into), so run()
  // leaves its channels alone.
  void input_in_place(size_t i) { in_place_.at(i) = true; }

 private:
  NhwcNode() = default;
  static void concat_rows(void* context, size_t pixel_block);
  static void slice_rows(void* context, size_t pixel_block);
  static void shuffle_rows(void* context, size_t pixel_block);
  static void resize_row(void* context, size_t row);
  static void split_rows(void* context, size_t pixel_block);

  enum class Kind { kConcat, kSlice, kSplit, kShuffle, kResize };
  Kind kind_ = Kind::kResize;
  pthreadpool_t pool_ = nullptr;
  std::vector<const Tensor*> inputs_;
  std::vector<int64_t> channels_;  // per input (Concat; Slice and shuffle: the one input's; Split: per output)
  std::vector<bool> in_place_;     // Concat: per input (input_in_place)
  std::vector<float*> outs_;       // Split: every output
  int64_t first_channel_ = 0;      // Slice
  int64_t group_ = 1;              // channel shuffle
  std::vector<std::pair<int32_t, int32_t>> shuffle_source_;  // by output channel: input, its channel
  float* out_ = nullptr;
  int64_t batch_ = 0, out_channels_ = 0, pixels_ = 0;  // Concat, Slice, shuffle: pixels = N*H*W
  int64_t in_h_ = 0, in_w_ = 0, out_h_ = 0, out_w_ = 0;
  std::vector<int64_t> src_row_, src_col_;  // Resize: the input row / column of each output one
};

}  // namespace hetsched::cpu::xnnpack
