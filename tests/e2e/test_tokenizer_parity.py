"""Tokenizer parity with the `tokenizers` package on 10,000+ strings, at test time.

Every tokenizer in ../shared/data/tokenizers (Qwen3, Llama 3, Gemma 3, Llama 2) and
all-MiniLM-L6-v2's WordPiece must give
the ids `tokenizers` gives (add_special_tokens=True) for 100% of the corpus, and decode
them to the same text; the Gemma 3 GGUF's own tokenizer must match gemma3/tokenizer.json.
Run alone with the counts printed:  .venv/bin/python -m pytest -s tests/e2e/test_tokenizer_parity.py
"""
import json
import pathlib
import subprocess
import sys

import pytest
from tokenizers import Tokenizer

ROOT = pathlib.Path(__file__).resolve().parents[2]
MINNOW = ROOT / "build" / "release" / "minnow"
DATA = ROOT.parent / "shared" / "data" / "tokenizers"
MODELS = ROOT / "models"
sys.path.insert(0, str(ROOT / "tests" / "reference"))
from gguf_metadata import read_metadata  # noqa: E402
from tokenizer_corpus import corpus  # noqa: E402

PER_CATEGORY = 720  # 14 categories x 720 + 19 edge cases = 10,099 strings

CASES = {
    # name: (what minnow loads, the reference tokenizer.json)
    "qwen3": (DATA / "qwen3" / "tokenizer.json", DATA / "qwen3" / "tokenizer.json"),
    "llama3": (DATA / "llama3" / "tokenizer.json", DATA / "llama3" / "tokenizer.json"),
    "gemma3": (DATA / "gemma3" / "tokenizer.json", DATA / "gemma3" / "tokenizer.json"),
    "llama2": (DATA / "llama2" / "tokenizer.json", DATA / "llama2" / "tokenizer.json"),
    # WordPiece (BERT): the embedding model's own tokenizer.json.
    "minilm": (MODELS / "all-MiniLM-L6-v2" / "tokenizer.json", MODELS / "all-MiniLM-L6-v2" / "tokenizer.json"),
    "gemma3-gguf": (MODELS / "gemma-3-270m-Q4_K_M.gguf", DATA / "gemma3" / "tokenizer.json"),
    # No tokenizer.json ships with SmolLM2's GGUF: the reference is `tokenizers` running
    # the pipeline the file declares (see smollm2_reference).
    "smollm2-gguf": (MODELS / "SmolLM2-135M-Instruct.Q4_1.gguf", None),
}


def smollm2_reference(gguf_path, tmp_dir):
    """A tokenizer.json built from the GGUF's vocabulary, merges and token types with the
    pre-tokenizer its `tokenizer.ggml.pre = smollm` names: SmolLM's digits split one by one,
    then GPT-2's byte-level split. (transformers' own GGUF conversion drops the digit split;
    tests/reference/README.md shows where that differs from the model.)"""
    from tokenizers import AddedToken, decoders, models, pre_tokenizers

    meta = read_metadata(gguf_path)
    assert meta["tokenizer.ggml.model"] == "gpt2" and meta["tokenizer.ggml.pre"] == "smollm"
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    tok = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t, k in zip(tokens, types) if k == 3])
    assert not meta.get("tokenizer.ggml.add_bos_token", False)
    path = tmp_dir / "smollm2-tokenizer.json"
    tok.save(str(path))
    return path


def minnow_encode(path, texts):
    """[(ids, decoded with special tokens, decoded without)] from `minnow tokenize --lines`."""
    stdin = "".join(json.dumps(t) + "\n" for t in texts)
    r = subprocess.run([str(MINNOW), "tokenize", "--tokenizer", str(path), "--lines"], input=stdin,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.split("\n")[:-1]]  # not splitlines: U+2028 is text
    assert len(rows) == len(texts)
    return [(row["ids"], row["text"], row["plain"]) for row in rows]


def control_in_file(path, ref):
    """Ids of tokens `ref` calls non-special that minnow's file declares control (so its
    plain decode hides them): the Gemma 3 GGUF stores <mask> and <unusedN> that way."""
    added = {tok.content: i for i, tok in ref.get_added_tokens_decoder().items() if not tok.special}
    rows = minnow_encode(path, list(added))
    return {added[c] for c, (_, text, plain) in zip(added, rows) if c in text and c not in plain}


@pytest.fixture(scope="module")
def texts():
    rows = corpus(PER_CATEGORY)
    assert len(rows) >= 10_000
    return rows


@pytest.mark.parametrize("name", list(CASES))
def test_matches_tokenizers(name, texts, tmp_path):
    path, ref_path = CASES[name]
    if not path.exists():
        pytest.skip(f"missing {path}")
    if ref_path is None:
        ref_path = smollm2_reference(path, tmp_path)
    if not ref_path.exists():
        pytest.skip(f"missing {ref_path}")
    ref = Tokenizer.from_file(str(ref_path))
    ref.no_padding()  # MiniLM's file pads and truncates to 128; minnow's tokenizer never does
    ref.no_truncation()
    strings = [t for _, t in texts]
    got = minnow_encode(path, strings)
    hidden = control_in_file(path, ref) if path != ref_path else set()
    id_fail, decode_fail, round_trips, mismatches = 0, 0, 0, []
    for (cat, text), (ids, decoded, plain) in zip(texts, got):
        want = ref.encode(text, add_special_tokens=True).ids
        want_text = ref.decode(want, skip_special_tokens=False)
        # Round trip as users see it: special tokens (BOS...) skipped.
        hf_round_trip = ref.decode(want, skip_special_tokens=True) == text
        round_trips += hf_round_trip
        if ids != want:
            id_fail += 1
            mismatches.append(f"[{cat}] ids differ for {text!r}:\n  minnow {ids}\n  hf     {want}")
        elif decoded != want_text or (hf_round_trip and plain != text and not hidden.intersection(ids)):
            decode_fail += 1
            mismatches.append(f"[{cat}] decode differs for {text!r}: {decoded!r} / {plain!r} vs {want_text!r}")
    print(f"\n{name}: {len(texts) - id_fail}/{len(texts)} identical ids, "
          f"{len(texts) - id_fail - decode_fail} identical decodes; decode(encode(x)) == x for all "
          f"{round_trips} strings that round-trip in HF" +
          (f" ({len(hidden)} tokens are control tokens in this file, non-special in HF)" if hidden else ""))
    assert not mismatches, "\n".join(mismatches[:20])


FLAGGED = [  # content, special, lstrip, rstrip, single_word, normalized
    ("<lmask>", True, True, False, False, False),
    ("<rtok>", False, False, True, False, False),
    ("[both]", True, True, True, False, False),
    ("wordy", False, False, False, True, False),
    ("ok", False, False, False, True, True),
    ("sp ace", False, False, False, False, True),
]


def flag_corpus():
    import random
    r = random.Random(7)
    pieces = [t[0] for t in FLAGGED] + [" ", "  ", "\u3000", "\u00a0", "\n", "\t", "_", "a", "x1", "é", "日本",
                                        "wordy", "okay", "ok_", "sp", "ace", "!", "<", ">", "rtok", "[both"]
    out = ["".join(r.choice(pieces) for _ in range(r.randint(1, 12))) for _ in range(3000)]
    return out + ["wordy", " wordy ", "awordy", "wordy_", "ok", "ok.", "(ok)", "1ok", "  <lmask>  ", "<rtok>\n\n x"]


@pytest.mark.parametrize("base", ["llama2", "qwen3"])
def test_added_token_flags(base, tmp_path):
    """lstrip, rstrip, single_word and normalized flags, on tokens added to a real
    SentencePiece-style (llama2) and byte-level (qwen3) tokenizer by `tokenizers` itself."""
    from tokenizers import AddedToken

    src = DATA / base / "tokenizer.json"
    if not src.exists():
        pytest.skip(f"missing {src}")
    ref = Tokenizer.from_file(str(src))
    for content, special, lstrip, rstrip, single_word, normalized in FLAGGED:
        tok = AddedToken(content, special=special, lstrip=lstrip, rstrip=rstrip, single_word=single_word,
                         normalized=normalized)
        (ref.add_special_tokens if special else ref.add_tokens)([tok])
    path = tmp_path / "tokenizer.json"
    ref.save(str(path))
    texts = flag_corpus()
    got = minnow_encode(path, texts)
    bad = [f"{t!r}: minnow {ids} hf {ref.encode(t).ids}" for t, (ids, _, _) in zip(texts, got) if ids != ref.encode(t).ids]
    print(f"\n{base} + flagged added tokens: {len(texts) - len(bad)}/{len(texts)} identical ids")
    assert not bad, "\n".join(bad[:20])
