// Shape variants (scheduler/shape_variants.h): a model with a dynamic
// sequence dim compiled for two lengths into one .hsp, each variant picked by
// its input shapes and checked against the portable reference kernels run on
// the model imported at that shape — on the CPU and on the Vulkan delegate.
#include <gtest/gtest.h>

#include "delegates/cpu/cpu_reference.h"
#include "hetsched/hetsched.h"
#include "profile/profile.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"
#include "scheduler/program_file.h"
#include "scheduler/shape_variants.h"
#include "shared_gpu/shared_gpu_registry.h"
#include "test/onnx_model_builder.h"
#include "test/vk_test_env.h"

namespace hetsched {
namespace {

using onnx_test::Floats;
using onnx_test::Ints;
using onnx_test::OnnxModel;

constexpr int64_t kWidth = 16;

// x [1, seq, 16] → MatMul W → Add b → split into 4 heads (Reshape [0,-1,4,4]
// with a copied and an inferred dim) → Softmax over each head → back to
// [1, seq, 16] → Relu. Every shape after x follows the symbolic seq.
OnnxModel dynamic_sequence_model() {
  OnnxModel m(18);
  m.input("x", onnx_test::kFloat, {1, "seq", kWidth});
  Floats w(kWidth * kWidth), b(kWidth);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 7) % 13) / 13.f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * static_cast<float>(i % 5) - 0.2f;
  m.initializer("w", onnx_test::f32_proto({kWidth, kWidth}, w, true));
  m.initializer("b", onnx_test::f32_proto({kWidth}, b, true));
  m.initializer("heads", onnx_test::i64_proto({4}, {0, -1, 4, 4}));
  m.initializer("back", onnx_test::i64_proto({3}, {0, -1, kWidth}));
  m.node("MatMul", {"x", "w"}, {"xw"}, "matmul");
  m.node("Add", {"xw", "b"}, {"h"}, "bias");
  m.node("Reshape", {"h", "heads"}, {"h4"}, "split_heads");
  onnx_test::attr(m.node("Softmax", {"h4"}, {"p4"}, "softmax"), "axis", int64_t{-1});
  m.node("Reshape", {"p4", "back"}, {"p"}, "merge_heads");
  m.node("Relu", {"p"}, {"y"}, "relu");
  m.output("y");
  return m;
}

InputShapes seq(int64_t n) { return {{"x", {1, n, kWidth}}}; }

class ShapeVariantsTest : public testing::VkTest {
 protected:
  void SetUp() override {
    ::setenv("HETSCHED_VK_VALIDATION", "1", 1);
    path_ = dynamic_sequence_model().save(dir_);
  }
  void TearDown() override {
    ::unsetenv("HETSCHED_VK_VALIDATION");
    testing::VkTest::TearDown();
  }

  Profile profile(const std::string& config) {
    auto p = load_profile(testing::source_path(config).string());
    EXPECT_TRUE(p.is_ok()) << p.status().message();
    return p.is_ok() ? *p : default_profile();
  }

  // Compiles sequence lengths 1 and 7 into one file, reopens it at each
  // length and compares with the reference kernels.
  void compile_and_run_both(const Profile& profile, const std::string& delegate) {
    auto programs = build_program_variants(path_, profile, {seq(1), seq(7)});
    ASSERT_TRUE(programs.is_ok()) << programs.status().message();
    ASSERT_EQ(programs->size(), 2u);
    for (const Program& p : *programs)
      for (const ProgramIsland& island : p.islands) EXPECT_EQ(island.delegate, delegate);
    const std::string file = (dir_ / "model.hsp").string();
    ASSERT_TRUE(write_program_variants_file(*programs, file).is_ok());

    for (int64_t n : {7, 1}) {
      auto session = open_session(file, profile, seq(n));
      ASSERT_TRUE(session.is_ok()) << session.status().message();
      if (delegate == "vulkan") {
        auto context = SharedGpuContextRegistry::get().lookup("hetsched:0");  // configs/vulkan.yaml's key
        ASSERT_NE(context, nullptr);
        watch(*context);
      }
      ASSERT_EQ((*session)->input_types()[0].shape, (Shape{1, n, kWidth}));
      const Tensor x = testing::random_tensor({1, n, kWidth}, static_cast<uint32_t>(n));
      auto got = (*session)->run({x});
      ASSERT_TRUE(got.is_ok()) << got.status().message();

      auto graph = load_model(path_, seq(n));
      ASSERT_TRUE(graph.is_ok()) << graph.status().message();
      auto want = cpu::run_graph_reference(*graph, {x});
      ASSERT_TRUE(want.is_ok()) << want.status().message();
      ASSERT_EQ((*got)[0].shape(), (Shape{1, n, kWidth}));
      EXPECT_LT(testing::max_abs_diff((*got)[0], (*want)[0]), 1e-5f) << "seq " << n;
    }
  }

  testing::TempDir dir_;
  std::string path_;
};

TEST_F(ShapeVariantsTest, TwoSequenceLengthsInOneFileOnTheCpu) {
  Profile p = default_profile();
  compile_and_run_both(p, "cpu");
}

TEST_F(ShapeVariantsTest, TwoSequenceLengthsInOneFileOnVulkan) {
  compile_and_run_both(profile("configs/vulkan.yaml"), "vulkan");
}

TEST_F(ShapeVariantsTest, AShapeNoVariantHasIsRefusedListingTheVariants) {
  auto programs = build_program_variants(path_, default_profile(), {seq(1), seq(7)});
  ASSERT_TRUE(programs.is_ok()) << programs.status().message();
  const std::string file = (dir_ / "model.hsp").string();
  ASSERT_TRUE(write_program_variants_file(*programs, file).is_ok());

  auto session = open_session(file, default_profile(), seq(5));
  ASSERT_FALSE(session.is_ok());
  EXPECT_EQ(session.status().message(),
            "failed to open program '" + file +
                "': input shapes x=1x5x16 match none of the compiled shape variants (x=1x1x16; x=1x7x16)");
  auto unknown = open_session(file, default_profile(), {{"y", {1, 1, kWidth}}});
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("the model has no input of that name"), std::string::npos);
  // No shapes: the first variant.
  auto first = open_session(file, default_profile());
  ASSERT_TRUE(first.is_ok()) << first.status().message();
  EXPECT_EQ((*first)->input_types()[0].shape, (Shape{1, 1, kWidth}));
  // The one-program reader says what the file is.
  auto one = read_program_file(file);
  ASSERT_FALSE(one.is_ok());
  EXPECT_NE(one.status().message().find("holds 2 shape variants (x=1x1x16; x=1x7x16)"), std::string::npos)
      << one.status().message();
}

TEST_F(ShapeVariantsTest, VariantsMustBeOneModelWithDistinctShapes) {
  auto a = build_program_variants(path_, default_profile(), {seq(3)});
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  std::vector<Program> twice{(*a)[0], (*a)[0]};
  Status same = check_shape_variants(twice);
  EXPECT_EQ(same.message(), "shape variants 0 and 1 have the same input shapes (x=1x3x16)");
  EXPECT_FALSE(write_program_variants_file(twice, (dir_ / "x.hsp").string()).is_ok());

  auto other = build_program_variants(path_, default_profile(), {seq(4)});
  ASSERT_TRUE(other.is_ok());
  Program renamed = (*other)[0];
  renamed.tensors[static_cast<size_t>(renamed.inputs[0])].name = "tokens";
  std::vector<Program> mixed{(*a)[0], renamed};
  EXPECT_NE(check_shape_variants(mixed).message().find("variants must be one model"), std::string::npos);

  // A dynamic model without a shape cannot be compiled; the error says how.
  auto none = build_program_variants(path_, default_profile(), {});
  ASSERT_FALSE(none.is_ok());
  EXPECT_NE(none.status().message().find("has a dynamic shape f32[1,?,16]; give it with --input-shape"), std::string::npos)
      << none.status().message();
}

TEST_F(ShapeVariantsTest, CliCompilesVariantsAndRunPicksOne) {
  const std::string hsp = (dir_ / "cli.hsp").string();
  auto compiled = testing::run_cli("compile " + path_ + " --input-shape x=1x1x16 --input-shape x=1x9x16 -o " + hsp);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
  EXPECT_NE(compiled.output.find("for x=1x9x16"), std::string::npos) << compiled.output;

  auto run = testing::run_cli("run " + hsp + " --input-shape x=1x9x16");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("output y f32[1,9,16]"), std::string::npos) << run.output;

  auto wrong = testing::run_cli("run " + hsp + " --input-shape x=1x2x16");
  EXPECT_EQ(wrong.exit_code, 2) << wrong.output;
  EXPECT_NE(wrong.output.find("match none of the compiled shape variants (x=1x1x16; x=1x9x16)"), std::string::npos)
      << wrong.output;

  auto twice = testing::run_cli("run " + path_ + " --input-shape x=1x1x16 --input-shape x=1x2x16");
  EXPECT_EQ(twice.exit_code, 2) << twice.output;
  EXPECT_NE(twice.output.find("only `hetsched compile` builds"), std::string::npos) << twice.output;
}

TEST_F(ShapeVariantsTest, OneApiModelHoldsBothAndEachRunPicksItsOwn) {
  LoadOptions options;
  options.shape_variants = {{{"x", {1, 1, kWidth}}}, {{"x", {1, 7, kWidth}}}};
  auto model = Model::load(path_, ProfileSource::text("name: t\n"), options);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  ASSERT_EQ((*model)->shape_variants(), 2u);
  EXPECT_EQ((*model)->inputs(1)[0].shape, (std::vector<int64_t>{1, 7, kWidth}));

  for (int64_t n : {7, 1, 7}) {
    const Tensor x = testing::random_tensor({1, n, kWidth}, static_cast<uint32_t>(10 + n));
    std::vector<float> y(static_cast<size_t>(n * kWidth));
    Status s = (*model)->run({ConstView{x.raw(), x.byte_size()}}, {MutableView::of(y)});
    ASSERT_TRUE(s.is_ok()) << s.message();
    auto graph = load_model(path_, seq(n));
    ASSERT_TRUE(graph.is_ok());
    auto want = cpu::run_graph_reference(*graph, {x});
    ASSERT_TRUE(want.is_ok());
    float diff = 0;
    for (size_t i = 0; i < y.size(); ++i) diff = std::max(diff, std::abs(y[i] - (*want)[0].data<float>()[i]));
    EXPECT_LT(diff, 1e-5f) << "seq " << n;
  }
  // A size no variant has, and shapes named that pick none.
  std::vector<float> x5(5 * kWidth), y5(5 * kWidth);
  Status none = (*model)->run({ConstView::of(x5)}, {MutableView::of(y5)});
  EXPECT_EQ(none.message(),
            "failed to run model: the input byte sizes match none of its shape variants (x=[1,1,16]; x=[1,7,16])");
  RunOptions named;
  named.input_shapes = {{"x", {1, 5, kWidth}}};
  EXPECT_FALSE((*model)->run({ConstView::of(x5)}, {MutableView::of(y5)}, nullptr, named).is_ok());
}

}  // namespace
}  // namespace hetsched
