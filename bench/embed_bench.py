#!/usr/bin/env python3
"""Sentence embeddings: minnow against sentence-transformers (torch) and onnxruntime, texts/s.

    tests/reference/setup-venv.sh && scripts/fetch-models --minilm
    .venv-ref/bin/python bench/embed_bench.py [-t 2] [--texts 512] [--rounds 5]

Same model (all-MiniLM-L6-v2), same texts (embedding_corpus.sentences: short natural
sentences, ~17 tokens), same threads, batch sizes 1 and 32. Each engine's time covers
tokenization, the encoder, pooling and normalization, not loading:
- minnow: `minnow embed --timing` (its own clock around embed(), in process), per precision;
- sentence-transformers: SentenceTransformer.encode(texts, batch_size), torch threads = -t;
- onnxruntime: the model's BertModel exported with torch.onnx.export (dynamic batch and
  length), all graph optimizations, intra-op threads = -t, inputs padded to the batch's
  longest text, mean pooling and normalization in numpy, tokenized by `tokenizers`.
Rounds alternate the engines; the figure is the median per engine and batch size.
"""
import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "all-MiniLM-L6-v2"
sys.path.insert(0, str(ROOT / "tests" / "reference"))
from embedding_corpus import sentences  # noqa: E402

TIMING = re.compile(r"in ([\d.]+) s: ([\d.]+) texts/s")


def minnow_rate(texts_file, batch, threads, precision):
    r = subprocess.run([str(ROOT / "build/release/minnow"), "embed", "-m", str(MODEL), "-f", texts_file, "--json-lines",
                        "--timing", "-t", str(threads), "-b", str(batch), "--precision", precision],
                       capture_output=True, text=True, check=True)
    return float(TIMING.search(r.stderr).group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-t", "--threads", type=int, default=2)
    ap.add_argument("--texts", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import onnxruntime as ort
    import torch
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    from transformers import AutoModel

    torch.set_num_threads(args.threads)
    texts = sentences(args.texts)
    tmp = pathlib.Path(tempfile.mkdtemp())
    texts_file = tmp / "texts.jsonl"
    texts_file.write_text("".join(json.dumps(t) + "\n" for t in texts))

    st = SentenceTransformer(str(MODEL), device="cpu")

    onnx_path = tmp / "minilm.onnx"
    class Encoder(torch.nn.Module):  # the hidden states only, inputs by name
        def __init__(self):
            super().__init__()
            self.bert = AutoModel.from_pretrained(str(MODEL)).eval()

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    dummy = (torch.ones(2, 8, dtype=torch.long), torch.ones(2, 8, dtype=torch.long))
    torch.onnx.export(Encoder().eval(), dummy, str(onnx_path), input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state"], dynamo=False, opset_version=17,
                      dynamic_axes={"input_ids": {0: "b", 1: "n"}, "attention_mask": {0: "b", 1: "n"},
                                    "last_hidden_state": {0: "b", 1: "n"}})
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(str(MODEL / "tokenizer.json"))
    tok.enable_truncation(st.max_seq_length)
    tok.enable_padding(pad_id=0)  # to the batch's longest

    def ort_encode(batch_texts):
        enc = tok.encode_batch(batch_texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        h = sess.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        m = mask[:, :, None].astype(np.float32)
        v = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    def rate(fn, batch):
        t = time.perf_counter()
        for i in range(0, len(texts), batch):
            fn(texts[i:i + batch])
        return len(texts) / (time.perf_counter() - t)

    ref = st.encode(texts[:64], batch_size=32)
    got = np.concatenate([ort_encode(texts[i:i + 32]) for i in range(0, 64, 32)])
    print(f"onnxruntime {ort.__version__} vs sentence-transformers: min cosine {(ref * got).sum(1).min():.6f}")

    engines = {
        "sentence-transformers (torch %s)" % torch.__version__: lambda b: rate(lambda x: st.encode(x, batch_size=b), b),
        "onnxruntime %s" % ort.__version__: lambda b: rate(ort_encode, b),
        "minnow bf16": lambda b: minnow_rate(str(texts_file), b, args.threads, "bf16"),
        "minnow f32": lambda b: minnow_rate(str(texts_file), b, args.threads, "f32"),
    }
    for fn in engines.values():  # warm-up
        fn(32)
    results = {(name, b): [] for name in engines for b in (1, 32)}
    for r in range(args.rounds):
        names = list(engines) if r % 2 == 0 else list(reversed(engines))
        for name in names:
            for b in (1, 32):
                results[(name, b)].append(engines[name](b))
    base = {b: statistics.median(results[(next(iter(engines)), b)]) for b in (1, 32)}
    print(f"\n{len(texts)} texts, -t {args.threads}, median of {args.rounds} rounds (texts/s; x sentence-transformers)")
    print(f"| engine | batch 1 | batch 32 |\n|---|---|---|")
    for name in engines:
        cells = []
        for b in (1, 32):
            m = statistics.median(results[(name, b)])
            cells.append(f"{m:.0f} ({m / base[b]:.2f}x)")
        print(f"| {name} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
