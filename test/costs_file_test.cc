// The costs file (profile/costs_file.h): format → parse keeps every number,
// and every mistake is one line naming the file, the line, the key path and
// what would have been accepted. Also the profile key that names the file,
// partition.costs, and how its relative path resolves.
#include "profile/costs_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "profile/profile.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

// A complete file, one entry per line, so a test can name the line it breaks.
std::vector<std::string> valid_lines() {
  return {
      "version: 1",                                     // 1
      "source: \"test machine\"",                       // 2
      "delegates:",                                     // 3
      "  cpu:",                                         // 4
      "    dispatch_us: 3.1",                           // 5
      "    island_us: 5.2",                             // 6
      "    classes:",                                   // 7
      "      conv: {gflops: 400, gbps: 40}",            // 8
      "      matmul: {gflops: 300, gbps: 40}",          // 9
      "      elementwise: {gflops: 10, gbps: 20}",      // 10
      "      reduce: {gflops: 5, gbps: 10}",            // 11
      "      movement: {gflops: 1000, gbps: 10}",       // 12
      "      free: {gflops: 1e6, gbps: 1e6}",           // 13
      "handoffs:",                                      // 14
      "  upload: {latency_us: 10, gbps: 20}",           // 15
      "  readback: {latency_us: 12, gbps: 15}",         // 16
      "  device_copy: {latency_us: 8, gbps: 100}",      // 17
      "  layout_conversion: {latency_us: 9, gbps: 50}", // 18
      "  alias: {latency_us: 0, gbps: 1e9}",            // 19
  };
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// The valid file with line `n` (1-based) replaced; "" drops the line.
std::string with_line(int n, const std::string& text) {
  std::vector<std::string> lines = valid_lines();
  if (text.empty()) {
    lines.erase(lines.begin() + (n - 1));
  } else {
    lines[static_cast<size_t>(n - 1)] = text;
  }
  return join(lines);
}

std::string parse_error(const std::string& text) {
  Result<CostTable> r = parse_costs(text, "x.yaml");
  if (r.is_ok()) return "<loaded>";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().message();
  return r.status().message();
}

// Every figure of a table of one delegate, in a fixed order, for comparisons.
std::vector<double> figures(const CostTable& t) {
  std::vector<double> v;
  for (const auto& [name, c] : t.delegates) {
    v.push_back(c.dispatch_us);
    v.push_back(c.island_us);
    v.push_back(c.edge_gbps);
    for (OpClass k : kAllOpClasses) {
      v.push_back(c.rate(k).gflops);
      v.push_back(c.rate(k).gbps);
    }
  }
  for (CutKind k : kAllCutKinds) {
    v.push_back(t.transfer(k).latency_us);
    v.push_back(t.transfer(k).gbps);
  }
  return v;
}

TEST(CostsFileTest, ValidFileLoadsEveryFigure) {
  bool has_handoffs = false;
  Result<CostTable> r = parse_costs(join(valid_lines()), "x.yaml", &has_handoffs);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_TRUE(has_handoffs);
  EXPECT_EQ(r->source, "test machine");
  ASSERT_EQ(r->delegates.size(), 1u);
  const DelegateCosts& cpu = r->delegates.at("cpu");
  EXPECT_EQ(cpu.dispatch_us, 3.1);
  EXPECT_EQ(cpu.island_us, 5.2);
  EXPECT_EQ(cpu.rate(OpClass::kConv).gflops, 400);
  EXPECT_EQ(cpu.rate(OpClass::kMatMul).gflops, 300);
  EXPECT_EQ(cpu.rate(OpClass::kReduce).gbps, 10);
  EXPECT_EQ(cpu.rate(OpClass::kFree).gbps, 1e6);
  EXPECT_EQ(r->transfer(CutKind::kReadback).latency_us, 12);
  EXPECT_EQ(r->transfer(CutKind::kDeviceCopy).gbps, 100);
  EXPECT_EQ(r->transfer(CutKind::kAlias).gbps, 1e9);
}

TEST(CostsFileTest, FormatThenParseGivesTheSameNumbers) {
  CostTable t;
  t.source = "calibrated on \"host\\cpu\", llvmpipe, 2025-01-01";
  // Numbers with no short decimal form, and extremes.
  const double odd[] = {1.0 / 3, 2.0 / 7, 1e-7, 123456.789, 1e9, 0.1, 3.0000000000000004};
  int i = 0;
  for (const char* name : {"cpu", "vulkan", "vgf"}) {
    DelegateCosts& c = t.delegates[name];
    c.dispatch_us = odd[i++ % 7] * 10;
    c.island_us = odd[i++ % 7] * 100;
    c.edge_gbps = name == std::string("cpu") ? odd[i++ % 7] * 10 : 0;  // 0 is written as no key
    for (OpClass k : kAllOpClasses) c.rate(k) = {odd[i++ % 7] * 1000, odd[i++ % 7] * 50};
  }
  for (CutKind k : kAllCutKinds) t.transfer(k) = {odd[i++ % 7] * 20, odd[i++ % 7] * 30};
  t.transfer(CutKind::kAlias) = {0, 1e9};

  const std::string text = format_costs_yaml(t, "first line\n\nthird line");
  EXPECT_EQ(text.rfind("# first line\n#\n# third line\nversion: 1\n", 0), 0u) << text;
  Result<CostTable> back = parse_costs(text, "round.yaml");
  ASSERT_TRUE(back.is_ok()) << back.status().message() << "\n" << text;
  EXPECT_EQ(back->source, t.source);
  ASSERT_EQ(back->delegates.size(), 3u);
  EXPECT_EQ(figures(*back), figures(t)) << text;
}

TEST(CostsFileTest, AbsentSectionsStayAbsent) {
  bool has_handoffs = true;
  Result<CostTable> r = parse_costs("version: 1\n", "costs.yaml", &has_handoffs);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_TRUE(r->delegates.empty());  // the caller fills built-in figures
  EXPECT_FALSE(has_handoffs);
  EXPECT_EQ(r->source, "calibrated: costs.yaml");
}

TEST(CostsFileTest, LoadNamesTheFileAndSaysWhenItIsMissing) {
  testing::TempDir dir;
  testing::write_file(dir / "c.yaml", with_line(5, "    dispatch_us: -1"));
  Result<CostTable> bad = load_costs((dir / "c.yaml").string());
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message(), (dir / "c.yaml").string() +
                                        ":5: delegates.cpu.dispatch_us: '-1' must be >= 0 (accepted: a number >= 0 "
                                        "(microseconds))");

  Result<CostTable> missing = load_costs((dir / "none.yaml").string());
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "failed to read costs file '" + (dir / "none.yaml").string() + "': No such file or directory");

  testing::write_file(dir / "ok.yaml", join(valid_lines()));
  Result<CostTable> ok = load_costs((dir / "ok.yaml").string());
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(ok->source, "test machine");  // as written: load_costs prefixes nothing
}

TEST(CostsFileTest, VersionIsRequiredAndMustBeOne) {
  EXPECT_EQ(parse_error(with_line(1, "")),
            "x.yaml:1: missing key version (accepted: version, source, delegates, handoffs)");
  EXPECT_EQ(parse_error(with_line(1, "version: 2")), "x.yaml:1: version: '2' is not a supported version (accepted: 1)");
  EXPECT_EQ(parse_error(with_line(1, "version: one")), "x.yaml:1: version: 'one' is not an integer (accepted: 1)");
}

TEST(CostsFileTest, UnknownKeysNameWhatIsAccepted) {
  EXPECT_EQ(parse_error(with_line(2, "sauce: x")),
            "x.yaml:2: sauce: unknown key (accepted: version, source, delegates, handoffs)");
  EXPECT_EQ(parse_error(with_line(4, "  gpu:")), "x.yaml:4: delegates.gpu: unknown key (accepted: cpu, vulkan, vgf)");
  EXPECT_EQ(parse_error(with_line(6, "    islands_us: 5")),
            "x.yaml:6: delegates.cpu.islands_us: unknown key (accepted: dispatch_us, island_us, edge_gbps, classes, measured_us)");
  EXPECT_EQ(parse_error(with_line(8, "      conv2d: {gflops: 400, gbps: 40}")),
            "x.yaml:8: delegates.cpu.classes.conv2d: unknown key (accepted: conv, matmul, elementwise, reduce, "
            "movement, free)");
  EXPECT_EQ(parse_error(with_line(8, "      conv: {gflops: 400, gbps: 40, tops: 1}")),
            "x.yaml:8: delegates.cpu.classes.conv.tops: unknown key (accepted: gflops, gbps)");
  EXPECT_EQ(parse_error(with_line(17, "  copy: {latency_us: 8, gbps: 100}")),
            "x.yaml:17: handoffs.copy: unknown key (accepted: upload, readback, device_copy, layout_conversion, "
            "alias)");
  EXPECT_EQ(parse_error(with_line(15, "  upload: {latency: 10, gbps: 20}")),
            "x.yaml:15: handoffs.upload.latency: unknown key (accepted: latency_us, gbps)");
}

TEST(CostsFileTest, SectionsPresentMustBeComplete) {
  EXPECT_EQ(parse_error(with_line(5, "")),
            "x.yaml:4: delegates.cpu: missing key dispatch_us (accepted: dispatch_us, island_us, edge_gbps, classes, measured_us)");
  EXPECT_EQ(parse_error(with_line(13, "")),
            "x.yaml:7: delegates.cpu.classes: missing key free (accepted: conv, matmul, elementwise, reduce, "
            "movement, free)");
  EXPECT_EQ(parse_error(with_line(9, "      matmul: {gflops: 300}")),
            "x.yaml:9: delegates.cpu.classes.matmul: missing key gbps (accepted: gflops, gbps)");
  EXPECT_EQ(parse_error(with_line(19, "")),
            "x.yaml:14: handoffs: missing key alias (accepted: upload, readback, device_copy, layout_conversion, "
            "alias)");
  EXPECT_EQ(parse_error(with_line(16, "  readback: {gbps: 15}")),
            "x.yaml:16: handoffs.readback: missing key latency_us (accepted: latency_us, gbps)");
  EXPECT_EQ(parse_error(with_line(3, "delegates:\n  vulkan:")),
            "x.yaml:4: delegates.vulkan: expected a map, got nothing (accepted: dispatch_us, island_us, edge_gbps, classes, measured_us)");
}

TEST(CostsFileTest, WrongTypesAreRefused) {
  EXPECT_EQ(parse_error(with_line(8, "      conv: {gflops: fast, gbps: 40}")),
            "x.yaml:8: delegates.cpu.classes.conv.gflops: 'fast' is not a number (accepted: a number > 0 (GFLOP/s))");
  EXPECT_EQ(parse_error(with_line(8, "      conv: {gflops: \"400\", gbps: 40}")),
            "x.yaml:8: delegates.cpu.classes.conv.gflops: expected a number, got the string '400' (accepted: a "
            "number > 0 (GFLOP/s))");
  EXPECT_EQ(parse_error(with_line(8, "      conv: [400, 40]")),
            "x.yaml:8: delegates.cpu.classes.conv: expected a map, got a list (accepted: gflops, gbps)");
  EXPECT_EQ(parse_error(with_line(6, "    island_us: [5]")),
            "x.yaml:6: delegates.cpu.island_us: expected a number, got a list (accepted: a number >= 0 "
            "(microseconds))");
  EXPECT_EQ(parse_error(with_line(2, "source: {a: 1}")),
            "x.yaml:2: source: expected a string, got a map (accepted: free text: where the figures come from)");
}

TEST(CostsFileTest, RatesMustBePositiveAndFinite) {
  EXPECT_EQ(parse_error(with_line(10, "      elementwise: {gflops: 10, gbps: 0}")),
            "x.yaml:10: delegates.cpu.classes.elementwise.gbps: '0' must be > 0 (accepted: a number > 0 (GB/s of "
            "10^9 bytes))");
  EXPECT_EQ(parse_error(with_line(11, "      reduce: {gflops: -5, gbps: 10}")),
            "x.yaml:11: delegates.cpu.classes.reduce.gflops: '-5' must be > 0 (accepted: a number > 0 (GFLOP/s))");
  EXPECT_EQ(parse_error(with_line(12, "      movement: {gflops: .inf, gbps: 10}")),
            "x.yaml:12: delegates.cpu.classes.movement.gflops: '.inf' is not a finite number (accepted: a number > 0 "
            "(GFLOP/s))");
  EXPECT_EQ(parse_error(with_line(12, "      movement: {gflops: 1000, gbps: .NaN}")),
            "x.yaml:12: delegates.cpu.classes.movement.gbps: '.NaN' is not a finite number (accepted: a number > 0 "
            "(GB/s of 10^9 bytes))");
  EXPECT_EQ(parse_error(with_line(18, "  layout_conversion: {latency_us: 1e999, gbps: 50}")),
            "x.yaml:18: handoffs.layout_conversion.latency_us: '1e999' is out of range (accepted: a number >= 0 "
            "(microseconds))");
  EXPECT_EQ(parse_error(with_line(15, "  upload: {latency_us: -0.5, gbps: 20}")),
            "x.yaml:15: handoffs.upload.latency_us: '-0.5' must be >= 0 (accepted: a number >= 0 (microseconds))");
  EXPECT_EQ(parse_error(with_line(6, "    island_us: 5.2\n    edge_gbps: -1")),
            "x.yaml:7: delegates.cpu.edge_gbps: '-1' must be >= 0 (accepted: a number >= 0 (GB/s of 10^9 bytes; 0: "
            "the delegate copies nothing at island edges))");
  EXPECT_EQ(parse_error(with_line(19, "  alias: {latency_us: 0, gbps: 0}")),
            "x.yaml:19: handoffs.alias.gbps: '0' must be > 0 (accepted: a number > 0 (GB/s of 10^9 bytes))");
}

TEST(CostsFileTest, EmptyAndBrokenFiles) {
  EXPECT_EQ(parse_error(""), "x.yaml:1: the costs file is empty (accepted: version, source, delegates, handoffs)");
  EXPECT_EQ(parse_error("- 1\n"),
            "x.yaml:1: expected a map, got a list (accepted: version, source, delegates, handoffs)");
  EXPECT_EQ(parse_error("version: 1\ndelegates: {cpu: \n"), "x.yaml:3: invalid YAML: end of map flow not found");
}

// partition.costs: a path, resolved against the profile's folder when the
// profile came from a file; the costs file itself is not read at load.
TEST(PartitionCostsKeyTest, RelativePathResolvesAgainstTheProfilesFolder) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "configs");
  testing::write_file(dir / "configs" / "p.yaml", "partition:\n  costs: machine.costs.yaml\n");
  Result<Profile> p = load_profile((dir / "configs" / "p.yaml").string());
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->partition.costs, (dir / "configs" / "machine.costs.yaml").string());
  EXPECT_FALSE(std::filesystem::exists(p->partition.costs));  // not read, so it need not exist yet

  testing::write_file(dir / "configs" / "up.yaml", "partition: {costs: ../shared/c.yaml}\n");
  Result<Profile> up = load_profile((dir / "configs" / "up.yaml").string());
  ASSERT_TRUE(up.is_ok()) << up.status().message();
  EXPECT_EQ(up->partition.costs, (dir / "configs" / ".." / "shared" / "c.yaml").string());  // joined, not normalised
}

TEST(PartitionCostsKeyTest, AbsolutePathAndTextProfilesKeepThePathAsWritten) {
  testing::TempDir dir;
  testing::write_file(dir / "p.yaml", "partition: {costs: /opt/costs/h100.yaml}\n");
  Result<Profile> p = load_profile((dir / "p.yaml").string());
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->partition.costs, "/opt/costs/h100.yaml");

  Result<Profile> text = parse_profile("partition: {costs: machine.costs.yaml}\n", "x.yaml");
  ASSERT_TRUE(text.is_ok()) << text.status().message();
  EXPECT_EQ(text->partition.costs, "machine.costs.yaml");
  EXPECT_EQ(default_profile().partition.costs, "");
}

TEST(PartitionCostsKeyTest, EmptyOrNonStringPathIsRefused) {
  Result<Profile> empty = parse_profile("partition:\n  costs: \"\"\n", "x.yaml");
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().message(),
            "x.yaml:2: partition.costs: must not be empty (accepted: a costs file path (hetsched calibrate -o), "
            "relative to the profile)");
  Result<Profile> list = parse_profile("partition:\n  costs: [a.yaml]\n", "x.yaml");
  ASSERT_FALSE(list.is_ok());
  EXPECT_EQ(list.status().message(),
            "x.yaml:2: partition.costs: expected a string, got a list (accepted: a costs file path (hetsched "
            "calibrate -o), relative to the profile)");
}

}  // namespace
}  // namespace hetsched
