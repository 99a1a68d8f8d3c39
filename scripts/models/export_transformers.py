#!/usr/bin/env python3
"""Exports small transformer blocks with seeded random weights (no download)
for the opset 18+ import tests and model tables:

  python3 scripts/models/export_transformers.py encoder -o enc.onnx [--opset 18] [--dynamo]
  python3 scripts/models/export_transformers.py decoder -o dec.onnx   # causal mask (Where)
  python3 scripts/models/export_transformers.py vit -o vit.onnx       # tiny torchvision ViT, 1x3x32x32
  python3 scripts/models/export_transformers.py bert -o bert.onnx --seq 128 --d-model 256

encoder: nn.TransformerEncoderLayer(norm_first=True, gelu) on 1xSEQxD.
decoder: a GPT-style pre-norm block, attention with a causal mask written
  as masked_fill(-inf) (Where) and exact GELU, on 1xSEQxD.
bert: a BERT-style encoder: 2 post-norm layers (LayerNorm after each
  residual, as BERT), exact GELU, on the hidden states 1xSEQxD (the
  embedding lookup, which takes integer ids, is left out).
vit: torchvision.models.VisionTransformer, image 32, patch 8, 2 layers,
  hidden 64, 4 heads, MLP 128, 10 classes.

With PyTorch 2.9+ (--dynamo, the default exporter there) the file is opset
18 or the --opset given; LayerNormalization, Gelu (opset 20) and the other
newer forms come out as the exporter writes them.
"""
import argparse
import inspect
import math

import torch
from torch import nn


class DecoderBlock(nn.Module):
    def __init__(self, d, heads, seq):
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1))

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        heads = lambda t: t.reshape(b, s, self.heads, self.dh).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.dh)
        scores = scores.masked_fill(self.mask[:s, :s], float("-inf"))
        a = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, s, d)
        h = x + self.proj(a)
        return h + self.ff2(nn.functional.gelu(self.ff1(self.ln2(h))))


def build(kind, a):
    if kind == "encoder":
        return nn.TransformerEncoderLayer(a.d_model, a.heads, 4 * a.d_model, dropout=0.0, activation="gelu",
                                          batch_first=True, norm_first=True), torch.randn(1, a.seq, a.d_model)
    if kind == "bert":
        layer = nn.TransformerEncoderLayer(a.d_model, a.heads, 4 * a.d_model, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=False)
        return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False), torch.randn(1, a.seq, a.d_model)
    if kind == "decoder":
        return DecoderBlock(a.d_model, a.heads, a.seq), torch.randn(1, a.seq, a.d_model)
    if kind == "vit":
        from torchvision.models import VisionTransformer
        return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
                                 mlp_dim=128, num_classes=10), torch.randn(1, 3, 32, 32)
    raise SystemExit(f"unknown model {kind}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", choices=["encoder", "bert", "decoder", "vit"])
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--opset", type=int, default=18)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dynamo", action="store_true", help="torch.onnx.export(..., dynamo=True) (PyTorch 2.x)")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    model, x = build(a.model, a)
    model.eval()
    kwargs = dict(opset_version=a.opset, input_names=["x"], output_names=["y"])
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = a.dynamo
    elif a.dynamo:
        raise SystemExit("this PyTorch has no dynamo exporter")
    with torch.no_grad():
        torch.onnx.export(model, (x,), a.output, **kwargs)


if __name__ == "__main__":
    main()
