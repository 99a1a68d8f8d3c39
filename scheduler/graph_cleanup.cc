#include "scheduler/graph_cleanup.h"

#include <spdlog/spdlog.h>

#include "delegates/registry.h"
#include "graph/passes/constant_folding.h"
#include "graph/passes/crop_conv_taps.h"
#include "graph/passes/dead_nodes.h"
#include "graph/passes/fold_batch_norm.h"
#include "graph/passes/fold_conv_affine.h"
#include "graph/passes/fold_input_affine.h"
#include "graph/passes/fuse_conv_activation.h"
#include "graph/passes/fuse_hard_swish.h"
#include "graph/passes/lower_einsum.h"
#include "graph/passes/remove_identity.h"

namespace hetsched {

Result<CleanupStats> cleanup_graph(Graph& graph, const InputShapes& input_shapes) {
  CleanupStats stats;
  HS_RETURN_IF_ERROR(apply_input_shapes(graph, input_shapes));
  HS_ASSIGN_OR_RETURN(stats.folded, fold_constants(graph, reference_node_evaluator()));
  HS_ASSIGN_OR_RETURN(stats.einsums_lowered, lower_einsum(graph));
  HS_ASSIGN_OR_RETURN(stats.identities_removed, remove_identity_nodes(graph));
  HS_ASSIGN_OR_RETURN(stats.batch_norms_folded, fold_batch_norm_into_conv(graph));
  HS_ASSIGN_OR_RETURN(stats.affine_folded, fold_conv_affine(graph));
  HS_ASSIGN_OR_RETURN(stats.conv_taps_cropped, crop_conv_taps(graph));
  HS_ASSIGN_OR_RETURN(stats.hard_swishes_fused, fuse_hard_swish(graph));
  HS_ASSIGN_OR_RETURN(stats.input_affine_folded, fold_input_affine(graph));
  HS_ASSIGN_OR_RETURN(stats.activations_fused, fuse_conv_activation(graph));
  HS_ASSIGN_OR_RETURN(stats.dead_removed, remove_dead_nodes(graph));
  spdlog::debug(
      "[import] clean-up of '{}': {} folded, {} Einsums lowered, {} identities removed, {} batch norms folded, "
      "{} affine steps folded, {} convs' dead taps cropped, {} HardSwish fused, {} input affine steps folded, {} activations fused, "
      "{} dead nodes removed; {} nodes left",
      graph.name(), stats.folded, stats.einsums_lowered, stats.identities_removed, stats.batch_norms_folded, stats.affine_folded,
      stats.conv_taps_cropped, stats.hard_swishes_fused, stats.input_affine_folded, stats.activations_fused,
      stats.dead_removed, graph.num_nodes());
  return stats;
}

}  // namespace hetsched
