#!/usr/bin/env python3
"""The model-coverage table of docs/models.md ("Models on the GPU delegates"):
every model as exported today (opset 18+ from PyTorch's dynamo exporter, or
converted to opset 18), in fp32 and fp16, run with strict profiles (Vulkan
only, VGF only: `fallback: error`) and compared with ONNX Runtime.

  python3 scripts/models/gpu_model_table.py OUTDIR [--hetsched build/cli/hetsched] [--only NAME,...]
      [--ppocr DIR]   # ch_PP-OCRv4_det_infer.onnx, ch_PP-OCRv4_rec_infer.onnx, ch_ppocr_mobile_v2.0_cls_infer.onnx

Needs PyTorch 2.x with torchvision, onnx and onnxruntime (the GPU machine has
them) and a Vulkan device. Writes OUTDIR/table.md and OUTDIR/table.json.

Per model: ORT runs the fp32 model on the CPU (the reference); hetsched
runs the fp32 and the fp16 model (scripts/models/to_fp16.py) under the CPU
profile (configs/default.yaml) and each strict GPU profile, on the same
input: standard normal (seed 1), or for the PP-OCR models the synthetic text
page of scripts/ort/common.js (page_input.py), as models_test feeds det.
Error: max |hetsched - ORT| / max |ORT| (bounds: 1e-4 fp32, 1e-2 fp16,
from issue 11; PP-OCR det 1e-3 fp32, as models_test: 64 stacked
convolutions). An fp16 row has two errors: against ORT running the fp32
model (what f16 costs, weights' rounding included) and against ORT running
the same fp16 model (what hetsched adds to it; the bound applies to this
one, since both round the same f16 weights and input); the fp16 model's own
error is ORT fp16 against ORT fp32. Beside the fp16 bound's column, the
error against ORT running the fp16 model with its graph optimisations off
(the model as written: no folding of BatchNorm, Mul or Add into f16
weights, which rounds the folded weights to f16). `mixed` lists the ops that
configs/mixed_gpu.yaml leaves on the CPU (none: every op has a GPU delegate).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from page_input import page  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(HERE))

# name -> (how to make the fp32 opset 18+ model, input shape)
TORCHVISION = ["resnet18", "mobilenet_v3_small", "efficientnet_b0", "convnext_tiny", "regnet_y_400mf", "vit_b_16"]
TRANSFORMERS = {"bert": ["--seq", "128", "--d-model", "256"], "decoder": [], "encoder": []}
PPOCR = {"det": ("ch_PP-OCRv4_det_infer.onnx", "1x3x640x640"), "rec": ("ch_PP-OCRv4_rec_infer.onnx", "1x3x48x320"),
         "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", "1x3x48x192")}


def sh(cmd, log=None, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if log:
        with open(log, "a") as f:
            f.write("$ " + " ".join(cmd) + "\n" + r.stdout + r.stderr + "\n")
    return r


def first_error(r):
    for line in (r.stderr + r.stdout).splitlines():
        if line.startswith("error:"):
            return line[len("error: "):][:300]
    return (r.stderr or r.stdout).strip().splitlines()[-1][:300] if (r.stderr or r.stdout).strip() else "exit %d" % r.returncode


def make_models(out, only, ppocr_dir, log):
    models = {}
    for name in TORCHVISION:
        if only and name not in only:
            continue
        path = os.path.join(out, name + ".onnx")
        r = sh([sys.executable, os.path.join(HERE, "export_torchvision.py"), name, "-o", path, "--opset", "18",
                "--dynamo", "--calibrate-bn"], log)
        models[name] = (path, "1x3x224x224", None if r.returncode == 0 else first_error(r))
    for name, extra in TRANSFORMERS.items():
        if only and name not in only:
            continue
        path = os.path.join(out, name + ".onnx")
        r = sh([sys.executable, os.path.join(HERE, "export_transformers.py"), name, "-o", path, "--opset", "18",
                "--dynamo"] + extra, log)
        seq = extra[extra.index("--seq") + 1] if "--seq" in extra else "64"
        d = extra[extra.index("--d-model") + 1] if "--d-model" in extra else "128"
        models[name] = (path, "1x%sx%s" % (seq, d), None if r.returncode == 0 else first_error(r))
    if ppocr_dir:
        import onnx
        from onnx import version_converter
        for name, (file, shape) in PPOCR.items():
            if only and name not in only:
                continue
            src = os.path.join(ppocr_dir, file)
            path = os.path.join(out, "ppocr_%s_op18.onnx" % name)
            try:
                m = onnx.load(src)
                m = version_converter.convert_version(m, 18)
                onnx.save(m, path)
                models["ppocr_" + name] = (path, shape, None)
            except Exception as e:  # noqa: BLE001 - the table says what failed
                models["ppocr_" + name] = (path, shape, "opset 18 conversion: %s" % str(e)[:200])
    return models


def opset_of(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    return max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


def input_name(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    return [i.name for i in m.graph.input if i.name not in inits][0]


def ort_reference(path, x, optimized=True):
    """ORT's output; optimized=False runs the model as written (no graph
    rewrites: ORT's own folding of BatchNorm, Mul and Add into an fp16
    model's weights rounds the folded weights to f16)."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    if not optimized:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return s.run(None, {s.get_inputs()[0].name: x})[0]


def strict_profile(out, base, name):
    text = open(os.path.join(ROOT, "configs", base)).read().replace("fallback: cpu", "fallback: error")
    path = os.path.join(out, name + ".yaml")
    open(path, "w").write(text)
    return path


def islands_of(hetsched, model, profile, shape, log):
    r = sh([hetsched, "preview", model, "--profile", profile, "--format", "json", "--input-shape",
            input_name(model) + "=" + shape], log)
    if r.returncode != 0:
        return None, first_error(r)
    p = json.loads(r.stdout)
    return p, None


def rel_error(got, ref):
    return float(np.abs(got.reshape(-1) - ref.reshape(-1)).max() / max(float(np.abs(ref).max()), 1e-12))


def run_one(hetsched, model, profile, shape, x, ref, half, work, log, ref_half=None, ref_half_literal=None):
    inp = os.path.join(work, "in.bin")
    outp = os.path.join(work, "out.bin")
    (x.astype(np.float16) if half else x).tofile(inp)
    plan, err = islands_of(hetsched, model, profile, shape, log)
    if err:
        return {"error": err}
    t = time.time()
    r = sh([hetsched, "run", model, "--profile", profile, "--input", inp, "--output", outp, "--input-shape",
            input_name(model) + "=" + shape], log)
    if r.returncode != 0:
        return {"error": first_error(r), "islands": len(plan["islands"])}
    got = np.fromfile(outp, dtype=np.float16 if half else np.float32).astype(np.float32)
    if got.size != ref.size:
        return {"error": "output has %d elements, ORT's %d" % (got.size, ref.size)}
    delegates = sorted({i["delegate"] for i in plan["islands"]})
    row = {"islands": len(plan["islands"]), "delegates": delegates, "rel_error": rel_error(got, ref),
           "wall_s": round(time.time() - t, 2)}
    if ref_half is not None:
        row["rel_error_vs_ort_fp16"] = rel_error(got, ref_half)
    if ref_half_literal is not None:
        row["rel_error_vs_ort_fp16_unoptimized"] = rel_error(got, ref_half_literal)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--hetsched", default=os.path.join(ROOT, "build/cli/hetsched"))
    ap.add_argument("--only", default="")
    ap.add_argument("--ppocr", default="")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    log = os.path.join(a.out, "log.txt")
    only = set(filter(None, a.only.split(",")))
    profiles = {"cpu": os.path.join(ROOT, "configs/default.yaml"),
                "vulkan": strict_profile(a.out, "vulkan.yaml", "vulkan_strict"),
                "vgf": strict_profile(a.out, "vgf.yaml", "vgf_strict")}
    rows = []
    for name, (path, shape, export_error) in make_models(a.out, only, a.ppocr, log).items():
        if export_error:
            rows.append({"model": name, "error": "export: " + export_error})
            continue
        half_path = path.replace(".onnx", "_fp16.onnx")
        r = sh([sys.executable, os.path.join(HERE, "to_fp16.py"), path, half_path], log)
        dims = [int(d) for d in shape.split("x")]
        # PP-OCR reads text: a synthetic page (models_test's input), on which
        # det finds text; on noise its output is ~0 everywhere.
        x = page(dims) if name.startswith("ppocr_") else np.random.default_rng(1).standard_normal(dims).astype(np.float32)
        ref = ort_reference(path, x)
        mixed, merr = islands_of(a.hetsched, path, os.path.join(ROOT, "configs/mixed_gpu.yaml"), shape, log)
        # The fp16 model's own error: ORT running it (where its CPU provider
        # has the fp16 kernels) against the fp32 reference.
        ort_half, ref_half, ref_half_literal = None, None, None
        if r.returncode == 0:
            try:
                ref_half = ort_reference(half_path, x.astype(np.float16)).astype(np.float32)
                ref_half_literal = ort_reference(half_path, x.astype(np.float16), optimized=False).astype(np.float32)
                ort_half = rel_error(ref_half, ref)
            except Exception as e:  # noqa: BLE001
                ort_half = "ORT: " + str(e).splitlines()[0][:80]
        cpu_ops = sorted({n["op"] for n in mixed["nodes"] if n["delegate"] == "cpu"}) if mixed else [merr]
        for dtype, model in (("fp32", path), ("fp16", half_path if r.returncode == 0 else None)):
            for delegate, profile in profiles.items():
                row = {"model": name, "opset": opset_of(path), "dtype": dtype, "delegate": delegate,
                       "mixed_cpu_ops": cpu_ops}
                if dtype == "fp16":
                    row["ort_fp16_error"] = ort_half
                if model is None:
                    row["error"] = "fp16 conversion: " + first_error(r)
                else:
                    row.update(run_one(a.hetsched, model, profile, shape, x, ref, dtype == "fp16", a.out, log,
                                       ref_half if dtype == "fp16" else None,
                                       ref_half_literal if dtype == "fp16" else None))
                bound = (1e-3 if name == "ppocr_det" else 1e-4) if dtype == "fp32" else 1e-2
                judged = row.get("rel_error_vs_ort_fp16", row.get("rel_error"))
                row["ok"] = judged is not None and judged <= bound
                rows.append(row)
                print(json.dumps(row), flush=True)
    json.dump(rows, open(os.path.join(a.out, "table.json"), "w"), indent=1)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("| model | opset | dtype | delegate | islands | error vs ORT fp32 | error vs ORT fp16 | within bound "
                "| error vs ORT fp16 unoptimized | ORT's own fp16 error | mixed: ops on the CPU |\n")
        f.write("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
        for r in rows:
            err = "%.1e" % r["rel_error"] if "rel_error" in r else "refused: " + r.get("error", "")
            oh = r.get("ort_fp16_error", "")
            oh = "%.1e" % oh if isinstance(oh, float) else (oh or "")
            vh = "%.1e" % r["rel_error_vs_ort_fp16"] if "rel_error_vs_ort_fp16" in r else "—"
            vl = "%.1e" % r["rel_error_vs_ort_fp16_unoptimized"] if "rel_error_vs_ort_fp16_unoptimized" in r else "—"
            f.write("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                r["model"], r.get("opset", ""), r.get("dtype", ""), r.get("delegate", ""), r.get("islands", ""), err,
                vh, "yes" if r.get("ok") else "no", vl, oh, ", ".join(r.get("mixed_cpu_ops", [])) or "none"))
    print(open(os.path.join(a.out, "table.md")).read())


if __name__ == "__main__":
    main()
