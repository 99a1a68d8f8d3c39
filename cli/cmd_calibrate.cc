// hetsched calibrate --profile P -o costs.yaml: measures this machine's
// cost-model figures for every delegate the profile enables (calibration.h)
// and writes them as a costs file (profile/costs_file.h) for the profile key
// partition.costs.
#include "cli/cmd_calibrate.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>

#include "cli/calibration.h"
#include "cli/model_calibration.h"
#include "profile/yaml_fields.h"
#include "cli/cli_common.h"
#include "profile/costs_file.h"

namespace hetsched::cli {

namespace {

struct CalibrateOptions {
  CommonOptions common;
  std::string output;
  // A stable median, and the whole of configs/mixed_gpu.yaml (cpu, vulkan,
  // vgf on lavapipe, 2 cores) in ~6 s on an idle machine; a real GPU is faster.
  int repeats = 10;
  std::vector<std::string> models;  // --model: also time these models' own nodes
  bool update = false;              // --update: add --model measurements to the existing file, no probes
};

// On a terminal, one line redrawn in place; otherwise one short line per
// section, so logs stay readable.
class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) != 0) {}
  ~Progress() { finish(); }

  void update(const std::string& section, const std::string& probe, int done, int total) {
    if (!tty_) {
      if (section != section_) std::fprintf(stderr, "calibrating %s\n", section.c_str());
      section_ = section;
      return;
    }
    const int width = 20, filled = total > 0 ? width * done / total : width;
    std::fprintf(stderr, "\r\033[Kcalibrating %s: %s [%s%s] %d/%d", section.c_str(), probe.c_str(),
                 std::string(filled, '#').c_str(), std::string(width - filled, '-').c_str(), done, total);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
  }

 private:
  bool tty_;
  bool drawn_ = false;
  std::string section_;
};

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string header(const Calibration& c, const CalibrateOptions& o, const std::string& date, double seconds) {
  std::string h = "hetsched calibrate: this machine's cost-model figures. Name this file in a profile as\n";
  h += "partition.costs (docs/profiles.md); re-run after changing hardware, drivers or threads.\n\n";
  h += "machine: " + c.machine + "\n";
  for (const std::string& d : c.devices) h += "device:  " + d + "\n";
  h += "date:    " + date + "\n";
  const std::string profile =
      o.common.profile_path.empty() ? std::string("built-in default (cpu only)") : o.common.profile_path;
  h += "profile: " + profile + "\n";
  char line[160];
  std::snprintf(line, sizeof line, "probes:  median of %d runs each; %.1f s in all\n", o.repeats, seconds);
  h += line;
  h += "\nmeasured (probe times include island and dispatch costs):\n";
  for (const std::string& n : c.notes) h += "  " + n + "\n";
  return h;
}

Status write_file(const std::string& path, const std::string& text) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  auto fail = [&] { return invalid_argument("failed to write costs file '" + path + "': " + std::strerror(errno)); };
  if (!f) return fail();
  if (std::fwrite(text.data(), 1, text.size(), f.get()) != text.size()) return fail();
  if (std::fclose(f.release()) != 0) return fail();
  return Status::ok();
}

// The output's folder must take a new file: found out now, not after a
// minute of measuring.
Status check_writable(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (access(dir.c_str(), W_OK) != 0)
    return invalid_argument("failed to write costs file '" + path + "': " + std::strerror(errno));
  return Status::ok();
}

// --update: the existing file gets the models' measurements; its figures
// and header comment's first part stay.
int run_update(const CalibrateOptions& o, const Profile& profile, const InputShapes& shapes) {
  Result<CostTable> table = load_costs(o.output);
  if (!table.is_ok()) return report_error(table.status());
  std::string notes;
  for (const std::string& model : o.models) {
    std::fprintf(stderr, "calibrating %s\n", model.c_str());
    Result<ModelCalibration> m = calibrate_model(profile, model, shapes, o.repeats, 2, *table);
    if (!m.is_ok()) return report_error(m.status());
    for (const std::string& n : m->notes) notes += n + "\n";
  }
  std::string text;
  {
    // The old header comment, then what this run added.
    Result<std::string> old = yaml_fields::read_text_file(o.output, "costs file");
    if (!old.is_ok()) return report_error(old.status());
    std::string header;
    for (size_t at = 0; at < old->size() && (*old)[at] == '#';) {
      const size_t end = std::min(old->find('\n', at), old->size());
      header += old->substr(at + std::min<size_t>(2, end - at), end - at - std::min<size_t>(2, end - at)) + "\n";
      at = end + 1;
    }
    text = format_costs_yaml(*table, header + "updated " + utc_now() + " with --model:\n" + notes);
  }
  if (Result<CostTable> check = parse_costs(text, o.output); !check.is_ok())
    return report_error(internal_error("calibrate wrote a costs file that does not load: " + check.status().message()));
  if (Status s = write_file(o.output, text); !s.is_ok()) return report_error(s);
  std::printf("updated %s: %s", o.output.c_str(), notes.c_str());
  return kExitOk;
}

int run_calibrate(const CalibrateOptions& o) {
  auto profile = load_profile_for(o.common);
  if (!profile.is_ok()) return report_error(profile.status());
  if (Status s = check_writable(o.output); !s.is_ok()) return report_error(s);
  auto shapes = parse_input_shapes(o.common.input_shapes);
  if (!shapes.is_ok()) return report_error(shapes.status());
  if (o.update) {
    if (o.models.empty())
      return report_error(invalid_argument("--update adds --model measurements to an existing costs file: name a model"));
    return run_update(o, *profile, *shapes);
  }
  const auto start = std::chrono::steady_clock::now();
  Progress progress;
  CalibrationOptions options;
  options.repeats = o.repeats;
  options.progress = [&](const std::string& section, const std::string& probe, int done, int total) {
    progress.update(section, probe, done, total);
  };
  Result<Calibration> calibration = calibrate(*profile, options);
  progress.finish();
  if (!calibration.is_ok()) return report_error(calibration.status());
  for (const std::string& model : o.models) {
    progress.update("model", model, 0, 1);
    Result<ModelCalibration> m = calibrate_model(*profile, model, *shapes, o.repeats, 2, calibration->table);
    progress.finish();
    if (!m.is_ok()) return report_error(m.status());
    for (const std::string& n : m->notes) calibration->notes.push_back(n);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::string date = utc_now();
  CostTable& table = calibration->table;
  table.source = "calibrated on " + calibration->machine;
  if (!calibration->gpu_name.empty()) table.source += ", " + calibration->gpu_name;
  table.source += ", " + date;
  const std::string text = format_costs_yaml(table, header(*calibration, o, date, seconds));
  // What is written must load: a formatting slip shows here, not at plan time.
  if (Result<CostTable> check = parse_costs(text, o.output); !check.is_ok())
    return report_error(internal_error("calibrate wrote a costs file that does not load: " + check.status().message()));
  if (Status s = write_file(o.output, text); !s.is_ok()) return report_error(s);

  std::string what;
  for (const auto& [name, costs] : table.delegates) what += (what.empty() ? "" : ", ") + name;
  std::printf("wrote %s: %s and handoffs, in %.1f s\n", o.output.c_str(), what.c_str(), seconds);
  return kExitOk;
}

}  // namespace

void register_calibrate(CLI::App& app, std::function<int()>& run) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Measure this machine's cost-model figures for the profile's delegates into a costs file");
  cmd->add_option("--output,-o", options->output, "Costs file to write (YAML; name it in partition.costs)")
      ->required();
  cmd->add_option("--repeats", options->repeats, "Timed runs per probe; the median counts (default 10)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--model", options->models,
                  "Also time this model's own nodes on each delegate (repeatable): measured times by op signature, "
                  "used for every node with that signature in place of the roofline");
  cmd->add_option("--input-shape", options->common.input_shapes,
                  "With --model: shape for a dynamic input, NAME=1x3x224x224 (repeatable)");
  cmd->add_flag("--update", options->update,
                "With --model: add the measurements to the existing --output file instead of measuring it anew");
  add_common_options(*cmd, options->common, /*model_options=*/false);
  cmd->callback([options, &run] { run = [options] { return run_calibrate(*options); }; });
}

}  // namespace hetsched::cli
