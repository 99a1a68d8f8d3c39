#include "graph/op_schema.h"

namespace hetsched {

void register_tensor_ops(OpSchemaTable& table) { (void)table; }

}  // namespace hetsched
