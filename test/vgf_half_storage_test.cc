// f16 storage between the VGF delegate's kernels (`storage: fp16`,
// delegates/vgf/half_storage.h, shared_gpu/shaders/half_io.glsl): which
// resources are stored as f16, what that does to the scratch block and the
// dispatches' bindings (host only), and whole graphs through every built-in
// kernel's 16-bit variant on lavapipe with validation, against the portable
// CPU kernels. Each stored tensor rounds to f16 (2^-11 relative), so the
// bound is 1e-2 of the largest output; a binding read with the wrong type
// is off by far more.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "delegates/vgf/dispatch_plan.h"
#include "delegates/vgf/half_storage.h"
#include "delegates/vgf/transient_planner.h"
#include "delegates/vgf/vgf_delegate.h"
#include "delegates/vgf/vgf_format.h"
#include "graph/builder.h"
#include "shared_gpu/shared_gpu_registry.h"
#include "test/half_storage_graphs.h"
#include "test/test_util.h"
#include "test/vk_test_env.h"
#include "test/vulkan_test_driver.h"

namespace hetsched::vgf {
namespace {

using hetsched::testing::build;
using hetsched::testing::random_tensor;
namespace half_graphs = hetsched::testing::half_graphs;
using Ints = std::vector<int64_t>;

using half_graphs::attention;
using half_graphs::cnn;
using half_graphs::dense_block;
using half_graphs::split_k;

Graph graph_named(const std::string& name) {
  if (name == "cnn") return cnn();
  if (name == "attention") return attention();
  if (name == "split_k") return split_k();
  return dense_block();
}

const std::vector<std::string> kGraphs = {"cnn", "attention", "split_k", "dense_block"};

DelegateOptions host_options(const std::string& storage) { return {{"storage", storage}}; }

// The VGF file the delegate compiles for all of `g` (no device needed).
VgfFile compiled(const Graph& g, Blob* blob_out = nullptr) {
  Result<std::unique_ptr<Delegate>> delegate = make_vgf_delegate(host_options("auto"));
  EXPECT_TRUE(delegate.is_ok()) << delegate.status().message();
  Result<Blob> blob = (*delegate)->compile(hetsched::testing::whole_graph_island(g, "vgf"), {});
  EXPECT_TRUE(blob.is_ok()) << blob.status().message();
  if (blob_out) *blob_out = *blob;
  Result<VgfFile> file = decode_vgf(*blob);
  EXPECT_TRUE(file.is_ok()) << file.status().message();
  return *file;
}

bool is_cast(Kernel k) {
  return k == Kernel::kCastF16ToF32 || k == Kernel::kCastF32ToF16 || k == Kernel::kCastWords ||
         k == Kernel::kCastToBool || k == Kernel::kCastFromBool;
}

TEST(VgfHalfStorageTest, OnlyIntermediatesBetweenBuiltinKernelsAreChosen) {
  for (const std::string& name : kGraphs) {
    const VgfFile file = compiled(graph_named(name));
    const std::set<uint32_t> half = choose_half_resources(file);
    EXPECT_FALSE(half.empty()) << name;
    for (uint32_t id : half) {
      EXPECT_EQ(file.resources[id].kind, ResourceKind::kIntermediate) << name << " " << file.resources[id].name;
      EXPECT_EQ(file.resources[id].dtype, DType::kFloat32) << name << " " << file.resources[id].name;
    }
    // Alias groups whole.
    for (uint32_t id : half)
      for (size_t other = 0; other < file.resources.size(); ++other) {
        if (file.resources[id].alias_group >= 0 && file.resources[other].alias_group == file.resources[id].alias_group) {
          EXPECT_EQ(half.count(static_cast<uint32_t>(other)), 1u) << name << " " << file.resources[other].name;
        }
      }
    // What a compute module (LayerNorm, Softmax) binds stays f32.
    for (const SegmentDispatches& seg : plan_dispatches(file).segments)
      for (const Dispatch& d : seg.dispatches) {
        if (d.kernel != Kernel::kCustom) continue;
        for (uint32_t id : d.bindings) EXPECT_EQ(half.count(id), 0u) << d.label;
      }
  }
}

TEST(VgfHalfStorageTest, BothSidesOfACastKeepTheirType) {
  GraphBuilder b("cast");
  const ValueId x = b.input("x", {DType::kFloat32, {2, 6}});
  const ValueId kept = b.op("Sigmoid", {x});                     // between two kernels
  const ValueId cast_in = b.op("Tanh", {b.op("Neg", {kept})});  // a Cast reads it
  const ValueId ints = b.op("Cast", {cast_in}, {{"to", int64_t{6}}});
  b.output(b.op("Cast", {ints}, {{"to", int64_t{1}}}));
  b.output(b.op("Exp", {kept}));
  const VgfFile file = compiled(build(b));
  const std::set<uint32_t> half = choose_half_resources(file);
  size_t casts = 0;
  for (const SegmentDispatches& seg : plan_dispatches(file).segments)
    for (const Dispatch& d : seg.dispatches) {
      if (!is_cast(d.kernel)) continue;
      ++casts;
      for (uint32_t id : d.bindings) EXPECT_EQ(half.count(id), 0u) << d.label;
    }
  EXPECT_EQ(casts, 2u);
  EXPECT_FALSE(half.empty());
}

TEST(VgfHalfStorageTest, HalvesTheScratchAndMarksTheBindingsOfEveryKernel) {
  std::set<Kernel> marked_kernels;
  for (const std::string& name : kGraphs) {
    Blob blob;
    const VgfFile file = compiled(graph_named(name), &blob);
    const VgfFile halved = with_half_storage(file);
    const DispatchPlan f32 = plan_dispatches(file);
    const DispatchPlan f16 = plan_dispatches(halved);
    ASSERT_EQ(f16.dispatch_count(), f32.dispatch_count()) << name;
    Result<TransientLayout> f32_layout = plan_transients(file, f32);
    Result<TransientLayout> f16_layout = plan_transients(halved, f16);
    ASSERT_TRUE(f32_layout.is_ok() && f16_layout.is_ok()) << name;
    EXPECT_LT(f16_layout->bytes, f32_layout->bytes) << name;
    size_t marked = 0, dispatches = 0;
    for (size_t s = 0; s < f16.segments.size(); ++s)
      for (size_t i = 0; i < f16.segments[s].dispatches.size(); ++i) {
        const Dispatch& d = f16.segments[s].dispatches[i];
        EXPECT_EQ(d.kernel, f32.segments[s].dispatches[i].kernel) << d.label;
        EXPECT_EQ(f32.segments[s].dispatches[i].half_bindings, 0u) << d.label;
        const uint32_t capable = kernel_half_capable_bindings(d.kernel);
        for (size_t b = 0; b < d.bindings.size(); ++b) {
          const uint32_t id = d.bindings[b];
          const bool f16_resource = id < halved.resources.size() && halved.resources[id].dtype == DType::kFloat16;
          EXPECT_EQ((d.half_bindings >> b) & 1u, f16_resource && ((capable >> b) & 1u) ? 1u : 0u)
              << d.label << " binding " << b;
        }
        ++dispatches;
        if (d.half_bindings != 0) {
          ++marked;
          marked_kernels.insert(d.kernel);
        }
      }
    EXPECT_GT(marked, dispatches / 2) << name;
    for (uint32_t id : halved.inputs) EXPECT_EQ(halved.resources[id].dtype, DType::kFloat32) << name;
    for (uint32_t id : halved.outputs) EXPECT_EQ(halved.resources[id].dtype, DType::kFloat32) << name;

    // The delegate plans the scratch of the file init runs: fp16's is the
    // halved one, auto reserves the larger of the two.
    Result<std::unique_ptr<Delegate>> delegate = make_vgf_delegate(host_options("auto"));
    ASSERT_TRUE(delegate.is_ok());
    Result<DeviceMemoryNeeds> f32_needs = (*delegate)->device_memory(blob, {{"storage", "fp32"}});
    Result<DeviceMemoryNeeds> f16_needs = (*delegate)->device_memory(blob, {{"storage", "fp16"}});
    Result<DeviceMemoryNeeds> auto_needs = (*delegate)->device_memory(blob, {});
    ASSERT_TRUE(f32_needs.is_ok() && f16_needs.is_ok() && auto_needs.is_ok()) << name;
    EXPECT_EQ(f32_needs->scratch_bytes, f32_layout->bytes) << name;
    EXPECT_EQ(f16_needs->scratch_bytes, f16_layout->bytes) << name;
    EXPECT_EQ(auto_needs->scratch_bytes, std::max(f32_layout->bytes, f16_layout->bytes)) << name;
    EXPECT_EQ(f16_needs->input_bytes, f32_needs->input_bytes) << name;
    EXPECT_EQ(f16_needs->output_bytes, f32_needs->output_bytes) << name;
    // The delegate's own storage where the load-time specs name none.
    Result<std::unique_ptr<Delegate>> fp16_delegate = make_vgf_delegate(host_options("fp16"));
    ASSERT_TRUE(fp16_delegate.is_ok());
    Result<DeviceMemoryNeeds> own_needs = (*fp16_delegate)->device_memory(blob, {});
    ASSERT_TRUE(own_needs.is_ok()) << name;
    EXPECT_EQ(own_needs->scratch_bytes, f16_layout->bytes) << name;
  }
  for (Kernel k : {Kernel::kUnary, Kernel::kBinary, Kernel::kCopy, Kernel::kPad, Kernel::kConv2d, Kernel::kConv2dReduce,
                   Kernel::kDepthwiseConv2d, Kernel::kPool2d, Kernel::kMatmul, Kernel::kReduce, Kernel::kResize,
                   Kernel::kSelect, Kernel::kTransposeConv2d})
    EXPECT_EQ(marked_kernels.count(k), 1u) << kernel_name(k) << " runs no f16 binding in these graphs";
}

TEST(VgfHalfStorageTest, AnUnknownStorageIsRefusedByName) {
  Result<std::unique_ptr<Delegate>> delegate = make_vgf_delegate(host_options("fp8"));
  ASSERT_FALSE(delegate.is_ok());
  EXPECT_NE(delegate.status().message().find("option storage is 'fp8'"), std::string::npos)
      << delegate.status().message();
  EXPECT_TRUE(make_vgf_delegate(host_options("fp16")).is_ok());
}

constexpr char kToken[] = "vgf_half_test";
constexpr char kKey[] = "vgf_half_test:0";

class VgfHalfStorageGpuTest : public hetsched::testing::VkTest {
 protected:
  void SetUp() override {
    std::shared_ptr<SharedGpuContext> context = make_context();
    ASSERT_NE(context, nullptr);
    if (!context->features().storage_buffer_16bit_access) GTEST_SKIP() << "no storageBuffer16BitAccess";
    ASSERT_TRUE(SharedGpuContextRegistry::get().register_context(kKey, context).is_ok());
  }

  void expect_matches_cpu(const Graph& g) {
    Result<std::unique_ptr<Delegate>> delegate =
        make_vgf_delegate({{"gpu_shared_context_token", kToken}, {"gpu_shared_context_mode", "lookup_only"}});
    ASSERT_TRUE(delegate.is_ok()) << delegate.status().message();
    half_graphs::expect_half_run_matches_cpu(**delegate, g, {{"storage", "fp16"}}, "vgf half");
  }
};

TEST_F(VgfHalfStorageGpuTest, ACnnThroughEveryConvAndPoolKernelMatchesTheCpuKernels) { expect_matches_cpu(cnn()); }

TEST_F(VgfHalfStorageGpuTest, AttentionThroughMatmulCopiesAndSelectMatchesTheCpuKernels) {
  expect_matches_cpu(attention());
}

TEST_F(VgfHalfStorageGpuTest, SplitKConvsWithResidualsMatchTheCpuKernels) { expect_matches_cpu(split_k()); }

TEST_F(VgfHalfStorageGpuTest, ConcatsAndAGroupedConvMatchTheCpuKernels) { expect_matches_cpu(dense_block()); }

// A host lends its device without storageBuffer16BitAccess enabled: storage
// fp16 is refused at init naming the feature; auto keeps f32 and runs.
class VgfHalfStorageRefusalTest : public hetsched::testing::VkTest {};

TEST_F(VgfHalfStorageRefusalTest, ADeviceWithoutStorageBuffer16BitAccessRefusesFp16AndAutoRunsF32) {
  std::shared_ptr<SharedGpuContext> host = make_context();
  ASSERT_NE(host, nullptr);
  half_graphs::expect_fp16_storage_refused_without_the_feature(
      *host, "vgf_half_lent", [](const DelegateOptions& options) { return make_vgf_delegate(options); });
}

}  // namespace
}  // namespace hetsched::vgf
