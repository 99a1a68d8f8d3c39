#!/usr/bin/env python3
"""Writes an ONNX model's Pad -> AveragePool pairs as PyTorch 2.x's exporters
write avg_pool2d(padding=p): one AveragePool with `pads` and
count_include_pad=1 (torch 1.13 wrote a zero Pad before an unpadded pool).
For measuring that form on a machine whose PyTorch writes the other
(docs/models.md, session 22: Inception v3).
  python3 scripts/models/fold_pad_into_avgpool.py IN.onnx OUT.onnx
Only constant-mode zero Pads of H and W whose output that pool alone reads.
"""
import sys

import onnx
from onnx import helper, numpy_helper


def constant_array(graph, name):
    for init in graph.initializer:
        if init.name == name:
            return numpy_helper.to_array(init)
    for node in graph.node:
        if node.op_type == "Constant" and node.output[0] == name:
            return numpy_helper.to_array(node.attribute[0].t)
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model = onnx.load(sys.argv[1])
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output}
    readers = {}
    for n in graph.node:
        for i in n.input:
            readers[i] = readers.get(i, 0) + 1
    dropped, folded = set(), 0
    for pool in graph.node:
        pad = producer.get(pool.input[0]) if pool.op_type == "AveragePool" else None
        if pad is None or pad.op_type != "Pad" or readers.get(pad.output[0]) != 1 or len(pad.input) < 2:
            continue
        mode = [a.s for a in pad.attribute if a.name == "mode"]
        pads = constant_array(graph, pad.input[1])
        value = constant_array(graph, pad.input[2]) if len(pad.input) > 2 and pad.input[2] else None
        if (mode and mode[0] != b"constant") or pads is None or len(pads) != 8 or any(pads[[0, 1, 4, 5]]) \
                or (value is not None and float(value) != 0.0) or any(a.name == "pads" and any(a.ints) for a in pool.attribute):
            continue
        kept = [a for a in pool.attribute if a.name not in ("pads", "count_include_pad")]
        del pool.attribute[:]
        pool.attribute.extend(kept + [helper.make_attribute("pads", [int(p) for p in pads[[2, 3, 6, 7]]]),
                                      helper.make_attribute("count_include_pad", 1)])
        pool.input[0] = pad.input[0]
        dropped.add(pad.name)
        folded += 1
    nodes = [n for n in graph.node if n.name not in dropped]
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.save(model, sys.argv[2])
    print(f"{folded} Pad(s) folded into their AveragePool")


if __name__ == "__main__":
    main()
