"""The "page" input of scripts/ort/common.js in Python, bit for bit: a
synthetic text page per batch item, the same in every channel, normalised
(x - 0.5) / 0.5. common.js documents the generator; models_test feeds it to
PP-OCR det, whose output on random noise is ~0 everywhere (so any wrong
kernel, and any error relative to the largest output, would read as noise).

  from page_input import page
  x = page([1, 3, 640, 640], seed=1)   # float32 NCHW
"""
import numpy as np


def mulberry32(seed):
    state = seed & 0xFFFFFFFF

    def imul(a, b):
        return (a * b) & 0xFFFFFFFF

    def next_z():
        nonlocal state
        state = (state + 0x6D2B79F5) & 0xFFFFFFFF
        z = state
        z = imul(z ^ (z >> 15), z | 1)
        z ^= (z + imul(z ^ (z >> 7), z | 61)) & 0xFFFFFFFF
        return (z ^ (z >> 14)) & 0xFFFFFFFF

    return next_z


def draw_page(next_z, height, width):
    img = np.full(height * width, 1.0, dtype=np.float32)
    h = min(24, height // 2)
    pitch = 2 * h + 2
    y0 = (h + 2) // 2
    while y0 + h <= height:
        x = 20 + next_z() % 40
        while x < width - 40:
            cw = 8 + next_z() % 14
            if next_z() % 5 != 0:
                for y in range(y0, y0 + h):
                    for xx in range(x, x + cw):
                        if next_z() % 4 != 0:
                            img[y * width + xx] = 0.1
            x += cw + 3 + next_z() % 4
            if next_z() % 15 == 0:
                x += 40
        y0 += pitch
    return img


def page(shape, seed=1):
    n, c, height, width = shape
    next_z = mulberry32(seed)
    out = np.empty(shape, dtype=np.float32)
    for b in range(n):
        img = (draw_page(next_z, height, width) - np.float32(0.5)) / np.float32(0.5)
        out[b] = img.reshape(height, width)[None]
    return out
