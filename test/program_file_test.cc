#include "scheduler/program_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "graph/graph_serialize.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

// Two islands (cpu, vulkan) with handoffs between them and the host: every
// field of every struct set to something other than its default.
Program make_program() {
  Program p;
  p.model_name = "rfc_model";
  p.profile_name = "gpu-first";
  p.tensors = {
      {"x", {DType::kFloat32, {1, 3, 8, 8}}}, {"w", {DType::kFloat32, {2, 2}}},
      {"y", {DType::kFloat32, {1, 3, 8, 8}}}, {"idx", {DType::kInt64, {kDynamicDim, 2}}},
      {"z", {DType::kFloat16, {1, 3, 8, 8}}},
  };
  p.constants.emplace_back(1, Tensor::from_vector<float>(DType::kFloat32, {2, 2}, {1.f, -2.f, 0.5f, 3.f}));

  ProgramIsland cpu;
  cpu.id = 3;
  cpu.delegate = "cpu";
  cpu.compile_specs = {{"threads", "2"}, {"alpha", ""}};
  cpu.blob = {0x00, 0x01, 0x7F, 0x80, 0xFF};
  cpu.inputs = {0, 1};
  cpu.outputs = {2};
  cpu.node_names = {"conv1", "relu1"};
  cpu.op_types = {"Conv", "Relu"};
  ProgramIsland gpu;
  gpu.id = 7;
  gpu.delegate = "vulkan";
  gpu.compile_specs = {{"gpu_shared_context_token", "app"}};
  gpu.inputs = {2, 3};
  gpu.outputs = {4};
  gpu.node_names = {"add"};
  gpu.op_types = {"Add"};
  p.islands = {cpu, gpu};

  ProgramStep in{StepKind::kHandoff, -1, 0, HandoffKind::kHostCopy, "host", "cpu", ""};
  ProgramStep run_cpu{StepKind::kRunIsland, 0, -1, HandoffKind::kHostCopy, "", "", ""};
  ProgramStep up{StepKind::kHandoff, 1, 2, HandoffKind::kUpload, "cpu", "vulkan", "NCHW->NHWC"};
  ProgramStep run_gpu{StepKind::kRunIsland, 1, -1, HandoffKind::kHostCopy, "", "", ""};
  ProgramStep down{StepKind::kHandoff, 1, 4, HandoffKind::kReadback, "vulkan", "host", ""};
  ProgramStep dev{StepKind::kHandoff, 1, 4, HandoffKind::kAlias, "vulkan", "vgf", ""};
  p.steps = {in, run_cpu, up, run_gpu, down, dev};
  p.inputs = {0, 3};
  p.outputs = {4};
  p.metadata = {{"policy", "vulkan_first"}, {"hetsched_version", "0.1.0"}};
  p.memory.domains = {{"host", 1024, 768, {{"y", 0, 768, 1, 2}}},
                      {"gpu:app:0", 4096, 3072, {{"vulkan#7 scratch", 256, 512, 3, 3}}}};
  p.memory.host_offsets = {-1, -1, 0, -1, -1};
  p.memory.islands = {{-1, 0, {}, {}}, {1, 256, {1024, 2048}, {3072}}};
  return p;
}

// Checks `p` against make_program()'s literals, written out again here so the
// expectation does not come from the code under test.
void expect_is_made_program(const Program& p) {
  EXPECT_EQ(p.format_version, 3u);
  EXPECT_EQ(p.model_name, "rfc_model");
  EXPECT_EQ(p.profile_name, "gpu-first");
  ASSERT_EQ(p.tensors.size(), 5u);
  EXPECT_EQ(p.tensors[0].name, "x");
  EXPECT_EQ(p.tensors[0].type, (TensorType{DType::kFloat32, {1, 3, 8, 8}}));
  EXPECT_EQ(p.tensors[1].name, "w");
  EXPECT_EQ(p.tensors[1].type, (TensorType{DType::kFloat32, {2, 2}}));
  EXPECT_EQ(p.tensors[2].name, "y");
  EXPECT_EQ(p.tensors[3].name, "idx");
  EXPECT_EQ(p.tensors[3].type, (TensorType{DType::kInt64, {-1, 2}}));
  EXPECT_EQ(p.tensors[4].name, "z");
  EXPECT_EQ(p.tensors[4].type, (TensorType{DType::kFloat16, {1, 3, 8, 8}}));

  ASSERT_EQ(p.constants.size(), 1u);
  EXPECT_EQ(p.constants[0].first, 1);
  EXPECT_EQ(p.constants[0].second.type(), (TensorType{DType::kFloat32, {2, 2}}));
  EXPECT_EQ(p.constants[0].second.to_float_vector(), (std::vector<float>{1.f, -2.f, 0.5f, 3.f}));

  ASSERT_EQ(p.islands.size(), 2u);
  const ProgramIsland& cpu = p.islands[0];
  EXPECT_EQ(cpu.id, 3);
  EXPECT_EQ(cpu.delegate, "cpu");
  EXPECT_EQ(cpu.compile_specs, (CompileSpecs{{"threads", "2"}, {"alpha", ""}}));
  EXPECT_EQ(cpu.blob, (Blob{0x00, 0x01, 0x7F, 0x80, 0xFF}));
  EXPECT_EQ(cpu.inputs, (std::vector<int>{0, 1}));
  EXPECT_EQ(cpu.outputs, (std::vector<int>{2}));
  EXPECT_EQ(cpu.node_names, (std::vector<std::string>{"conv1", "relu1"}));
  EXPECT_EQ(cpu.op_types, (std::vector<std::string>{"Conv", "Relu"}));
  const ProgramIsland& gpu = p.islands[1];
  EXPECT_EQ(gpu.id, 7);
  EXPECT_EQ(gpu.delegate, "vulkan");
  EXPECT_EQ(gpu.compile_specs, (CompileSpecs{{"gpu_shared_context_token", "app"}}));
  EXPECT_TRUE(gpu.blob.empty());
  EXPECT_EQ(gpu.inputs, (std::vector<int>{2, 3}));
  EXPECT_EQ(gpu.outputs, (std::vector<int>{4}));
  EXPECT_EQ(gpu.node_names, (std::vector<std::string>{"add"}));
  EXPECT_EQ(gpu.op_types, (std::vector<std::string>{"Add"}));

  ASSERT_EQ(p.steps.size(), 6u);
  struct Want {
    StepKind kind;
    int island, tensor;
    HandoffKind handoff;
    const char *from, *to, *layout;
  };
  const Want want[] = {
      {StepKind::kHandoff, -1, 0, HandoffKind::kHostCopy, "host", "cpu", ""},
      {StepKind::kRunIsland, 0, -1, HandoffKind::kHostCopy, "", "", ""},
      {StepKind::kHandoff, 1, 2, HandoffKind::kUpload, "cpu", "vulkan", "NCHW->NHWC"},
      {StepKind::kRunIsland, 1, -1, HandoffKind::kHostCopy, "", "", ""},
      {StepKind::kHandoff, 1, 4, HandoffKind::kReadback, "vulkan", "host", ""},
      {StepKind::kHandoff, 1, 4, HandoffKind::kAlias, "vulkan", "vgf", ""},
  };
  for (size_t i = 0; i < 6; ++i) {
    const ProgramStep& s = p.steps[i];
    EXPECT_EQ(s.kind, want[i].kind) << i;
    EXPECT_EQ(s.island, want[i].island) << i;
    EXPECT_EQ(s.tensor, want[i].tensor) << i;
    EXPECT_EQ(s.handoff, want[i].handoff) << i;
    EXPECT_EQ(s.from, want[i].from) << i;
    EXPECT_EQ(s.to, want[i].to) << i;
    EXPECT_EQ(s.layout, want[i].layout) << i;
  }
  EXPECT_EQ(p.inputs, (std::vector<int>{0, 3}));
  EXPECT_EQ(p.outputs, (std::vector<int>{4}));
  EXPECT_EQ(p.metadata, (CompileSpecs{{"policy", "vulkan_first"}, {"hetsched_version", "0.1.0"}}));

  const MemoryPlan& m = p.memory;
  ASSERT_EQ(m.domains.size(), 2u);
  EXPECT_EQ(m.domains[0].domain, "host");
  EXPECT_EQ(m.domains[0].planned_bytes, 1024u);
  EXPECT_EQ(m.domains[0].lower_bound, 768u);
  ASSERT_EQ(m.domains[0].buffers.size(), 1u);
  EXPECT_EQ(m.domains[0].buffers[0].name, "y");
  EXPECT_EQ(m.domains[0].buffers[0].bytes, 768u);
  EXPECT_EQ(m.domains[0].buffers[0].first, 1);
  EXPECT_EQ(m.domains[0].buffers[0].last, 2);
  EXPECT_EQ(m.domains[1].domain, "gpu:app:0");
  ASSERT_EQ(m.domains[1].buffers.size(), 1u);
  EXPECT_EQ(m.domains[1].buffers[0].offset, 256u);
  EXPECT_EQ(m.host_offsets, (std::vector<int64_t>{-1, -1, 0, -1, -1}));
  ASSERT_EQ(m.islands.size(), 2u);
  EXPECT_EQ(m.islands[0].domain, -1);
  EXPECT_EQ(m.islands[1].domain, 1);
  EXPECT_EQ(m.islands[1].scratch_offset, 256u);
  EXPECT_EQ(m.islands[1].input_offsets, (std::vector<uint64_t>{1024, 2048}));
  EXPECT_EQ(m.islands[1].output_offsets, (std::vector<uint64_t>{3072}));
}

Status load_status(const Blob& bytes, const std::string& name = "p.hsp") {
  Result<Program> r = deserialize_program(bytes, name);
  return r.is_ok() ? Status::ok() : r.status();
}

TEST(ProgramFileTest, MadeProgramIsValid) { EXPECT_TRUE(validate_program(make_program()).is_ok()); }

TEST(ProgramFileTest, RoundTripInMemoryKeepsEveryField) {
  Result<Program> back = deserialize_program(serialize_program(make_program()));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  expect_is_made_program(*back);
}

TEST(ProgramFileTest, RoundTripThroughFileKeepsEveryField) {
  testing::TempDir dir;
  const std::string path = dir / "model.hsp";
  ASSERT_TRUE(write_program_file(make_program(), path).is_ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  Result<Program> back = read_program_file(path);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  expect_is_made_program(*back);
}

TEST(ProgramFileTest, FileStartsWithSizePrefixThenIdentifier) {
  Blob bytes = serialize_program(make_program());
  uint32_t size = 0;
  std::memcpy(&size, bytes.data(), 4);
  EXPECT_EQ(size, bytes.size() - 4);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(bytes.data()) + 8, 4), "HSPG");
}

TEST(ProgramFileTest, EmptyProgramRoundTrips) {
  Program empty;
  Result<Program> back = deserialize_program(serialize_program(empty));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_TRUE(back->tensors.empty());
  EXPECT_TRUE(back->steps.empty());
  EXPECT_EQ(back->format_version, kProgramFormatVersion);
}

TEST(ProgramFileTest, LoadsFromUnalignedAddress) {
  Blob bytes = serialize_program(make_program());
  std::vector<uint8_t> shifted(bytes.size() + 3);
  std::memcpy(shifted.data() + 3, bytes.data(), bytes.size());
  Result<Program> back = deserialize_program(std::span<const uint8_t>(shifted).subspan(3));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  expect_is_made_program(*back);
}

TEST(ProgramFileTest, ReadRejectsMissingFile) {
  testing::TempDir dir;
  const std::string path = dir / "nope.hsp";
  Result<Program> r = read_program_file(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "failed to read program file '" + path + "': No such file or directory");
}

TEST(ProgramFileTest, ReadRejectsDirectory) {
  testing::TempDir dir;
  Result<Program> r = read_program_file(dir.path().string());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "failed to read program file '" + dir.path().string() + "': Is a directory");
}

TEST(ProgramFileTest, WriteReportsMissingDirectory) {
  testing::TempDir dir;
  const std::string path = dir / "no_such_dir" / "m.hsp";
  Status s = write_program_file(make_program(), path);
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.message(), "failed to write program file '" + path + "': No such file or directory");
}

TEST(ProgramFileTest, RejectsEmptyFile) {
  testing::TempDir dir;
  const std::string path = dir / "empty.hsp";
  testing::write_file(path, "");
  Result<Program> r = read_program_file(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message(), "'" + path + "' is not a hetsched program file (expected identifier HSPG)");
}

TEST(ProgramFileTest, RejectsWrongIdentifier) {
  Blob bytes = serialize_program(make_program());
  std::memcpy(bytes.data() + 8, "HSGR", 4);
  Status s = load_status(bytes);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "'p.hsp' is not a hetsched program file (expected identifier HSPG)");

  testing::TempDir dir;
  const std::string path = dir / "model.onnx";
  testing::write_file(path, std::string("\x08\x07\x12\x07pytorch\x1a\x03"
                                        "2.1",
                                        16));
  Result<Program> r = read_program_file(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "'" + path + "' is not a hetsched program file (expected identifier HSPG)");
}

TEST(ProgramFileTest, RejectsEveryTruncation) {
  Blob bytes = serialize_program(make_program());
  for (size_t len = 0; len < bytes.size(); ++len) {
    Status s = load_status(Blob(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len)));
    ASSERT_FALSE(s.is_ok()) << "prefix of " << len << " of " << bytes.size() << " bytes was accepted";
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << len;
    if (len < 12) {
      EXPECT_EQ(s.message(), "'p.hsp' is not a hetsched program file (expected identifier HSPG)") << len;
    } else {
      EXPECT_EQ(s.message(),
                "failed to load program file 'p.hsp': truncated or corrupt (FlatBuffers verification failed)")
          << len;
    }
  }
}

TEST(ProgramFileTest, RejectsTruncatedFileOnDisk) {
  Blob bytes = serialize_program(make_program());
  testing::TempDir dir;
  const std::string path = dir / "cut.hsp";
  for (size_t len : {size_t{13}, bytes.size() / 2, bytes.size() - 1}) {
    testing::write_file(path, std::string(reinterpret_cast<const char*>(bytes.data()), len));
    Result<Program> r = read_program_file(path);
    ASSERT_FALSE(r.is_ok()) << len;
    EXPECT_EQ(r.status().message(),
              "failed to load program file '" + path + "': truncated or corrupt (FlatBuffers verification failed)")
        << len;
  }
}

TEST(ProgramFileTest, RejectsTrailingBytes) {
  Blob bytes = serialize_program(make_program());
  bytes.push_back(0);
  EXPECT_EQ(load_status(bytes).message(),
            "failed to load program file 'p.hsp': truncated or corrupt (FlatBuffers verification failed)");
}

TEST(ProgramFileTest, FlippedBytesAreRefusedOrHarmless) {
  Blob bytes = serialize_program(make_program());
  size_t refused = 0, tries = 0;
  for (size_t pos = 0; pos < bytes.size(); ++pos) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x10}, uint8_t{0x80}, uint8_t{0xFF}}) {
      Blob bad = bytes;
      bad[pos] ^= mask;
      Result<Program> r = deserialize_program(bad, "flip.hsp");
      ++tries;
      if (r.is_ok()) {
        // Accepted: whatever it holds passed validation.
        EXPECT_TRUE(validate_program(*r).is_ok()) << pos;
        continue;
      }
      ++refused;
      StatusCode code = r.status().code();
      EXPECT_TRUE(code == StatusCode::kDataLoss || code == StatusCode::kUnsupported)
          << pos << ": " << r.status().message();
      EXPECT_NE(r.status().message().find("'flip.hsp'"), std::string::npos) << r.status().message();
      EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
    }
  }
  EXPECT_GT(refused, tries / 4) << refused << " of " << tries;
}

TEST(ProgramFileTest, RandomCorruptionIsRefusedOrHarmless) {
  Blob bytes = serialize_program(make_program());
  std::mt19937 rng(20240611);
  size_t refused = 0;
  constexpr int kTries = 3000;
  for (int i = 0; i < kTries; ++i) {
    Blob bad = bytes;
    // Keep the header intact half of the time, so the damage reaches the
    // verifier and the reader rather than stopping at the identifier.
    size_t first = i % 2 ? 12 : 0;
    int count = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < count; ++k) bad[first + rng() % (bad.size() - first)] = static_cast<uint8_t>(rng());
    if (i % 3 == 0) bad.resize(rng() % bad.size());
    Result<Program> r = deserialize_program(bad, "rand.hsp");
    if (!r.is_ok()) ++refused;
  }
  EXPECT_GT(refused, static_cast<size_t>(kTries / 4));
}

TEST(ProgramFileTest, GraphBlobInsideIslandSurvivesRoundTrip) {
  Graph g("island0");
  ValueId x = g.add_input("x", {DType::kFloat32, {1, 3, 8, 8}});
  NodeId n = g.add_node("Relu", "relu1", {x}, {"y"});
  g.add_output(g.node(n).outputs[0]);
  Program p = make_program();
  p.islands[0].blob = serialize_graph(g);
  Result<Program> back = deserialize_program(serialize_program(p));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  Result<Graph> island = deserialize_graph(back->islands[0].blob);
  ASSERT_TRUE(island.is_ok()) << island.status().message();
  EXPECT_EQ(island->name(), "island0");
  EXPECT_EQ(island->node(0).name, "relu1");
}

TEST(ProgramFileTest, RejectsNewerFormatVersion) {
  Program p = make_program();
  p.format_version = kProgramFormatVersion + 1;
  Status s = load_status(serialize_program(p), "new.hsp");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "program file 'new.hsp' has format version 4; this hetsched reads version 3 — rebuild it with "
            "`hetsched compile`");
}

TEST(ProgramFileTest, NewerFormatVersionIsReportedEvenWhenTheRestIsUnreadable) {
  // A newer writer may lay out everything after the version differently;
  // simulate that by scrambling the tail, which the old verifier rejects.
  Program p = make_program();
  p.format_version = kProgramFormatVersion + 1;
  Blob bytes = serialize_program(p);
  for (size_t i = bytes.size() - 64; i < bytes.size(); ++i) bytes[i] = 0xEE;
  Status s = load_status(bytes, "new.hsp");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.message();
  EXPECT_NE(s.message().find("has format version 4"), std::string::npos) << s.message();
}

TEST(ProgramFileTest, RejectsFormatVersionZero) {
  Program p = make_program();
  p.format_version = 0;
  Status s = load_status(serialize_program(p));
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "failed to load program file 'p.hsp': format version 0 does not exist");
}

TEST(ProgramFileTest, RejectsStepWithIslandOutOfRange) {
  Program p = make_program();
  p.steps[3].island = 2;
  Status s = load_status(serialize_program(p));
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "failed to load program file 'p.hsp': step 3 runs island 2, but the program has 2 islands");
}

TEST(ProgramFileTest, RejectsUnknownStepAndHandoffKinds) {
  Program p = make_program();
  p.steps[0].kind = static_cast<StepKind>(9);
  EXPECT_EQ(load_status(serialize_program(p)).message(),
            "failed to load program file 'p.hsp': step 0 has unknown kind 9");
  p = make_program();
  p.steps[2].handoff = static_cast<HandoffKind>(9);
  EXPECT_EQ(load_status(serialize_program(p)).message(),
            "failed to load program file 'p.hsp': step 2 has unknown handoff kind 9");
}

TEST(ProgramFileTest, RejectsConstantOfWrongSize) {
  Program p = make_program();
  // Data for 3 floats where the tensor 'w' (f32[2,2]) needs 4.
  p.constants[0].second = Tensor::from_vector<float>(DType::kFloat32, {3}, {1.f, 2.f, 3.f});
  EXPECT_EQ(load_status(serialize_program(p)).message(),
            "failed to load program file 'p.hsp': constant 0 has 12 bytes of data; tensor 'w' (f32[2,2]) needs 16");
  p.constants[0].first = 9;
  EXPECT_EQ(load_status(serialize_program(p)).message(),
            "failed to load program file 'p.hsp': constant 0 refers to tensor 9, but the program has 5 tensors");
}

TEST(ProgramValidateTest, RejectsEachBrokenIndex) {
  auto error_of = [](auto change) {
    Program p = make_program();
    change(p);
    Status s = validate_program(p);
    EXPECT_EQ(s.code(), s.is_ok() ? StatusCode::kOk : StatusCode::kInvalidArgument);
    return s.is_ok() ? std::string("ok") : s.message();
  };
  EXPECT_EQ(error_of([](Program& p) { p.steps[1].island = -1; }),
            "step 1 runs island -1, but the program has 2 islands");
  EXPECT_EQ(error_of([](Program& p) { p.steps[2].tensor = 5; }),
            "step 2 (handoff) refers to tensor 5, but the program has 5 tensors");
  EXPECT_EQ(error_of([](Program& p) { p.steps[2].to.clear(); }), "step 2 (handoff) has no source or destination");
  EXPECT_EQ(error_of([](Program& p) { p.islands[1].inputs[1] = 17; }),
            "island 1 input 1 refers to tensor 17, but the program has 5 tensors");
  EXPECT_EQ(error_of([](Program& p) { p.islands[0].outputs[0] = -2; }),
            "island 0 output 0 refers to tensor -2, but the program has 5 tensors");
  EXPECT_EQ(error_of([](Program& p) { p.islands[1].id = 3; }), "island 1 repeats island id 3");
  EXPECT_EQ(error_of([](Program& p) { p.islands[0].delegate.clear(); }), "island 0 names no delegate");
  EXPECT_EQ(error_of([](Program& p) { p.islands[0].op_types.pop_back(); }), "island 0 has 2 node names but 1 op types");
  EXPECT_EQ(error_of([](Program& p) { p.inputs.push_back(5); }),
            "model input 2 refers to tensor 5, but the program has 5 tensors");
  EXPECT_EQ(error_of([](Program& p) { p.outputs[0] = 8; }),
            "model output 0 refers to tensor 8, but the program has 5 tensors");
  EXPECT_EQ(error_of([](Program& p) { p.tensors[2].name = "x"; }), "program tensor name 'x' is used twice");
  EXPECT_EQ(error_of([](Program& p) { p.tensors[3].name.clear(); }), "program tensor 3 has no name");
  EXPECT_EQ(error_of([](Program& p) { p.constants[0].first = 0; }),
            "constant for tensor 'x' is f32[2,2], but the tensor is f32[1,3,8,8]");
  EXPECT_EQ(error_of([](Program& p) { p.constants[0].first = 5; }),
            "a constant refers to tensor 5, but the program has 5 tensors");
  EXPECT_EQ(error_of([](Program& p) { p.steps[4].island = 2; }),
            "step 4 (readback) names island 2, but the program has 2 islands");
  EXPECT_EQ(error_of([](Program& p) { p.memory.host_offsets[2] = 512; }),
            "the memory plan puts tensor 'y' at host offset 512, past the host arena's 1024 bytes");
  EXPECT_EQ(error_of([](Program& p) { p.memory.islands[1].domain = 5; }),
            "the memory plan puts island 1 in domain 5, but it has 2 domains (the host is 0)");
  EXPECT_EQ(error_of([](Program& p) { p.memory.islands.pop_back(); }),
            "the memory plan covers 5 tensors and 1 islands, the program has 5 and 2");
}

TEST(ProgramValidateTest, HandoffKindNames) {
  EXPECT_EQ(handoff_kind_name(HandoffKind::kHostCopy), "host copy");
  EXPECT_EQ(handoff_kind_name(HandoffKind::kUpload), "upload");
  EXPECT_EQ(handoff_kind_name(HandoffKind::kReadback), "readback");
  EXPECT_EQ(handoff_kind_name(HandoffKind::kDeviceCopy), "device copy");
}

// The bytes of an input a fuzzer found (test/data/crafted/, docs/reliability.md).
std::vector<uint8_t> crafted_file(const std::string& name) {
  std::ifstream f(testing::source_path("test/data/crafted/" + name), std::ios::binary);
  EXPECT_TRUE(f) << name;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// program_file_fuzz: a tensor type past 2^63 bytes passed the loader, and
// validate_memory_plan's byte_size() overflowed int64 (UBSan).
TEST(ProgramFileTest, CraftedTensorLargerThan2To63BytesIsRefused) {
  const std::vector<uint8_t> bytes = crafted_file("program_tensor_size_overflow.hsp");
  Result<Program> p = deserialize_program(bytes, "crafted.hsp");
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(p.status().message().find("failed to load program file 'crafted.hsp': "), std::string::npos)
      << p.status().message();
  EXPECT_NE(p.status().message().find("larger than 2^63 bytes"), std::string::npos) << p.status().message();
}

}  // namespace
}  // namespace hetsched
