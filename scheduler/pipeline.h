// The whole chain in a few calls: model → plan → program → session.
// Each step is also available on its own (partitioner.h, compiler.h, session.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/shape_inference.h"
#include "partitioner/partition_plan.h"
#include "profile/profile.h"
#include "scheduler/delegate_set.h"
#include "scheduler/program.h"
#include "scheduler/session.h"

namespace hetsched {

struct PlannedModel {
  PartitionPlan plan;
  DelegateSet delegates;
  CostTable costs;  // the figures the plan was predicted with
};

// Makes the profile's delegates and partitions `graph` over them.
Result<PlannedModel> plan_model(const Graph& graph, const Profile& profile);
// plan_model + compile_program.
Result<Program> build_program(const Graph& graph, const Profile& profile);
// build_program + Session::create for a graph already in memory.
Result<std::unique_ptr<Session>> open_session_for_graph(const Graph& graph, const Profile& profile);
// Loads the model once per set of input shapes (none: once, as it is) and
// builds a program for each: the shape variants of one model
// (shape_variants.h), ready for write_program_variants_file.
Result<std::vector<Program>> build_program_variants(const std::string& model_path, const Profile& profile,
                                                   const std::vector<InputShapes>& variants);
// A ready Session per shape variant: of a model file, one per set of shapes
// (build_program_variants); of a .hsp file, the variants that `variants`
// pick (find_shape_variant), or all of them when it is empty.
Result<std::vector<std::unique_ptr<Session>>> open_shape_variants(const std::string& model_path,
                                                                  const Profile& profile,
                                                                  const std::vector<InputShapes>& variants);
// Opens a model file of any accepted format (.onnx, .hsg graph: planned and
// compiled now for `input_shapes`; .hsp program: loaded as compiled, its
// shape variant picked by `input_shapes`, the first without them) as a
// ready Session.
Result<std::unique_ptr<Session>> open_session(const std::string& model_path, const Profile& profile,
                                              const InputShapes& input_shapes = {});

}  // namespace hetsched
