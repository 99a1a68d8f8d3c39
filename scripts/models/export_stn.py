#!/usr/bin/env python3
"""Exports a small spatial transformer with seeded random weights, for
docs/models.md ("Sampling and normalization ops"): a localisation net
predicts an affine transform, its sampling grid (written out as a MatMul,
since torch 1.13 cannot export affine_grid) drives GridSample with
reflection padding, and a bicubic Upsample doubles the result. Input
[1, 3, 28, 28], opset 16 (GridSample's first).

  /usr/bin/python3 scripts/models/export_stn.py -o stn.onnx
  node scripts/ort/make_reference.js --model stn.onnx --shape 1x3x28x28 --dist unit --out stn_ref
  build/cli/hetsched run stn.onnx -i x=stn_ref/input_0.bin -o stn_out.bin   # compare with stn_ref/output_0.bin
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class Stn(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(3, 8, 7), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(8, 10, 5), nn.MaxPool2d(2),
                                 nn.ReLU())
        self.fc = nn.Sequential(nn.Linear(90, 32), nn.ReLU(), nn.Linear(32, 6))
        self.up = nn.Upsample(scale_factor=2, mode="bicubic", align_corners=False)

    def forward(self, x):
        theta = self.fc(self.loc(x).flatten(1)).view(-1, 2, 3)
        n, _, h, w = x.shape
        ys = (torch.arange(h, dtype=torch.float32) * 2 + 1) / h - 1
        xs = (torch.arange(w, dtype=torch.float32) * 2 + 1) / w - 1
        base = torch.stack([xs.repeat(h), ys.repeat_interleave(w), torch.ones(h * w)], 1)
        # Scaled past [-1, 1] so that some points need reflecting.
        grid = (base @ theta.transpose(1, 2)).view(n, h, w, 2) * 1.3
        y = F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)
        return self.up(y)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", required=True)
    a = p.parse_args()
    torch.manual_seed(0)
    torch.onnx.export(Stn().eval(), torch.randn(1, 3, 28, 28), a.output, opset_version=16, input_names=["x"],
                      output_names=["y"])


if __name__ == "__main__":
    main()
