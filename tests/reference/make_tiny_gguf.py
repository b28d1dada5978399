#!/usr/bin/env python3
"""The tiny llama / qwen2 / qwen3 checkpoints (tests/reference/tiny/<family>/, made by
make_tiny_models.py) converted to GGUF, laid out the way llama.cpp's converter lays them
out, so that minnow's GGUF loader can be held to the same golden logits as its Hugging
Face loader.

    .venv-ref/bin/python tests/reference/make_tiny_gguf.py [family ...]

Writes tests/reference/tiny/<family>.gguf (see tests/reference/README.md, "tiny/<family>.gguf").

- Metadata: general.architecture = llama | qwen2 | qwen3 and the "<arch>.*" hyper-parameters;
  tokenizer.ggml.* (model "gpt2", pre "gpt2") from the directory's tokenizer.json and
  tokenizer_config.json.
- Tensors: llama.cpp names, each in the dtype the checkpoint stores (llama F32, qwen2 BF16,
  qwen3 F16), bit-for-bit. Written in the order of llama.cpp's converter: token_embd, then
  the blocks, then output_norm, output (untied only), with rope_freqs first for llama.
- llama only: the rows of attn_q / attn_k are permuted (llama.cpp's `permute`) so that RoPE
  rotates adjacent pairs (x[2i], x[2i+1]) instead of the halves (x[i], x[i + head_dim/2]);
  Llama 3 RoPE scaling is written as rope_freqs.weight (F32, head_dim/2 factors; an engine
  divides frequency i by factor i) and no rope.scaling.* keys, as llama.cpp's converter does.

Every tensor is read back with gguf.GGUFReader and checked against the checkpoint (after
undoing the permutation), and the metadata is checked key by key. Deterministic: two runs
give byte-identical files.
"""
import json
import math
import sys
from pathlib import Path

import numpy as np
import torch
import gguf
from gguf import GGMLQuantizationType as QT
from safetensors.torch import load_file

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "reference" / "tiny"
FAMILIES = ("llama", "qwen2", "qwen3")

# GGUF token types (llama.cpp's llama_token_type)
TOKEN_NORMAL, TOKEN_CONTROL, TOKEN_USER_DEFINED = 1, 3, 4
# general.file_type (llama.cpp's llama_ftype): "all F32", "mostly F16", "mostly BF16"
FILE_TYPE = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 32}


def permute_rows(w, n_head):
    """llama.cpp's converter for Llama: within each head, reorder the output rows from
    [first half | second half] to interleaved pairs, so that rotate-half RoPE in the
    checkpoint equals adjacent-pair RoPE on the permuted rows. Row r = 2*i + j of a head
    (i < head_dim/2, j in {0, 1}) takes source row j*head_dim/2 + i."""
    rows = w.shape[0]
    return w.reshape(n_head, 2, rows // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def unpermute_rows(w, n_head):
    rows = w.shape[0]
    return w.reshape(n_head, rows // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama3_rope_factors(rope_theta, head_dim, scaling):
    """rope_freqs for rope_type llama3, as llama.cpp's converter defines them: for base
    frequency f_i = theta^(-2i/head_dim) with wavelength 2*pi/f_i, factor 1 when the
    wavelength is below original_max / high_freq_factor, `factor` when above
    original_max / low_freq_factor, else 1 / ((1 - s) / factor + s) with
    s = (original_max / wavelength - low) / (high - low). f_i / factor_i is then exactly
    the Llama 3 scaled frequency."""
    factor = scaling["factor"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    old_ctx = scaling["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old_ctx / low, old_ctx / high
    freqs = 1.0 / (rope_theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    out = []
    for f in freqs.tolist():
        wavelen = 2 * math.pi / f
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            s = (old_ctx / wavelen - low) / (high - low)
            out.append(1.0 / ((1 - s) / factor + s))
    return np.array(out, dtype=np.float32)


def rope_theta_of(cfg):
    if "rope_theta" in cfg:
        return float(cfg["rope_theta"])
    return float(cfg["rope_parameters"]["rope_theta"])


def rope_scaling_of(cfg):
    s = cfg.get("rope_scaling") if "rope_theta" in cfg else cfg.get("rope_parameters")
    if not s or s.get("rope_type", s.get("type", "default")) == "default":
        return None
    return s


def tensor_bytes(t):
    """(array for GGUFWriter.add_tensor, raw_dtype) keeping the stored dtype bit for bit."""
    t = t.contiguous()
    if t.dtype == torch.float32:
        return t.numpy(), None
    if t.dtype == torch.float16:
        return t.numpy(), None
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: hand over the bytes, typed BF16
        raw = t.view(torch.int16).numpy().view(np.uint8).reshape(*t.shape[:-1], t.shape[-1] * 2)
        return raw, QT.BF16
    raise ValueError(f"unexpected dtype {t.dtype}")


def gguf_tensors(family, cfg, sd):
    """[(gguf name, torch tensor in stored dtype, source name, permuted heads or 0)] in the
    converter's order."""
    n_head, n_kv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    out = [("token_embd.weight", "model.embed_tokens.weight")]
    for i in range(cfg["num_hidden_layers"]):
        h, b = f"model.layers.{i}.", f"blk.{i}."
        out += [(b + "attn_norm.weight", h + "input_layernorm.weight"),
                (b + "attn_q.weight", h + "self_attn.q_proj.weight"),
                (b + "attn_k.weight", h + "self_attn.k_proj.weight"),
                (b + "attn_v.weight", h + "self_attn.v_proj.weight")]
        if family == "qwen2":
            out += [(b + "attn_q.bias", h + "self_attn.q_proj.bias"),
                    (b + "attn_k.bias", h + "self_attn.k_proj.bias"),
                    (b + "attn_v.bias", h + "self_attn.v_proj.bias")]
        if family == "qwen3":
            out += [(b + "attn_q_norm.weight", h + "self_attn.q_norm.weight"),
                    (b + "attn_k_norm.weight", h + "self_attn.k_norm.weight")]
        out += [(b + "attn_output.weight", h + "self_attn.o_proj.weight"),
                (b + "ffn_norm.weight", h + "post_attention_layernorm.weight"),
                (b + "ffn_gate.weight", h + "mlp.gate_proj.weight"),
                (b + "ffn_up.weight", h + "mlp.up_proj.weight"),
                (b + "ffn_down.weight", h + "mlp.down_proj.weight")]
    out.append(("output_norm.weight", "model.norm.weight"))
    if not cfg.get("tie_word_embeddings", False):
        out.append(("output.weight", "lm_head.weight"))
    else:
        assert "lm_head.weight" not in sd, "tied model with an lm_head tensor"
    used = {src for _, src in out}
    assert used == set(sd), f"unconverted tensors: {sorted(set(sd) - used)}, missing: {sorted(used - set(sd))}"
    rows = []
    for name, src in out:
        heads = 0
        if family == "llama" and name.endswith("attn_q.weight"):
            heads = n_head
        elif family == "llama" and name.endswith("attn_k.weight"):
            heads = n_kv  # llama.cpp: permute(k, n_head, n_head_kv) uses n_head_kv
        t = sd[src]
        rows.append((name, permute_rows(t, heads) if heads else t, src, heads))
    return rows


def tokenizer_meta(d):
    """tokenizer.ggml.* values from tokenizer.json + tokenizer_config.json."""
    tj = json.loads((d / "tokenizer.json").read_text(encoding="utf-8"))
    tc = json.loads((d / "tokenizer_config.json").read_text(encoding="utf-8"))
    model = tj["model"]
    assert model["type"] == "BPE" and not model.get("byte_fallback"), model["type"]
    pre = tj["pre_tokenizer"]
    # The tiny tokenizer splits with plain GPT-2 ByteLevel (use_regex, no prefix space): minnow's
    # (and llama.cpp's) "gpt2" pre-tokenizer preset is exactly that regex.
    assert pre == {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                   "use_regex": True}, pre
    assert tj.get("normalizer") is None, tj["normalizer"]
    vocab = model["vocab"]
    added = {a["id"]: a for a in tj["added_tokens"]}
    n = max(max(vocab.values()), max(added, default=-1)) + 1
    tokens = [None] * n
    for s, i in vocab.items():
        tokens[i] = s
    types = [TOKEN_NORMAL] * n
    for i, a in added.items():
        assert tokens[i] in (None, a["content"]), (i, tokens[i], a)
        tokens[i] = a["content"]
        types[i] = TOKEN_CONTROL if a["special"] else TOKEN_USER_DEFINED
    assert all(t is not None for t in tokens), "gap in the vocabulary"
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    ids = {a["content"]: i for i, a in added.items()}
    bos, eos, pad = ids[tc["bos_token"]], ids[tc["eos_token"]], ids[tc["pad_token"]]
    # add_bos: tokenizer_config's flag, which must agree with the post-processor's template
    pp = tj.get("post_processor") or {}
    pp_bos = pp.get("type") == "TemplateProcessing" and \
        pp["single"][0].get("SpecialToken", {}).get("id") == tc["bos_token"]
    add_bos = bool(tc.get("add_bos_token", pp_bos))
    assert add_bos == pp_bos, (add_bos, pp_bos)
    add_eos = bool(tc.get("add_eos_token", False))
    return dict(tokens=tokens, types=types, merges=merges, bos=bos, eos=eos, pad=pad,
                add_bos=add_bos, add_eos=add_eos, pre="gpt2")


def write_family(family):
    d = TINY / family
    cfg = json.loads((d / "config.json").read_text())
    arch = cfg["model_type"]
    assert arch == family, arch
    sd = load_file(str(d / "model.safetensors"))
    dtypes = {t.dtype for t in sd.values()}
    assert len(dtypes) == 1, dtypes
    dtype = dtypes.pop()
    hidden, n_head, n_kv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    head_dim = cfg.get("head_dim") or hidden // n_head
    theta, scaling = rope_theta_of(cfg), rope_scaling_of(cfg)
    tok = tokenizer_meta(d)

    path = TINY / f"{family}.gguf"
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(f"minnow tiny {family}")
    w.add_file_type(FILE_TYPE[dtype])
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(hidden)
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    if head_dim != hidden // n_head:
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_freq_base(theta)
    w.add_rope_dimension_count(head_dim)
    w.add_vocab_size(cfg["vocab_size"])

    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(tok["pre"])
    w.add_token_list(tok["tokens"])
    w.add_token_types(tok["types"])
    w.add_token_merges(tok["merges"])
    w.add_bos_token_id(tok["bos"])
    w.add_eos_token_id(tok["eos"])
    w.add_pad_token_id(tok["pad"])
    w.add_add_bos_token(tok["add_bos"])
    w.add_add_eos_token(tok["add_eos"])

    factors = None
    if scaling is not None:
        assert family == "llama" and scaling["rope_type"] == "llama3", scaling
        factors = llama3_rope_factors(theta, head_dim, scaling)
        w.add_tensor("rope_freqs.weight", factors)
    tensors = gguf_tensors(family, cfg, sd)
    for name, t, _, _ in tensors:
        arr, raw = tensor_bytes(t)
        w.add_tensor(name, arr, raw_dtype=raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    verify(family, path, cfg, sd, tensors, factors, tok, head_dim, theta, dtype)
    src_size = (d / "model.safetensors").stat().st_size
    print(f"{family}: {path.relative_to(ROOT)} {path.stat().st_size} bytes "
          f"(model.safetensors {src_size}), {len(tensors) + (factors is not None)} tensors, "
          f"{str(dtype).replace('torch.', '')}" +
          (f", rope_freqs {np.array2string(factors, precision=5)}" if factors is not None else ""))


def field_value(r, key):
    f = r.fields[key]
    if f.types[0] == gguf.GGUFValueType.ARRAY:
        return [f.contents(i) for i in range(len(f.data))]
    return f.contents()


def verify(family, path, cfg, sd, tensors, factors, tok, head_dim, theta, dtype):
    r = gguf.GGUFReader(str(path))
    p = family + "."
    want = {
        "general.architecture": family,
        p + "context_length": cfg["max_position_embeddings"],
        p + "embedding_length": cfg["hidden_size"],
        p + "block_count": cfg["num_hidden_layers"],
        p + "feed_forward_length": cfg["intermediate_size"],
        p + "attention.head_count": cfg["num_attention_heads"],
        p + "attention.head_count_kv": cfg["num_key_value_heads"],
        p + "rope.dimension_count": head_dim,
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "gpt2",
        "tokenizer.ggml.tokens": tok["tokens"],
        "tokenizer.ggml.token_type": tok["types"],
        "tokenizer.ggml.merges": tok["merges"],
        "tokenizer.ggml.bos_token_id": tok["bos"],
        "tokenizer.ggml.eos_token_id": tok["eos"],
        "tokenizer.ggml.add_bos_token": tok["add_bos"],
    }
    for k, v in want.items():
        got = field_value(r, k)
        assert got == v, (k, got if not isinstance(got, list) else got[:5], v if not isinstance(v, list) else v[:5])
    assert np.float32(field_value(r, p + "attention.layer_norm_rms_epsilon")) == np.float32(cfg["rms_norm_eps"])
    assert np.float32(field_value(r, p + "rope.freq_base")) == np.float32(theta)
    if head_dim != cfg["hidden_size"] // cfg["num_attention_heads"]:
        assert field_value(r, p + "attention.key_length") == head_dim
        assert field_value(r, p + "attention.value_length") == head_dim
    else:
        assert p + "attention.key_length" not in r.fields
    assert not any(k.startswith(p + "rope.scaling") for k in r.fields)

    got = {t.name: t for t in r.tensors}
    expect_names = [n for n, *_ in tensors] + (["rope_freqs.weight"] if factors is not None else [])
    assert sorted(got) == sorted(expect_names), sorted(set(got) ^ set(expect_names))
    qtype = {torch.float32: QT.F32, torch.float16: QT.F16, torch.bfloat16: QT.BF16}[dtype]
    for name, _, src, heads in tensors:
        t = got[name]
        s = sd[src]
        assert t.tensor_type == qtype, (name, t.tensor_type)
        assert [int(x) for x in t.shape] == list(reversed(s.shape)), (name, t.shape, s.shape)
        # dequantize to float32 (exact for F32/F16/BF16), undo the permutation, compare bits
        vals = torch.from_numpy(np.ascontiguousarray(
            gguf.quants.dequantize(t.data, t.tensor_type).reshape(s.shape).astype(np.float32)))
        if heads:
            vals = unpermute_rows(vals, heads)
            assert not torch.equal(permute_rows(s.float(), heads), s.float()), name
        assert torch.equal(vals, s.float()), name
        # and the stored bytes are the checkpoint's bytes (no rounding on the way)
        assert torch.equal(vals.to(dtype), s), name
    if factors is not None:
        t = got["rope_freqs.weight"]
        assert t.tensor_type == QT.F32 and [int(x) for x in t.shape] == [head_dim // 2]
        assert np.array_equal(np.asarray(t.data), factors)
        # f_i / factor_i must be the Llama 3 scaled frequency transformers uses (rel. 1e-6)
        from transformers import AutoConfig
        from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
        hf_cfg = AutoConfig.from_pretrained(str(TINY / family))
        inv_freq, _ = ROPE_INIT_FUNCTIONS["llama3"](hf_cfg, "cpu")
        base = 1.0 / (theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim))
        mine = base / factors.astype(np.float64)
        assert np.allclose(mine, inv_freq.double().numpy(), rtol=1e-6, atol=0), (mine, inv_freq)


def check_permutation():
    """permute_rows on a labelled matrix: head h, row 2i+j <- source row j*half + i."""
    n_head, hd = 3, 8
    w = torch.arange(n_head * hd).reshape(n_head * hd, 1)
    p = permute_rows(w, n_head)
    for h in range(n_head):
        for i in range(hd // 2):
            for j in range(2):
                assert p[h * hd + 2 * i + j, 0] == h * hd + j * (hd // 2) + i
    assert torch.equal(unpermute_rows(p, n_head), w)


def main():
    check_permutation()
    for family in sys.argv[1:] or FAMILIES:
        assert family in FAMILIES, family
        write_family(family)


if __name__ == "__main__":
    main()
