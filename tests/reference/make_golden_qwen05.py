#!/usr/bin/env python3
"""Golden data for Qwen2.5-Coder-0.5B-Instruct Q4_K_M from transformers.

    scripts/fetch-models --qwen05 && tests/reference/setup-venv.sh
    .venv-ref/bin/python tests/reference/make_golden_qwen05.py

Writes tests/reference/golden/qwen05/<prompt>.json in the format of golden/smollm2/ (see
README.md). Inputs: models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf and
../shared/data/tokenizers/qwen3/tokenizer.json. No network.

* Tokenizer: `tokenizers` on Qwen3's tokenizer.json, which has Qwen2.5's byte-level BPE
  (vocabulary and merges) and the same ids for <|im_start|> / <|im_end|>; no BOS. The ids
  of transformers' own GGUF tokenizer conversion are recorded beside them and must agree.
* Chat prompt: the GGUF's own chat template rendered by transformers (apply_chat_template).
* Model: transformers' GGUF loader (Qwen2ForCausalLM, float32, eager): the Q4_K/Q6_K
  weights dequantized, run on the CPU. "greedy": 64 argmax tokens, no stop at EOS.
"""
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
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM, AutoTokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_golden_smollm2 as smol  # noqa: E402  (shared prompts, top-k rows, JSON layout)

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
TOKENIZER = ROOT.parent / "shared" / "data" / "tokenizers" / "qwen3" / "tokenizer.json"
OUT = ROOT / "tests" / "reference" / "golden" / "qwen05"
TOP_K, N_GREEDY, DECIMALS = smol.TOP_K, smol.N_GREEDY, smol.DECIMALS


def main():
    torch.set_num_threads(2)
    torch.manual_seed(0)
    if not MODEL.is_file():
        sys.exit(f"missing {MODEL}; run scripts/fetch-models --qwen05")
    model_sha = smol.sha256(MODEL)
    reader = gguf.GGUFReader(str(MODEL))
    assert smol.field_value(reader, "general.architecture") == "qwen2"
    tok = Tokenizer.from_file(str(TOKENIZER))
    hf_tok = AutoTokenizer.from_pretrained(str(MODEL.parent), gguf_file=MODEL.name)
    chat = hf_tok.apply_chat_template(smol.CHAT_MESSAGES, tokenize=False, add_generation_prompt=True)
    assert chat.startswith("<|im_start|>system\n") and chat.endswith("<|im_start|>assistant\n"), chat
    model = AutoModelForCausalLM.from_pretrained(str(MODEL.parent), gguf_file=MODEL.name, dtype=torch.float32,
                                                 attn_implementation="eager").eval()
    cfg = model.config
    print(f"model: {type(model).__name__}, layers {cfg.num_hidden_layers}, hidden {cfg.hidden_size}, "
          f"heads {cfg.num_attention_heads}/{cfg.num_key_value_heads}, vocab {cfg.vocab_size}, "
          f"tied {cfg.tie_word_embeddings}")
    prompts = dict(smol.PROMPTS)
    prompts["chat"] = chat
    versions = {"torch": torch.__version__, "transformers": transformers.__version__,
                "gguf": smol._dist_version("gguf"), "tokenizers": tokenizers.__version__, "numpy": np.__version__}
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in prompts.items():
        ids = tok.encode(text, add_special_tokens=False).ids
        ids_tf = hf_tok.encode(text, add_special_tokens=False)
        assert ids == ids_tf, (name, "tokenizer.json and transformers' GGUF tokenizer disagree")
        prompt_logits, greedy, greedy_logits = smol.run_model(model, ids)
        mism = smol.check_cache_consistency(model, ids, greedy)
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
            "top_logits": smol.topk_rows(prompt_logits),
            "greedy_top_logits": smol.topk_rows(greedy_logits),
        }
        path = OUT / f"{name}.json"
        smol.dump(obj, path)
        print(f"{name}: {len(ids)} tokens, cache/no-cache argmax mismatches {mism}, "
              f"min margin {min(margins):.4f}, {path.stat().st_size // 1024} KiB")
        print(f"  greedy: {obj['greedy_text']!r}")


if __name__ == "__main__":
    main()
