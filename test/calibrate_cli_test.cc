// hetsched calibrate as a user runs it: it measures through the real runtime
// (the CPU and, on CI, lavapipe with validation on) and writes a costs file
// that loads, with every figure positive and finite.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "profile/costs_file.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using testing::run_cli;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string read_text(const std::filesystem::path& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Every figure the planner divides by or adds is finite and > 0; the alias,
// which moves nothing, has no latency, and neither have the built-in
// handoffs of a machine without a GPU (`gpu` false).
void expect_usable(const CostTable& t, bool gpu) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  for (const auto& [name, c] : t.delegates) {
    EXPECT_TRUE(positive(c.dispatch_us)) << name << " dispatch_us " << c.dispatch_us;
    EXPECT_TRUE(positive(c.island_us)) << name << " island_us " << c.island_us;
    for (OpClass k : kAllOpClasses) {
      EXPECT_TRUE(positive(c.rate(k).gflops)) << name << " " << op_class_name(k) << " gflops " << c.rate(k).gflops;
      EXPECT_TRUE(positive(c.rate(k).gbps)) << name << " " << op_class_name(k) << " gbps " << c.rate(k).gbps;
    }
  }
  for (CutKind k : kAllCutKinds) {
    const TransferCost& tc = t.transfer(k);
    EXPECT_TRUE(positive(tc.gbps)) << cut_kind_name(k) << " gbps " << tc.gbps;
    if (k == CutKind::kAlias) {
      EXPECT_EQ(tc.latency_us, 0);
    } else if (!gpu) {
      EXPECT_TRUE(std::isfinite(tc.latency_us) && tc.latency_us >= 0) << cut_kind_name(k) << " " << tc.latency_us;
    } else {
      EXPECT_TRUE(positive(tc.latency_us)) << cut_kind_name(k) << " latency_us " << tc.latency_us;
    }
  }
}

TEST(CalibrateCliTest, CpuAndVulkanOnLavapipeWriteAFileThatLoads) {
  testing::TempDir dir;
  testing::write_file(dir / "p.yaml", R"(
name: cal
delegates:
  cpu: {threads: 1}
  vulkan: {shared_gpu: {token: calibrate_test, group: 1}}
)");
  const std::string costs = (dir / "costs.yaml").string();
  // Validation on (the command inherits the variable): any message is
  // printed as "[gpu] validation ..." and fails the test below.
  ::setenv("HETSCHED_VK_VALIDATION", "1", 1);
  const auto r = run_cli("calibrate --profile " + (dir / "p.yaml").string() + " -o " + costs +
                         " --repeats 2 --log-level warn");
  ::unsetenv("HETSCHED_VK_VALIDATION");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "validation")) << r.output;
  EXPECT_TRUE(contains(r.output, "wrote " + costs + ": cpu, vulkan and handoffs")) << r.output;

  Result<CostTable> table = load_costs(costs);
  ASSERT_TRUE(table.is_ok()) << table.status().message() << "\n" << read_text(costs);
  EXPECT_EQ(table->delegates.count("cpu"), 1u);
  EXPECT_EQ(table->delegates.count("vulkan"), 1u);
  EXPECT_EQ(table->delegates.count("vgf"), 0u);  // not enabled: the planner uses its built-in figures
  EXPECT_EQ(table->source.rfind("calibrated on ", 0), 0u) << table->source;
  expect_usable(*table, true);

  const std::string text = read_text(costs);
  EXPECT_TRUE(contains(text, "\n# device:  vulkan: ")) << text;
  EXPECT_TRUE(contains(text, "\n# profile: " + (dir / "p.yaml").string())) << text;
  EXPECT_TRUE(contains(text, "handoffs: upload through vulkan: 16 KiB")) << text;  // measured, not built in
  EXPECT_TRUE(contains(text, "handoffs: device_copy (two contexts: through the host) = readback + upload")) << text;
  EXPECT_TRUE(contains(text, "handoffs: layout_conversion needs vulkan and vgf both enabled")) << text;
}

TEST(CalibrateCliTest, CpuOnlyProfileHasNoGpuSectionsToMeasure) {
  testing::TempDir dir;
  const std::string costs = (dir / "cpu.yaml").string();
  const auto r = run_cli("calibrate --profile " + testing::source_path("configs/default.yaml").string() + " -o " +
                         costs + " --repeats 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Result<CostTable> table = load_costs(costs);
  ASSERT_TRUE(table.is_ok()) << table.status().message();
  ASSERT_EQ(table->delegates.size(), 1u);
  EXPECT_EQ(table->delegates.begin()->first, "cpu");
  // The conv probe does tens of MFLOP: a measured rate, not the 1e6 of free nodes.
  EXPECT_LT(table->delegates.at("cpu").rate(OpClass::kConv).gflops, 1e5);
  expect_usable(*table, false);
  EXPECT_TRUE(contains(read_text(costs), "handoffs: no GPU delegate enabled")) << read_text(costs);
}

// --model: the model's own nodes, timed on each delegate, land in the file
// by op signature; --update adds another model's to the same file.
TEST(CalibrateCliTest, ModelNodesAreMeasuredPerDelegateAndUpdateAddsMore) {
  testing::TempDir dir;
  testing::write_file(dir / "p.yaml", R"(
name: cal
delegates:
  cpu: {threads: 1}
  vulkan: {shared_gpu: {token: calibrate_test, group: 2}}
)");
  const std::string costs = (dir / "costs.yaml").string();
  const std::string rfc = std::string(HETSCHED_BINARY_DIR) + "/examples/rfc_model.hsg";
  auto r = run_cli("calibrate --profile " + (dir / "p.yaml").string() + " -o " + costs + " --repeats 2 --model " + rfc);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Result<CostTable> table = load_costs(costs);
  ASSERT_TRUE(table.is_ok()) << table.status().message();
  for (const char* d : {"cpu", "vulkan"}) {
    const auto& measured = table->delegates.at(d).measured_us;
    EXPECT_FALSE(measured.empty()) << d << "\n" << read_text(costs);
    for (const auto& [signature, us] : measured) EXPECT_TRUE(std::isfinite(us) && us >= 0) << signature << " " << us;
  }
  EXPECT_TRUE(contains(read_text(costs), "rfc_model.hsg: vulkan ")) << read_text(costs);
  const size_t before = table->delegates.at("cpu").measured_us.size();

  // Another model through --update: the probes' figures stay, signatures add up.
  const std::string model = std::string(HETSCHED_BINARY_DIR) + "/examples/parallel_branches.hsg";
  {
    r = run_cli("calibrate --profile " + (dir / "p.yaml").string() + " -o " + costs + " --repeats 1 --update --model " +
                model);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    Result<CostTable> updated = load_costs(costs);
    ASSERT_TRUE(updated.is_ok()) << updated.status().message();
    EXPECT_GT(updated->delegates.at("cpu").measured_us.size(), before);
    EXPECT_EQ(updated->delegates.at("cpu").dispatch_us, table->delegates.at("cpu").dispatch_us);
    EXPECT_TRUE(contains(read_text(costs), "# machine: ")) << read_text(costs);  // the old header stays
  }
  // --update without a model, or without a file to update: one line, exit 2.
  r = run_cli("calibrate -o " + costs + " --update");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_cli("calibrate -o " + (dir / "none.yaml").string() + " --update --model " + rfc);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "failed to read costs file")) << r.output;
}

TEST(CalibrateCliTest, BadUsageAndBadOutputExitTwo) {
  const auto help = run_cli("calibrate --help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  EXPECT_TRUE(contains(help.output, "--repeats")) << help.output;
  EXPECT_EQ(run_cli("calibrate").exit_code, 2);  // -o is required
  EXPECT_EQ(run_cli("calibrate -o x.yaml --repeats 0").exit_code, 2);
  testing::TempDir dir;
  const auto r = run_cli("calibrate --repeats 1 -o " + (dir / "no" / "such" / "dir.yaml").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "error: failed to write costs file '")) << r.output;
}

}  // namespace
}  // namespace hetsched
