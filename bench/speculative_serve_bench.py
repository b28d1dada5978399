#!/usr/bin/env python3
"""Speculative decoding in `minnow serve`: one stream, the editing tasks of
speculative_bench.py, each asked plain ("lookup_draft": 0), with the server's draft model
(the default once --draft is given) and with prompt lookup ("lookup_draft": 8); greedy, the
three answers must be identical. Prints completion tokens per second of request wall time
(the prompt is cached by a first plain request, so the time is decoding) and the server's
proposal counters.

    .venv/bin/python bench/speculative_serve_bench.py [--model M] [--draft-model D] [-t 2]
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import speculative_bench  # noqa: E402  (the tasks)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=str(ROOT / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"))
    ap.add_argument("--draft-model", default=str(ROOT / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"))
    ap.add_argument("--minnow", default=str(ROOT / "build" / "release" / "minnow"))
    ap.add_argument("-n", type=int, default=256)
    ap.add_argument("-t", "--threads", type=int, default=2)
    a = ap.parse_args()
    server = subprocess.Popen([a.minnow, "serve", "-m", a.model, "--draft", a.draft_model, "--port", "0", "-t",
                               str(a.threads), "--parallel", "1"], stderr=subprocess.PIPE, text=True)
    port = None
    for line in server.stderr:
        m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    if port is None:
        sys.exit("minnow serve did not start")
    base = f"http://127.0.0.1:{port}"

    def ask(prompt, extra):
        body = {"messages": [{"role": "user", "content": prompt}], "max_tokens": a.n, "temperature": 0, **extra}
        req = urllib.request.Request(base + "/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        t = time.time()
        r = json.load(urllib.request.urlopen(req, timeout=900))
        return r["choices"][0]["message"]["content"], r["usage"]["completion_tokens"] / (time.time() - t)

    try:
        print("| task | plain tok/s | draft model tok/s | prompt lookup (8) tok/s |\n|---|---|---|---|")
        for name, prompt in speculative_bench.TASKS:
            ask(prompt, {"lookup_draft": 0})  # caches the prompt
            plain, p = ask(prompt, {"lookup_draft": 0})
            drafted, d = ask(prompt, {})
            looked, l = ask(prompt, {"lookup_draft": 8})
            assert drafted == plain == looked, f"{name}: outputs differ"
            print(f"| {name} | {p:.1f} | {d:.1f} ({d / p:.2f}x) | {l:.1f} ({l / p:.2f}x) |", flush=True)
        metrics = urllib.request.urlopen(base + "/metrics", timeout=10).read().decode()
        print("\n".join(line for line in metrics.splitlines() if line.startswith("minnow_draft")))
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
