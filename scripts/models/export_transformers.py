#!/usr/bin/env python3
"""Exports small transformer blocks with seeded random weights (no download)
for the opset 18+ import tests and model tables:

  python3 scripts/models/export_transformers.py encoder -o enc.onnx [--opset 18] [--dynamo]
  python3 scripts/models/export_transformers.py decoder -o dec.onnx   # causal mask (Where)
  python3 scripts/models/export_transformers.py vit -o vit.onnx       # tiny torchvision ViT, 1x3x32x32
  python3 scripts/models/export_transformers.py bert -o bert.onnx --seq 128 --d-model 256
  python3 scripts/models/export_transformers.py bert -o bert_base4.onnx --seq 128 --d-model 768 --heads 12 --layers 4
  python3 scripts/models/export_transformers.py gpt -o gpt.onnx --seq 128 --d-model 512 --heads 8 --layers 2
  python3 scripts/models/export_transformers.py encdec -o t5.onnx --seq 64 --d-model 512 --heads 8
  python3 scripts/models/export_transformers.py vit_b16 -o vit_b16.onnx --opset 17   # torchvision, 1x3x224x224

encoder: nn.TransformerEncoderLayer(norm_first=True, gelu) on 1xSEQxD.
decoder: a GPT-style pre-norm block, attention with a causal mask written
  as masked_fill(-inf) (Where) and exact GELU, on 1xSEQxD.
bert: a BERT-style encoder: --layers (2) post-norm layers (LayerNorm after each
  residual, as BERT), exact GELU, on the hidden states 1xSEQxD (the
  embedding lookup, which takes integer ids, is left out).
gpt: --layers (2) decoder blocks as above, then a final LayerNorm.
encdec: a whisper/T5-style pair: one post-norm encoder layer over the
  input, then one nn.TransformerDecoderLayer (pre-norm, exact GELU) whose
  target is the input again, with a causal mask, and whose memory (the
  cross-attention's keys and values) is the encoder's output.
vit_b16: torchvision.models.vit_b_16 (random weights) on 1x3x224x224.
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


class Gpt(nn.Module):
    def __init__(self, d, heads, seq, layers):
        super().__init__()
        self.blocks = nn.ModuleList(DecoderBlock(d, heads, seq) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.ln(x)


class EncDec(nn.Module):
    def __init__(self, d, heads, seq):
        super().__init__()
        self.enc = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu", batch_first=True)
        self.dec = nn.TransformerDecoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu", batch_first=True,
                                              norm_first=True)
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1))

    def forward(self, x):
        return self.dec(x, self.enc(x), tgt_mask=self.mask)


def build(kind, a):
    if kind == "encoder":
        return nn.TransformerEncoderLayer(a.d_model, a.heads, 4 * a.d_model, dropout=0.0, activation="gelu",
                                          batch_first=True, norm_first=True), torch.randn(1, a.seq, a.d_model)
    if kind == "bert":
        layer = nn.TransformerEncoderLayer(a.d_model, a.heads, 4 * a.d_model, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=False)
        enc = nn.TransformerEncoder(layer, a.layers, enable_nested_tensor=False)
        # The layers start as copies of one; give each its own weights, or
        # the exporter writes one set for all (a model 1/layers the size).
        for m in enc.layers.modules():
            for reset in ("reset_parameters", "_reset_parameters"):
                if hasattr(m, reset):
                    getattr(m, reset)()
        return enc, torch.randn(1, a.seq, a.d_model)
    if kind == "decoder":
        return DecoderBlock(a.d_model, a.heads, a.seq), torch.randn(1, a.seq, a.d_model)
    if kind == "gpt":
        return Gpt(a.d_model, a.heads, a.seq, a.layers), torch.randn(1, a.seq, a.d_model)
    if kind == "encdec":
        return EncDec(a.d_model, a.heads, a.seq), torch.randn(1, a.seq, a.d_model)
    if kind == "vit_b16":
        from torchvision.models import vit_b_16
        vit = vit_b_16()
        # torchvision starts the classifier at zero: every output would be 0,
        # and a comparison with ONNX Runtime would check nothing.
        nn.init.normal_(vit.heads.head.weight, std=0.02)
        return vit, torch.randn(1, 3, 224, 224)
    if kind == "vit":
        from torchvision.models import VisionTransformer
        return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
                                 mlp_dim=128, num_classes=10), torch.randn(1, 3, 32, 32)
    raise SystemExit(f"unknown model {kind}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", choices=["encoder", "bert", "decoder", "gpt", "encdec", "vit", "vit_b16"])
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--opset", type=int, default=18)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--layers", type=int, default=2, help="bert and gpt: how many layers")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dynamo", action="store_true", help="torch.onnx.export(..., dynamo=True) (PyTorch 2.x)")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    model, x = build(a.model, a)
    model.eval()
    kwargs = dict(opset_version=a.opset, input_names=["x"], output_names=["y"])
    # Without --dynamo, PyTorch's own default: the TorchScript exporter up to
    # 2.8, dynamo from 2.9 (where the TorchScript one no longer exports
    # nn.TransformerEncoderLayer: "is_causal must be bool, not Tensor").
    if a.dynamo:
        if "dynamo" not in inspect.signature(torch.onnx.export).parameters:
            raise SystemExit("this PyTorch has no dynamo exporter")
        kwargs["dynamo"] = True
    # Gradients stay on: under no_grad, PyTorch 1.13's TransformerEncoderLayer
    # takes its fused fast path (aten::_transformer_encoder_layer_fwd), which
    # has no ONNX export.
    torch.onnx.export(model, (x,), a.output, **kwargs)


if __name__ == "__main__":
    main()
