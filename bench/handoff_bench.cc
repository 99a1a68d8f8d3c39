// Where mapped host access to a device buffer stops paying off: the four
// ways a handoff can move bytes between the host and a device buffer, timed
// on the host clock for sizes from 256 B to 64 MiB.
//
//   upload   mapped  memcpy into a kDeviceLocalHostVisible buffer (coherent:
//                    nothing else to do)
//            staged  memcpy into a kUpload staging buffer + a recorded GPU
//                    copy into that buffer, submitted and waited for
//   readback mapped  memcpy out of the kDeviceLocalHostVisible buffer
//            staged  a recorded GPU copy into a kReadback buffer, submitted
//                    and waited for, + memcpy out of it
//
// The copies are GpuTransfers::record_copy command buffers submitted with a
// timeline signal and a host wait: what scheduler/handoff.cc does.
//
//   handoff_bench [--device SELECTOR] [--json] [--budget-ms MS] [--max-bytes N]
//                 [--memory host-visible]
//
// --device: "auto" (the default: a discrete GPU first), an index or a name
// substring. --memory host-visible: the device buffer is a kUpload buffer
// instead (plain host-visible memory, what kDeviceLocalHostVisible falls
// back to without a device-local host-visible type; on a discrete GPU,
// uncached system memory). --budget-ms: time spent per size and path
// (default 200; 5 to 20000 repetitions, after warm-up). --max-bytes: the
// largest size.
//
// Prints the device, the memory property flags each buffer got (where
// kDeviceLocalHostVisible fell back to plain host-visible memory it says
// so), a table of median µs per op and GB/s, which path wins per direction
// and size, what host_access_policy (shared_gpu/host_access.h) chooses, and
// the crossover sizes: the first measured size at which staged beats
// mapped, with a linear estimate between the two bracketing sizes; then a
// 3-channel 224x224 f32 image's NCHW -> NHWC upload into the device buffer
// (scheduler/layout.h's permute_layout, as the VGF delegate's input handoff
// does it) against a memcpy and the source-order walk it replaced. --json
// prints the same as one JSON object instead.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/layout.h"
#include "shared_gpu/buffer.h"
#include "shared_gpu/device_info.h"
#include "shared_gpu/host_access.h"
#include "shared_gpu/shared_gpu_context.h"
#include "shared_gpu/transfer.h"
#include "sync/step_sync.h"

namespace hetsched {
namespace {

constexpr uint64_t kSizes[] = {256, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
constexpr size_t kMinReps = 5;
constexpr size_t kMaxReps = 20000;

struct Options {
  std::string device = "auto";
  bool json = false;
  double budget_ms = 200;
  uint64_t max_bytes = uint64_t{64} << 20;
  bool host_visible = false;  // --memory host-visible: the device buffer is kUpload memory
};

enum Path { kUploadMapped, kUploadStaged, kReadbackMapped, kReadbackStaged, kPaths };
constexpr const char* kPathNames[kPaths] = {"upload_mapped", "upload_staged", "readback_mapped", "readback_staged"};

struct Row {
  uint64_t bytes = 0;
  double us[kPaths] = {};  // median µs per op
  int reps[kPaths] = {};
};

std::string human_size(uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1u << 10) && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

double gbps(uint64_t bytes, double us) { return us > 0 ? static_cast<double>(bytes) / (us * 1e3) : 0; }

// Median µs of `op` after warm-up calls, repeated about `budget_ms` long
// (kMinReps..kMaxReps times).
template <typename Op>
Result<double> time_op(const Op& op, double budget_ms, int* reps_out) {
  using Clock = std::chrono::steady_clock;
  auto once = [&]() -> Result<double> {
    const auto start = Clock::now();
    HS_RETURN_IF_ERROR(op());
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  };
  // Warm-up: up to 3 calls (the first submit, page faults and caches cost
  // extra), fewer when they take a quarter of the budget.
  double warm_us = 0;
  for (int i = 0; i < 3 && warm_us < budget_ms * 250; ++i) {
    HS_ASSIGN_OR_RETURN(const double t, once());
    warm_us += t;
  }
  std::vector<double> us;
  double total_us = 0;
  while ((total_us < budget_ms * 1e3 || us.size() < kMinReps) && us.size() < kMaxReps) {
    HS_ASSIGN_OR_RETURN(const double t, once());
    us.push_back(t);
    total_us += t;
  }
  const int reps = static_cast<int>(us.size());
  std::nth_element(us.begin(), us.begin() + reps / 2, us.end());
  *reps_out = reps;
  return us[static_cast<size_t>(reps / 2)];
}

// The first size at which staged beats mapped (nullopt: mapped wins at every
// size), and the byte count where the two lines cross between it and the
// size before (linear in bytes).
struct Crossover {
  std::optional<size_t> first_staged_row;
  double estimate_bytes = 0;  // 0: staged wins from the smallest size on
  bool flips_back = false;    // mapped wins again at some larger size (noise?)
};

Crossover find_crossover(const std::vector<Row>& rows, Path mapped, Path staged) {
  Crossover c;
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool staged_wins = rows[i].us[staged] < rows[i].us[mapped];
    if (!c.first_staged_row && staged_wins) {
      c.first_staged_row = i;
      if (i > 0) {
        const double d0 = rows[i - 1].us[mapped] - rows[i - 1].us[staged];  // <= 0
        const double d1 = rows[i].us[mapped] - rows[i].us[staged];          // > 0
        const double s0 = static_cast<double>(rows[i - 1].bytes), s1 = static_cast<double>(rows[i].bytes);
        c.estimate_bytes = s0 + (s1 - s0) * (-d0) / (d1 - d0);
      }
    } else if (c.first_staged_row && !staged_wins) {
      c.flips_back = true;
    }
  }
  return c;
}

std::string crossover_text(const std::vector<Row>& rows, const Crossover& c) {
  if (!c.first_staged_row) return "mapped wins at every size measured (up to " + human_size(rows.back().bytes) + ")";
  const size_t i = *c.first_staged_row;
  if (i == 0) return "staged wins from the smallest size measured (" + human_size(rows[0].bytes) + ")";
  char estimate[64];
  std::snprintf(estimate, sizeof(estimate), "%.0f", c.estimate_bytes);
  return "mapped up to " + human_size(rows[i - 1].bytes) + ", staged from " + human_size(rows[i].bytes) +
         " (lines cross at ~" + human_size(static_cast<uint64_t>(c.estimate_bytes)) + " = " + estimate + " B)" +
         (c.flips_back ? "; mapped wins again at some larger size: noisy, rerun" : "");
}

std::string json_escape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (static_cast<unsigned char>(ch) >= 0x20) out += ch;
  }
  return out;
}

std::string threshold_text(uint64_t bytes) {
  return bytes == HostAccessPolicy::kAlways ? "always" : bytes == 0 ? "never" : "<= " + human_size(bytes);
}

int run(const Options& options) {
  GpuContextOptions context_options;
  context_options.device = options.device;
  context_options.app_name = "handoff_bench";
  Result<std::shared_ptr<SharedGpuContext>> made = SharedGpuContext::create(context_options);
  if (!made.is_ok()) {
    std::fprintf(stderr, "handoff_bench: %s\n", made.status().message().c_str());
    return 1;
  }
  SharedGpuContext& context = **made;
  std::vector<uint64_t> sizes;
  for (uint64_t s : kSizes)
    if (s <= options.max_bytes) sizes.push_back(s);
  if (sizes.empty()) {
    std::fprintf(stderr, "handoff_bench: --max-bytes is below the smallest size (256)\n");
    return 1;
  }
  const uint64_t max_bytes = sizes.back();

  auto fail = [](const Status& status) {
    std::fprintf(stderr, "handoff_bench: %s\n", status.message().c_str());
    return 1;
  };
  constexpr VkBufferUsageFlags kCopy = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  Result<Buffer> device = Buffer::create(context, max_bytes, kCopy | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                         options.host_visible ? MemoryUsage::kUpload
                                                              : MemoryUsage::kDeviceLocalHostVisible);
  if (!device.is_ok()) return fail(device.status());
  Result<Buffer> upload = Buffer::create(context, max_bytes, kCopy, MemoryUsage::kUpload);
  if (!upload.is_ok()) return fail(upload.status());
  Result<Buffer> readback = Buffer::create(context, max_bytes, kCopy, MemoryUsage::kReadback);
  if (!readback.is_ok()) return fail(readback.status());
  Result<std::unique_ptr<GpuTransfers>> transfers_made = GpuTransfers::create(*made);
  if (!transfers_made.is_ok()) return fail(transfers_made.status());
  GpuTransfers& transfers = **transfers_made;

  const VkPhysicalDeviceType type = context.properties().deviceType;
  const VkMemoryPropertyFlags device_flags = device->memory_properties();
  const bool got_device_local = (device_flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
  const HostAccessPolicy policy = host_access_policy(context, *device);

  // Host memory, touched once so page faults stay out of the timings. One
  // byte more source: the staged upload copies from src + 1.
  std::vector<std::byte> src(max_bytes + 1), dst(max_bytes);
  for (uint64_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i * 131 + 7);
  std::memset(dst.data(), 0, dst.size());

  auto submit_and_wait = [&](VkCommandBuffer cmd) -> Status {
    HS_ASSIGN_OR_RETURN(const uint64_t value, transfers.submit(cmd, plan_gpu_step(SyncMode::kTimeline, 0)));
    return context.wait(value);
  };

  std::vector<Row> rows;
  for (uint64_t bytes : sizes) {
    const BufferRange on_device{&*device, 0, bytes}, staged_up{&*upload, 0, bytes}, staged_down{&*readback, 0, bytes};
    Result<VkCommandBuffer> copy_up = transfers.record_copy(staged_up, on_device);
    if (!copy_up.is_ok()) return fail(copy_up.status());
    Result<VkCommandBuffer> copy_down = transfers.record_copy(on_device, staged_down);
    if (!copy_down.is_ok()) return fail(copy_down.status());
    const std::byte* data = src.data();
    auto ops = std::to_array<std::function<Status()>>({
        [&] {
          std::memcpy(device->mapped(), data, bytes);
          return Status::ok();
        },
        [&] {
          std::memcpy(upload->mapped(), data, bytes);
          return submit_and_wait(*copy_up);
        },
        [&] {
          std::memcpy(dst.data(), device->mapped(), bytes);
          return Status::ok();
        },
        [&] {
          HS_RETURN_IF_ERROR(submit_and_wait(*copy_down));
          std::memcpy(dst.data(), readback->mapped(), bytes);
          return Status::ok();
        },
    });
    Row row;
    row.bytes = bytes;
    // Each upload path, then a readback path that checks what it left: the
    // readbacks must return the bytes of the last upload.
    for (Path p : {kUploadMapped, kReadbackStaged, kUploadStaged, kReadbackMapped}) {
      if (p == kUploadStaged) data = src.data() + 1;  // another pattern, so a lost upload shows
      Result<double> us = time_op(ops[p], options.budget_ms, &row.reps[p]);
      if (!us.is_ok()) return fail(us.status());
      row.us[p] = *us;
      if ((p == kReadbackStaged || p == kReadbackMapped) && std::memcmp(dst.data(), data, bytes) != 0) {
        std::fprintf(stderr, "handoff_bench: %s of %s returned other bytes than were uploaded\n", kPathNames[p],
                     human_size(bytes).c_str());
        return 1;
      }
    }
    rows.push_back(row);
    if (!options.json)
      std::fprintf(stderr, "  %s done\n", human_size(bytes).c_str());
  }
  const Crossover up = find_crossover(rows, kUploadMapped, kUploadStaged);
  const Crossover down = find_crossover(rows, kReadbackMapped, kReadbackStaged);

  // A CNN input's NCHW -> NHWC upload as the VGF delegate's handoff does it
  // (permute_layout straight into the mapped device buffer), against a
  // plain memcpy and the source-order walk it replaced.
  const Shape image = {1, 3, 224, 224};
  const uint64_t image_bytes = 1 * 3 * 224 * 224 * sizeof(float);
  double layout_us[3] = {-1, -1, -1};  // memcpy, permute_layout, source order
  if (image_bytes <= max_bytes) {
    std::byte* mapped = device->mapped();
    const auto source_order = [&] {
      const int64_t c = image[1], hw = image[2] * image[3];
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = 0; p < hw; ++p)
          std::memcpy(mapped + (p * c + ch) * 4, src.data() + (ch * hw + p) * 4, 4);
    };
    const auto layout_ops = std::to_array<std::function<Status()>>({
        [&] {
          std::memcpy(mapped, src.data(), image_bytes);
          return Status::ok();
        },
        [&] {
          permute_layout(src.data(), mapped, image, sizeof(float), true);
          return Status::ok();
        },
        [&] {
          source_order();
          return Status::ok();
        },
    });
    for (size_t i = 0; i < layout_ops.size(); ++i) {
      int reps = 0;
      Result<double> us = time_op(layout_ops[i], options.budget_ms, &reps);
      if (!us.is_ok()) return fail(us.status());
      layout_us[i] = *us;
    }
  }

  const std::string device_type(device_type_name(type));
  const std::string memory_kind = host_memory_kind_name(classify_host_memory(type, device_flags));
  if (options.json) {
    std::printf("{\n  \"device\": {\"name\": \"%s\", \"type\": \"%s\"},\n", json_escape(context.device_name()).c_str(),
                device_type.c_str());
    std::printf("  \"buffers\": {\"device\": {\"memory_usage\": \"%s\", \"flags\": \"%s\", "
                "\"device_local\": %s, \"kind\": \"%s\"},\n",
                options.host_visible ? "kUpload" : "kDeviceLocalHostVisible", memory_property_names(device_flags).c_str(),
                got_device_local ? "true" : "false", memory_kind.c_str());
    std::printf("              \"upload\": {\"flags\": \"%s\"}, \"readback\": {\"flags\": \"%s\"}},\n",
                memory_property_names(upload->memory_properties()).c_str(),
                memory_property_names(readback->memory_properties()).c_str());
    auto max_json = [](uint64_t b) { return b == HostAccessPolicy::kAlways ? std::string("null") : std::to_string(b); };
    std::printf("  \"policy\": {\"mappable\": %s, \"upload_mapped_max_bytes\": %s, "
                "\"readback_mapped_max_bytes\": %s},\n",
                policy.mappable ? "true" : "false", max_json(policy.upload_mapped_max_bytes).c_str(),
                max_json(policy.readback_mapped_max_bytes).c_str());
    std::printf("  \"results\": [\n");
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::printf("    {\"bytes\": %llu", static_cast<unsigned long long>(r.bytes));
      for (int p = 0; p < kPaths; ++p)
        std::printf(", \"%s\": {\"median_us\": %.3f, \"gb_per_s\": %.3f, \"reps\": %d}", kPathNames[p], r.us[p],
                    gbps(r.bytes, r.us[p]), r.reps[p]);
      std::printf("}%s\n", i + 1 < rows.size() ? "," : "");
    }
    auto crossover_json = [&](const Crossover& c) {
      if (!c.first_staged_row) return std::string("{\"staged_from_bytes\": null, \"estimate_bytes\": null}");
      return "{\"staged_from_bytes\": " + std::to_string(rows[*c.first_staged_row].bytes) +
             ", \"estimate_bytes\": " + std::to_string(static_cast<uint64_t>(c.estimate_bytes)) +
             ", \"flips_back\": " + (c.flips_back ? "true" : "false") + "}";
    };
    std::printf("  ],\n  \"crossover\": {\"upload\": %s, \"readback\": %s},\n", crossover_json(up).c_str(),
                crossover_json(down).c_str());
    std::printf("  \"nhwc_upload_us\": {\"bytes\": %llu, \"memcpy\": %.3f, \"permute\": %.3f, \"source_order\": %.3f}\n}\n",
                static_cast<unsigned long long>(image_bytes), layout_us[0], layout_us[1], layout_us[2]);
    return 0;
  }

  std::printf("device: %s (%s)\n", std::string(context.device_name()).c_str(), device_type.c_str());
  std::printf("device buffer (%s): %s -> %s%s\n", options.host_visible ? "kUpload, --memory host-visible"
                                                                        : "kDeviceLocalHostVisible",
              memory_property_names(device_flags).c_str(), memory_kind.c_str(),
              got_device_local || options.host_visible
                  ? ""
                  : "  [fell back to plain host-visible memory: no device-local host-visible type]");
  std::printf("upload staging (kUpload):                %s\n",
              memory_property_names(upload->memory_properties()).c_str());
  std::printf("readback staging (kReadback):            %s\n",
              memory_property_names(readback->memory_properties()).c_str());
  std::printf("policy for the device buffer: upload mapped %s, readback mapped %s\n",
              threshold_text(policy.upload_mapped_max_bytes).c_str(),
              threshold_text(policy.readback_mapped_max_bytes).c_str());
  std::printf("median µs per op (GB/s); winner; policy's choice (! where it differs from the winner)\n\n");
  std::printf("%8s | %19s %19s %6s %6s | %19s %19s %6s %6s\n", "size", "upload mapped", "upload staged", "wins",
              "policy", "readback mapped", "readback staged", "wins", "policy");
  auto cell = [](const Row& r, Path p) {
    char text[32];
    std::snprintf(text, sizeof(text), "%9.2f (%6.2f)", r.us[p], gbps(r.bytes, r.us[p]));
    return std::string(text);
  };
  for (const Row& r : rows) {
    const HostAccess up_win = r.us[kUploadStaged] < r.us[kUploadMapped] ? HostAccess::kStaged : HostAccess::kMapped;
    const HostAccess down_win =
        r.us[kReadbackStaged] < r.us[kReadbackMapped] ? HostAccess::kStaged : HostAccess::kMapped;
    const HostAccess up_policy = choose_upload(policy, r.bytes), down_policy = choose_readback(policy, r.bytes);
    std::printf("%8s | %19s %19s %6s %5s%s | %19s %19s %6s %5s%s\n", human_size(r.bytes).c_str(),
                cell(r, kUploadMapped).c_str(), cell(r, kUploadStaged).c_str(), host_access_name(up_win),
                host_access_name(up_policy), up_win == up_policy ? " " : "!", cell(r, kReadbackMapped).c_str(),
                cell(r, kReadbackStaged).c_str(), host_access_name(down_win), host_access_name(down_policy),
                down_win == down_policy ? " " : "!");
  }
  std::printf("\ncrossover upload:   %s\n", crossover_text(rows, up).c_str());
  std::printf("crossover readback: %s\n", crossover_text(rows, down).c_str());
  if (layout_us[0] >= 0)
    std::printf("\nNCHW->NHWC upload of f32[1,3,224,224] into the device buffer, median µs: memcpy %.2f · "
                "permute_layout %.2f · the source-order walk it replaced %.2f\n",
                layout_us[0], layout_us[1], layout_us[2]);
  return 0;
}

}  // namespace
}  // namespace hetsched

int main(int argc, char** argv) {
  hetsched::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--device" && has_value) {
      options.device = argv[++i];
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--budget-ms" && has_value) {
      options.budget_ms = std::atof(argv[++i]);
    } else if (arg == "--max-bytes" && has_value) {
      options.max_bytes = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--memory" && has_value && std::string(argv[i + 1]) == "host-visible") {
      options.host_visible = true;
      ++i;
    } else {
      std::fprintf(stderr,
                   "usage: handoff_bench [--device SELECTOR] [--json] [--budget-ms MS] [--max-bytes N]\n"
                   "                     [--memory host-visible]\n"
                   "  times mapped vs staged uploads and readbacks of a device buffer, 256 B .. 64 MiB\n");
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  // Warnings go to stderr, so --json output stays one JSON object.
  spdlog::set_default_logger(spdlog::stderr_color_mt("handoff_bench"));
  spdlog::set_level(spdlog::level::warn);
  return hetsched::run(options);
}
