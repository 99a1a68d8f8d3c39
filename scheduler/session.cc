#include "scheduler/session.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>

namespace hetsched {

Session::Session(Program program, DelegateSet delegates)
    : program_(std::move(program)), delegates_(std::move(delegates)) {}

Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::create(Program program, const Profile& profile) {
  HS_RETURN_IF_ERROR(validate_program(program));
  HS_ASSIGN_OR_RETURN(DelegateSet delegates, DelegateSet::create(profile));
  auto session = std::unique_ptr<Session>(new Session(std::move(program), std::move(delegates)));
  const Program& p = session->program_;
  for (const ProgramIsland& island : p.islands) {
    Delegate* delegate = session->delegates_.find(island.delegate);
    if (!delegate)
      return failed_precondition("failed to load island " + std::to_string(island.id) + ": it runs on '" +
                                 island.delegate + "', which profile '" + profile.name + "' does not enable");
    InitContext ctx{delegate_options(profile, island.delegate), island.id};
    auto handle = delegate->init(island.blob, ctx);
    if (!handle.is_ok()) return handle.status();
    session->handles_.push_back(std::move(handle).value());
  }
  for (const ProgramTensor& t : p.tensors) session->slots_.emplace_back(t.type);
  for (const auto& [idx, data] : p.constants) session->slots_[idx] = data;
  return session;
}

std::vector<TensorType> Session::input_types() const {
  std::vector<TensorType> types;
  for (int i : program_.inputs) types.push_back(program_.tensors[i].type);
  return types;
}

std::vector<TensorType> Session::output_types() const {
  std::vector<TensorType> types;
  for (int i : program_.outputs) types.push_back(program_.tensors[i].type);
  return types;
}

std::vector<std::string> Session::input_names() const {
  std::vector<std::string> names;
  for (int i : program_.inputs) names.push_back(program_.tensors[i].name);
  return names;
}

std::vector<std::string> Session::output_names() const {
  std::vector<std::string> names;
  for (int i : program_.outputs) names.push_back(program_.tensors[i].name);
  return names;
}

Result<std::vector<Tensor>> Session::run(const std::vector<Tensor>& inputs, RunStats* stats) {
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  const auto run_start = Clock::now();
  if (inputs.size() != program_.inputs.size())
    return invalid_argument("failed to run: the model takes " + std::to_string(program_.inputs.size()) +
                            " inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ProgramTensor& want = program_.tensors[program_.inputs[i]];
    if (inputs[i].type() != want.type)
      return invalid_argument("failed to run: input '" + want.name + "' must be " + want.type.to_string() + ", got " +
                              inputs[i].type().to_string());
    std::memcpy(slots_[program_.inputs[i]].raw(), inputs[i].raw(), inputs[i].byte_size());
  }

  ExecContext ctx{run_count_++};
  std::vector<TensorRef> in_refs, out_refs;
  const auto refs = [this](const std::vector<int>& idx, std::vector<TensorRef>& out) {
    out.clear();
    for (int i : idx) out.push_back({&slots_[i].type(), slots_[i].raw()});
  };
  for (const ProgramStep& step : program_.steps) {
    const auto t0 = Clock::now();
    if (step.kind != StepKind::kRunIsland) continue;  // host-only programs have no real handoffs yet
    const ProgramIsland& island = program_.islands[step.island];
    refs(island.inputs, in_refs);
    refs(island.outputs, out_refs);
    Status s = handles_[step.island]->execute(ctx, in_refs, out_refs);
    if (!s.is_ok()) return s.with_context("island " + std::to_string(island.id) + " (" + island.delegate + "): ");
    if (stats) stats->steps.push_back({"island " + std::to_string(island.id) + " (" + island.delegate + ")", ms_since(t0)});
  }

  std::vector<Tensor> outputs;
  for (int i : program_.outputs) outputs.push_back(slots_[i]);
  if (stats) stats->total_ms = ms_since(run_start);
  return outputs;
}

}  // namespace hetsched
