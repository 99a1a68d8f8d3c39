#include "scheduler/executor.h"

#include <algorithm>

#include "sync/step_sync.h"

namespace hetsched {

namespace {

double ms_since(std::chrono::steady_clock::time_point epoch, std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t - epoch).count();
}

double epoch_ns(std::chrono::steady_clock::time_point epoch) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(epoch.time_since_epoch()).count());
}

// The driver of one request: ready lists, completions, the loop.
class RequestRun {
 public:
  RequestRun(const ExecutorConfig& config, Lane& lane, int64_t request, RunStats* stats)
      : config_(config), lane_(lane), request_(request), stats_(stats) {
    const size_t n = config.program->steps.size();
    remaining_.resize(n);
    completion_.resize(n);
    followed_value_.assign(n, 0);
    event_of_.assign(n, -1);
    state_.mode = config.sync;
    state_.slots = &lane.slots;
    state_.device_io = lane.device_io;
    state_.run_index = lane.run_index;
    state_.gpu_wait_timeout = config.gpu_wait_timeout;
  }

  Status run() {
    const size_t n = config_.program->steps.size();
    for (size_t s = 0; s < n; ++s) {
      remaining_[s] = static_cast<int>(config_.graph->deps[s].size());
      if (remaining_[s] == 0) HS_RETURN_IF_ERROR(make_ready(static_cast<int>(s)));
    }
    for (size_t issued = 0; issued < n; ++issued) {
      int s = -1;
      if (!ready_gpu_.empty()) {
        s = ready_gpu_.front();
        ready_gpu_.erase(ready_gpu_.begin());
      } else if (!ready_host_.empty()) {
        s = pick_host_step();
      } else {
        return internal_error("failed to run: the steps' dependencies form a cycle");  // validate_program prevents it
      }
      if (Status status = issue(s); !status.is_ok()) {
        // The lane's buffers are reused by the next request: let what was
        // submitted finish first.
        (void)wait_for_all();
        return status;
      }
    }
    HS_RETURN_IF_ERROR(wait_for_all());
    lane_.run_index++;
    if (stats_) {
      stats_->host_waits = state_.host_waits;
      HS_RETURN_IF_ERROR(collect_gpu_events());
      HS_RETURN_IF_ERROR(collect_op_events());
      std::sort(stats_->events.begin(), stats_->events.end(),
                [](const TraceEvent& a, const TraceEvent& b) { return a.start_ms < b.start_ms; });
    }
    return Status::ok();
  }

 private:
  // The runner of step s for this request: the device-I/O variant where the
  // request brought GPU buffers and the step has one.
  StepRunner& runner(int s) const {
    if (lane_.device_io && lane_.device_io_runners[s]) return *lane_.device_io_runners[s];
    return *lane_.runners[s];
  }

  // Every dependency of s is issued: queue it, and let a host step put the
  // GPU side of its work on the queue now (StepRunner::prepare).
  Status make_ready(int s) {
    StepRunner& step = runner(s);
    if (step.kind() == StepRunner::Kind::kGpu) {
      ready_gpu_.insert(std::upper_bound(ready_gpu_.begin(), ready_gpu_.end(), s), s);
      return Status::ok();
    }
    if (step.context()) HS_RETURN_IF_ERROR(step.prepare(state_, call_for(s)));
    ready_host_.insert(std::upper_bound(ready_host_.begin(), ready_host_.end(), s), s);
    return Status::ok();
  }

  // What the executor tells step s (timestamp writes are added by issue()).
  StepCall call_for(int s) const {
    StepCall call;
    SharedGpuContext* context = runner(s).context();
    call.wait_value = context ? needed_on(s, context) : 0;
    for (int a : lane_.host_write_waits[s]) call.host_wait_value = std::max(call.host_wait_value, completion_[a].value);
    call.submitted_with_producer = followed_value_[s];
    return call;
  }

  // The GPU value on `context` that step s's inputs need (0: none).
  uint64_t needed_on(int s, const SharedGpuContext* context) const {
    uint64_t v = 0;
    for (int d : config_.graph->deps[s])
      if (completion_[d].context == context) v = std::max(v, completion_[d].value);
    return v;
  }

  // The first ready host step (in program order) whose GPU inputs are
  // already complete; else the first one.
  int pick_host_step() {
    size_t chosen = 0;
    for (size_t i = 0; i < ready_host_.size(); ++i) {
      const int s = ready_host_[i];
      SharedGpuContext* context = runner(s).context();
      const uint64_t needed = context ? needed_on(s, context) : 0;
      if (needed == 0 || reached(context, needed)) {
        chosen = i;
        break;
      }
    }
    const int s = ready_host_[chosen];
    ready_host_.erase(ready_host_.begin() + static_cast<std::ptrdiff_t>(chosen));
    return s;
  }

  bool reached(SharedGpuContext* context, uint64_t value) {
    Result<uint64_t> current = context->timeline().current_value();
    return current.is_ok() && *current >= value;
  }

  Status issue(int s) {
    StepRunner& step = runner(s);
    SharedGpuContext* context = step.context();
    // GPU inputs on another context than the step's own: only the host can wait for them.
    for (int d : config_.graph->deps[s]) {
      const GpuCompletion& c = completion_[d];
      if (c.context && c.value && c.context != context) {
        HS_RETURN_IF_ERROR(c.context->wait(c.value, config_.gpu_wait_timeout));
        state_.host_waits++;
      }
    }
    StepCall call = call_for(s);
    collect_followers(s, context);
    call.then = then_;
    const int pair = lane_.timestamp_pair[s];
    GpuTimestamps* stamps = nullptr;
    if (stats_ && pair >= 0 && context) {
      auto it = lane_.timestamps.find(context);
      if (it != lane_.timestamps.end() && it->second) {
        stamps = &it->second;
        call.before = stamps->begin(static_cast<uint32_t>(pair));
        call.after = stamps->end(static_cast<uint32_t>(pair));
      }
    }
    auto t0 = std::chrono::steady_clock::now();
    state_.waited_until = {};
    Status status = step.run(state_, call, completion_[s]);
    const auto t1 = std::chrono::steady_clock::now();
    t0 = std::max(t0, state_.waited_until);
    if (!status.is_ok()) return status;
    if (completion_[s].context && completion_[s].value) {
      last_[completion_[s].context] = std::max(last_[completion_[s].context], completion_[s].value);
      for (int u : followers_) followed_value_[u] = completion_[s].value;
    }
    if (stats_ && !completion_[s].timestamped) {
      event_of_[s] = static_cast<int>(stats_->events.size());
      stats_->events.push_back({step.label(), step.track(), ms_since(config_.epoch, t0),
                                std::chrono::duration<double, std::milli>(t1 - t0).count(), request_, false});
    }
    for (int u : config_.graph->users[s])
      if (--remaining_[u] == 0) HS_RETURN_IF_ERROR(make_ready(u));
    return Status::ok();
  }

  // The users of GPU step s whose GPU work can ride in s's own submit: host
  // steps on s's context (staged readbacks) with s as their last unissued
  // dependency and no GPU input on another context. One submit fewer per
  // readback, and its copy starts with no host round trip. Timeline sync
  // only: the submit's signal is what the follower waits for.
  void collect_followers(int s, SharedGpuContext* context) {
    followers_.clear();
    then_.clear();
    if (!context || config_.sync != SyncMode::kTimeline || !runner(s).takes_followers()) return;
    for (int u : config_.graph->users[s]) {
      const StepRunner& r = runner(u);
      if (remaining_[u] != 1 || r.kind() != StepRunner::Kind::kHost || r.context() != context) continue;
      const VkCommandBuffer cmd = r.follower_commands();
      if (!cmd || then_.size() == CommandBufferList::kMaxThen) continue;
      bool same_context = true;
      for (int d : config_.graph->deps[u])
        same_context = same_context && (d == s || !completion_[d].context || completion_[d].context == context);
      if (!same_context) continue;
      followers_.push_back(u);
      then_.push_back(cmd);
    }
  }

  // Outputs were read back by their readback steps; GPU work nobody read
  // (and timestamps) is waited for before the lane is given back.
  Status wait_for_all() {
    for (const auto& [context, value] : last_) {
      if (reached(context, value)) continue;
      HS_RETURN_IF_ERROR(context->wait(value, config_.gpu_wait_timeout));
      state_.host_waits++;
    }
    return Status::ok();
  }

  Status collect_gpu_events() {
    const double epoch = epoch_ns(config_.epoch);
    for (size_t s = 0; s < completion_.size(); ++s) {
      const GpuCompletion& c = completion_[s];
      if (!c.timestamped) continue;
      const GpuTimestamps& stamps = lane_.timestamps.at(c.context);
      HS_ASSIGN_OR_RETURN(auto ticks, stamps.read(static_cast<uint32_t>(lane_.timestamp_pair[s])));
      const GpuClock& clock = config_.clocks->at(c.context);
      const double start = (clock.host_ns(ticks.first) - epoch) * 1e-6;
      const double end = (clock.host_ns(ticks.second) - epoch) * 1e-6;
      const StepRunner& step = runner(s);
      event_of_[s] = static_cast<int>(stats_->events.size());
      stats_->events.push_back({step.label(), step.track(), start, std::max(0.0, end - start), request_, true});
    }
    return Status::ok();
  }

  // profile_ops: each island's timed pieces, placed inside its island's
  // event (their times count from the island's first piece).
  Status collect_op_events() {
    for (size_t s = 0; s < event_of_.size(); ++s) {
      if (event_of_[s] < 0) continue;
      HS_ASSIGN_OR_RETURN(std::vector<OpTiming> timings, runner(s).op_timings());
      if (timings.empty()) continue;
      const TraceEvent island = stats_->events[event_of_[s]];
      for (OpTiming& t : timings) {
        TraceEvent e{op_event_name(t), island.track, island.start_ms + t.start_ms, t.ms, request_, island.gpu_clock};
        e.op = true;
        e.nodes = std::move(t.nodes);
        e.ops = std::move(t.ops);
        e.op_kind = std::move(t.kind);
        e.island = island.name;
        stats_->events.push_back(std::move(e));
      }
    }
    return Status::ok();
  }

  const ExecutorConfig& config_;
  Lane& lane_;
  int64_t request_;
  RunStats* stats_;
  RequestState state_;
  std::vector<int> remaining_;            // unissued dependencies, by step
  std::vector<GpuCompletion> completion_; // by step
  std::vector<int> ready_gpu_, ready_host_;  // ascending step indices
  std::map<SharedGpuContext*, uint64_t> last_;  // highest value signalled per context
  std::vector<int> followers_;            // of the step being issued (collect_followers)
  std::vector<uint64_t> followed_value_;  // by step: StepCall::submitted_with_producer
  std::vector<VkCommandBuffer> then_;     // their command buffers
  std::vector<int> event_of_;             // by step: its event in stats_->events (-1: none)
};

}  // namespace

Status run_request(const ExecutorConfig& config, Lane& lane, int64_t request, RunStats* stats) {
  RequestRun run(config, lane, request, stats);
  return run.run();
}

}  // namespace hetsched
