#!/usr/bin/env python3
"""minnow quantize against llama-quantize: file size and wikitext-2 perplexity per type.

From one source GGUF (dequantized by both tools), for every type: minnow's file and
llama.cpp's, each without and with an importance matrix (minnow imatrix / llama-imatrix on
the same calibration text, never the test text), each scored by llama-perplexity and
minnow perplexity on the same chunks of wikitext-2 test. llama.cpp is built once by
bench/compare/compare.py (into .cache/llama.cpp). Standard library only:

    bench/quant/make-calibration-text build/calibration.txt
    python3 bench/quant/compare_llama.py --types Q4_0 Q4_K_M --chunks 10
    python3 bench/quant/compare_llama.py --model models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf

Writes a markdown table to stdout and bench/quant/results-<model>.md (--no-write: stdout only).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "compare"))
import compare  # noqa: E402  (the pinned llama.cpp build and its paths)

MINNOW = ROOT / "build" / "release" / "minnow"
DEFAULT_TYPES = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K_M", "Q5_K_M", "Q6_K"]
LLAMA_PPL = re.compile(r"Final estimate: PPL = ([0-9.]+) \+/- ([0-9.]+)")
MINNOW_PPL = re.compile(r"(?:PPL = |^perplexity )([0-9.]+)", re.M)


def log(msg: str) -> None:
    print(f"[quant-compare] {msg}", file=sys.stderr, flush=True)


def run(cmd: list, what: str) -> str:
    t0 = time.time()
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{what} failed ({' '.join(map(str, cmd))}):\n{(p.stdout + p.stderr)[-3000:]}")
    log(f"{what}: {time.time() - t0:.0f} s")
    return p.stdout + p.stderr


def imatrices(src: Path, calib: Path, chunks: int, threads: int, work: Path) -> dict[str, Path]:
    out = {"minnow": work / "minnow.imatrix.gguf", "llama": work / "llama.imatrix.gguf"}
    if not out["minnow"].exists():
        run([MINNOW, "imatrix", "-m", src, "-f", calib, "-o", out["minnow"], "--chunks", chunks, "-t", threads],
            "minnow imatrix")
    if not out["llama"].exists():
        run([compare.BIN / "llama-imatrix", "-m", src, "-f", calib, "-o", out["llama"], "--chunks", chunks,
             "-c", 512, "-t", threads], "llama-imatrix")
    return out


def quantize(tool: str, src: Path, qtype: str, imatrix: Path | None, threads: int, out: Path) -> Path:
    if out.exists():
        return out
    tmp = out.with_suffix(".tmp")
    if tool == "minnow":
        cmd = [MINNOW, "quantize", src, tmp, "--type", qtype, "-t", threads]
        if imatrix:
            cmd += ["--imatrix", imatrix]
    else:
        cmd = [compare.BIN / "llama-quantize", "--allow-requantize"]
        if imatrix:
            cmd += ["--imatrix", imatrix]
        cmd += [src, tmp, qtype, threads]
    run(cmd, f"{tool} quantize {qtype}{' imatrix' if imatrix else ''}")
    tmp.rename(out)
    return out


def perplexity(judge: str, model: Path, chunks: int, threads: int) -> float:
    if judge == "llama":
        text = run([compare.BIN / "llama-perplexity", "-m", model, "-f", compare.WIKITEXT, "-c", 512,
                    "--chunks", chunks, "-t", threads], f"llama-perplexity {model.name}")
        m = LLAMA_PPL.search(text)
    else:
        text = run([MINNOW, "perplexity", "-m", model, "-f", compare.WIKITEXT, "--ctx", 512, "--chunks", chunks,
                    "-t", threads], f"minnow perplexity {model.name}")
        m = MINNOW_PPL.search(text)
    if not m:
        sys.exit(f"no perplexity in the output of {judge} on {model}:\n{text[-2000:]}")
    return float(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf",
                    help="source GGUF, dequantized by both tools (default: the shipped SmolLM2 Q4_1)")
    ap.add_argument("--types", nargs="+", default=DEFAULT_TYPES, help="types (default: %(default)s)")
    ap.add_argument("--calibration", type=Path, default=ROOT / "build" / "calibration.txt",
                    help="imatrix text (bench/quant/make-calibration-text writes the default)")
    ap.add_argument("--imatrix-chunks", type=int, default=20, help="calibration chunks of 512 (default 20)")
    ap.add_argument("--chunks", type=int, default=10, help="wikitext-2 test chunks of 512 scored (default 10)")
    ap.add_argument("--judges", nargs="+", default=["llama", "minnow"], choices=["llama", "minnow"],
                    help="perplexity programs (default: both)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "quant-compare",
                    help="files are kept here and reused on a rerun (default: build/quant-compare)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    for need in (MINNOW, args.model, args.calibration, compare.WIKITEXT):
        if not need.exists():
            sys.exit(f"missing {need}")
    compare.ensure_llama_cpp(2)
    work = args.work / args.model.stem
    work.mkdir(parents=True, exist_ok=True)
    imat = imatrices(args.model, args.calibration, args.imatrix_chunks, args.threads, work)

    def score(path: Path) -> str:
        return " / ".join(f"{perplexity(j, path, args.chunks, args.threads):.3f}" for j in args.judges)

    source_ppl = score(args.model)
    rows = []
    for qtype in args.types:
        cells = []
        for with_imatrix in (False, True):
            for tool in ("llama", "minnow"):
                im = imat[tool] if with_imatrix else None
                out = quantize(tool, args.model, qtype, im, args.threads,
                               work / f"{tool}.{qtype}{'.imat' if im else ''}.gguf")
                cells.append((out.stat().st_size, score(out)))
        sizes = {s for s, _ in cells}
        size = f"{cells[0][0]:,}" if len(sizes) == 1 else " / ".join(f"{s:,}" for s, _ in cells)
        rows.append(f"| {qtype} | {size} | " + " | ".join(p for _, p in cells) + " |")
        log(rows[-1])

    judges = " / ".join({"llama": "llama-perplexity", "minnow": "minnow perplexity"}[j] for j in args.judges)
    md = "\n".join([
        f"## {args.model.name}: minnow quantize against llama-quantize",
        "",
        f"`python3 bench/quant/compare_llama.py --model {args.model.relative_to(ROOT) if args.model.is_relative_to(ROOT) else args.model}"
        f" --types {' '.join(args.types)} --imatrix-chunks {args.imatrix_chunks} --chunks {args.chunks}"
        f" --threads {args.threads}` (llama.cpp {compare.llama_commit()} from llama-cpp-python "
        f"{compare.LLAMA_CPP_PYTHON_VERSION}; minnow {compare.minnow_commit()}).",
        "",
        f"Wikitext-2 test perplexity, first {args.chunks} chunks of 512, each cell {judges}. The source "
        f"itself: {source_ppl}. Importance matrices from {args.imatrix_chunks} chunks of "
        f"`{args.calibration.name}`: llama-imatrix for llama-quantize, minnow imatrix for minnow quantize. "
        "Size in bytes (one figure when all four files are the same size).",
        "",
        "| type | bytes | llama-quantize | minnow quantize | llama-quantize + llama-imatrix | minnow quantize + minnow imatrix |",
        "|---|---|---|---|---|---|",
        *rows,
    ]) + "\n"
    print(md)
    if not args.no_write:
        dest = ROOT / "bench" / "quant" / f"results-{args.model.stem}.md"
        dest.write_text(md)
        log(f"wrote {dest.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
