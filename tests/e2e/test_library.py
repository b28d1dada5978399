"""The installed library: `cmake --install` of the release build, then a C program built
with pkg-config and a CMake project with find_package(minnow) (C and C++), each giving
the same greedy text as `minnow run`."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "release"
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    out = tmp_path_factory.mktemp("install")
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(out)], check=True, capture_output=True)
    return out


def cli(*args):
    return subprocess.run([str(BUILD / "minnow"), *args], check=True, capture_output=True, text=True).stdout


def test_install_tree(prefix):
    names = {p.relative_to(prefix).as_posix() for p in prefix.rglob("*")}
    for want in ["include/minnow/minnow.h", "include/minnow/llm.hpp", "include/minnow/embed.hpp", "lib/libminnow.so", "lib/libminnow.a",
                 "lib/pkgconfig/minnow.pc", "lib/cmake/minnow/minnowConfig.cmake"]:
        assert want in names, want
    # Only the API is exported.
    syms = subprocess.run(["nm", "-D", "--defined-only", str(prefix / "lib/libminnow.so")], check=True,
                          capture_output=True, text=True).stdout.split("\n")
    names = [line.split()[-1] for line in syms if line.strip()]
    assert all(n.startswith(("minnow_", "_ZN6minnow", "_ZNK6minnow", "_ZTIN6minnow", "_ZTSN6minnow", "_ZTVN6minnow"))
               for n in names), [n for n in names if "minnow" not in n][:5]
    assert "minnow_generate" in names


def test_pkg_config_c_program_matches_cli(prefix, tmp_path):
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "minnow"], env=env, check=True,
                           capture_output=True, text=True).stdout.split()
    exe = tmp_path / "chat"
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", str(ROOT / "examples/c/chat.c"), *flags,
                    f"-Wl,-rpath,{prefix / 'lib'}", "-o", str(exe)], check=True)
    got = subprocess.run([str(exe), "-m", str(MODEL), "-n", "32", "--temp", "0"], input=QUESTION + "\n",
                         check=True, capture_output=True, text=True).stdout
    want = cli("run", "-m", str(MODEL), "--chat", "-n", "32", "--temp", "0", "-q", "-p", QUESTION)
    assert got.strip() == want.strip()
    assert "Paris" in got


def test_find_package_project_matches_cli(prefix, tmp_path):
    build = tmp_path / "consumer"
    subprocess.run(["cmake", "-S", str(ROOT / "tests/install"), "-B", str(build), "-G", "Ninja",
                    f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_BUILD_RPATH={prefix / 'lib'}"], check=True,
                   capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    prompt = "The capital of France is"
    want = cli("run", "-m", str(MODEL), "-n", "16", "--temp", "0", "-q", "-p", prompt)
    got = subprocess.run([str(build / "generate_cpp"), str(MODEL), prompt, "16"], check=True,
                         capture_output=True, text=True).stdout
    assert got.strip() == want.strip()
    chat = subprocess.run([str(build / "chat_c"), "-m", str(MODEL), "-n", "32", "--temp", "0"],
                          input=QUESTION + "\n", check=True, capture_output=True, text=True).stdout
    assert chat.strip() == cli("run", "-m", str(MODEL), "--chat", "-n", "32", "--temp", "0", "-q", "-p", QUESTION).strip()
