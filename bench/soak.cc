// Soak: many threads × many requests over several profiles and models for a
// set time, every output checked against the first output of its
// model+profile. Prints requests, failures and p50/p99 latency per
// model+profile; exits 1 when any request failed or differed.
//
//   soak [--seconds S] [--threads T] [--model PATH]... PROFILE.yaml...
//
// Models: without --model, the RFC model and a small ResNet-style stack
// (both built in code) and the ONNX models bundled in test/data/models18.
// A model+profile that does not open is reported and left out, not counted
// as a failure (a profile may lack a delegate on this machine).
//
// The check: bitwise against the first output where the profile runs on the
// CPU only; within kGpuTolerance of it where a GPU delegate runs (a GPU may
// order its floating-point sums differently from one dispatch to the next;
// lavapipe does not, and the summary says whether every output was bitwise
// equal). The first output is also compared with the portable CPU kernels',
// so a soak of a wrong answer does not pass.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "examples/resnet_stack.h"
#include "examples/rfc_model.h"
#include "profile/profile.h"
#include "scheduler/pipeline.h"

namespace hetsched {
namespace {

constexpr double kGpuTolerance = 1e-4;     // |a - b| <= tol * (1 + |b|) against the first output
constexpr double kReferenceTolerance = 2e-3;  // against the portable kernels (XNNPACK, fused GPU ops, fp16 models)

struct Options {
  double seconds = 60;
  int threads = 8;
  std::vector<std::string> models;  // empty: the built-in set
  std::vector<std::string> profiles;
};

// One model: built in code (a graph), or a file that open_session loads
// (import, clean-up passes, shape inference) for each profile.
struct Model {
  std::string name;
  Graph graph;
  std::string path;  // empty: the graph
};

Result<std::unique_ptr<Session>> open_model(const Model& model, const Profile& profile) {
  return model.path.empty() ? open_session_for_graph(model.graph, profile) : open_session(model.path, profile);
}

// One model+profile under soak.
struct Target {
  std::string model, profile;
  bool gpu = false;
  std::unique_ptr<Session> session;
  std::vector<Tensor> inputs;
  std::vector<Tensor> first;  // the first output: what every later one must equal
  double reference_diff = 0;  // first output vs the portable kernels
  std::atomic<int64_t> requests{0}, failures{0}, mismatches{0}, not_bitwise{0};
  std::mutex mutex;  // guards the two below
  std::vector<double> latencies_ms;
  std::string first_error;
};

Tensor make_input(const TensorType& type, uint32_t seed) {
  Tensor t = Tensor::uninitialized(type);
  std::mt19937 rng(seed);
  const int64_t n = t.num_elements();
  switch (type.dtype) {
    case DType::kFloat32: {
      std::uniform_real_distribution<float> u(-1.f, 1.f);
      for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = u(rng);
      break;
    }
    case DType::kInt64:
      for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = static_cast<int64_t>(rng() % 4);
      break;
    case DType::kInt32:
      for (int64_t i = 0; i < n; ++i) t.data<int32_t>()[i] = static_cast<int32_t>(rng() % 4);
      break;
    default:
      std::memset(t.raw(), 0, t.byte_size());  // bool and f16 inputs: zeros
  }
  return t;
}

// Largest |a - b| / (1 + |b|) over every f32 output element; exact byte
// comparison for the others (0 or infinity).
double max_rel_diff(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type() != b[i].type()) return INFINITY;
    if (a[i].type().dtype != DType::kFloat32) {
      if (std::memcmp(a[i].raw(), b[i].raw(), a[i].byte_size()) != 0) return INFINITY;
      continue;
    }
    const float* x = a[i].data<float>();
    const float* y = b[i].data<float>();
    for (int64_t k = 0; k < a[i].num_elements(); ++k) {
      const double d = std::abs(static_cast<double>(x[k]) - y[k]) / (1.0 + std::abs(static_cast<double>(y[k])));
      if (!(d <= worst)) worst = d;  // NaN counts as the worst
    }
  }
  return worst;
}

bool bitwise_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].byte_size() != b[i].byte_size() || std::memcmp(a[i].raw(), b[i].raw(), a[i].byte_size()) != 0)
      return false;
  return true;
}

Result<std::vector<Model>> load_models(const Options& o) {
  std::vector<Model> models;
  if (o.models.empty()) {
    HS_ASSIGN_OR_RETURN(Graph rfc, examples::make_rfc_model());
    models.push_back({"rfc_model", std::move(rfc), ""});
    HS_ASSIGN_OR_RETURN(Graph resnet, examples::make_resnet_stack({2, 16, 16}));
    models.push_back({"resnet_2x16x16", std::move(resnet), ""});
    for (const char* name : {"encoder_op18.onnx", "vit_op21.onnx"})
      models.push_back({name, Graph(), std::string(HETSCHED_SOURCE_DIR) + "/test/data/models18/" + name});
    return models;
  }
  for (const std::string& path : o.models) models.push_back({std::filesystem::path(path).filename().string(), Graph(), path});
  return models;
}

bool uses_gpu(const Profile& p) { return p.delegate_enabled("vulkan") || p.delegate_enabled("vgf"); }

// Opens every model+profile, runs each once for its first output and
// compares that with the portable kernels'.
std::vector<std::unique_ptr<Target>> open_targets(const std::vector<Model>& models, const Options& o) {
  Profile portable = default_profile();
  portable.delegates["cpu"].engine = "portable";
  std::vector<std::unique_ptr<Target>> targets;
  for (const Model& model : models) {
    std::vector<Tensor> reference;
    for (const std::string& path : o.profiles) {
      Result<Profile> profile = load_profile(path);
      if (!profile.is_ok()) {
        std::printf("soak: left out profile %s: %s\n", path.c_str(), profile.status().message().c_str());
        continue;
      }
      auto t = std::make_unique<Target>();
      t->model = model.name;
      t->profile = std::filesystem::path(path).stem().string();
      t->gpu = uses_gpu(*profile);
      Result<std::unique_ptr<Session>> session = open_model(model, *profile);
      if (!session.is_ok()) {
        std::printf("soak: left out %s on %s: %s\n", t->model.c_str(), t->profile.c_str(),
                    session.status().message().c_str());
        continue;
      }
      t->session = std::move(session).value();
      const auto types = t->session->input_types();
      for (size_t i = 0; i < types.size(); ++i) t->inputs.push_back(make_input(types[i], 1234 + static_cast<uint32_t>(i)));
      Result<std::vector<Tensor>> first = t->session->run(t->inputs);
      if (!first.is_ok()) {
        std::printf("soak: left out %s on %s: its first run failed: %s\n", t->model.c_str(), t->profile.c_str(),
                    first.status().message().c_str());
        continue;
      }
      t->first = std::move(first).value();
      if (reference.empty()) {
        auto ref = open_model(model, portable);
        if (ref.is_ok()) {
          auto out = (*ref)->run(t->inputs);
          if (out.is_ok()) reference = std::move(out).value();
        }
      }
      t->reference_diff = reference.empty() ? NAN : max_rel_diff(t->first, reference);
      targets.push_back(std::move(t));
    }
  }
  return targets;
}

void soak_thread(std::vector<std::unique_ptr<Target>>& targets, int thread, std::chrono::steady_clock::time_point end) {
  std::vector<double> latencies;  // per target, merged at the end
  std::vector<std::vector<double>> mine(targets.size());
  for (size_t k = static_cast<size_t>(thread) % targets.size(); std::chrono::steady_clock::now() < end;
       k = (k + 1) % targets.size()) {
    Target& t = *targets[k];
    const auto t0 = std::chrono::steady_clock::now();
    Result<std::vector<Tensor>> out = t.session->run(t.inputs);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    t.requests++;
    if (!out.is_ok()) {
      t.failures++;
      std::lock_guard lock(t.mutex);
      if (t.first_error.empty()) t.first_error = out.status().message();
      continue;
    }
    mine[k].push_back(ms);
    if (bitwise_equal(*out, t.first)) continue;
    t.not_bitwise++;
    const double diff = max_rel_diff(*out, t.first);
    if (!t.gpu || !(diff <= kGpuTolerance)) {
      t.mismatches++;
      std::lock_guard lock(t.mutex);
      if (t.first_error.empty()) t.first_error = "output differs from the first by " + std::to_string(diff);
    }
  }
  for (size_t k = 0; k < targets.size(); ++k) {
    std::lock_guard lock(targets[k]->mutex);
    targets[k]->latencies_ms.insert(targets[k]->latencies_ms.end(), mine[k].begin(), mine[k].end());
  }
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())) - 1));
  return v[i];
}

int run(const Options& o) {
  spdlog::set_level(spdlog::level::warn);
  Result<std::vector<Model>> models = load_models(o);
  if (!models.is_ok()) {
    std::fprintf(stderr, "error: %s\n", models.status().message().c_str());
    return 2;
  }
  std::vector<std::unique_ptr<Target>> targets = open_targets(*models, o);
  if (targets.empty()) {
    std::fprintf(stderr, "error: failed to soak: no model opened under any profile\n");
    return 2;
  }
  std::printf("soak: %d threads for %.0f s over %zu model+profile pairs\n", o.threads, o.seconds, targets.size());
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(o.seconds));
  std::vector<std::thread> threads;
  for (int i = 0; i < o.threads; ++i) threads.emplace_back(soak_thread, std::ref(targets), i, end);
  for (std::thread& t : threads) t.join();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("\n%-18s %-13s %9s %8s %10s %8s %9s %9s %12s\n", "model", "profile", "requests", "failures",
              "mismatches", "bitwise", "p50 ms", "p99 ms", "vs portable");
  int64_t total = 0, failed = 0;
  bool reference_ok = true;
  for (const auto& t : targets) {
    total += t->requests;
    failed += t->failures + t->mismatches;
    const bool ref_ok = t->reference_diff <= kReferenceTolerance;
    reference_ok = reference_ok && ref_ok;
    std::printf("%-18s %-13s %9lld %8lld %10lld %8s %9.2f %9.2f %12.2e%s\n", t->model.c_str(), t->profile.c_str(),
                static_cast<long long>(t->requests.load()), static_cast<long long>(t->failures.load()),
                static_cast<long long>(t->mismatches.load()), t->not_bitwise == 0 ? "yes" : "no",
                percentile(t->latencies_ms, 0.50), percentile(t->latencies_ms, 0.99), t->reference_diff,
                ref_ok ? "" : " (over tolerance)");
    if (!t->first_error.empty()) std::printf("  first problem: %s\n", t->first_error.c_str());
  }
  std::printf("\nsoak: %lld requests in %.1f s (%.1f/s), %lld failed or differed; %s\n", static_cast<long long>(total),
              took, static_cast<double>(total) / took, static_cast<long long>(failed),
              failed == 0 && reference_ok ? "PASS" : "FAIL");
  return failed == 0 && reference_ok ? 0 : 1;
}

}  // namespace
}  // namespace hetsched

int main(int argc, char** argv) {
  hetsched::Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seconds") o.seconds = std::atof(value("--seconds").c_str());
    else if (a == "--threads") o.threads = std::atoi(value("--threads").c_str());
    else if (a == "--model") o.models.push_back(value("--model"));
    else if (a == "--help" || a == "-h") {
      std::printf("usage: soak [--seconds S] [--threads T] [--model PATH]... PROFILE.yaml...\n");
      return 0;
    } else o.profiles.push_back(a);
  }
  if (o.profiles.empty() || o.threads < 1 || !(o.seconds > 0)) {
    std::fprintf(stderr, "error: usage: soak [--seconds S > 0] [--threads T >= 1] [--model PATH]... PROFILE.yaml...\n");
    return 2;
  }
  return hetsched::run(o);
}
