#include "delegates/cost_model.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace hetsched {

std::string_view cut_kind_name(CutKind kind) {
  switch (kind) {
    case CutKind::kUpload: return "upload";
    case CutKind::kReadback: return "readback";
    case CutKind::kDeviceCopy: return "device_copy";
    case CutKind::kLayoutConversion: return "layout_conversion";
    case CutKind::kAlias: return "alias";
  }
  return "?";
}

double node_seconds(const DelegateCosts& costs, const OpWork& work) {
  if (work.op_class == OpClass::kFree) return 0;
  const ClassRate& rate = costs.rate(work.op_class);
  const double compute = work.flops / (std::max(rate.gflops, 1e-9) * 1e9);
  const double memory = work.bytes / (std::max(rate.gbps, 1e-9) * 1e9);
  return std::max(compute, memory) + costs.dispatch_us * 1e-6;
}

bool is_known_device_class(std::string_view device_class) {
  return device_class == "cpu" || device_class == "gpu-discrete" || device_class == "gpu-integrated" ||
         device_class == "gpu-cpu";
}

namespace {

double host_threads(int threads) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<double>(threads > 0 ? static_cast<unsigned>(threads) : hw);
}

void set(DelegateCosts& c, OpClass k, double gflops, double gbps) { c.rate(k) = {gflops, gbps}; }

// Host cores running XNNPACK: ~40 GFLOP/s per core on convolutions, scaling
// a little below linearly; memory-bound classes saturate a socket early.
DelegateCosts host_cores(double t) {
  const double scale = t <= 1 ? 1 : std::pow(t, 0.85);
  DelegateCosts c;
  set(c, OpClass::kConv, 40 * scale, 20 * scale);
  set(c, OpClass::kMatMul, 30 * scale, 20 * scale);
  set(c, OpClass::kElementwise, 3 * scale, std::min(6 * scale, 40.0));
  set(c, OpClass::kReduce, 2 * scale, std::min(4 * scale, 30.0));
  set(c, OpClass::kMovement, 1e3, std::min(4 * scale, 30.0));
  set(c, OpClass::kFree, 1e3, 1e3);
  c.dispatch_us = t <= 1 ? 1 : 3;
  c.island_us = 5;
  c.edge_gbps = std::min(5 * scale, 40.0);
  return c;
}

DelegateCosts gpu(double conv, double matmul, double ew_gflops, double bandwidth, double dispatch_us, double island_us) {
  DelegateCosts c;
  set(c, OpClass::kConv, conv, bandwidth);
  set(c, OpClass::kMatMul, matmul, bandwidth);
  set(c, OpClass::kElementwise, ew_gflops, bandwidth);
  set(c, OpClass::kReduce, ew_gflops / 2, bandwidth / 2);
  set(c, OpClass::kMovement, 1e4, bandwidth / 2);
  set(c, OpClass::kFree, 1e4, 1e4);
  c.dispatch_us = dispatch_us;
  c.island_us = island_us;
  return c;
}

}  // namespace

DelegateCosts builtin_delegate_costs(std::string_view delegate, std::string_view device_class, int threads) {
  DelegateCosts c;
  if (device_class == "gpu-discrete") c = gpu(15000, 8000, 5000, 1500, 3, 25);
  else if (device_class == "gpu-integrated") c = gpu(1000, 800, 200, 60, 10, 40);
  else if (device_class == "gpu-cpu") {
    // A software rasteriser on the host's cores: slower than XNNPACK on them
    // and a much larger fixed cost per dispatch.
    const double cores = host_threads(0);
    c = gpu(8 * cores, 8 * cores, 1 * cores, 3 * cores, 500, 500);
  } else {
    c = host_cores(host_threads(threads));
  }
  if (delegate == "vgf") {
    // The data-graph emulation runs generic TOSA kernels: convolutions and
    // matmuls several times slower than the Vulkan delegate's tuned ones.
    c.rate(OpClass::kConv).gflops *= 0.15;
    c.rate(OpClass::kMatMul).gflops *= 0.3;
    c.dispatch_us *= 2;
  }
  return c;
}

std::array<TransferCost, kNumCutKinds> builtin_transfer_costs(std::string_view device_class) {
  std::array<TransferCost, kNumCutKinds> t{};
  const auto fill = [&](TransferCost up, TransferCost back, TransferCost copy, TransferCost layout) {
    t[static_cast<size_t>(CutKind::kUpload)] = up;
    t[static_cast<size_t>(CutKind::kReadback)] = back;
    t[static_cast<size_t>(CutKind::kDeviceCopy)] = copy;
    t[static_cast<size_t>(CutKind::kLayoutConversion)] = layout;
  };
  if (device_class == "gpu-discrete") fill({10, 20}, {30, 10}, {8, 500}, {8, 300});
  else if (device_class == "gpu-integrated") fill({5, 10}, {10, 10}, {5, 50}, {5, 30});
  else if (device_class == "gpu-cpu") fill({5, 8}, {10, 8}, {10, 8}, {20, 3});
  t[static_cast<size_t>(CutKind::kAlias)] = {0, 1e9};
  return t;
}

}  // namespace hetsched
