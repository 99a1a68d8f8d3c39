// The CPU delegate: runs an island on the host, with XNNPACK where it
// covers the island's nodes and the portable kernels elsewhere.
//
// Its compiled blob is the island's sub-graph, serialized (graph_serialize.h);
// the engine is chosen at init, not at compile. init() deserializes the blob
// once, cuts the node list into XNNPACK segments and portable runs
// (xnnpack/segment_plan.h), creates one XNNPACK runtime per segment (weights
// packed then), allocates the tensors that cross between steps and resolves
// each portable node's kernel, so execute() only runs.
#pragma once

#include <memory>
#include <string>

#include "delegates/delegate.h"

namespace hetsched::cpu {

class ThreadPool;

// Options: "threads" (0 = all hardware threads), "engine": "xnnpack" (the
// default: XNNPACK segments where it covers the nodes, portable kernels for
// the rest; all portable, with a warning, where XNNPACK cannot initialise)
// or "portable" (the portable kernels only).
Result<std::unique_ptr<Delegate>> make_cpu_delegate(const DelegateOptions& options);

// How an initialised CPU island runs, for tests and previews.
struct CpuEngineCoverage {
  // "xnnpack" or "portable": what the island runs on after any fallback
  // (xnnpack: XNNPACK segments or fast kernels, fast/fast_op.h).
  std::string engine;
  int xnnpack_ops = 0;
  int xnnpack_segments = 0;
  int portable_ops = 0;  // every op not in an XNNPACK segment
  int fast_ops = 0;      // of those, the ops on fast kernels (fast/fast_op.h)
  // NHWC Concat inputs their producers write into the Concat's output
  // (island_arena.h's concat_input_in_place): copies spared.
  int concat_inputs_in_place = 0;
};
// The coverage of a handle made by the CPU delegate's init(); nullptr for
// other handles. Valid as long as the handle.
const CpuEngineCoverage* cpu_engine_coverage(const IslandHandle& handle);

// The thread pool a handle made by the CPU delegate's init() runs on: the
// delegate's one pool (thread_pool.h), shared by all its islands; nullptr
// for other handles or where the system refused a thread. For tests.
const ThreadPool* cpu_thread_pool(const IslandHandle& handle);

}  // namespace hetsched::cpu
