"""minnow imatrix and quantize --imatrix: the importance matrix is llama.cpp's GGUF form
(read here by the `gguf` package), quantize uses it and the result runs; a matrix from
another model is refused in one line; llama.cpp's legacy .dat form is read, and missing
entries are a warning."""
import pathlib
import struct
import subprocess

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

ROOT = pathlib.Path(__file__).resolve().parents[2]
MINNOW = ROOT / "build" / "release" / "minnow"
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
TINY = ROOT / "tests" / "reference" / "tiny" / "llama.gguf"
TEXT = (
    "The lighthouse keeper climbed the spiral stairs every evening at dusk, carrying a small "
    "can of oil and a cloth. From the gallery he could see the fishing boats returning to the "
    "harbour, their sails dark against the orange sky. He wrote the weather in a leather book: "
    "wind from the west, a light swell, clouds gathering over the hills to the north. "
) * 8
CTX, CHUNKS = 64, 2


def minnow(*args, timeout=120):
    return subprocess.run([str(MINNOW), *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def imatrix(tmp_path_factory):
    d = tmp_path_factory.mktemp("imatrix")
    text = d / "calibration.txt"
    text.write_text(TEXT)
    out = d / "smol.imatrix.gguf"
    r = minnow("imatrix", "-m", MODEL, "-f", text, "-o", out, "-c", CTX, "--chunks", CHUNKS, "-t", "2")
    assert r.returncode == 0, r.stderr
    assert f"[{CHUNKS}/{CHUNKS}]" in r.stderr  # progress on stderr
    return out


def entries(path):
    r = gguf.GGUFReader(path)
    tensors = {t.name: np.array(t.data, dtype=np.float32).reshape(-1) for t in r.tensors}
    return r, tensors


def test_file_is_llama_cpp_imatrix_gguf(imatrix):
    r, t = entries(imatrix)
    assert r.fields["general.type"].contents() == "imatrix"
    assert r.fields["imatrix.chunk_count"].contents() == CHUNKS
    assert r.fields["imatrix.chunk_size"].contents() == CTX
    assert r.fields["imatrix.datasets"].contents(0).endswith("calibration.txt")
    model = {x.name: x for x in gguf.GGUFReader(MODEL).tensors}
    names = [n[: -len(".in_sum2")] for n in t if n.endswith(".in_sum2")]
    assert len(names) == 30 * 7 + 1  # 7 matrices per layer and the (tied) head
    for n in names:
        assert int(model[n].shape[0]) == t[n + ".in_sum2"].size, n
        assert t[n + ".counts"].tolist() == [CTX * CHUNKS], n
        assert np.all(t[n + ".in_sum2"] >= 0) and t[n + ".in_sum2"].sum() > 0, n
    # Q, K and V see the same input.
    assert np.array_equal(t["blk.3.attn_q.weight.in_sum2"], t["blk.3.attn_v.weight.in_sum2"])


def test_quantize_with_imatrix_runs(imatrix, tmp_path):
    plain, weighted = tmp_path / "plain.gguf", tmp_path / "weighted.gguf"
    for out, extra in ((plain, []), (weighted, ["--imatrix", imatrix])):
        r = minnow("quantize", MODEL, out, "--type", "Q4_0", "-t", "2", *extra)
        assert r.returncode == 0, r.stderr
        assert "warning" not in r.stderr
    assert plain.stat().st_size == weighted.stat().st_size
    assert plain.read_bytes() != weighted.read_bytes()
    r = minnow("run", "-m", weighted, "-p", "The capital of France is", "-n", "8", "--temp", "0", "-t", "2")
    assert r.returncode == 0, r.stderr
    assert "Paris" in r.stdout


def test_foreign_imatrix_is_refused(imatrix, tmp_path):
    out = tmp_path / "tiny.gguf"
    r = minnow("quantize", TINY, out, "--type", "Q8_0", "--imatrix", imatrix)
    assert r.returncode != 0
    errors = [line for line in r.stderr.splitlines() if line.startswith("minnow:")]
    assert len(errors) == 1 and "imatrix entry" in errors[0], r.stderr
    assert not out.exists() and not pathlib.Path(str(out) + ".tmp").exists()


def test_legacy_dat_with_missing_entries_warns(imatrix, tmp_path):
    # llama-imatrix's old form, one entry: values are mean squares times ncall.
    _, t = entries(imatrix)
    name = "blk.0.ffn_down.weight"
    ncall = CHUNKS
    values = t[name + ".in_sum2"] / t[name + ".counts"][0] * ncall
    dat = tmp_path / "one.dat"
    blob = struct.pack("<i", 1) + struct.pack("<i", len(name)) + name.encode() + struct.pack("<ii", ncall, values.size)
    blob += values.astype("<f4").tobytes() + struct.pack("<i", CHUNKS)
    dat.write_bytes(blob)
    out = tmp_path / "dat.gguf"
    r = minnow("quantize", MODEL, out, "--type", "Q5_0", "-t", "2", "--imatrix", dat)
    assert r.returncode == 0, r.stderr
    assert "warning: the imatrix has no entry for" in r.stderr, r.stderr
    r = minnow("run", "-m", out, "-p", "The capital of France is", "-n", "4", "--temp", "0", "-t", "2")
    assert r.returncode == 0, r.stderr


def test_awq_scales_the_norms_and_runs(imatrix, tmp_path):
    out = tmp_path / "awq.gguf"
    r = minnow("quantize", MODEL, out, "--type", "Q4_0", "-t", "2", "--imatrix", imatrix, "--awq")
    assert r.returncode == 0, r.stderr
    summary = [line for line in r.stderr.splitlines() if line.startswith("quantize: --awq: ")]
    # Three groups in each of 30 layers: Q/K/V (attn_norm), gate/up (ffn_norm), down (up's rows).
    assert summary and " of 90 groups scaled" in summary[0], r.stderr
    scaled = int(summary[0].split()[2])
    source = {t.name: np.array(t.data) for t in gguf.GGUFReader(MODEL).tensors if t.name.endswith("norm.weight")}
    mine = {t.name: np.array(t.data) for t in gguf.GGUFReader(out).tensors if t.name.endswith("norm.weight")}
    changed = [n for n in source if not np.array_equal(source[n], mine[n])]
    assert 0 < len(changed) <= scaled
    assert all(".attn_norm." in n or ".ffn_norm." in n for n in changed), changed
    r = minnow("run", "-m", out, "-p", "The capital of France is", "-n", "8", "--temp", "0", "-t", "2")
    assert r.returncode == 0, r.stderr
    assert "Paris" in r.stdout


def test_awq_needs_an_imatrix(tmp_path):
    out = tmp_path / "awq.gguf"
    r = minnow("quantize", MODEL, out, "--type", "Q4_0", "--awq")
    assert r.returncode != 0
    assert "--imatrix" in r.stderr and len(r.stderr.strip().splitlines()) <= 2, r.stderr
    assert not out.exists()
