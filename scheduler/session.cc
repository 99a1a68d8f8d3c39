#include "scheduler/session.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

#include "partitioner/preview.h"

namespace hetsched {

Session::Session(Program program, DelegateSet delegates, SyncMode sync)
    : program_(std::move(program)), sync_(sync), delegates_(std::move(delegates)) {}

Session::~Session() {
  // GPU work of a failed run may still be in flight; let it finish before
  // buffers go away.
  for (const auto& gpu : gpus_) (void)gpu->context().wait_idle();
}

Result<std::unique_ptr<Session>> Session::create(Program program, const Profile& profile) {
  HS_RETURN_IF_ERROR(validate_program(program));
  HS_ASSIGN_OR_RETURN(DelegateSet delegates, DelegateSet::create(profile));
  auto session = std::unique_ptr<Session>(new Session(std::move(program), std::move(delegates), profile.sync));
  HS_RETURN_IF_ERROR(session->init_islands(profile));
  HS_RETURN_IF_ERROR(session->check_sync_mode());
  for (const ProgramTensor& t : session->program_.tensors) session->slots_.emplace_back(t.type);
  for (const auto& [idx, data] : session->program_.constants) session->slots_[idx] = data;
  HS_RETURN_IF_ERROR(session->prepare_steps());
  return session;
}

Status Session::init_islands(const Profile& profile) {
  for (const ProgramIsland& island : program_.islands) {
    Delegate* delegate = delegates_.find(island.delegate);
    if (!delegate)
      return failed_precondition("failed to load island " + std::to_string(island.id) + ": it runs on '" +
                                 island.delegate + "', which profile '" + profile.name + "' does not enable");
    InitContext ctx{delegate_options(profile, island.delegate), island.id};
    auto handle = delegate->init(island.blob, ctx);
    if (!handle.is_ok()) return handle.status();
    handles_.push_back(std::move(handle).value());
  }
  return Status::ok();
}

// sync: none submits GPU steps with no waits between them. That is only sound
// when no GPU step consumes another's output; otherwise refuse at load.
Status Session::check_sync_mode() const {
  if (sync_ != SyncMode::kNone) return Status::ok();
  for (const ProgramStep& step : program_.steps)
    if (step.kind == StepKind::kHandoff && step.handoff == HandoffKind::kDeviceCopy)
      return failed_precondition("sync mode 'none' cannot run this program: " + step.to + " reads '" +
                                 program_.tensors[step.tensor].name + "' from " + step.from +
                                 " on the shared queue (use timeline or queue_wait_idle)");
  return Status::ok();
}

Result<ExecutorGpu*> Session::gpu_for(const std::shared_ptr<SharedGpuContext>& context) {
  for (const auto& gpu : gpus_)
    if (&gpu->context() == context.get()) return gpu.get();
  HS_ASSIGN_OR_RETURN(auto gpu, ExecutorGpu::create(context));
  gpus_.push_back(std::move(gpu));
  return gpus_.back().get();
}

namespace {
// Position of `tensor` in `list`, or -1.
int position(const std::vector<int>& list, int tensor) {
  for (size_t i = 0; i < list.size(); ++i)
    if (list[i] == tensor) return static_cast<int>(i);
  return -1;
}
}  // namespace

// Turns each handoff step of the program into a runner bound to the island
// buffers it moves data between.
Status Session::prepare_steps() {
  handoffs_.resize(program_.steps.size());
  // The device island that last wrote each tensor (for device copies).
  std::vector<int> producer(program_.tensors.size(), -1);
  for (size_t i = 0; i < program_.islands.size(); ++i)
    for (int t : program_.islands[i].outputs) producer[t] = static_cast<int>(i);

  const auto device_end = [this](int island, int tensor, bool input) -> Result<DeviceEnd> {
    const ProgramIsland& pi = program_.islands[island];
    const int pos = position(input ? pi.inputs : pi.outputs, tensor);
    IslandHandle& handle = *handles_[island];
    const DeviceTensor* dt = pos < 0 ? nullptr : (input ? handle.device_input(pos) : handle.device_output(pos));
    if (!dt || !handle.gpu_context())
      return failed_precondition("failed to plan handoff of '" + program_.tensors[tensor].name + "': island " +
                                 std::to_string(island) + " (" + pi.delegate + ") has no device buffer for it");
    HS_ASSIGN_OR_RETURN(ExecutorGpu * gpu, gpu_for(handle.gpu_context()));
    return DeviceEnd{island, dt, gpu};
  };

  for (size_t s = 0; s < program_.steps.size(); ++s) {
    const ProgramStep& step = program_.steps[s];
    if (step.kind != StepKind::kHandoff) continue;
    const ProgramTensor& t = program_.tensors[step.tensor];
    const std::string label = std::string(handoff_kind_name(step.handoff)) + " '" + t.name + "' " + step.from + " → " + step.to;
    switch (step.handoff) {
      case HandoffKind::kUpload: {
        HS_ASSIGN_OR_RETURN(DeviceEnd to, device_end(step.island, step.tensor, true));
        handoffs_[s] = make_upload(step.tensor, t.type, to, label);
        break;
      }
      case HandoffKind::kReadback: {
        HS_ASSIGN_OR_RETURN(DeviceEnd from, device_end(step.island, step.tensor, false));
        handoffs_[s] = make_readback(step.tensor, t.type, from, label);
        break;
      }
      case HandoffKind::kDeviceCopy: {
        if (producer[step.tensor] < 0)
          return failed_precondition("failed to plan " + label + ": no device island writes it");
        HS_ASSIGN_OR_RETURN(DeviceEnd from, device_end(producer[step.tensor], step.tensor, false));
        HS_ASSIGN_OR_RETURN(DeviceEnd to, device_end(step.island, step.tensor, true));
        HS_ASSIGN_OR_RETURN(handoffs_[s], make_device_copy(step.tensor, t.type, from, to, label));
        break;
      }
      case HandoffKind::kHostCopy:
        break;  // host islands share the host slots: nothing moves
    }
  }
  return Status::ok();
}

std::vector<TensorType> Session::input_types() const {
  std::vector<TensorType> types;
  for (int i : program_.inputs) types.push_back(program_.tensors[i].type);
  return types;
}

std::vector<TensorType> Session::output_types() const {
  std::vector<TensorType> types;
  for (int i : program_.outputs) types.push_back(program_.tensors[i].type);
  return types;
}

std::vector<std::string> Session::input_names() const {
  std::vector<std::string> names;
  for (int i : program_.inputs) names.push_back(program_.tensors[i].name);
  return names;
}

std::vector<std::string> Session::output_names() const {
  std::vector<std::string> names;
  for (int i : program_.outputs) names.push_back(program_.tensors[i].name);
  return names;
}

Status Session::write_trace(const RunStats& stats, const std::string& path) {
  std::ofstream f(path, std::ios::trunc);
  if (!f) return not_found("failed to write trace '" + path + "': " + std::strerror(errno));
  // Chrome trace event format: complete events ("ph":"X") in microseconds,
  // one thread id per resource so each gets its own track.
  std::map<std::string, int> tids;
  f << "{\"traceEvents\": [\n";
  bool first = true;
  for (const StepTiming& step : stats.steps) {
    const int tid = tids.emplace(step.resource, static_cast<int>(tids.size()) + 1).first->second;
    f << (first ? "" : ",\n") << "  {\"name\": " << json_quote(step.label) << ", \"ph\": \"X\", \"pid\": 1, \"tid\": " << tid
      << ", \"ts\": " << step.start_ms * 1000.0 << ", \"dur\": " << step.ms * 1000.0 << "}";
    first = false;
  }
  for (const auto& [resource, tid] : tids)
    f << ",\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " << tid
      << ", \"args\": {\"name\": " << json_quote(resource) << "}}";
  f << "\n]}\n";
  if (!f) return internal_error("failed to write trace '" + path + "': write error");
  return Status::ok();
}

Status Session::run_island(int index, RunState& state, RunStats* stats) {
  const auto t0 = std::chrono::steady_clock::now();
  const ProgramIsland& island = program_.islands[index];
  IslandHandle& handle = *handles_[index];
  ExecContext ctx;
  ctx.run_index = run_count_;
  std::vector<TensorRef> in_refs, out_refs;
  SharedGpuContext* context = handle.gpu_context().get();
  if (context) {
    // Wait on the device for every input copied in by an earlier GPU step.
    uint64_t wait_for = 0;
    for (int t : island.inputs) {
      auto it = state.ready.find({t, index});
      if (it != state.ready.end()) wait_for = std::max(wait_for, it->second);
    }
    ctx.gpu = plan_gpu_step(sync_, wait_for);
  } else {
    for (int t : island.inputs) in_refs.push_back({&slots_[t].type(), slots_[t].raw()});
    for (int t : island.outputs) out_refs.push_back({&slots_[t].type(), slots_[t].raw()});
  }
  Status s = handle.execute(ctx, in_refs, out_refs);
  if (!s.is_ok()) return s.with_context("island " + std::to_string(island.id) + " (" + island.delegate + "): ");
  if (context) {
    if (ctx.signalled_value) {
      for (int t : island.outputs) state.ready[{t, index}] = ctx.signalled_value;
      uint64_t& last = state.last_signalled[context];
      last = std::max(last, ctx.signalled_value);
    }
    if (ctx.gpu.queue_wait_idle_after) state.host_waits++;
  }
  if (stats) {
    const double end = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - run_start_).count();
    const double took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    stats->steps.push_back({"island " + std::to_string(island.id) + " (" + island.delegate + ")",
                            delegates_.find(island.delegate)->resource(), end - took, took});
  }
  return Status::ok();
}

Result<std::vector<Tensor>> Session::run(const std::vector<Tensor>& inputs, RunStats* stats) {
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  const auto run_start = Clock::now();
  run_start_ = run_start;
  if (inputs.size() != program_.inputs.size())
    return invalid_argument("failed to run: the model takes " + std::to_string(program_.inputs.size()) +
                            " inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ProgramTensor& want = program_.tensors[program_.inputs[i]];
    if (inputs[i].type() != want.type)
      return invalid_argument("failed to run: input '" + want.name + "' must be " + want.type.to_string() + ", got " +
                              inputs[i].type().to_string());
    std::memcpy(slots_[program_.inputs[i]].raw(), inputs[i].raw(), inputs[i].byte_size());
  }

  RunState state;
  state.mode = sync_;
  state.slots = &slots_;
  for (size_t i = 0; i < program_.steps.size(); ++i) {
    const ProgramStep& step = program_.steps[i];
    const auto t0 = Clock::now();
    if (step.kind == StepKind::kRunIsland) {
      HS_RETURN_IF_ERROR(run_island(step.island, state, stats));
    } else if (handoffs_[i]) {
      Status s = handoffs_[i]->run(state);
      if (!s.is_ok()) return s.with_context("failed to " + handoffs_[i]->label() + ": ");
      if (stats)
        stats->steps.push_back({handoffs_[i]->label(), "handoffs",
                                std::chrono::duration<double, std::milli>(t0 - run_start).count(), ms_since(t0)});
    }
  }
  // Outputs were read back by their readback steps; anything still in flight
  // (a GPU island whose outputs nobody reads) is waited for before returning.
  for (const auto& [context, value] : state.last_signalled) {
    const uint64_t wait = plan_host_wait(sync_, HostWaitPoint::kEndOfRun, value);
    if (wait == 0) continue;
    HS_RETURN_IF_ERROR(context->wait(wait));
    state.host_waits++;
  }
  run_count_++;
  if (stats) stats->host_waits = state.host_waits;

  std::vector<Tensor> outputs;
  for (int i : program_.outputs) outputs.push_back(slots_[i]);
  if (stats) stats->total_ms = ms_since(run_start);
  return outputs;
}

}  // namespace hetsched
