// The CPU delegate's one thread pool (delegates/cpu/thread_pool.h): a
// delegate with `threads: N` adds N - 1 threads to the process, no more
// (counted in /proc/self/task), and XNNPACK's loops, the fast kernels' and
// the portable kernels' all run on those workers; a loop inside a loop
// runs on its caller; the pthreadpool API and the fast kernels' door reach
// the same workers.
#include <dirent.h>
#include <gtest/gtest.h>
#include <pthreadpool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "delegates/cpu/cpu_delegate.h"
#include "delegates/cpu/fast/task_pool.h"
#include "delegates/cpu/thread_pool.h"
#include "delegates/cpu/xnnpack/threadpool.h"
#include "graph/builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using cpu::JobSource;
using cpu::ThreadPool;
using Ints = std::vector<int64_t>;
using testing::random_tensor;

// ThreadSanitizer's runtime starts a background thread of its own while a
// test runs (scripts/tsan.sh runs the pool-only cases here), so the thread
// counts are checked only without it; the workers' ids are checked always.
#if defined(__SANITIZE_THREAD__)
constexpr bool kExactThreadCounts = false;
#else
constexpr bool kExactThreadCounts = true;
#endif

// The process's threads, by kernel thread id.
std::set<pid_t> process_threads() {
  std::set<pid_t> tids;
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return tids;
  while (const dirent* e = readdir(dir))
    if (e->d_name[0] != '.') tids.insert(static_cast<pid_t>(std::stol(e->d_name)));
  closedir(dir);
  return tids;
}

using testing::f32;

// A conv (an XNNPACK segment), InstanceNormalization (portable: XNNPACK and
// the fast kernels lack it; its rows split over the pool), then 32 MatMuls
// of 64x64 blocks of the result with their transposes (fast kernels), each
// big enough to be split.
Graph conv_norm_matmul() {
  GraphBuilder b("conv_norm_matmul");
  const ValueId x = b.input("x", f32({1, 16, 64, 64}));
  ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({32, 16, 3, 3}, 1, -0.2f, 0.2f))},
                   {{"pads", Ints{1, 1, 1, 1}}});
  y = b.op("InstanceNormalization", {y, b.constant("scale", random_tensor({32}, 2)),
                                     b.constant("bias", random_tensor({32}, 3))});
  const ValueId a = b.op("Reshape", {y, b.constant_i64("shape", {3}, {32, 64, 64})});
  const ValueId at = b.op("Transpose", {a}, {{"perm", Ints{0, 2, 1}}});
  b.output(b.op("MatMul", {a, at}));
  return testing::build(b);
}

struct Island {
  std::unique_ptr<Delegate> delegate;
  std::unique_ptr<IslandHandle> handle;
};

Result<Island> load(const Graph& graph, const std::string& engine, int threads) {
  Island loaded;
  HS_ASSIGN_OR_RETURN(loaded.delegate,
                      cpu::make_cpu_delegate({{"engine", engine}, {"threads", std::to_string(threads)}}));
  hetsched::Island island;
  island.delegate = "cpu";
  island.graph = &graph;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) island.nodes.push_back(n);
  island.inputs = graph.inputs();
  island.outputs = graph.outputs();
  HS_ASSIGN_OR_RETURN(const Blob blob, loaded.delegate->compile(island, {}));
  HS_ASSIGN_OR_RETURN(loaded.handle, loaded.delegate->init(blob, InitContext{}));
  return loaded;
}

Status run(const Graph& graph, IslandHandle& handle, const Tensor& input, Tensor& output) {
  const TensorRef in{&graph.value(graph.inputs()[0]).type, const_cast<std::byte*>(input.raw())};
  const TensorRef out{&output.type(), output.raw()};
  ExecContext ctx;
  return handle.execute(ctx, {&in, 1}, {&out, 1});
}

// The test the issue asked for: threads N, N - 1 new threads (the caller is
// the Nth), and all three kinds of kernel ran items on them.
TEST(CpuThreadPoolTest, OnePoolOfThreadsMinusOneWorkersServesEveryKernel) {
  constexpr int kThreads = 3;
  // The conv is for XNNPACK: Winograd takes 16 -> 32 channels at 64x64.
  testing::ScopedEnv winograd_off("HETSCHED_WINOGRAD", "off");
  const Graph graph = conv_norm_matmul();
  const Tensor input = random_tensor({1, 16, 64, 64}, 4);
  const std::set<pid_t> before = process_threads();
  ASSERT_FALSE(before.empty()) << "cannot read /proc/self/task";

  auto loaded = load(graph, "xnnpack", kThreads);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  Island island = std::move(loaded).value();
  const cpu::CpuEngineCoverage& coverage = *cpu::cpu_engine_coverage(*island.handle);
  ASSERT_EQ(coverage.xnnpack_segments, 1);
  // MatMul, and the Reshape and Transpose it reads through (fast/attention_plan.h).
  ASSERT_GE(coverage.fast_ops, 3);
  ASSERT_EQ(coverage.portable_ops - coverage.fast_ops, 1);  // InstanceNormalization
  const ThreadPool* pool = cpu::cpu_thread_pool(*island.handle);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->threads(), kThreads);

  Tensor output(graph.value(graph.outputs()[0]).type);
  // Whether a worker takes part in a job depends on the OS scheduler (on a
  // loaded machine a worker may not run during a short job): run until each
  // kind of kernel had a worker in at least one job, or give up.
  const auto worker_ran = [&](JobSource s) { return pool->stats().worker_jobs[static_cast<int>(s)] > 0; };
  for (int r = 0; r < 200; ++r) {
    ASSERT_TRUE(run(graph, *island.handle, input, output).is_ok());
    if (worker_ran(JobSource::kPthreadpool) && worker_ran(JobSource::kFast) && worker_ran(JobSource::kPortable)) break;
  }
  EXPECT_TRUE(worker_ran(JobSource::kPthreadpool)) << "no XNNPACK loop ran on a worker";
  EXPECT_TRUE(worker_ran(JobSource::kFast)) << "no fast kernel ran on a worker";
  EXPECT_TRUE(worker_ran(JobSource::kPortable)) << "no portable kernel ran on a worker";

  std::set<pid_t> added;
  const std::set<pid_t> after = process_threads();
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::inserter(added, added.end()));
  if (kExactThreadCounts) {
    EXPECT_LE(added.size(), static_cast<size_t>(kThreads - 1)) << "threads: " << kThreads;
  }
  const std::vector<pid_t> workers = pool->worker_tids();
  EXPECT_EQ(workers.size(), static_cast<size_t>(kThreads - 1));
  for (pid_t w : workers) EXPECT_TRUE(added.count(w)) << "worker " << w << " is not one of the new threads";

  // And the outputs are the reference kernels' (engine portable; its pool
  // is a second delegate's, made after the count above).
  auto reference = load(graph, "portable", 1);
  ASSERT_TRUE(reference.is_ok()) << reference.status().message();
  Tensor expected(graph.value(graph.outputs()[0]).type);
  ASSERT_TRUE(run(graph, *reference->handle, input, expected).is_ok());
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const float e = expected.data<float>()[i], a = output.data<float>()[i];
    ASSERT_NEAR(a, e, 1e-3f + 1e-4f * std::abs(e)) << "element " << i;
  }
}

// threads: 1 starts no thread at all.
TEST(CpuThreadPoolTest, OneThreadStartsNoWorker) {
  const Graph graph = conv_norm_matmul();
  const Tensor input = random_tensor({1, 16, 64, 64}, 4);
  const size_t before = process_threads().size();
  auto loaded = load(graph, "xnnpack", 1);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  Tensor output(graph.value(graph.outputs()[0]).type);
  ASSERT_TRUE(run(graph, *loaded->handle, input, output).is_ok());
  if (kExactThreadCounts) {
    EXPECT_EQ(process_threads().size(), before);
  }
}

// The two doors, the pthreadpool API and the fast kernels' TaskPool::run,
// reach the same workers.
TEST(CpuThreadPoolTest, PthreadpoolAndTaskPoolShareTheWorkers) {
  const size_t before = process_threads().size();
  std::unique_ptr<pthreadpool, void (*)(pthreadpool_t)> pool(pthreadpool_create(3), pthreadpool_destroy);
  ASSERT_NE(pool, nullptr);
  if (kExactThreadCounts) {
    EXPECT_EQ(process_threads().size(), before + 2);
  }
  ThreadPool* engine = cpu::xnnpack::thread_pool_of(pool.get());
  struct Seen {
    std::mutex mutex;
    std::set<pid_t> tids;
    static void task(void* context, size_t) {
      auto& s = *static_cast<Seen*>(context);
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
      const std::lock_guard<std::mutex> lock(s.mutex);
      s.tids.insert(static_cast<pid_t>(syscall(SYS_gettid)));
    }
  } via_api, via_task_pool;
  for (int r = 0; r < 50; ++r) {
    pthreadpool_parallelize_1d(pool.get(), &Seen::task, &via_api, 64, 0);
    engine->run(64, &Seen::task, &via_task_pool);
  }
  const std::vector<pid_t> workers = engine->worker_tids();
  std::set<pid_t> allowed(workers.begin(), workers.end());
  allowed.insert(static_cast<pid_t>(syscall(SYS_gettid)));
  for (const Seen* s : {&via_api, &via_task_pool})
    for (pid_t t : s->tids) EXPECT_TRUE(allowed.count(t)) << "thread " << t << " is not the pool's";
  EXPECT_GT(via_api.tids.size(), 1u);
  EXPECT_GT(via_task_pool.tids.size(), 1u);
  if (kExactThreadCounts) {
    EXPECT_EQ(process_threads().size(), before + 2);
  }
  const ThreadPool::Stats stats = engine->stats();
  EXPECT_EQ(stats.jobs[static_cast<int>(JobSource::kPthreadpool)], 50u);
  EXPECT_EQ(stats.jobs[static_cast<int>(JobSource::kFast)], 50u);
}

// A task that starts a loop on its own pool (a portable MatMul's batches,
// each a parallel GEMM) gets it run on its own thread, not a deadlock.
TEST(CpuThreadPoolTest, LoopInsideALoopRunsOnItsCaller) {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> runs(16 * 16);
  pool.parallelize(16, 0, JobSource::kPortable, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i)
      pool.parallelize(16, 0, JobSource::kPortable, [&](size_t b, size_t e) {
        for (size_t j = b; j < e; ++j) runs[i * 16 + j].fetch_add(1);
      });
  });
  for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << i;
  EXPECT_EQ(pool.stats().jobs[static_cast<int>(JobSource::kPortable)], 1u);
}

}  // namespace
}  // namespace hetsched
