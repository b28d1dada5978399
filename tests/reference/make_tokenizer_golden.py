#!/usr/bin/env python3
"""Golden encodings of Hugging Face tokenizer.json files, for tokenizer_hf_parity_test.

    .venv/bin/python tests/reference/make_tokenizer_golden.py [name ...]

Takes the deterministic corpus of tokenizer_corpus.py, encodes it with the `tokenizers` package (add_special_tokens=True, as transformers does)
and writes tests/reference/golden/tokenizers/<name>.json: a list of
{category, text, ids, roundtrip}, where roundtrip says decode(ids) == text in the reference.
"""
import json
import pathlib
import sys

from tokenizers import Tokenizer

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from tokenizer_corpus import corpus  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared/data/tokenizers"
OUT = ROOT / "tests/reference/golden/tokenizers"

def main(names):
    OUT.mkdir(parents=True, exist_ok=True)
    texts = corpus()
    for name in names:
        tok = Tokenizer.from_file(str(DATA / name / "tokenizer.json"))
        rows = []
        for cat, text in texts:
            ids = tok.encode(text, add_special_tokens=True).ids
            rows.append({"category": cat, "text": text, "ids": ids,
                         "roundtrip": tok.decode(ids, skip_special_tokens=False) == text})
        path = OUT / f"{name}.json"
        with open(path, "w", encoding="utf-8") as f:
            json.dump(rows, f, ensure_ascii=False, separators=(",", ":"))
            f.write("\n")
        print(f"{path}: {len(rows)} strings, {path.stat().st_size} bytes, "
              f"{sum(r['roundtrip'] for r in rows)} round-trip", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:] or ["qwen3", "llama3"])
