#include "delegates/cpu/xnnpack/xnnpack_library.h"

#include <atomic>
#include <string>

namespace hetsched::cpu::xnnpack {

namespace {

std::atomic<bool> g_simulate_unavailable{false};

std::string_view status_name(enum xnn_status status) {
  switch (status) {
    case xnn_status_success:
      return "xnn_status_success";
    case xnn_status_uninitialized:
      return "xnn_status_uninitialized";
    case xnn_status_invalid_parameter:
      return "xnn_status_invalid_parameter";
    case xnn_status_invalid_state:
      return "xnn_status_invalid_state";
    case xnn_status_unsupported_parameter:
      return "xnn_status_unsupported_parameter";
    case xnn_status_unsupported_hardware:
      return "xnn_status_unsupported_hardware";
    case xnn_status_out_of_memory:
      return "xnn_status_out_of_memory";
  }
  return "xnn_status_unknown";
}

}  // namespace

Status check_xnn(enum xnn_status status, std::string_view call) {
  if (status == xnn_status_success) return Status::ok();
  const std::string message = std::string(call) + ": " + std::string(status_name(status));
  if (status == xnn_status_unsupported_parameter || status == xnn_status_unsupported_hardware)
    return unsupported(message);
  return internal_error(message);
}

Status ensure_initialized() {
  if (g_simulate_unavailable.load()) return unsupported("xnn_initialize: xnn_status_unsupported_hardware (simulated)");
  // XNNPACK is never deinitialised: its state lives as long as the process,
  // like the runtimes that islands may keep until exit.
  static const Status status = check_xnn(xnn_initialize(nullptr), "xnn_initialize");
  return status;
}

void simulate_unavailable_for_testing(bool unavailable) { g_simulate_unavailable.store(unavailable); }

Result<Threadpool> make_threadpool(int threads) {
  pthreadpool_t pool = pthreadpool_create(static_cast<size_t>(threads < 0 ? 0 : threads));
  if (!pool) return internal_error("pthreadpool_create: failed to create a pool of " + std::to_string(threads) + " threads");
  return Threadpool(pool, pthreadpool_destroy);
}

}  // namespace hetsched::cpu::xnnpack
