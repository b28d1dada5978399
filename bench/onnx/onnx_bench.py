#!/usr/bin/env python3
"""Latency of ONNX models: minnow (`minnow onnx run`) against onnxruntime (CPU execution
provider, all graph optimizations) and MNN (its Python wheel, models converted with its
own `mnnconvert`), at the same thread counts, medians of --runs after a warm-up.

Models: RapidOCR's three PP-OCR models at the shapes the OCR pipeline feeds them, and a
MobileNetV2 classifier exported here from torch with random weights (1 x 3 x 224 x 224).
Runs in the reference virtualenv (torch, onnxruntime; `pip install MNN` for MNN):

    .venv-ref/bin/python bench/onnx/onnx_bench.py --threads 1 2 --runs 20
"""
import argparse
import os
import re
import subprocess
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.join(ROOT, "build", "onnx-bench")
MINNOW = os.path.join(ROOT, "build", "release", "minnow")


def mobilenet_v2(path):
    """MobileNetV2 (width 1.0) written out in torch (no torchvision here), random weights."""
    import torch
    from torch import nn

    def conv_bn(cin, cout, k, s, groups=1, act=True):
        layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        if act:
            layers.append(nn.ReLU6())
        return layers

    class Block(nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = cin * expand
            layers = conv_bn(cin, hidden, 1, 1) if expand != 1 else []
            layers += conv_bn(hidden, hidden, 3, stride, groups=hidden) + conv_bn(hidden, cout, 1, 1, act=False)
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.body(x) if self.residual else self.body(x)

    cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    layers, cin = conv_bn(3, 32, 3, 2), 32
    for t, c, n, s in cfg:
        for i in range(n):
            layers.append(Block(cin, c, s if i == 0 else 1, t))
            cin = c
    layers += conv_bn(cin, 1280, 1, 1) + [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(1280, 1000)]
    model = nn.Sequential(*layers).eval()
    torch.manual_seed(0)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    torch.onnx.export(model, torch.rand(1, 3, 224, 224), path, input_names=["x"], output_names=["logits"],
                      opset_version=13, dynamo=False)


def minnow_ms(model, shape, threads, runs):
    out = subprocess.run([MINNOW, "onnx", "run", model, "--shape", "x=" + ",".join(map(str, shape)), "-t", str(threads),
                          "--runs", str(runs), "--warmup", "2"], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"median ([\d.]+) ms", out).group(1))


def ort_ms(model, shape, threads, runs):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    name = s.get_inputs()[0].name
    for _ in range(2):
        s.run(None, {name: x})
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        s.run(None, {name: x})
        ts.append((time.perf_counter() - t) * 1000)
    return float(np.median(ts))


def mnn_ms(model, shape, threads, runs):
    try:
        import MNN
    except ImportError:
        return None
    mnn_path = os.path.join(WORK, os.path.basename(model) + ".mnn")
    if not os.path.exists(mnn_path):
        import sys
        convert = os.path.join(os.path.dirname(sys.executable), "mnnconvert")
        subprocess.run([convert, "-f", "ONNX", "--modelFile", model, "--MNNModel", mnn_path, "--bizCode", "minnow"],
                       capture_output=True, check=True)
    interp = MNN.Interpreter(mnn_path)
    session = interp.createSession({"numThread": threads, "backend": "CPU", "precision": "high"})
    inp = interp.getSessionInput(session)
    interp.resizeTensor(inp, tuple(shape))
    interp.resizeSession(session)
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    tmp = MNN.Tensor(tuple(shape), MNN.Halide_Type_Float, x, MNN.Tensor_DimensionType_Caffe)
    inp.copyFrom(tmp)
    for _ in range(2):
        interp.runSession(session)
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        inp.copyFrom(tmp)
        interp.runSession(session)
        ts.append((time.perf_counter() - t) * 1000)
    return float(np.median(ts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    os.makedirs(WORK, exist_ok=True)
    mobilenet = os.path.join(WORK, "mobilenet_v2.onnx")
    if not os.path.exists(mobilenet):
        mobilenet_v2(mobilenet)
    ocr = os.path.join(ROOT, "models", "rapidocr")
    models = [("PP-OCRv4 det", os.path.join(ocr, "det.onnx"), [1, 3, 736, 736]),
              ("PP-OCRv4 rec", os.path.join(ocr, "rec.onnx"), [6, 3, 48, 320]),
              ("PP-OCR mobile v2 cls", os.path.join(ocr, "cls.onnx"), [6, 3, 48, 192]),
              ("MobileNetV2 (random weights)", mobilenet, [1, 3, 224, 224])]
    print("| model | input | -t | minnow ms | onnxruntime ms | MNN ms | minnow / ORT | minnow / MNN |")
    print("|---|---|---|---|---|---|---|---|")
    for name, path, shape in models:
        for t in args.threads:
            m, o, n = minnow_ms(path, shape, t, args.runs), ort_ms(path, shape, t, args.runs), mnn_ms(path, shape, t, args.runs)
            ns = f"{n:.1f}" if n else "-"
            rn = f"{n / m:.2f}x" if n else "-"
            print(f"| {name} | {'x'.join(map(str, shape))} | {t} | {m:.1f} | {o:.1f} | {ns} | {o / m:.2f}x | {rn} |", flush=True)


if __name__ == "__main__":
    main()
