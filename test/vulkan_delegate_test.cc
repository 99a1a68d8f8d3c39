// The Vulkan delegate's contract: registration and options, supports()
// reasons, blob checks, shared contexts and per-delegate command pools,
// and how execute() submits (device-side waits, signals, no host waits).
#include "delegates/vulkan/vulkan_delegate.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "delegates/registry.h"
#include "delegates/vulkan/op_support.h"
#include "delegates/vulkan/vulkan_island.h"
#include "graph/builder.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"
#include "test/vulkan_test_driver.h"

namespace hetsched {
namespace {

using testing::random_tensor;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::unique_ptr<Delegate> make(const DelegateOptions& options) {
  Result<std::unique_ptr<Delegate>> d = vulkan::make_vulkan_delegate(options);
  EXPECT_TRUE(d.is_ok()) << d.status().message();
  return d.is_ok() ? std::move(d).value() : nullptr;
}

// y = relu(x + 1) on [2, 3]: expected values are derived by hand in the tests.
Graph relu_plus_one() {
  GraphBuilder b("relu_plus_one");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 3}});
  const ValueId a = b.op("Add", {x, b.constant_f32("one", {}, {1.f})}, {}, "add");
  b.output(b.op("Relu", {a}, {}, "relu"));
  Result<Graph> g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

Tensor tensor_2x3(std::vector<float> v) { return Tensor::from_vector<float>(DType::kFloat32, {2, 3}, v); }

std::vector<float> values(const Tensor& t) { return t.to_float_vector(); }

// --- no GPU needed ---------------------------------------------------------

TEST(VulkanDelegateTest, IsRegisteredRightAfterCpu) {
  const auto& infos = delegate_infos();
  ASSERT_GE(infos.size(), 2u);
  EXPECT_EQ(infos[0].name, "cpu");
  EXPECT_EQ(infos[1].name, "vulkan");
  Result<std::unique_ptr<Delegate>> d = make_delegate("vulkan", {});
  ASSERT_TRUE(d.is_ok()) << d.status().message();
  EXPECT_EQ((*d)->name(), "vulkan");
}

TEST(VulkanDelegateTest, ReportsItsGpuResourceAndDeviceMemory) {
  auto d = make({{"gpu_shared_context_token", "tok"}, {"gpu_shared_group_id", "3"}});
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->resource(), "gpu:tok:3");
  EXPECT_EQ(d->memory_kind(), MemoryDomain::Kind::kDevice);
}

TEST(VulkanDelegateTest, EstimatesConvFlopsAndFreeReshapes) {
  GraphBuilder b("g");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 3, 8, 8}});
  const ValueId y = b.op("Conv", {x, b.constant("w", random_tensor({4, 3, 3, 3}, 1))}, {}, "conv");
  b.output(b.op("Reshape", {y, b.constant_i64("s", {1}, {-1})}, {}, "flat"));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto d = make({});
  const CostEstimate conv = d->estimate(*g, g->find_node("conv"), builtin_delegate_costs("vulkan", "gpu-discrete", 0));
  EXPECT_EQ(conv.flops, 2.0 * (4 * 6 * 6) * (3 * 3 * 3));  // 2 * outputs * taps per output
  EXPECT_EQ(conv.bytes, 4.0 * (3 * 8 * 8 + 4 * 3 * 3 * 3 + 4 * 6 * 6));
  EXPECT_GT(conv.seconds, 0.0);
  const CostEstimate flat = d->estimate(*g, g->find_node("flat"), builtin_delegate_costs("vulkan", "gpu-discrete", 0));
  EXPECT_EQ(flat.seconds, 0.0);
}

TEST(VulkanDelegateTest, RejectsMalformedOptions) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"gpu_shared_group_id", "seven"},
                                                        {"gpu_shared_context_mode", "sometimes"},
                                                        {"gpu_shared_sync_mode", "eventually"},
                                                        {"gpu_validation", "maybe"}}) {
    Result<std::unique_ptr<Delegate>> d = vulkan::make_vulkan_delegate({{key, value}});
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << key;
    EXPECT_TRUE(contains(d.status().message(), "failed to make vulkan delegate")) << d.status().message();
  }
}

TEST(VulkanSupportsTest, ExplainsEachRefusal) {
  GraphBuilder b("refusals");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 4, 8, 8}});
  const ValueId w = b.input("w", {DType::kFloat32, {4, 4, 3, 3}});
  const ValueId i = b.input("i", {DType::kInt64, {4}});
  const ValueId idx = b.input("idx", {DType::kInt64, {2}});
  b.output(b.op("Add", {i, i}, {}, "int_add"));
  b.output(b.op("Conv", {x, w}, {}, "runtime_weight"));
  b.output(b.op("Gather", {x, idx}, {{"axis", int64_t{1}}}, "runtime_indices"));
  b.output(b.op("Clip", {x, b.input("lo", {DType::kFloat32, {}})}, {}, "runtime_bound"));
  b.output(b.op("Relu", {b.input("big", {DType::kFloat32, {1, 1, 1024, 1024}})}, {}, "big_relu"));
  b.output(b.op("Relu", {x}, {}, "fine"));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  // Nodes that shape inference itself would refuse, added afterwards.
  const NodeId unknown = g->add_node("NonMaxSuppression", "nms", {x}, {"boxes"});
  Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{2, 2});
  g->add_node("MaxPool", "with_indices", {x}, {"pooled", "indices"}, pool);

  vulkan::DeviceLimits limits;
  limits.max_storage_buffer_range = 1 << 20;  // 1 MiB: the 4 MiB tensor does not fit
  auto reason = [&](const std::string& node) {
    const Capability c = vulkan::vulkan_supports(*g, g->find_node(node), limits);
    EXPECT_FALSE(c.supported) << node;
    return c.reason;
  };
  EXPECT_EQ(vulkan::vulkan_supports(*g, unknown, limits).reason, "op NonMaxSuppression not implemented");
  EXPECT_TRUE(contains(reason("int_add"), "dtype i64 not supported")) << reason("int_add");
  EXPECT_EQ(reason("runtime_weight"), "weight W must be a constant");
  EXPECT_TRUE(contains(reason("runtime_indices"), "indices must be a constant")) << reason("runtime_indices");
  EXPECT_EQ(reason("runtime_bound"), "Clip's min must be a constant");
  EXPECT_EQ(reason("with_indices"), "MaxPool's Indices output not supported");
  EXPECT_EQ(reason("big_relu"), "tensor 'big_relu_out' of 4194304 bytes exceeds maxStorageBufferRange 1048576");
  EXPECT_TRUE(vulkan::vulkan_supports(*g, g->find_node("fine"), limits).supported);
}

TEST(VulkanSupportsTest, RefusesGatherIndicesOutOfRange) {
  GraphBuilder b("gather");
  const ValueId x = b.input("x", {DType::kFloat32, {3, 4}});
  // Shape inference checks constant indices too, so the bad index is put in afterwards.
  b.output(b.op("Gather", {x, b.constant_i64("idx", {2}, {0, 1})}, {}, "gather"));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  g->value(g->find_value("idx")).constant =
      std::make_shared<const Tensor>(Tensor::from_vector<int64_t>(DType::kInt64, {2}, {0, 3}));
  const Capability c = vulkan::vulkan_supports(*g, g->find_node("gather"), {});
  EXPECT_FALSE(c.supported);
  EXPECT_TRUE(contains(c.reason, "index 3 (element 1 of the indices) is out of range [-3, 2]")) << c.reason;
}

TEST(VulkanDelegateTest, CompileRefusesAnUnsupportedNode) {
  GraphBuilder b("g");
  const ValueId i = b.input("i", {DType::kInt64, {4}});
  b.output(b.op("Add", {i, i}, {}, "int_add"));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok());
  auto d = make({});
  Result<Blob> blob = d->compile(testing::whole_graph_island(*g, "vulkan", 5), {});
  EXPECT_EQ(blob.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(blob.status().message(),
            "failed to compile Vulkan island 5: node 'int_add' (Add): dtype i64 not supported (output 'int_add_out')");
}

TEST(VulkanDelegateTest, InitRefusesACorruptBlobBeforeTouchingTheGpu) {
  const Graph g = relu_plus_one();
  auto d = make({{"gpu_shared_context_mode", "lookup_only"}, {"gpu_shared_context_token", "never_registered"}});
  Result<Blob> blob = d->compile(testing::whole_graph_island(g, "vulkan"), {});
  ASSERT_TRUE(blob.is_ok()) << blob.status().message();
  Blob corrupt = *blob;
  corrupt[corrupt.size() - 7] ^= 0x01;
  InitContext ctx;
  ctx.island_id = 3;
  Result<std::unique_ptr<IslandHandle>> handle = d->init(corrupt, ctx);
  EXPECT_EQ(handle.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(
      handle.status().message(),
      "failed to init Vulkan island 3: failed to load Vulkan island blob: checksum mismatch (the blob is corrupt)");
  handle = d->init(Blob{}, ctx);
  EXPECT_EQ(handle.status().code(), StatusCode::kDataLoss);
}

// --- on a device --------------------------------------------------------------

class VulkanDelegateGpuTest : public testing::VkTest {
 protected:
  // Options for a delegate on context `token:group` that creates (with
  // validation) or reuses it.
  static DelegateOptions shared(const std::string& token, int group = 0, const std::string& mode = "lookup_or_create") {
    return {{"gpu_shared_context_token", token},
            {"gpu_shared_group_id", std::to_string(group)},
            {"gpu_shared_context_mode", mode},
            {"gpu_validation", "1"}};
  }

  // An initialised island of relu_plus_one on `d`, its context watched.
  Result<testing::GpuIslandDriver> drive(Delegate& d, const Graph& g, InitContext init = {}, int id = 0) {
    Result<testing::GpuIslandDriver> driver = testing::GpuIslandDriver::create(d, g, std::move(init), id);
    if (driver.is_ok()) watch(driver->context());
    return driver;
  }

  static const vulkan::VulkanIsland& island(const testing::GpuIslandDriver& driver) {
    return dynamic_cast<const vulkan::VulkanIsland&>(driver.handle());
  }
};

TEST_F(VulkanDelegateGpuTest, RunsAnIslandAndReplaysItWithNewInputs) {
  const Graph g = relu_plus_one();
  auto d = make(shared("replay"));
  Result<testing::GpuIslandDriver> driver = drive(*d, g);
  ASSERT_TRUE(driver.is_ok()) << driver.status().message();
  EXPECT_EQ(island(*driver).node_count(), 2u);
  EXPECT_EQ(island(*driver).dispatch_count(), 1u);  // add and relu fused

  Result<std::vector<Tensor>> out = driver->run({tensor_2x3({-3, -1, -0.5f, 0, 1.5f, 2})});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(values((*out)[0]), (std::vector<float>{0, 0, 0.5f, 1, 2.5f, 3}));
  out = driver->run({tensor_2x3({10, -10, 0.25f, -2, -1.25f, 7})});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(values((*out)[0]), (std::vector<float>{11, 0, 1.25f, 0, 0, 8}));
}

TEST_F(VulkanDelegateGpuTest, ExposesNchwDeviceTensorsInItsContextDomain) {
  const Graph g = relu_plus_one();
  auto d = make(shared("domains", 4));
  Result<testing::GpuIslandDriver> driver = drive(*d, g);
  ASSERT_TRUE(driver.is_ok()) << driver.status().message();
  const IslandHandle& h = driver->handle();
  for (const DeviceTensor* t : {h.device_input(0), h.device_output(0)}) {
    ASSERT_NE(t, nullptr);
    ASSERT_NE(t->buffer, nullptr);
    EXPECT_EQ(t->offset % kDeviceArenaAlignment, 0u);
    EXPECT_EQ(t->size, 6 * sizeof(float));
    EXPECT_EQ(t->layout, TensorLayout::kNchw);
  }
  // One arena of the island's own (no session placed it): disjoint ranges.
  const DeviceTensor& in = *h.device_input(0);
  const DeviceTensor& out = *h.device_output(0);
  EXPECT_EQ(in.buffer, out.buffer);
  EXPECT_TRUE(in.offset + in.size <= out.offset || out.offset + out.size <= in.offset);
  EXPECT_EQ(h.device_input(1), nullptr);
  EXPECT_EQ(h.input_domain(0), (MemoryDomain{MemoryDomain::Kind::kDevice, "domains:4"}));
  EXPECT_EQ(h.output_domain(0), (MemoryDomain{MemoryDomain::Kind::kDevice, "domains:4"}));
}

TEST_F(VulkanDelegateGpuTest, TwoDelegatesShareTheContextButNotTheirCommandPools) {
  const Graph g = relu_plus_one();
  auto first = make(shared("pools"));
  auto second = make(shared("pools"));
  Result<testing::GpuIslandDriver> a = drive(*first, g, {}, 1);
  Result<testing::GpuIslandDriver> b = drive(*second, g, {}, 2);
  Result<testing::GpuIslandDriver> a2 = drive(*first, g, {}, 3);
  ASSERT_TRUE(a.is_ok() && b.is_ok() && a2.is_ok());
  EXPECT_EQ(a->handle().gpu_context(), b->handle().gpu_context());
  EXPECT_EQ(SharedGpuContextRegistry::get().lookup("pools:0"), a->handle().gpu_context());
  EXPECT_NE(island(*a).command_pool(), island(*b).command_pool());
  // A delegate instance keeps one pool for all its islands.
  EXPECT_EQ(island(*a).command_pool(), island(*a2).command_pool());
  Result<std::vector<Tensor>> out = b->run({tensor_2x3({1, 2, 3, -4, -5, -6})});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(values((*out)[0]), (std::vector<float>{2, 3, 4, 0, 0, 0}));
}

TEST_F(VulkanDelegateGpuTest, DifferentGroupsGetDifferentContexts) {
  const Graph g = relu_plus_one();
  auto a = make(shared("groups", 1));
  auto b = make(shared("groups", 2));
  Result<testing::GpuIslandDriver> da = drive(*a, g);
  Result<testing::GpuIslandDriver> db = drive(*b, g);
  ASSERT_TRUE(da.is_ok() && db.is_ok());
  EXPECT_NE(da->handle().gpu_context(), db->handle().gpu_context());
}

TEST_F(VulkanDelegateGpuTest, LookupOnlyNeedsARegisteredContext) {
  const Graph g = relu_plus_one();
  auto d = make(shared("absent", 0, "lookup_only"));
  Result<testing::GpuIslandDriver> driver = testing::GpuIslandDriver::create(*d, g);
  EXPECT_EQ(driver.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(driver.status().message(), "failed to init Vulkan island 0: ")) << driver.status().message();

  auto context = make_context();
  ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("absent:0", context).is_ok());
  driver = drive(*d, g);
  ASSERT_TRUE(driver.is_ok()) << driver.status().message();
  EXPECT_EQ(driver->handle().gpu_context(), context);
}

TEST_F(VulkanDelegateGpuTest, DisabledModeUsesAPrivateContext) {
  const Graph g = relu_plus_one();
  auto d = make(shared("private", 0, "disabled"));
  Result<testing::GpuIslandDriver> driver = drive(*d, g);
  ASSERT_TRUE(driver.is_ok()) << driver.status().message();
  EXPECT_EQ(SharedGpuContextRegistry::get().lookup("private:0"), nullptr);
}

// Collects what the default logger writes at debug level while it lives.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) {
    sink_->set_pattern("%v");
    spdlog::default_logger()->sinks().push_back(sink_);
    spdlog::default_logger()->set_level(spdlog::level::debug);
  }
  ~LogCapture() {
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::find(sinks.begin(), sinks.end(), sink_));
    spdlog::default_logger()->set_level(old_level_);
  }
  std::string text() const { return text_.str(); }

 private:
  spdlog::level::level_enum old_level_ = spdlog::default_logger()->level();
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

TEST_F(VulkanDelegateGpuTest, LogsInitWithCreatedThenReusedAndExecuteWithSyncValues) {
  LogCapture log;
  const Graph g = relu_plus_one();
  auto first = make(shared("logs", 7));
  auto second = make(shared("logs", 7));
  Result<testing::GpuIslandDriver> a = drive(*first, g, {}, 1);
  Result<testing::GpuIslandDriver> b = drive(*second, g, {}, 2);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  ASSERT_TRUE(b->run({tensor_2x3({0, 0, 0, 0, 0, 0})}).is_ok());
  const std::string text = log.text();
  const std::string device(a->context().device_name());
  EXPECT_TRUE(contains(text, "[Vulkan] init: island 1, 2 ops (1 dispatches), context logs:7 (created) on " + device))
      << text;
  EXPECT_TRUE(contains(text, "[Vulkan] init: island 2, 2 ops (1 dispatches), context logs:7 (reused) on " + device))
      << text;
  EXPECT_TRUE(contains(text, "[Vulkan] execute: island 2, wait t=0, signal t=" + std::to_string(b->last_signalled())))
      << text;
}

TEST_F(VulkanDelegateGpuTest, ExecuteWaitsOnTheDeviceNotOnTheHost) {
  const Graph g = relu_plus_one();
  auto d = make(shared("device_wait"));
  Result<testing::GpuIslandDriver> driver = drive(*d, g);
  ASSERT_TRUE(driver.is_ok()) << driver.status().message();
  SharedGpuContext& context = driver->context();
  ASSERT_TRUE(driver->write_inputs({tensor_2x3({1, -1, 2, -2, 3, -3})}).is_ok());

  // A value nothing has signalled yet: the island's work must wait for it
  // on the device while execute() returns at once.
  uint64_t gate = 0;
  {
    auto lock = context.lock_queue();
    gate = context.timeline().next_value();
  }
  ExecContext ctx;
  ctx.gpu = GpuStepSync{gate, true, false};
  ASSERT_TRUE(driver->handle().execute(ctx, {}, {}).is_ok());
  ASSERT_GT(ctx.signalled_value, gate);
  Result<uint64_t> now = context.timeline().current_value();
  ASSERT_TRUE(now.is_ok());
  EXPECT_LT(*now, ctx.signalled_value);
  EXPECT_EQ(context.wait(ctx.signalled_value, std::chrono::milliseconds(-1)).code(), StatusCode::kUnavailable);

  ASSERT_TRUE(context.timeline().signal_from_host(gate).is_ok());
  ASSERT_TRUE(context.wait(ctx.signalled_value).is_ok());
  Result<std::vector<Tensor>> out = driver->read_outputs();
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(values((*out)[0]), (std::vector<float>{2, 0, 3, 0, 4, 0}));
}

TEST_F(VulkanDelegateGpuTest, SignalsIncreasingValuesOrIdlesTheQueueWhenAsked) {
  const Graph g = relu_plus_one();
  auto d = make(shared("signals"));
  Result<testing::GpuIslandDriver> driver = drive(*d, g);
  ASSERT_TRUE(driver.is_ok()) << driver.status().message();
  const Tensor in = tensor_2x3({-1, 0, 1, 2, 3, 4});
  ASSERT_TRUE(driver->run({in}).is_ok());
  const uint64_t first = driver->last_signalled();
  ASSERT_TRUE(driver->run({in}, GpuStepSync{first, true, false}).is_ok());
  EXPECT_GT(driver->last_signalled(), first);

  // queue_wait_idle mode: no semaphore signal, the queue is idle on return.
  Result<std::vector<Tensor>> out = driver->run({in}, GpuStepSync{0, false, true});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(driver->last_signalled(), 0u);
  EXPECT_EQ(values((*out)[0]), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

// ONNX's test_resize_downsample_scales_linear_align_corners: with scales,
// align_corners divides by the unrounded resized length (4 * 0.6 - 1), so
// output column 1 samples input x = 3 / 1.4 = 2.142857: 1 + 2.142857.
TEST_F(VulkanDelegateGpuTest, ResizeAlignCornersUsesTheUnroundedLengthOfScales) {
  GraphBuilder b("resize");
  const ValueId x = b.input("x", {DType::kFloat32, {1, 1, 2, 4}});
  b.output(b.op("Resize", {x, kNoValue, b.constant_f32("scales", {4}, {1, 1, 0.6f, 0.6f})},
                {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}}));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto d = make(shared("resize"));
  Result<testing::GpuIslandDriver> driver = drive(*d, *g);
  ASSERT_TRUE(driver.is_ok()) << driver.status().message();
  Result<std::vector<Tensor>> out =
      driver->run({Tensor::from_vector<float>(DType::kFloat32, {1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  const std::vector<float> y = values((*out)[0]);
  ASSERT_EQ(y.size(), 2u);
  EXPECT_FLOAT_EQ(y[0], 1.f);
  EXPECT_NEAR(y[1], 1.f + 3.f / 1.4f, 1e-5f);
}

TEST_F(VulkanDelegateGpuTest, TimestampsMeasureTheCommandBuffer) {
  GraphBuilder b("matmul");
  b.output(b.op("MatMul", {b.input("a", {DType::kFloat32, {64, 64}}), b.input("b", {DType::kFloat32, {64, 64}})}));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok());
  auto timed = make(shared("timestamps"));
  InitContext init;
  init.options = {{"gpu_timestamps", "1"}};
  Result<testing::GpuIslandDriver> driver = drive(*timed, *g, init);
  ASSERT_TRUE(driver.is_ok()) << driver.status().message();
  EXPECT_EQ(island(*driver).last_gpu_seconds().status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(driver->run({random_tensor({64, 64}, 1), random_tensor({64, 64}, 2)}).is_ok());
  Result<double> seconds = island(*driver).last_gpu_seconds();
  ASSERT_TRUE(seconds.is_ok()) << seconds.status().message();
  EXPECT_GT(*seconds, 0.0);
  EXPECT_LT(*seconds, 60.0);

  Result<testing::GpuIslandDriver> untimed = drive(*timed, *g);
  ASSERT_TRUE(untimed.is_ok());
  ASSERT_TRUE(untimed->run({random_tensor({64, 64}, 1), random_tensor({64, 64}, 2)}).is_ok());
  EXPECT_EQ(island(*untimed).last_gpu_seconds().status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(VulkanDelegateGpuTest, SupportsChecksTheDevicesStorageBufferRange) {
  auto context = make_context();
  ASSERT_TRUE(SharedGpuContextRegistry::get().register_context("limits:0", context).is_ok());
  const uint64_t range = context->limits().maxStorageBufferRange;
  const int64_t rows = static_cast<int64_t>(range / (4 * 1024)) + 1;  // one row of 1024 floats too many
  GraphBuilder b("big");
  b.output(b.op("Relu", {b.input("x", {DType::kFloat32, {rows, 1024}})}, {}, "relu"));
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok());
  auto d = make(shared("limits"));
  const Capability c = d->supports(*g, 0);
  EXPECT_FALSE(c.supported);
  EXPECT_EQ(c.reason, "tensor 'relu_out' of " + std::to_string(rows * 4096) + " bytes exceeds maxStorageBufferRange " +
                          std::to_string(range));
}

}  // namespace
}  // namespace hetsched
