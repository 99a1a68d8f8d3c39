// hetsched::Model (include/hetsched/hetsched.h) over the internal pipeline:
// a Session opened with the profile, and the caller's views wrapped as
// borrowed tensors so inputs and outputs are read and written in place.
#include <thread>

#include "api/model_impl.h"
#include "hetsched/hetsched.h"
#include "profile/profile.h"
#include "scheduler/pipeline.h"
#include "scheduler/trace.h"

namespace hetsched {

namespace {

std::vector<TensorInfo> describe(const std::vector<std::string>& names, const std::vector<TensorType>& types) {
  std::vector<TensorInfo> out;
  for (size_t i = 0; i < names.size(); ++i)
    out.push_back({names[i], std::string(dtype_name(types[i].dtype)), types[i].shape, types[i].byte_size()});
  return out;
}

// Checks each view against its tensor and wraps it (no copy).
template <typename View>
Result<std::vector<Tensor>> wrap(const std::vector<View>& views, const std::vector<TensorInfo>& infos,
                                 const std::vector<TensorType>& types, const char* what) {
  if (views.size() != infos.size())
    return invalid_argument(std::string("failed to run model: expected ") + std::to_string(infos.size()) + " " + what +
                            "s, got " + std::to_string(views.size()));
  std::vector<Tensor> tensors;
  tensors.reserve(views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    if (views[i].bytes != infos[i].bytes || (views[i].data == nullptr && infos[i].bytes > 0))
      return invalid_argument(std::string("failed to run model: ") + what + " '" + infos[i].name + "' (" +
                              types[i].to_string() + ") needs " + std::to_string(infos[i].bytes) + " bytes, got " +
                              (views[i].data ? std::to_string(views[i].bytes) : "no data"));
    tensors.push_back(Tensor::borrow(types[i], const_cast<void*>(static_cast<const void*>(views[i].data))));
  }
  return tensors;
}

}  // namespace

RunInfo info_of(const RunStats& stats, bool trace) {
  RunInfo info;
  info.latency_ms = stats.total_ms;
  info.host_waits = stats.host_waits;
  if (trace) info.trace_json = trace_json({&stats});
  return info;
}

// status_code_name (include/hetsched/status.h) lives in graph/status.cc; this
// reference links it into libhetsched.so, whose exports.map exports it.
extern std::string_view (*const kPublicStatusCodeName)(StatusCode);
std::string_view (*const kPublicStatusCodeName)(StatusCode) = &status_code_name;

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

Result<std::unique_ptr<Model>> Model::load(const std::string& model_path, const ProfileSource& source,
                                           const LoadOptions& options) {
  Result<Profile> profile =
      source.path.empty() ? parse_profile(source.yaml, "<profile text>") : load_profile(source.path);
  if (!profile.is_ok()) return profile.status();
  InputShapes shapes(options.input_shapes.begin(), options.input_shapes.end());
  HS_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, open_session(model_path, *profile, shapes));
  auto impl = std::make_unique<Impl>();
  impl->input_types = session->input_types();
  impl->output_types = session->output_types();
  impl->inputs = describe(session->input_names(), impl->input_types);
  impl->outputs = describe(session->output_names(), impl->output_types);
  impl->session = std::move(session);
  return std::unique_ptr<Model>(new Model(std::move(impl)));
}

const std::vector<TensorInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<TensorInfo>& Model::outputs() const { return impl_->outputs; }

std::vector<std::string> Model::islands() const {
  std::vector<std::string> out;
  for (const ProgramIsland& island : impl_->session->program().islands)
    out.push_back(std::to_string(island.id) + " " + island.delegate + " " + std::to_string(island.node_names.size()) +
                  " nodes");
  return out;
}

Status Model::run(const std::vector<ConstView>& inputs, const std::vector<MutableView>& outputs, RunInfo* info,
                  const RunOptions& options) {
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> in, wrap(inputs, impl_->inputs, impl_->input_types, "input"));
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> out, wrap(outputs, impl_->outputs, impl_->output_types, "output"));
  RunStats stats;
  HS_RETURN_IF_ERROR(impl_->session->run_into(in, out, info || options.trace ? &stats : nullptr));
  if (info) *info = info_of(stats, options.trace);
  return Status::ok();
}

std::future<Result<RunInfo>> Model::submit(const std::vector<ConstView>& inputs,
                                           const std::vector<MutableView>& outputs, const RunOptions& options) {
  Result<std::vector<Tensor>> in = wrap(inputs, impl_->inputs, impl_->input_types, "input");
  Result<std::vector<Tensor>> out = wrap(outputs, impl_->outputs, impl_->output_types, "output");
  if (!in.is_ok() || !out.is_ok()) {
    std::promise<Result<RunInfo>> failed;
    failed.set_value(!in.is_ok() ? in.status() : out.status());
    return failed.get_future();
  }
  // The session's future refers to the output tensors: they live with the
  // thread that waits for it and turns its stats into a RunInfo.
  auto outs = std::make_shared<std::vector<Tensor>>(std::move(*out));
  auto pending = std::make_shared<std::future<Result<RunStats>>>(
      impl_->session->submit_into(std::move(*in), *outs, options.trace));
  const bool trace = options.trace;
  return std::async(std::launch::async, [outs, pending, trace]() -> Result<RunInfo> {
    HS_ASSIGN_OR_RETURN(RunStats stats, pending->get());
    return info_of(stats, trace);
  });
}

}  // namespace hetsched
