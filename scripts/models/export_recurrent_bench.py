#!/usr/bin/env python3
"""Exports the recurrent benchmark models of docs/models.md ("Recurrent ops":
speed against ONNX Runtime) with seeded random weights (PyTorch's own
initialisation):

  stack  a 2-layer bidirectional nn.LSTM 256 -> 512, an nn.GRU 1024 -> 256
         on its output and a linear head to 100; input [seq 50, batch 4, 256]
  lm     a word-level language model's core: a 2-layer nn.LSTM 650 -> 650
         and a linear head to 1000; input [seq 35, batch 1, 650]
  speech a 3-layer bidirectional nn.GRU 80 -> 256 over filterbank frames
         and a linear head to 40; input [seq 200, batch 1, 80]
  rnn    a 2-layer nn.RNN (tanh) 64 -> 128, batch-first; input [batch 8, seq 100, 64]

  /usr/bin/python3 scripts/models/export_recurrent_bench.py -o lstm_bench.onnx
  bench/ort_compare.sh --threads "1 2" --runs 10 --rounds 3 --no-per-op --model lstm=lstm_bench.onnx:50x4x256
  /usr/bin/python3 scripts/models/export_recurrent_bench.py --family lm -o lm.onnx      # shape 35x1x650
  /usr/bin/python3 scripts/models/export_recurrent_bench.py --family speech -o speech.onnx  # 200x1x80
  /usr/bin/python3 scripts/models/export_recurrent_bench.py --family rnn -o rnn.onnx    # 8x100x64

Works with Debian 12's python3-torch (torch 1.13, opsets up to 17) and
with PyTorch 2.x, whose TorchScript exporter it asks for (the dynamo one,
the default from 2.9, is not what the figures were made with).
"""
import argparse
import inspect

import torch
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(256, 512, num_layers=2, bidirectional=True)
        self.gru = nn.GRU(1024, 256)
        self.fc = nn.Linear(256, 100)

    def forward(self, x):
        y, _ = self.lstm(x)
        z, _ = self.gru(y)
        return self.fc(z)


class LanguageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(650, 650, num_layers=2)
        self.fc = nn.Linear(650, 1000)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y)


class Speech(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(80, 256, num_layers=3, bidirectional=True)
        self.fc = nn.Linear(512, 40)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.fc(y)


class Rnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(64, 128, num_layers=2, batch_first=True)

    def forward(self, x):
        y, _ = self.rnn(x)
        return y


FAMILIES = {
    "stack": (Stack, (50, 4, 256)),
    "lm": (LanguageModel, (35, 1, 650)),
    "speech": (Speech, (200, 1, 80)),
    "rnn": (Rnn, (8, 100, 64)),
}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--family", choices=sorted(FAMILIES), default="stack")
    p.add_argument("--opset", type=int, default=14)
    a = p.parse_args()
    torch.manual_seed(0)
    cls, shape = FAMILIES[a.family]
    model = cls().eval()
    kwargs = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    torch.onnx.export(model, torch.randn(*shape), a.output, opset_version=a.opset, input_names=["x"],
                      output_names=["y"], **kwargs)


if __name__ == "__main__":
    main()
