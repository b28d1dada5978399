"""minnow pack: the packed file runs the same greedy tokens as its GGUF, loads its weights
as file-backed pages instead of anonymous copies (bench's smaps_rollup split), inspect names
the layout, and packed-again, foreign-layout and truncated files fail with one line."""
import json
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MINNOW = ROOT / "build" / "release" / "minnow"
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="make models first")


def minnow(*args, timeout=300):
    return subprocess.run([str(MINNOW), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def one_line_error(r):
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    out = tmp_path_factory.mktemp("pack") / "smol.packed.gguf"
    r = minnow("pack", MODEL, out)
    assert r.returncode == 0, r.stderr
    assert "211 of 272 tensors packed (layout rows8 v1)" in r.stderr
    assert out.exists() and not pathlib.Path(str(out) + ".tmp").exists()
    return out


@pytest.mark.parametrize("prompt", ["The capital of France is", "def fibonacci(n):"])
def test_same_greedy_tokens(packed, prompt):
    runs = [minnow("run", "-m", m, "-p", prompt, "-n", 32, "--temp", 0, "-t", 2) for m in (MODEL, packed)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout == runs[1].stdout
    assert len(runs[0].stdout) > 20


def test_inspect_shows_layout(packed):
    r = minnow("inspect", "-m", packed)
    assert r.returncode == 0, r.stderr
    assert "pre-packed, layout rows8 v1" in r.stdout
    assert "Q4_1/rows8" in r.stdout
    plain = minnow("inspect", "-m", MODEL)
    assert "not pre-packed" in plain.stdout


def test_weights_stay_file_backed(packed):
    def bench(m):
        r = minnow("bench", "-m", m, "-p", 16, "-n", 4, "-r", 1, "-t", 2, "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    gguf, pk = bench(MODEL), bench(packed)
    if gguf["load_anon_mb"] < 0:
        pytest.skip("no /proc/self/smaps_rollup")
    weights = gguf["weight_mb"] / 1.048576  # MB -> MiB
    # The GGUF copies ~all weights into anonymous memory; the packed file copies none.
    assert gguf["load_anon_mb"] > 0.8 * weights, gguf
    assert pk["load_anon_mb"] < 0.4 * weights, pk
    assert pk["run_anon_mb"] < gguf["run_anon_mb"] - 0.7 * weights, (gguf, pk)
    assert pk["run_anon_mb"] <= pk["kv_written_mb"] + 32 + 16, pk  # target: KV + 32 MB (+ slack for the test)


def test_refusals(packed, tmp_path):
    line = one_line_error(minnow("pack", packed, tmp_path / "again.gguf"))
    assert "is packed already" in line
    assert not (tmp_path / "again.gguf").exists()

    data = packed.read_bytes()
    foreign = tmp_path / "foreign.gguf"
    foreign.write_bytes(data.replace(b"rows8", b"rows9", 1))
    line = one_line_error(minnow("run", "-m", foreign, "-p", "Hi", "-n", 1))
    assert "packed for layout 'rows9', but this minnow reads 'rows8' v1" in line

    for n in (len(data) - 4096, len(data) // 2, 100):
        cut = tmp_path / f"cut{n}.gguf"
        cut.write_bytes(data[:n])
        line = one_line_error(minnow("run", "-m", cut, "-p", "Hi", "-n", 1))
        assert "gguf:" in line

    line = one_line_error(minnow("pack", ROOT / "tests" / "reference" / "tiny" / "llama", tmp_path / "x.gguf"))
    assert "is a directory" in line
