#!/usr/bin/env python3
"""Converts an fp32 ONNX model to fp16: every float initializer, Constant and
graph input/output becomes FLOAT16, Casts to FLOAT cast to FLOAT16, and
ConstantOfShape fills in FLOAT16. External data is read and written inline.
Works with Debian 12's python3-onnx (1.12) on models of any opset.

  python3 scripts/models/to_fp16.py in.onnx out_fp16.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def half(t):
    if t.data_type != TensorProto.FLOAT:
        return t
    h = numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)
    return h


def retype(value_info):
    tt = value_info.type.tensor_type
    if tt.elem_type == TensorProto.FLOAT:
        tt.elem_type = TensorProto.FLOAT16


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    model = onnx.load(sys.argv[1])  # external data loaded beside it
    g = model.graph
    for i, t in enumerate(list(g.initializer)):
        g.initializer[i].CopyFrom(half(t))
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        retype(vi)
    for node in g.node:
        for a in node.attribute:
            if node.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
            if a.type == onnx.AttributeProto.TENSOR:
                a.t.CopyFrom(half(a.t))
    for t in g.initializer:
        t.ClearField("data_location")
        del t.external_data[:]
    onnx.save(model, sys.argv[2])


if __name__ == "__main__":
    main()
