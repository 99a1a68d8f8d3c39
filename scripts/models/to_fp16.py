#!/usr/bin/env python3
"""Converts an fp32 ONNX model to fp16: every float initializer, Constant and
graph input/output becomes FLOAT16, Casts to FLOAT cast to FLOAT16, and
ConstantOfShape fills in FLOAT16 — except what must stay float (Resize's
roi and scales, Upsample's scales, and BatchNormalization statistics past
fp16's range at opset 15+); other values past the range are reported. External data is read and written inline.
With --bf16 the same to BFLOAT16 (f32's range: only Resize's and Upsample's
inputs stay float), rounding each f32 to nearest even (numpy has no bfloat16;
the bits are made here).
Works with Debian 12's python3-onnx (1.12) on models of any opset.

  python3 scripts/models/to_fp16.py in.onnx out_fp16.onnx
  python3 scripts/models/to_fp16.py --bf16 in.onnx out_bf16.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def overflows(t):
    if t.data_type != TensorProto.FLOAT:
        return False
    a = numpy_helper.to_array(t)
    return a.size > 0 and bool(np.abs(a[np.isfinite(a)]).max(initial=0) > 65504)


TARGET = TensorProto.FLOAT16  # or BFLOAT16 (--bf16)


def bfloat16_bits(a):
    """The bfloat16 bits nearest each f32 of `a`, ties to even; NaN stays a
    (quiet) NaN, as hetsched's graph/dtype.h makes them."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(a)
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)
    return rounded


def half(t):
    if t.data_type != TensorProto.FLOAT:
        return t
    a = numpy_helper.to_array(t)
    if TARGET == TensorProto.FLOAT16:
        return numpy_helper.from_array(a.astype(np.float16), t.name)
    h = TensorProto(name=t.name, data_type=TensorProto.BFLOAT16, dims=t.dims)
    h.raw_data = bfloat16_bits(a).astype("<u2").tobytes()
    return h


def keep_float(graph, opset):
    """Values that must stay float: Resize's roi and scales (the op takes them
    as tensor(float) only) and Upsample's scales; BatchNormalization's running
    mean and variance where fp16 cannot hold them (opset 15+ lets them differ
    from the input's type; trained models have variances past 65504)."""
    keep = set()
    for n in graph.node:
        if n.op_type == "Resize":
            keep.update(n.input[1:3])
        elif n.op_type == "Upsample":
            keep.update(n.input[1:2])
    values = {t.name: t for t in graph.initializer}
    for n in graph.node:
        if n.op_type == "Constant" and n.attribute and n.attribute[0].type == onnx.AttributeProto.TENSOR:
            values[n.output[0]] = n.attribute[0].t
    for n in graph.node:
        if n.op_type == "BatchNormalization" and opset >= 15 and TARGET == TensorProto.FLOAT16:
            stats = [i for i in n.input[3:5] if i in values]
            if any(overflows(values[i]) for i in stats):
                keep.update(n.input[3:5])
    keep.discard("")
    return keep


def retype(value_info):
    tt = value_info.type.tensor_type
    if tt.elem_type == TensorProto.FLOAT:
        tt.elem_type = TARGET


def main():
    global TARGET
    args = sys.argv[1:]
    if args and args[0] == "--bf16":
        TARGET = TensorProto.BFLOAT16
        args = args[1:]
    if len(args) != 2:
        raise SystemExit(__doc__)
    model = onnx.load(args[0])  # external data loaded beside it
    g = model.graph
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    keep = keep_float(g, opset)
    for i, t in enumerate(list(g.initializer)):
        if t.name in keep:
            continue
        if overflows(t) and TARGET == TensorProto.FLOAT16:
            print(f"to_fp16: initializer '{t.name}' exceeds fp16's range (65504): it becomes inf", file=sys.stderr)
        g.initializer[i].CopyFrom(half(t))
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        retype(vi)
    for node in g.node:
        for a in node.attribute:
            if node.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TARGET
            if a.type == onnx.AttributeProto.TENSOR and not (node.op_type == "Constant" and node.output[0] in keep):
                if overflows(a.t) and TARGET == TensorProto.FLOAT16:
                    print(f"to_fp16: constant '{node.output[0]}' exceeds fp16's range (65504): it becomes inf",
                          file=sys.stderr)
                a.t.CopyFrom(half(a.t))
    for t in g.initializer:
        t.ClearField("data_location")
        del t.external_data[:]
    onnx.save(model, args[1])


if __name__ == "__main__":
    main()
