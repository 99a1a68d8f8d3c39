#!/usr/bin/env python3
"""Writes a FusedMBConv-like model (fp32, opset 13, seeded random weights, no
download) with onnx.helper alone: EfficientNetV2's first stage, where each
block ends conv -> SiLU -> Add(its input), the pattern the CPU delegate's
conv groups take whole (ConvGroup::add_last; docs/models.md, session 24).

  /usr/bin/python3 scripts/models/make_fused_mbconv.py fused_mbconv.onnx
  build/cli/hetsched bench fused_mbconv.onnx --threads 1 --profile-ops

  x [1,3,224,224] → Conv 3x3 stride 2 (24) → SiLU → a0
    → Conv 3x3 (24) → SiLU → Add(a0) → r1
    → Conv 3x3 (24) → SiLU → Add(r1) → Conv 1x1 (32) → y [1,32,112,112]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    rng = np.random.default_rng(0)

    def init(name, shape, scale):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [init("w0", (24, 3, 3, 3), 0.3), init("b0", (24,), 0.1), init("w1", (24, 24, 3, 3), 0.07),
             init("b1", (24,), 0.1), init("w2", (24, 24, 3, 3), 0.07), init("b2", (24,), 0.1)]
    rng = np.random.default_rng(1)
    inits.append(init("w3", (32, 24, 1, 1), 0.2))

    def silu(x, y):
        return [helper.make_node("Sigmoid", [x], [y + "_s"]), helper.make_node("Mul", [x, y + "_s"], [y])]

    conv3 = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], strides=[2, 2], **conv3), *silu("c0", "a0"),
             helper.make_node("Conv", ["a0", "w1", "b1"], ["c1"], **conv3), *silu("c1", "a1"),
             helper.make_node("Add", ["a1", "a0"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], **conv3), *silu("c2", "a2"),
             helper.make_node("Add", ["a2", "r1"], ["r2"]),
             helper.make_node("Conv", ["r2", "w3"], ["y"], kernel_shape=[1, 1])]
    graph = helper.make_graph(nodes, "fused_mbconv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 224, 224])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 112, 112])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])
    print("wrote", sys.argv[1])


if __name__ == "__main__":
    main()
