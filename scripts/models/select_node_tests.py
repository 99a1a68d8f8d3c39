#!/usr/bin/env python3
"""Selects the ONNX backend node tests of opsets 18 to 21 that hetsched's
conformance test runs beside Debian's libonnx-testdata (ONNX 1.12, opsets up
to 17), and copies them into the repository.

A case is kept when its model's default-domain opset is 18 to 21 and every
node is in hetsched's op set (or a Constant). A case whose name is also a
1.12 case is the same test regenerated at a newer opset (the Reduce* tests
with axes as an input, opset 18): it is kept under its name plus
"_opset<N>", so the two never share a name in the conformance report.

usage: select_node_tests.py SRC_NODE_DIR OUT_DIR [--old /usr/share/libonnx-testdata/data/node]
SRC_NODE_DIR holds the node tests generated with onnx 1.23
(onnx/backend/test/data/node). Needs python3-onnx (Debian's 1.12 reads the
newer models' protobufs).
"""
import argparse
import os
import re
import shutil

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def hetsched_ops():
    """The op names registered by graph/ops_*.cc (the schemas' register_* functions)."""
    ops = {"Constant"}
    graph = os.path.join(REPO, "graph")
    for name in os.listdir(graph):
        if not (name.startswith("ops_") and name.endswith(".cc")):
            continue
        text = open(os.path.join(graph, name)).read()
        start = text.find("\nvoid register_")
        ops.update(re.findall(r'"([A-Z][A-Za-z]*)"', text[start:]))
    return ops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--old", default="/usr/share/libonnx-testdata/data/node")
    args = ap.parse_args()
    ops = hetsched_ops()
    old = set(os.listdir(args.old)) if os.path.isdir(args.old) else set()
    kept, total = [], 0
    for case in sorted(os.listdir(args.src)):
        model = onnx.load(os.path.join(args.src, case, "model.onnx"), load_external_data=False)
        opsets = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
        if not opsets or not 18 <= opsets[0] <= 21:
            continue
        if any(n.domain not in ("", "ai.onnx") or n.op_type not in ops for n in model.graph.node):
            continue
        name = case + ("_opset%d" % opsets[0] if case in old else "")
        dst = os.path.join(args.out, name)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(os.path.join(args.src, case), dst)
        for dirpath, _, files in os.walk(dst):
            total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files)
        kept.append(name)
    print("%d cases, %d bytes" % (len(kept), total))


if __name__ == "__main__":
    main()
