// The RFC's UnifiedVgfVulkanModel end to end on the CPU delegate, through the
// real path (plan → program → file → session → run), against an independent
// numpy reference (examples/rfc_model_reference.py).
#include <gtest/gtest.h>

#include "examples/rfc_model.h"
#include "scheduler/pipeline.h"
#include "scheduler/program_file.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

// Output of examples/rfc_model_reference.py (numpy, float32), 1x3x4x4.
const float kRfcExpected[48] = {
    0.954845846f, 0.892751276f, 0.923318267f, 0.86308527f, 0.538847923f, 0.496362001f, 0.517420828f, 0.475650638f,
    0.726471901f, 0.676477969f, 0.701181293f, 0.65232861f, 0.376641989f, 0.338843614f, 0.357629538f, 0.320269763f,
    -0.320269763f, -0.357629538f, -0.338843614f, -0.376641989f, -0.65232861f, -0.701181293f, -0.676477969f, -0.726471901f,
    -0.475650638f, -0.517420828f, -0.496362001f, -0.538847923f, -0.86308527f, -0.923318267f, -0.892751276f, -0.954845846f,
    0.230115443f, 0.19509019f, 0.212540448f, 0.177753627f, -0.0419093221f, -0.0755358338f, -0.0587060452f, -0.0924082994f,
    0.0924082994f, 0.0587060452f, 0.0755358338f, 0.0419093221f, -0.177753627f, -0.212540448f, -0.19509019f, -0.230115443f,
};
// sin/cos/reciprocal in float32 differ from numpy's by a few ulp.
constexpr float kTolerance = 1e-5f;

void expect_rfc_output(const Tensor& y) {
  ASSERT_EQ(y.type().to_string(), "f32[1,3,4,4]");
  for (int i = 0; i < 48; ++i) EXPECT_NEAR(y.data<float>()[i], kRfcExpected[i], kTolerance) << "element " << i;
}

TEST(RfcModelTest, BuildsWithTheRfcShapes) {
  auto g = examples::make_rfc_model();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  EXPECT_EQ(g->num_nodes(), 10u);
  EXPECT_EQ(g->value(g->outputs()[0]).type.to_string(), "f32[1,3,4,4]");
}

TEST(RfcModelTest, CpuOnlyRunMatchesNumpyReference) {
  auto g = examples::make_rfc_model();
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  auto program = build_program(*g, default_profile());
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  ASSERT_EQ(program->islands.size(), 1u);
  EXPECT_EQ(program->islands[0].delegate, "cpu");
  auto session = Session::create(std::move(program).value(), default_profile());
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  auto out = (*session)->run({examples::rfc_model_input()});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  expect_rfc_output((*out)[0]);
  // A second run on the same session gives the same answer (no state leaks between runs).
  auto again = (*session)->run({examples::rfc_model_input()});
  ASSERT_TRUE(again.is_ok());
  expect_rfc_output((*again)[0]);
}

TEST(RfcModelTest, ProgramFileRoundTripRunsTheSame) {
  testing::TempDir dir;
  auto g = examples::make_rfc_model();
  ASSERT_TRUE(g.is_ok());
  auto program = build_program(*g, default_profile());
  ASSERT_TRUE(program.is_ok()) << program.status().message();
  const std::string path = (dir / "rfc.hsp").string();
  ASSERT_TRUE(write_program_file(*program, path).is_ok());
  auto session = open_session(path, default_profile());
  ASSERT_TRUE(session.is_ok()) << session.status().message();
  auto out = (*session)->run({examples::rfc_model_input()});
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  expect_rfc_output((*out)[0]);
}

TEST(RfcModelTest, RunRejectsAnInputOfTheWrongShape) {
  auto g = examples::make_rfc_model();
  ASSERT_TRUE(g.is_ok());
  auto program = build_program(*g, default_profile());
  ASSERT_TRUE(program.is_ok());
  auto session = Session::create(std::move(program).value(), default_profile());
  ASSERT_TRUE(session.is_ok());
  auto out = (*session)->run({Tensor(TensorType{DType::kFloat32, {1, 3, 8, 9}})});
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("input 'x' must be f32[1,3,8,8], got f32[1,3,8,9]"), std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace hetsched
