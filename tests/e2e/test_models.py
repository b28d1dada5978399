"""End-to-end checks of model loading across families and formats: Hugging Face
checkpoint directories, `minnow inspect`, and one-line refusals of what is not supported."""
import json
import pathlib
import shutil
import struct
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
MINNOW = ROOT / "build" / "release" / "minnow"
TINY = ROOT / "tests" / "reference" / "tiny"
GEMMA = ROOT / "models" / "gemma-3-270m-Q4_K_M.gguf"


def minnow(*args, timeout=300):
    return subprocess.run([str(MINNOW), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def assert_clean_failure(r, *needles):
    assert r.returncode != 0
    assert r.stdout == "", "nothing may be half-printed on stdout"
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for n in needles:
        assert n in lines[0], r.stderr


def test_every_tiny_family_runs_from_its_directory():
    for family in ("llama", "qwen2", "qwen3", "gemma3"):
        r = minnow("run", "-m", TINY / family, "-p", "hello", "-n", "4", "--temp", "0")
        assert r.returncode == 0, r.stderr


def test_inspect_lists_config_tokenizer_and_tensors():
    r = minnow("inspect", "-m", TINY / "gemma3")
    assert r.returncode == 0, r.stderr
    for needle in ("architecture gemma3", "sliding window 8 on 4 of 6 layers", "GeGLU, QK norm, sandwich norms",
                   "soft-cap attention 0 / final 30", "model.layers.5.post_feedforward_layernorm.weight", "safetensors"):
        assert needle in r.stdout, needle
    r = minnow("inspect", "-m", TINY / "qwen3", "--tensor", "model.norm.weight", "--stats")
    assert r.returncode == 0, r.stderr
    assert "F16" in r.stdout and "min " in r.stdout and "std " in r.stdout and "first values:" in r.stdout
    assert_clean_failure(minnow("inspect", "-m", TINY / "qwen3", "--tensor", "nope", "--stats"), "no tensor named 'nope'")


def test_inspect_gguf():
    if not GEMMA.exists():
        return
    r = minnow("inspect", "-m", GEMMA)
    assert r.returncode == 0, r.stderr
    assert "architecture gemma3" in r.stdout and "Q4_K" in r.stdout and "sliding window 512 on 15 of 18 layers" in r.stdout


def copy_tiny(tmp_path, family):
    dst = tmp_path / family
    shutil.copytree(TINY / family, dst)
    return dst


def test_unknown_model_type_is_named(tmp_path):
    d = copy_tiny(tmp_path, "llama")
    cfg = json.loads((d / "config.json").read_text())
    cfg["model_type"] = "mamba"
    (d / "config.json").write_text(json.dumps(cfg))
    assert_clean_failure(minnow("run", "-m", d, "-p", "hi"), "model_type 'mamba' is not supported", "llama, qwen2")


def test_config_problems_are_reported_field_by_field(tmp_path):
    d = copy_tiny(tmp_path, "llama")
    cfg = json.loads((d / "config.json").read_text())
    del cfg["hidden_size"]
    cfg["num_attention_heads"] = "four"
    cfg["rope_scaling"] = {"rope_type": "yarn", "factor": 4}
    (d / "config.json").write_text(json.dumps(cfg))
    r = minnow("run", "-m", d, "-p", "hi")
    assert_clean_failure(r, "missing 'hidden_size'", "'num_attention_heads' = \"four\"", "RoPE scaling 'yarn'")


def test_unsupported_tensor_type_is_named(tmp_path):
    d = copy_tiny(tmp_path, "llama")
    path = d / "model.safetensors"
    data = bytearray(path.read_bytes())
    n = struct.unpack_from("<Q", data)[0]
    header = json.loads(data[8:8 + n])
    header["model.norm.weight"]["dtype"] = "I32"  # same width: offsets stay valid
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (n - len(text))
    assert len(text) == n
    data[8:8 + n] = text
    path.write_bytes(bytes(data))
    assert_clean_failure(minnow("run", "-m", d, "-p", "hi"), "model.norm.weight", "I32")


def test_unknown_gguf_architecture_is_named(tmp_path):
    def string(s):
        b = s.encode()
        return struct.pack("<Q", len(b)) + b
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + string("general.architecture") + struct.pack("<I", 8) + string("falcon")
    path = tmp_path / "falcon.gguf"
    path.write_bytes(body)
    assert_clean_failure(minnow("run", "-m", path, "-p", "hi"), "architecture 'falcon' is not supported")


def test_directory_without_config(tmp_path):
    assert_clean_failure(minnow("run", "-m", tmp_path, "-p", "hi"), "no config.json")
