"""minnow chat: multi-turn over stdin, Ctrl-C stops a reply, Ctrl-D exits."""
import os
import pathlib
import select
import signal
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
MINNOW = ROOT / "build" / "release" / "minnow"
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def start_chat(*extra):
    return subprocess.Popen([str(MINNOW), "chat", "-m", str(MODEL), "--temp", "0", *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def read_until(stream, needle, timeout=60.0):
    """Reads raw bytes from stream until needle appears; returns everything read."""
    buf = b""
    end = time.time() + timeout
    while needle not in buf:
        left = end - time.time()
        assert left > 0, f"timed out waiting for {needle!r}; got {buf[-400:]!r}"
        ready, _, _ = select.select([stream], [], [], left)
        if ready:
            chunk = os.read(stream.fileno(), 4096)
            assert chunk, f"stream closed before {needle!r}; got {buf[-400:]!r}"
            buf += chunk
    return buf


def test_two_turns_then_eof():
    p = start_chat("-n", "48")
    out, err = p.communicate(b"What is the capital of France?\nAnd what is the capital of Germany?\n", timeout=120)
    assert p.returncode == 0, err
    text = out.decode()
    assert "Paris" in text
    assert "Berlin" in text  # the second turn sees the first (KV cache reused, history kept)


def test_ctrl_c_stops_reply_and_chat_goes_on():
    p = start_chat("-n", "2000")
    read_until(p.stdout, b"> ")
    p.stdin.write(b"Write a very long story about a dragon who learns to cook.\n")
    p.stdin.flush()
    read_until(p.stdout, b" ", timeout=60)  # the reply has started streaming
    p.send_signal(signal.SIGINT)
    read_until(p.stdout, b"\n> ", timeout=60)  # back at the prompt: the reply stopped
    out, err = p.communicate(b"What is the capital of France?\n", timeout=120)
    assert p.returncode == 0, err
    assert b"[stopped]" in err
    assert b"Paris" in out
