// The hetsched command as a user runs it: exit codes and one-line errors.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "cli/input_parse.h"
#include "test/onnx_model_builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using testing::run_cli;

std::string example_model() { return std::string(HETSCHED_BINARY_DIR) + "/examples/rfc_model.hsg"; }
std::string default_profile_path() { return testing::source_path("configs/default.yaml").string(); }

TEST(CliTest, PreviewShowsOneCpuIslandForTheDefaultProfile) {
  auto r = run_cli("preview " + example_model() + " --profile " + default_profile_path());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("model    rfc_model (10 nodes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cpu 10/10"), std::string::npos) << r.output;
}

TEST(CliTest, PreviewJsonListsIslandsAndNodes) {
  auto r = run_cli("preview " + example_model() + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"islands\": ["), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"name\": \"index_select_channels\", \"op\": \"Gather\", \"delegate\": \"cpu\""),
            std::string::npos)
      << r.output;
}

TEST(CliTest, RunWritesTheOutputFile) {
  testing::TempDir dir;
  const std::string out = (dir / "y.bin").string();
  auto r = run_cli("run " + example_model() + " --profile " + default_profile_path() + " --input " +
                   std::string(HETSCHED_BINARY_DIR) + "/examples/rfc_model_input.bin --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(std::filesystem::exists(out));
  EXPECT_EQ(std::filesystem::file_size(out), 48u * 4u);
  std::ifstream f(out, std::ios::binary);
  float first = 0;
  f.read(reinterpret_cast<char*>(&first), 4);
  EXPECT_NEAR(first, 0.954845846f, 1e-5f);  // examples/rfc_model_reference.py
}

TEST(CliTest, RunRefusesAnInputFileOfTheWrongSize) {
  testing::TempDir dir;
  testing::write_file(dir / "short.bin", std::string(100, '\0'));
  auto r = run_cli("run " + example_model() + " --input x=" + (dir / "short.bin").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("has 100 bytes, but f32[1,3,8,8] needs 768"), std::string::npos) << r.output;
}

// An endless input (a device file) is read only as far as the input needs:
// a one-line error, not a read until memory runs out.
TEST(CliTest, RunRefusesAnEndlessInputFileAfterReadingWhatItNeeds) {
  auto r = run_cli("run " + example_model() + " --input x=/dev/zero");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("'/dev/zero' has more than 768 bytes, but f32[1,3,8,8] needs 768"), std::string::npos)
      << r.output;
}

TEST(CliTest, RunRefusesAnInputShapeBeyondInt64) {
  auto r = run_cli("run " + example_model() + " --input-shape x=99999999999999999999x3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("dimension '99999999999999999999' beyond 2^63 - 1"), std::string::npos) << r.output;
}

TEST(CliTest, CompileThenRunTheProgram) {
  testing::TempDir dir;
  const std::string hsp = (dir / "rfc.hsp").string();
  auto c = run_cli("compile " + example_model() + " -o " + hsp);
  ASSERT_EQ(c.exit_code, 0) << c.output;
  auto r = run_cli("run " + hsp);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("output transpose_out_out f32[1,3,4,4]"), std::string::npos) << r.output;
}

TEST(CliTest, RunOnACorruptProgramExitsNonZeroWithOneLine) {
  testing::TempDir dir;
  const std::string hsp = (dir / "rfc.hsp").string();
  ASSERT_EQ(run_cli("compile " + example_model() + " -o " + hsp).exit_code, 0);
  std::filesystem::resize_file(hsp, std::filesystem::file_size(hsp) / 2);
  auto r = run_cli("run " + hsp);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

TEST(CliTest, RunWithABrokenProfileExitsNonZeroNamingTheLine) {
  testing::TempDir dir;
  testing::write_file(dir / "bad.yaml", "name: bad\npartition:\n  prefer: vfg_first\n");
  auto r = run_cli("run " + example_model() + " --profile " + (dir / "bad.yaml").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bad.yaml:3: partition.prefer: 'vfg_first' is not a policy"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
}

TEST(CliTest, UnknownModelExtensionIsAClearError) {
  auto r = run_cli("preview model.pt");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown file type (accepted: .hsg"), std::string::npos) << r.output;
}

TEST(CliTest, HelpWorksForEveryCommand) {
  for (const char* cmd : {"", "preview ", "run ", "compile ", "devices "}) {
    auto r = run_cli(std::string(cmd) + "--help");
    EXPECT_EQ(r.exit_code, 0) << cmd << r.output;
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << cmd;
  }
}

// test/data/crafted/cli_huge_input_shape.bin (found reading the code while
// writing cli_input_fuzz, whose malloc limit also catches it): a
// --input-shape of 10^12 elements with a 4-byte input file. The reader
// allocated the declared 4 TB before looking at the file (std::bad_alloc,
// or libFuzzer's malloc limit); it now reads what is there and refuses.
TEST(CliTest, HugeInputShapeWithASmallFileIsRefusedWithoutAllocatingIt) {
  std::ifstream crafted(testing::source_path("test/data/crafted/cli_huge_input_shape.bin"), std::ios::binary);
  ASSERT_TRUE(crafted);
  std::string spec;
  std::getline(crafted, spec);
  Result<InputShapes> shapes = cli::parse_input_shapes({spec});
  ASSERT_TRUE(shapes.is_ok()) << shapes.status().message();
  const TensorType type{DType::kFloat32, shapes->at("x")};
  Result<Tensor> t = cli::read_raw_tensor(crafted, "x", type, "crafted.bin");
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.status().message(), "input 'x' file 'crafted.bin' has 4 bytes, but f32[1,1000000,1000000] needs "
                                  "4000000000000 (raw little-endian, no header)");
}

TEST(CliTest, InputShapeWhoseByteSizeOverflowsIsRefused) {
  Result<InputShapes> shapes = cli::parse_input_shapes({"x=4611686018427387904x8"});
  ASSERT_TRUE(shapes.is_ok()) << shapes.status().message();
  std::istringstream empty;
  Result<Tensor> t = cli::read_raw_tensor(empty, "x", TensorType{DType::kFloat32, shapes->at("x")}, "f.bin");
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("has no valid byte size"), std::string::npos) << t.status().message();
}

// cli_input_fuzz: dims whose product overflows before a 0 dim. The byte
// size is 0, but the element count saturated at 2^63 - 1 before it reached
// the 0, and the reader allocated 2^63 bytes for an empty tensor.
TEST(CliTest, CraftedZeroDimAfterAnOverflowingProductIsAnEmptyTensor) {
  std::ifstream crafted(testing::source_path("test/data/crafted/cli_zero_dim_after_overflow.bin"), std::ios::binary);
  ASSERT_TRUE(crafted);
  std::string line;
  std::getline(crafted, line);
  const std::string spec = line.substr(0, line.find(';'));
  Result<InputShapes> shapes = cli::parse_input_shapes({spec});
  ASSERT_TRUE(shapes.is_ok()) << shapes.status().message();
  const Shape shape = shapes->begin()->second;
  EXPECT_EQ(shape_elements(shape), 0);
  std::istringstream empty;
  Result<Tensor> t = cli::read_raw_tensor(empty, "x", TensorType{DType::kBool, shape}, "crafted.bin");
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ(t->byte_size(), 0u);
}

// Issue 15's promise for hostile files at the command line: the 1024^4
// tensor model and every crafted file the fuzzers found (test/data/crafted/)
// exit 2 with exactly one line, "error: ...".
TEST(CliTest, HostileModelsAndCraftedFilesExitTwoWithOneLine) {
  testing::TempDir dir;
  onnx_test::OnnxModel huge(17);
  huge.input("x", onnx_test::kFloat, {1024, 1024, 1024, 1024});
  huge.node("Relu", {"x"}, {"y"}, "relu");
  huge.output("y");
  const std::string huge_path = huge.save(dir, "huge.onnx");
  const std::string crafted = testing::source_path("test/data/crafted/").string();
  const std::string commands[] = {
      "run " + huge_path,
      "preview " + huge_path,
      "run " + crafted + "program_tensor_size_overflow.hsp",
      "preview " + crafted + "onnx_empty_value_ints.onnx",
      "run-vgf " + crafted + "vgf_misaligned_int64_vector.vgf",
      "run-vgf " + crafted + "vgf_union_type_without_table.vgf",
  };
  for (const std::string& command : commands) {
    testing::CommandResult r = testing::run_cli(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
    EXPECT_EQ(r.output.rfind("error: ", 0), 0u) << command << "\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << command << "\n" << r.output;
  }
}

}  // namespace
}  // namespace hetsched
