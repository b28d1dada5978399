#!/usr/bin/env python3
"""Tiny random-weight models (llama, qwen2, qwen3, gemma3) as Hugging Face
safetensors directories, plus golden logits from transformers.

    tests/reference/setup-venv.sh && .venv-ref/bin/python tests/reference/make_tiny_models.py

Writes (see tests/reference/README.md, "Tiny models"):
  tests/reference/tiny/<family>/      config.json, model*.safetensors[.index.json],
                                      generation_config.json, tokenizer.json,
                                      tokenizer_config.json
  tests/reference/golden/tiny/<family>.json        sequences, config summary, checks
  tests/reference/golden/tiny/<family>.logits.f32  float32 LE [n_seq][seq_len][vocab]

No network, no model hub. Deterministic: two runs give byte-identical files.
The reference model is the saved directory reloaded from disk (stored dtype,
then .float()), eager attention, float32, one sequence per forward, no cache.
"""
import hashlib
import json
import os
import shutil
import sys
from importlib.metadata import version as dist_version
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
import torch
import tokenizers
import transformers
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (AutoConfig, AutoModelForCausalLM, AutoTokenizer, Gemma3ForCausalLM,
                          Gemma3TextConfig, LlamaConfig, LlamaForCausalLM, Qwen2Config,
                          Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM)

ROOT = Path(__file__).resolve().parents[2]
REF = ROOT / "tests" / "reference"
TINY = REF / "tiny"
GOLDEN = REF / "golden" / "tiny"

VOCAB = 320
SEQ_LEN = 48
N_SEQ = 3
PAD, BOS, EOS = 0, 1, 2          # ids of <pad>, <bos>, <eos> in the tiny tokenizer
SEED = 1234

# Random init (see randomize()): stds chosen so that activations stay O(1)
# and logits spread over a range of several units.
STD_LINEAR = 0.1
STD_BIAS = 0.15
STD_NORM = 0.15        # norm weights: 1 + N(0, s) (Gemma: N(0, s), it applies 1 + w)
STD_EMBED = 0.5
STD_HEAD = 0.25

COMMON = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=512, rms_norm_eps=1e-6,
              bos_token_id=BOS, eos_token_id=EOS, pad_token_id=PAD)

FAMILIES = {
    "llama": dict(
        config_cls=LlamaConfig, model_cls=LlamaForCausalLM, dtype=torch.float32,
        config=dict(COMMON, num_hidden_layers=4, head_dim=16, hidden_act="silu",
                    tie_word_embeddings=False,
                    rope_theta=10000.0,
                    rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                  "high_freq_factor": 4.0,
                                  "original_max_position_embeddings": 32}),
        legacy_config=True,
        features=["llama3 rope scaling (factor 8, low 1, high 4, original max 32; with head_dim 16 and "
                  "theta 1e4 the 8 frequencies hit all three branches: 1 kept, 1 smoothed, 6 divided by 8)",
                  "untied lm_head", "GQA 4 query / 2 KV heads", "F32 storage",
                  "config.json in the classic format (rope_theta + rope_scaling)"]),
    "qwen2": dict(
        config_cls=Qwen2Config, model_cls=Qwen2ForCausalLM, dtype=torch.bfloat16,
        config=dict(COMMON, num_hidden_layers=4, hidden_act="silu", tie_word_embeddings=True,
                    rope_theta=1000000.0, use_sliding_window=False),
        legacy_config=False,
        features=["q/k/v projection biases", "tied embeddings (no lm_head tensor)",
                  "head_dim implied by hidden_size / num_attention_heads (16)",
                  "GQA 4 query / 2 KV heads", "BF16 storage",
                  "config.json as transformers 5 writes it (rope_parameters)"]),
    "qwen3": dict(
        config_cls=Qwen3Config, model_cls=Qwen3ForCausalLM, dtype=torch.float16,
        config=dict(COMMON, num_hidden_layers=4, head_dim=32, hidden_act="silu",
                    tie_word_embeddings=False, rope_theta=1000000.0, use_sliding_window=False),
        legacy_config=False,
        features=["per-head q/k RMSNorm before RoPE", "untied lm_head",
                  "head_dim 32: num_heads * head_dim (128) != hidden_size (64)",
                  "GQA 4 query / 2 KV heads", "F16 storage",
                  "config.json as transformers 5 writes it (rope_parameters)"]),
    "gemma3": dict(
        config_cls=Gemma3TextConfig, model_cls=Gemma3ForCausalLM, dtype=torch.float32,
        config=dict(COMMON, num_hidden_layers=6, head_dim=32, hidden_activation="gelu_pytorch_tanh",
                    tie_word_embeddings=True, sliding_window=8, sliding_window_pattern=3,
                    layer_types=["sliding_attention", "sliding_attention", "full_attention"] * 2,
                    rope_theta=1000000.0, rope_local_base_freq=10000.0,
                    rope_scaling={"rope_type": "linear", "factor": 2.0},
                    query_pre_attn_scalar=24, attn_logit_softcapping=None,
                    final_logit_softcapping=30.0),
        legacy_config=True, max_shard_size="400KB",
        features=["sliding window 8 on layers 0,1,3,4; full attention on layers 2,5",
                  "local RoPE base 1e4 (sliding layers) vs global 1e6 (full layers)",
                  "linear RoPE scaling factor 2 on the full-attention layers only",
                  "query_pre_attn_scalar 24 (scale 24^-0.5) != head_dim 32",
                  "final_logit_softcapping 30 (attn_logit_softcapping null, as in the real "
                  "Gemma 3 configs: transformers 5.24 ignores it for Gemma 3 anyway)",
                  "RMSNorm with (1 + w), 4 norms per layer, q/k norms",
                  "embeddings scaled by sqrt(hidden_size) = 8", "tied embeddings",
                  "gelu_pytorch_tanh", "head_dim 32: num_heads * head_dim (128) != hidden_size (64)",
                  "F32 storage sharded into several safetensors files + model.safetensors.index.json",
                  "config.json in the classic format (rope_theta, rope_local_base_freq, rope_scaling)"]),
}

TOKENIZER_CORPUS = (
    "The tiny models in this directory have random weights. They exist so that the loader, "
    "the attention variants and the position encodings can be compared with the reference "
    "implementation on sequences of a few dozen tokens. A river runs under the old stone "
    "bridge; the miller and the baker meet there every morning at seven o'clock and talk "
    "about the weather, the price of flour, and the children who throw pebbles into the water. "
    "def add(a, b):\n    return a + b\n\nfor i in range(10):\n    print(i, add(i, i))\n"
)
TOKENIZER_CHECK_TEXT = "The miller meets the baker at the bridge: print(add(3, 4))"


def sha256_bytes(b):
    return hashlib.sha256(b).hexdigest()


def build_tokenizer():
    """Byte-level BPE with exactly VOCAB entries: 3 special tokens, 256 bytes, merges."""
    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tok.normalizer = None
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    specials = ["<pad>", "<bos>", "<eos>"]
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB, min_frequency=1, show_progress=False,
        special_tokens=[AddedToken(s, special=True, normalized=False) for s in specials],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([TOKENIZER_CORPUS] * 4, trainer=trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A <bos> $B", special_tokens=[("<bos>", BOS)])
    assert tok.get_vocab_size() == VOCAB, tok.get_vocab_size()
    for i, s in enumerate(specials):
        assert tok.token_to_id(s) == i, s
    return tok


def write_tokenizer(tok, out):
    tok.save(str(out / "tokenizer.json"))
    cfg = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<bos>", "eos_token": "<eos>",
           "pad_token": "<pad>", "add_bos_token": True, "add_eos_token": False,
           "clean_up_tokenization_spaces": False, "model_max_length": 512}
    (out / "tokenizer_config.json").write_text(json.dumps(cfg, indent=2) + "\n")


def randomize(model, family):
    """Overwrite every parameter (deterministic order: sorted names) with N(0, std) draws."""
    gen = torch.Generator().manual_seed(SEED + sum(map(ord, family)))
    zero_centered_norm = family == "gemma3"
    params = dict(model.named_parameters())  # tied parameters appear once
    for name in sorted(params):
        p = params[name]
        if "norm" in name:
            noise = torch.randn(p.shape, generator=gen) * STD_NORM
            val = noise if zero_centered_norm else 1.0 + noise
        elif name.endswith(".bias"):
            val = torch.randn(p.shape, generator=gen) * STD_BIAS
        elif "embed_tokens" in name:
            val = torch.randn(p.shape, generator=gen) * STD_EMBED
        elif name.startswith("lm_head"):
            val = torch.randn(p.shape, generator=gen) * STD_HEAD
        else:
            val = torch.randn(p.shape, generator=gen) * STD_LINEAR
        with torch.no_grad():
            p.copy_(val)


def classic_config(d, family):
    """Rewrite transformers-5 `rope_parameters` as the classic hub keys
    (rope_theta, rope_scaling, and for Gemma 3 rope_local_base_freq)."""
    d = dict(d)
    rp = d.pop("rope_parameters")
    if family == "gemma3":
        full, local = dict(rp["full_attention"]), dict(rp["sliding_attention"])
        assert local.get("rope_type", "default") == "default", local
        d["rope_theta"] = full.pop("rope_theta")
        d["rope_local_base_freq"] = local["rope_theta"]
        d["rope_scaling"] = full if full.get("rope_type", "default") != "default" else None
    else:
        rp = dict(rp)
        d["rope_theta"] = rp.pop("rope_theta")
        d["rope_scaling"] = rp if rp.get("rope_type", "default") != "default" else None
    if "dtype" in d:
        d["torch_dtype"] = d.pop("dtype")
    return dict(sorted(d.items()))


def save_family(family, spec, tok):
    cfg = spec["config_cls"](**spec["config"])
    cfg._attn_implementation = "eager"
    torch.manual_seed(SEED)
    model = spec["model_cls"](cfg).eval()
    randomize(model, family)
    model = model.to(spec["dtype"])
    out = TINY / family
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    kw = {"max_shard_size": spec["max_shard_size"]} if "max_shard_size" in spec else {}
    model.save_pretrained(str(out), **kw)
    if spec["legacy_config"]:
        path = out / "config.json"
        native = AutoConfig.from_pretrained(str(out))
        d = classic_config(json.loads(path.read_text()), family)
        path.write_text(json.dumps(d, indent=2) + "\n")
        reread = AutoConfig.from_pretrained(str(out))
        assert reread.rope_parameters == native.rope_parameters, \
            (reread.rope_parameters, native.rope_parameters)
        assert reread.to_dict() == native.to_dict(), "classic config.json reads differently"
    write_tokenizer(tok, out)
    return model


def load_family(family, spec, **overrides):
    """The saved model, reloaded in its stored dtype, then float32."""
    out = TINY / family
    cfg = AutoConfig.from_pretrained(str(out))
    for k, v in overrides.items():
        setattr(cfg, k, v)
    model = AutoModelForCausalLM.from_pretrained(str(out), config=cfg, dtype=spec["dtype"],
                                                 attn_implementation="eager")
    return model.float().eval()


def sequences():
    """3 x 48 ids spread over the whole vocabulary; the first starts with <bos>."""
    rng = np.random.Generator(np.random.PCG64(SEED))
    seqs = []
    for s in range(N_SEQ):
        ids = rng.integers(0, VOCAB, size=SEQ_LEN).tolist()
        if s == 0:
            ids[0] = BOS
        if s == 1:  # make sure the extremes of the vocabulary occur
            ids[5], ids[17], ids[30] = 0, VOCAB - 1, VOCAB - 2
        seqs.append([int(i) for i in ids])
    return seqs


@torch.no_grad()
def all_logits(model, seqs):
    return np.stack([model(input_ids=torch.tensor([s]), use_cache=False).logits[0].float().numpy()
                     for s in seqs]).astype(np.float32)


@torch.no_grad()
def cached_logits(model, seq, prefill):
    """Prefill `prefill` tokens, then one token at a time with the KV cache."""
    out = model(input_ids=torch.tensor([seq[:prefill]]), use_cache=True)
    rows = [out.logits[0].float().numpy()]
    past = out.past_key_values
    for t in seq[prefill:]:
        out = model(input_ids=torch.tensor([[t]]), past_key_values=past, use_cache=True)
        past = out.past_key_values
        rows.append(out.logits[0].float().numpy())
    return np.concatenate(rows)


def max_diff(a, b):
    return float(np.max(np.abs(a - b)))


def first_diff_position(a, b):
    """First sequence position where any logit of any sequence differs."""
    d = np.abs(a - b).max(axis=(0, 2))
    nz = np.nonzero(d > 0)[0]
    return int(nz[0]) if len(nz) else None


def sanity_checks(family, spec, ref, seqs):
    """How much each exercised feature moves the logits (max |diff| over all positions)."""
    checks = {}

    def variant(label, **overrides):
        m = load_family(family, spec, **overrides)
        got = all_logits(m, seqs)
        checks[label] = {"max_abs_diff": round(max_diff(ref, got), 5),
                         "first_differing_position": first_diff_position(ref, got)}

    if family == "llama":
        variant("without llama3 rope scaling", rope_parameters={"rope_type": "default",
                                                                "rope_theta": 10000.0})
    if family == "qwen2":
        m = load_family(family, spec)
        for layer in m.model.layers:
            for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                proj.bias.data.zero_()
        got = all_logits(m, seqs)
        checks["q/k/v biases zeroed"] = {"max_abs_diff": round(max_diff(ref, got), 5)}
    if family == "qwen3":
        m = load_family(family, spec)
        for layer in m.model.layers:
            layer.self_attn.q_norm.weight.data.fill_(1.0)
            layer.self_attn.k_norm.weight.data.fill_(1.0)
        got = all_logits(m, seqs)
        checks["q/k norm weights set to 1"] = {"max_abs_diff": round(max_diff(ref, got), 5)}
    if family == "gemma3":
        rp = AutoConfig.from_pretrained(str(TINY / family)).rope_parameters
        variant("sliding_window 4096 (all layers see every key)", sliding_window=4096)
        variant("sliding_window 9", sliding_window=9)
        variant("without linear rope scaling on full layers",
                rope_parameters={**rp, "full_attention": {"rope_type": "default",
                                                          "rope_theta": 1000000.0}})
        variant("linear rope scaling on sliding layers too",
                rope_parameters={**rp, "sliding_attention": {"rope_type": "linear", "factor": 2.0,
                                                             "rope_theta": 10000.0}})
        variant("local rope base 1e6 instead of 1e4",
                rope_parameters={**rp, "sliding_attention": {"rope_type": "default",
                                                             "rope_theta": 1000000.0}})
        variant("query_pre_attn_scalar = head_dim (32)", query_pre_attn_scalar=32)
        variant("attn_logit_softcapping 50 (transformers ignores it for Gemma 3)",
                attn_logit_softcapping=50.0)
        variant("without final_logit_softcapping", final_logit_softcapping=None)
    return checks


def summarize_config(family):
    d = json.loads((TINY / family / "config.json").read_text())
    skip = {"transformers_version", "initializer_range", "use_cache", "attention_dropout"}
    return {k: v for k, v in d.items() if k not in skip}


def write_golden(family, spec, seqs, logits, checks, cache_diff, tok):
    GOLDEN.mkdir(parents=True, exist_ok=True)
    raw = logits.astype("<f4").tobytes()
    (GOLDEN / f"{family}.logits.f32").write_bytes(raw)
    files = sorted(p.name for p in (TINY / family).iterdir())
    check_ids = tok.encode(TOKENIZER_CHECK_TEXT, add_special_tokens=True).ids
    obj = {
        "family": family,
        "model_dir": f"tests/reference/tiny/{family}",
        "files": files,
        "dtype": str(spec["dtype"]).replace("torch.", ""),
        "architecture": spec["model_cls"].__name__,
        "config": summarize_config(family),
        "features": spec["features"],
        "vocab_size": VOCAB,
        "n_seq": len(seqs),
        "seq_len": SEQ_LEN,
        "sequences": seqs,
        "logits_file": f"{family}.logits.f32",
        "logits_format": "float32 little-endian, shape [n_seq][seq_len][vocab_size], row [s][i] = "
                         "logits after sequences[s][0..i], one forward per sequence, no cache",
        "logits_sha256": sha256_bytes(raw),
        "logits_min": round(float(logits.min()), 5),
        "logits_max": round(float(logits.max()), 5),
        "logits_std": round(float(logits.std()), 5),
        "kv_cache_max_abs_diff": cache_diff,
        "sanity_checks": checks,
        "tokenizer_check": {"text": TOKENIZER_CHECK_TEXT, "add_special_tokens": True,
                            "ids": check_ids},
        "versions": versions(),
    }
    path = GOLDEN / f"{family}.json"
    path.write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return obj


def versions():
    return {"torch": torch.__version__, "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__, "numpy": np.__version__,
            "safetensors": dist_version("safetensors")}


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    tok = build_tokenizer()
    seqs = sequences()
    only = sys.argv[1:] or list(FAMILIES)
    for family in only:
        spec = FAMILIES[family]
        mem = save_family(family, spec, tok)
        model = load_family(family, spec)
        # the reloaded weights are exactly the stored (rounded) ones
        sd_mem = {k: v.float() for k, v in mem.state_dict().items()}
        for k, v in model.state_dict().items():
            assert torch.equal(v, sd_mem[k]), k
        hf_tok = AutoTokenizer.from_pretrained(str(TINY / family))
        assert hf_tok.encode(TOKENIZER_CHECK_TEXT) == tok.encode(TOKENIZER_CHECK_TEXT).ids
        logits = all_logits(model, seqs)
        cached = np.stack([cached_logits(model, s, 20) for s in seqs])
        cache_diff = round(max_diff(logits, cached), 7)
        checks = sanity_checks(family, spec, logits, seqs)
        write_golden(family, spec, seqs, logits, checks, cache_diff, tok)
        size = sum(p.stat().st_size for p in (TINY / family).iterdir())
        print(f"{family}: {spec['model_cls'].__name__} {spec['dtype']}, model dir {size / 1024:.0f} KiB, "
              f"logits [{logits.min():.3f}, {logits.max():.3f}] std {logits.std():.3f}, "
              f"argmax classes {len(np.unique(logits.argmax(-1)))}, kv-cache diff {cache_diff:.2e}")
        for label, r in checks.items():
            print(f"  {label}: {r}")


if __name__ == "__main__":
    main()
