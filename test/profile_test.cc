#include "profile/profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "scheduler/delegate_set.h"
#include "test/test_util.h"

namespace hetsched {
namespace {

using testing::source_path;
using Order = std::vector<std::string>;

// Joins lines with '\n', so a test's line numbers can be read off its list.
std::string yaml(std::initializer_list<std::string_view> lines) {
  std::string out;
  for (std::string_view l : lines) {
    out += l;
    out += '\n';
  }
  return out;
}

Profile parse_ok(const std::string& text) {
  Result<Profile> r = parse_profile(text, "x.yaml");
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? *r : Profile{};
}

// The message of a profile that must not load, from a file called x.yaml.
std::string parse_error(const std::string& text) {
  Result<Profile> r = parse_profile(text, "x.yaml");
  if (r.is_ok()) return "<loaded>";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().message();
  return r.status().message();
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Profile load_ok(const std::string& relative) {
  Result<Profile> r = load_profile(source_path(relative).string());
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? *r : Profile{};
}

// A profile with every delegate enabled and the given policy, built by hand.
Profile all_enabled(const std::string& prefer, Order order = {}) {
  Profile p;
  for (const char* name : {"cpu", "vulkan", "vgf"}) p.delegates[name].enabled = true;
  p.partition.prefer = prefer;
  p.partition.order = std::move(order);
  return p;
}

// ---- shipped configs ----

TEST(ProfileConfigTest, DefaultYamlLoadsEveryDefault) {
  std::string path = source_path("configs/default.yaml").string();
  Profile p = load_ok("configs/default.yaml");
  EXPECT_EQ(p.name, "default");
  EXPECT_EQ(p.source, path);
  EXPECT_TRUE(p.delegate_enabled("cpu"));
  EXPECT_FALSE(p.delegate_enabled("vulkan"));
  EXPECT_FALSE(p.delegate_enabled("vgf"));
  EXPECT_EQ(p.delegates.at("cpu").engine, "xnnpack");
  EXPECT_EQ(p.delegates.at("cpu").threads, 0);
  for (const char* gpu : {"vulkan", "vgf"}) {
    const DelegateProfile& d = p.delegates.at(gpu);
    EXPECT_EQ(d.device, "auto") << gpu;
    EXPECT_EQ(d.shared_gpu.token, "default") << gpu;
    EXPECT_EQ(d.shared_gpu.group, 0) << gpu;
    EXPECT_EQ(d.shared_gpu.mode, SharedContextMode::kLookupOrCreate) << gpu;
  }
  EXPECT_EQ(p.partition.prefer, "auto");
  EXPECT_TRUE(p.partition.order.empty());
  EXPECT_EQ(p.partition.min_partition_size, 1);
  EXPECT_FALSE(p.partition.retry_pruned);
  EXPECT_TRUE(p.partition.pins.empty());
  EXPECT_EQ(p.partition.fallback, "cpu");
  EXPECT_EQ(p.sync, SyncMode::kTimeline);
  EXPECT_EQ(p.max_in_flight, 1);
  EXPECT_EQ(p.log_level, "warn");
  EXPECT_EQ(p.trace_path, "");
  EXPECT_EQ(p.enabled_delegates_in_order(), Order({"cpu"}));
}

TEST(ProfileConfigTest, VulkanYamlPutsVulkanBeforeCpu) {
  Profile p = load_ok("configs/vulkan.yaml");
  EXPECT_EQ(p.name, "vulkan");
  EXPECT_TRUE(p.delegate_enabled("vulkan"));
  EXPECT_TRUE(p.delegate_enabled("cpu"));
  EXPECT_FALSE(p.delegate_enabled("vgf"));
  const DelegateProfile& vk = p.delegates.at("vulkan");
  EXPECT_EQ(vk.device, "auto");
  EXPECT_EQ(vk.shared_gpu.token, "hetsched");
  EXPECT_EQ(vk.shared_gpu.group, 0);
  EXPECT_EQ(vk.shared_gpu.mode, SharedContextMode::kLookupOrCreate);
  EXPECT_EQ(p.partition.prefer, "vulkan_first");
  EXPECT_EQ(p.partition.fallback, "cpu");
  EXPECT_EQ(p.sync, SyncMode::kTimeline);
  EXPECT_EQ(p.enabled_delegates_in_order(), Order({"vulkan", "cpu"}));
}

TEST(ProfileConfigTest, MixedGpuYamlMatchesRfcExample) {
  Profile p = load_ok("configs/mixed_gpu.yaml");
  EXPECT_EQ(p.name, "mixed-gpu");
  for (const char* gpu : {"vgf", "vulkan"}) {
    ASSERT_TRUE(p.delegate_enabled(gpu)) << gpu;
    const DelegateProfile& d = p.delegates.at(gpu);
    EXPECT_EQ(d.device, "auto") << gpu;
    EXPECT_EQ(d.shared_gpu.token, "vgf_vk_unified_e2e") << gpu;
    EXPECT_EQ(d.shared_gpu.group, 7) << gpu;
    EXPECT_EQ(d.shared_gpu.mode, SharedContextMode::kLookupOrCreate) << gpu;
  }
  ASSERT_TRUE(p.delegate_enabled("cpu"));
  EXPECT_EQ(p.delegates.at("cpu").engine, "xnnpack");
  EXPECT_EQ(p.delegates.at("cpu").threads, 2);
  EXPECT_EQ(p.partition.prefer, "vgf_first");
  EXPECT_EQ(p.partition.min_partition_size, 1);
  EXPECT_TRUE(p.partition.retry_pruned);
  EXPECT_TRUE(p.partition.pins.empty());
  EXPECT_EQ(p.sync, SyncMode::kTimeline);
  EXPECT_EQ(p.max_in_flight, 1);
  EXPECT_EQ(p.enabled_delegates_in_order(), Order({"vgf", "vulkan", "cpu"}));
}

TEST(ProfileConfigTest, CpuPortableYamlSelectsPortableEngine) {
  Profile p = load_ok("configs/cpu_portable.yaml");
  EXPECT_EQ(p.name, "cpu-portable");
  EXPECT_EQ(p.delegates.at("cpu").engine, "portable");
  EXPECT_EQ(p.delegates.at("cpu").threads, 0);
  EXPECT_EQ(p.enabled_delegates_in_order(), Order({"cpu"}));
}

TEST(ProfileConfigTest, EveryShippedConfigLoads) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("configs"))) {
    if (entry.path().extension() != ".yaml") continue;
    Result<Profile> r = load_profile(entry.path().string());
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    ++count;
  }
  EXPECT_GE(count, 4);
}

// The error CLI.md shows, produced from the shipped file with one typo.
TEST(ProfileConfigTest, MixedGpuTypoGivesTheDocumentedError) {
  std::string text = read_text(source_path("configs/mixed_gpu.yaml"));
  size_t at = text.find("prefer: vgf_first");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 17, "prefer: vfg_first");
  Result<Profile> r = parse_profile(text, "configs/mixed_gpu.yaml");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(),
            "configs/mixed_gpu.yaml:16: partition.prefer: 'vfg_first' is not a policy "
            "(accepted: auto, vgf_first, vulkan_first, cpu_first, or a list of delegates)");
}

// ---- defaults and values ----

TEST(ProfileTest, DefaultProfileIsCpuOnly) {
  Profile p = default_profile();
  EXPECT_EQ(p.name, "default");
  EXPECT_TRUE(p.delegate_enabled("cpu"));
  EXPECT_FALSE(p.delegate_enabled("vulkan"));
  EXPECT_FALSE(p.delegate_enabled("vgf"));
  EXPECT_EQ(p.delegates.at("cpu").engine, "xnnpack");
  EXPECT_EQ(p.delegates.at("cpu").threads, 0);
  EXPECT_EQ(p.partition.prefer, "auto");
  EXPECT_EQ(p.partition.min_partition_size, 1);
  EXPECT_EQ(p.partition.fallback, "cpu");
  EXPECT_EQ(p.sync, SyncMode::kTimeline);
  EXPECT_EQ(p.max_in_flight, 1);
  EXPECT_EQ(p.log_level, "warn");
  EXPECT_EQ(p.enabled_delegates_in_order(), Order({"cpu"}));
}

TEST(ProfileTest, KnownDelegateNamesAreCpuVulkanVgf) {
  EXPECT_EQ(known_delegate_names(), Order({"cpu", "vulkan", "vgf"}));
}

TEST(ProfileTest, SharedContextModeNamesRoundTrip) {
  EXPECT_EQ(shared_context_mode_name(SharedContextMode::kLookupOnly), "lookup_only");
  EXPECT_EQ(shared_context_mode_name(SharedContextMode::kLookupOrCreate), "lookup_or_create");
  EXPECT_EQ(shared_context_mode_name(SharedContextMode::kCreateOnly), "create_only");
  EXPECT_EQ(shared_context_mode_name(SharedContextMode::kDisabled), "disabled");
  EXPECT_EQ(parse_shared_context_mode("lookup_only"), SharedContextMode::kLookupOnly);
  EXPECT_EQ(parse_shared_context_mode("lookup_or_create"), SharedContextMode::kLookupOrCreate);
  EXPECT_EQ(parse_shared_context_mode("create_only"), SharedContextMode::kCreateOnly);
  EXPECT_EQ(parse_shared_context_mode("disabled"), SharedContextMode::kDisabled);
  EXPECT_EQ(parse_shared_context_mode("lookup"), std::nullopt);
}

TEST(ProfileTest, ParseRecordsSourceName) {
  Result<Profile> r = parse_profile("name: a\n", "here.yaml");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->source, "here.yaml");
  EXPECT_EQ(parse_profile("name: a\n")->source, "<string>");
}

TEST(ProfileTest, CpuIsEnabledWhenNotMentioned) {
  Profile p = parse_ok(yaml({"name: gpu", "delegates:", "  vulkan: {device: 1}"}));
  EXPECT_TRUE(p.delegate_enabled("cpu"));
  EXPECT_TRUE(p.delegate_enabled("vulkan"));
  EXPECT_FALSE(p.delegate_enabled("vgf"));
  EXPECT_EQ(p.delegates.at("vulkan").device, "1");
}

TEST(ProfileTest, EmptyDelegateBlockEnablesItWithDefaults) {
  Profile p = parse_ok(yaml({"delegates:", "  vgf:", "  vulkan: {}"}));
  EXPECT_TRUE(p.delegate_enabled("vgf"));
  EXPECT_TRUE(p.delegate_enabled("vulkan"));
  EXPECT_EQ(p.delegates.at("vgf").device, "auto");
  EXPECT_EQ(p.delegates.at("vgf").shared_gpu.token, "default");
  EXPECT_EQ(p.delegates.at("vgf").shared_gpu.mode, SharedContextMode::kLookupOrCreate);
}

TEST(ProfileTest, CpuCanBeDisabledWhenAGpuIsEnabled) {
  Profile p = parse_ok(yaml({"delegates:", "  cpu: {enabled: false}", "  vulkan: {}"}));
  EXPECT_FALSE(p.delegate_enabled("cpu"));
  EXPECT_EQ(p.enabled_delegates_in_order(), Order({"vulkan"}));
}

TEST(ProfileTest, ReadsEveryKey) {
  Profile p = parse_ok(yaml({
      "name: full",
      "delegates:",
      "  cpu: {enabled: true, engine: portable, threads: 3}",
      "  vulkan:",
      "    device: llvmpipe",
      "    shared_gpu: {token: t, group: 4, mode: create_only}",
      "  vgf: {enabled: False, device: 0, shared_gpu: {mode: disabled}}",
      "partition:",
      "  prefer: [vulkan, cpu]",
      "  min_partition_size: 3",
      "  retry_pruned: TRUE",
      "  fallback: error",
      "sync: {mode: queue_wait_idle}",
      "scheduler: {max_in_flight: 4}",
      "logging: {level: debug, trace: /tmp/t.json}",
  }));
  EXPECT_EQ(p.name, "full");
  EXPECT_EQ(p.delegates.at("cpu").engine, "portable");
  EXPECT_EQ(p.delegates.at("cpu").threads, 3);
  EXPECT_EQ(p.delegates.at("vulkan").device, "llvmpipe");
  EXPECT_EQ(p.delegates.at("vulkan").shared_gpu.token, "t");
  EXPECT_EQ(p.delegates.at("vulkan").shared_gpu.group, 4);
  EXPECT_EQ(p.delegates.at("vulkan").shared_gpu.mode, SharedContextMode::kCreateOnly);
  EXPECT_FALSE(p.delegate_enabled("vgf"));
  EXPECT_EQ(p.delegates.at("vgf").device, "0");
  EXPECT_EQ(p.delegates.at("vgf").shared_gpu.mode, SharedContextMode::kDisabled);
  EXPECT_EQ(p.partition.prefer, "list");
  EXPECT_EQ(p.partition.order, Order({"vulkan", "cpu"}));
  EXPECT_EQ(p.partition.min_partition_size, 3);
  EXPECT_TRUE(p.partition.retry_pruned);
  EXPECT_EQ(p.partition.fallback, "error");
  EXPECT_EQ(p.sync, SyncMode::kQueueWaitIdle);
  EXPECT_EQ(p.max_in_flight, 4);
  EXPECT_EQ(p.log_level, "debug");
  EXPECT_EQ(p.trace_path, "/tmp/t.json");
}

TEST(ProfileTest, EmptySectionsKeepDefaults) {
  Profile p = parse_ok(yaml({"partition:", "sync:", "scheduler: {}", "logging:"}));
  EXPECT_EQ(p.partition.prefer, "auto");
  EXPECT_EQ(p.partition.min_partition_size, 1);
  EXPECT_EQ(p.sync, SyncMode::kTimeline);
  EXPECT_EQ(p.max_in_flight, 1);
  EXPECT_EQ(p.log_level, "warn");
}

// ---- pins ----

TEST(ProfilePinTest, ReadsOpAndNodePinsInOrder) {
  Profile p = parse_ok(yaml({
      "delegates: {vulkan: {}}",
      "partition:",
      "  pin:",
      "    - {op: Softmax, delegate: cpu}",
      "    - node: conv1",
      "      delegate: vulkan",
  }));
  ASSERT_EQ(p.partition.pins.size(), 2u);
  EXPECT_EQ(p.partition.pins[0].op, "Softmax");
  EXPECT_EQ(p.partition.pins[0].node, "");
  EXPECT_EQ(p.partition.pins[0].delegate, "cpu");
  EXPECT_EQ(p.partition.pins[1].op, "");
  EXPECT_EQ(p.partition.pins[1].node, "conv1");
  EXPECT_EQ(p.partition.pins[1].delegate, "vulkan");
}

TEST(ProfilePinTest, PinToDelegateEnabledLaterInFileIsAccepted) {
  Profile p = parse_ok(yaml({"partition: {pin: [{op: Gather, delegate: vgf}]}", "delegates: {vgf: {}}"}));
  ASSERT_EQ(p.partition.pins.size(), 1u);
  EXPECT_EQ(p.partition.pins[0].delegate, "vgf");
}

TEST(ProfilePinTest, RejectsPinWithBothOpAndNode) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  pin:", "    - {op: Relu, node: r1, delegate: cpu}"})),
            "x.yaml:3: partition.pin[0]: names both op and node (accepted: exactly one of op, node)");
}

TEST(ProfilePinTest, RejectsPinWithNeitherOpNorNode) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  pin:", "    - {op: Relu, delegate: cpu}", "    - {delegate: cpu}"})),
            "x.yaml:4: partition.pin[1]: names neither op nor node (accepted: exactly one of op, node)");
}

TEST(ProfilePinTest, RejectsPinWithoutDelegate) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  pin: [{op: Relu}]"})),
            "x.yaml:2: partition.pin[0]: missing key delegate (accepted: cpu)");
}

TEST(ProfilePinTest, RejectsPinToUnknownDelegate) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  pin:", "    - op: Relu", "      delegate: gpu"})),
            "x.yaml:4: partition.pin[0].delegate: 'gpu' is not a delegate (accepted: cpu, vulkan, vgf)");
}

TEST(ProfilePinTest, RejectsPinToDisabledDelegate) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  vgf: {}", "partition:", "  pin:",
                              "    - {op: Gather, delegate: vulkan}"})),
            "x.yaml:5: partition.pin[0].delegate: 'vulkan' is not enabled in this profile (accepted: vgf, cpu)");
}

TEST(ProfilePinTest, RejectsUnknownPinKey) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  pin:", "    - {ops: Relu, delegate: cpu}"})),
            "x.yaml:3: partition.pin[0].ops: unknown key (accepted: op, node, delegate)");
}

TEST(ProfilePinTest, RejectsPinThatIsNotAList) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  pin: {op: Relu, delegate: cpu}"})),
            "x.yaml:2: partition.pin: expected a list, got a map (accepted: a list of {op: <type>, delegate: "
            "<name>} or {node: <name>, delegate: <name>})");
}

TEST(ProfilePinTest, RejectsPinItemThatIsNotAMap) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  pin:", "    - Relu"})),
            "x.yaml:3: partition.pin[0]: expected a map, got a scalar ('Relu') (accepted: op, node, delegate)");
}

TEST(ProfilePinTest, RejectsEmptyOp) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  pin: [{op: '', delegate: cpu}]"})),
            "x.yaml:2: partition.pin[0].op: must not be empty (accepted: an op type, e.g. Softmax)");
}

// ---- delegate order ----

TEST(ProfileOrderTest, VgfFirstOrdersVgfVulkanCpu) {
  EXPECT_EQ(all_enabled("vgf_first").enabled_delegates_in_order(), Order({"vgf", "vulkan", "cpu"}));
}

TEST(ProfileOrderTest, VulkanFirstOrdersVulkanVgfCpu) {
  EXPECT_EQ(all_enabled("vulkan_first").enabled_delegates_in_order(), Order({"vulkan", "vgf", "cpu"}));
}

TEST(ProfileOrderTest, CpuFirstOrdersCpuVulkanVgf) {
  EXPECT_EQ(all_enabled("cpu_first").enabled_delegates_in_order(), Order({"cpu", "vulkan", "vgf"}));
}

TEST(ProfileOrderTest, AutoOrdersLikeVgfFirst) {
  EXPECT_EQ(all_enabled("auto").enabled_delegates_in_order(), Order({"vgf", "vulkan", "cpu"}));
}

TEST(ProfileOrderTest, ListKeepsItsOrderThenAddsTheRestCpuLast) {
  EXPECT_EQ(all_enabled("list", {"vulkan"}).enabled_delegates_in_order(), Order({"vulkan", "vgf", "cpu"}));
  EXPECT_EQ(all_enabled("list", {"cpu", "vulkan"}).enabled_delegates_in_order(), Order({"cpu", "vulkan", "vgf"}));
  EXPECT_EQ(all_enabled("list", {"vgf", "cpu", "vulkan"}).enabled_delegates_in_order(),
            Order({"vgf", "cpu", "vulkan"}));
}

TEST(ProfileOrderTest, OrderSkipsDisabledDelegates) {
  Profile p = all_enabled("vulkan_first");
  p.delegates["vgf"].enabled = false;
  EXPECT_EQ(p.enabled_delegates_in_order(), Order({"vulkan", "cpu"}));
  p = all_enabled("list", {"vgf", "vulkan", "cpu"});
  p.delegates["vulkan"].enabled = false;
  p.delegates["cpu"].enabled = false;
  EXPECT_EQ(p.enabled_delegates_in_order(), Order({"vgf"}));
}

TEST(ProfileOrderTest, ParsedListPolicyOrdersAsWritten) {
  Profile p = parse_ok(yaml({"delegates: {vgf: {}, vulkan: {}}", "partition: {prefer: [cpu, vgf]}"}));
  EXPECT_EQ(p.enabled_delegates_in_order(), Order({"cpu", "vgf", "vulkan"}));
}

// ---- errors: keys and types ----

TEST(ProfileErrorTest, RejectsUnknownKeyWithAcceptedKeys) {
  EXPECT_EQ(parse_error(yaml({"name: x", "delegates:", "  cpu: {thread: 2}"})),
            "x.yaml:3: delegates.cpu.thread: unknown key (accepted: enabled, engine, threads)");
}

TEST(ProfileErrorTest, RejectsCpuKeyUnderVulkan) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  vulkan:", "    enabled: true", "    engine: xnnpack"})),
            "x.yaml:4: delegates.vulkan.engine: unknown key (accepted: enabled, device, shared_gpu, precision, storage)");
}

TEST(ProfileTest, PrecisionIsFp32UnlessSetAndReachesBothGpuDelegates) {
  Result<Profile> p = parse_profile(yaml({"delegates:", "  vulkan: {precision: fp16}", "  vgf: {}"}), "x.yaml");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->delegates.at("vulkan").precision, "fp16");
  EXPECT_EQ(p->delegates.at("vgf").precision, "fp32");
  const DelegateOptions options = delegate_options(*p, "vulkan");
  EXPECT_NE(std::find(options.begin(), options.end(), std::pair<std::string, std::string>("precision", "fp16")),
            options.end());
  Result<Profile> q = parse_profile(yaml({"delegates:", "  vgf: {precision: auto}"}), "x.yaml");
  ASSERT_TRUE(q.is_ok()) << q.status().message();
  const DelegateOptions vgf = delegate_options(*q, "vgf");
  EXPECT_NE(std::find(vgf.begin(), vgf.end(), std::pair<std::string, std::string>("precision", "auto")), vgf.end());
}

TEST(ProfileErrorTest, RejectsAPrecisionTheDelegateLacks) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  vulkan:", "    precision: bf16"})),
            "x.yaml:3: delegates.vulkan.precision: 'bf16' is not a precision (accepted: fp32, fp16, auto)");
  EXPECT_EQ(parse_error(yaml({"delegates:", "  vgf:", "    precision: half"})),
            "x.yaml:3: delegates.vgf.precision: 'half' is not a precision (accepted: fp32, fp16, auto)");
}

TEST(ProfileTest, StorageIsAutoUnlessSetAndReachesBothGpuDelegates) {
  Result<Profile> p = parse_profile(yaml({"delegates:", "  vulkan: {storage: fp16}", "  vgf: {}"}), "x.yaml");
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_EQ(p->delegates.at("vulkan").storage, "fp16");
  EXPECT_EQ(p->delegates.at("vgf").storage, "auto");
  const DelegateOptions options = delegate_options(*p, "vulkan");
  EXPECT_NE(std::find(options.begin(), options.end(), std::pair<std::string, std::string>("storage", "fp16")),
            options.end());
  EXPECT_EQ(parse_error(yaml({"delegates:", "  vulkan:", "    storage: f16"})),
            "x.yaml:3: delegates.vulkan.storage: 'f16' is not a storage type (accepted: auto, fp32, fp16)");
}

TEST(ProfileErrorTest, RejectsGpuKeyUnderCpu) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  cpu:", "    shared_gpu: {token: a}"})),
            "x.yaml:3: delegates.cpu.shared_gpu: unknown key (accepted: enabled, engine, threads)");
}

TEST(ProfileErrorTest, RejectsUnknownTopLevelKey) {
  EXPECT_EQ(parse_error(yaml({"name: x", "", "partitions: {}"})),
            "x.yaml:3: partitions: unknown key (accepted: name, delegates, partition, sync, scheduler, logging, limits)");
}

TEST(ProfileErrorTest, RejectsUnknownDelegate) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  cpu: {}", "  gpu: {}"})),
            "x.yaml:3: delegates.gpu: unknown key (accepted: cpu, vulkan, vgf)");
}

TEST(ProfileErrorTest, RejectsDuplicateKey) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  cpu:", "    threads: 1", "    threads: 2"})),
            "x.yaml:4: delegates.cpu.threads: duplicate key (accepted: each key once)");
}

TEST(ProfileErrorTest, RejectsUnknownEngine) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  cpu: {engine: xnpack}"})),
            "x.yaml:2: delegates.cpu.engine: 'xnpack' is not an engine (accepted: xnnpack, portable)");
}

TEST(ProfileErrorTest, RejectsStringWhereIntegerIsNeeded) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  cpu:", "    threads: two"})),
            "x.yaml:3: delegates.cpu.threads: 'two' is not an integer (accepted: an integer >= 0; 0 = all cores)");
}

TEST(ProfileErrorTest, RejectsQuotedInteger) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  cpu:", "    threads: \"2\""})),
            "x.yaml:3: delegates.cpu.threads: expected an integer, got the string '2' "
            "(accepted: an integer >= 0; 0 = all cores)");
}

TEST(ProfileErrorTest, RejectsNegativeThreads) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  cpu:", "    threads: -1"})),
            "x.yaml:3: delegates.cpu.threads: '-1' is out of range (accepted: an integer >= 0; 0 = all cores)");
}

TEST(ProfileErrorTest, RejectsIntegerTooLargeForItsField) {
  EXPECT_EQ(parse_error(yaml({"scheduler:", "  max_in_flight: 99999999999999999999"})),
            "x.yaml:2: scheduler.max_in_flight: '99999999999999999999' is out of range (accepted: an integer >= 1)");
}

TEST(ProfileErrorTest, RejectsMapWhereScalarIsNeeded) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  cpu:", "    engine: {name: xnnpack}"})),
            "x.yaml:3: delegates.cpu.engine: expected an engine, got a map (accepted: xnnpack, portable)");
}

TEST(ProfileErrorTest, RejectsScalarWhereMapIsNeeded) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  cpu: yes"})),
            "x.yaml:2: delegates.cpu: expected a map, got a scalar ('yes') (accepted: enabled, engine, threads)");
}

TEST(ProfileErrorTest, RejectsListWhereMapIsNeeded) {
  EXPECT_EQ(parse_error(yaml({"name: x", "sync: [timeline]"})),
            "x.yaml:2: sync: expected a map, got a list (accepted: mode)");
}

TEST(ProfileErrorTest, RejectsYesAsBoolean) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  vgf:", "    enabled: yes"})),
            "x.yaml:3: delegates.vgf.enabled: 'yes' is not a boolean (accepted: true, false)");
}

TEST(ProfileErrorTest, EmptyValueErrorPointsAtItsKey) {
  // yaml-cpp places an empty value at the next token (line 4 here); the
  // message must point at the key's own line.
  EXPECT_EQ(parse_error(yaml({"delegates:", "  cpu:", "    threads:", "    engine: portable"})),
            "x.yaml:3: delegates.cpu.threads: expected an integer, got nothing "
            "(accepted: an integer >= 0; 0 = all cores)");
}

TEST(ProfileErrorTest, RejectsEmptyName) {
  EXPECT_EQ(parse_error(yaml({"name: ''"})), "x.yaml:1: name: must not be empty (accepted: a non-empty string)");
}

TEST(ProfileErrorTest, RejectsNegativeDeviceIndex) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  vulkan: {device: -1}"})),
            "x.yaml:2: delegates.vulkan.device: '-1' is not a device index "
            "(accepted: auto, a device index >= 0, or a device name substring)");
}

TEST(ProfileErrorTest, RejectsEmptySharedGpuToken) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  vgf:", "    shared_gpu:", "      token: \"\""})),
            "x.yaml:4: delegates.vgf.shared_gpu.token: must not be empty (accepted: a non-empty string)");
}

TEST(ProfileErrorTest, RejectsNegativeSharedGpuGroup) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  vgf:", "    shared_gpu: {token: a, group: -7}"})),
            "x.yaml:3: delegates.vgf.shared_gpu.group: '-7' is out of range (accepted: an integer >= 0)");
}

TEST(ProfileErrorTest, RejectsUnknownSharedContextMode) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  vulkan:", "    shared_gpu: {mode: lookup}"})),
            "x.yaml:3: delegates.vulkan.shared_gpu.mode: 'lookup' is not a shared-context mode "
            "(accepted: lookup_only, lookup_or_create, create_only, disabled)");
}

TEST(ProfileErrorTest, RejectsUnknownSharedGpuKey) {
  EXPECT_EQ(parse_error(yaml({"delegates:", "  vulkan:", "    shared_gpu: {group_id: 1}"})),
            "x.yaml:3: delegates.vulkan.shared_gpu.group_id: unknown key (accepted: token, group, mode)");
}

TEST(ProfileErrorTest, RejectsWhenNoDelegateIsEnabled) {
  EXPECT_EQ(parse_error(yaml({"name: none", "delegates:", "  cpu: {enabled: false}", "  vgf: {enabled: false}"})),
            "x.yaml:2: delegates: no delegate is enabled (accepted: at least one of cpu, vulkan, vgf with "
            "enabled: true)");
}

// ---- errors: partition, sync, scheduler, logging ----

TEST(ProfileErrorTest, RejectsUnknownPolicy) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  prefer: gpu_first"})),
            "x.yaml:2: partition.prefer: 'gpu_first' is not a policy "
            "(accepted: auto, vgf_first, vulkan_first, cpu_first, or a list of delegates)");
}

TEST(ProfileErrorTest, RejectsUnknownDelegateInPreferList) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  prefer:", "    - vgf", "    - gpu"})),
            "x.yaml:4: partition.prefer[1]: 'gpu' is not a delegate (accepted: cpu, vulkan, vgf)");
}

TEST(ProfileErrorTest, RejectsDuplicateDelegateInPreferList) {
  EXPECT_EQ(parse_error(yaml({"partition: {prefer: [vgf, cpu, vgf]}"})),
            "x.yaml:1: partition.prefer[2]: 'vgf' is listed twice (accepted: each delegate at most once)");
}

TEST(ProfileErrorTest, RejectsEmptyPreferList) {
  EXPECT_EQ(parse_error(yaml({"partition: {prefer: []}"})),
            "x.yaml:1: partition.prefer: the list of delegates is empty "
            "(accepted: auto, vgf_first, vulkan_first, cpu_first, or a list of delegates)");
}

TEST(ProfileErrorTest, RejectsPreferMap) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  prefer: {vgf: 1}"})),
            "x.yaml:2: partition.prefer: expected a policy or a list of delegates, got a map "
            "(accepted: auto, vgf_first, vulkan_first, cpu_first, or a list of delegates)");
}

TEST(ProfileErrorTest, RejectsZeroMinPartitionSize) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  min_partition_size: 0"})),
            "x.yaml:2: partition.min_partition_size: '0' is out of range (accepted: an integer >= 1)");
}

TEST(ProfileErrorTest, RejectsNonBooleanRetryPruned) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  retry_pruned: 1"})),
            "x.yaml:2: partition.retry_pruned: '1' is not a boolean (accepted: true, false)");
}

TEST(ProfileErrorTest, RejectsUnknownFallback) {
  EXPECT_EQ(parse_error(yaml({"partition:", "  fallback: vulkan"})),
            "x.yaml:2: partition.fallback: 'vulkan' is not a fallback (accepted: cpu, error)");
}

TEST(ProfileErrorTest, RejectsUnknownSyncMode) {
  EXPECT_EQ(parse_error(yaml({"sync:", "  mode: wait_idle"})),
            "x.yaml:2: sync.mode: 'wait_idle' is not a sync mode (accepted: timeline, queue_wait_idle, none)");
}

TEST(ProfileErrorTest, RejectsScalarSync) {
  EXPECT_EQ(parse_error(yaml({"sync: timeline"})),
            "x.yaml:1: sync: expected a map, got a scalar ('timeline') (accepted: mode)");
}

TEST(ProfileErrorTest, RejectsZeroMaxInFlight) {
  EXPECT_EQ(parse_error(yaml({"scheduler:", "  max_in_flight: 0"})),
            "x.yaml:2: scheduler.max_in_flight: '0' is out of range (accepted: an integer >= 1)");
}

TEST(ProfileErrorTest, RejectsUnknownLogLevel) {
  EXPECT_EQ(parse_error(yaml({"logging:", "  level: verbose"})),
            "x.yaml:2: logging.level: 'verbose' is not a log level (accepted: error, warn, info, debug)");
}

TEST(ProfileErrorTest, RejectsTraceThatIsNotAPath) {
  EXPECT_EQ(parse_error(yaml({"logging:", "  trace: [a.json]"})),
            "x.yaml:2: logging.trace: expected a path, got a list (accepted: a file path, or \"\" for no trace)");
}

// ---- errors: the document ----

TEST(ProfileErrorTest, ReportsYamlSyntaxErrorLine) {
  EXPECT_EQ(parse_error(yaml({"name: x", "partition: {prefer: [vgf, cpu}", "sync: {}"})),
            "x.yaml:2: invalid YAML: illegal flow end");
}

TEST(ProfileErrorTest, ReportsYamlSyntaxErrorOnLaterLine) {
  EXPECT_EQ(parse_error(yaml({"name: x", "delegates:", "  cpu:", "    threads: 1", "   engine: xnnpack"})),
            "x.yaml:5: invalid YAML: end of map not found");
}

TEST(ProfileErrorTest, RejectsEmptyDocument) {
  const std::string kMessage =
      "x.yaml:1: the profile is empty (accepted: name, delegates, partition, sync, scheduler, logging, limits)";
  EXPECT_EQ(parse_error(""), kMessage);
  EXPECT_EQ(parse_error(yaml({"# only a comment"})), kMessage);
}

TEST(ProfileErrorTest, RejectsTopLevelList) {
  EXPECT_EQ(parse_error(yaml({"- name: x"})),
            "x.yaml:1: expected a map, got a list (accepted: name, delegates, partition, sync, scheduler, logging, limits)");
}

TEST(ProfileErrorTest, RejectsTopLevelScalar) {
  EXPECT_EQ(parse_error(yaml({"cpu_only"})),
            "x.yaml:1: expected a map, got a scalar (accepted: name, delegates, partition, sync, scheduler, logging, limits)");
}

// ---- errors: files ----

TEST(ProfileFileTest, MissingFileIsNotFound) {
  testing::TempDir dir;
  std::string path = (dir / "absent.yaml").string();
  Result<Profile> r = load_profile(path);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "failed to read profile '" + path + "': No such file or directory");
}

TEST(ProfileFileTest, DirectoryIsNotAProfile) {
  testing::TempDir dir;
  Result<Profile> r = load_profile(dir.path().string());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "failed to read profile '" + dir.path().string() + "': Is a directory");
}

TEST(ProfileFileTest, ErrorsNameTheFilePath) {
  testing::TempDir dir;
  std::filesystem::path path = dir / "bad.yaml";
  testing::write_file(path, yaml({"name: bad", "delegates:", "  cpu:", "    thread: 2"}));
  Result<Profile> r = load_profile(path.string());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            path.string() + ":4: delegates.cpu.thread: unknown key (accepted: enabled, engine, threads)");
}

TEST(ProfileFileTest, EmptyFileIsAnError) {
  testing::TempDir dir;
  std::filesystem::path path = dir / "empty.yaml";
  testing::write_file(path, "");
  Result<Profile> r = load_profile(path.string());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), path.string() +
                                      ":1: the profile is empty (accepted: name, delegates, partition, sync, "
                                      "scheduler, logging, limits)");
}

TEST(ProfileFileTest, LoadRecordsThePathAsSource) {
  testing::TempDir dir;
  std::filesystem::path path = dir / "p.yaml";
  testing::write_file(path, yaml({"name: p", "delegates: {vulkan: {device: 2}}"}));
  Result<Profile> r = load_profile(path.string());
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->source, path.string());
  EXPECT_EQ(r->name, "p");
  EXPECT_EQ(r->delegates.at("vulkan").device, "2");
}

}  // namespace
}  // namespace hetsched
