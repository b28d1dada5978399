#!/usr/bin/env python3
"""Writes the ONNX backend node tests (the `onnx` package's own test-case generators) to a
directory: one folder per case with model.onnx, test_data_set_N/{input,output}_M.pb and
meta.json (op type, rtol, atol). minnow's conformance test (tests/unit/onnx_conformance_test.cpp)
runs every case whose operators minnow implements.

    .venv/bin/python tests/reference/gen_onnx_node_tests.py build/onnx-node
"""
import json
import os
import sys

import numpy as np
from onnx import TensorProto, numpy_helper
from onnx.backend.test.case import node


def tensor_bytes(value, name):
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    if not isinstance(value, np.ndarray):
        return None  # sequences, maps, optionals: not tensors
    return numpy_helper.from_array(value, name).SerializeToString()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/onnx-node"
    os.makedirs(out, exist_ok=True)
    written = 0
    for case in node.collect_testcases():
        folder = os.path.join(out, case.name)
        os.makedirs(folder, exist_ok=True)
        graph = case.model.graph
        op_types = sorted({n.op_type for n in graph.node})
        ok = True
        for i, (inputs, outputs) in enumerate(case.data_sets):
            data_dir = os.path.join(folder, f"test_data_set_{i}")
            os.makedirs(data_dir, exist_ok=True)
            for prefix, values, decls in (("input", inputs, graph.input), ("output", outputs, graph.output)):
                for j, value in enumerate(values):
                    blob = tensor_bytes(value, decls[j].name if j < len(decls) else "")
                    if blob is None:
                        ok = False
                        continue
                    with open(os.path.join(data_dir, f"{prefix}_{j}.pb"), "wb") as f:
                        f.write(blob)
        with open(os.path.join(folder, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        meta = {"op_types": op_types, "rtol": case.rtol, "atol": case.atol, "tensors_only": ok}
        with open(os.path.join(folder, "meta.json"), "w") as f:
            json.dump(meta, f, sort_keys=True)
        written += 1
    print(f"gen_onnx_node_tests: {written} cases in {out}")


if __name__ == "__main__":
    main()
