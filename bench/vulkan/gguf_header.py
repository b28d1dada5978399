#!/usr/bin/env python3
"""Cuts a GGUF file down to its header (metadata and tensor table), and writes the full
size next to it, so a model too large to travel can be rebuilt elsewhere with zeros for
weights: `truncate -s $(cat OUT.size) OUT` on the other machine. Every tensor keeps its
real type and shape, so both engines time exactly the shipped file's layout (an all-zero
block is valid in every GGUF type, and no kernel's speed depends on the values).

    .venv/bin/python bench/vulkan/gguf_header.py models/gemma-3-270m-Q4_K_M.gguf .gpu/gemma.gguf
"""
import argparse
import os

import gguf


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gguf")
    ap.add_argument("out")
    a = ap.parse_args()
    header = gguf.GGUFReader(a.gguf).data_offset
    with open(a.gguf, "rb") as src, open(a.out, "wb") as dst:
        dst.write(src.read(header))
    with open(a.out + ".size", "w") as f:
        f.write(f"{os.path.getsize(a.gguf)}\n")
    print(f"{a.out}: {header} header bytes of {os.path.getsize(a.gguf)}")


if __name__ == "__main__":
    main()
