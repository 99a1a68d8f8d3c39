#include "graph/op_schema.h"

namespace hetsched {

void register_nn_ops(OpSchemaTable& table) { (void)table; }

}  // namespace hetsched
