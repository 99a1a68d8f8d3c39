// The VGF container: encode → decode round trips, the documented byte layout
// (docs/vgf.md), and refusal of corrupt files without crashing.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "delegates/vgf/dispatch_plan.h"
#include "delegates/vgf/vgf_format.h"
#include "delegates/vgf_generated.h"

namespace hetsched::vgf {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<uint8_t> float_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(float));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

Resource resource(ResourceKind kind, std::vector<int64_t> shape, TensorLayout layout = TensorLayout::kNchw,
                  std::string name = "") {
  Resource r;
  r.kind = kind;
  r.strides = dense_strides(shape);
  r.shape = std::move(shape);
  r.layout = layout;
  r.name = std::move(name);
  return r;
}

Operator op(OpCode code, std::vector<uint32_t> in, uint32_t out, OpAttr attr = NoAttr{}) {
  Operator o;
  o.op = code;
  o.inputs = std::move(in);
  o.outputs = {out};
  o.attr = std::move(attr);
  o.name = "node";
  return o;
}

// x (NHWC input) + bias (constant) → reshape (alias) → sin → [compute segment] → y.
VgfFile sample_file() {
  VgfFile f;
  f.resources.push_back(resource(ResourceKind::kInput, {1, 2, 2, 3}, TensorLayout::kNhwc, "x"));
  Resource bias = resource(ResourceKind::kConstant, {1, 1, 1, 3}, TensorLayout::kNhwc, "bias");
  bias.constant_offset = 16;
  bias.constant_size = 12;
  f.resources.push_back(bias);
  Resource sum = resource(ResourceKind::kIntermediate, {1, 2, 2, 3}, TensorLayout::kNhwc);
  sum.alias_group = 0;
  f.resources.push_back(sum);
  Resource flat = resource(ResourceKind::kIntermediate, {12});
  flat.alias_group = 0;
  f.resources.push_back(flat);
  f.resources.push_back(resource(ResourceKind::kIntermediate, {12}));
  f.resources.push_back(resource(ResourceKind::kOutput, {12}, TensorLayout::kNchw, "y"));

  Module graph;
  graph.type = ModuleType::kGraph;
  graph.name = "graph_0";
  graph.ops = {op(OpCode::kAdd, {0, 1}, 2), op(OpCode::kReshape, {2}, 3), op(OpCode::kSin, {3}, 4)};
  Module compute;
  compute.type = ModuleType::kCompute;
  compute.name = "hardswish";
  compute.entry_point = "main";
  compute.spirv = {0x07230203u, 0x00010500u, 0u, 16u, 0u};
  f.modules = {graph, compute};

  Segment s0;
  s0.type = ModuleType::kGraph;
  s0.module = 0;
  s0.name = "segment_0";
  s0.inputs = {0, 1};
  s0.outputs = {2, 3, 4};
  Segment s1;
  s1.type = ModuleType::kCompute;
  s1.module = 1;
  s1.name = "segment_1_hardswish";
  s1.inputs = {4};
  s1.outputs = {5};
  s1.dispatch = {1, 1, 1};
  s1.push_constants = {12};
  f.segments = {s0, s1};
  f.inputs = {0};
  f.outputs = {5};
  f.constants.assign(16, 0xAB);
  const std::vector<uint8_t> b = float_bytes({0.25f, -1.5f, 2.f});
  f.constants.insert(f.constants.end(), b.begin(), b.end());
  return f;
}

// A second, smaller valid file: x → abs → y.
VgfFile tiny_file() {
  VgfFile f;
  f.resources = {resource(ResourceKind::kInput, {4}, TensorLayout::kNchw, "x"),
                 resource(ResourceKind::kOutput, {4}, TensorLayout::kNchw, "y")};
  Module m;
  m.name = "graph_0";
  m.ops = {op(OpCode::kAbs, {0}, 1)};
  f.modules = {m};
  Segment s;
  s.name = "segment_0";
  s.inputs = {0};
  s.outputs = {1};
  f.segments = {s};
  f.inputs = {0};
  f.outputs = {1};
  return f;
}

uint32_t u32_at(const Blob& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
uint64_t u64_at(const Blob& b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
void set_u32(Blob& b, size_t at, uint32_t v) { std::memcpy(b.data() + at, &v, 4); }
void set_u64(Blob& b, size_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }

// Byte offset of the section table entry for `kind` in an encoded file.
size_t entry_of(const Blob& b, SectionKind kind) {
  for (size_t i = 0; i < u32_at(b, 8); ++i)
    if (u32_at(b, 16 + i * 24) == static_cast<uint32_t>(kind)) return 16 + i * 24;
  ADD_FAILURE() << "no section of kind " << static_cast<int>(kind);
  return 0;
}

std::vector<uint8_t> section_bytes(const Blob& b, SectionKind kind) {
  const size_t e = entry_of(b, kind);
  const uint64_t offset = u64_at(b, e + 8), size = u64_at(b, e + 16);
  return std::vector<uint8_t>(b.begin() + static_cast<long>(offset), b.begin() + static_cast<long>(offset + size));
}

// Writes a container from raw sections exactly as docs/vgf.md lays it out,
// independently of encode_vgf, so decode_vgf can be fed mixed-up sections.
Blob assemble(const std::vector<std::pair<SectionKind, std::vector<uint8_t>>>& sections) {
  auto align = [](size_t v) { return (v + 15) / 16 * 16; };
  Blob out(16 + sections.size() * 24, 0);
  std::memcpy(out.data(), "VGF1", 4);
  set_u32(out, 4, 1);
  set_u32(out, 8, static_cast<uint32_t>(sections.size()));
  for (size_t i = 0; i < sections.size(); ++i) {
    out.resize(align(out.size()), 0);
    set_u32(out, 16 + i * 24, static_cast<uint32_t>(sections[i].first));
    set_u64(out, 16 + i * 24 + 8, out.size());
    set_u64(out, 16 + i * 24 + 16, sections[i].second.size());
    out.insert(out.end(), sections[i].second.begin(), sections[i].second.end());
  }
  return out;
}

Blob encode_ok(const VgfFile& f) {
  Result<Blob> b = encode_vgf(f);
  EXPECT_TRUE(b.is_ok()) << b.status().message();
  return b.is_ok() ? *b : Blob{};
}

TEST(VgfFormatTest, SampleFilePassesTheChecks) {
  const Status s = check_vgf(sample_file());
  EXPECT_TRUE(s.is_ok()) << s.message();
}

TEST(VgfFormatTest, DecodeReturnsWhatWasEncoded) {
  for (const VgfFile& f : {sample_file(), tiny_file()}) {
    const Blob blob = encode_ok(f);
    Result<VgfFile> back = decode_vgf(blob);
    ASSERT_TRUE(back.is_ok()) << back.status().message();
    EXPECT_EQ(*back, f);
    // And again: encoding is deterministic.
    EXPECT_EQ(encode_ok(*back), blob);
  }
}

TEST(VgfFormatTest, EncodedFileFollowsTheDocumentedLayout) {
  const VgfFile f = sample_file();
  const Blob b = encode_ok(f);
  ASSERT_GE(b.size(), 16u + 4 * 24);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data()), 4), "VGF1");
  EXPECT_EQ(u32_at(b, 4), 1u);
  EXPECT_EQ(u32_at(b, 8), 4u);
  EXPECT_EQ(u32_at(b, 12), 0u);
  uint64_t end = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    const size_t e = 16 + i * 24;
    EXPECT_EQ(u32_at(b, e), i + 1) << "sections are written in kind order";
    EXPECT_EQ(u64_at(b, e + 8) % 16, 0u);
    EXPECT_GE(u64_at(b, e + 8), std::max<uint64_t>(end, 16 + 4 * 24));
    end = u64_at(b, e + 8) + u64_at(b, e + 16);
  }
  EXPECT_EQ(end, b.size()) << "the file ends with the constant section";
  EXPECT_EQ(section_bytes(b, SectionKind::kConstants), f.constants);
}

TEST(VgfFormatTest, DecodesFromAnUnalignedBuffer) {
  const Blob b = encode_ok(sample_file());
  std::vector<uint8_t> shifted(b.size() + 3);
  std::memcpy(shifted.data() + 3, b.data(), b.size());
  Result<VgfFile> f = decode_vgf(std::span<const uint8_t>(shifted).subspan(3));
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(*f, sample_file());
}

TEST(VgfFormatTest, RefusesEveryTruncation) {
  const Blob b = encode_ok(sample_file());
  for (size_t n = 0; n < b.size(); ++n) {
    Result<VgfFile> f = decode_vgf(std::span<const uint8_t>(b.data(), n));
    ASSERT_FALSE(f.is_ok()) << "a file cut to " << n << " of " << b.size() << " bytes was accepted";
    EXPECT_EQ(f.status().code(), StatusCode::kDataLoss) << n;
    EXPECT_TRUE(contains(f.status().message(), "failed to decode VGF: ")) << f.status().message();
  }
}

// Every byte flipped in three ways: decode either refuses the file with a
// message, or accepts a file that passes every check (and then plans without
// trouble). Whatever it does, it must not crash or read out of bounds.
TEST(VgfFormatTest, SurvivesEveryFlippedByte) {
  const Blob b = encode_ok(sample_file());
  size_t refused = 0, total = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
      Blob c = b;
      c[i] ^= mask;
      ++total;
      Result<VgfFile> f = decode_vgf(c);
      if (!f.is_ok()) {
        ++refused;
        EXPECT_FALSE(f.status().message().empty());
        EXPECT_TRUE(f.status().code() == StatusCode::kDataLoss || f.status().code() == StatusCode::kUnsupported)
            << f.status().message();
        continue;
      }
      EXPECT_TRUE(check_vgf(*f).is_ok());
      (void)plan_dispatches(*f);
      if (i < 12) ADD_FAILURE() << "a flip of header byte " << i << " was accepted";
    }
  }
  // FlatBuffers strings and float payloads may change without breaking the
  // file, but offsets, ids, sizes and enums may not.
  EXPECT_GT(refused, total / 4) << refused << " of " << total;
}

TEST(VgfFormatTest, RefusesASectionPastTheEnd) {
  Blob b = encode_ok(sample_file());
  set_u64(b, entry_of(b, SectionKind::kResources) + 8, (b.size() + 16) / 16 * 16);
  Result<VgfFile> f = decode_vgf(b);
  ASSERT_FALSE(f.is_ok());
  EXPECT_EQ(f.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(contains(f.status().message(), "section 'resources'")) << f.status().message();
  EXPECT_TRUE(contains(f.status().message(), "extends past the end of the file")) << f.status().message();
}

TEST(VgfFormatTest, RefusesASizePastTheEnd) {
  Blob b = encode_ok(sample_file());
  set_u64(b, entry_of(b, SectionKind::kConstants) + 16, ~uint64_t{0} - 8);
  Result<VgfFile> f = decode_vgf(b);
  ASSERT_FALSE(f.is_ok());
  EXPECT_TRUE(contains(f.status().message(), "section 'constants'")) << f.status().message();
  EXPECT_TRUE(contains(f.status().message(), "extends past the end of the file")) << f.status().message();
}

TEST(VgfFormatTest, RefusesOverlappingSections) {
  Blob b = encode_ok(sample_file());
  const uint64_t modules_at = u64_at(b, entry_of(b, SectionKind::kModules) + 8);
  set_u64(b, entry_of(b, SectionKind::kModelSequence) + 8, modules_at + 16);
  Result<VgfFile> f = decode_vgf(b);
  ASSERT_FALSE(f.is_ok());
  EXPECT_TRUE(contains(f.status().message(), "sections 'modules' and 'model sequence' overlap")) << f.status().message();
}

TEST(VgfFormatTest, RefusesASectionInsideTheHeader) {
  Blob b = encode_ok(sample_file());
  set_u64(b, entry_of(b, SectionKind::kModules) + 8, 16);
  Result<VgfFile> f = decode_vgf(b);
  ASSERT_FALSE(f.is_ok());
  EXPECT_TRUE(contains(f.status().message(), "inside the header")) << f.status().message();
}

TEST(VgfFormatTest, RefusesBadHeaders) {
  const Blob good = encode_ok(sample_file());
  struct Case {
    size_t at;
    uint32_t value;
    std::string message;
    StatusCode code;
  };
  const std::vector<Case> cases = {
      {0, 0x31464756u ^ 0x20u, "no VGF1 magic", StatusCode::kDataLoss},
      {4, 2, "container version 2 is newer than this reader's (1)", StatusCode::kUnsupported},
      {4, 0, "version 0", StatusCode::kDataLoss},
      {8, 3, "header lists 3 sections", StatusCode::kDataLoss},
      {16, 9, "section table entry 0 has unknown kind 9", StatusCode::kDataLoss},
      {16 + 24, 1, "section 'modules' appears twice", StatusCode::kDataLoss},
  };
  for (const Case& c : cases) {
    Blob b = good;
    set_u32(b, c.at, c.value);
    Result<VgfFile> f = decode_vgf(b);
    ASSERT_FALSE(f.is_ok()) << c.message;
    EXPECT_EQ(f.status().code(), c.code) << f.status().message();
    EXPECT_TRUE(contains(f.status().message(), c.message)) << f.status().message();
  }
}

TEST(VgfFormatTest, RefusesAConstantRangeOutsideTheConstantSection) {
  Blob b = encode_ok(sample_file());
  // The bias lives at [16, 28): a 20-byte constant section cuts it.
  set_u64(b, entry_of(b, SectionKind::kConstants) + 16, 20);
  Result<VgfFile> f = decode_vgf(b);
  ASSERT_FALSE(f.is_ok());
  EXPECT_EQ(f.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(contains(f.status().message(), "resource 1 ('bias') constant range [16, +12) lies outside the constant "
                                             "section (20 bytes)"))
      << f.status().message();
}

TEST(VgfFormatTest, RefusesResourceIdsOutOfRange) {
  // The sample's modules and sequence over the tiny file's two resources.
  const Blob sample = encode_ok(sample_file());
  const Blob tiny = encode_ok(tiny_file());
  const Blob mixed = assemble({{SectionKind::kModules, section_bytes(sample, SectionKind::kModules)},
                               {SectionKind::kModelSequence, section_bytes(tiny, SectionKind::kModelSequence)},
                               {SectionKind::kResources, section_bytes(tiny, SectionKind::kResources)},
                               {SectionKind::kConstants, section_bytes(sample, SectionKind::kConstants)}});
  Result<VgfFile> f = decode_vgf(mixed);
  ASSERT_FALSE(f.is_ok());
  EXPECT_TRUE(contains(f.status().message(), "module 0 ('graph_0') operator 0 (add 'node') names resource 2, but there "
                                             "are only 2"))
      << f.status().message();

  VgfFile bad = tiny_file();
  bad.modules[0].ops[0].inputs = {7};
  Result<Blob> refused = encode_vgf(bad);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_TRUE(contains(refused.status().message(), "names resource 7, but there are only 2")) << refused.status().message();
}

TEST(VgfFormatTest, AssembledSectionsOfOneFileDecode) {
  const Blob b = encode_ok(sample_file());
  const Blob again = assemble({{SectionKind::kConstants, section_bytes(b, SectionKind::kConstants)},
                               {SectionKind::kResources, section_bytes(b, SectionKind::kResources)},
                               {SectionKind::kModules, section_bytes(b, SectionKind::kModules)},
                               {SectionKind::kModelSequence, section_bytes(b, SectionKind::kModelSequence)}});
  Result<VgfFile> f = decode_vgf(again);
  ASSERT_TRUE(f.is_ok()) << f.status().message();
  EXPECT_EQ(*f, sample_file());
}

TEST(VgfFormatTest, CheckRefusesBrokenDataFlowAndShapes) {
  struct Case {
    std::string what;
    void (*mutate)(VgfFile&);
    std::string message;
  };
  const std::vector<Case> cases = {
      {"read before write", [](VgfFile& f) { std::swap(f.modules[0].ops[1], f.modules[0].ops[2]); }, "before anything writes it"},
      {"output never written", [](VgfFile& f) { f.segments.pop_back(); }, "model output resource 5 ('y') is never written"},
      {"bad strides", [](VgfFile& f) { f.resources[4].strides = {2}; }, "strides [2] that are not the dense strides [1]"},
      {"broadcast mismatch",
       [](VgfFile& f) {
         f.resources[1].shape = {1, 1, 1, 2};
         f.resources[1].strides = dense_strides({1, 1, 1, 2});
         f.resources[1].constant_size = 8;
       },
       "operands [1,2,2,3] and [1,1,1,2] do not broadcast"},
      {"alias of an input", [](VgfFile& f) { f.resources[0].alias_group = 0; }, "cannot be in an alias group"},
      {"two roots in a group", [](VgfFile& f) { f.resources[4].alias_group = 0; }, "which another operator already wrote"},
      {"constant not aligned", [](VgfFile& f) { f.resources[1].constant_offset = 4; }, "not a multiple of 16"},
      {"wrong constant size", [](VgfFile& f) { f.resources[1].constant_size = 16; }, "has 16 constant bytes, its shape needs 12"},
      {"bad dispatch", [](VgfFile& f) { f.segments[1].dispatch = {0, 1, 1}; }, "dispatches 0 workgroups"},
      {"not SPIR-V", [](VgfFile& f) { f.modules[1].spirv[0] = 0; }, "does not hold SPIR-V"},
      {"input not listed", [](VgfFile& f) { f.inputs.clear(); }, "is input but not in the model inputs"},
      {"segment module type", [](VgfFile& f) { f.segments[1].module = 0; }, "differ in type"},
      {"rank above 6",
       [](VgfFile& f) {
         f.resources[4].shape = {1, 1, 1, 1, 1, 1, 12};
         f.resources[4].strides = dense_strides(f.resources[4].shape);
       },
       "rank 7"},
  };
  for (const Case& c : cases) {
    VgfFile f = sample_file();
    c.mutate(f);
    const Status s = check_vgf(f);
    ASSERT_FALSE(s.is_ok()) << c.what;
    EXPECT_TRUE(contains(s.message(), c.message)) << c.what << ": " << s.message();
  }
}

TEST(VgfFormatTest, CheckRefusesOperatorsWithWrongShapes) {
  VgfFile f = tiny_file();
  f.resources.push_back(resource(ResourceKind::kConstant, {2, 2}));
  f.resources.back().constant_size = 16;
  f.constants.assign(16, 0);
  // conv2d over a rank-1 input.
  f.modules[0].ops[0] = op(OpCode::kConv2d, {0, 2, 2}, 1, ConvAttr{{0, 0, 0, 0}, {1, 1}, {1, 1}});
  Status s = check_vgf(f);
  ASSERT_FALSE(s.is_ok());
  EXPECT_TRUE(contains(s.message(), "expects rank-4 input, weight and output")) << s.message();
  // A slice that reads past its input.
  f.modules[0].ops[0] = op(OpCode::kSlice, {0}, 1, SliceAttr{{1}, {4}, {1}});
  s = check_vgf(f);
  ASSERT_FALSE(s.is_ok());
  EXPECT_TRUE(contains(s.message(), "read outside input [4]")) << s.message();
  // A transpose whose perms are not a permutation.
  f.modules[0].ops[0] = op(OpCode::kTranspose, {0}, 1, TransposeAttr{{1}});
  s = check_vgf(f);
  ASSERT_FALSE(s.is_ok());
  EXPECT_TRUE(contains(s.message(), "perms do not permute")) << s.message();
  // The right attribute kind is required.
  f.modules[0].ops[0] = op(OpCode::kClamp, {0}, 1);
  s = check_vgf(f);
  ASSERT_FALSE(s.is_ok());
  EXPECT_TRUE(contains(s.message(), "needs a clamp attribute")) << s.message();
}

// The bytes of an input a fuzzer found (test/data/crafted/, docs/reliability.md).
std::vector<uint8_t> crafted_file(const std::string& name) {
  std::ifstream f(std::filesystem::path(HETSCHED_SOURCE_DIR) / "test/data/crafted" / name, std::ios::binary);
  EXPECT_TRUE(f) << name;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// vgf_file_fuzz: an int64 vector (a resource's shape) at an address 4 mod 8,
// which FlatBuffers 2.0's verifier accepts; reading it element by element was
// a misaligned load (UBSan, so this case fails under scripts/asan.sh before
// the fix). Decoding now copies it bytewise and reaches the file's checks.
TEST(VgfFormatTest, CraftedMisalignedVectorIsReadWithoutMisalignedLoads) {
  const std::vector<uint8_t> bytes = crafted_file("vgf_misaligned_int64_vector.vgf");
  Result<VgfFile> f = decode_vgf(bytes);
  ASSERT_FALSE(f.is_ok());
  EXPECT_EQ(f.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(f.status().message().rfind("failed to decode VGF: resource 8 has strides [", 0), 0u) << f.status().message();
  EXPECT_NE(f.status().message().find("that are not the dense strides [10,1] of its shape [256,10]"), std::string::npos)
      << f.status().message();
}

// An operator whose union type says ConvAttr but that stores no ConvAttr:
// FlatBuffers' verifier accepts it (a union's table may be null), and the
// decoder read the missing table through a null pointer. Written next to
// the crafted files so the fuzz corpus and this test share it.
TEST(VgfFormatTest, UnionTypeWithoutItsTableIsRefused) {
  const Blob good = encode_ok(sample_file());
  flatbuffers::FlatBufferBuilder fbb;
  const std::vector<uint32_t> in{0, 1}, out{2};
  auto op = fb::CreateOperatorDirect(fbb, fb::OpCode::Conv2d, fb::OpAttr::ConvAttr, 0, &in, &out, "conv");
  std::vector<flatbuffers::Offset<fb::Operator>> ops{op};
  auto module = fb::CreateModuleDirect(fbb, fb::ModuleType::Graph, "graph", &ops);
  std::vector<flatbuffers::Offset<fb::Module>> modules{module};
  fbb.Finish(fb::CreateModuleTableDirect(fbb, &modules));
  const Blob crafted = assemble({{SectionKind::kConstants, section_bytes(good, SectionKind::kConstants)},
                                 {SectionKind::kResources, section_bytes(good, SectionKind::kResources)},
                                 {SectionKind::kModules, {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()}},
                                 {SectionKind::kModelSequence, section_bytes(good, SectionKind::kModelSequence)}});
  const std::vector<uint8_t> committed = crafted_file("vgf_union_type_without_table.vgf");
  EXPECT_EQ(committed, crafted) << "test/data/crafted/vgf_union_type_without_table.vgf differs from what this test builds";
  Result<VgfFile> f = decode_vgf(crafted);
  ASSERT_FALSE(f.is_ok());
  EXPECT_EQ(f.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(f.status().message(), "failed to decode VGF: module 0 operator 0 has attribute type 1 but no attribute");
}

}  // namespace
}  // namespace hetsched::vgf
