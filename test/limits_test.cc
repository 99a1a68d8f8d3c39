// limits.max_tensor_bytes and limits.max_arena_bytes (scheduler/limits.h):
// a model over a limit is refused at load with one line naming the tensor or
// arena and both sizes, before anything that large is allocated.
#include <gtest/gtest.h>

#include "graph/builder.h"
#include "profile/profile.h"
#include "scheduler/limits.h"
#include "scheduler/pipeline.h"

namespace hetsched {
namespace {

Graph transpose_of(Shape shape) {
  GraphBuilder b("big");
  ValueId x = b.input("x", {DType::kFloat32, std::move(shape)});
  b.output(b.op("Transpose", {x}, {}, "t"));
  Result<Graph> g = b.build();
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return std::move(g).value();
}

TEST(LimitsTest, ATensorLargerThanTheMachineIsRefusedByName) {
  const Result<Program> p = build_program(transpose_of({1024, 1024, 1024, 1024}), default_profile());
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message().rfind("failed to load model: tensor 'x' is f32[1024,1024,1024,1024] (4.0 TiB), "
                                       "over limits.max_tensor_bytes (",
                                       0),
            0u)
      << p.status().message();
  EXPECT_NE(p.status().message().find("this machine's memory)"), std::string::npos) << p.status().message();
}

// Shape inference refuses such a shape before any limit is looked at: every
// inferred type must have a byte size below 2^63 (graph/tensor_size.h).
TEST(LimitsTest, ShapesWhoseBytesOverflowAreRefused) {
  GraphBuilder b("big");
  ValueId x = b.input("x", {DType::kFloat32, {int64_t{1} << 62, 4}});
  b.output(b.op("Transpose", {x}, {}, "t"));
  Result<Graph> g = b.build();
  ASSERT_FALSE(g.is_ok());
  EXPECT_NE(g.status().message().find("node 't' (Transpose): inferred f32[4,4611686018427387904], larger than 2^63 bytes"),
            std::string::npos)
      << g.status().message();
}

TEST(LimitsTest, TheProfileSetsTheLimits) {
  Result<Profile> profile = parse_profile("limits: {max_tensor_bytes: 1000}\n", "p.yaml");
  ASSERT_TRUE(profile.is_ok()) << profile.status().message();
  const Result<Program> p = build_program(transpose_of({1, 16, 16}), *profile);
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().message(),
            "failed to load model: tensor 'x' is f32[1,16,16] (1.0 KiB), over limits.max_tensor_bytes (1000 B)");

  profile = parse_profile("limits: {max_arena_bytes: 100}\n", "p.yaml");
  ASSERT_TRUE(profile.is_ok()) << profile.status().message();
  Program program;
  program.memory.domains.push_back({"gpu:default:0", 4096, 4096, {}});
  EXPECT_EQ(check_program_limits(program, profile->limits).message(),
            "failed to load model: the gpu:default:0 arena of one request is 4.0 KiB, over limits.max_arena_bytes "
            "(100 B)");
  program.memory.domains.back().planned_bytes = 100;
  EXPECT_TRUE(check_program_limits(program, profile->limits).is_ok());
}

TEST(LimitsTest, BadValuesNameTheKeyAndWhatIsAccepted) {
  Result<Profile> p = parse_profile("limits: {max_tensor_bytes: -1}\n", "p.yaml");
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("p.yaml:1: limits.max_tensor_bytes"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("an integer >= 0 (bytes; 0 = this machine's memory)"), std::string::npos)
      << p.status().message();
  p = parse_profile("limits: {max_bytes: 1}\n", "p.yaml");
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("accepted: max_tensor_bytes, max_arena_bytes"), std::string::npos)
      << p.status().message();
}

TEST(LimitsTest, FormatsByteCounts) {
  EXPECT_EQ(format_byte_count(512), "512 B");
  EXPECT_EQ(format_byte_count(1536), "1.5 KiB");
  EXPECT_EQ(format_byte_count(4.0 * (int64_t{1} << 40)), "4.0 TiB");
}

}  // namespace
}  // namespace hetsched
