#include "delegates/cpu/kernel.h"

namespace hetsched::cpu {

void register_tensor_kernels(KernelTable& table) { (void)table; }

}  // namespace hetsched::cpu
