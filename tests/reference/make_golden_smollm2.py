#!/usr/bin/env python3
"""Golden data for SmolLM2-135M-Instruct (Q4_1 GGUF) from outside references.

    tests/reference/setup-venv.sh && .venv-ref/bin/python tests/reference/make_golden_smollm2.py

Writes tests/reference/golden/smollm2/<prompt>.json. Inputs: only
models/SmolLM2-135M-Instruct.Q4_1.gguf (scripts/fetch-models). No network.

* Tokenizer: the model's own Hugging Face rules (SmolLM2 tokenizer.json):
  pre_tokenizer Sequence[Digits(individual_digits=True),
  ByteLevel(add_prefix_space=False, use_regex=True)], ByteLevel decoder,
  byte-level BPE with the GGUF's vocab + merges, control tokens (token_type 3)
  as special added tokens. Built with `tokenizers` from the GGUF metadata
  (read with `gguf`); its ids are the model input ("ids").
  transformers' own GGUF tokenizer conversion is recorded too
  ("ids_transformers_gguf"); see README.md for how they differ.
* Model: transformers dequantizes the GGUF to float32 and runs it on the CPU.
  "top_logits": top-20 (id, logit) per prompt position; "greedy": exactly 64
  argmax tokens, one at a time, no stop at EOS, no BOS added.
"""
import hashlib
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
import torch
import gguf
import tokenizers
import transformers
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
from transformers import AutoModelForCausalLM, AutoTokenizer

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
OUT = ROOT / "tests" / "reference" / "golden" / "smollm2"
TOP_K = 20
N_GREEDY = 64
DECIMALS = 5

PROMPTS = {
    "english": (
        "The old lighthouse keeper climbed the winding stairs every evening, "
        "carrying a lantern and a thermos of tea. From the top, he could see "
        "the fishing boats returning to the harbor, their sails glowing orange "
        "in the setting sun."
    ),
    "code": (
        "def fibonacci(n):\n"
        "    \"\"\"Return the n-th Fibonacci number.\"\"\"\n"
        "    a, b = 0, 1\n"
        "    for _ in range(n):\n"
        "        a, b = b, a + b\n"
        "    return a\n"
        "\n"
        "\n"
        "EXPECTED = [\n"
        "    0, 1, 1, 2, 3,\n"
        "    5, 8, 13, 21, 34,\n"
        "]\n"
        "LIMITS = {\"small\":  8, \"large\": 32}\n"
        "\n"
        "assert [fibonacci(i) for i in range(10)] == EXPECTED\n"
        "print(fibonacci(20))\n"
    ),
    "chinese": (
        "春天来了，公园里的花都开了。孩子们在草地上放风筝，"
        "老人们坐在长椅上聊天，湖面上有几只小船慢慢地划过。"
    ),
    "long": (
        "On the Quiet Work of Maintenance\n"
        "\n"
        "Most of the things we rely on every day were built once and then kept "
        "alive by thousands of small, unremarkable acts. A bridge is designed "
        "in a few years, but it is repainted, inspected, and patched for a "
        "century. A city water system is celebrated when it opens, yet its "
        "real story is told by the crews who replace valves at three in the "
        "morning so that nobody notices anything at all.\n"
        "\n"
        "We tend to admire invention more than care. Invention has a date, a "
        "name, and a photograph; care has a schedule and a checklist. Still, "
        "the difference between a tool that lasts and a tool that fails is "
        "usually not the brilliance of its first version. It is whether "
        "someone was paid, trained, and trusted to look after it. In 1998 a "
        "small town in the hills replaced its wooden footbridge with a steel "
        "one, and the new bridge rusted through in twelve years because no "
        "budget had been set aside for paint.\n"
        "\n"
        "Software makes this lesson sharper. A program can be copied for free, "
        "so it is tempting to think it never wears out. But the world around "
        "it changes: libraries are updated, file formats drift, and the people "
        "who understood the original design move on. Code that nobody reads "
        "slowly becomes code that nobody can read. The cure is the same as for "
        "bridges: tests that run every night, notes that explain why a choice "
        "was made, and a team that treats cleaning up as real work rather than "
        "a chore to be postponed.\n"
        "\n"
        "Maintenance also teaches humility. The person who fixes a leaking "
        "roof learns where the water actually goes, which is rarely where the "
        "architect expected. Each repair is a small experiment, and over time "
        "these experiments add up to knowledge that no plan could contain. "
        "Perhaps the best thing we can do for the future is not to build "
        "something grand, but to leave behind things that are easy to care "
        "for, and people who know how to care for them."
    ),
}
CHAT_MESSAGES = [
    {"role": "user", "content": "What is the capital of France? Answer in one sentence."},
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def field_value(reader, key):
    """Scalar/string/array value of a GGUF metadata field (gguf>=0.10 API)."""
    f = reader.fields[key]
    return f.contents()


def build_tokenizer(reader):
    tokens = field_value(reader, "tokenizer.ggml.tokens")
    merges = field_value(reader, "tokenizer.ggml.merges")
    types = field_value(reader, "tokenizer.ggml.token_type")
    assert field_value(reader, "tokenizer.ggml.model") == "gpt2"
    assert len(tokens) == len(types)
    vocab = {}
    for i, t in enumerate(tokens):
        assert t not in vocab, f"duplicate token {t!r}"
        vocab[t] = i
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    bpe = models.BPE(vocab=vocab, merges=pairs, unk_token=None, fuse_unk=False,
                     byte_fallback=False)
    tok = Tokenizer(bpe)
    tok.normalizer = None
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    control = [(i, tokens[i]) for i in range(len(tokens)) if int(types[i]) == 3]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for _, t in control])
    for i, t in control:
        assert tok.token_to_id(t) == i, (t, tok.token_to_id(t), i)
    return tok, control


def topk_rows(logits):
    """logits: [n, vocab] float32 -> per row, top-K [[id, logit]] sorted by
    logit desc (ties: lower id first)."""
    rows = []
    for row in logits:
        idx = np.argpartition(-row, TOP_K + 8)[: TOP_K + 8]
        idx = idx[np.lexsort((idx, -row[idx]))][:TOP_K]
        rows.append([[int(i), round(float(row[i]), DECIMALS)] for i in idx])
    return rows


def dump(obj, path):
    """JSON with one line per top-level key and one line per position."""
    lines = ["{"]
    keys = list(obj)
    for n, k in enumerate(keys):
        v = obj[k]
        sep = "," if n + 1 < len(keys) else ""
        if isinstance(v, list) and v and isinstance(v[0], list):
            inner = ",\n    ".join(json.dumps(x, separators=(",", ":")) for x in v)
            lines.append(f"  {json.dumps(k)}: [\n    {inner}\n  ]{sep}")
        else:
            lines.append(f"  {json.dumps(k)}: "
                         f"{json.dumps(v, ensure_ascii=False, separators=(',', ':'))}{sep}")
    lines.append("}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@torch.no_grad()
def run_model(model, ids):
    x = torch.tensor([ids], dtype=torch.long)
    out = model(input_ids=x, use_cache=True)
    prompt_logits = out.logits[0].float().numpy()
    past = out.past_key_values
    nxt = prompt_logits[-1]
    greedy, greedy_logits = [], []
    for step in range(N_GREEDY):
        t = int(np.argmax(nxt))  # first max on ties, i.e. lowest id
        greedy.append(t)
        greedy_logits.append(nxt)
        if step + 1 == N_GREEDY:
            break
        out = model(input_ids=torch.tensor([[t]]), past_key_values=past, use_cache=True)
        past = out.past_key_values
        nxt = out.logits[0, -1].float().numpy()
    return prompt_logits, greedy, np.stack(greedy_logits)


@torch.no_grad()
def check_cache_consistency(model, ids, greedy):
    """Full (no-cache) recompute of the whole sequence must give the same argmaxes."""
    seq = torch.tensor([ids + greedy[:-1]])
    logits = model(input_ids=seq, use_cache=False).logits[0].float().numpy()
    redo = logits[len(ids) - 1:].argmax(-1).tolist()
    return sum(a != b for a, b in zip(redo, greedy))


def main():
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    torch.manual_seed(0)
    if not MODEL.is_file():
        sys.exit(f"missing {MODEL}; run scripts/fetch-models")
    model_sha = sha256(MODEL)
    reader = gguf.GGUFReader(str(MODEL))
    arch = field_value(reader, "general.architecture")
    assert arch == "llama", arch
    add_bos = bool(field_value(reader, "tokenizer.ggml.add_bos_token")) \
        if "tokenizer.ggml.add_bos_token" in reader.fields else False
    assert not add_bos
    tok, control = build_tokenizer(reader)
    chat_template = field_value(reader, "tokenizer.chat_template") \
        if "tokenizer.chat_template" in reader.fields else None
    qtypes = sorted({t.tensor_type.name for t in reader.tensors})
    tensor_names = {t.name for t in reader.tensors}
    print(f"gguf: {len(reader.tensors)} tensors, types {qtypes}, "
          f"output.weight present: {'output.weight' in tensor_names}, "
          f"{len(control)} control tokens")

    hf_tok = AutoTokenizer.from_pretrained(str(MODEL.parent), gguf_file=MODEL.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(MODEL.parent), gguf_file=MODEL.name, dtype=torch.float32,
        attn_implementation="eager")
    model.eval()
    emb = model.get_input_embeddings().weight
    head = model.get_output_embeddings().weight
    print(f"model: {type(model).__name__}, dtype {emb.dtype}, "
          f"tie_word_embeddings={model.config.tie_word_embeddings}, "
          f"lm_head shares embed storage: {head.data_ptr() == emb.data_ptr()}, "
          f"equal: {torch.equal(head, emb)}")

    prompts = dict(PROMPTS)
    if chat_template:
        chat = hf_tok.apply_chat_template(CHAT_MESSAGES, tokenize=False,
                                          add_generation_prompt=True)
        assert "<|im_start|>" in chat, chat
        prompts["chat"] = chat

    versions = {"torch": torch.__version__, "transformers": transformers.__version__,
                "gguf": getattr(gguf, "__version__", None) or _dist_version("gguf"),
                "tokenizers": tokenizers.__version__, "numpy": np.__version__}
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in prompts.items():
        ids = tok.encode(text, add_special_tokens=False).ids
        assert tok.decode(ids, skip_special_tokens=False) == text, name
        ids_tf = hf_tok.encode(text)
        prompt_logits, greedy, greedy_logits = run_model(model, ids)
        mism = check_cache_consistency(model, ids, greedy)
        top2 = np.sort(greedy_logits, axis=-1)[:, -2:]
        margins = (top2[:, 1] - top2[:, 0]).tolist()
        obj = {
            "model": MODEL.name,
            "model_sha256": model_sha,
            "prompt": text,
            "n_ids": len(ids),
            "ids": ids,
            "ids_transformers_gguf": ids_tf,
            "top_k": TOP_K,
            "greedy": greedy,
            "greedy_text": tok.decode(greedy, skip_special_tokens=False),
            "greedy_top2_margin": [round(m, DECIMALS) for m in margins],
            "versions": versions,
            "top_logits": topk_rows(prompt_logits),
            "greedy_top_logits": topk_rows(greedy_logits),
        }
        path = OUT / f"{name}.json"
        dump(obj, path)
        json.loads(path.read_text(encoding="utf-8"))  # self-check
        diff = "same" if ids == ids_tf else "DIFFER"
        print(f"{name}: {len(ids)} tokens (transformers-gguf {len(ids_tf)}, {diff}), "
              f"cache/no-cache argmax mismatches {mism}, min margin {min(margins):.4f}, "
              f"{path.stat().st_size // 1024} KiB")
        print(f"  greedy: {obj['greedy_text']!r}")


def _dist_version(name):
    from importlib.metadata import version
    return version(name)


if __name__ == "__main__":
    main()
