#!/usr/bin/env python3
"""ONNX Runtime's per-node kernel times from its profiler, for machines with
ORT's Python package and no Node.js (the GPU machine), beside `hetsched
bench M --profile-ops` (scripts/ort/node_profile.js does the same where
Node is):

  python3 bench/ort_profile.py MODEL SHAPE THREADS RUNS     e.g. mnasnet1_0.onnx 1x3x224x224 1 300

CPU execution provider, intra-op threads = THREADS, inter-op 1; RUNS runs
on one normal(0, 1) input (seed 1). Prints the sum of the nodes' medians,
then each node's median kernel time in ms, slowest first, with its op and
name (the name of its output for the nodes ORT fused). The profiler adds a
few microseconds a node: on models of many small nodes the sum outgrows a
run's time (MobileNetV3-Small: 2.8 ms of nodes against a 1.73 ms run).
"""
import collections
import json
import sys

import numpy as np
import onnxruntime as ort


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    model, shape, threads, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_profiling = True
    options.profile_file_prefix = "/tmp/ort_profile"
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(1).standard_normal([int(d) for d in shape.split("x")]).astype(np.float32)
    feed = {session.get_inputs()[0].name: x}
    for _ in range(runs):
        session.run(None, feed)
    with open(session.end_profiling()) as f:
        events = json.load(f)
    times = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            times[(e["args"].get("op_name", "?"), e["name"][: -len("_kernel_time")])].append(e["dur"] / 1000)
    rows = sorted(((np.median(v), op, name) for (op, name), v in times.items()), reverse=True)
    print("node kernels %.3f ms" % sum(r[0] for r in rows))
    for t, op, name in rows:
        print("  %.3f ms  %-12s %s" % (t, op, name))


if __name__ == "__main__":
    main()
