#!/usr/bin/env python3
"""Exports a small recurrent model to ONNX with seeded random weights, for
test/recurrent_ops_test.cc: a 2-layer bidirectional nn.LSTM, an nn.GRU on
its output and an nn.RNN with ReLU (which exports an `activations` list).
Outputs: the RNN's Y [seq, batch, 10] and the GRU's last state [1, batch, 12].

  /usr/bin/python3 scripts/models/export_recurrent.py -o test/data/recurrent/lstm_gru_rnn_op14.onnx
  node scripts/ort/make_reference.js --model test/data/recurrent/lstm_gru_rnn_op14.onnx \\
       --shape 7x2x8 --dist ppocr --out test/data/recurrent/lstm_gru_rnn_op14

Works with Debian 12's python3-torch (torch 1.13, opsets up to 17).
"""
import argparse

import torch
from torch import nn


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(32, 12)
        self.rnn = nn.RNN(12, 10, nonlinearity="relu")

    def forward(self, x):
        y, _ = self.lstm(x)
        y, h = self.gru(y)
        y, _ = self.rnn(y)
        return y, h


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--opset", type=int, default=14)
    p.add_argument("--seq", type=int, default=7)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    model = Recurrent().eval()
    x = torch.randn(a.seq, a.batch, 8)
    torch.onnx.export(model, (x,), a.output, opset_version=a.opset, input_names=["x"], output_names=["y", "h"])


if __name__ == "__main__":
    main()
