// The VGF island's memory needs: transients placed by lifetime in one
// scratch block (on the arena planner), inputs and outputs in their layouts.
// Host-only: no GPU.
#include <gtest/gtest.h>

#include "delegates/vgf/lowering.h"
#include "delegates/vgf/transient_planner.h"
#include "graph/builder.h"
#include "test/vulkan_test_driver.h"

namespace hetsched::vgf {
namespace {

TEST(VgfTransientsTest, AChainNeedsTwoSlotsOfScratch) {
  GraphBuilder b("chain");
  ValueId t = b.input("x", {DType::kFloat32, {1, 4, 8, 8}});
  // Each Add reads its input twice, so none folds into the one before.
  for (int i = 0; i < 6; ++i) t = b.op("Add", {t, t});
  b.output(t);
  Result<Graph> g = b.build();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  Result<VgfFile> file = lower_island(testing::whole_graph_island(*g, "vgf"));
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  Result<TransientLayout> layout = plan_transients(*file);
  ASSERT_TRUE(layout.is_ok()) << layout.status().message();
  // Five 1 KiB intermediates, each alive from its producer to its consumer:
  // two slots are enough and needed.
  EXPECT_EQ(layout->bytes, 2048u);
  EXPECT_EQ(layout->lower_bound, 2048u);
  int transients = 0;
  for (size_t id = 0; id < file->resources.size(); ++id) {
    if (layout->offsets[id] < 0) continue;
    ++transients;
    EXPECT_EQ(layout->offsets[id] % kDeviceArenaAlignment, 0);
  }
  EXPECT_EQ(transients, 5);
  const DeviceMemoryNeeds needs = vgf_memory_needs(*file, *layout);
  EXPECT_EQ(needs.scratch_bytes, 2048u);
  ASSERT_EQ(needs.input_bytes.size(), 1u);
  EXPECT_EQ(needs.input_bytes[0], 1024u);
  ASSERT_EQ(needs.output_layouts.size(), 1u);
  EXPECT_EQ(needs.output_layouts[0], TensorLayout::kNhwc);  // VGF keeps rank-4 tensors NHWC
}

}  // namespace
}  // namespace hetsched::vgf
