#!/usr/bin/env python3
"""Throughput of `minnow serve` under 1, 2 and 4 concurrent streaming clients.

Starts build/release/minnow serve (or uses --url), then for each number of streams runs that
many streaming chat requests at once through the openai client, with "ignore_eos": true so every
request generates exactly --max-tokens tokens. Per round and setting:

  aggregate tok/s   sum over streams of (completion tokens - 1), divided by the wall time from
                    the first token of any stream to the last token of any stream
  per-stream tok/s  mean over streams of (completion tokens - 1) / (last token - first token)
  mean TTFT         mean over streams of (first token - request sent): prefill and queueing,
                    kept out of both rates

Each setting runs --rounds times; the table shows medians. "vs 1 stream" is the aggregate rate
divided by the aggregate rate of the first setting (1 stream by default).

Example:
  .venv/bin/python bench/serve_bench.py --model models/SmolLM2-135M-Instruct.Q4_1.gguf --threads 2
"""
import argparse
import json
import pathlib
import re
import statistics
import subprocess
import sys
import threading
import time
import http.client
import urllib.parse

import openai

ROOT = pathlib.Path(__file__).resolve().parents[1]
LISTENING = re.compile(r"minnow serve: listening on (http://\S+)")
PROMPT = "Write a long story about a lighthouse keeper and a storm."


def parse_args():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run on an idle machine: on a shared one the figures vary by 10% or more.")
    ap.add_argument("--model", "-m", default=str(ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"),
                    help="GGUF file or Hugging Face directory to serve (default: the SmolLM2-135M test model)")
    ap.add_argument("--binary", default=str(ROOT / "build" / "release" / "minnow"), help="minnow executable (default %(default)s)")
    ap.add_argument("--threads", "-t", type=int, default=2, help="server compute threads (-t) (default %(default)s)")
    ap.add_argument("--parallel", type=int, default=4, help="server slots (--parallel) (default %(default)s)")
    ap.add_argument("--ctx", type=int, default=1024, help="tokens per slot (--ctx) (default %(default)s)")
    ap.add_argument("--streams", default="1,2,4", help="comma-separated numbers of concurrent streams (default %(default)s)")
    ap.add_argument("--max-tokens", type=int, default=128, help="tokens generated per request (default %(default)s)")
    ap.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=3, help="repetitions per setting (medians are shown) (default %(default)s)")
    ap.add_argument("--server-args", default="", help="extra flags for the server this script starts, "
                                                    "e.g. --server-args=--no-int8-decode (default: none)")
    ap.add_argument("--url", help="benchmark a server already running at this base URL (e.g. "
                                  "http://127.0.0.1:8080) instead of starting one")
    ap.add_argument("--api-key", default="none", help="API key for --url servers started with --api-key")
    ap.add_argument("--client", choices=["raw", "openai"], default="raw",
                    help="raw: bare HTTP connections, light on the CPU the server shares; openai: the official "
                         "client (default %(default)s)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = ap.parse_args()
    args.streams = [int(s) for s in args.streams.split(",") if s.strip()]
    if not args.streams or min(args.streams) < 1 or args.rounds < 1 or args.max_tokens < 2:
        ap.error("--streams must list positive numbers; --rounds >= 1; --max-tokens >= 2")
    return args


def start_server(args):
    cmd = [args.binary, "serve", "-m", args.model, "--port", "0", "-t", str(args.threads),
           "--parallel", str(args.parallel), "--ctx", str(args.ctx)] + args.server_args.split()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        m = LISTENING.search(line)
        if m:
            # Keep draining stderr so a chatty server never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, m.group(1)
    proc.wait()
    sys.exit(f"serve_bench: `{' '.join(cmd)}` exited with {proc.returncode}:\n{''.join(lines)}")


def raw_stream(url, model, args, barrier, out, i):
    """One streaming request over a bare HTTP connection: on a 2-core machine the openai
    client's per-chunk parsing takes about a core away from the server it measures."""
    parts = urllib.parse.urlsplit(url)
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": PROMPT}], "stream": True,
                       "max_tokens": args.max_tokens, "temperature": args.temperature, "seed": 1000 + i,
                       "stream_options": {"include_usage": True}, "ignore_eos": True})
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
    barrier.wait()
    t_sent = time.perf_counter()
    t_first = t_last = None
    tokens = None
    conn.request("POST", "/v1/chat/completions", body,
                 {"Content-Type": "application/json", "Authorization": f"Bearer {args.api_key}"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:200]!r}")
    for line in resp:
        if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
            continue
        if b'"usage":{' in line:  # the last chunk: parse it for the token count
            tokens = json.loads(line[6:])["usage"]["completion_tokens"]
        elif b'"content":"' in line and b'"content":""' not in line:  # a token; no need to parse it
            t_last = time.perf_counter()
            if t_first is None:
                t_first = t_last
    conn.close()
    if tokens is None or t_first is None:
        raise RuntimeError("stream ended without content or usage")
    out[i] = {"sent": t_sent, "first": t_first, "last": t_last, "tokens": tokens}


def one_stream(client, model, args, barrier, out, i):
    if args.client == "raw":
        return raw_stream(args.base_url, model, args, barrier, out, i)
    barrier.wait()
    t_sent = time.perf_counter()
    t_first = t_last = None
    tokens = None
    stream = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": PROMPT}], stream=True,
        max_tokens=args.max_tokens, temperature=args.temperature, seed=1000 + i,
        stream_options={"include_usage": True}, extra_body={"ignore_eos": True})
    for chunk in stream:
        if chunk.usage is not None:
            tokens = chunk.usage.completion_tokens
        if chunk.choices and chunk.choices[0].delta.content:
            t_last = time.perf_counter()
            if t_first is None:
                t_first = t_last
    if tokens is None or t_first is None:
        raise RuntimeError("stream ended without content or usage")
    out[i] = {"sent": t_sent, "first": t_first, "last": t_last, "tokens": tokens}


def run_setting(client, model, args, n):
    out = [None] * n
    errors = []
    barrier = threading.Barrier(n)

    def target(i):
        try:
            one_stream(client, model, args, barrier, out, i)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        sys.exit(f"serve_bench: {n} streams: {errors[0]}")
    span = max(r["last"] for r in out) - min(r["first"] for r in out)
    decoded = sum(r["tokens"] - 1 for r in out)
    per_stream = [(r["tokens"] - 1) / (r["last"] - r["first"]) for r in out if r["last"] > r["first"]]
    return {
        "aggregate_tok_s": decoded / span if span > 0 else 0.0,
        "per_stream_tok_s": statistics.mean(per_stream) if per_stream else 0.0,
        "ttft_ms": 1000 * statistics.mean(r["first"] - r["sent"] for r in out),
        "completion_tokens": sum(r["tokens"] for r in out),
    }


def main():
    args = parse_args()
    proc = None
    url = args.url
    if url is None:
        proc, url = start_server(args)
    try:
        client = openai.OpenAI(base_url=url.rstrip("/") + "/v1", api_key=args.api_key, max_retries=0,
                               timeout=600)
        model = client.models.list().data[0].id
        args.base_url = url
        # Warm-up: touch every slot once so first-use costs stay out of the figures.
        warm = argparse.Namespace(**{**vars(args), "max_tokens": 8})
        run_setting(client, model, warm, max(args.streams))
        results = []
        for n in args.streams:
            rounds = [run_setting(client, model, args, n) for _ in range(args.rounds)]
            med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
            results.append({"streams": n, **med, "rounds": rounds})
        base = results[0]["aggregate_tok_s"] or 1.0
        for r in results:
            r["ratio_vs_first"] = r["aggregate_tok_s"] / base
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()

    config = {"model": model, "url": args.url, "threads": args.threads, "parallel": args.parallel,
              "ctx": args.ctx, "max_tokens": args.max_tokens, "temperature": args.temperature,
              "rounds": args.rounds}
    if args.json:
        print(json.dumps({"config": config, "results": results}, indent=2))
        return
    where = args.url or f"-t {args.threads} --parallel {args.parallel} --ctx {args.ctx} {args.server_args}".strip()
    print(f"minnow serve, {model} ({where}), {args.max_tokens} tokens per request, "
          f"temperature {args.temperature}, median of {args.rounds} rounds\n")
    print(f"| streams | aggregate tok/s | per-stream tok/s | mean TTFT (ms) | vs {results[0]['streams']} stream"
          f"{'s' if results[0]['streams'] > 1 else ''} |")
    print("|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['streams']} | {r['aggregate_tok_s']:.1f} | {r['per_stream_tok_s']:.1f} | "
              f"{r['ttft_ms']:.0f} | {r['ratio_vs_first']:.2f}x |")


if __name__ == "__main__":
    main()
