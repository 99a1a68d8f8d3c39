#!/usr/bin/env python3
"""PyTorch-on-CUDA peer timings for the GPU benchmarks in docs/models.md.

Run on the GPU machine beside `vulkan_ops_bench` and `hetsched bench`, in the
same session, so both sides see the same GPU and clocks:

  python3 bench/torch_peers.py [--ops] [--models resnet50,mobilenet_v3_small] [--runs 200]

--ops: fp16 GEMM 4096^3 and 2048^3 (cuBLAS) and the fp16 3x3 convs of the issue
(1x256x56x56, 1x64x56x56, 1x512x7x7; cuDNN, channels_last), each as
TFLOP/s from CUDA-event timing of 10 or 50 back-to-back calls (the GPU's
time, as vulkan_ops_bench's timestamps measure ours). --models: each
torchvision model (random weights) at batch 1, fp32 with TF32 off and fp16,
eager and replayed as a CUDA graph: median ms per inference.
"""
import argparse
import statistics

import torch


def time_ms(fn, runs, warmup=20, batch=1):
    """Median ms of one call, timed by CUDA events around `batch` calls in a
    row (batch > 1 hides the host's launch gaps: the GPU's own time)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / batch)
    return statistics.median(times)


def graphed(fn):
    """fn replayed as a CUDA graph (captured after a warm-up on a side stream)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def ops(runs):
    for n in (4096, 2048):
        a = torch.randn(n, n, device="cuda", dtype=torch.float16)
        b = torch.randn(n, n, device="cuda", dtype=torch.float16)
        ms = time_ms(lambda: torch.matmul(a, b), runs, batch=10)
        print(f"torch fp16 matmul {n}x{n}x{n}: {2 * n**3 / ms / 1e9:.1f} TFLOP/s ({ms:.3f} ms)")
    for c, hw in ((256, 56), (64, 56), (512, 7)):
        x = torch.randn(1, c, hw, hw, device="cuda", dtype=torch.float16).to(memory_format=torch.channels_last)
        conv = torch.nn.Conv2d(c, c, 3, padding=1, bias=False).cuda().half().to(memory_format=torch.channels_last)
        with torch.no_grad():
            ms = time_ms(lambda: conv(x), runs, batch=50)
        flops = 2 * c * c * 9 * hw * hw
        print(f"torch fp16 conv3x3 1x{c}x{hw}x{hw} channels_last: {flops / ms / 1e9:.1f} TFLOP/s ({ms:.4f} ms)")


def models(names, runs):
    import torchvision

    for name in names:
        for dtype in (torch.float32, torch.float16):
            model = getattr(torchvision.models, name)(weights=None).eval().cuda().to(dtype)
            x = torch.randn(1, 3, 224, 224, device="cuda", dtype=dtype)
            with torch.no_grad():
                eager = time_ms(lambda: model(x), runs)
                replay = graphed(lambda: model(x))
                graph = time_ms(replay, runs)
            label = "fp32" if dtype == torch.float32 else "fp16"
            print(f"torch {name} {label}: eager {eager:.3f} ms, CUDA graph {graph:.3f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", action="store_true")
    parser.add_argument("--models", default="")
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    print(f"device: {torch.cuda.get_device_name()} (torch {torch.__version__})")
    if args.ops:
        ops(args.runs)
    if args.models:
        models([m for m in args.models.split(",") if m], args.runs)


if __name__ == "__main__":
    main()
