// Writes the bundled example models into a folder:
//   rfc_model.hsg and the RFC's input (linspace(-0.8, 0.8) as raw f32) as rfc_model_input.bin;
//   parallel_branches.hsg and cpu_gpu_cpu.hsg (examples/scheduler_models.h) at their default sizes.
// With `--scheduler-models C S GPU_LAYERS CPU_LAYERS`, writes only the two
// scheduler models at those sizes (to balance CPU and GPU work on a machine),
// and each branch of parallel_branches alone (gpu_branch.hsg, cpu_branch.hsg).
// With `--policy-models`, writes only the models on which a fixed partition
// order loses (examples/policy_models.h): tiny_islands.hsg, gpu_heavy_op.hsg.
#include <cstdio>
#include <fstream>
#include <string>

#include "examples/policy_models.h"
#include "examples/rfc_model.h"
#include "examples/scheduler_models.h"
#include "scheduler/model_loader.h"

namespace {
int fail(const hetsched::Status& s) {
  std::fprintf(stderr, "error: %s\n", s.message().c_str());
  return 1;
}

hetsched::Status write_scheduler_models(const std::string& dir, const hetsched::examples::SchedulerModelOptions& o) {
  auto branches = hetsched::examples::make_parallel_branches(o);
  if (!branches.is_ok()) return branches.status();
  HS_RETURN_IF_ERROR(hetsched::write_graph_file(*branches, dir + "/parallel_branches.hsg"));
  auto chain = hetsched::examples::make_cpu_gpu_cpu(o);
  if (!chain.is_ok()) return chain.status();
  return hetsched::write_graph_file(*chain, dir + "/cpu_gpu_cpu.hsg");
}

hetsched::Status write_policy_models(const std::string& dir) {
  auto tiny = hetsched::examples::make_tiny_islands({});
  if (!tiny.is_ok()) return tiny.status();
  HS_RETURN_IF_ERROR(hetsched::write_graph_file(*tiny, dir + "/tiny_islands.hsg"));
  auto heavy = hetsched::examples::make_gpu_heavy_op({});
  if (!heavy.is_ok()) return heavy.status();
  return hetsched::write_graph_file(*heavy, dir + "/gpu_heavy_op.hsg");
}

// Each branch of parallel_branches alone, to compare with both at once.
hetsched::Status write_branch_models(const std::string& dir, hetsched::examples::SchedulerModelOptions o) {
  const int gpu_layers = o.gpu_layers;
  o.gpu_layers = 0;
  auto cpu = hetsched::examples::make_parallel_branches(o);
  if (!cpu.is_ok()) return cpu.status();
  HS_RETURN_IF_ERROR(hetsched::write_graph_file(*cpu, dir + "/cpu_branch.hsg"));
  o.gpu_layers = gpu_layers;
  o.cpu_layers = 0;
  auto gpu = hetsched::examples::make_parallel_branches(o);
  if (!gpu.is_ok()) return gpu.status();
  return hetsched::write_graph_file(*gpu, dir + "/gpu_branch.hsg");
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 7 && std::string(argv[2]) == "--scheduler-models") {
    hetsched::examples::SchedulerModelOptions o;
    try {
      o.channels = std::stoll(argv[3]);
      o.size = std::stoll(argv[4]);
      o.gpu_layers = std::stoi(argv[5]);
      o.cpu_layers = std::stoi(argv[6]);
    } catch (...) {
      std::fprintf(stderr, "error: --scheduler-models takes four integers: C S GPU_LAYERS CPU_LAYERS\n");
      return 2;
    }
    if (o.channels < 1 || o.size < 1 || o.gpu_layers < 1 || o.cpu_layers < 1) {
      std::fprintf(stderr, "error: --scheduler-models sizes must be at least 1\n");
      return 2;
    }
    hetsched::Status s = write_scheduler_models(argv[1], o);
    if (s.is_ok()) s = write_branch_models(argv[1], o);
    return s.is_ok() ? 0 : fail(s);
  }
  if (argc == 3 && std::string(argv[2]) == "--policy-models") {
    const hetsched::Status s = write_policy_models(argv[1]);
    return s.is_ok() ? 0 : fail(s);
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [--scheduler-models C S GPU_LAYERS CPU_LAYERS | --policy-models]\n",
                 argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  auto graph = hetsched::examples::make_rfc_model();
  if (!graph.is_ok()) return fail(graph.status());
  hetsched::Status s = hetsched::write_graph_file(*graph, dir + "/rfc_model.hsg");
  if (s.is_ok()) {
    const hetsched::Tensor input = hetsched::examples::rfc_model_input();
    std::ofstream f(dir + "/rfc_model_input.bin", std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(input.raw()), static_cast<std::streamsize>(input.byte_size()));
    if (!f) s = hetsched::internal_error("failed to write " + dir + "/rfc_model_input.bin");
  }
  if (s.is_ok()) s = write_scheduler_models(dir, {});
  return s.is_ok() ? 0 : fail(s);
}
