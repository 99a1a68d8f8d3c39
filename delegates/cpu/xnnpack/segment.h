// One XNNPACK segment of a CPU island, ready to run: an xnn_runtime created
// once at init (weights packed then) and bound once to fixed buffers.
#pragma once

#include <pthreadpool.h>
#include <xnnpack.h>

#include <functional>
#include <memory>
#include <vector>

#include "delegates/cpu/xnnpack/segment_plan.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched::cpu::xnnpack {

class Segment {
 public:
  // The island's tensor (graph order) for a boundary value. The segment
  // keeps the reference: the tensor must stay where it is while the
  // segment lives.
  using TensorOf = std::function<Tensor&(ValueId)>;

  // Defines `step`'s nodes as one XNNPACK subgraph, creates its runtime on
  // `threadpool` and binds its inputs and outputs. `threadpool` is not
  // retained but must outlive the segment; `graph` and `step` are read only
  // during the call. Needs ensure_initialized() to have succeeded. Errors
  // name the node or XNNPACK call that failed; the caller may then run the
  // step's nodes on the portable kernels.
  static Result<std::unique_ptr<Segment>> create(const Graph& graph, const EngineStep& step, pthreadpool_t threadpool,
                                                 const TensorOf& tensor_of);

  // Copies the inputs that are not read in place in (converting NHWC ones),
  // runs the runtime, copies NHWC outputs back to graph order. One call at
  // a time.
  Status run();
  // The staging buffer input `value` is read from (bytes of the island's
  // tensor plus XNN_EXTRA_BYTES), for a value whose producer writes there
  // directly; run() then no longer copies it in. nullptr when `value` is no
  // input read through staging (most are read in place: Binding::in_place)
  // or is converted on the way in.
  float* adopt_input(ValueId value);
  // From the next run() on, input `value` is read from `source` (graph
  // order, the island tensor's bytes) instead of the island's tensor: an
  // island input the caller already holds needs no copy of its own before
  // the segment's copy into staging. nullptr goes back to the tensor.
  // false when `value` is no input of this segment, is read in place from
  // the island's tensor, or its producer writes the staging buffer itself.
  bool read_input_from(ValueId value, const std::byte* source);

 private:
  // One input or output of the runtime.
  struct Binding {
    ValueId value = kNoValue;
    Tensor* tensor = nullptr;  // the island's tensor, in graph order
    bool adopted = false;      // inputs: the producer fills `staging` itself
    // Inputs: XNNPACK reads the island's tensor itself (it has the slack
    // XNNPACK reads past the end): no staging, no copy. A boundary value
    // between segments cost a copy per run before (ResNet-50's identity
    // branches: 3.2 MB a block in its first stage).
    bool in_place = false;
    const std::byte* source = nullptr;  // inputs: read from here, not `tensor` (read_input_from)
    bool nhwc = false;
    int64_t batch = 0, channels = 0, pixels = 0;  // for NHWC conversion
    AlignedBuffer staging;  // what XNNPACK reads or writes when it cannot use `tensor` itself
  };
  struct RuntimeDeleter {
    void operator()(xnn_runtime_t runtime) const { xnn_delete_runtime(runtime); }
  };

  Segment() = default;

  pthreadpool_t threadpool_ = nullptr;      // not owned; the runtime's, also used for the conversions
  std::vector<AlignedBuffer> static_data_;  // weights and constants the runtime reads
  std::vector<Binding> inputs_;
  std::vector<Binding> outputs_;
  // Reads static_data_ and the bindings' buffers: declared last, deleted first.
  std::unique_ptr<xnn_runtime, RuntimeDeleter> runtime_;
};

}  // namespace hetsched::cpu::xnnpack
