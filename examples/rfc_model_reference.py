#!/usr/bin/env python3
"""Independent reference for the RFC's UnifiedVgfVulkanModel, in numpy.

Mirrors the RFC's PyTorch forward() line by line (float32 throughout) and
prints the output for the RFC's input, linspace(-0.8, 0.8, 192) as 1x3x8x8,
as C++ float literals for test/rfc_model_test.cc.
Run with Debian's python: /usr/bin/python3 examples/rfc_model_reference.py
"""
import numpy as np

x = np.linspace(-0.8, 0.8, 1 * 3 * 8 * 8, dtype=np.float32).reshape(1, 3, 8, 8)
channel_index = np.array([2, 0, 1])
row_index = np.array([3, 1, 2, 0])
col_gather_index = np.tile(np.array([3, 1, 2, 0]).reshape(1, 1, 1, 4), (1, 3, 4, 1))

x = np.swapaxes(x, -1, -2)                                        # x.transpose(-1, -2)
x = x.reshape(1, 3, 4, 2, 4, 2).mean(axis=(3, 5), dtype=np.float32)  # avg_pool2d(k=2, s=2)
x = np.take(x, channel_index, axis=1)                             # index_select(dim=1)
x = np.take_along_axis(x, col_gather_index, axis=3)               # gather(dim=3)
x = np.take(x, row_index, axis=2)                                 # index_select(dim=2)
s = np.sin(x)
c = np.cos(x)
y = s * np.reciprocal(c)
y = np.swapaxes(y, -1, -2)

assert y.shape == (1, 3, 4, 4)
print(",\n".join(", ".join(f"{v:.9g}f" for v in row) for row in y.reshape(-1, 8)))
