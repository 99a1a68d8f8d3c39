#!/usr/bin/env python3
"""Fills the all-zero weight matrices of an ONNX model with seeded uniform
values in [-0.1, 0.1), keeping its external data layout (one .onnx.data file
beside it).

torchvision's ViT initialises its classification head to zeros, so an
exported ViT with random weights outputs exactly 0 for every input, and a
comparison with ONNX Runtime would prove nothing. test/data/models18/
vit_op21.onnx went through this once after export.

usage: fill_zero_weights.py MODEL.onnx [--seed 1]   (python3-onnx, numpy)
"""
import argparse
import os

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    model = onnx.load(args.model)  # reads the external data
    rng = np.random.default_rng(args.seed)
    for i, t in enumerate(model.graph.initializer):
        a = numpy_helper.to_array(t)
        if a.dtype == np.float32 and a.size > 1 and not a.any():
            filled = rng.uniform(-0.1, 0.1, a.shape).astype(np.float32)
            model.graph.initializer[i].CopyFrom(numpy_helper.from_array(filled, t.name))
            print("filled", t.name, list(a.shape))
    location = os.path.basename(args.model) + ".data"
    os.remove(os.path.join(os.path.dirname(os.path.abspath(args.model)), location))
    onnx.save_model(model, args.model, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=location, size_threshold=1024)


if __name__ == "__main__":
    main()
