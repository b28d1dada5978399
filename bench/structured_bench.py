#!/usr/bin/env python3
"""Decode time per token with a JSON Schema against free text (issue 18's <= 10% target).

    .venv/bin/python bench/structured_bench.py [--model M] [--rounds 3] [-t 2]

Each round runs `minnow run` greedy on the same chat prompt twice, alternating which goes
first: free text (`--ignore-eos`, as many tokens as the constrained output), and constrained by a schema (an array of up to 8 objects, so the output
is long and passes through strings, numbers, enums and punctuation). The figure is decode
seconds per generated token (from the run's stderr timing line), median over rounds.
"""
import argparse
import json
import pathlib
import re
import statistics
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
TIMING = re.compile(r"generated: (\d+) tokens, ([\d.]+) tok/s")
SCHEMA = {
    "type": "array", "minItems": 8, "maxItems": 8,
    "items": {"type": "object",
              "properties": {"name": {"type": "string", "maxLength": 24},
                             "country": {"type": "string", "maxLength": 24},
                             "population": {"type": "integer"},
                             "kind": {"enum": ["capital", "city", "town"]},
                             "coastal": {"type": "boolean"}},
              "required": ["name", "country", "population", "kind", "coastal"]},
}
PROMPT = "List eight European cities as JSON objects with name, country, population, kind and coastal."


def run(minnow, model, threads, n, extra):
    r = subprocess.run([minnow, "run", "-m", model, "--chat", "--temp", "0", "-n", str(n), "-t", str(threads),
                        "-p", PROMPT, *extra], capture_output=True, text=True, check=True)
    m = TIMING.search(r.stderr)
    tokens, rate = int(m.group(1)), float(m.group(2))
    return tokens, rate, r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=str(ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--minnow", default=str(ROOT / "build" / "release" / "minnow"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-t", "--threads", type=int, default=2)
    a = ap.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(SCHEMA, f)
    schema_flags = ["--json-schema-file", f.name]
    free, constrained = [], []
    n_schema = None
    for i in range(a.rounds):
        order = [("schema", schema_flags), ("free", [])]  # the first round's schema run sets the length
        if i % 2 and n_schema:
            order.reverse()
        for kind, flags in order:
            # The free run generates as many tokens as the constrained one did (same decode length).
            n = 512 if kind == "schema" else (n_schema or 256)
            tokens, rate, out = run(a.minnow, a.model, a.threads, n, flags if kind == "schema" else ["--ignore-eos"])
            if kind == "schema":
                n_schema = tokens
                json.loads(out)  # it parses
                constrained.append(1000.0 / rate)
            else:
                free.append(1000.0 / rate)
            print(f"round {i + 1} {kind:6s} {tokens:4d} tokens {rate:7.1f} tok/s", flush=True)
    mf, mc = statistics.median(free), statistics.median(constrained)
    print(f"\nms per token, median of {a.rounds}: free {mf:.2f}, with the schema {mc:.2f} "
          f"({(mc / mf - 1) * 100:+.1f}%), {n_schema} tokens per constrained output")


if __name__ == "__main__":
    main()
