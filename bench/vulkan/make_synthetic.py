#!/usr/bin/env python3
"""Writes a Hugging Face checkpoint directory with random F16 weights in the shape of a real
model, for speed measurements where the real file cannot travel (the GPU machine is reached
with a 64 MiB working tree): speed does not depend on the weights' values. `minnow quantize`
then makes the GGUF type to time.

    python3 bench/vulkan/make_synthetic.py qwen2.5-1.5b /tmp/q15-hf --tokenizer tests/reference/tiny/qwen2
    minnow quantize /tmp/q15-hf /tmp/q15.Q4_K_M.gguf --type Q4_K_M

Needs numpy and safetensors only.
"""
import argparse
import json
import shutil
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

SHAPES = {
    # name: (model_type, d_model, layers, heads, kv_heads, d_ff, vocab, qkv_bias, rope_theta)
    "smollm2-135m": ("llama", 576, 30, 9, 3, 1536, 49152, False, 100000.0),
    "qwen2.5-0.5b": ("qwen2", 896, 24, 14, 2, 4864, 151936, True, 1000000.0),
    "qwen2.5-1.5b": ("qwen2", 1536, 28, 12, 2, 8960, 151936, True, 1000000.0),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shape", choices=sorted(SHAPES))
    ap.add_argument("out", type=Path)
    ap.add_argument("--tokenizer", type=Path, required=True,
                    help="a directory with tokenizer.json (and tokenizer_config.json) to copy; "
                         "a smaller vocabulary is padded by minnow quantize")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    arch, d, n_layers, heads, kv_heads, ff, vocab, bias, theta = SHAPES[a.shape]
    hd = d // heads
    rng = np.random.default_rng(a.seed)

    def mat(rows, cols):
        return (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16)

    t = {"model.embed_tokens.weight": mat(vocab, d), "model.norm.weight": np.ones(d, np.float16)}
    for i in range(n_layers):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = np.ones(d, np.float16)
        t[p + "post_attention_layernorm.weight"] = np.ones(d, np.float16)
        t[p + "self_attn.q_proj.weight"] = mat(heads * hd, d)
        t[p + "self_attn.k_proj.weight"] = mat(kv_heads * hd, d)
        t[p + "self_attn.v_proj.weight"] = mat(kv_heads * hd, d)
        t[p + "self_attn.o_proj.weight"] = mat(d, heads * hd)
        if bias:
            for x, n in (("q", heads), ("k", kv_heads), ("v", kv_heads)):
                t[p + f"self_attn.{x}_proj.bias"] = (rng.standard_normal(n * hd, dtype=np.float32) * 0.02).astype(np.float16)
        t[p + "mlp.gate_proj.weight"] = mat(ff, d)
        t[p + "mlp.up_proj.weight"] = mat(ff, d)
        t[p + "mlp.down_proj.weight"] = mat(d, ff)
    a.out.mkdir(parents=True, exist_ok=True)
    save_file(t, str(a.out / "model.safetensors"))
    config = {
        "architectures": ["Qwen2ForCausalLM" if arch == "qwen2" else "LlamaForCausalLM"], "model_type": arch,
        "hidden_size": d, "num_hidden_layers": n_layers, "num_attention_heads": heads,
        "num_key_value_heads": kv_heads, "intermediate_size": ff, "vocab_size": vocab, "hidden_act": "silu",
        "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "rope_theta": theta, "tie_word_embeddings": True,
        "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "float16",
    }
    (a.out / "config.json").write_text(json.dumps(config, indent=2))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        if (a.tokenizer / name).exists():
            shutil.copy(a.tokenizer / name, a.out / name)
    print(f"{a.out}: {a.shape}, {sum(v.size for v in t.values()) / 1e6:.0f}M parameters")


if __name__ == "__main__":
    main()
