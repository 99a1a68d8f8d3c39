#!/usr/bin/env python3
"""Expected outputs for test/kernels_elementwise_test.cc and test/kernels_nn_test.cc.

Run once, paste the printed literals into the tests:

    python3 test/data/gen_kernel_cases.py

Inputs are made by pattern(), which the tests compute the same way: values
k/4 in [-1.5, 1.5], so sums of products are exact in f32 and most expected
values are exact. Conv and the pools are written out here as plain loops over
the ONNX definitions (not via the kernels under test); the ceil_mode and
count_include_pad rules are those of PyTorch and ONNX Runtime.
"""
import math

import numpy as np


def pattern(shape, seed):
    n = int(np.prod(shape)) if shape else 1
    i = np.arange(n, dtype=np.int64)
    return (((i * 7 + seed) % 13 - 6) * 0.25).reshape(shape)


def cpp_float(v):
    text = f"{v:.9g}"
    if "." not in text and "e" not in text:
        text += ".0"
    return text + "f"


def emit(name, array):
    flat = np.asarray(array, dtype=np.float64).reshape(-1)
    body = ", ".join(cpp_float(v) for v in flat)
    print(f"// {name}: shape {list(np.shape(array))}")
    print(f"{{{body}}}")


def conv2d(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    pt, pl, pb, pr = pads
    xp = np.zeros((n, c, h + pt + pb, wd + pl + pr))
    xp[:, :, pt:pt + h, pl:pl + wd] = x
    dkh, dkw = (kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1
    oh = (h + pt + pb - dkh) // strides[0] + 1
    ow = (wd + pl + pr - dkw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for ni in range(n):
        for mi in range(m):
            g = mi // mg
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0
                    for ci in range(cg):
                        for a in range(kh):
                            for bb in range(kw):
                                acc += (xp[ni, g * cg + ci, i * strides[0] + a * dilations[0],
                                           j * strides[1] + bb * dilations[1]] * w[mi, ci, a, bb])
                    y[ni, mi, i, j] = acc + (b[mi] if b is not None else 0.0)
    return y


def pool_out(size, k, s, pb, pe, d, ceil_mode):
    dk = (k - 1) * d + 1
    span = size + pb + pe - dk
    out = (math.ceil(span / s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + pb:
        out -= 1
    return out


def pool2d(x, kernel, mode, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), ceil_mode=False,
           count_include_pad=False):
    n, c, h, w = x.shape
    pt, pl, pb, pr = pads
    oh = pool_out(h, kernel[0], strides[0], pt, pb, dilations[0], ceil_mode)
    ow = pool_out(w, kernel[1], strides[1], pl, pr, dilations[1], ceil_mode)
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            vals, padded_taps = [], 0
            for a in range(kernel[0]):
                for b in range(kernel[1]):
                    r = i * strides[0] - pt + a * dilations[0]
                    q = j * strides[1] - pl + b * dilations[1]
                    if 0 <= r < h and 0 <= q < w:
                        vals.append(x[:, :, r, q])
                    elif -pt <= r < h + pb and -pl <= q < w + pr:
                        padded_taps += 1
            v = np.stack(vals, axis=-1)
            if mode == "max":
                y[:, :, i, j] = v.max(axis=-1)
            else:
                taps = v.shape[-1] + (padded_taps if count_include_pad else 0)
                y[:, :, i, j] = v.sum(axis=-1) / taps
    return y


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def elementwise_cases():
    a = pattern([2, 3, 4], 0)
    b = pattern([3, 1], 5)
    emit("AddF32Broadcast [2,3,4] + [3,1]", a + b)
    emit("MulBothBroadcast [3,1] * [1,4]", pattern([3, 1], 1) * pattern([1, 4], 2))
    emit("SubOddBroadcast [2,1,3] - [5,1]", pattern([2, 1, 3], 3) - pattern([5, 1], 4))
    emit("DivF32 [2,3] / [3]", pattern([2, 3], 1) / np.array([0.5, -2.0, 4.0]))
    base = np.abs(pattern([2, 3], 2)) + 0.25
    emit("PowF32 |x|+0.25 ^ [3]", base ** np.array([2.0, 0.5, -1.5]))
    x = np.array([-3.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.75, 4.0])
    emit("Sigmoid", 1 / (1 + np.exp(-x)))
    emit("Tanh", np.tanh(x))
    emit("Exp", np.exp(x))
    emit("Sin", np.sin(x))
    emit("Cos", np.cos(x))
    emit("HardSigmoid default", np.clip(0.2 * x + 0.5, 0, 1))
    emit("HardSigmoid alpha=0.5 beta=0.25", np.clip(0.5 * x + 0.25, 0, 1))
    emit("HardSwish", x * np.clip(x / 6 + 0.5, 0, 1))
    pos = np.array([0.25, 1.0, 2.0, 9.0])
    emit("Sqrt", np.sqrt(pos))
    emit("Reciprocal", 1 / np.array([0.25, -2.0, 3.0, 7.0]))


def nn_cases():
    x = pattern([1, 3, 7, 5], 0)
    w = pattern([2, 3, 3, 2], 3)
    emit("ConvStridesDilationsAsymmetricPadsBias", conv2d(x, w, np.array([0.5, -1.0]), strides=(2, 1),
                                                           pads=(1, 0, 0, 2), dilations=(2, 2)))
    emit("ConvGrouped", conv2d(pattern([2, 4, 5, 5], 1), pattern([6, 2, 3, 3], 2), pads=(1, 1, 1, 1), group=2))
    # Depthwise, stride 2, SAME_UPPER on 6x6 with k=3: out 3, total pad 1 -> (0 begin, 1 end).
    emit("ConvDepthwiseSameUpper", conv2d(pattern([1, 3, 6, 6], 4), pattern([3, 1, 3, 3], 5), strides=(2, 2),
                                          pads=(0, 0, 1, 1), group=3))
    # k=2 stride 1 on 3x3: total pad 1; SAME_UPPER pads the end, SAME_LOWER the start.
    xs, ws = pattern([1, 1, 3, 3], 6), pattern([1, 1, 2, 2], 7)
    emit("ConvSameUpper k2", conv2d(xs, ws, pads=(0, 0, 1, 1)))
    emit("ConvSameLower k2", conv2d(xs, ws, pads=(1, 1, 0, 0)))
    # 1-D: x[1,2,7], w[3,2,3], pads [2,1], stride 2 == 2-D with height 1.
    x1 = pattern([1, 2, 7], 8).reshape(1, 2, 1, 7)
    w1 = pattern([3, 2, 3], 9).reshape(3, 2, 1, 3)
    emit("Conv1D", conv2d(x1, w1, strides=(1, 2), pads=(0, 2, 0, 1)))
    emit("ConvPointwiseBias", conv2d(pattern([1, 5, 3, 3], 10), pattern([4, 5, 1, 1], 11),
                                     np.array([1.0, -0.5, 0.25, 0.0])))

    xb = pattern([2, 3, 2, 2], 1)
    scale, bias = np.array([1.0, -0.5, 2.0]), np.array([0.25, 0.0, -1.0])
    mean, var = np.array([0.5, -0.25, 0.0]), np.array([1.0, 0.25, 4.0])
    sh = (1, 3, 1, 1)
    emit("BatchNormalization eps=1e-5",
         (xb - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + 1e-5) * scale.reshape(sh) + bias.reshape(sh))

    emit("MatMul [3,5]x[5,7]", pattern([3, 5], 1) @ pattern([5, 7], 2))
    emit("MatMul batch [2,1,3,4]x[3,4,2]", pattern([2, 1, 3, 4], 3) @ pattern([3, 4, 2], 4))
    emit("MatMul 1-D A [4]x[2,4,3]", pattern([4], 5) @ pattern([2, 4, 3], 6))
    emit("MatMul 1-D B [2,3,4]x[4]", pattern([2, 3, 4], 7) @ pattern([4], 8))
    emit("MatMul 1-D both [4]x[4]", pattern([4], 9) @ pattern([4], 10))
    a, b = pattern([4, 3], 1), pattern([5, 4], 2)
    emit("Gemm transA transB alpha=0.5 beta=2 C[1,5]", 0.5 * a.T @ b.T + 2.0 * pattern([1, 5], 3))
    emit("Gemm C[3,1]", pattern([3, 4], 4) @ pattern([4, 2], 5) + pattern([3, 1], 6))
    emit("Gemm alpha=2 no C", 2.0 * pattern([2, 3], 7) @ pattern([3, 2], 8))

    xp = pattern([1, 2, 6, 7], 2)
    emit("MaxPool k3 s2 ceil", pool2d(xp, (3, 3), "max", strides=(2, 2), ceil_mode=True))
    emit("MaxPool k2 s2 pads[1,1,1,1] ceil drops", pool2d(xp, (2, 2), "max", strides=(2, 2),
                                                          pads=(1, 1, 1, 1), ceil_mode=True))
    emit("MaxPool k2 dil2 pads[0,1,1,0]", pool2d(xp, (2, 2), "max", pads=(0, 1, 1, 0), dilations=(2, 2)))
    x1 = pattern([1, 2, 9], 3)
    emit("MaxPool1D k3 s2 pads[1,1]", pool2d(x1.reshape(1, 2, 1, 9), (1, 3), "max", strides=(1, 2),
                                             pads=(0, 1, 0, 1)))
    xa = pattern([1, 1, 5, 5], 4)
    emit("AveragePool k3 s2 pads1 exclude", pool2d(xa, (3, 3), "avg", strides=(2, 2), pads=(1, 1, 1, 1)))
    emit("AveragePool k3 s2 pads1 include", pool2d(xa, (3, 3), "avg", strides=(2, 2), pads=(1, 1, 1, 1),
                                                   count_include_pad=True))
    xc = pattern([1, 1, 5, 5], 5)
    emit("AveragePool k3 s2 pads[1,1,0,0] ceil include",
         pool2d(xc, (3, 3), "avg", strides=(2, 2), pads=(1, 1, 0, 0), ceil_mode=True, count_include_pad=True))
    # (The last window above reaches past the end pad: 2 of its 3 taps count per dim.)
    # SAME_UPPER k2 s1 on 3x3: pad 1 at the end, excluded from the count.
    emit("AveragePool SAME_UPPER k2", pool2d(pattern([1, 1, 3, 3], 6), (2, 2), "avg", pads=(0, 0, 1, 1)))
    emit("GlobalAveragePool [2,3,3,5]", pattern([2, 3, 3, 5], 7).mean(axis=(2, 3), keepdims=True))

    xs = pattern([2, 3, 4], 1)
    emit("Softmax opset13 axis=1", softmax(xs, 1))
    emit("Softmax opset13 default axis=-1", softmax(xs, 2))
    emit("Softmax opset11 axis=1 (coerced 2x12)", softmax(xs.reshape(2, 12), 1).reshape(2, 3, 4))
    emit("Softmax opset11 axis=2 (coerced 6x4)", softmax(xs.reshape(6, 4), 1).reshape(2, 3, 4))

    xr = pattern([2, 3, 4], 2)
    emit("ReduceMean axes=[1] keepdims=1", xr.mean(axis=1, keepdims=True))
    emit("ReduceMean axes=[0,-1] keepdims=0", xr.mean(axis=(0, 2)))
    emit("ReduceMean all", xr.mean())


if __name__ == "__main__":
    print("// ---- kernels_elementwise_test.cc")
    elementwise_cases()
    print("// ---- kernels_nn_test.cc")
    nn_cases()
