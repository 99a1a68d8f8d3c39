#!/usr/bin/env python3
"""Exports one pre-norm transformer encoder block to ONNX with seeded random
weights (no download): the attention-shaped workload for `hetsched bench
--compare-policies` (MatMul, Softmax and LayerNorm's reductions next to
cheap elementwise ops).

  /usr/bin/python3 scripts/models/export_encoder.py -o encoder.onnx [--d-model 128] [--heads 4] [--seq 64]

  y = x + FFN(LN2(h)),  h = x + MHA(LN1(x)),  FFN = Linear(d, 4d) → GELU → Linear(4d, d)

Input "x" is 1×SEQ×D_MODEL, output "y" the same. Works with Debian 12's
python3-torch (torch 1.13).

The default form is the one hetsched imports: opset 16, so LayerNorm is
exported as ReduceMean/Sub/Pow/Sqrt/Div (opset 17 writes
LayerNormalization, which hetsched's op set lacks), attention written out
(Linear q/k/v, MatMul, Softmax, static reshapes), and GELU with the tanh
approximation (the exact one exports Erf, which hetsched runs only on the
CPU). --form torch exports nn.TransformerEncoderLayer(norm_first=True)
instead, to compare what the exporter makes of it.
"""
import argparse
import inspect
import math

import torch
from torch import nn


class EncoderBlock(nn.Module):
    """Pre-norm encoder block with attention written out, so every op is a
    plain MatMul/Softmax/Reshape/Transpose with static shapes."""

    def __init__(self, d_model, heads, gelu):
        super().__init__()
        assert d_model % heads == 0, "--d-model must be a multiple of --heads"
        self.heads, self.d_head = heads, d_model // heads
        self.ln1 = nn.LayerNorm(d_model)
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, 4 * d_model)
        self.act = nn.GELU(approximate=gelu)
        self.ff2 = nn.Linear(4 * d_model, d_model)

    def split_heads(self, t):  # (b, s, d) → (b, heads, s, d_head)
        b, s, _ = t.shape
        return t.reshape(b, s, self.heads, self.d_head).transpose(1, 2)

    def forward(self, x):
        b, s, d = x.shape
        n = self.ln1(x)
        q, k, v = self.split_heads(self.q(n)), self.split_heads(self.k(n)), self.split_heads(self.v(n))
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.d_head))
        attn = torch.matmul(torch.softmax(scores, dim=-1), v)
        h = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
        return h + self.ff2(self.act(self.ff1(self.ln2(h))))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--opset", type=int, default=16)
    p.add_argument("--gelu", choices=["tanh", "none"], default="tanh",
                   help="GELU approximation: tanh (Tanh, Pow, Mul) or none (exact: Erf)")
    p.add_argument("--form", choices=["manual", "torch"], default="manual",
                   help="manual: attention written out; torch: nn.TransformerEncoderLayer(norm_first=True)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    if a.form == "torch":
        model = nn.TransformerEncoderLayer(a.d_model, a.heads, 4 * a.d_model, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
    else:
        model = EncoderBlock(a.d_model, a.heads, a.gelu)
    model.eval()
    x = torch.randn(1, a.seq, a.d_model)
    # Under no_grad, torch 1.13 runs nn.TransformerEncoderLayer on its fused
    # fast path (aten::_transformer_encoder_layer_fwd), which has no ONNX
    # export; with gradients on it takes the plain ops.
    kwargs = dict(opset_version=a.opset, input_names=["x"], output_names=["y"], do_constant_folding=True)
    # PyTorch 2.9+ defaults to the dynamo exporter (opset 18 and up, which
    # ignores --opset below 18): ask for the legacy one where export() has
    # the argument. scripts/models/export_transformers.py makes opset 18+ files.
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    with torch.set_grad_enabled(a.form == "torch"):
        torch.onnx.export(model, (x,), a.output, **kwargs)


if __name__ == "__main__":
    main()
