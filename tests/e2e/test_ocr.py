"""`minnow ocr` against the RapidOCR package on onnxruntime.

The golden data (tests/reference/make_golden_ocr.py) are images rendered with Pillow in six
fonts, several sizes, tilted, with an upside-down line, on noisy and tinted backgrounds,
and what `rapidocr-onnxruntime` 1.4.4 read in each (PP-OCRv4 models on onnxruntime).
minnow runs the same three models through its own ONNX runtime and its own pre- and
post-processing. Boxes come out within a pixel or two of RapidOCR's (its OpenCV resize,
contour and bicubic warp are reimplemented, not linked), and this Chinese-and-English model
is marginal on spaces in Latin text, so a pixel can move one: all lines of at least 12 of the
14 images must read exactly as RapidOCR read them, every other line within one character.
"""
import json
import pathlib
import subprocess

import pytest

from test_server import MINNOW

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT / "models" / "rapidocr"
GOLDEN = ROOT / "tests" / "reference" / "golden" / "ocr"

pytestmark = pytest.mark.skipif(not (MODELS / "rec.onnx").exists(), reason=f"missing {MODELS} (scripts/fetch-models --ocr)")


def edit_distance(a, b):
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def read(*images, extra=()):
    out = subprocess.run([str(MINNOW), "ocr", "--json", "--models", str(MODELS), *extra, *map(str, images)],
                         capture_output=True, text=True, check=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_every_image_reads_as_onnxruntime_does():
    expected = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))
    names = sorted(expected)
    results = read(*(GOLDEN / f"{n}.png" for n in names))
    mismatches, exact = [], 0
    for name, got in zip(names, results):
        want = expected[name]
        texts = [line["text"] for line in got["lines"]]
        want_texts = [line["text"] for line in want]
        exact += texts == want_texts
        if texts != want_texts:
            print(f"{name}: {texts} != {want_texts}")
            if len(texts) != len(want_texts) or any(edit_distance(a, b) > 1 for a, b in zip(texts, want_texts)):
                mismatches.append(f"{name}: {texts} != {want_texts}")
                continue
        for g, w in zip(got["lines"], want):
            if g["text"] != w["text"]:
                continue
            err = max(abs(a - b) for gp, wp in zip(g["box"], w["box"]) for a, b in zip(gp, wp))
            if err > 4:
                mismatches.append(f"{name}: box of '{g['text']}' off by {err} px")
            if abs(g["score"] - w["score"]) > 0.05:
                mismatches.append(f"{name}: score of '{g['text']}' {g['score']:.4f} != {w['score']:.4f}")
    print(f"{exact} of {len(names)} images read exactly as RapidOCR on onnxruntime")
    assert exact >= 12, f"only {exact} of {len(names)} images read exactly"
    assert not mismatches, "\n".join(mismatches)


def test_bad_inputs_fail_with_one_line(tmp_path):
    bad = tmp_path / "not_an_image.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    r = subprocess.run([str(MINNOW), "ocr", "--models", str(MODELS), str(bad)], capture_output=True, text=True)
    assert r.returncode != 0 and "cannot read image" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = subprocess.run([str(MINNOW), "ocr", "--models", str(tmp_path), str(GOLDEN / "noisy.png")], capture_output=True, text=True)
    assert r.returncode != 0 and "det.onnx" in r.stderr
