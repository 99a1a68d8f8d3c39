// Portable CPU kernels: the reference implementation of every op.
//
// Kernels are written for clarity first — they are the correctness oracle
// for the other delegates — and split over the CPU delegate's thread pool
// where that pays (conv, matmul, large elementwise; kernels/kernel_util.h's
// parallel_chunks). Each op family registers its kernels
// from its own file under kernels/ through one register_* function listed in
// kernel_table.cc.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>

#include "graph/graph.h"
#include "graph/tensor.h"
#include "hetsched/status.h"

namespace hetsched::cpu {

// What a kernel sees. Inputs may be nullptr for omitted optional inputs.
// Outputs are allocated by the caller with the types from shape inference.
struct KernelContext {
  const Node& node;
  std::span<const Tensor* const> inputs;
  std::span<Tensor* const> outputs;
  int opset = 17;

  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  const Tensor& in(size_t i) const { return *inputs[i]; }
  Tensor& out(size_t i) const { return *outputs[i]; }
  const Attributes& attrs() const { return node.attrs; }
  Status error(const std::string& what) const {
    return invalid_argument("node '" + node.name + "' (" + node.op + "): " + what);
  }
};

using KernelFn = std::function<Status(const KernelContext&)>;
using KernelTable = std::map<std::string, KernelFn, std::less<>>;

void register_elementwise_kernels(KernelTable& table);  // kernels/elementwise.cc
void register_nn_kernels(KernelTable& table);           // kernels/nn.cc (+ conv.cc, pool.cc, matmul.cc as needed)
void register_tensor_kernels(KernelTable& table);       // kernels/tensor.cc
void register_extra_kernels(KernelTable& table);        // kernels/extra*.cc: the ops of graph/ops_extra.cc
void register_activation_kernels(KernelTable& table);   // kernels/activation.cc: graph/ops_activation.cc
void register_misc_kernels(KernelTable& table);         // kernels/misc.cc: graph/ops_misc.cc
void register_recurrent_kernels(KernelTable& table);    // kernels/recurrent.cc: graph/ops_recurrent.cc
void register_quant_kernels(KernelTable& table);        // kernels/quant.cc: graph/ops_quant.cc

const KernelTable& kernel_table();
const KernelFn* find_kernel(std::string_view op);

}  // namespace hetsched::cpu
