"""Reads the metadata key/values of a GGUF file (versions 2 and 3) with the standard
library only, so tests in the lean project venv can use a model's own tokenizer data.

    from gguf_metadata import read_metadata
    meta = read_metadata("models/SmolLM2-135M-Instruct.Q4_1.gguf")
    meta["tokenizer.ggml.pre"]  -> "smollm"
"""
import struct

_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


def read_metadata(path):
    with open(path, "rb") as f:
        def unpack(fmt):
            size = struct.calcsize("<" + fmt)
            data = f.read(size)
            if len(data) != size:
                raise ValueError(f"{path}: truncated GGUF header")
            return struct.unpack("<" + fmt, data)[0]

        def string():
            return f.read(unpack("Q")).decode("utf-8", errors="surrogateescape")

        def value(kind):
            if kind == _STRING:
                return string()
            if kind == _ARRAY:
                elem, n = unpack("I"), unpack("Q")
                return [value(elem) for _ in range(n)]
            return unpack(_SCALARS[kind])

        if f.read(4) != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        version = unpack("I")
        if version not in (2, 3):
            raise ValueError(f"{path}: GGUF version {version} is not supported")
        unpack("Q")  # tensor count
        n_kv = unpack("Q")
        meta = {}
        for _ in range(n_kv):
            key = string()
            meta[key] = value(unpack("I"))
        return meta
