#!/usr/bin/env python3
"""Exports the recurrent benchmark model of docs/models.md ("Recurrent ops":
speed against ONNX Runtime) with seeded random weights: a 2-layer
bidirectional nn.LSTM 256 -> 512, an nn.GRU 1024 -> 256 on its output and a
linear head to 100, input [seq 50, batch 4, 256].

  /usr/bin/python3 scripts/models/export_recurrent_bench.py -o lstm_bench.onnx
  bench/ort_compare.sh --threads "1 2" --runs 10 --rounds 3 --no-per-op --model lstm=lstm_bench.onnx:50x4x256

Works with Debian 12's python3-torch (torch 1.13, opsets up to 17).
"""
import argparse

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(256, 512, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(1024, 256)
        self.fc = nn.Linear(256, 100)

    def forward(self, x):
        y, _ = self.lstm(x)
        z, _ = self.gru(y)
        return self.fc(z)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--opset", type=int, default=14)
    a = p.parse_args()
    torch.manual_seed(0)
    model = Model().eval()
    torch.onnx.export(model, torch.randn(50, 4, 256), a.output, opset_version=a.opset, input_names=["x"],
                      output_names=["y"])


if __name__ == "__main__":
    main()
