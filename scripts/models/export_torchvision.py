#!/usr/bin/env python3
"""Exports a torchvision classification model to ONNX with seeded random
weights (no download), for the benchmarks and memory figures in docs/.

  python3 scripts/models/export_torchvision.py resnet50 -o resnet50.onnx [--opset 17] [--size 224]
  python3 scripts/models/export_torchvision.py video.r3d_18 -o r3d_18.onnx --frames 8 --size 112

Works with Debian 12's python3-torchvision (torch 1.13, opsets up to 17) and
with PyTorch 2.x (add --dynamo for the current exporter, opset 18 and up).
"""
import argparse
import inspect

import torch
import torchvision


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="a torchvision.models name, e.g. resnet50, mobilenet_v3_small, "
                                 "segmentation.lraspp_mobilenet_v3_large")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--size", type=int, default=224, help="input is 1x3xSIZExSIZE")
    p.add_argument("--frames", type=int, default=0,
                   help="video models (video.r3d_18, video.r2plus1d_18...): input is 1x3xFRAMESxSIZExSIZE")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dynamo", action="store_true", help="torch.onnx.export(..., dynamo=True) (PyTorch 2.x)")
    p.add_argument("--calibrate-bn", action="store_true",
                   help="set BatchNorm statistics from random batches first, so activations stay O(1) as in a "
                        "trained model (random-init running stats let them grow past fp16's range)")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    # Dotted names reach the sub-packages: segmentation.lraspp_mobilenet_v3_large.
    builder = torchvision.models
    for part in a.model.split("."):
        builder = getattr(builder, part)
    extra = {"weights_backbone": None} if a.model.startswith(("segmentation.", "detection.")) else {}
    frames = [a.frames] if a.frames else []
    model = builder(weights=None, **extra)
    # Some classifiers start from zero weights (ViT's head), which makes every
    # output 0 and a comparison of outputs meaningless: give them random ones.
    with torch.no_grad():
        for name, param in model.named_parameters():
            if param.dim() >= 2 and not param.any():
                torch.nn.init.normal_(param, std=0.02)
    if a.calibrate_bn:
        for m in model.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.reset_running_stats()
                m.momentum = None  # a cumulative average over the batches below
        model.train()
        with torch.no_grad():
            for _ in range(4):
                model(torch.randn(8, 3, *frames, a.size, a.size))
    model = model.eval()
    x = torch.randn(1, 3, *frames, a.size, a.size)
    kwargs = dict(opset_version=a.opset, input_names=["input"], output_names=["output"])
    # PyTorch 2.9+ defaults to the dynamo exporter (opset 18 and up): ask
    # for the one wanted where export() knows the argument.
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = a.dynamo
    elif a.dynamo:
        raise SystemExit("this PyTorch has no dynamo exporter (torch.onnx.export has no 'dynamo' argument)")
    with torch.no_grad():
        torch.onnx.export(model, (x,), a.output, **kwargs)


if __name__ == "__main__":
    main()
