// hetsched export-vgf MODEL -o DIR: one standalone .vgf file per VGF island.
// hetsched run-vgf FILE: run one .vgf file alone, with no program around it.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cli/cli_common.h"
#include "cli/tensor_io.h"
#include "delegates/registry.h"
#include "delegates/vgf/vgf_api.h"
#include "scheduler/layout.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"
#include "shared_gpu/buffer.h"
#include "shared_gpu/shared_gpu_context.h"

namespace hetsched::cli {

namespace {

std::string io_text(const std::vector<vgf::VgfTensorInfo>& tensors) {
  std::string s;
  for (const vgf::VgfTensorInfo& t : tensors)
    s += (s.empty() ? "" : ", ") + t.name + " " + t.type.to_string() +
         (t.layout == TensorLayout::kNhwc ? " (NHWC)" : "");
  return s;
}

std::string op_list(const vgf::VgfSummary& file) {
  std::string s;
  for (const std::string& op : file.ops) s += (s.empty() ? "" : ", ") + op;
  return s;
}

// --- export-vgf ------------------------------------------------------------------

struct ExportOptions {
  CommonOptions common;
  std::string model;
  std::string out_dir;
};

int run_export(const ExportOptions& o) {
  auto profile = load_profile_for(o.common);
  if (!profile.is_ok()) return report_error(profile.status());
  auto shapes = parse_input_shapes(o.common.input_shapes);
  if (!shapes.is_ok()) return report_error(shapes.status());
  auto graph = load_model(o.model, *shapes);
  if (!graph.is_ok()) return report_error(graph.status());
  auto planned = plan_model(*graph, *profile);
  if (!planned.is_ok()) return report_error(planned.status());
  Delegate* vgf = planned->delegates.find("vgf");
  if (!vgf) return report_error(invalid_argument("failed to export VGF: profile '" + profile->name + "' does not enable the vgf delegate"));
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return report_error(unavailable("failed to create directory '" + o.out_dir + "': " + ec.message()));
  const CompileSpecs specs = delegate_options(*profile, "vgf");
  int written = 0;
  for (const PlannedIsland& planned_island : planned->plan.islands) {
    if (planned_island.delegate != "vgf") continue;
    Island island{planned_island.id, planned_island.delegate, &*graph, planned_island.nodes, planned_island.inputs,
                  planned_island.outputs};
    auto blob = vgf->compile(island, specs);
    if (!blob.is_ok()) return report_error(blob.status());
    auto file = vgf::describe_vgf(*blob);
    if (!file.is_ok()) return report_error(file.status());
    const std::string path =
        (std::filesystem::path(o.out_dir) / (graph->name() + "_island" + std::to_string(island.id) + ".vgf")).string();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(blob->data()), static_cast<std::streamsize>(blob->size()));
    out.close();
    if (!out) return report_error(unavailable("failed to write '" + path + "': " + std::strerror(errno)));
    std::printf("wrote %s: island %d, %zu ops [%s], inputs %s, outputs %s, %zu bytes\n", path.c_str(), island.id,
                file->op_count, op_list(*file).c_str(), io_text(file->inputs).c_str(), io_text(file->outputs).c_str(),
                blob->size());
    ++written;
  }
  if (written == 0)
    return report_error(invalid_argument("failed to export VGF: the partition of '" + o.model +
                                         "' has no VGF island (see `hetsched preview`)"));
  return kExitOk;
}

// --- run-vgf ----------------------------------------------------------------------

struct RunVgfOptions {
  std::string file;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string device = "auto";
  bool validate = false;
  std::string log_level = "warn";
};

Result<Blob> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("failed to read VGF file '" + path + "': " + std::strerror(errno));
  return Blob((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

Status write_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& outputs,
                     const std::vector<std::string>& args, std::vector<std::string>& written_to) {
  written_to.assign(names.size(), "");
  size_t next_positional = 0;
  for (const std::string& arg : args) {
    const TensorFileArg a = parse_tensor_file_arg(arg);
    size_t idx = names.size();
    if (a.name.empty()) {
      idx = next_positional++;
    } else {
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == a.name) idx = i;
    }
    if (idx >= names.size())
      return invalid_argument("--output '" + arg + "' does not name one of the file's " + std::to_string(names.size()) +
                              " outputs");
    HS_RETURN_IF_ERROR(write_tensor_file(outputs[idx], a.path));
    written_to[idx] = a.path;
  }
  return Status::ok();
}

// Makes a private context, inits the island, uploads the inputs (NCHW on the
// command line, NHWC on the device for rank 4), runs it once and reads the
// outputs back.
Status run_vgf_file(const RunVgfOptions& o) {
  HS_ASSIGN_OR_RETURN(const Blob blob, read_file(o.file));
  HS_ASSIGN_OR_RETURN(const vgf::VgfSummary file, vgf::describe_vgf(blob));
  std::vector<std::string> in_names, out_names;
  std::vector<TensorType> in_types;
  for (const vgf::VgfTensorInfo& t : file.inputs) {
    in_names.push_back(t.name);
    in_types.push_back(t.type);
  }
  for (const vgf::VgfTensorInfo& t : file.outputs) out_names.push_back(t.name);
  HS_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, make_inputs(in_names, in_types, o.inputs));

  const DelegateOptions options = {{"device", o.device},
                                   {"gpu_shared_context_token", "vgf-local"},
                                   {"gpu_shared_group_id", "0"},
                                   {"gpu_shared_context_mode", "disabled"},
                                   {"validation", o.validate ? "1" : "0"}};
  HS_ASSIGN_OR_RETURN(std::unique_ptr<Delegate> delegate, make_delegate("vgf", options));
  HS_ASSIGN_OR_RETURN(std::unique_ptr<IslandHandle> handle, delegate->init(blob, InitContext{options, 0}));

  for (size_t i = 0; i < inputs.size(); ++i) {
    const DeviceTensor* t = handle->device_input(i);
    if (!t || !t->buffer->mapped()) return internal_error("failed to upload input '" + in_names[i] + "': not host-visible");
    std::byte* dst = t->buffer->mapped() + t->offset;
    if (t->layout == TensorLayout::kNhwc)
      permute_layout(inputs[i].raw(), dst, inputs[i].shape(), dtype_size(inputs[i].dtype()), true);
    else
      std::memcpy(dst, inputs[i].raw(), inputs[i].byte_size());
  }
  ExecContext ctx;
  ctx.gpu.signal = true;
  HS_RETURN_IF_ERROR(handle->execute(ctx, {}, {}));
  HS_RETURN_IF_ERROR(handle->gpu_context()->wait(ctx.signalled_value));

  std::vector<Tensor> outputs;
  for (size_t i = 0; i < file.outputs.size(); ++i) {
    const vgf::VgfTensorInfo& r = file.outputs[i];
    Tensor out(r.type);
    const DeviceTensor* t = handle->device_output(i);
    if (!t || !t->buffer->mapped()) return internal_error("failed to read output '" + r.name + "': not host-visible");
    const std::byte* src = t->buffer->mapped() + t->offset;
    if (t->layout == TensorLayout::kNhwc)
      permute_layout(src, out.raw(), out.shape(), dtype_size(out.dtype()), false);
    else
      std::memcpy(out.raw(), src, out.byte_size());
    outputs.push_back(std::move(out));
  }
  if (o.validate && handle->gpu_context()->validation_message_count() > 0)
    return internal_error("Vulkan validation reported " +
                          std::to_string(handle->gpu_context()->validation_message_count()) + " message(s)");

  std::vector<std::string> written_to;
  HS_RETURN_IF_ERROR(write_outputs(out_names, outputs, o.outputs, written_to));
  std::printf("ran %s: %zu ops on %s\n", o.file.c_str(), file.op_count,
              std::string(handle->gpu_context()->device_name()).c_str());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    if (!written_to[i].empty())
      std::printf("output %s %s written to %s\n", out_names[i].c_str(), t.type().to_string().c_str(), written_to[i].c_str());
    else
      std::printf("output %s %s %s\n", out_names[i].c_str(), t.type().to_string().c_str(), summarize_tensor(t).c_str());
  }
  return Status::ok();
}

int run_run_vgf(const RunVgfOptions& o) {
  if (Status s = apply_log_level(o.log_level); !s.is_ok()) return report_error(s);
  Status s = run_vgf_file(o);
  return s.is_ok() ? kExitOk : report_error(s);
}

}  // namespace

void register_vgf(CLI::App& app, std::function<int()>& run) {
  auto exp = std::make_shared<ExportOptions>();
  CLI::App* export_cmd =
      app.add_subcommand("export-vgf", "Write one standalone VGF file per VGF island of a model's partition");
  export_cmd->add_option("model", exp->model, "Model file (" + accepted_model_formats() + ")")->required();
  export_cmd->add_option("--output,-o", exp->out_dir, "Directory to write the .vgf files into")->required();
  add_common_options(*export_cmd, exp->common);
  export_cmd->callback([exp, &run] { run = [exp] { return run_export(*exp); }; });

  auto rv = std::make_shared<RunVgfOptions>();
  CLI::App* run_cmd = app.add_subcommand("run-vgf", "Run one VGF file on its own (no program, a private GPU context)");
  run_cmd->add_option("file", rv->file, "VGF file (from export-vgf)")->required();
  run_cmd->add_option("--input,-i", rv->inputs,
                      "[NAME=]FILE raw little-endian NCHW input (repeatable; deterministic data for inputs not given)");
  run_cmd->add_option("--output,-o", rv->outputs, "[NAME=]FILE to write an NCHW output to (repeatable)");
  run_cmd->add_option("--device", rv->device, "auto | device index | device name substring");
  run_cmd->add_flag("--validate", rv->validate, "Enable Vulkan validation; any message fails the run");
  run_cmd->add_option("--log-level", rv->log_level, "error | warn | info | debug (default warn)");
  run_cmd->callback([rv, &run] { run = [rv] { return run_run_vgf(*rv); }; });
}

}  // namespace hetsched::cli
