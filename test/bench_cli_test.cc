// hetsched bench --compare-policies as a user runs it: one row per policy
// and per enabled delegate alone, each timed; a delegate that cannot run the
// model alone is a row with its reason, not a failure.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "examples/policy_models.h"
#include "scheduler/model_loader.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using testing::run_cli;

std::string example_model() { return std::string(HETSCHED_BINARY_DIR) + "/examples/rfc_model.hsg"; }

struct PolicyJsonRow {
  std::string policy, predicted, measured, islands, error;
};

// The rows of the "policies" list, as policies_json writes them (one object
// per row, keys in a fixed order).
std::vector<PolicyJsonRow> policy_rows(const std::string& output) {
  const size_t at = output.find("\"policies\": [");
  if (at == std::string::npos) return {};
  const std::regex re(
      R"re(\{"policy": "([^"]*)", "predicted_ms": ([^,]*), "measured_ms": ([^,]*), "islands": ([^,}]*)(?:, "same_plan_as": (?:null|"[^"]*"))?(, "error": "((?:[^"\\]|\\.)*)")?\})re");
  std::vector<PolicyJsonRow> rows;
  const std::string list = output.substr(at);
  for (auto it = std::sregex_iterator(list.begin(), list.end(), re); it != std::sregex_iterator(); ++it)
    rows.push_back({(*it)[1], (*it)[2], (*it)[3], (*it)[4], (*it)[6]});
  return rows;
}

TEST(BenchCliTest, ComparePoliciesJsonHasATimedRowPerPolicy) {
  auto r = run_cli("bench " + example_model() + " --compare-policies --json -n 3 --warmup 1 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"latency_ms\": {\"p50\": "), std::string::npos) << r.output;  // the usual figures too
  const std::vector<PolicyJsonRow> rows = policy_rows(r.output);
  std::set<std::string> policies;
  for (const PolicyJsonRow& row : rows) {
    policies.insert(row.policy);
    EXPECT_TRUE(row.error.empty()) << row.policy << ": " << row.error;
    EXPECT_GT(std::stod(row.measured), 0.0) << row.policy;
    EXPECT_GE(std::stoi(row.islands), 1) << row.policy;
    // Until the cost model predicts, predicted_ms is null; then a positive number.
    if (row.predicted != "null") {
      EXPECT_GT(std::stod(row.predicted), 0.0) << row.policy;
    }
  }
  // The default profile enables only the CPU: one row for it alone.
  EXPECT_EQ(policies, (std::set<std::string>{"auto", "vgf_first", "vulkan_first", "cpu_first", "cpu_only"}))
      << r.output;
  EXPECT_EQ(rows.size(), 5u) << r.output;
  // Every row runs auto's plan here (one delegate): the later ones say so.
  EXPECT_NE(r.output.find("{\"policy\": \"cpu_first\", "), std::string::npos);
  EXPECT_NE(r.output.find("\"same_plan_as\": \"auto\"}"), std::string::npos) << r.output;
}

// --profile-ops: the text table and the JSON `ops` name the model's nodes.
TEST(BenchCliTest, ProfileOpsShowsWhereTheTimeGoes) {
  auto r = run_cli("bench " + example_model() + " --profile-ops --json -n 3 --warmup 1 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"ops\": {\"request_p50_ms\": "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"pieces\": [{\"island\": \"island 0 (cpu)\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"op_types\": [{\"track\": \"cpu\""), std::string::npos) << r.output;
  r = run_cli("bench " + example_model() + " --profile-ops -n 3 --warmup 1 --threads 1 --op-rows 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ops (p50 of 3 requests"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("island 0 (cpu) on cpu: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("by op type"), std::string::npos) << r.output;
  // --op-rows 0: the totals by op type alone; a negative count is refused by name.
  r = run_cli("bench " + example_model() + " --profile-ops -n 2 --warmup 0 --threads 1 --op-rows 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("by op type"), std::string::npos) << r.output;
  r = run_cli("bench " + example_model() + " --profile-ops -n 2 --op-rows -1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--op-rows: wants a count of 0 or more, got '-1'"), std::string::npos) << r.output;
  // Without the flag: no op table.
  r = run_cli("bench " + example_model() + " -n 2 --warmup 0 --threads 1");
  EXPECT_EQ(r.output.find("by op type"), std::string::npos) << r.output;
}

TEST(BenchCliTest, ComparePoliciesPrintsATable) {
  auto r = run_cli("bench " + example_model() + " --compare-policies -n 2 --warmup 0 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("policy"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("measured / best"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" cpu_first "), std::string::npos) << r.output;
}

// Vulkan alone cannot run LeakyRelu: its row says why, the command succeeds.
TEST(BenchCliTest, ComparePoliciesMarksADelegateThatCannotRunTheModelAlone) {
  testing::TempDir dir;
  auto graph = examples::make_tiny_islands({.channels = 2, .size = 8, .repeats = 2});
  ASSERT_TRUE(graph.is_ok()) << graph.status().message();
  const std::string model = (dir / "tiny_islands.hsg").string();
  ASSERT_TRUE(write_graph_file(*graph, model).is_ok());
  auto r = run_cli("bench " + model + " --profile " + testing::source_path("configs/vulkan.yaml").string() +
                   " --compare-policies --json -n 2 --warmup 1 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  bool saw_vulkan_only = false;
  for (const PolicyJsonRow& row : policy_rows(r.output)) {
    if (row.policy != "vulkan_only") {
      EXPECT_TRUE(row.error.empty()) << row.policy << ": " << row.error;
      continue;
    }
    saw_vulkan_only = true;
    EXPECT_EQ(row.measured, "null");
    EXPECT_NE(row.error.find("LeakyRelu"), std::string::npos) << row.error;
  }
  EXPECT_TRUE(saw_vulkan_only) << r.output;
}

// --device-io: the model's inputs uploaded once to its GPU and its outputs
// left there; what the timed requests left in the GPU buffers equals run()'s.
TEST(BenchCliTest, DeviceIoTimesRequestsOnGpuBuffers) {
  const std::string model = testing::source_path("test/data/models18/encoder_op18.onnx").string();
  const std::string vulkan = " --profile " + testing::source_path("configs/vulkan.yaml").string();
  auto r = run_cli("bench " + model + vulkan + " --device-io -n 3 --warmup 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(GPU buffers in and out: submit to the GPU's completion)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("outputs left in the GPU buffers against run()'s: max abs difference 0\n"), std::string::npos)
      << r.output;
  r = run_cli("bench " + model + vulkan + " --device-io --json -n 2 --warmup 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"device_io\": true"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"device_io_max_abs_difference\": 0,"), std::string::npos) << r.output;
}

TEST(BenchCliTest, DeviceIoRefusesHostIslandsAndMoreThanOneRequestInFlight) {
  const std::string model = testing::source_path("test/data/models18/encoder_op18.onnx").string();
  auto r = run_cli("bench " + model + " --device-io -n 1");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("error: --device-io: this model cannot run on GPU buffers: 'x' is read by island 0 (cpu) on "
                          "the host"),
            std::string::npos)
      << r.output;
  r = run_cli("bench " + model + " --profile " + testing::source_path("configs/vulkan.yaml").string() +
              " --device-io --in-flight 2 -n 1");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("it takes neither --compare-policies nor --in-flight above 1"), std::string::npos) << r.output;
}

TEST(BenchCliTest, ComparePoliciesRefusesACompiledProgram) {
  testing::TempDir dir;
  const std::string hsp = (dir / "rfc.hsp").string();
  ASSERT_EQ(run_cli("compile " + example_model() + " -o " + hsp).exit_code, 0);
  auto r = run_cli("bench " + hsp + " --compare-policies -n 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("error: --compare-policies needs a model (.onnx or .hsg)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace hetsched
