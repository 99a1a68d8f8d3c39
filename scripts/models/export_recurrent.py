#!/usr/bin/env python3
"""Exports a small recurrent model to ONNX with seeded random weights, for
test/recurrent_ops_test.cc: a 2-layer bidirectional nn.LSTM, an nn.GRU on
its output and an nn.RNN with ReLU (which exports an `activations` list).
Outputs: the RNN's Y [seq, batch, 10] and the GRU's last state [1, batch, 12].
With --states, a model whose recurrent nodes' Y is read by nothing: a
batch-first 2-layer bidirectional nn.LSTM whose last h and c are summed,
and an nn.GRU whose last state is the second output (input [batch, seq, 8]).

  /usr/bin/python3 scripts/models/export_recurrent.py -o test/data/recurrent/lstm_gru_rnn_op14.onnx
  node scripts/ort/make_reference.js --model test/data/recurrent/lstm_gru_rnn_op14.onnx \\
       --shape 7x2x8 --dist ppocr --out test/data/recurrent/lstm_gru_rnn_op14
  /usr/bin/python3 scripts/models/export_recurrent.py --states -o test/data/recurrent/states_op14.onnx
  node scripts/ort/make_reference.js --model test/data/recurrent/states_op14.onnx \\
       --shape 2x7x8 --dist ppocr --out test/data/recurrent/states_op14

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


class States(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(8, 12)

    def forward(self, x):
        _, (h, c) = self.lstm(x)
        _, g = self.gru(x.transpose(0, 1))
        return h.sum(0) + c.sum(0), g


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--opset", type=int, default=14)
    p.add_argument("--seq", type=int, default=7)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--states", action="store_true", help="the model whose outputs are final states only")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    if a.states:
        model, x, outputs = States().eval(), torch.randn(a.batch, a.seq, 8), ["hc", "g"]
    else:
        model, x, outputs = Recurrent().eval(), torch.randn(a.seq, a.batch, 8), ["y", "h"]
    torch.onnx.export(model, (x,), a.output, opset_version=a.opset, input_names=["x"], output_names=outputs)


if __name__ == "__main__":
    main()
