"""Sentence embeddings from the CLI and the server against sentence-transformers.

The golden embeddings (tests/reference/make_golden_minilm.py: sentence-transformers 6.3 on
torch, all-MiniLM-L6-v2, 1,000 texts of every kind, float16) must be matched with cosine
similarity >= 0.9999 per text by `minnow embed` (bf16, the default) and >= 0.999999 at f32;
the server's /v1/embeddings answers the official openai client (float and base64
encodings, batches, token arrays) with the same vectors.
Run alone with the figures printed:  .venv/bin/python -m pytest -s tests/e2e/test_embeddings.py
"""
import json
import pathlib
import subprocess

import numpy as np
import pytest

openai = pytest.importorskip("openai")

from test_server import API_KEY, MINNOW, MODEL, Server  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
EMBED = ROOT / "models" / "all-MiniLM-L6-v2"
GOLDEN = ROOT / "tests" / "reference" / "golden" / "minilm"

pytestmark = pytest.mark.skipif(not (EMBED / "model.safetensors").exists(), reason=f"missing {EMBED}")


@pytest.fixture(scope="module")
def golden():
    texts = json.loads((GOLDEN / "texts.json").read_text(encoding="utf-8"))
    emb = np.fromfile(GOLDEN / "embeddings.f16", dtype="<f2").astype(np.float32).reshape(len(texts), -1)
    return texts, emb


def cosines(a, b):
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def minnow_embed(texts, tmp_path, *flags):
    path = tmp_path / "texts.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in texts), encoding="utf-8")
    r = subprocess.run([str(MINNOW), "embed", "-m", str(EMBED), "-f", str(path), "--json-lines", "-t", "2", *flags],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return np.array([json.loads(line) for line in r.stdout.splitlines()], dtype=np.float32)


@pytest.mark.parametrize("precision,floor", [("bf16", 0.9999), ("f32", 0.999999)])
def test_cli_matches_sentence_transformers(golden, tmp_path, precision, floor):
    texts, want = golden
    got = minnow_embed(texts, tmp_path, "--precision", precision)
    assert got.shape == want.shape
    cos = cosines(got, want)
    print(f"\nall-MiniLM-L6-v2 {precision}: {len(texts)} texts, cosine min {cos.min():.7f}, "
          f"mean {cos.mean():.7f} (floor {floor})")
    worst = np.argsort(cos)[:3]
    assert cos.min() >= floor, [(float(cos[i]), texts[i][:60]) for i in worst]


def test_cli_similarity_table_and_errors(tmp_path):
    r = subprocess.run([str(MINNOW), "embed", "-m", str(EMBED), "--similarity", "A cat sits on the mat.",
                        "A kitten is sitting on a rug.", "The stock market fell today."],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    table = [[float(x) for x in line.split()] for line in r.stdout.splitlines()]
    assert len(table) == 3 and all(abs(table[i][i] - 1) < 1e-4 for i in range(3))
    assert table[0][1] > 0.5 > table[0][2]  # the two cats are close, the market is not
    for args, message in [([], "give either TEXTS or -f FILE"),
                          (["-f", str(tmp_path / "missing.txt")], "cannot open"),
                          (["--precision", "int3", "x"], "int3"),
                          (["-b", "0", "x"], "batch")]:
        r = subprocess.run([str(MINNOW), "embed", "-m", str(EMBED), *args], capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and message in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) <= 2, r.stderr
    r = subprocess.run([str(MINNOW), "embed", "-m", str(tmp_path), "x"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "no tokenizer.json" in r.stderr


@pytest.fixture(scope="module")
def server():
    s = Server("--embedding-model", EMBED, "-t", 2, "--api-key", API_KEY, model=None)
    try:
        yield s
    finally:
        s.stop()


def test_server_matches_the_cli(server, golden, tmp_path):
    texts, want = golden
    sample = texts[::25]  # 40 texts of every kind, in one request
    client = server.client()
    for fmt in ({}, {"encoding_format": "float"}):  # unless told, the client asks for base64 and decodes it
        r = client.embeddings.create(model="all-MiniLM-L6-v2", input=sample, **fmt)
        got = np.array([d.embedding for d in sorted(r.data, key=lambda d: d.index)], dtype=np.float32)
        assert got.shape == (len(sample), 384)
        assert cosines(got, want[::25]).min() >= 0.9999
        assert r.usage.prompt_tokens > len(sample)
    cli = minnow_embed(sample, tmp_path)
    np.testing.assert_allclose(got, cli, atol=1e-6)  # same engine, same numbers


def test_server_token_input_models_and_errors(server):
    client = server.client()
    ids = [101, 7592, 2088, 102]  # [CLS] hello world [SEP]
    by_ids = client.embeddings.create(model="all-MiniLM-L6-v2", input=[ids], encoding_format="float").data[0].embedding
    by_text = client.embeddings.create(model="all-MiniLM-L6-v2", input="hello world", encoding_format="float").data[0].embedding
    assert np.allclose(by_ids, by_text, atol=1e-6)
    assert [m.id for m in client.models.list().data] == ["all-MiniLM-L6-v2"]
    with pytest.raises(openai.BadRequestError, match="dimensions"):
        client.embeddings.create(model="all-MiniLM-L6-v2", input="x", dimensions=128)
    with pytest.raises(openai.BadRequestError, match="token ids"):
        client.embeddings.create(model="all-MiniLM-L6-v2", input=[[101, 10**9]])
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        client.embeddings.create(model="text-embedding-3-small", input="x")
    with pytest.raises(openai.NotFoundError, match="no language model"):
        client.chat.completions.create(model="all-MiniLM-L6-v2", messages=[{"role": "user", "content": "hi"}])


@pytest.mark.skipif(not MODEL.exists(), reason=f"missing {MODEL}")
def test_chat_and_embeddings_in_one_server():
    s = Server("--embedding-model", EMBED, "--ctx", 512, "-t", 2, "--api-key", API_KEY)
    try:
        client = s.client()
        assert len(client.models.list().data) == 2
        v = client.embeddings.create(model="all-MiniLM-L6-v2", input="Paris").data[0].embedding
        assert len(v) == 384 and abs(np.linalg.norm(v) - 1) < 1e-4
        r = client.chat.completions.create(model="SmolLM2-135M-Instruct.Q4_1", max_tokens=4,
                                           messages=[{"role": "user", "content": "Hi"}])
        assert r.choices[0].message.content
    finally:
        s.stop()
