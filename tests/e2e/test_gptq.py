"""minnow quantize --gptq: the calibration runs, the matrices are quantized by GPTQ, the
result is a GGUF the gguf package reads and minnow runs; --gptq with --imatrix, a missing
text, one too short for a chunk, an output folder that does not exist and a calibration flag
without --gptq fail in one line with no file left behind."""
import pathlib
import subprocess

import pytest

gguf = pytest.importorskip("gguf")

ROOT = pathlib.Path(__file__).resolve().parents[2]
MINNOW = ROOT / "build" / "release" / "minnow"
TINY = ROOT / "tests" / "reference" / "tiny" / "llama.gguf"
TEXT = (
    "A river runs past the mill, turning the wheel that grinds the village's grain. In spring the "
    "water rises over the lower meadow and the children float paper boats down to the bridge. "
) * 20


def minnow(*args, timeout=120):
    return subprocess.run([str(MINNOW), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def one_error(r):
    errors = [line for line in r.stderr.splitlines() if line.startswith("minnow:")]
    assert r.returncode != 0 and len(errors) == 1, r.stderr
    return errors[0]


@pytest.mark.parametrize("qtype", ["Q8_0", "Q4_0", "Q4_K"])
def test_gptq_quantizes_and_runs(tmp_path, qtype):
    text = tmp_path / "calibration.txt"
    text.write_text(TEXT)
    out = tmp_path / f"tiny.{qtype}.gguf"
    r = minnow("quantize", TINY, out, "--type", qtype, "--gptq", text, "-c", 32, "--gptq-chunks", 3, "-t", "2")
    assert r.returncode == 0, r.stderr
    assert "quantize --gptq: [3/3]" in r.stderr  # calibration progress
    reader = gguf.GGUFReader(out)
    names = {t.name: t for t in reader.tensors}
    assert names["blk.0.ffn_down.weight"].tensor_type.name != "F32"
    run = minnow("run", "-m", out, "-p", "A river", "-n", "8", "--temp", "0")
    assert run.returncode == 0, run.stderr


def test_gptq_refusals(tmp_path):
    text = tmp_path / "calibration.txt"
    text.write_text(TEXT)
    out = tmp_path / "tiny.gguf"
    imatrix = tmp_path / "tiny.imatrix.gguf"
    assert minnow("imatrix", "-m", TINY, "-f", text, "-o", imatrix, "-c", 32, "--chunks", 1).returncode == 0
    assert "drop --imatrix" in one_error(minnow("quantize", TINY, out, "--type", "Q8_0", "--gptq", text, "--imatrix", imatrix))
    assert "cannot open" in one_error(minnow("quantize", TINY, out, "--type", "Q8_0", "--gptq", tmp_path / "missing.txt"))
    short = tmp_path / "short.txt"
    short.write_text("Too short.")
    assert "fewer than one chunk" in one_error(minnow("quantize", TINY, out, "--type", "Q8_0", "--gptq", short, "-c", 32))
    assert "does not exist" in one_error(minnow("quantize", TINY, tmp_path / "no" / "x.gguf", "--type", "Q8_0", "--gptq", text))
    assert "--gptq" in one_error(minnow("quantize", TINY, out, "--type", "Q8_0", "--gptq-chunks", 4))
    assert not out.exists() and not pathlib.Path(str(out) + ".tmp").exists()
