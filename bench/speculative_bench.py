#!/usr/bin/env python3
"""Speculative decoding by prompt lookup against plain decoding, on editing tasks.

    .venv/bin/python bench/speculative_bench.py [--model M] [--draft 8] [--rounds 3] [-t 2]
    .venv/bin/python bench/speculative_bench.py --draft-model models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf

Each task asks the model to rewrite a given function (rename, add type hints, add a
docstring, ...), so the answer repeats much of the prompt. Per task and round, `minnow run`
greedy plain and with each kind of speculation (prompt lookup; with --draft-model also the
draft model alone and lookup first with the model where lookup finds nothing), rotating
which goes first; the outputs must be identical. Figures: decode tokens/s (the run's stderr timing line),
median over rounds, the speedup, and the share of proposed tokens that were kept.
"""
import argparse
import pathlib
import re
import statistics
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]
TIMING = re.compile(r"generated: (\d+) tokens, ([\d.]+) tok/s(?: \| drafted: (\d+), accepted: (\d+))?")

CODE = '''def moving_average(values, window):
    if window <= 0:
        raise ValueError("window must be positive")
    result = []
    total = 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        if i >= window - 1:
            result.append(total / window)
    return result
'''
CODE2 = '''class Inventory:
    def __init__(self):
        self.items = {}

    def add(self, name, count):
        if count < 0:
            raise ValueError("count must be non-negative")
        self.items[name] = self.items.get(name, 0) + count

    def remove(self, name, count):
        have = self.items.get(name, 0)
        if count > have:
            raise KeyError(name)
        self.items[name] = have - count

    def total(self):
        return sum(self.items.values())
'''
TASKS = [
    ("rename", "Rename the variable `total` to `running_sum` in this function. Reply with the whole function only.\n\n" + CODE),
    ("type hints", "Add type hints to this function. Reply with the whole function only.\n\n" + CODE),
    ("docstrings", "Add a one-line docstring to every method of this class. Reply with the whole class only.\n\n" + CODE2),
    ("logging", "Make `remove` log a warning with the `logging` module before raising. Reply with the whole class only.\n\n" + CODE2),
]


MODES = {  # name: flags of `minnow run` (D: --draft, M: --draft-model)
    "plain": lambda d, m: ["--lookup-draft", "0"],
    "lookup": lambda d, m: ["--lookup-draft", str(d)],
    "model": lambda d, m: ["--draft", m, "--draft-max", str(d)],
    "lookup+model": lambda d, m: ["--lookup-draft", str(d), "--draft", m, "--draft-max", str(d)],
}


def run(minnow, model, threads, n, flags, prompt):
    r = subprocess.run([minnow, "run", "-m", model, "--chat", "--temp", "0", "-n", str(n), "-t", str(threads),
                        *flags, "-p", prompt], capture_output=True, text=True, check=True)
    m = TIMING.search(r.stderr)
    return float(m.group(2)), int(m.group(3) or 0), int(m.group(4) or 0), int(m.group(1)), r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=str(ROOT / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"))
    ap.add_argument("--minnow", default=str(ROOT / "build" / "release" / "minnow"))
    ap.add_argument("--draft", type=int, default=8, help="most tokens proposed per step")
    ap.add_argument("--draft-model", help="also time this draft model (same vocabulary), alone and after prompt lookup")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-n", type=int, default=256)
    ap.add_argument("-t", "--threads", type=int, default=2)
    a = ap.parse_args()
    modes = ["lookup", "model", "lookup+model"] if a.draft_model else ["lookup"]
    print("| task | tokens | plain tok/s | " + " | ".join(f"{m} tok/s | speedup, kept" for m in modes) + " |")
    print("|---|---|---|" + "---|---|" * len(modes))
    speedups = {m: [] for m in modes}
    for name, prompt in TASKS:
        rates = {m: [] for m in ["plain", *modes]}
        kept = {m: [] for m in modes}
        for i in range(a.rounds):
            order = ["plain", *modes]
            order = order[i % len(order):] + order[:i % len(order)]  # each mode takes each turn
            outs = {}
            for mode in order:
                rate, drafted, accepted, tokens, out = run(a.minnow, a.model, a.threads, a.n,
                                                           MODES[mode](a.draft, a.draft_model), prompt)
                outs[mode] = out
                rates[mode].append(rate)
                if mode != "plain":
                    kept[mode].append(accepted / max(drafted, 1))
            assert all(o == outs["plain"] for o in outs.values()), f"{name}: outputs differ"
        plain = statistics.median(rates["plain"])
        cells = []
        for m in modes:
            s = statistics.median(rates[m]) / plain
            speedups[m].append(s)
            cells.append(f"{statistics.median(rates[m]):.1f} | {s:.2f}x, {100 * statistics.median(kept[m]):.0f}%")
        print(f"| {name} | {tokens} | {plain:.1f} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nmedian speedups ({a.model}, -t {a.threads}, at most {a.draft} proposed"
          + (f", draft model {a.draft_model}" if a.draft_model else "") + "): "
          + ", ".join(f"{m} {statistics.median(v):.2f}x" for m, v in speedups.items()) + "; outputs identical")


if __name__ == "__main__":
    main()
