#include "scheduler/pipeline.h"

#include "partitioner/partitioner.h"
#include "scheduler/compiler.h"
#include "scheduler/limits.h"
#include "scheduler/model_loader.h"
#include "scheduler/partition_profile.h"
#include "scheduler/program_file.h"
#include "scheduler/shape_variants.h"

namespace hetsched {

Result<PlannedModel> plan_model(const Graph& graph, const Profile& profile) {
  HS_RETURN_IF_ERROR(check_tensor_limits(graph, profile.limits));
  HS_ASSIGN_OR_RETURN(DelegateSet delegates, DelegateSet::create(profile));
  HS_ASSIGN_OR_RETURN(CostTable costs, cost_table_for(profile, delegates.ordered()));
  PartitionOptions options = partition_options_from(profile);
  options.costs = &costs;
  HS_ASSIGN_OR_RETURN(PartitionPlan plan, partition(graph, delegates.ordered(), options));
  return PlannedModel{std::move(plan), std::move(delegates), std::move(costs)};
}

Result<Program> build_program(const Graph& graph, const Profile& profile) {
  HS_ASSIGN_OR_RETURN(PlannedModel planned, plan_model(graph, profile));
  return compile_program(graph, planned.plan, planned.delegates, profile);
}

Result<std::unique_ptr<Session>> open_session_for_graph(const Graph& graph, const Profile& profile) {
  HS_ASSIGN_OR_RETURN(Program program, build_program(graph, profile));
  return Session::create(std::move(program), profile);
}

Result<std::vector<Program>> build_program_variants(const std::string& model_path, const Profile& profile,
                                                   const std::vector<InputShapes>& variants) {
  std::vector<Program> programs;
  for (const InputShapes& shapes : variants.empty() ? std::vector<InputShapes>{{}} : variants) {
    HS_ASSIGN_OR_RETURN(Graph graph, load_model(model_path, shapes));
    HS_ASSIGN_OR_RETURN(Program program, build_program(graph, profile));
    programs.push_back(std::move(program));
  }
  HS_RETURN_IF_ERROR(check_shape_variants(programs));
  return programs;
}

Result<std::vector<std::unique_ptr<Session>>> open_shape_variants(const std::string& model_path,
                                                                  const Profile& profile,
                                                                  const std::vector<InputShapes>& variants) {
  std::vector<Program> programs;
  if (model_format_of(model_path) == ModelFormat::kProgram) {
    HS_ASSIGN_OR_RETURN(std::vector<Program> compiled, read_program_variants_file(model_path));
    if (variants.empty()) programs = std::move(compiled);
    for (const InputShapes& shapes : variants) {
      auto picked = find_shape_variant(compiled, shapes);
      if (!picked.is_ok()) return picked.status().with_context("failed to open program '" + model_path + "': ");
      programs.push_back(compiled[*picked]);
    }
    HS_RETURN_IF_ERROR(check_shape_variants(programs));
  } else {
    HS_ASSIGN_OR_RETURN(programs, build_program_variants(model_path, profile, variants));
  }
  std::vector<std::unique_ptr<Session>> sessions;
  for (Program& program : programs) {
    HS_RETURN_IF_ERROR(check_program_limits(program, profile.limits));
    HS_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(std::move(program), profile));
    sessions.push_back(std::move(session));
  }
  return sessions;
}

Result<std::unique_ptr<Session>> open_session(const std::string& model_path, const Profile& profile,
                                              const InputShapes& input_shapes) {
  if (model_format_of(model_path) == ModelFormat::kProgram) {
    HS_ASSIGN_OR_RETURN(std::vector<Program> variants, read_program_variants_file(model_path));
    auto picked = find_shape_variant(variants, input_shapes);
    if (!picked.is_ok()) return picked.status().with_context("failed to open program '" + model_path + "': ");
    Program& program = variants[*picked];
    HS_RETURN_IF_ERROR(check_program_limits(program, profile.limits));
    return Session::create(std::move(program), profile);
  }
  // The graph (all the model's weights) is dropped once compiled, before the
  // delegates make their own copies at init: one copy fewer at peak memory.
  Result<Program> program = [&]() -> Result<Program> {
    HS_ASSIGN_OR_RETURN(Graph graph, load_model(model_path, input_shapes));
    return build_program(graph, profile);
  }();
  if (!program.is_ok()) return program.status();
  HS_RETURN_IF_ERROR(check_program_limits(*program, profile.limits));
  return Session::create(std::move(*program), profile);
}

}  // namespace hetsched
