#include "scheduler/pipeline.h"

#include "partitioner/partitioner.h"
#include "scheduler/compiler.h"
#include "scheduler/limits.h"
#include "scheduler/model_loader.h"
#include "scheduler/partition_profile.h"
#include "scheduler/program_file.h"

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

Result<std::unique_ptr<Session>> open_session(const std::string& model_path, const Profile& profile,
                                              const InputShapes& input_shapes) {
  if (model_format_of(model_path) == ModelFormat::kProgram) {
    if (!input_shapes.empty())
      return invalid_argument("--input-shape does not apply to a compiled program (its shapes are fixed)");
    HS_ASSIGN_OR_RETURN(Program program, read_program_file(model_path));
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
