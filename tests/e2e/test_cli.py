"""End-to-end checks of the minnow CLI: output, errors, exit codes."""
import json
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MINNOW = ROOT / "build" / "release" / "minnow"
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
GOLDEN = ROOT / "tests" / "reference" / "golden" / "smollm2"


def minnow(*args, timeout=120):
    return subprocess.run([str(MINNOW), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def assert_clean_failure(r, needle):
    assert r.returncode != 0
    assert r.stdout == "", "nothing may be half-printed on stdout"
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert needle in lines[0], r.stderr


def test_help_teaches():
    r = minnow("--help")
    assert r.returncode == 0
    for sub in ("run", "chat", "bench", "tokenize", "logits"):
        assert sub in r.stdout
    for sub in ("run", "chat", "bench", "tokenize", "logits"):
        r = minnow(sub, "--help")
        assert r.returncode == 0 and "--model" in r.stdout, sub


def test_missing_file():
    assert_clean_failure(minnow("run", "-m", "/nonexistent.gguf", "-p", "hi"), "/nonexistent.gguf")


def test_not_a_gguf(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"this is not a model at all" * 10)
    assert_clean_failure(minnow("run", "-m", bad, "-p", "hi"), "not a GGUF file")


def test_truncated_model(tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(MODEL.read_bytes()[:1_000_000])
    assert_clean_failure(minnow("run", "-m", cut, "-p", "hi"), "gguf")


def test_bad_flag():
    r = minnow("run", "-m", MODEL, "-p", "hi", "--temp", "hot")
    assert_clean_failure(r, "--temp")
    assert_clean_failure(minnow("run", "-m", MODEL, "-p", "hi", "--no-such-flag"), "no-such-flag")


def test_prompt_longer_than_context():
    r = minnow("run", "-m", MODEL, "--ctx", "16", "-p", "word " * 100)
    assert_clean_failure(r, "context")


def test_run_answers_correctly():
    r = minnow("run", "-m", MODEL, "--chat", "--temp", "0", "-n", "32", "-p", "What is the capital of France?")
    assert r.returncode == 0, r.stderr
    assert "Paris" in r.stdout


def test_same_seed_same_output():
    args = ("run", "-m", MODEL, "-n", "24", "--temp", "1.0", "--seed", "7", "-p", "Once upon a time")
    a, b = minnow(*args), minnow(*args)
    assert a.returncode == 0 and a.stdout == b.stdout
    c = minnow("run", "-m", MODEL, "-n", "24", "--temp", "1.0", "--seed", "8", "-p", "Once upon a time")
    assert c.stdout != a.stdout


def test_tokenize_matches_golden():
    g = json.loads((GOLDEN / "code.json").read_text())
    r = minnow("tokenize", "-m", MODEL, g["prompt"])
    assert r.returncode == 0
    assert [int(x) for x in r.stdout.split()] == g["ids"]
    j = json.loads(minnow("tokenize", "-m", MODEL, "--json", "Hello world").stdout)
    assert len(j["ids"]) == len(j["pieces"]) == 2


def test_logits_json():
    g = json.loads((GOLDEN / "english.json").read_text())
    ids = g["ids"][:8]
    r = minnow("logits", "-m", MODEL, "--tokens", " ".join(map(str, ids)), "--top", "5", "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    assert len(j["positions"]) == 8
    for pos, row in enumerate(j["positions"]):
        assert row["token"] == ids[pos]
        assert len(row["top"]) == 5
        assert row["top"][0][0] == g["top_logits"][pos][0][0]
    assert_clean_failure(minnow("logits", "-m", MODEL, "--tokens", "1 x 3"), "'x'")
    assert_clean_failure(minnow("logits", "-m", MODEL, "--tokens", "99999999"), "outside the vocabulary")


def test_bench_json():
    r = minnow("bench", "-m", MODEL, "-p", "16", "-n", "8", "-r", "1", "-t", "2", "--json")
    assert r.returncode == 0, r.stderr
    j = json.loads(r.stdout)
    for key in ("load_s", "ttft_ms", "prefill_tok_s", "decode_tok_s", "peak_rss_mb"):
        assert j[key] > 0


def test_devices_lists_the_cpu_and_vulkan():
    r = minnow("devices")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("cpu: ")
    assert "vulkan" in r.stdout
    # Without a driver it still lists the CPU and says why there is no GPU.
    r = subprocess.run([str(MINNOW), "devices"], capture_output=True, text=True, timeout=60,
                       env={"VK_ICD_FILENAMES": "/nonexistent.json", "VK_DRIVER_FILES": "/nonexistent.json",
                            "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert "vulkan: none (" in r.stdout


def test_vulkan_backend_answers_as_the_cpu():
    if "vulkan 0:" not in minnow("devices").stdout:
        pytest.skip("no Vulkan device")
    args = ("run", "-m", MODEL, "-p", "The capital of France is", "-n", 12, "--temp", 0, "-q")
    cpu, gpu = minnow(*args), minnow(*args, "--backend", "vulkan")
    assert gpu.returncode == 0, gpu.stderr
    assert gpu.stdout == cpu.stdout
    half = minnow(*args, "--backend", "vulkan", "--gpu-layers", 15)  # of 30: the first 15 on the CPU
    assert half.returncode == 0, half.stderr
    assert half.stdout == cpu.stdout


def test_vulkan_backend_without_a_driver_fails_in_one_line():
    r = subprocess.run([str(MINNOW), "run", "-m", str(MODEL), "-p", "hi", "--backend", "vulkan"], capture_output=True,
                       text=True, timeout=60,
                       env={"VK_ICD_FILENAMES": "/nonexistent.json", "VK_DRIVER_FILES": "/nonexistent.json",
                            "PATH": "/usr/bin:/bin"})
    assert_clean_failure(r, "vulkan")
    r = minnow("run", "-m", MODEL, "-p", "hi", "--backend", "vulkan", "--device", 7)
    if "vulkan 0:" in minnow("devices").stdout:
        assert_clean_failure(r, "no device 7")
    r = minnow("run", "-m", MODEL, "-p", "hi", "--backend", "vulkan", "--kv-type", "q8_0")
    assert_clean_failure(r, "f16 KV cache")
    assert_clean_failure(minnow("run", "-m", MODEL, "-p", "hi", "--gpu-layers", 3), "--gpu-layers needs --backend vulkan")
