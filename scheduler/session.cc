#include "scheduler/session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "scheduler/compiler.h"
#include "scheduler/handoff.h"

namespace hetsched {

Session::Session(Program program, DelegateSet delegates, const Profile& profile)
    : program_(std::move(program)),
      sync_(profile.sync),
      trace_path_(profile.trace_path),
      gpu_wait_timeout_(std::chrono::milliseconds(profile.gpu_wait_timeout_ms)),
      delegates_(std::move(delegates)) {}

Session::~Session() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_changed_.notify_all();
  for (std::thread& t : workers_) t.join();
  // GPU work of a failed run may still be in flight; let it finish before
  // buffers go away.
  for (const auto& context : contexts_) (void)context->wait_idle();
}

namespace {
// With several requests in flight, the threads driving the other lanes
// submit GPU work and wait on it while a CPU island runs; a CPU pool of every
// core then loses a worker to them at every parallel op (measured on a
// 16-core host: cpu_gpu_cpu at 4 in flight ran 0.72x the throughput of 1 in
// flight with 16 CPU threads, 1.62x with 12). So `threads: 0` (all cores)
// leaves one core per extra lane; an explicit thread count is kept.
Profile with_lane_threads(Profile profile) {
  auto cpu = profile.delegates.find("cpu");
  if (cpu == profile.delegates.end() || cpu->second.threads != 0 || profile.max_in_flight <= 1) return profile;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu->second.threads = std::max(1, cores - (profile.max_in_flight - 1));
  return profile;
}
}  // namespace

Result<std::unique_ptr<Session>> Session::create(Program program, const Profile& requested) {
  HS_RETURN_IF_ERROR(validate_program(program));
  if (requested.max_in_flight < 1)
    return invalid_argument("failed to open session: scheduler.max_in_flight must be at least 1, got " +
                            std::to_string(requested.max_in_flight));
  const Profile profile = with_lane_threads(requested);
  HS_ASSIGN_OR_RETURN(DelegateSet delegates, DelegateSet::create(profile));
  auto session = std::unique_ptr<Session>(new Session(std::move(program), std::move(delegates), profile));
  HS_RETURN_IF_ERROR(session->init_shared_islands(profile));
  HS_RETURN_IF_ERROR(session->check_sync_mode());
  if (session->program_.memory.domains.empty() || session->sync_ == SyncMode::kNone) {
    // A program without a plan (format 1, or built in code) is planned now;
    // under sync none, GPU steps do not wait for each other: plan again
    // without device reuse.
    Program& program = session->program_;
    HS_ASSIGN_OR_RETURN(const auto needs, device_memory_needs(program, session->delegates_));
    Status planned = plan_memory(program, session->delegates_, needs, session->sync_);
    if (!planned.is_ok()) return planned.with_context("failed to open session: ");
  }
  session->plan_outputs();
  session->graph_ = build_step_graph(session->program_, session->device_island_);
  for (int i = 0; i < profile.max_in_flight; ++i) {
    HS_ASSIGN_OR_RETURN(auto lane, session->make_lane(profile));
    session->lanes_.push_back(std::move(lane));
  }
  // Every island is initialised and delegates keep what they need: the
  // blobs (a model's weights, once more) are not read again.
  for (ProgramIsland& island : session->program_.islands) Blob().swap(island.blob);
  session->check_device_io();
  HS_RETURN_IF_ERROR(session->calibrate_clocks());
  for (auto& lane : session->lanes_) session->free_lanes_.push_back(lane.get());
  return session;
}

// Host islands are made once and shared by every lane; device islands are
// made per lane (make_lane), but the first tells us which islands are which.
Status Session::init_shared_islands(const Profile& profile) {
  for (const ProgramIsland& island : program_.islands) {
    Delegate* delegate = delegates_.find(island.delegate);
    if (!delegate)
      return failed_precondition("failed to load island " + std::to_string(island.id) + ": it runs on '" +
                                 island.delegate + "', which profile '" + profile.name + "' does not enable");
    const bool device = delegate->memory_kind() == MemoryDomain::Kind::kDevice;
    device_island_.push_back(device);
    if (device) {
      shared_handles_.push_back(nullptr);
      continue;
    }
    InitContext ctx{delegate_options(profile, island.delegate), island.id};
    ctx.profile_ops = profile.profile_ops;
    HS_ASSIGN_OR_RETURN(auto handle, delegate->init(island.blob, ctx));
    shared_handles_.push_back(std::move(handle));
    auto& lock = resource_locks_[delegate->resource()];
    if (!lock) lock = std::make_unique<std::mutex>();
  }
  return Status::ok();
}

// sync: none submits GPU steps with no waits between them. That is only sound
// when no GPU step consumes another's output; otherwise refuse at load.
Status Session::check_sync_mode() const {
  if (sync_ != SyncMode::kNone) return Status::ok();
  for (const ProgramStep& step : program_.steps)
    if (step.kind == StepKind::kHandoff &&
        (step.handoff == HandoffKind::kDeviceCopy || step.handoff == HandoffKind::kAlias))
      return failed_precondition("sync mode 'none' cannot run this program: " + step.to + " reads '" +
                                 program_.tensors[step.tensor].name + "' from " + step.from +
                                 " on the shared queue (use timeline or queue_wait_idle)");
  return Status::ok();
}

Status Session::calibrate_clocks() {
  if (lanes_.empty()) return Status::ok();
  for (const auto& transfers : lanes_.front()->transfers) {
    if (!queue_has_timestamps(transfers->context())) continue;
    HS_ASSIGN_OR_RETURN(clocks_[&transfers->context()], calibrate_gpu_clock(transfers->pool()));
  }
  return Status::ok();
}

// Which output slot each model output fills: the first output naming a
// tensor that is neither a model input nor a constant gets the request's
// output memory as its slot; the others are copied after the run.
void Session::plan_outputs() {
  std::vector<bool> preset(program_.tensors.size(), false);
  for (int t : program_.inputs) preset[t] = true;
  for (const auto& [t, data] : program_.constants) preset[t] = true;
  output_fills_slot_.assign(program_.outputs.size(), false);
  for (size_t k = 0; k < program_.outputs.size(); ++k) {
    const int t = program_.outputs[k];
    output_fills_slot_[k] = !preset[t];
    preset[t] = true;
  }
}

Result<std::unique_ptr<Lane>> Session::make_lane(const Profile& profile) {
  const MemoryPlan& plan = program_.memory;
  auto lane = std::make_unique<Lane>();
  // Arenas: the host's, and one per GPU domain on the context its islands use.
  lane->host_arena = AlignedBuffer(std::max<uint64_t>(plan.domains[0].planned_bytes, 1));
  lane->device_arenas.resize(plan.domains.size());
  for (size_t d = 1; d < plan.domains.size(); ++d) {
    std::shared_ptr<SharedGpuContext> context;
    for (size_t i = 0; i < program_.islands.size() && !context; ++i) {
      if (plan.islands[i].domain != static_cast<int>(d) || !device_island_[i]) continue;
      HS_ASSIGN_OR_RETURN(context, delegates_.find(program_.islands[i].delegate)->gpu_context());
    }
    if (!context) continue;  // a domain no island of this profile uses
    Result<Buffer> arena = Buffer::create_arena(*context, plan.domains[d].planned_bytes);
    if (!arena.is_ok())
      return arena.status().with_context("failed to allocate the " + plan.domains[d].domain + " arena (" +
                                         std::to_string(plan.domains[d].planned_bytes) + " bytes): ");
    lane->device_arenas[d] = std::move(arena).value();
  }
  lane->device_handles.resize(program_.islands.size());
  for (size_t i = 0; i < program_.islands.size(); ++i) {
    if (!device_island_[i]) continue;
    const ProgramIsland& island = program_.islands[i];
    const IslandPlacementPlan& where = plan.islands[i];
    if (where.domain < 1 || !lane->device_arenas[where.domain].handle())
      return failed_precondition("failed to load island " + std::to_string(island.id) +
                                 ": the memory plan gives it no device arena (recompile the program)");
    const DevicePlacement placement{&lane->device_arenas[where.domain], where.scratch_offset, where.input_offsets,
                                    where.output_offsets};
    Delegate* delegate = delegates_.find(island.delegate);
    InitContext ctx{delegate_options(profile, island.delegate), island.id, &placement};
    ctx.profile_ops = profile.profile_ops;
    HS_ASSIGN_OR_RETURN(lane->device_handles[i], delegate->init(island.blob, ctx));
    if (!lane->device_handles[i]->gpu_context())
      return internal_error("failed to load island " + std::to_string(island.id) + ": delegate '" + island.delegate +
                            "' keeps device memory but its handle has no GPU context");
  }
  for (size_t t = 0; t < program_.tensors.size(); ++t) {
    const int64_t offset = plan.host_offsets[t];
    lane->slots.push_back({&program_.tensors[t].type, offset < 0 ? nullptr : lane->host_arena.data() + offset});
  }
  // Constants are read, never written: steps see them in place.
  for (auto& [idx, data] : program_.constants) lane->slots[idx].host = data.raw();
  HS_RETURN_IF_ERROR(bind_steps(*lane));
  return lane;
}

// Makes a runner for every step of the program, bound to `lane`'s tensors.
Status Session::bind_steps(Lane& lane) {
  const auto transfers_for = [&](const std::shared_ptr<SharedGpuContext>& context) -> Result<GpuTransfers*> {
    for (const auto& t : lane.transfers)
      if (&t->context() == context.get()) return t.get();
    HS_ASSIGN_OR_RETURN(auto t, GpuTransfers::create(context));
    lane.transfers.push_back(std::move(t));
    bool known = false;
    for (const auto& c : contexts_) known = known || c == context;
    if (!known) contexts_.push_back(context);
    return lane.transfers.back().get();
  };
  std::vector<int> producer(program_.tensors.size(), -1);
  for (size_t i = 0; i < program_.islands.size(); ++i)
    for (int t : program_.islands[i].outputs) producer[t] = static_cast<int>(i);
  // A model input's uploads and output's readbacks get a device-I/O variant
  // (run_device); where one cannot be made, run_device says why.
  lane.device_io_runners.resize(program_.steps.size());
  const auto device_io_variant = [&](size_t s, Result<std::unique_ptr<StepRunner>> made) {
    if (made.is_ok()) {
      lane.device_io_runners[s] = std::move(made).value();
    } else if (device_io_refusal_.empty()) {
      device_io_refusal_ = made.status().message();
    }
  };

  const auto device_end = [&](int island, int tensor, bool input) -> Result<DeviceEnd> {
    const ProgramIsland& pi = program_.islands[island];
    const int pos = index_of(input ? pi.inputs : pi.outputs, tensor);
    IslandHandle* handle = lane.device_handles[island].get();
    const DeviceTensor* dt = !handle || pos < 0 ? nullptr : (input ? handle->device_input(pos) : handle->device_output(pos));
    if (!dt)
      return failed_precondition("failed to plan handoff of '" + program_.tensors[tensor].name + "': island " +
                                 std::to_string(island) + " (" + pi.delegate + ") has no device buffer for it");
    HS_ASSIGN_OR_RETURN(GpuTransfers * transfers, transfers_for(handle->gpu_context()));
    return DeviceEnd{dt, transfers};
  };

  for (size_t s = 0; s < program_.steps.size(); ++s) {
    const ProgramStep& step = program_.steps[s];
    if (step.kind == StepKind::kRunIsland) {
      const ProgramIsland& island = program_.islands[step.island];
      Delegate* delegate = delegates_.find(island.delegate);
      IslandHandle* handle = device_island_[step.island] ? lane.device_handles[step.island].get()
                                                         : shared_handles_[step.island].get();
      if (device_island_[step.island]) HS_RETURN_IF_ERROR(transfers_for(handle->gpu_context()).status());
      auto lock = resource_locks_.find(delegate->resource());
      lane.runners.push_back(make_island_step(island, *handle, delegate->resource(),
                                              lock == resource_locks_.end() ? nullptr : lock->second.get()));
      continue;
    }
    const ProgramTensor& t = program_.tensors[step.tensor];
    const std::string label = std::string(handoff_kind_name(step.handoff)) + " '" + t.name + "' " + step.from + " → " + step.to;
    switch (step.handoff) {
      case HandoffKind::kUpload: {
        HS_ASSIGN_OR_RETURN(DeviceEnd to, device_end(step.island, step.tensor, true));
        HS_ASSIGN_OR_RETURN(auto runner, make_upload(step.tensor, t.type, to, label));
        lane.runners.push_back(std::move(runner));
        if (index_of(program_.inputs, step.tensor) >= 0)
          device_io_variant(s, make_device_input(step.tensor, t.type, to,
                                                 "device copy '" + t.name + "' caller's VkBuffer → " + step.to));
        break;
      }
      case HandoffKind::kReadback: {
        HS_ASSIGN_OR_RETURN(DeviceEnd from, device_end(step.island, step.tensor, false));
        HS_ASSIGN_OR_RETURN(auto runner, make_readback(step.tensor, t.type, from, label));
        lane.runners.push_back(std::move(runner));
        if (index_of(program_.outputs, step.tensor) >= 0)
          device_io_variant(s, make_device_output(step.tensor, t.type, from,
                                                  "device copy '" + t.name + "' " + step.from + " → caller's VkBuffer"));
        break;
      }
      case HandoffKind::kDeviceCopy: {
        if (producer[step.tensor] < 0 || !device_island_[producer[step.tensor]])
          return failed_precondition("failed to plan " + label + ": no device island writes it");
        HS_ASSIGN_OR_RETURN(DeviceEnd from, device_end(producer[step.tensor], step.tensor, false));
        HS_ASSIGN_OR_RETURN(DeviceEnd to, device_end(step.island, step.tensor, true));
        HS_ASSIGN_OR_RETURN(auto runner, make_device_copy(step.tensor, t.type, from, to, label));
        lane.runners.push_back(std::move(runner));
        break;
      }
      case HandoffKind::kAlias: {
        HS_ASSIGN_OR_RETURN(DeviceEnd to, device_end(step.island, step.tensor, true));
        lane.runners.push_back(make_alias_step(&to.transfers->context(), label + " (alias: no copy)"));
        break;
      }
      case HandoffKind::kHostCopy:
        lane.runners.push_back(make_noop_step(label));  // host islands share the host slots: nothing moves
        break;
    }
  }

  lane.host_write_waits.assign(program_.steps.size(), {});
  for (size_t s = 0; s < program_.steps.size(); ++s) {
    const StepRunner& r = *lane.runners[s];
    if (!r.writes_from_host()) continue;
    for (size_t a = 0; a < s; ++a)
      if (lane.runners[a]->kind() == StepRunner::Kind::kGpu && lane.runners[a]->context() == r.context() &&
          graph_.reaches(static_cast<int>(a), static_cast<int>(s)))
        lane.host_write_waits[s].push_back(static_cast<int>(a));
  }

  // Timestamp pairs for every step that submits GPU work (islands, device
  // copies, staged uploads; readbacks are timed on the host).
  std::map<const SharedGpuContext*, uint32_t> pairs;
  lane.timestamp_pair.assign(program_.steps.size(), -1);
  for (size_t s = 0; s < program_.steps.size(); ++s) {
    const StepRunner& r = *lane.runners[s];
    if (r.kind() == StepRunner::Kind::kGpu && r.context()) lane.timestamp_pair[s] = static_cast<int>(pairs[r.context()]++);
  }
  for (const auto& t : lane.transfers) {
    if (!queue_has_timestamps(t->context()) || !pairs.count(&t->context())) continue;
    HS_ASSIGN_OR_RETURN(lane.timestamps[&t->context()], GpuTimestamps::create(t->pool(), pairs[&t->context()]));
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

Lane* Session::acquire_lane() {
  std::unique_lock lock(lanes_mutex_);
  lane_freed_.wait(lock, [this] { return !free_lanes_.empty(); });
  Lane* lane = free_lanes_.back();
  free_lanes_.pop_back();
  return lane;
}

std::vector<std::pair<int, CommandStreamCounts>> Session::command_streams() const {
  std::vector<std::pair<int, CommandStreamCounts>> out;
  if (lanes_.empty()) return out;
  const Lane& lane = *lanes_.front();
  for (size_t i = 0; i < lane.device_handles.size() && i < program_.islands.size(); ++i)
    if (lane.device_handles[i])
      if (std::optional<CommandStreamCounts> c = lane.device_handles[i]->command_stream())
        out.emplace_back(program_.islands[i].id, *c);
  return out;
}

void Session::release_lane(Lane* lane) {
  {
    std::lock_guard lock(lanes_mutex_);
    free_lanes_.push_back(lane);
  }
  lane_freed_.notify_one();
}

Result<std::vector<Tensor>> Session::run(const std::vector<Tensor>& inputs, RunStats* stats) {
  std::vector<Tensor> outputs;
  outputs.reserve(program_.outputs.size());
  // Every byte is written by the run.
  for (int t : program_.outputs) outputs.push_back(Tensor::uninitialized(program_.tensors[t].type));
  HS_RETURN_IF_ERROR(run_into(inputs, outputs, stats));
  return outputs;
}

Status Session::run_into(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, RunStats* stats) {
  auto check = [](const char* what, const std::vector<Tensor>& given, const std::vector<int>& wanted,
                  const std::vector<ProgramTensor>& tensors) -> Status {
    if (given.size() != wanted.size())
      return invalid_argument(std::string("failed to run: the model has ") + std::to_string(wanted.size()) + " " +
                              what + "s, got " + std::to_string(given.size()));
    for (size_t i = 0; i < given.size(); ++i) {
      const ProgramTensor& want = tensors[wanted[i]];
      if (given[i].type() != want.type)
        return invalid_argument(std::string("failed to run: ") + what + " '" + want.name + "' must be " +
                                want.type.to_string() + ", got " + given[i].type().to_string());
    }
    return Status::ok();
  };
  HS_RETURN_IF_ERROR(check("input", inputs, program_.inputs, program_.tensors));
  HS_RETURN_IF_ERROR(check("output", outputs, program_.outputs, program_.tensors));
  // A lost device runs nothing more: refuse at once rather than run the
  // request's CPU steps and fail at its first submit.
  for (const auto& context : contexts_)
    if (Status lost = context->lost(); !lost.is_ok())
      return unavailable("failed to run: the GPU device '" + std::string(context->device_name()) +
                         "' was lost (" + lost.message() + "); open a new session");
  // logging.trace needs the events even when the caller does not ask.
  RunStats own_stats;
  if (!stats && !trace_path_.empty()) stats = &own_stats;
  const auto queued = std::chrono::steady_clock::now();
  Lane* lane = acquire_lane();
  const auto start = std::chrono::steady_clock::now();
  const int64_t request = next_request_++;
  if (stats) {
    *stats = RunStats{};
    stats->request = request;
    stats->start_ms = std::chrono::duration<double, std::milli>(start - epoch_).count();
    stats->queued_ms = std::chrono::duration<double, std::milli>(start - queued).count();
  }
  // Steps read the caller's inputs and write the outputs in place: no copies.
  // (Inputs are only read; TensorRef is the delegates' one tensor view.)
  for (size_t i = 0; i < inputs.size(); ++i)
    lane->slots[program_.inputs[i]].host = const_cast<std::byte*>(inputs[i].raw());
  for (size_t k = 0; k < program_.outputs.size(); ++k)
    if (output_fills_slot_[k]) lane->slots[program_.outputs[k]].host = outputs[k].raw();
  const ExecutorConfig config{&program_, &graph_, sync_, epoch_, &clocks_, gpu_wait_timeout_};
  Status status = run_request(config, *lane, request, stats);
  if (status.is_ok())
    for (size_t k = 0; k < program_.outputs.size(); ++k)
      if (!output_fills_slot_[k])
        std::memcpy(outputs[k].raw(), lane->slots[program_.outputs[k]].host, outputs[k].byte_size());
  release_lane(lane);
  if (!status.is_ok()) return status.with_context("failed to run request " + std::to_string(request) + ": ");
  if (stats) stats->total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!trace_path_.empty()) {
    std::lock_guard lock(trace_mutex_);
    if (Status s = write_trace(*stats, trace_path_); !s.is_ok()) spdlog::warn("[sched] {}", s.message());
  }
  return Status::ok();
}

std::future<Result<RunResult>> Session::submit(std::vector<Tensor> inputs, bool with_stats) {
  auto task = std::make_shared<std::packaged_task<Result<RunResult>()>>(
      [this, inputs = std::move(inputs), with_stats]() -> Result<RunResult> {
        RunResult result;
        HS_ASSIGN_OR_RETURN(result.outputs, run(inputs, with_stats ? &result.stats : nullptr));
        return result;
      });
  std::future<Result<RunResult>> future = task->get_future();
  enqueue([task] { (*task)(); });
  return future;
}

std::future<Result<RunStats>> Session::submit_into(std::vector<Tensor> inputs, std::vector<Tensor>& outputs,
                                                   bool with_stats) {
  auto task = std::make_shared<std::packaged_task<Result<RunStats>()>>(
      [this, inputs = std::move(inputs), &outputs, with_stats]() -> Result<RunStats> {
        RunStats stats;
        HS_RETURN_IF_ERROR(run_into(inputs, outputs, with_stats ? &stats : nullptr));
        return stats;
      });
  std::future<Result<RunStats>> future = task->get_future();
  enqueue([task] { (*task)(); });
  return future;
}

void Session::enqueue(std::function<void()> job) {
  {
    std::lock_guard lock(queue_mutex_);
    // One thread per lane, started on first use: more could only wait for a lane.
    if (workers_.empty())
      for (size_t i = 0; i < lanes_.size(); ++i) workers_.emplace_back([this] { worker_loop(); });
    queue_.push_back(std::move(job));
  }
  queue_changed_.notify_one();
}

void Session::worker_loop() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(queue_mutex_);
      queue_changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to run
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

}  // namespace hetsched
