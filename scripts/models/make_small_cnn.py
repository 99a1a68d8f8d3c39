#!/usr/bin/env python3
"""Writes a small image classifier (fp32, opset 18, seeded random weights,
no download) with onnx.helper alone: the CNN the fp16 tests convert with
to_fp16.py (test/data/models18/cnn_op18.onnx and cnn_op18_fp16.onnx).

  /usr/bin/python3 scripts/models/make_small_cnn.py test/data/models18/cnn_op18.onnx
  /usr/bin/python3 scripts/models/to_fp16.py test/data/models18/cnn_op18.onnx test/data/models18/cnn_op18_fp16.onnx

  x [1,3,17,19] → Conv 3x3 (8) → BatchNormalization → Relu → MaxPool 2x2
    → Conv 3x3 depthwise (8) → Sigmoid·x (SiLU) → Conv 1x1 (12) → Add (a per-channel constant)
    → GlobalAveragePool → Flatten → Gemm (10) → Softmax → y [1,10]

Odd spatial sizes, so no dim is a multiple of a workgroup or vector width.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    rng = np.random.default_rng(11)

    def init(name, shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        init("w1", [8, 3, 3, 3]), init("b1", [8], 0.1),
        numpy_helper.from_array((1 + 0.1 * rng.standard_normal(8)).astype(np.float32), "bn_scale"),
        init("bn_bias", [8], 0.1), init("bn_mean", [8], 0.1),
        numpy_helper.from_array((0.5 + rng.random(8)).astype(np.float32), "bn_var"),
        init("w2", [8, 1, 3, 3]), init("w3", [12, 8, 1, 1]), init("c3", [1, 12, 1, 1], 0.1),
        init("wf", [10, 12]), init("bf", [10], 0.1),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["n1"]),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=8),
        helper.make_node("Sigmoid", ["c2"], ["s2"]),
        helper.make_node("Mul", ["c2", "s2"], ["a2"]),
        helper.make_node("Conv", ["a2", "w3"], ["c3o"]),
        helper.make_node("Add", ["c3o", "c3"], ["c3b"]),
        helper.make_node("GlobalAveragePool", ["c3b"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], axis=1),
    ]
    graph = helper.make_graph(nodes, "small_cnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 17, 19])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="make_small_cnn.py")
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
