#!/usr/bin/env python3
"""Exports a YOLOv8-style detector with seeded random weights (no download):
Conv-BatchNorm-SiLU blocks (3x3, stride 1 and 2), C2f blocks (a 1x1 conv
split in two, bottlenecks of two 3x3 convs with a residual Add, a Concat of
every branch, a 1x1 conv), SPPF (three chained 5x5 max pools and a Concat),
nearest 2x upsampling with Concats into a top-down and a bottom-up path,
and per-scale heads of 3x3 convs to box and class maps. A CNN family the
CPU delegate was not tuned on, whose activation is SiLU throughout.

  python3 scripts/models/export_yolo_like.py -o yolo_like.onnx [--width 0.25] [--depth 1] [--size 320] [--opset 17]

--width scales the channel counts (YOLOv8n is 0.25, s 0.5), --depth the
bottlenecks per C2f (n is 1). BatchNorm statistics are calibrated on random
input, as export_torchvision.py's --calibrate-bn does, so activations stay
in range.
"""
import argparse

import torch
import torch.nn as nn


class ConvBnSiLU(nn.Sequential):
    def __init__(self, cin, cout, k=1, s=1):
        super().__init__(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout), nn.SiLU())


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1, self.cv2, self.add = ConvBnSiLU(c, c, 3), ConvBnSiLU(c, c, 3), shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C2f(nn.Module):
    def __init__(self, cin, cout, n, shortcut=True):
        super().__init__()
        self.c = cout // 2
        self.cv1 = ConvBnSiLU(cin, 2 * self.c)
        self.cv2 = ConvBnSiLU((2 + n) * self.c, cout)
        self.m = nn.ModuleList(Bottleneck(self.c, shortcut) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        for m in self.m:
            y.append(m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        c = cin // 2
        self.cv1, self.cv2 = ConvBnSiLU(cin, c), ConvBnSiLU(4 * c, cout)
        self.pool = nn.MaxPool2d(5, 1, 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.pool(x)
        y2 = self.pool(y1)
        return self.cv2(torch.cat([x, y1, y2, self.pool(y2)], 1))


class YoloLike(nn.Module):
    def __init__(self, width, depth, classes=80):
        super().__init__()
        c = [max(16, int(v * width)) for v in (64, 128, 256, 512, 1024)]
        n = max(1, round(3 * depth))
        self.stem = nn.Sequential(ConvBnSiLU(3, c[0], 3, 2), ConvBnSiLU(c[0], c[1], 3, 2), C2f(c[1], c[1], n))
        self.p3 = nn.Sequential(ConvBnSiLU(c[1], c[2], 3, 2), C2f(c[2], c[2], 2 * n))
        self.p4 = nn.Sequential(ConvBnSiLU(c[2], c[3], 3, 2), C2f(c[3], c[3], 2 * n))
        self.p5 = nn.Sequential(ConvBnSiLU(c[3], c[4], 3, 2), C2f(c[4], c[4], n), SPPF(c[4], c[4]))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.td4, self.td3 = C2f(c[4] + c[3], c[3], n, False), C2f(c[3] + c[2], c[2], n, False)
        self.down3, self.bu4 = ConvBnSiLU(c[2], c[2], 3, 2), C2f(c[2] + c[3], c[3], n, False)
        self.down4, self.bu5 = ConvBnSiLU(c[3], c[3], 3, 2), C2f(c[3] + c[4], c[4], n, False)
        box = max(16, c[2] // 4)
        self.heads = nn.ModuleList(
            nn.Sequential(ConvBnSiLU(ch, box, 3), ConvBnSiLU(box, box, 3), nn.Conv2d(box, 64 + classes, 1))
            for ch in (c[2], c[3], c[4]))

    def forward(self, x):
        x = self.stem(x)
        p3 = self.p3(x)
        p4 = self.p4(p3)
        p5 = self.p5(p4)
        t4 = self.td4(torch.cat([self.up(p5), p4], 1))
        t3 = self.td3(torch.cat([self.up(t4), p3], 1))
        b4 = self.bu4(torch.cat([self.down3(t3), t4], 1))
        b5 = self.bu5(torch.cat([self.down4(b4), p5], 1))
        return tuple(h(f) for h, f in zip(self.heads, (t3, b4, b5)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--width", type=float, default=0.25)
    ap.add_argument("--depth", type=float, default=0.33)
    ap.add_argument("--size", type=int, default=320)
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    model = YoloLike(args.width, args.depth)
    x = torch.randn(1, 3, args.size, args.size)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(2, 3, args.size, args.size))
    model.eval()
    torch.onnx.export(model, x, args.output, opset_version=args.opset, input_names=["images"],
                      output_names=["p3", "p4", "p5"])
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
