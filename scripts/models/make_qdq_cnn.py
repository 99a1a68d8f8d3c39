#!/usr/bin/env python3
"""Writes a small conv net in QDQ form (opset 13, seeded random weights, no
download) with onnx.helper alone, laid out as ONNX Runtime's quantization
tool writes one (quantize_static, QuantFormat.QDQ, per_channel=True):
int8 per-channel weights and int32 biases behind DequantizeLinear, u8
activations through QuantizeLinear/DequantizeLinear pairs.

  /usr/bin/python3 scripts/models/make_qdq_cnn.py test/data/models18/qdq_cnn_op13.onnx

  x [1,3,16,16] -> Q/DQ -> Conv 3x3 (8, pads 1) -> Relu -> Q/DQ -> Conv 3x3 stride 2 (12) -> Q/DQ
    -> GlobalAveragePool -> Q/DQ -> Flatten -> Gemm (10, transB) -> Q/DQ -> y [1,10]

The activation scales are those a calibration on inputs in [0, 1) gives
(measured once with the fp32 net and rounded); test/quant_ops_test.cc
compares hetsched with ONNX Runtime's output on it.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv(x, w, b, stride=1):
    """fp32 Conv (pads 1, NCHW) by im2col, for calibration."""
    n, c, h, wd = x.shape
    m, _, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    oh, ow = (h + 2 - k) // stride + 1, (wd + 2 - k) // stride + 1
    cols = np.stack([xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride] for i in range(k) for j in range(k)], 2)
    return np.einsum("nckhw,mck->nmhw", cols, w.reshape(m, c, k * k)) + b.reshape(1, m, 1, 1)


def calibrate(rng, w1, b1, w2, b2, wf, bf):
    """The fp32 net's activation ranges on 8 inputs in [0, 1), as a
    calibration pass measures them."""
    x = rng.random([8, 3, 16, 16]).astype(np.float32)
    r1 = np.maximum(conv(x, w1, b1), 0)
    c2 = conv(r1, w2, b2, 2)
    g = c2.mean(axis=(2, 3))
    logits = g @ wf.T + bf
    return r1, c2, g, logits


def u8_params(a):
    """u8 scale and zero point over the range of `a` extended to include 0
    (ORT's MinMax calibration)."""
    lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
    scale = (hi - lo) / 255
    return scale, int(round(-lo / scale))


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    rng = np.random.default_rng(13)
    inits, nodes = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(array, name))
        return name

    def qdq(x, name, scale, zp=0):
        """A u8 QuantizeLinear/DequantizeLinear pair (fake quantization)."""
        s = const(name + "_scale", np.array(scale, np.float32))
        z = const(name + "_zp", np.array(zp, np.uint8))
        nodes.append(helper.make_node("QuantizeLinear", [x, s, z], [name + "_q"], name=name + "_Q"))
        nodes.append(helper.make_node("DequantizeLinear", [name + "_q", s, z], [name + "_dq"], name=name + "_DQ"))
        return name + "_dq", scale

    def weight(name, w, in_scale):
        """int8 symmetric per-output-channel weights and their int32 bias scale."""
        w_scale = (np.abs(w).reshape(w.shape[0], -1).max(axis=1) / 127).astype(np.float32)
        wq = np.clip(np.rint(w / w_scale.reshape([-1] + [1] * (w.ndim - 1))), -127, 127).astype(np.int8)
        args = [const(name + "_q", wq), const(name + "_scale", w_scale),
                const(name + "_zp", np.zeros(w.shape[0], np.int8))]
        nodes.append(helper.make_node("DequantizeLinear", args, [name + "_dq"], name=name + "_DQ", axis=0))
        return name + "_dq", (np.float32(in_scale) * w_scale).astype(np.float32)

    def bias(name, b, b_scale):
        bq = np.rint(b / b_scale).astype(np.int32)
        args = [const(name + "_q", bq), const(name + "_scale", b_scale), const(name + "_zp", np.zeros(b.shape, np.int32))]
        nodes.append(helper.make_node("DequantizeLinear", args, [name + "_dq"], name=name + "_DQ", axis=0))
        return name + "_dq"

    w1_f = (rng.standard_normal([8, 3, 3, 3]) * 0.3).astype(np.float32)
    b1_f = (rng.standard_normal(8) * 0.1).astype(np.float32)
    w2_f = (rng.standard_normal([12, 8, 3, 3]) * 0.2).astype(np.float32)
    b2_f = (rng.standard_normal(12) * 0.1).astype(np.float32)
    wf_f = (rng.standard_normal([10, 12]) * 0.5).astype(np.float32)
    bf_f = (rng.standard_normal(10) * 0.1).astype(np.float32)
    r1, c2, g, logits = calibrate(rng, w1_f, b1_f, w2_f, b2_f, wf_f, bf_f)

    x, s = qdq("x", "in", 1 / 255.0)
    w1, bs1 = weight("w1", w1_f, s)
    b1 = bias("b1", b1_f, bs1)
    nodes.append(helper.make_node("Conv", [x, w1, b1], ["c1"], name="conv1", pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["c1"], ["r1"], name="relu1"))
    x, s = qdq("r1", "a1", *u8_params(r1))
    w2, bs2 = weight("w2", w2_f, s)
    b2 = bias("b2", b2_f, bs2)
    nodes.append(helper.make_node("Conv", [x, w2, b2], ["c2"], name="conv2", pads=[1, 1, 1, 1], strides=[2, 2]))
    x, s = qdq("c2", "a2", *u8_params(c2))
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["g"], name="gap"))
    x, s = qdq("g", "a3", *u8_params(g))
    nodes.append(helper.make_node("Flatten", [x], ["f"], name="flatten"))
    wf, bsf = weight("wf", wf_f, s)
    bf = bias("bf", bf_f, bsf)
    nodes.append(helper.make_node("Gemm", ["f", wf, bf], ["logits"], name="fc", transB=1))
    y, _ = qdq("logits", "out", *u8_params(logits))
    nodes.append(helper.make_node("Identity", [y], ["y"], name="output"))

    graph = helper.make_graph(nodes, "qdq_cnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_qdq_cnn.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])


if __name__ == "__main__":
    main()
