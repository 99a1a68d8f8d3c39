// Failing devices: every injection point of sync/fault_injection.h (memory
// allocation, pipeline creation, queue submit, host wait) made to fail with
// VK_ERROR_OUT_OF_DEVICE_MEMORY and VK_ERROR_DEVICE_LOST, at model load and
// during a run, on lavapipe with validation on. Each fault must give one
// line of error and no crash or hang; nothing may leak (VkTest's teardown
// fails on any validation message, leaked objects at device destruction
// included); a lost device must make the sessions on its context refuse to
// run, while a session on another (token, group) context keeps matching the
// CPU's portable kernels, and the lost key gets a fresh device.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <set>
#include <string>
#include <vector>

#include "examples/rfc_model.h"
#include "profile/profile.h"
#include "scheduler/pipeline.h"
#include "sync/fault_injection.h"
#include "sync/vk_status.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

using namespace std::chrono_literals;

constexpr float kTolerance = 1e-5f;  // sin/cos on lavapipe vs libm differ by a few ulp
constexpr const char* kFaultyKey = "vgf_vk_unified_e2e:7";  // configs/mixed_gpu.yaml

Profile load(const std::string& config) {
  auto p = load_profile(testing::source_path(config).string());
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  return p.is_ok() ? *p : default_profile();
}

// VGF → Vulkan → VGF on one context: every point is reached by both GPU delegates.
Profile faulty_profile() { return load("configs/mixed_gpu.yaml"); }

// The model on Vulkan alone, on a context of its own key.
Profile bystander_profile() {
  Profile p = load("configs/vulkan.yaml");
  p.delegates["vulkan"].shared_gpu.token = "bystander";
  p.delegates["vulkan"].shared_gpu.group = 3;
  return p;
}

// The CPU's portable kernels: the independent reference.
const std::vector<Tensor>& reference() {
  static const std::vector<Tensor> out = [] {
    auto graph = examples::make_rfc_model();
    auto session = open_session_for_graph(*graph, load("configs/cpu_portable.yaml"));
    EXPECT_TRUE(session.is_ok()) << session.status().message();
    return *(*session)->run({examples::rfc_model_input()});
  }();
  return out;
}

struct Counts {
  uint64_t calls[std::size(kFaultPoints)] = {};
  uint64_t at(FaultPoint p) const { return calls[static_cast<size_t>(p)]; }
};

Counts read_counts() {
  Counts c;
  for (FaultPoint p : kFaultPoints) c.calls[static_cast<size_t>(p)] = fault_point_calls(p);
  return c;
}

std::string describe(const FaultSpec& spec) {
  return std::string(fault_point_name(spec.point)) + ":" + std::to_string(spec.nth) + ":" +
         std::string(vk_result_name(spec.result));
}

class FaultInjectionTest : public testing::VkTest {
 protected:
  void SetUp() override {
    ::setenv("HETSCHED_VK_VALIDATION", "1", 1);
    disarm_faults();
  }
  void TearDown() override {
    disarm_faults();
    ::unsetenv("HETSCHED_VK_VALIDATION");
    testing::VkTest::TearDown();
  }

  // open_session_for_graph (compile and load) of the RFC model; watches
  // every context the registry holds, old and new.
  Result<std::unique_ptr<Session>> open(const Profile& profile) {
    auto graph = examples::make_rfc_model();
    EXPECT_TRUE(graph.is_ok());
    auto session = open_session_for_graph(*graph, profile);
    watch_registry();
    return session;
  }

  void watch_registry() {
    for (const std::string& key : SharedGpuContextRegistry::get().keys()) {
      auto context = SharedGpuContextRegistry::get().lookup(key);
      if (context && watched_.insert(context->validation_log().get()).second) watch(*context);
    }
  }

  static void expect_correct(Session& session, const std::string& what) {
    auto out = session.run({examples::rfc_model_input()});
    ASSERT_TRUE(out.is_ok()) << what << ": " << out.status().message();
    const std::vector<Tensor>& want = reference();
    ASSERT_EQ(out->size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_LE(testing::max_abs_diff((*out)[i], want[i]), kTolerance) << what << ", output " << i;
  }

  static void expect_one_line_error(const Status& status, const FaultSpec& spec) {
    ASSERT_FALSE(status.is_ok()) << describe(spec);
    const std::string& m = status.message();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.rfind("failed to ", 0), 0u) << m;
    const std::string_view expected =
        spec.result == VK_ERROR_DEVICE_LOST ? "device lost" : vk_result_name(spec.result);
    EXPECT_NE(m.find(expected), std::string::npos) << describe(spec) << ": " << m;
  }

  // Calls at each point while opening the faulty profile's session, then
  // while running it once (the session is dropped in between).
  static std::pair<Counts, Counts> count_calls(FaultInjectionTest& test) {
    arm_fault({FaultPoint::kSubmit, 0, VK_SUCCESS});
    auto session = test.open(faulty_profile());
    const Counts at_open = read_counts();
    EXPECT_TRUE(session.is_ok()) << session.status().message();
    arm_fault({FaultPoint::kSubmit, 0, VK_SUCCESS});
    EXPECT_TRUE((*session)->run({examples::rfc_model_input()}).is_ok());
    const Counts at_run = read_counts();
    disarm_faults();
    return {at_open, at_run};
  }

  std::set<const ValidationLog*> watched_;
};

TEST_F(FaultInjectionTest, ParsesFaultSpecsAndRefusesMalformedOnes) {
  auto spec = parse_fault_spec("submit:3:device_lost");
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  EXPECT_EQ(spec->point, FaultPoint::kSubmit);
  EXPECT_EQ(spec->nth, 3u);
  EXPECT_EQ(spec->result, VK_ERROR_DEVICE_LOST);
  EXPECT_EQ(parse_fault_spec("wait:1:timeout")->result, VK_TIMEOUT);
  EXPECT_EQ(parse_fault_spec("alloc:2:oom")->result, VK_ERROR_OUT_OF_DEVICE_MEMORY);
  for (const char* bad : {"submit:0:oom", "submit:3", "draw:1:oom", "submit:x:oom", "submit:1:timeout", "alloc:1:lost"}) {
    auto r = parse_fault_spec(bad);
    EXPECT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

// The counts the other tests pick calls from: every point is reached while
// a model loads, and a run allocates and compiles nothing.
TEST_F(FaultInjectionTest, EveryPointIsReachedAtLoadAndARunOnlySubmitsAndWaits) {
  const auto [at_open, at_run] = count_calls(*this);
  for (FaultPoint p : kFaultPoints) {
    EXPECT_GT(at_open.at(p), 0u) << fault_point_name(p);
    std::printf("%-8s calls: %3llu at load, %3llu per run\n", std::string(fault_point_name(p)).c_str(),
                static_cast<unsigned long long>(at_open.at(p)), static_cast<unsigned long long>(at_run.at(p)));
  }
  EXPECT_EQ(at_run.at(FaultPoint::kAllocate), 0u);
  EXPECT_EQ(at_run.at(FaultPoint::kPipeline), 0u);
  EXPECT_GT(at_run.at(FaultPoint::kSubmit), 0u);
  EXPECT_GT(at_run.at(FaultPoint::kWait), 0u);
  // Loading is deterministic, so "the last call at load" names one call.
  const auto [again, unused] = count_calls(*this);
  for (FaultPoint p : kFaultPoints) EXPECT_EQ(again.at(p), at_open.at(p)) << fault_point_name(p);
}

// Each point in turn, every one of its calls at load, with each result.
TEST_F(FaultInjectionTest, AFaultWhileLoadingFailsTheLoadWithOneLineAndLeavesOtherContextsRunning) {
  const Counts at_open = count_calls(*this).first;
  auto bystander = open(bystander_profile());
  ASSERT_TRUE(bystander.is_ok()) << bystander.status().message();
  for (FaultPoint point : kFaultPoints) {
    for (uint64_t nth = 1; nth <= at_open.at(point); ++nth) {
      for (const VkResult result : {VK_ERROR_OUT_OF_DEVICE_MEMORY, VK_ERROR_DEVICE_LOST}) {
        const FaultSpec spec{point, nth, result};
        SCOPED_TRACE(describe(spec));
        const auto before = SharedGpuContextRegistry::get().lookup(kFaultyKey);
        Result<std::unique_ptr<Session>> failed = std::unique_ptr<Session>();
        {
          ScopedFault fault(spec);
          failed = open(faulty_profile());
          EXPECT_TRUE(fault_fired());
        }
        if (failed.is_ok()) {
          // The one fault the load recovers from: an arena out of
          // host-visible device memory falls back to plain device memory.
          EXPECT_EQ(spec.point, FaultPoint::kAllocate);
          EXPECT_EQ(spec.result, VK_ERROR_OUT_OF_DEVICE_MEMORY);
          expect_correct(**failed, "loaded in spite of " + describe(spec));
        } else {
          expect_one_line_error(failed.status(), spec);
        }
        expect_correct(**bystander, "bystander after " + describe(spec));
        // The key opens again: on the same context after running out of
        // memory, on a fresh device after a loss.
        auto again = open(faulty_profile());
        ASSERT_TRUE(again.is_ok()) << again.status().message();
        const auto after = SharedGpuContextRegistry::get().lookup(kFaultyKey);
        if (before) {
          EXPECT_EQ(after != before, result == VK_ERROR_DEVICE_LOST);
        }
        expect_correct(**again, "reopened after " + describe(spec));
      }
    }
  }
}

// Submits and waits during a run: every submit, the first wait. (Later waits
// depend on timing: the end of a request skips a wait for work already done.)
TEST_F(FaultInjectionTest, AFaultWhileRunningFailsTheRunAndALostDeviceRefusesEveryLaterRunOnItsContext) {
  const Counts at_run = count_calls(*this).second;
  struct Case {
    FaultPoint point;
    uint64_t nth;
  };
  std::vector<Case> cases;
  for (uint64_t nth = 1; nth <= at_run.at(FaultPoint::kSubmit); ++nth) cases.push_back({FaultPoint::kSubmit, nth});
  cases.push_back({FaultPoint::kWait, 1});
  auto bystander = open(bystander_profile());
  ASSERT_TRUE(bystander.is_ok()) << bystander.status().message();
  for (const Case& c : cases) {
    for (const VkResult result : {VK_ERROR_OUT_OF_DEVICE_MEMORY, VK_ERROR_DEVICE_LOST}) {
      const FaultSpec spec{c.point, c.nth, result};
      SCOPED_TRACE(describe(spec));
      auto session = open(faulty_profile());
      auto sibling = open(faulty_profile());  // another session on the same context
      ASSERT_TRUE(session.is_ok() && sibling.is_ok());
      expect_correct(**session, "before the fault");
      Status failed;
      {
        ScopedFault fault(spec);
        failed = (*session)->run({examples::rfc_model_input()}).status();
        EXPECT_TRUE(fault_fired());
      }
      expect_one_line_error(failed, spec);
      if (result == VK_ERROR_DEVICE_LOST) {
        for (Session* s : {session->get(), sibling->get()}) {
          const auto t0 = std::chrono::steady_clock::now();
          auto refused = s->run({examples::rfc_model_input()});
          EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);  // refused at once, not after a wait
          ASSERT_FALSE(refused.is_ok());
          EXPECT_EQ(refused.status().message().find('\n'), std::string::npos);
          EXPECT_NE(refused.status().message().find("device lost"), std::string::npos) << refused.status().message();
          EXPECT_NE(refused.status().message().find("open a new session"), std::string::npos);
        }
        auto fresh = open(faulty_profile());
        ASSERT_TRUE(fresh.is_ok()) << fresh.status().message();
        expect_correct(**fresh, "a new session after the loss");
      } else {
        expect_correct(**session, "the same session after running out of memory");
        expect_correct(**sibling, "the sibling session");
      }
      expect_correct(**bystander, "bystander after " + describe(spec));
    }
  }
}

// A loss while several requests are in flight (two lanes, eight submits):
// every request either finished correctly before it or fails with one line
// naming the loss; none hangs, and teardown leaks nothing.
TEST_F(FaultInjectionTest, ALossWhileRequestsAreInFlightFailsEachWithOneLineAndNoneHangs) {
  Profile profile = faulty_profile();
  profile.max_in_flight = 2;
  auto session = open(profile);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  expect_correct(**session, "before the loss");
  int failed = 0;
  {
    ScopedFault fault({FaultPoint::kSubmit, 7, VK_ERROR_DEVICE_LOST});
    std::vector<std::future<Result<RunResult>>> pending;
    for (int i = 0; i < 8; ++i) pending.push_back((*session)->submit({examples::rfc_model_input()}));
    for (auto& f : pending) {
      ASSERT_EQ(f.wait_for(60s), std::future_status::ready);
      Result<RunResult> r = f.get();
      if (r.is_ok()) {
        for (size_t i = 0; i < reference().size(); ++i)
          EXPECT_LE(testing::max_abs_diff(r->outputs[i], reference()[i]), kTolerance);
        continue;
      }
      failed++;
      EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
      EXPECT_NE(r.status().message().find("device lost"), std::string::npos) << r.status().message();
    }
    EXPECT_TRUE(fault_fired());
  }
  EXPECT_GE(failed, 1);
}

// scheduler.gpu_wait_timeout_ms bounds a session's waits: a GPU that never
// signals (an injected VK_TIMEOUT: the wait sleeps its whole timeout) fails
// the run after that long with one line, and the session runs again after.
TEST_F(FaultInjectionTest, AHungGpuFailsTheRunAfterTheProfilesWaitTimeout) {
  Profile profile = faulty_profile();
  auto parsed = parse_profile("scheduler: {gpu_wait_timeout_ms: 300}\n");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
  profile.gpu_wait_timeout_ms = parsed->gpu_wait_timeout_ms;
  ASSERT_EQ(profile.gpu_wait_timeout_ms, 300);
  auto session = open(profile);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  expect_correct(**session, "before the hang");
  Status failed;
  std::chrono::steady_clock::duration took{};
  {
    ScopedFault fault({FaultPoint::kWait, 1, VK_TIMEOUT});
    const auto t0 = std::chrono::steady_clock::now();
    failed = (*session)->run({examples::rfc_model_input()}).status();
    took = std::chrono::steady_clock::now() - t0;
    EXPECT_TRUE(fault_fired());
  }
  ASSERT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.message().find('\n'), std::string::npos);
  EXPECT_NE(failed.message().find("timed out after 300 ms waiting for"), std::string::npos) << failed.message();
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 30s);  // the built-in minute was not what ended it
  expect_correct(**session, "after the timeout");
}

TEST_F(FaultInjectionTest, TheWaitTimeoutKeyIsCheckedAtLoad) {
  EXPECT_EQ(default_profile().gpu_wait_timeout_ms, 60'000);
  for (const char* bad : {"0", "-5", "1.5", "fast", "86400001"}) {
    auto p = parse_profile(std::string("scheduler:\n  gpu_wait_timeout_ms: ") + bad + "\n", "t.yaml");
    ASSERT_FALSE(p.is_ok()) << bad;
    EXPECT_NE(p.status().message().find("t.yaml:2: scheduler.gpu_wait_timeout_ms:"), std::string::npos)
        << p.status().message();
  }
}

// `hetsched run` under HETSCHED_FAULT (the CLI's test-only hook): exit 1
// and one line, also with validation on (a validation message would be a
// second line).
TEST_F(FaultInjectionTest, CliRunUnderAnInjectedFaultExitsOneWithOneLine) {
  const std::string args = "run " + std::string(HETSCHED_BINARY_DIR) + "/examples/rfc_model.hsg --profile " +
                           testing::source_path("configs/mixed_gpu.yaml").string() + " --input " +
                           std::string(HETSCHED_BINARY_DIR) + "/examples/rfc_model_input.bin";
  for (const char* fault : {"alloc:2:oom", "pipeline:3:device_lost", "submit:1:device_lost", "wait:1:oom"}) {
    ::setenv("HETSCHED_FAULT", fault, 1);
    const testing::CommandResult r = testing::run_cli(args);
    ::unsetenv("HETSCHED_FAULT");
    EXPECT_EQ(r.exit_code, 1) << fault << ": " << r.output;
    EXPECT_EQ(r.output.rfind("error: failed to ", 0), 0u) << fault << ": " << r.output;
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << fault << ": " << r.output;
  }
  ::setenv("HETSCHED_FAULT", "submit:first:oom", 1);
  const testing::CommandResult r = testing::run_cli(args);
  ::unsetenv("HETSCHED_FAULT");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("HETSCHED_FAULT: failed to parse fault 'submit:first:oom'"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace hetsched
