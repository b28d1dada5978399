"""The aarch64 build of minnow against the x86-64 one: same model, same prompts, same tokens.

Runs build/aarch64/minnow (static) under qemu-aarch64 at each kernel level a phone may
have: NEON only (cortex-a53), dotprod (cortex-a76) and i8mm (max); a kernel using an
instruction the CPU model lacks dies of SIGILL here, as it would on the phone.
"""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
X86 = ROOT / "build" / "release" / "minnow"
ARM = ROOT / "build" / "aarch64" / "minnow"
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"

pytestmark = pytest.mark.skipif(not ARM.exists() or shutil.which("qemu-aarch64") is None,
                                reason="no aarch64 build or qemu-aarch64 (make build-aarch64)")

CPUS = {"cortex-a53": "neon", "cortex-a76": "neon+dotprod", "max": "neon+i8mm"}
# Short runs: emulation costs ~0.7 s a token.
PROMPTS = [
    ["-p", "The capital of France is", "-n", "16", "--temp", "0"],
    ["--chat", "-p", "Write a haiku about the sea.", "-n", "16", "--temp", "0"],
    # Sampled: the same seed gives the same tokens on both architectures.
    ["-p", "Once upon a time", "-n", "16", "--temp", "0.8", "--seed", "7"],
]


def run(cmd, env=None):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, f"{cmd}: exit {r.returncode}\n{r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def x86_outputs():
    return [run([X86, "run", "-m", MODEL, "-q", "-t", "2", *p]) for p in PROMPTS]


# Two threads at every level; one as well under max (the split is the same code at every level).
@pytest.mark.parametrize("cpu,threads", [(cpu, 2) for cpu in CPUS] + [("max", 1)])
def test_same_tokens_as_x86(cpu, threads, x86_outputs):
    for prompt, want in zip(PROMPTS, x86_outputs):
        got = run(["qemu-aarch64", "-cpu", cpu, ARM, "run", "-m", MODEL, "-q", "-t", threads, *prompt])
        assert got == want, f"-cpu {cpu} -t {threads} {prompt}"


@pytest.mark.parametrize("cpu,table", list(CPUS.items()))
def test_kernels_chosen_from_hwcap(cpu, table):
    assert f"(kernels: {table})" in run(["qemu-aarch64", "-cpu", cpu, ARM, "--version"])
