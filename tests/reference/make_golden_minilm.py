#!/usr/bin/env python3
"""Golden sentence embeddings of all-MiniLM-L6-v2 from sentence-transformers (torch, CPU).

    tests/reference/setup-venv.sh && scripts/fetch-models --minilm
    .venv-ref/bin/python tests/reference/make_golden_minilm.py

Writes tests/reference/golden/minilm/texts.json (the 1,000 texts of embedding_corpus.py)
and embeddings.f16 (1,000 x 384 float16, little-endian, row per text: the reference's
float32 rounded; cosine to the float32 values > 0.9999999).
"""
import json
import pathlib
import sys

import numpy as np
import torch
from sentence_transformers import SentenceTransformer

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from embedding_corpus import corpus  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "models/all-MiniLM-L6-v2"
OUT = ROOT / "tests/reference/golden/minilm"

torch.manual_seed(0)
model = SentenceTransformer(str(MODEL), device="cpu")
texts = corpus(1000)
emb = model.encode(texts, batch_size=32, convert_to_numpy=True)
assert emb.shape == (len(texts), 384) and emb.dtype == np.float32
OUT.mkdir(parents=True, exist_ok=True)
with open(OUT / "texts.json", "w", encoding="utf-8") as f:
    json.dump(texts, f, ensure_ascii=False, indent=0)
    f.write("\n")
emb.astype("<f2").tofile(OUT / "embeddings.f16")
half = emb.astype(np.float16).astype(np.float32)
cos = (half * emb).sum(1) / np.linalg.norm(half, axis=1) / np.linalg.norm(emb, axis=1)
print(f"wrote {OUT}: {len(texts)} texts, max_seq_length {model.max_seq_length}, "
      f"float16 rounding cosine min {cos.min():.9f}", file=sys.stderr)
