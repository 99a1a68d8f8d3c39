// The resource scheduler: the step DAG, islands on different resources at
// the same time (read back from the trace JSON), requests from many threads
// and in flight at once giving the same bits as sequential runs, lanes, and
// logging.trace. GPU cases on lavapipe with validation on.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>
#include <thread>

#include "delegates/cpu/cpu_reference.h"
#include "examples/rfc_model.h"
#include "examples/scheduler_models.h"
#include "graph/builder.h"
#include "profile/profile.h"
#include "scheduler/pipeline.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

Profile profile_from(const std::string& yaml) {
  auto p = parse_profile(yaml);
  EXPECT_TRUE(p.is_ok()) << p.status().message();
  return p.is_ok() ? *p : default_profile();
}

std::string vulkan_profile(int in_flight, const std::string& extra = "") {
  return "name: sched\n"
         "delegates:\n"
         "  vulkan: {enabled: true, shared_gpu: {token: sched_test, group: 1}}\n"
         "  cpu: {enabled: true, engine: xnnpack, threads: 1}\n"
         // ConvTranspose is the examples' CPU branch (examples/scheduler_models.h).
         "partition: {prefer: vulkan_first, pin: [{op: ConvTranspose, delegate: cpu}]}\n"
         "scheduler: {max_in_flight: " + std::to_string(in_flight) + "}\n" + extra;
}

std::unique_ptr<Session> open(const Graph& graph, const Profile& profile) {
  auto session = open_session_for_graph(graph, profile);
  EXPECT_TRUE(session.is_ok()) << session.status().message();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

bool bit_identical(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].type() != b[i].type() || std::memcmp(a[i].raw(), b[i].raw(), a[i].byte_size()) != 0) return false;
  return true;
}

// One "X" event of a trace file as write_trace prints it (one per line).
struct ParsedEvent {
  std::string name, track;
  double ts = 0, dur = 0;
  int64_t request = 0;
};

std::vector<ParsedEvent> read_trace(const std::string& path) {
  std::ifstream f(path);
  std::vector<ParsedEvent> events;
  const std::regex re(R"re("name": "([^"]*)", "ph": "X".*"ts": ([0-9.e+-]+), "dur": ([0-9.e+-]+), "args": \{"request": ([0-9]+), "track": "([^"]*)")re");
  std::string line;
  while (std::getline(f, line)) {
    std::smatch m;
    if (std::regex_search(line, m, re))
      events.push_back({m[1], m[5], std::stod(m[2]), std::stod(m[3]), std::stoll(m[4])});
  }
  return events;
}

// Step DAG of the parallel-branch model: the CPU island does not wait for
// anything on the GPU branch, and the readback of the GPU branch depends on
// its island, not on the CPU island.
TEST(StepGraphTest, IndependentBranchesHaveNoPath) {
  examples::SchedulerModelOptions o{.channels = 4, .size = 8, .gpu_layers = 1, .cpu_layers = 1};
  auto graph = examples::make_parallel_branches(o);
  ASSERT_TRUE(graph.is_ok());
  Program p;
  // Built by hand like the compiler would: island 0 on a device, island 1 on the host.
  p.tensors = {{"x", graph->value(graph->inputs()[0]).type},
               {"y_gpu", graph->value(graph->outputs()[0]).type},
               {"y_cpu", graph->value(graph->outputs()[1]).type}};
  p.inputs = {0};
  p.outputs = {1, 2};
  ProgramIsland gpu{0, "vulkan", {}, {}, {0}, {1}, {"n"}, {"Conv"}};
  ProgramIsland cpu{1, "cpu", {}, {}, {0}, {2}, {"m"}, {"ConvTranspose"}};
  p.islands = {gpu, cpu};
  ProgramStep up{StepKind::kHandoff, 0, 0, HandoffKind::kUpload, "host", "vulkan#0", ""};
  ProgramStep run_gpu{StepKind::kRunIsland, 0, -1, HandoffKind::kHostCopy, "", "", ""};
  ProgramStep run_cpu{StepKind::kRunIsland, 1, -1, HandoffKind::kHostCopy, "", "", ""};
  ProgramStep down{StepKind::kHandoff, 0, 1, HandoffKind::kReadback, "vulkan#0", "host", ""};
  p.steps = {up, run_gpu, run_cpu, down};
  const StepGraph g = build_step_graph(p, {true, false});
  EXPECT_EQ(g.deps[0], std::vector<int>{});
  EXPECT_EQ(g.deps[1], std::vector<int>{0});
  EXPECT_EQ(g.deps[2], std::vector<int>{});  // reads x on the host: ready at once
  EXPECT_EQ(g.deps[3], std::vector<int>{1});
  EXPECT_TRUE(g.reaches(0, 3));
  EXPECT_FALSE(g.reaches(2, 3));
  EXPECT_FALSE(g.reaches(1, 2));
}

class SchedulerGpuTest : public testing::VkTest {
 protected:
  void SetUp() override { ::setenv("HETSCHED_VK_VALIDATION", "1", 1); }
  void TearDown() override {
    watch_all();
    ::unsetenv("HETSCHED_VK_VALIDATION");
    testing::VkTest::TearDown();
  }
  void watch_all() {
    for (const std::string& key : SharedGpuContextRegistry::get().keys())
      if (!watched_.count(key)) {
        watched_.insert(key);
        watch(*SharedGpuContextRegistry::get().lookup(key));
      }
  }
  std::set<std::string> watched_;
};

// The GPU branch (long on lavapipe) is submitted, then the CPU branch runs
// while it is on the queue: in the trace, the island on the CPU track lies
// inside the island on the GPU queue's track.
TEST_F(SchedulerGpuTest, IndependentIslandsOverlapInTheTrace) {
  examples::SchedulerModelOptions o{.channels = 16, .size = 24, .gpu_layers = 4, .cpu_layers = 320};
  auto graph = examples::make_parallel_branches(o);
  ASSERT_TRUE(graph.is_ok());
  const std::string trace = (std::filesystem::temp_directory_path() / "hetsched_overlap_trace.json").string();
  auto session = open(*graph, profile_from(vulkan_profile(1, "logging: {trace: " + trace + "}\n")));
  ASSERT_NE(session, nullptr);
  const Tensor x = testing::random_tensor({1, 16, 24, 24}, 7);
  auto first = session->run({x});  // warm-up: lavapipe compiles shaders on first use
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  // On a loaded 2-core machine lavapipe's queue thread may get no core until
  // the CPU island is done, so a single run may not overlap; a scheduler that
  // runs the islands one after the other never does. The CPU branch is the
  // longer (~5 ms here: at ~0.7 ms, with a build running beside the suite,
  // the queue thread got no core in 10 runs) so the queue thread has time
  // to start. Up to 10 runs.
  bool overlapped = false;
  std::string last;
  for (int attempt = 0; attempt < 10 && !overlapped; ++attempt) {
    auto out = session->run({x});  // logging.trace: the library writes the trace of this run
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    EXPECT_TRUE(bit_identical(*first, *out));
    const std::vector<ParsedEvent> events = read_trace(trace);
    const ParsedEvent* gpu = nullptr;
    const ParsedEvent* cpu = nullptr;
    for (const ParsedEvent& e : events) {
      if (e.name == "island 0 (vulkan)") gpu = &e;
      if (e.name == "island 1 (cpu)") cpu = &e;
    }
    ASSERT_NE(gpu, nullptr) << "no GPU island event in " << trace;
    ASSERT_NE(cpu, nullptr) << "no CPU island event in " << trace;
    EXPECT_EQ(gpu->track, "gpu:sched_test:1");
    EXPECT_EQ(cpu->track, "cpu");
    EXPECT_EQ(gpu->request, attempt + 1);
    // Overlap: each starts before the other ends.
    overlapped = cpu->ts < gpu->ts + gpu->dur && gpu->ts < cpu->ts + cpu->dur;
    last = "cpu island " + std::to_string(cpu->ts) + "+" + std::to_string(cpu->dur) + " µs, gpu island " +
           std::to_string(gpu->ts) + "+" + std::to_string(gpu->dur) + " µs";
  }
  EXPECT_TRUE(overlapped) << "the islands never overlapped; last run: " << last;
  std::filesystem::remove(trace);
}

// Outputs of the parallel branches match a CPU-only run of the same graph
// (portable kernels: an independent reference).
TEST_F(SchedulerGpuTest, ParallelBranchesMatchTheCpu) {
  examples::SchedulerModelOptions o{.channels = 8, .size = 12, .gpu_layers = 2, .cpu_layers = 2};
  auto graph = examples::make_parallel_branches(o);
  ASSERT_TRUE(graph.is_ok());
  auto gpu = open(*graph, profile_from(vulkan_profile(2)));
  auto cpu = open(*graph, profile_from("name: ref\ndelegates: {cpu: {enabled: true, engine: portable}}\n"));
  ASSERT_TRUE(gpu && cpu);
  const Tensor x = testing::random_tensor({1, 8, 12, 12}, 3);
  auto got = gpu->run({x});
  auto want = cpu->run({x});
  ASSERT_TRUE(got.is_ok() && want.is_ok());
  ASSERT_EQ(got->size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_LT(testing::max_abs_diff((*got)[i], (*want)[i]), 1e-4f) << "output " << i;
}

// VGF → Vulkan → VGF on rank-2 tensors: both handoffs are aliases (one
// context, one layout), the program moves nothing between the islands, the
// memory plan never gives two buffers live at one step the same bytes, and
// the outputs match the portable CPU kernels.
TEST_F(SchedulerGpuTest, AliasedHandoffsMatchTheCpu) {
  GraphBuilder b("alias_chain");
  const ValueId x = b.input("x", {DType::kFloat32, {4, 8}});
  const ValueId s = b.op("Sigmoid", {x});
  const ValueId g = b.op("Gather", {s, b.constant_i64("idx", {4}, {3, 1, 2, 0})}, {{"axis", int64_t{0}}});
  b.output(b.op("Abs", {b.op("Neg", {g})}));
  Result<Graph> graph = b.build();
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const Profile mixed = profile_from(
      "name: alias\n"
      "delegates:\n"
      "  vgf: {enabled: true, shared_gpu: {token: sched_alias, group: 2}}\n"
      "  vulkan: {enabled: true, shared_gpu: {token: sched_alias, group: 2}}\n"
      "  cpu: {enabled: true}\n"
      "partition: {prefer: [vgf, vulkan, cpu]}\n");
  Result<Program> program = build_program(*graph, mixed);
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  int aliases = 0, copies = 0;
  for (const ProgramStep& step : program->steps) {
    aliases += step.kind == StepKind::kHandoff && step.handoff == HandoffKind::kAlias;
    copies += step.kind == StepKind::kHandoff && step.handoff == HandoffKind::kDeviceCopy;
  }
  EXPECT_EQ(aliases, 2);
  EXPECT_EQ(copies, 0);
  for (const DomainPlan& d : program->memory.domains) {
    EXPECT_LE(d.lower_bound, d.planned_bytes) << d.domain;
    for (size_t i = 0; i < d.buffers.size(); ++i)
      for (size_t j = i + 1; j < d.buffers.size(); ++j) {
        const PlannedBuffer& p = d.buffers[i];
        const PlannedBuffer& q = d.buffers[j];
        const bool together = p.first <= q.last && q.first <= p.last;
        const bool shared = p.bytes && q.bytes && p.offset < q.offset + q.bytes && q.offset < p.offset + p.bytes;
        EXPECT_FALSE(together && shared) << d.domain << ": " << p.name << " and " << q.name;
      }
  }
  auto gpu = Session::create(std::move(program).value(), mixed);
  ASSERT_TRUE(gpu.is_ok()) << gpu.status().message();
  auto cpu = open(*graph, profile_from("name: ref\ndelegates: {cpu: {enabled: true, engine: portable}}\n"));
  ASSERT_TRUE(cpu);
  const Tensor in = testing::random_tensor({4, 8}, 11);
  auto got = (*gpu)->run({in});
  auto want = cpu->run({in});
  ASSERT_TRUE(got.is_ok() && want.is_ok()) << (got.is_ok() ? want.status().message() : got.status().message());
  EXPECT_LT(testing::max_abs_diff((*got)[0], (*want)[0]), 1e-5f);
}

// 8 threads × 500 requests on two sessions sharing one GPU context (VGF →
// Vulkan → VGF, two lanes each): every output has the bits of the sequential
// run of its input.
TEST_F(SchedulerGpuTest, ConcurrentRequestsOnTwoSessionsMatchSequentialRuns) {
  auto graph = examples::make_rfc_model();
  ASSERT_TRUE(graph.is_ok());
  const Profile profile = profile_from(
      "name: mixed\n"
      "delegates:\n"
      "  vgf: {enabled: true, shared_gpu: {token: sched_concurrency, group: 7}}\n"
      "  vulkan: {enabled: true, shared_gpu: {token: sched_concurrency, group: 7}}\n"
      "  cpu: {enabled: true, threads: 1}\n"
      "partition: {prefer: vgf_first, pin: [{op: Gather, delegate: vulkan}, {op: GatherElements, delegate: vulkan}]}\n"
      "scheduler: {max_in_flight: 2}\n");
  auto a = open(*graph, profile);
  auto b = open(*graph, profile);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(SharedGpuContextRegistry::get().keys().size(), 1u);  // one context, shared
  constexpr int kInputs = 16, kThreads = 8, kRequests = 500;
  std::vector<Tensor> inputs;
  std::vector<std::vector<Tensor>> expected;
  for (int i = 0; i < kInputs; ++i) {
    inputs.push_back(testing::random_tensor({1, 3, 8, 8}, 100 + i));
    auto out = a->run({inputs.back()});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    expected.push_back(*out);
  }
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Session& s = t % 2 ? *a : *b;
      for (int r = 0; r < kRequests; ++r) {
        const int i = (t * 7 + r) % kInputs;
        auto out = s.run({inputs[i]});
        if (!out.is_ok()) {
          failures++;
          continue;
        }
        if (!bit_identical(*out, expected[i])) mismatches++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// submit() with four lanes: a CPU → GPU → CPU chain, 24 requests in flight,
// each result equal to the sequential run of its input.
TEST_F(SchedulerGpuTest, SubmittedRequestsInFlightMatchSequentialRuns) {
  examples::SchedulerModelOptions o{.channels = 8, .size = 8, .gpu_layers = 2, .cpu_layers = 1};
  auto graph = examples::make_cpu_gpu_cpu(o);
  ASSERT_TRUE(graph.is_ok());
  auto session = open(*graph, profile_from(vulkan_profile(4)));
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->max_in_flight(), 4);
  std::vector<Tensor> inputs;
  std::vector<std::vector<Tensor>> expected;
  for (int i = 0; i < 24; ++i) {
    inputs.push_back(testing::random_tensor({1, 8, 8, 8}, 500 + i));
    auto out = session->run({inputs.back()});
    ASSERT_TRUE(out.is_ok()) << out.status().message();
    expected.push_back(*out);
  }
  std::vector<std::future<Result<RunResult>>> futures;
  for (const Tensor& x : inputs) futures.push_back(session->submit({x}, true));
  std::set<int64_t> requests;
  for (size_t i = 0; i < futures.size(); ++i) {
    Result<RunResult> r = futures[i].get();
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    EXPECT_TRUE(bit_identical(r->outputs, expected[i])) << "request " << i;
    requests.insert(r->stats.request);
    for (const TraceEvent& e : r->stats.events) EXPECT_EQ(e.request, r->stats.request);
  }
  EXPECT_EQ(requests.size(), futures.size());  // every request has its own id
}

// A failing request (wrong input type) gives its lane back: the next runs.
TEST(SchedulerTest, ABadRequestDoesNotKeepItsLane) {
  auto graph = examples::make_rfc_model();
  ASSERT_TRUE(graph.is_ok());
  auto session = open(*graph, default_profile());
  ASSERT_NE(session, nullptr);
  for (int i = 0; i < 3; ++i) {
    auto bad = session->run({testing::random_tensor({1, 3, 4, 4}, 1)});
    ASSERT_FALSE(bad.is_ok());
    EXPECT_NE(bad.status().message().find("must be f32[1,3,8,8]"), std::string::npos) << bad.status().message();
  }
  EXPECT_TRUE(session->run({examples::rfc_model_input()}).is_ok());
}

// run_into writes the caller's outputs in place, run after run, with what
// the portable kernels compute for the graph; outputs of another type are
// refused by name.
TEST(SchedulerTest, RunIntoReusesTheCallersOutputs) {
  auto graph = examples::make_rfc_model();
  ASSERT_TRUE(graph.is_ok());
  auto session = open(*graph, default_profile());
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> outputs;
  for (const TensorType& t : session->output_types()) outputs.emplace_back(t);
  const std::byte* where = outputs[0].raw();
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const std::vector<Tensor> inputs = {testing::random_tensor({1, 3, 8, 8}, seed)};
    Result<std::vector<Tensor>> want = cpu::run_graph_reference(*graph, inputs);
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    ASSERT_TRUE(session->run_into(inputs, outputs).is_ok());
    EXPECT_EQ(outputs[0].raw(), where);  // written in place, not replaced
    for (size_t k = 0; k < outputs.size(); ++k)
      for (int64_t i = 0; i < outputs[k].num_elements(); ++i)
        ASSERT_NEAR(outputs[k].data<float>()[i], (*want)[k].data<float>()[i], 1e-4f) << "seed " << seed << ", " << i;
  }
  std::vector<Tensor> wrong = {Tensor(TensorType{DType::kFloat32, {1, 2}})};
  const Status refused = session->run_into({examples::rfc_model_input()}, wrong);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("output '"), std::string::npos) << refused.message();
}

// submit_into: requests in flight on two lanes, each into its own kept set
// of outputs, give what the portable kernels compute for their inputs.
TEST(SchedulerTest, SubmitIntoWritesEachRequestsOwnOutputs) {
  auto graph = examples::make_rfc_model();
  ASSERT_TRUE(graph.is_ok());
  Profile profile = default_profile();
  profile.max_in_flight = 2;
  auto session = open(*graph, profile);
  ASSERT_NE(session, nullptr);
  constexpr int kRequests = 6;
  std::vector<std::vector<Tensor>> outputs(kRequests);
  std::vector<std::future<Result<RunStats>>> futures;
  for (int i = 0; i < kRequests; ++i) {
    for (const TensorType& t : session->output_types()) outputs[i].emplace_back(t);
    futures.push_back(session->submit_into({testing::random_tensor({1, 3, 8, 8}, 100 + i)}, outputs[i], true));
  }
  for (int i = 0; i < kRequests; ++i) {
    Result<RunStats> stats = futures[i].get();
    ASSERT_TRUE(stats.is_ok()) << stats.status().message();
    EXPECT_FALSE(stats->events.empty());
    Result<std::vector<Tensor>> want = cpu::run_graph_reference(*graph, {testing::random_tensor({1, 3, 8, 8}, 100 + i)});
    ASSERT_TRUE(want.is_ok()) << want.status().message();
    for (int64_t e = 0; e < outputs[i][0].num_elements(); ++e)
      ASSERT_NEAR(outputs[i][0].data<float>()[e], (*want)[0].data<float>()[e], 1e-4f) << "request " << i;
  }
}

TEST(SchedulerTest, MaxInFlightBelowOneIsRefused) {
  auto graph = examples::make_rfc_model();
  ASSERT_TRUE(graph.is_ok());
  Profile profile = default_profile();
  profile.max_in_flight = 0;
  auto program = build_program(*graph, profile);
  ASSERT_TRUE(program.is_ok());
  auto session = Session::create(std::move(program).value(), profile);
  ASSERT_FALSE(session.is_ok());
  EXPECT_NE(session.status().message().find("max_in_flight must be at least 1"), std::string::npos);
}

// CPU-only: many threads on one session with two lanes (the variant the
// ThreadSanitizer build runs).
TEST(SchedulerTest, ConcurrentCpuRequestsMatchSequentialRuns) {
  examples::SchedulerModelOptions o{.channels = 4, .size = 8, .gpu_layers = 2, .cpu_layers = 1};
  auto graph = examples::make_cpu_gpu_cpu(o);
  ASSERT_TRUE(graph.is_ok());
  auto session = open(*graph, profile_from("name: cpu\ndelegates: {cpu: {enabled: true, threads: 1}}\n"
                                           "scheduler: {max_in_flight: 2}\n"));
  ASSERT_NE(session, nullptr);
  std::vector<Tensor> inputs;
  std::vector<std::vector<Tensor>> expected;
  for (int i = 0; i < 8; ++i) {
    inputs.push_back(testing::random_tensor({1, 4, 8, 8}, 900 + i));
    expected.push_back(*session->run({inputs.back()}));
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 100; ++r) {
        const int i = (t + r) % 8;
        auto out = (r % 2) ? session->submit({inputs[i]}).get() : Result<RunResult>(RunResult{*session->run({inputs[i]}), {}});
        if (!out.is_ok() || !bit_identical(out->outputs, expected[i])) bad++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace hetsched
