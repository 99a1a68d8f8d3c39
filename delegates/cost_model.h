// The cost model the `auto` policy plans with: how long a node takes on a
// delegate, and how long a value takes to cross from one delegate's memory
// to another's. Figures are per machine: `hetsched calibrate` measures them
// into a costs file (profile key partition.costs); without one, built-in
// defaults per device class are used (builtin_costs).
//
//   node time   = max(flops / class FLOP rate, bytes / class bandwidth) + dispatch
//   island time = Σ node times + island overhead (launch, submit, completion)
//   handoff     = latency + bytes / bandwidth, by kind
// A node whose op signature was measured (DelegateCosts::measured_us) takes
// its measured time instead of the roofline (dispatch included).
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>

#include "graph/op_work.h"

namespace hetsched {

struct ClassRate {
  double gflops = 1;  // GFLOP/s
  double gbps = 1;    // GB/s (10^9 bytes)
};

// One delegate on one machine.
struct DelegateCosts {
  std::array<ClassRate, kNumOpClasses> classes{};  // by OpClass
  double dispatch_us = 0;  // per node that does work (kFree nodes cost nothing)
  double island_us = 0;    // per island: launch, submit and completion
  // Host delegates copy an island's inputs in from, and its outputs out to,
  // the request's buffers: bytes per second of those edge copies, paid on
  // the delegate's own cores. 0: no such copies (device delegates, whose
  // edges are the handoffs).
  double edge_gbps = 0;
  // Node times measured on this machine (`hetsched calibrate --model`), by
  // op_signature (graph/op_work.h), in µs: they replace the roofline for
  // every node with that signature, in any model.
  std::map<std::string, double, std::less<>> measured_us;
  const ClassRate& rate(OpClass c) const { return classes[static_cast<size_t>(c)]; }
  ClassRate& rate(OpClass c) { return classes[static_cast<size_t>(c)]; }
};

// How a value crosses between islands (the kinds the preview prints).
enum class CutKind : uint8_t { kUpload, kReadback, kDeviceCopy, kLayoutConversion, kAlias };
inline constexpr int kNumCutKinds = 5;
inline constexpr std::array<CutKind, kNumCutKinds> kAllCutKinds = {
    CutKind::kUpload, CutKind::kReadback, CutKind::kDeviceCopy, CutKind::kLayoutConversion, CutKind::kAlias};
// "upload", "readback", "device_copy", "layout_conversion", "alias".
std::string_view cut_kind_name(CutKind kind);

struct TransferCost {
  double latency_us = 0;
  double gbps = 1;
  double seconds(double bytes) const { return latency_us * 1e-6 + bytes / (gbps * 1e9); }
};

struct CostTable {
  // Where the figures come from, for the preview: "built-in defaults (cpu:
  // cpu, vulkan: gpu-cpu)" or "calibrated: costs.yaml".
  std::string source;
  std::map<std::string, DelegateCosts, std::less<>> delegates;  // by delegate name
  std::array<TransferCost, kNumCutKinds> transfers{};           // by CutKind
  const TransferCost& transfer(CutKind k) const { return transfers[static_cast<size_t>(k)]; }
  TransferCost& transfer(CutKind k) { return transfers[static_cast<size_t>(k)]; }
};

// Roofline time of `work` on a delegate with `costs`, dispatch included.
double node_seconds(const DelegateCosts& costs, const OpWork& work);

// Device classes a delegate reports (Delegate::device_class): "cpu" (host
// cores), "gpu-discrete", "gpu-integrated", "gpu-cpu" (a Vulkan device that
// runs on the host's cores, like lavapipe).
bool is_known_device_class(std::string_view device_class);

// Built-in figures for `delegate` ("cpu", "vulkan", "vgf") on a device of
// `device_class`, with `threads` host threads (cpu delegate; 0 = all).
// Rough by design: calibrate for real numbers.
DelegateCosts builtin_delegate_costs(std::string_view delegate, std::string_view device_class, int threads);
// Built-in handoff figures for a GPU of `device_class` ("" when no GPU).
std::array<TransferCost, kNumCutKinds> builtin_transfer_costs(std::string_view device_class);

}  // namespace hetsched
