#!/usr/bin/env python3
"""Instructions per group-block and token of minnow's aarch64 packed matmul kernels, under qemu.

A group-block is 8 weight rows x 32 columns; one token makes 256 products of it. The script
runs build/aarch64/minnow_packed_insns (bench/packed_insns.cpp) with two repetition counts
under qemu-aarch64 with the instruction-counting plugin and divides the difference by the
work, so start-up and set-up cancel out. The arithmetic floor of one group-block and token
is 16 sdot with int8 activations and 32 with 15-bit ones (8 with smmla per pair of columns).

    .venv/bin/python bench/arm/kernel_insns.py                    # Q4_0, Q4_1, Q4_K at 8/15 bits, 1/4 tokens
    .venv/bin/python bench/arm/kernel_insns.py --types q4_0 --tokens 4

Standard library only; needs `make build-aarch64` (the driver is part of that build).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import insn_compare as ic  # noqa: E402  (the plugin and the qemu runner)

DRIVER = ic.ROOT / "build" / "aarch64" / "minnow_packed_insns"
# (qemu CPU model, the kernel table it runs)
LEVELS = [("cortex-a53", "neon"), ("cortex-a76", "neon+dotprod"), ("max", "neon+i8mm")]
REPS = (20, 10)


def per_block_token(cpu: str, table: str, dtype: str, bits: int, tokens: int) -> float:
    hi, lo = (ic.qemu_insns(cpu, [DRIVER, table, dtype, bits, tokens, reps]) for reps in REPS)
    cols = 512 if dtype.endswith("_k") else 576
    work = (1536 // 8) * (cols // 32) * tokens  # group-block-tokens per repetition
    return (hi - lo) / ((REPS[0] - REPS[1]) * work)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--types", nargs="+", default=["q4_0", "q4_1", "q4_k"])
    ap.add_argument("--bits", nargs="+", type=int, default=[15, 8], choices=[8, 15])
    ap.add_argument("--tokens", nargs="+", type=int, default=[1, 4], choices=[1, 2, 3, 4])
    args = ap.parse_args()
    ic.check_tools()
    ic.ensure_plugin()
    if not DRIVER.exists():
        sys.exit(f"{DRIVER.relative_to(ic.ROOT)} is missing: run make build-aarch64 && cmake --build --preset aarch64 --target minnow_packed_insns")
    cols = [f"{cpu} ({table})" for cpu, table in LEVELS]
    print("| type | activations | tokens per call | " + " | ".join(cols) + " |")
    print("|---|---|---:|" + "---:|" * len(cols))
    for dtype in args.types:
        for bits in args.bits:
            for tokens in args.tokens:
                cells = []
                for cpu, table in LEVELS:
                    try:
                        cells.append(f"{per_block_token(cpu, table, dtype, bits, tokens):.1f}")
                    except ic.Failed as e:
                        cells.append(f"{e} ✗")
                print(f"| {dtype.upper()} | {'int8' if bits == 8 else '15-bit'} | {tokens} | " + " | ".join(cells) + " |",
                      flush=True)


if __name__ == "__main__":
    main()
