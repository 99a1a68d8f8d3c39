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
  const InputShapes base(options.input_shapes.begin(), options.input_shapes.end());
  std::vector<InputShapes> variants;
  for (const auto& variant : options.shape_variants) {
    InputShapes shapes = base;
    for (const auto& [name, shape] : variant) shapes[name] = shape;
    variants.push_back(std::move(shapes));
  }
  if (variants.empty() && !base.empty()) variants.push_back(base);
  HS_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Session>> sessions,
                      open_shape_variants(model_path, *profile, variants));
  auto impl = std::make_unique<Impl>();
  for (std::unique_ptr<Session>& session : sessions) {
    Impl::Variant v;
    v.input_types = session->input_types();
    v.output_types = session->output_types();
    v.inputs = describe(session->input_names(), v.input_types);
    v.outputs = describe(session->output_names(), v.output_types);
    v.session = std::move(session);
    impl->variants.push_back(std::move(v));
  }
  return std::unique_ptr<Model>(new Model(std::move(impl)));
}

Result<const Model::Impl::Variant*> Model::Impl::pick(const std::vector<size_t>& input_bytes,
                                                      const RunOptions& options) const {
  if (variants.size() == 1 && options.input_shapes.empty()) return &variants.front();
  std::vector<const Variant*> matches;
  for (const Variant& v : variants) {
    bool match = v.inputs.size() == input_bytes.size();
    for (size_t i = 0; match && i < v.inputs.size(); ++i) {
      auto it = options.input_shapes.find(v.inputs[i].name);
      match = options.input_shapes.empty() ? v.inputs[i].bytes == input_bytes[i]
                                           : it == options.input_shapes.end() || it->second == v.inputs[i].shape;
    }
    if (match) matches.push_back(&v);
  }
  if (matches.size() == 1) return matches.front();
  std::string list;
  for (const Variant& v : variants) {
    list += list.empty() ? "" : "; ";
    for (size_t i = 0; i < v.inputs.size(); ++i)
      list += (i ? ", " : "") + v.inputs[i].name + "=" + shape_to_string(v.inputs[i].shape);
  }
  const char* given = options.input_shapes.empty() ? "input byte sizes" : "RunOptions::input_shapes";
  if (matches.empty())
    return invalid_argument(std::string("failed to run model: the ") + given + " match none of its shape variants (" +
                            list + ")");
  return invalid_argument(std::string("failed to run model: the ") + given + " match " +
                          std::to_string(matches.size()) + " of its shape variants (" + list +
                          "); name the shapes in RunOptions::input_shapes");
}

const std::vector<TensorInfo>& Model::inputs() const { return impl_->variants.front().inputs; }
const std::vector<TensorInfo>& Model::outputs() const { return impl_->variants.front().outputs; }
size_t Model::shape_variants() const { return impl_->variants.size(); }
const std::vector<TensorInfo>& Model::inputs(size_t variant) const { return impl_->variants.at(variant).inputs; }
const std::vector<TensorInfo>& Model::outputs(size_t variant) const { return impl_->variants.at(variant).outputs; }

std::vector<std::string> Model::islands() const {
  std::vector<std::string> out;
  for (const ProgramIsland& island : impl_->variants.front().session->program().islands)
    out.push_back(std::to_string(island.id) + " " + island.delegate + " " + std::to_string(island.node_names.size()) +
                  " nodes");
  return out;
}

namespace {
template <typename View>
std::vector<size_t> byte_sizes(const std::vector<View>& views) {
  std::vector<size_t> out;
  for (const View& v : views) out.push_back(v.bytes);
  return out;
}
}  // namespace

Status Model::run(const std::vector<ConstView>& inputs, const std::vector<MutableView>& outputs, RunInfo* info,
                  const RunOptions& options) {
  HS_ASSIGN_OR_RETURN(const Impl::Variant* v, impl_->pick(byte_sizes(inputs), options));
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> in, wrap(inputs, v->inputs, v->input_types, "input"));
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> out, wrap(outputs, v->outputs, v->output_types, "output"));
  RunStats stats;
  HS_RETURN_IF_ERROR(v->session->run_into(in, out, info || options.trace ? &stats : nullptr));
  if (info) *info = info_of(stats, options.trace);
  return Status::ok();
}

std::future<Result<RunInfo>> Model::submit(const std::vector<ConstView>& inputs,
                                           const std::vector<MutableView>& outputs, const RunOptions& options) {
  auto failed = [](const Status& s) {
    std::promise<Result<RunInfo>> p;
    p.set_value(s);
    return p.get_future();
  };
  Result<const Impl::Variant*> v = impl_->pick(byte_sizes(inputs), options);
  if (!v.is_ok()) return failed(v.status());
  Result<std::vector<Tensor>> in = wrap(inputs, (*v)->inputs, (*v)->input_types, "input");
  Result<std::vector<Tensor>> out = wrap(outputs, (*v)->outputs, (*v)->output_types, "output");
  if (!in.is_ok() || !out.is_ok()) return failed(!in.is_ok() ? in.status() : out.status());
  // The session's future refers to the output tensors: they live with the
  // thread that waits for it and turns its stats into a RunInfo.
  auto outs = std::make_shared<std::vector<Tensor>>(std::move(*out));
  auto pending = std::make_shared<std::future<Result<RunStats>>>(
      (*v)->session->submit_into(std::move(*in), *outs, options.trace));
  const bool trace = options.trace;
  return std::async(std::launch::async, [outs, pending, trace]() -> Result<RunInfo> {
    HS_ASSIGN_OR_RETURN(RunStats stats, pending->get());
    return info_of(stats, trace);
  });
}

}  // namespace hetsched
