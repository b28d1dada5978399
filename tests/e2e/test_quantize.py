"""minnow quantize: the GGUF it writes is read by the `gguf` package (types, shapes,
metadata), equals gguf.quants' reference quantizers byte for byte on the simple types,
and runs in minnow; Hugging Face directories convert to the layout llama.cpp's converter
writes; bad input fails with one line and leaves no output behind."""
import json
import pathlib
import subprocess

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
from gguf import GGMLQuantizationType as QT  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
MINNOW = ROOT / "build" / "release" / "minnow"
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
TINY = ROOT / "tests" / "reference" / "tiny"
PROMPT = "The capital of France is"

SIMPLE = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"]
K_TYPES = ["Q4_K", "Q5_K", "Q6_K"]
# A K type falls back for rows that are not whole 256-value super-blocks (SmolLM2's
# d_model is 576): Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0.
K_FALLBACK = {"Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0"}


def minnow(*args, timeout=300):
    return subprocess.run([str(MINNOW), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def quantize(src, out, qtype, *extra):
    r = minnow("quantize", src, out, "--type", qtype, "-t", "2", *extra)
    assert r.returncode == 0, r.stderr
    assert out.exists() and not pathlib.Path(str(out) + ".tmp").exists()
    return r


def greedy(model, n=8):
    r = minnow("run", "-m", model, "-p", PROMPT, "-n", n, "--temp", "0", "-t", "2")
    assert r.returncode == 0, r.stderr
    return r.stdout


def field(reader, key):
    f = reader.fields[key]
    if f.types[0] == gguf.GGUFValueType.ARRAY:
        return [f.contents(i) for i in range(len(f.data))]
    return f.contents()


@pytest.fixture(scope="module")
def source():
    return reader(MODEL)


_readers = {}


def reader(path):
    """GGUFReader parses the 49k-token vocabulary in Python: once per file."""
    if path not in _readers:
        _readers[path] = gguf.GGUFReader(str(path))
    return _readers[path]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """Every type written once (pure, so each matrix is at the type or its fallback), and
    the two mixed recipes."""
    d = tmp_path_factory.mktemp("quantize")
    out = {}
    for t in SIMPLE + K_TYPES + ["F16"]:
        out[t] = d / f"smol.{t}.gguf"
        quantize(MODEL, out[t], t, "--pure")
    for t in ["Q4_K_M", "Q4_K_KV", "Q8_0_default"]:
        name = t.replace("_default", "")
        out[t] = d / f"smol.{t}.gguf"
        quantize(MODEL, out[t], name)
    return out


@pytest.mark.parametrize("qtype", SIMPLE + K_TYPES + ["F16"])
def test_types_and_shapes(source, outputs, qtype):
    r = reader(outputs[qtype])
    src = {t.name: t for t in source.tensors}
    assert [t.name for t in r.tensors] == [t.name for t in source.tensors]
    for t in r.tensors:
        s = src[t.name]
        assert [int(x) for x in t.shape] == [int(x) for x in s.shape], t.name
        if len(s.shape) == 1:
            assert t.tensor_type == QT.F32, t.name
        elif qtype in K_FALLBACK and int(s.shape[0]) % 256:
            assert t.tensor_type == QT[K_FALLBACK[qtype]], t.name
        else:
            assert t.tensor_type == QT[qtype], t.name
    file_type = {"F16": 1, "Q4_0": 2, "Q4_1": 3, "Q8_0": 7, "Q5_0": 8, "Q5_1": 9, "Q4_K": 14, "Q5_K": 16, "Q6_K": 18}
    assert field(r, "general.file_type") == file_type[qtype]
    assert field(r, "general.quantization_version") == 2


def test_metadata_is_copied(source, outputs):
    """Every key of the source but the quantizer's own, value for value (one output: the
    copy does not depend on the type)."""
    r = reader(outputs["Q8_0"])
    for key in source.fields:
        if key.startswith("GGUF.") or key in ("general.file_type", "general.quantization_version"):
            continue
        assert field(r, key) == field(source, key), key


# Stored type -> the types that hold its values exactly (written without loss).
EXACT = {"Q4_0": {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"}, "Q5_0": {"Q5_0", "Q5_1", "Q8_0"}, "Q4_1": {"Q4_1", "Q5_1"}, "Q4_K": {"Q4_K", "Q5_K"}}


@pytest.mark.parametrize("qtype", SIMPLE)
def test_simple_types_equal_gguf_reference(source, outputs, qtype):
    """The source's values (dequantized, as minnow reads them) quantized by gguf.quants give
    exactly minnow's bytes; where the type holds the stored values exactly (SmolLM2's Q4_1
    matrices as Q4_1 or Q5_1), every value is the source's instead."""
    r = {t.name: t for t in reader(outputs[qtype]).tensors}
    names = {"blk.0.attn_q.weight", "blk.7.ffn_down.weight", "blk.29.attn_v.weight", "token_embd.weight"}
    for s in source.tensors:
        if s.name not in names:
            continue
        x = gguf.quants.dequantize(s.data, s.tensor_type).astype(np.float32)
        got = np.asarray(r[s.name].data)
        if qtype in EXACT.get(s.tensor_type.name, ()) or s.tensor_type.name == qtype:
            assert np.array_equal(gguf.quants.dequantize(got, QT[qtype]).astype(np.float32), x), s.name
            continue
        want = gguf.quants.quantize(x, QT[qtype])
        assert got.shape == want.shape, s.name
        assert np.array_equal(got, want), f"{s.name}: {np.count_nonzero(got != want)} bytes differ"


@pytest.mark.parametrize("qtype", K_TYPES)
def test_k_types_round_trip(source, outputs, qtype):
    """K-quant tensors dequantize (by gguf.quants) close to the source: relative RMS error
    below the budget of their bits."""
    budget = {"Q4_K": 0.12, "Q5_K": 0.06, "Q6_K": 0.03}[qtype]
    r = {t.name: t for t in reader(outputs[qtype]).tensors}
    checked = 0
    for s in source.tensors:
        t = r[s.name]
        if t.tensor_type != QT[qtype] or checked >= 4:
            continue
        x = gguf.quants.dequantize(s.data, s.tensor_type).astype(np.float64)
        y = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float64)
        err = np.sqrt(np.mean((x - y) ** 2) / np.mean(x ** 2))
        assert err < budget, (s.name, err)
        checked += 1
    assert checked == 4


def test_q4_k_m_recipe(outputs):
    """Q4_K_M: the tied head (token_embd) at Q6_K -> Q8_0 (576-value rows), ffn_down at
    Q6_K in the first and last eighth of the 30 layers and every third between, else Q4_K."""
    r = {t.name: t for t in reader(outputs["Q4_K_M"]).tensors}
    assert r["token_embd.weight"].tensor_type == QT.Q8_0
    six = {i for i in range(30) if i < 3 or i >= 27 or (i - 3) % 3 == 2}
    for i in range(30):
        want = QT.Q6_K if i in six else QT.Q4_K
        assert r[f"blk.{i}.ffn_down.weight"].tensor_type == want, i
        assert r[f"blk.{i}.attn_q.weight"].tensor_type == QT.Q5_0, i  # Q4_K's fallback
        want_v = QT.Q8_0 if i in six else QT.Q5_0
        assert r[f"blk.{i}.attn_v.weight"].tensor_type == want_v, i
    assert field(reader(outputs["Q4_K_M"]), "general.file_type") == 15


def test_q4_k_kv_recipe(outputs):
    """minnow's Q4_K_KV: attn_k Q5_K (-> Q5_1 on 576-value rows) and attn_v Q6_K (-> Q8_0) in
    every layer, ffn_down Q6_K only in the first and last eighth (layers 0-2 and 26-29 of 30),
    biases and norms F32; the file still answers."""
    r = {t.name: t for t in reader(outputs["Q4_K_KV"]).tensors}
    assert r["token_embd.weight"].tensor_type == QT.Q8_0
    for i in range(30):
        assert r[f"blk.{i}.attn_k.weight"].tensor_type == QT.Q5_1, i
        assert r[f"blk.{i}.attn_v.weight"].tensor_type == QT.Q8_0, i
        assert r[f"blk.{i}.attn_q.weight"].tensor_type == QT.Q5_0, i
        want = QT.Q6_K if i < 3 or i >= 26 else QT.Q4_K
        assert r[f"blk.{i}.ffn_down.weight"].tensor_type == want, i
    assert all(t.tensor_type == QT.F32 for t in r.values() if len(t.shape) == 1)
    assert outputs["Q4_K_KV"].stat().st_size < outputs["Q4_K_M"].stat().st_size
    assert "Paris" in greedy(outputs["Q4_K_KV"])


def test_generation_after_requantization(outputs):
    """Q8_0 from Q4_1 keeps the original's greedy text (8 bits on top of 4 barely move a
    logit); Q4_K_M (a second 4-5 bit rounding) still answers sensibly."""
    original = greedy(MODEL)
    assert "Paris" in original
    assert greedy(outputs["Q8_0"]) == original
    assert "Paris" in greedy(outputs["Q4_K_M"])


def test_overrides_fallbacks_and_summary(tmp_path):
    """On the tiny Llama (rows of 64 and 128: no K type fits): fallbacks are logged once per
    kind, overrides (glob and /regex/) win over every rule but put block types on matrices
    only, the summary is printed."""
    out = tmp_path / "o.gguf"
    r = quantize(TINY / "llama", out, "Q4_K", "--override", "blk.0.*=Q8_0", "--override", "/ffn_up/=F16",
                 "--override", "blk.2.attn_norm.weight=F16")
    assert "Q4_K does not fit rows of 64 (blocks of 256): Q5_0 instead" in r.stderr
    assert "Q6_K does not fit rows of 64 (blocks of 256): Q8_0 instead: 1 tensor (output.weight)" in r.stderr
    assert "bits per weight" in r.stderr and "tensor types:" in r.stderr
    t = {x.name: x for x in gguf.GGUFReader(str(out)).tensors}
    assert t["blk.0.attn_q.weight"].tensor_type == QT.Q8_0
    assert t["blk.0.attn_norm.weight"].tensor_type == QT.F32  # a block type is for matrices (llama.cpp adds norms as f32)
    assert t["blk.2.attn_norm.weight"].tensor_type == QT.F16  # a float type applies to vectors too
    assert t["blk.1.attn_norm.weight"].tensor_type == QT.F32
    assert t["blk.3.ffn_up.weight"].tensor_type == QT.F16
    assert t["blk.3.ffn_down.weight"].tensor_type == QT.Q5_0  # rows of 128
    assert t["output.weight"].tensor_type == QT.Q8_0  # head at Q6_K unless --pure; Q6_K -> Q8_0
    assert t["token_embd.weight"].tensor_type == QT.Q5_0  # untied: not the head


def test_exact_where_the_type_holds_the_source(tmp_path, source):
    """SmolLM2's Q4_1 matrices as Q5_1 keep every value (Q5_1 is Q4_1 with a fifth bit) and
    the log says so."""
    out = tmp_path / "smol.Q5_1.gguf"
    r = quantize(MODEL, out, "Q5_1")
    assert "quantize: Q4_1 as Q5_1, every value unchanged: " in r.stderr, r.stderr
    got = {t.name: t for t in gguf.GGUFReader(str(out)).tensors}
    for s in source.tensors:
        if s.tensor_type == QT.Q4_1:
            assert got[s.name].tensor_type == QT.Q5_1, s.name
            assert np.array_equal(gguf.quants.dequantize(got[s.name].data, QT.Q5_1),
                                  gguf.quants.dequantize(s.data, QT.Q4_1)), s.name


def test_help_teaches():
    r = minnow("quantize", "--help")
    assert r.returncode == 0
    for word in ("Q4_K_M", "--pure", "--override", "falls back", "Examples"):
        assert word in r.stdout, word


def assert_fails(r, needle, out):
    assert r.returncode != 0
    assert needle in r.stderr.strip().splitlines()[-1], r.stderr
    assert not out.exists() and not pathlib.Path(str(out) + ".tmp").exists()


def test_bad_input_leaves_nothing(tmp_path):
    out = tmp_path / "out.gguf"
    assert_fails(minnow("quantize", "/nonexistent.gguf", out, "--type", "Q4_0"), "/nonexistent.gguf", out)
    assert_fails(minnow("quantize", MODEL, out, "--type", "Q3_X"), "unknown type 'Q3_X'", out)
    assert_fails(minnow("quantize", MODEL, out, "--type", "Q4_0", "--override", "x=Q9"), "unknown type 'Q9'", out)
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model" * 100)
    assert_fails(minnow("quantize", bad, out, "--type", "Q4_0"), "gguf", out)
    # A tensor type minnow cannot read yet (Q2_K): refused by name.
    w = gguf.GGUFWriter(str(tmp_path / "q2k.gguf"), "llama")
    w.add_tensor("blk.0.ffn_up.weight", np.zeros((1, 84), dtype=np.uint8), raw_dtype=QT.Q2_K)
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
    assert_fails(minnow("quantize", tmp_path / "q2k.gguf", out, "--type", "Q4_0"), "Q2_K", out)
    # A NaN in a weight: the error names the tensor and no file is left.
    w = gguf.GGUFWriter(str(tmp_path / "nan.gguf"), "llama")
    x = np.ones((4, 64), dtype=np.float32)
    x[2, 5] = np.nan
    w.add_tensor("blk.0.ffn_up.weight", x)
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
    assert_fails(minnow("quantize", tmp_path / "nan.gguf", out, "--type", "Q8_0"), "blk.0.ffn_up.weight", out)


def test_hf_llama_converts_like_llama_cpp(tmp_path):
    """The tiny F32 Llama checkpoint at --type F32 gives the same tensors (names, order, bytes,
    Q/K permutation included) and hyper-parameters as tests/reference/tiny/llama.gguf, which
    was written the way llama.cpp's converter writes it."""
    out = tmp_path / "llama.gguf"
    quantize(TINY / "llama", out, "F32")
    got, want = gguf.GGUFReader(str(out)), gguf.GGUFReader(str(TINY / "llama.gguf"))
    assert [t.name for t in got.tensors] == [t.name for t in want.tensors]
    for a, b in zip(got.tensors, want.tensors):
        assert a.tensor_type == b.tensor_type and np.array_equal(np.asarray(a.data), np.asarray(b.data)), a.name
    for key in want.fields:
        if key.startswith(("GGUF.", "general.name", "general.file_type", "tokenizer.ggml.padding")):
            continue
        assert field(got, key) == field(want, key), key


@pytest.mark.parametrize("family", ["llama", "qwen2", "qwen3"])
def test_hf_dir_runs_like_the_checkpoint(tmp_path, family):
    """A checkpoint converted at F32 gives the checkpoint's own logits (llama: through the
    Q/K permutation and adjacent-pair RoPE), and at Q8_0 the same top token."""
    args = ["--tokens", "5 17 42 99 7", "--top", "3", "--json"]
    ref = minnow("logits", "-m", TINY / family, *args)
    assert ref.returncode == 0, ref.stderr
    ref = json.loads(ref.stdout)["positions"]
    for qtype, tol in (("F32", 1e-3), ("Q8_0", None)):
        out = tmp_path / f"{family}.{qtype}.gguf"
        quantize(TINY / family, out, qtype, "--pure")
        got = minnow("logits", "-m", out, *args)
        assert got.returncode == 0, got.stderr
        got = json.loads(got.stdout)["positions"]
        assert [p["top"][0][0] for p in got] == [p["top"][0][0] for p in ref], qtype
        if tol:
            for a, b in zip(got, ref):
                assert [x[0] for x in a["top"]] == [x[0] for x in b["top"]]
                assert max(abs(x[1] - y[1]) for x, y in zip(a["top"], b["top"])) < tol
