#!/usr/bin/env python3
"""End-to-end OCR time: `minnow ocr --timing` against the rapidocr-onnxruntime package
(the same PP-OCR models through onnxruntime, with its own Python pre- and post-processing),
on the golden test images. Run with the reference virtualenv:

    .venv-ref/bin/python bench/onnx/ocr_bench.py [--threads 2] [--runs 5] [IMAGES...]

Each engine reads each image once untimed, then --runs times; the medians are printed as a
Markdown table. The texts are compared too (a speed figure for different output means little).
"""
import argparse
import pathlib
import re
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
MINNOW = ROOT / "build/release/minnow"
GOLDEN = ROOT / "tests/reference/golden/ocr"


def minnow_run(image, threads, runs):
    proc = subprocess.run([str(MINNOW), "ocr", "--timing", "--runs", str(runs), "-t", str(threads), str(image)],
                          capture_output=True, text=True, check=True)
    total = float(re.search(r"total ([\d.]+) ms", proc.stderr).group(1))
    return total, proc.stdout.splitlines()


def rapidocr_run(engine, image, runs):
    engine(str(image))
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        result, _ = engine(str(image))
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), [r[1] for r in (result or [])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("images", nargs="*", help="default: plain_5.png and noisy.png of the golden set")
    args = ap.parse_args()
    if not MINNOW.exists():
        sys.exit(f"ocr_bench: {MINNOW} is missing: build first (cmake --build --preset release)")
    from rapidocr_onnxruntime import RapidOCR
    engine = RapidOCR(intra_op_num_threads=args.threads, inter_op_num_threads=1)
    images = [pathlib.Path(p) for p in args.images] or [GOLDEN / "plain_5.png", GOLDEN / "noisy.png"]
    print(f"| image | lines | -t | minnow ms | rapidocr-onnxruntime ms | minnow speed-up | same text |")
    print("|---|---|---|---|---|---|---|")
    for image in images:
        m_ms, m_lines = minnow_run(image, args.threads, args.runs)
        r_ms, r_lines = rapidocr_run(engine, image, args.runs)
        same = "yes" if m_lines == r_lines else f"no ({sum(a == b for a, b in zip(m_lines, r_lines))}/{len(r_lines)})"
        print(f"| {image.name} | {len(r_lines)} | {args.threads} | {m_ms:.1f} | {r_ms:.1f} | {r_ms / m_ms:.2f}x | {same} |")


if __name__ == "__main__":
    main()
