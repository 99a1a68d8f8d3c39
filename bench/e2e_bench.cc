// End-to-end latency of whole models under several profiles, in one run:
// CPU only vs Vulkan only vs mixed VGF/Vulkan (timeline and queue_wait_idle),
// on the RFC model and a conv-heavy ResNet-style stack. Prints the median of
// N runs after a warm-up, the host waits per run, the ratio to CPU only, and
// the largest difference from the portable kernels' output.
//
//   e2e_bench [--runs N] [--blocks B] [--channels C] [--size S] [--configs DIR]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "examples/resnet_stack.h"
#include "examples/rfc_model.h"
#include "profile/profile.h"
#include "scheduler/pipeline.h"

namespace hetsched {
namespace {

struct Options {
  int runs = 20;
  examples::ResnetStackOptions resnet{2, 32, 28};
  std::string configs = "configs";
};

struct Row {
  std::string profile;
  double median_ms = 0;
  int host_waits = 0;
  std::string islands;
  std::vector<Tensor> outputs;
};

// Largest |a - b| over every output element: each profile's result is
// checked against the portable kernels', so a fast wrong answer shows.
double max_abs_diff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    for (int64_t k = 0; k < a[i].num_elements(); ++k)
      worst = std::max(worst, static_cast<double>(std::abs(a[i].data<float>()[k] - b[i].data<float>()[k])));
  return worst;
}

Result<Row> time_profile(const Graph& graph, const Tensor& input, const Profile& profile, const std::string& label,
                         int runs) {
  HS_ASSIGN_OR_RETURN(Program program, build_program(graph, profile));
  Row row{label, 0, 0, "", {}};
  for (const auto& island : program.islands) row.islands += (row.islands.empty() ? "" : "→") + island.delegate;
  HS_ASSIGN_OR_RETURN(auto session, Session::create(std::move(program), profile));
  std::vector<double> ms;
  for (int i = 0; i < runs + 2; ++i) {
    RunStats stats;
    HS_ASSIGN_OR_RETURN(auto out, session->run({input}, &stats));
    if (i >= 2) ms.push_back(stats.total_ms);  // two warm-up runs
    row.host_waits = stats.host_waits;
    row.outputs = std::move(out);
  }
  std::sort(ms.begin(), ms.end());
  row.median_ms = ms[ms.size() / 2];
  return row;
}

int bench_model(const std::string& name, const Graph& graph, const Tensor& input, const Options& o) {
  struct Case {
    std::string label, config;
    std::optional<SyncMode> sync;
  };
  const std::vector<Case> cases = {{"cpu", "default.yaml", {}},
                                   {"vulkan", "vulkan.yaml", {}},
                                   {"mixed timeline", "mixed_gpu.yaml", SyncMode::kTimeline},
                                   {"mixed queue_wait_idle", "mixed_gpu.yaml", SyncMode::kQueueWaitIdle}};
  std::printf("\n%s (%s)\n  %-24s %12s %8s %12s %12s  %s\n", name.c_str(),
              graph.value(graph.inputs()[0]).type.to_string().c_str(), "profile", "median ms", "vs cpu", "host waits",
              "max |diff|", "islands");
  auto portable = load_profile(o.configs + "/cpu_portable.yaml");
  if (!portable.is_ok()) {
    std::fprintf(stderr, "error: %s\n", portable.status().message().c_str());
    return 1;
  }
  auto reference = time_profile(graph, input, *portable, "portable", 1);
  if (!reference.is_ok()) {
    std::fprintf(stderr, "error: %s\n", reference.status().message().c_str());
    return 1;
  }
  double cpu_ms = 0;
  for (const Case& c : cases) {
    auto profile = load_profile(o.configs + "/" + c.config);
    if (!profile.is_ok()) {
      std::fprintf(stderr, "error: %s\n", profile.status().message().c_str());
      return 1;
    }
    if (c.sync) profile->sync = *c.sync;
    profile->log_level = "error";
    auto row = time_profile(graph, input, *profile, c.label, o.runs);
    if (!row.is_ok()) {
      std::printf("  %-24s failed: %s\n", c.label.c_str(), row.status().message().c_str());
      continue;
    }
    if (c.label == "cpu") cpu_ms = row->median_ms;
    std::printf("  %-24s %12.3f %7.2fx %12d %12.2e  %s\n", c.label.c_str(), row->median_ms,
                cpu_ms > 0 ? row->median_ms / cpu_ms : 0.0, row->host_waits,
                max_abs_diff(row->outputs, reference->outputs), row->islands.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace hetsched

int main(int argc, char** argv) {
  using namespace hetsched;
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--runs") o.runs = std::atoi(v);
    else if (flag == "--blocks") o.resnet.blocks = std::atoi(v);
    else if (flag == "--channels") o.resnet.channels = std::atoll(v);
    else if (flag == "--size") o.resnet.size = std::atoll(v);
    else if (flag == "--configs") o.configs = v;
    else {
      std::fprintf(stderr, "usage: %s [--runs N] [--blocks B] [--channels C] [--size S] [--configs DIR]\n", argv[0]);
      return 2;
    }
  }
  if (o.runs < 1 || o.resnet.blocks < 1 || o.resnet.channels < 1 || o.resnet.size < 1) {
    std::fprintf(stderr, "error: --runs, --blocks, --channels and --size must be integers >= 1\n");
    return 2;
  }
  spdlog::set_level(spdlog::level::warn);
  auto rfc = examples::make_rfc_model();
  auto resnet = examples::make_resnet_stack(o.resnet);
  if (!rfc.is_ok() || !resnet.is_ok()) {
    std::fprintf(stderr, "error: failed to build the bench models\n");
    return 1;
  }
  int rc = bench_model("rfc_model", *rfc, examples::rfc_model_input(), o);
  const TensorType in = resnet->value(resnet->inputs()[0]).type;
  rc |= bench_model("resnet_stack", *resnet, examples::seeded_tensor(in.shape, 7, 1.f), o);
  return rc;
}
