#!/usr/bin/env python3
"""Encode throughput, single thread: minnow vs the `tokenizers` package, in one run.

    .venv/bin/python bench/tokenizer_compare.py [--reps 5] [name ...]

The corpus is tests/reference/tokenizer_corpus.py's mixed-language strings (English,
CJK, Korean, Arabic, code, emoji, whitespace, digits, special-token text, random
Unicode), joined into 100 documents so per-call overhead does not dominate. Both
engines encode every document once per repetition (add_special_tokens=True); the table
gives median MB/s of input text and the ratio minnow / tokenizers.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # `tokenizers` single-threaded, like minnow here
from tokenizers import Tokenizer  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "tokenizers"
BENCH = ROOT / "build" / "release" / "minnow_tokenizer_bench"
sys.path.insert(0, str(ROOT / "tests" / "reference"))
from tokenizer_corpus import corpus  # noqa: E402


def documents(n_docs=100):
    texts = [t for _, t in corpus(720)]
    return ["\n".join(texts[i::n_docs]) for i in range(n_docs)]


def time_tokenizers(path, docs, reps):
    tok = Tokenizer.from_file(str(path))
    n_tokens = sum(len(tok.encode(d).ids) for d in docs)  # warm-up
    seconds = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for d in docs:
            tok.encode(d)
        seconds.append(time.perf_counter() - t0)
    return statistics.median(seconds), n_tokens


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", default=["qwen3", "llama3", "gemma3", "llama2"])
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    if not BENCH.exists():
        sys.exit(f"{BENCH} is missing: run `make build` first")
    docs = documents()
    n_bytes = sum(len(d.encode()) for d in docs)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for d in docs:
            f.write(json.dumps(d) + "\n")
        docs_path = f.name
    print(f"corpus: {len(docs)} documents, {n_bytes / 1e6:.2f} MB, median of {args.reps} repetitions, 1 thread")
    print(f"{'tokenizer':<10} {'tokens':>9} {'tokenizers MB/s':>16} {'minnow MB/s':>12} {'ratio':>6}")
    try:
        for name in args.names:
            path = DATA / name / "tokenizer.json"
            if not path.exists():
                print(f"{name:<10} (missing {path})")
                continue
            hf_s, hf_tokens = time_tokenizers(path, docs, args.reps)
            r = subprocess.run([str(BENCH), str(path), docs_path, str(args.reps)], capture_output=True, text=True,
                               check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
            mine = json.loads(r.stdout)
            if mine["tokens"] != hf_tokens:
                print(f"warning: {name}: token counts differ ({mine['tokens']} vs {hf_tokens})")
            hf_mbs = n_bytes / hf_s / 1e6
            print(f"{name:<10} {hf_tokens:>9} {hf_mbs:>16.2f} {mine['mb_per_s']:>12.2f} {mine['mb_per_s'] / hf_mbs:>5.2f}x")
    finally:
        os.unlink(docs_path)


if __name__ == "__main__":
    main()
