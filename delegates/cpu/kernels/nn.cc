#include "delegates/cpu/kernel.h"

namespace hetsched::cpu {

void register_nn_kernels(KernelTable& table) { (void)table; }

}  // namespace hetsched::cpu
