#include "delegates/cpu/kernel.h"

namespace hetsched::cpu {

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
    register_elementwise_kernels(t);
    register_nn_kernels(t);
    register_tensor_kernels(t);
    register_extra_kernels(t);
    register_activation_kernels(t);
    register_misc_kernels(t);
    register_recurrent_kernels(t);
    register_quant_kernels(t);
    return t;
  }();
  return table;
}

const KernelFn* find_kernel(std::string_view op) {
  const auto& t = kernel_table();
  auto it = t.find(op);
  return it == t.end() ? nullptr : &it->second;
}

}  // namespace hetsched::cpu
