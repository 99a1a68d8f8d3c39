// hetsched export-vgf and run-vgf as a user runs them: the RFC model's first
// VGF island exported to a standalone file and run on its own (validation
// on) gives the portable kernels' result.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/wait.h>

#include "delegates/cpu/cpu_delegate.h"
#include "examples/rfc_model.h"
#include "graph/builder.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using testing::run_cli;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string example_model() { return std::string(HETSCHED_BINARY_DIR) + "/examples/rfc_model.hsg"; }

constexpr const char* kVgfProfile = R"(
name: vgf-cpu
delegates:
  vgf: {enabled: true, shared_gpu: {token: cli, group: 3}}
  cpu: {enabled: true, engine: portable}
partition: {prefer: vgf_first, min_partition_size: 1}
)";

std::vector<float> read_floats(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

// Transpose(0,1,3,2) → AveragePool(2x2, stride 2) through the portable kernels.
std::vector<float> portable_prefix(const Tensor& x) {
  GraphBuilder b("prefix");
  const ValueId in = b.input("x", x.type());
  const ValueId t = b.op("Transpose", {in}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  b.output(b.op("AveragePool", {t}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}));
  Result<Graph> g = b.build();
  EXPECT_TRUE(g.is_ok());
  auto cpu = cpu::make_cpu_delegate({{"engine", "portable"}});
  Island island{0, "cpu", &*g, {0, 1}, g->inputs(), g->outputs()};
  Result<Blob> blob = (*cpu)->compile(island, {});
  auto handle = (*cpu)->init(*blob, InitContext{});
  Tensor y(g->value(g->outputs()[0]).type);
  const TensorRef in_ref{&x.type(), const_cast<std::byte*>(x.raw())};
  const TensorRef out_ref{&y.type(), y.raw()};
  ExecContext ctx;
  EXPECT_TRUE((*handle)->execute(ctx, std::span(&in_ref, 1), std::span(&out_ref, 1)).is_ok());
  return std::vector<float>(y.data<float>(), y.data<float>() + y.num_elements());
}

TEST(VgfCliTest, ExportedFirstIslandRunsAloneToThePortableResult) {
  testing::TempDir dir;
  testing::write_file(dir / "profile.yaml", kVgfProfile);
  const Tensor x = examples::rfc_model_input();
  {
    std::ofstream f(dir / "x.bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(x.raw()), static_cast<std::streamsize>(x.byte_size()));
  }
  const auto exported = run_cli("export-vgf " + example_model() + " --profile " + (dir / "profile.yaml").string() +
                                " -o " + (dir / "out").string());
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  EXPECT_TRUE(contains(exported.output, "rfc_model_island0.vgf: island 0, 2 ops [transpose, avg_pool2d], inputs x "
                                        "f32[1,3,8,8] (NHWC), outputs avg_pool2d_out f32[1,3,4,4] (NHWC)"))
      << exported.output;
  EXPECT_TRUE(contains(exported.output, "rfc_model_island2.vgf: island 2, 5 ops [sin, cos, reciprocal, mul, transpose]"))
      << exported.output;
  ASSERT_TRUE(std::filesystem::exists(dir / "out" / "rfc_model_island0.vgf"));
  {
    std::ifstream f(dir / "out" / "rfc_model_island0.vgf", std::ios::binary);
    char magic[4] = {};
    f.read(magic, 4);
    EXPECT_EQ(std::string(magic, 4), "VGF1");
  }

  const auto ran = run_cli("run-vgf " + (dir / "out" / "rfc_model_island0.vgf").string() + " --validate --input " +
                           (dir / "x.bin").string() + " --output " + (dir / "y.bin").string());
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_TRUE(contains(ran.output, "output avg_pool2d_out f32[1,3,4,4] written to")) << ran.output;
  const std::vector<float> got = read_floats(dir / "y.bin");
  const std::vector<float> want = portable_prefix(x);
  ASSERT_EQ(got.size(), 48u);
  ASSERT_EQ(want.size(), 48u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f) << i;
  // By hand: the first window averages x[0,0,0..1,0..1], elements 0, 1, 8
  // and 9 of linspace(-0.8, 0.8, 192): -0.8 + 1.6 * 4.5 / 191.
  EXPECT_NEAR(got[0], -0.8f + 1.6f * 4.5f / 191.f, 1e-6f);
}

TEST(VgfCliTest, RunVgfRefusesACorruptFile) {
  testing::TempDir dir;
  testing::write_file(dir / "bad.vgf", "VGF1 but nothing after it");
  const auto r = run_cli("run-vgf " + (dir / "bad.vgf").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "error: failed to decode VGF: ")) << r.output;
}

TEST(VgfCliTest, ExportVgfNeedsTheVgfDelegate) {
  testing::TempDir dir;
  const auto r = run_cli("export-vgf " + example_model() + " --profile " +
                         testing::source_path("configs/cpu_portable.yaml").string() + " -o " + (dir / "out").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "does not enable the vgf delegate")) << r.output;
}

}  // namespace
}  // namespace hetsched
