// Session::run_device: a request on the caller's GPU buffers
// (scheduler/device_io.h), and the load-time check of which models can run so.
#include <spdlog/spdlog.h>

#include "scheduler/session.h"

namespace hetsched {

namespace {
const std::string kRefused = "failed to run on GPU buffers: ";
}  // namespace

// Every model input must reach the GPU only through uploads and every output
// leave it only through readbacks (which the device-I/O copies replace), on
// one context, under timeline sync.
void Session::check_device_io() {
  if (lanes_.empty()) return;
  const Lane& lane = *lanes_.front();
  const auto refuse = [&](const std::string& why) {
    if (device_io_refusal_.empty()) device_io_refusal_ = why;
  };
  const auto island_name = [&](size_t i) {
    return "island " + std::to_string(program_.islands[i].id) + " (" + program_.islands[i].delegate + ")";
  };
  if (sync_ != SyncMode::kTimeline) refuse("it needs scheduler sync mode timeline");
  for (const std::vector<int>* list : {&program_.inputs, &program_.outputs})
    for (int t : *list)
      for (size_t i = 0; i < program_.islands.size(); ++i)
        if (!device_island_[i] && index_of(program_.islands[i].inputs, t) >= 0)
          refuse("'" + program_.tensors[t].name + "' is read by " + island_name(i) + " on the host");
  for (int t : program_.outputs) {
    const std::string& name = program_.tensors[t].name;
    bool constant = false;
    for (const auto& [c, data] : program_.constants) constant = constant || c == t;
    if (index_of(program_.inputs, t) >= 0 || constant)
      refuse("output '" + name + "' is a model input or a constant, which no GPU island writes");
    for (size_t i = 0; i < program_.islands.size(); ++i)
      if (!device_island_[i] && index_of(program_.islands[i].outputs, t) >= 0)
        refuse("output '" + name + "' is written by " + island_name(i) + " on the host");
  }
  for (size_t s = 0; s < program_.steps.size(); ++s) {
    const StepRunner* variant = lane.device_io_runners[s].get();
    if (!variant) continue;
    if (device_io_context_ && variant->context() != device_io_context_)
      refuse("its inputs and outputs are on two GPU contexts");
    device_io_context_ = variant->context();
  }
  if (!device_io_context_) refuse("no GPU island reads its inputs or writes its outputs");
  if (!device_io_refusal_.empty()) device_io_context_ = nullptr;
}

Result<uint64_t> Session::run_device(const DeviceRunRequest& request, RunStats* stats) {
  if (!device_io_refusal_.empty()) return failed_precondition(kRefused + device_io_refusal_);
  const auto check = [&](const char* what, const std::vector<DeviceBufferRange>& given,
                         const std::vector<int>& wanted) -> Status {
    if (given.size() != wanted.size())
      return invalid_argument(kRefused + "the model has " + std::to_string(wanted.size()) + " " + what + "s, got " +
                              std::to_string(given.size()) + " buffers");
    for (size_t i = 0; i < given.size(); ++i) {
      const ProgramTensor& t = program_.tensors[wanted[i]];
      if (!given[i].buffer || given[i].size != t.type.byte_size())
        return invalid_argument(kRefused + what + " '" + t.name + "' (" + t.type.to_string() + ") needs " +
                                std::to_string(t.type.byte_size()) + " bytes of a VkBuffer, got " +
                                (given[i].buffer ? std::to_string(given[i].size) + " bytes" : "VK_NULL_HANDLE"));
    }
    return Status::ok();
  };
  HS_RETURN_IF_ERROR(check("input", request.inputs, program_.inputs));
  HS_RETURN_IF_ERROR(check("output", request.outputs, program_.outputs));

  DeviceIoRequest io;
  io.by_tensor.resize(program_.tensors.size());
  for (size_t i = 0; i < request.inputs.size(); ++i) io.by_tensor[program_.inputs[i]] = request.inputs[i];
  for (size_t k = 0; k < request.outputs.size(); ++k) io.by_tensor[program_.outputs[k]] = request.outputs[k];

  RunStats own_stats;
  if (!stats && !trace_path_.empty()) stats = &own_stats;
  Lane* lane = acquire_lane();
  const auto start = std::chrono::steady_clock::now();
  const int64_t id = next_request_++;
  if (stats) {
    *stats = RunStats{};
    stats->request = id;
    stats->start_ms = std::chrono::duration<double, std::milli>(start - epoch_).count();
  }
  GpuTransfers* transfers = nullptr;
  for (const auto& t : lane->transfers)
    if (&t->context() == device_io_context_) transfers = t.get();
  const auto run = [&]() -> Result<uint64_t> {
    if (!transfers) return internal_error(kRefused + "the lane has no transfers on the GPU context");
    io.inputs_ready = request.timeline_wait;
    if (request.wait.semaphore) {
      // The caller's semaphore joined to the timeline, where the input copies wait.
      HS_ASSIGN_OR_RETURN(const uint64_t joined, transfers->submit_join(request.wait, request.timeline_wait, {}));
      io.inputs_ready = joined;
    }
    lane->device_io = &io;
    const ExecutorConfig config{&program_, &graph_, sync_, epoch_, &clocks_};
    Status status = run_request(config, *lane, id, stats);
    lane->device_io = nullptr;
    HS_RETURN_IF_ERROR(status);
    // The outputs are written (the executor waited for its GPU work): signal
    // the caller's semaphore, and a timeline value for callers that wait there.
    return transfers->submit_join({}, 0, request.signal);
  };
  Result<uint64_t> done = run();
  release_lane(lane);
  if (!done.is_ok()) return done.status();
  if (stats) stats->total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!trace_path_.empty()) {
    std::lock_guard lock(trace_mutex_);
    if (Status s = write_trace(*stats, trace_path_); !s.is_ok()) spdlog::warn("[sched] {}", s.message());
  }
  return done;
}

}  // namespace hetsched
