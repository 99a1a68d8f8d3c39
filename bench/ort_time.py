#!/usr/bin/env python3
"""ONNX Runtime's CPU latency for one model, for machines with ORT's Python
package and no Node.js (the GPU machine), beside `hetsched bench`:

  python3 bench/ort_time.py MODEL SHAPE THREADS [p50|min]     e.g. resnet50.onnx 1x3x224x224 16

CPU execution provider, intra-op threads = THREADS, inter-op 1, sequential;
5 warm-up runs, then at least 20 timed `session.run` calls (up to 200 in
2 s) on one normal(0, 1) input (seed 1). Prints the median (or with
`min`, the best run) in ms.
"""
import sys
import time

import numpy as np
import onnxruntime as ort


def main():
    if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and sys.argv[4] not in ("p50", "min")):
        sys.exit(__doc__)
    model, shape, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(1).standard_normal([int(d) for d in shape.split("x")]).astype(np.float32)
    feed = {session.get_inputs()[0].name: x}
    for _ in range(5):
        session.run(None, feed)
    times = []
    end = time.perf_counter() + 2.0
    while len(times) < 20 or (time.perf_counter() < end and len(times) < 200):
        start = time.perf_counter()
        session.run(None, feed)
        times.append((time.perf_counter() - start) * 1e3)
    best = len(sys.argv) == 5 and sys.argv[4] == "min"
    print(f"{(np.min(times) if best else np.median(times)):.3f}")


if __name__ == "__main__":
    main()
