#include "delegates/cpu/xnnpack/segment.h"

#include <cstring>

#include "delegates/cpu/xnnpack/layout_convert.h"
#include "delegates/cpu/xnnpack/lowering.h"
#include "delegates/cpu/xnnpack/xnnpack_library.h"

namespace hetsched::cpu::xnnpack {

namespace {

struct SubgraphDeleter {
  void operator()(xnn_subgraph_t subgraph) const { xnn_delete_subgraph(subgraph); }
};

}  // namespace

Result<std::unique_ptr<Segment>> Segment::create(const Graph& graph, const EngineStep& step, pthreadpool_t threadpool,
                                                 const TensorOf& tensor_of) {
  const size_t externals = step.inputs.size() + step.outputs.size();
  xnn_subgraph_t raw_subgraph = nullptr;
  HS_RETURN_IF_ERROR(
      check_xnn(xnn_create_subgraph(static_cast<uint32_t>(externals), 0, &raw_subgraph), "xnn_create_subgraph"));
  const std::unique_ptr<xnn_subgraph, SubgraphDeleter> subgraph(raw_subgraph);

  SubgraphLowering lowering(graph, step, subgraph.get());
  uint32_t next_id = 0;
  for (ValueId v : step.inputs)
    HS_RETURN_IF_ERROR(lowering.define_external(v, next_id++, XNN_VALUE_FLAG_EXTERNAL_INPUT));
  for (ValueId v : step.outputs)
    HS_RETURN_IF_ERROR(lowering.define_external(v, next_id++, XNN_VALUE_FLAG_EXTERNAL_OUTPUT));
  HS_RETURN_IF_ERROR(lowering.define_nodes());

  auto segment = std::unique_ptr<Segment>(new Segment());
  segment->threadpool_ = threadpool;
  segment->static_data_ = lowering.take_static_data();
  xnn_runtime_t raw_runtime = nullptr;
  {
    // Read only while the runtime packs them, freed at the end of this scope.
    const std::vector<AlignedBuffer> packed_weights = lowering.take_packed_weights();
    HS_RETURN_IF_ERROR(check_xnn(xnn_create_runtime_v2(subgraph.get(), threadpool, 0, &raw_runtime),
                                 "xnn_create_runtime_v2"));
  }
  segment->runtime_.reset(raw_runtime);

  auto bind = [&](ValueId v, bool is_input) {
    Binding b;
    b.value = v;
    b.tensor = &tensor_of(v);
    // A resident value already holds NHWC data in the island's tensor.
    b.nhwc = step.layouts.at(v) == TensorLayout::kNhwc && !step.resident_nhwc.count(v);
    if (b.nhwc) {
      const Shape& s = b.tensor->shape();
      b.batch = s[0];
      b.channels = s[1];
      b.pixels = s[2] * s[3];
    }
    // XNNPACK may read up to XNN_EXTRA_BYTES past the end of an input: an
    // island tensor that owns its bytes has that slack (graph/tensor.h) and
    // is read in place; anything else goes through staging.
    static_assert(XNN_EXTRA_BYTES <= AlignedBuffer::kReadSlack, "an island tensor's slack covers XNNPACK's overreads");
    b.in_place = is_input && !b.nhwc && b.tensor->has_read_slack();
    if ((is_input && !b.in_place) || b.nhwc)
      b.staging = AlignedBuffer(b.tensor->byte_size() + (is_input ? XNN_EXTRA_BYTES : 0));
    return b;
  };
  std::vector<xnn_external_value> externals_data;
  uint32_t id = 0;
  for (ValueId v : step.inputs) {
    segment->inputs_.push_back(bind(v, true));
    Binding& b = segment->inputs_.back();
    externals_data.push_back({id++, b.in_place ? static_cast<void*>(b.tensor->raw()) : b.staging.data()});
  }
  for (ValueId v : step.outputs) {
    segment->outputs_.push_back(bind(v, false));
    Binding& b = segment->outputs_.back();
    externals_data.push_back({id++, b.nhwc ? static_cast<void*>(b.staging.data()) : b.tensor->raw()});
  }
  HS_RETURN_IF_ERROR(check_xnn(xnn_setup_runtime(segment->runtime_.get(), externals_data.size(), externals_data.data()),
                               "xnn_setup_runtime"));
  return segment;
}

float* Segment::adopt_input(ValueId value) {
  for (Binding& b : inputs_)
    if (b.value == value && !b.nhwc && !b.in_place) {
      b.adopted = true;
      return reinterpret_cast<float*>(b.staging.data());
    }
  return nullptr;
}

bool Segment::read_input_from(ValueId value, const std::byte* source) {
  for (Binding& b : inputs_)
    if (b.value == value && !b.adopted && !b.in_place) {
      b.source = source;
      return true;
    }
  return false;
}

Status Segment::run() {
  for (Binding& b : inputs_) {
    if (b.adopted || b.in_place) continue;
    const std::byte* src = b.source ? b.source : b.tensor->raw();
    if (b.nhwc)
      nchw_to_nhwc(reinterpret_cast<const float*>(src), reinterpret_cast<float*>(b.staging.data()), b.batch,
                   b.channels, b.pixels, threadpool_);
    else
      parallel_copy(src, b.staging.data(), b.tensor->byte_size(), threadpool_);
  }
  HS_RETURN_IF_ERROR(check_xnn(xnn_invoke_runtime(runtime_.get()), "xnn_invoke_runtime"));
  for (Binding& b : outputs_)
    if (b.nhwc)
      nhwc_to_nchw(reinterpret_cast<const float*>(b.staging.data()), b.tensor->data<float>(), b.batch, b.channels,
                   b.pixels, threadpool_);
  return Status::ok();
}

}  // namespace hetsched::cpu::xnnpack
