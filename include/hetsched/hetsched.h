// The public embedding API of hetsched: everything a host application needs,
// and nothing of the internals (this header includes only status.h and
// version.h). Nothing here throws; errors are a Status with one line of
// text ("failed to <verb> <object>: <reason>").
//
//   auto model = hetsched::Model::load("det.onnx", hetsched::ProfileSource::file("configs/vulkan.yaml"),
//                                      {.input_shapes = {{"x", {1, 3, 640, 640}}}});
//   if (!model.is_ok()) { puts(model.status().message().c_str()); return 1; }
//   std::vector<float> x(1 * 3 * 640 * 640), y((*model)->outputs()[0].elements());
//   hetsched::Status s = (*model)->run({hetsched::ConstView::of(x)}, {hetsched::MutableView::of(y)});
//
// ABI: the classes hold their state behind a pointer (Model::Impl), so
// adding members does not change their layout; HETSCHED_VERSION_* say which
// release a binary was built against (docs/embedding.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hetsched/status.h"
#include "hetsched/version.h"

namespace hetsched {

// Where a deployment profile comes from: a YAML file (relative paths in it,
// such as partition.costs, resolve against its folder) or YAML text.
struct ProfileSource {
  std::string path;  // a file, or
  std::string yaml;  // the text itself (used when path is empty)
  static ProfileSource file(std::string p) { return {std::move(p), {}}; }
  static ProfileSource text(std::string y) { return {{}, std::move(y)}; }
};

struct LoadOptions {
  // Shapes for inputs the model leaves dynamic (name → dims).
  std::map<std::string, std::vector<int64_t>> input_shapes = {};
  // Shape variants: the model compiled ahead of time for each of these sets
  // of input shapes (each applied over input_shapes), one Model holding all;
  // every run picks the variant of its inputs (RunOptions::input_shapes, or
  // the views' byte sizes). A .hsp file compiled with variants loads all of
  // them when neither this nor input_shapes is given.
  std::vector<std::map<std::string, std::vector<int64_t>>> shape_variants = {};
};

// One input or output of a model.
struct TensorInfo {
  std::string name;
  std::string dtype;  // "f32", "f16", "i64", "i32", "i8", "u8", "bool"
  std::vector<int64_t> shape;
  size_t bytes = 0;  // row-major, dense
  size_t elements() const {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    return n;
  }
};

// Caller-owned bytes, row-major and dense, that hetsched reads (inputs) or
// writes (outputs) in place: nothing is copied to or from a buffer of its
// own before the run. They must stay valid until the run returns (or its
// future is ready).
struct ConstView {
  const void* data = nullptr;
  size_t bytes = 0;
  template <typename Container>
  static ConstView of(const Container& c) {
    return {c.data(), c.size() * sizeof(*c.data())};
  }
};
struct MutableView {
  void* data = nullptr;
  size_t bytes = 0;
  template <typename Container>
  static MutableView of(Container& c) {
    return {c.data(), c.size() * sizeof(*c.data())};
  }
};

// What one run took: wall time, host waits on devices, and (with
// RunOptions::trace) each island and handoff as a Chrome trace event.
struct RunInfo {
  double latency_ms = 0;
  int host_waits = 0;
  std::string trace_json;  // filled when RunOptions::trace is set
};

struct RunOptions {
  bool trace = false;
  // For a model of several shape variants: the inputs' shapes, which pick
  // the variant. Left empty, the variant is the one whose input byte sizes
  // equal the views' (an error when several do).
  std::map<std::string, std::vector<int64_t>> input_shapes = {};
};

struct VulkanBufferRange;  // hetsched/vulkan.h
struct GpuRunSync;
struct GpuRunInfo;

// A model loaded with a profile: planned over the profile's delegates,
// compiled, and ready to run (a session). Runs may be issued from several
// threads; up to the profile's scheduler.max_in_flight run at once.
class Model {
 public:
  // .onnx, .hsg (graph) or .hsp (compiled program).
  static Result<std::unique_ptr<Model>> load(const std::string& model_path, const ProfileSource& profile,
                                             const LoadOptions& options = {});
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Of the first shape variant (of the only one, for most models).
  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;
  // Shape variants (LoadOptions::shape_variants): how many, and each one's.
  size_t shape_variants() const;
  const std::vector<TensorInfo>& inputs(size_t variant) const;
  const std::vector<TensorInfo>& outputs(size_t variant) const;
  // How the model was split: one line per island ("0 cpu 10 nodes", ...).
  std::vector<std::string> islands() const;

  // One request, waited for: inputs in inputs() order, outputs in outputs()
  // order, each view exactly the tensor's byte size (of the shape variant
  // the run picks).
  Status run(const std::vector<ConstView>& inputs, const std::vector<MutableView>& outputs, RunInfo* info = nullptr,
             const RunOptions& options = {});
  // The same without waiting: the future is ready when the outputs are
  // written. The views must outlive it.
  std::future<Result<RunInfo>> submit(const std::vector<ConstView>& inputs, const std::vector<MutableView>& outputs,
                                      const RunOptions& options = {});

 private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  // Runs on the host's GPU buffers (hetsched/vulkan.h).
  friend Status run_on_vulkan_buffers(Model& model, const std::vector<VulkanBufferRange>& inputs,
                                      const std::vector<VulkanBufferRange>& outputs, const GpuRunSync& sync,
                                      GpuRunInfo* info, const RunOptions& options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hetsched
