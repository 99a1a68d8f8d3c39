// What each GPU delegate's island records — dispatches and barriers — as
// Delegate::command_stream counts it from the blob (what `hetsched preview`
// prints), against counts derived by hand and against what init recorded.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "delegates/registry.h"
#include "delegates/vgf/lowering.h"
#include "delegates/vgf/vgf_runtime.h"
#include "delegates/vulkan/vulkan_island.h"
#include "graph/builder.h"
#include "scheduler/model_loader.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"
#include "test/vulkan_test_driver.h"

namespace hetsched {
namespace {

// Two branches of x and their sum, all three island outputs:
//   a = Relu(Conv1x1(x))   one dispatch (Relu in the conv's epilogue)
//   s = Sigmoid(x)         one dispatch, independent of a: no barrier
//   y = a + s              one dispatch after a barrier (reads a and s)
// a and s are outputs, so neither fuses into the Add.
Graph branches() {
  GraphBuilder b("branches");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 5, 7}});
  const ValueId c = b.op("Conv", {x, b.constant("w", testing::random_tensor({4, 4, 1, 1}, 3))}, {}, "conv");
  const ValueId a = b.op("Relu", {c}, {}, "relu");
  const ValueId s = b.op("Sigmoid", {x}, {}, "sigmoid");
  b.output(a);
  b.output(s);
  b.output(b.op("Add", {a, s}, {}, "add"));
  return testing::build(b);
}

constexpr CommandStreamCounts kBranches{3, 0, 1};

void expect_counts(const CommandStreamCounts& got, const CommandStreamCounts& want, const std::string& what) {
  EXPECT_EQ(got.dispatches, want.dispatches) << what;
  EXPECT_EQ(got.copies, want.copies) << what;
  EXPECT_EQ(got.barriers, want.barriers) << what;
}

class CommandStreamTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CommandStreamTest, CountsTheDispatchesAndBarriersOfTheLowering) {
  const Graph g = branches();
  Result<std::unique_ptr<Delegate>> d = make_delegate(GetParam(), {});
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  Result<Blob> blob = (*d)->compile(testing::whole_graph_island(g, GetParam()), {});
  ASSERT_TRUE(blob.is_ok()) << blob.status().message();
  Result<CommandStreamCounts> counts = (*d)->command_stream(*blob, {});
  ASSERT_TRUE(counts.is_ok()) << counts.status().message();
  expect_counts(*counts, kBranches, GetParam());
}

// BERT's written-out GELU after a linear layer: both delegates fuse it to
// one Gelu at compile, the linear layer's epilogue — one dispatch, no barrier.
TEST_P(CommandStreamTest, ErfGeluFoldsIntoTheLinearLayerBeforeIt) {
  GraphBuilder b("linear_gelu");
  const ValueId x = b.input("x", {DType::kFloat32, {4, 16}});
  const ValueId h = b.op("Add", {b.op("MatMul", {x, b.constant("w", testing::random_tensor({16, 8}, 5))}),
                                 b.constant("bias", testing::random_tensor({8}, 6))});
  const ValueId e = b.op("Erf", {b.op("Div", {h, b.constant_f32("sqrt2", {}, {1.41421356f})})});
  b.output(b.op("Mul", {h, b.op("Mul", {b.op("Add", {e, b.constant_f32("one", {}, {1.f})}), b.constant_f32("half", {}, {0.5f})})}));
  const Graph g = testing::build(b);
  Result<std::unique_ptr<Delegate>> d = make_delegate(GetParam(), {});
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  Result<Blob> blob = (*d)->compile(testing::whole_graph_island(g, GetParam()), {});
  ASSERT_TRUE(blob.is_ok()) << blob.status().message();
  Result<CommandStreamCounts> counts = (*d)->command_stream(*blob, {});
  ASSERT_TRUE(counts.is_ok()) << counts.status().message();
  expect_counts(*counts, {1, 0, 0}, GetParam());
}

TEST_P(CommandStreamTest, RefusesACorruptBlob) {
  Result<std::unique_ptr<Delegate>> d = make_delegate(GetParam(), {});
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  Result<CommandStreamCounts> counts = (*d)->command_stream(Blob{1, 2, 3}, {});
  EXPECT_FALSE(counts.is_ok());
}

INSTANTIATE_TEST_SUITE_P(Delegates, CommandStreamTest, ::testing::Values("vulkan", "vgf"));

TEST(CommandStreamTest, TheCpuDelegateRecordsNone) {
  Result<std::unique_ptr<Delegate>> d = make_delegate("cpu", {});
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  EXPECT_EQ((*d)->command_stream(Blob{}, {}).status().code(), StatusCode::kFailedPrecondition);
}

// `hetsched preview` prints the same counts per island.
TEST_P(CommandStreamTest, PreviewPrintsThem) {
  testing::TempDir dir;
  const std::string model = (dir / "branches.hsg").string();
  ASSERT_TRUE(write_graph_file(branches(), model).is_ok());
  const std::string profile = testing::source_path("configs/" + GetParam() + ".yaml").string();
  auto r = testing::run_cli("preview " + model + " --profile " + profile);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(GetParam() + "#0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("dispatches 3 · barriers 1\n"), std::string::npos) << r.output;
  r = testing::run_cli("preview " + model + " --profile " + profile + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"commands\": {\"dispatches\": 3, \"copies\": 0, \"barriers\": 1}"), std::string::npos)
      << r.output;
}

// `hetsched bench` prints what the session's islands recorded: the same.
TEST_P(CommandStreamTest, BenchPrintsTheRecordedCounts) {
  testing::TempDir dir;
  const std::string model = (dir / "branches.hsg").string();
  ASSERT_TRUE(write_graph_file(branches(), model).is_ok());
  const std::string profile = testing::source_path("configs/" + GetParam() + ".yaml").string();
  auto r = testing::run_cli("bench " + model + " --profile " + profile + " -n 1 --warmup 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("commands " + GetParam() + "#0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("dispatches 3 · barriers 1\n"), std::string::npos) << r.output;
  r = testing::run_cli("bench " + model + " --profile " + profile + " -n 1 --warmup 0 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"commands\": {\"" + GetParam() + "#0\": {\"dispatches\": 3, \"copies\": 0, \"barriers\": 1}}"),
            std::string::npos)
      << r.output;
}

// The islands record what the counts say, and the one barrier is enough:
// synchronization validation (on in these tests) reports any missing one.
class CommandStreamGpuTest : public testing::VkTest {};

TEST_F(CommandStreamGpuTest, TheVulkanIslandRecordsTheCountedBarriers) {
  const Graph g = branches();
  Result<std::unique_ptr<Delegate>> d =
      make_delegate("vulkan", {{"gpu_shared_context_token", "command-stream"},
                               {"gpu_validation", validation_wanted() ? "1" : "0"}});
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  Result<testing::GpuIslandDriver> driver = testing::GpuIslandDriver::create(**d, g);
  ASSERT_TRUE(driver.is_ok()) << driver.status().message();
  watch(driver->context());
  const auto& island = dynamic_cast<const vulkan::VulkanIsland&>(driver->handle());
  expect_counts({island.dispatch_count(), 0, island.barrier_count()}, kBranches, "recorded");
  const Tensor x = testing::random_tensor({1, 4, 5, 7}, 11);
  Result<std::vector<Tensor>> got = driver->run({x});
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  Result<std::vector<Tensor>> want = testing::run_on_cpu(g, {x});
  ASSERT_TRUE(want.is_ok()) << want.status().message();
  for (size_t i = 0; i < want->size(); ++i) EXPECT_TRUE(testing::all_close(got->at(i), want->at(i), 1e-5f, 1e-5f));
}

TEST_F(CommandStreamGpuTest, TheVgfSessionRecordsTheCountedBarriers) {
  const Graph g = branches();
  auto context = make_context();
  ASSERT_NE(context, nullptr);
  Result<vgf::VgfFile> file = vgf::lower_island(testing::whole_graph_island(g, "vgf"));
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  auto pool = std::make_shared<vgf::DelegatePool>();
  Result<CommandPool> command_pool = CommandPool::create(*context);
  ASSERT_TRUE(command_pool.is_ok()) << command_pool.status().message();
  pool->pool = std::move(*command_pool);
  Result<std::unique_ptr<vgf::VgfSession>> session = vgf::VgfSession::create(context, pool, *file, 0);
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  expect_counts({(*session)->dispatch_count(), 0, (*session)->barrier_count()}, kBranches, "recorded");
}

}  // namespace
}  // namespace hetsched
