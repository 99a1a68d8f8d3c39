#include "delegates/vgf/vgf_api.h"

#include "delegates/vgf/vgf_format.h"

namespace hetsched::vgf {

namespace {

std::vector<VgfTensorInfo> tensors(const VgfFile& file, const std::vector<uint32_t>& ids) {
  std::vector<VgfTensorInfo> out;
  for (uint32_t id : ids) {
    const Resource& r = file.resources[id];
    out.push_back({r.name, TensorType{r.dtype, r.logical_shape()}, r.layout});
  }
  return out;
}

}  // namespace

Result<VgfSummary> describe_vgf(const Blob& blob) {
  HS_ASSIGN_OR_RETURN(const VgfFile file, decode_vgf(blob));
  VgfSummary summary;
  summary.inputs = tensors(file, file.inputs);
  summary.outputs = tensors(file, file.outputs);
  summary.op_count = file.op_count();
  for (const Segment& seg : file.segments) {
    const Module& m = file.modules[seg.module];
    if (m.type == ModuleType::kCompute) {
      summary.ops.push_back("compute:" + m.name);
      continue;
    }
    for (const Operator& op : m.ops) summary.ops.push_back(std::string(op_name(op.op)));
  }
  return summary;
}

}  // namespace hetsched::vgf
