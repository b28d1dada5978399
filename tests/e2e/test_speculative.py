"""Speculative decoding by prompt lookup (`minnow run --lookup-draft N`): the output must be
exactly plain decoding's, greedy and sampled with a seed, while drafts get accepted."""
import re
import subprocess

import pytest

from test_server import MINNOW, MODEL

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"missing {MODEL}")

CODE = """def moving_average(values, window):
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
"""
STATS = re.compile(r"drafted: (\d+), accepted: (\d+)")


def run(*flags):
    r = subprocess.run([str(MINNOW), "run", "-m", str(MODEL), "--chat", "-n", "120", "-t", "2", *map(str, flags)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout, r.stderr


@pytest.mark.parametrize("sampling", [["--temp", "0"], ["--temp", "0.8", "--seed", "11"], ["--temp", "1.0", "--seed", "3", "--top-k", "0"]])
def test_lookup_output_is_plain_decodings(sampling):
    prompt = "Rename the variable total to running_sum. Reply with the whole function.\n\n" + CODE
    plain, _ = run(*sampling, "-p", prompt)
    for draft in (2, 16):
        out, err = run(*sampling, "--lookup-draft", draft, "-p", prompt)
        assert out == plain, f"--lookup-draft {draft} changed the output"
        drafted, accepted = map(int, STATS.search(err).groups())
        assert 0 <= accepted <= drafted


def test_lookup_accepts_drafts_on_an_edit():
    _, err = run("--temp", "0", "--lookup-draft", "8", "-p", "Repeat this code exactly.\n\n" + CODE)
    drafted, accepted = map(int, STATS.search(err).groups())
    assert accepted >= 20 and accepted >= 0.3 * drafted, err


def test_lookup_draft_is_range_checked():
    r = subprocess.run([str(MINNOW), "run", "-m", str(MODEL), "-p", "hi", "--lookup-draft", "65"], capture_output=True, text=True)
    assert r.returncode != 0 and "lookup-draft" in r.stderr


def test_draft_model_output_is_plain_decodings():
    # SmolLM2 drafting for itself: the same vocabulary, and its greedy proposals are the
    # model's own, so nearly all are kept; sampled output stays the seed's.
    prompt = "Write a short poem about the sea."
    for sampling in (["--temp", "0"], ["--temp", "0.8", "--seed", "5"]):
        plain, _ = run(*sampling, "-p", prompt)
        out, err = run(*sampling, "--draft", MODEL, "--draft-max", "6", "-p", prompt)
        assert out == plain
        drafted, accepted = map(int, STATS.search(err).groups())
        if sampling[1] == "0":
            assert accepted >= 0.9 * drafted and drafted > 50, err


def test_lookup_then_draft_model_keeps_the_output():
    """--lookup-draft with --draft: lookup proposes first, the draft model where lookup finds
    nothing; the output is still plain decoding's."""
    prompt = "Rename the variable total to running_sum. Reply with the whole function.\n\n" + CODE
    plain, _ = run("--temp", "0", "-p", prompt)
    out, err = run("--temp", "0", "--lookup-draft", 8, "--draft", MODEL, "--draft-max", 6, "-p", prompt)
    assert out == plain
    drafted, accepted = map(int, STATS.search(err).groups())
    assert drafted > 20 and accepted > 0.5 * drafted, err


def test_draft_model_with_another_vocabulary_is_refused():
    gemma = MODEL.parent / "gemma-3-270m-Q4_K_M.gguf"
    if not gemma.exists():
        pytest.skip(f"missing {gemma}")
    r = subprocess.run([str(MINNOW), "run", "-m", str(MODEL), "-p", "hi", "-n", "4", "--draft", str(gemma)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "the draft model's vocabulary" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_server_lookup_keeps_every_output():
    """The server speculates per slot within its batched step: with 3 requests at once
    (greedy and seeded sampling), `lookup_draft` must not change any output, and the
    server-wide --lookup-draft default applies to requests that do not say."""
    import concurrent.futures

    from test_server import API_KEY, Server

    prompt = "Rename the variable total to running_sum. Reply with the whole function.\n\n" + CODE
    settings = [dict(temperature=0), dict(temperature=0.8, seed=11), dict(temperature=1.0, seed=3, top_p=1.0)]
    s = Server("--parallel", 3, "--ctx", 1024, "-t", 2, "--api-key", API_KEY, "--lookup-draft", 8)
    try:
        client = s.client()

        def ask(kw, lookup):
            extra = {} if lookup is None else {"extra_body": {"lookup_draft": lookup}}
            r = client.chat.completions.create(model="SmolLM2-135M-Instruct.Q4_1", max_tokens=120,
                                               messages=[{"role": "user", "content": prompt}], **kw, **extra)
            return r.choices[0].message.content

        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            plain = list(pool.map(lambda kw: ask(kw, 0), settings))
            default = list(pool.map(lambda kw: ask(kw, None), settings))  # the server's 8
            drafted = list(pool.map(lambda kw: ask(kw, 16), settings))
        assert default == plain
        assert drafted == plain
        assert "def moving_average" in plain[0]  # the answer repeats the prompt: lookup has work
        import openai
        with pytest.raises(openai.BadRequestError, match="lookup_draft"):
            client.chat.completions.create(model="SmolLM2-135M-Instruct.Q4_1", max_tokens=4, extra_body={"lookup_draft": 99},
                                           messages=[{"role": "user", "content": "hi"}])
    finally:
        s.stop()


def test_server_draft_model_keeps_every_output():
    """`serve --draft MODEL`: every request speculates with the draft model (here SmolLM2
    itself) unless it sets lookup_draft; outputs are plain decoding's, and /metrics counts
    the proposals."""
    import concurrent.futures
    import urllib.request

    from test_server import API_KEY, Server

    prompts = ["Write a short poem about the sea.", "List three uses of a hash map.", "What is 17 times 3?"]
    settings = [dict(temperature=0), dict(temperature=0.8, seed=11), dict(temperature=0)]
    s = Server("--parallel", 3, "--ctx", 1024, "-t", 2, "--api-key", API_KEY, "--draft", MODEL, "--draft-max", 6)
    try:
        client = s.client()

        def ask(i, extra):
            r = client.chat.completions.create(model="SmolLM2-135M-Instruct.Q4_1", max_tokens=80,
                                               messages=[{"role": "user", "content": prompts[i]}], **settings[i],
                                               extra_body=extra)
            return r.choices[0].message.content

        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            plain = list(pool.map(lambda i: ask(i, {"lookup_draft": 0}), range(3)))
            drafted = list(pool.map(lambda i: ask(i, {}), range(3)))
        assert drafted == plain
        metrics = urllib.request.urlopen(s.base + "/metrics", timeout=10).read().decode()
        counts = {m.group(1): float(m.group(2)) for m in re.finditer(r"^(minnow_draft_tokens\w*) (\S+)$", metrics, re.M)}
        assert counts["minnow_draft_tokens_total"] > 40, metrics
        assert counts["minnow_draft_tokens_accepted_total"] > 0.5 * counts["minnow_draft_tokens_total"], counts
    finally:
        s.stop()


def test_server_draft_model_with_another_vocabulary_is_refused():
    gemma = MODEL.parent / "gemma-3-270m-Q4_K_M.gguf"
    if not gemma.exists():
        pytest.skip(f"missing {gemma}")
    r = subprocess.run([str(MINNOW), "serve", "-m", str(MODEL), "--port", "0", "--draft", str(gemma)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "the draft model's vocabulary" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
