#!/usr/bin/env python3
"""Golden data for Gemma 3 270M (models/gemma-3-270m-Q4_K_M.gguf) from transformers.

    tests/reference/setup-venv.sh && .venv-ref/bin/python tests/reference/make_golden_gemma3.py

Writes tests/reference/golden/gemma3/<prompt>.json in the format of
golden/smollm2/ (see README.md), plus one key, "add_special_tokens".
Inputs: the GGUF (scripts/fetch-models) and ../shared/data/tokenizers/gemma3/
(tokenizer.json, tokenizer_config.json with the chat template). No network.

* Tokenizer: `tokenizers` on gemma3/tokenizer.json. Plain prompts are encoded
  with add_special_tokens=True (BOS added). The chat prompt, rendered from the
  chat template, already begins with <bos>; it is encoded with
  add_special_tokens=False, as transformers' apply_chat_template(tokenize=True)
  does, so there is exactly one BOS.
* Model: transformers' own GGUF loader (Gemma3ForCausalLM, float32, eager).
  Every tensor is checked against an independent dequantization with the
  `gguf` package (llama.cpp stores Gemma RMSNorm weights as w + 1).
* "long" is longer than the 512-token sliding window, so the local layers'
  window is exercised both in the prompt and in the greedy continuation.
"""
import hashlib
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
MODEL = ROOT / "models" / "gemma-3-270m-Q4_K_M.gguf"
TOKDIR = ROOT.parent / "shared" / "data" / "tokenizers" / "gemma3"
OUT = ROOT / "tests" / "reference" / "golden" / "gemma3"
TOP_K, N_GREEDY, DECIMALS = smol.TOP_K, smol.N_GREEDY, smol.DECIMALS

LONG_EXTRA = (
    "\n\n"
    "There is a practical side to this as well. When a workshop keeps a logbook, every "
    "repair leaves a trace: the date, the part that failed, the person who noticed it, and "
    "the reason they gave. After a few years the logbook becomes more valuable than the "
    "machines themselves, because it tells the next apprentice which sounds mean trouble, "
    "which bolts loosen in winter, and which warnings can safely wait until Monday. The same "
    "is true of a hospital ward, a railway signal box, or a public library whose catalogue "
    "has been corrected by hand for forty years.\n"
    "\n"
    "None of this requires genius. It requires attention, patience, and a little money set "
    "aside before anything breaks. The hardest part is persuading people that nothing "
    "happening is the result they paid for. A quiet night at the water plant, a train that "
    "arrives on time, a website that simply loads: these are achievements, even if no one "
    "writes about them. If we learned to notice them, we might also learn to thank the "
    "people who make them possible, and to give them the time they need to do the work well."
)
PROMPTS = dict(smol.PROMPTS)
PROMPTS["long"] = smol.PROMPTS["long"] + LONG_EXTRA
CHAT_MESSAGES = smol.CHAT_MESSAGES

# GGUF tensor name (per block) -> transformers parameter name
BLOCK_MAP = {
    "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj", "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm", "attn_norm": "input_layernorm",
    "post_attention_norm": "post_attention_layernorm", "ffn_norm": "pre_feedforward_layernorm",
    "post_ffw_norm": "post_feedforward_layernorm", "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj",
}


def hf_name(gguf_name):
    if gguf_name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if gguf_name == "output_norm.weight":
        return "model.norm.weight"
    if gguf_name == "output.weight":
        return "lm_head.weight"
    blk, n, kind, leaf = gguf_name.split(".")
    assert blk == "blk", gguf_name
    return f"model.layers.{n}.{BLOCK_MAP[kind]}.{leaf}"


def check_weights(reader, model):
    """Every model parameter equals gguf's own dequantization (norms: minus 1)."""
    sd = model.state_dict()
    seen, types = set(), {}
    for t in reader.tensors:
        name = hf_name(t.name)
        w = gguf.quants.dequantize(t.data, t.tensor_type)
        w = np.asarray(w, dtype=np.float32).reshape(tuple(reversed([int(x) for x in t.shape])))
        if "norm" in t.name:
            w = w - np.float32(1.0)
        got = sd[name].numpy()
        assert got.shape == w.shape, (t.name, got.shape, w.shape)
        assert np.array_equal(got, w), (t.name, float(np.abs(got - w).max()))
        seen.add(name)
        types.setdefault(t.tensor_type.name, 0)
        types[t.tensor_type.name] += 1
    missing = [k for k in sd if k not in seen and k != "lm_head.weight"]
    assert not missing, missing
    assert torch.equal(sd["lm_head.weight"], sd["model.embed_tokens.weight"])
    return types


def check_config(cfg):
    expect_types = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention"
                    for i in range(cfg.num_hidden_layers)]
    assert cfg.layer_types == expect_types, cfg.layer_types
    rp = cfg.rope_parameters
    assert rp["sliding_attention"] == {"rope_type": "default", "rope_theta": 10000.0}, rp
    assert rp["full_attention"] == {"rope_type": "default", "rope_theta": 1000000.0}, rp
    assert cfg.query_pre_attn_scalar == 256 and cfg.head_dim == 256
    assert cfg.sliding_window == 512
    assert cfg.final_logit_softcapping is None and cfg.attn_logit_softcapping is None
    assert cfg.tie_word_embeddings
    return {k: getattr(cfg, k) for k in (
        "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
        "num_attention_heads", "num_key_value_heads", "head_dim", "sliding_window",
        "query_pre_attn_scalar", "rms_norm_eps", "rope_parameters", "hidden_activation",
        "max_position_embeddings")}


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    if not MODEL.is_file():
        sys.exit(f"missing {MODEL}; run scripts/fetch-models")
    model_sha = smol.sha256(MODEL)
    reader = gguf.GGUFReader(str(MODEL))
    assert smol.field_value(reader, "general.architecture") == "gemma3"
    assert "tokenizer.chat_template" not in reader.fields  # this GGUF carries none
    tok = Tokenizer.from_file(str(TOKDIR / "tokenizer.json"))
    hf_tok_dir = AutoTokenizer.from_pretrained(str(TOKDIR))
    chat = hf_tok_dir.apply_chat_template(CHAT_MESSAGES, tokenize=False, add_generation_prompt=True)
    assert chat.startswith("<bos><start_of_turn>user\n") and chat.endswith("<start_of_turn>model\n")
    hf_tok = AutoTokenizer.from_pretrained(str(MODEL.parent), gguf_file=MODEL.name)

    model = AutoModelForCausalLM.from_pretrained(
        str(MODEL.parent), gguf_file=MODEL.name, dtype=torch.float32,
        attn_implementation="eager").eval()
    cfg_summary = check_config(model.config)
    types = check_weights(reader, model)
    print(f"model: {type(model).__name__}, {cfg_summary}")
    print(f"gguf tensor types: {types}; every tensor equals gguf.quants.dequantize "
          f"(norms minus 1), lm_head tied to embed_tokens")

    prompts = dict(PROMPTS)
    prompts["chat"] = chat
    versions = {"torch": torch.__version__, "transformers": transformers.__version__,
                "gguf": smol._dist_version("gguf"), "tokenizers": tokenizers.__version__,
                "numpy": np.__version__}
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in prompts.items():
        special = name != "chat"
        ids = tok.encode(text, add_special_tokens=special).ids
        assert ids[0] == 2 and ids[1:].count(2) == 0, name  # exactly one <bos>
        ids_tf = hf_tok.encode(text, add_special_tokens=special)
        prompt_logits, greedy, greedy_logits = smol.run_model(model, ids)
        mism = smol.check_cache_consistency(model, ids, greedy)
        top2 = np.sort(greedy_logits, axis=-1)[:, -2:]
        margins = (top2[:, 1] - top2[:, 0]).tolist()
        obj = {
            "model": MODEL.name,
            "model_sha256": model_sha,
            "prompt": text,
            "add_special_tokens": special,
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
        extra = ""
        if len(ids) > model.config.sliding_window:
            with torch.no_grad():
                model.config.sliding_window = 1 << 20
                full = model(input_ids=torch.tensor([ids]), use_cache=False).logits[0].numpy()
                model.config.sliding_window = 512
            d = np.abs(full - prompt_logits).max(axis=-1)
            extra = (f", window 512 vs unlimited: max |diff| {d.max():.3f}, "
                     f"first differing position {int(np.nonzero(d > 0)[0][0])}")
        diff = "same" if ids == ids_tf else "DIFFER"
        print(f"{name}: {len(ids)} tokens (transformers-gguf {len(ids_tf)}, {diff}), "
              f"cache/no-cache argmax mismatches {mism}, min margin {min(margins):.4f}, "
              f"{path.stat().st_size // 1024} KiB{extra}")
        print(f"  greedy: {obj['greedy_text']!r}")


if __name__ == "__main__":
    main()
