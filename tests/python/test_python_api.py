"""The Python package (bindings/python) against the CLI and its own promises: greedy
parity, streaming, stop strings, cancellation, the GIL, memory, Ctrl-C, errors, the
OpenAI-shaped completions, logits and the chat example. Run by scripts/test-python."""
import _thread
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import minnow

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
CLI = pathlib.Path(os.environ.get("MINNOW_CLI", ROOT / "build" / "release" / "minnow"))
PROMPT = "The capital of France is"
LONG = dict(max_tokens=3000, temperature=0.8, stop_at_end_of_generation=False)  # runs for many seconds


def cli(*args):
    if not CLI.exists():
        pytest.skip(f"{CLI} is not built (make build)")
    r = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def model():
    with minnow.Model(MODEL) as m:
        yield m


@pytest.fixture(scope="module")
def greedy(model):
    return model.generate(PROMPT, max_tokens=16, temperature=0)


def rss_bytes():
    return int(pathlib.Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_info(model):
    info = model.info
    assert info.architecture == "llama" and info.vocab_size == 49152 and info.has_chat_template
    assert info.n_params > 100_000_000 and info.context_length >= 2048
    assert minnow.library_version() == minnow.__version__ == "0.1.0"
    assert "llama" in repr(model)


def test_greedy_matches_cli(greedy):
    out = cli("run", "-m", MODEL, "-p", PROMPT, "-n", 16, "--temp", 0, "-q")
    assert out.endswith("\n")
    assert greedy == out[:-1]
    assert minnow.Model(MODEL).generate(PROMPT, max_tokens=16, temperature=0) == greedy  # a fresh model too


def test_tokenize_matches_cli(model):
    text = "Hello world, <|im_start|>user"
    assert model.tokenize(text) == [int(x) for x in cli("tokenize", "-m", MODEL, text).split()]
    assert model.tokenize(text, parse_special=False) != model.tokenize(text)
    assert model.detokenize(model.tokenize("Hello world")) == "Hello world"
    assert model.tokenize(b"Hello world") == model.tokenize("Hello world")


def test_stream_joins_to_the_same_text(model, greedy):
    pieces = list(model.generate(PROMPT, max_tokens=16, temperature=0, stream=True))
    assert len(pieces) > 3 and all(isinstance(p, str) and p for p in pieces)
    assert "".join(pieces) == greedy
    assert model.session.last_result.n_generated == 16
    assert model.session.last_result.stop_reason == "max_tokens"


def test_token_prompt_and_sampling(model, greedy):
    assert model.generate(model.tokenize(PROMPT), max_tokens=16, temperature=0) == greedy
    a = model.generate(PROMPT, max_tokens=16, temperature=1.0, seed=7)
    assert a == model.generate(PROMPT, max_tokens=16, temperature=1.0, seed=7)
    assert a != model.generate(PROMPT, max_tokens=16, temperature=1.0, seed=8)


def test_stop_strings(model, greedy):
    word = greedy.split()[2]
    cut = greedy[: greedy.index(word)]
    assert model.generate(PROMPT, max_tokens=16, temperature=0, stop=[word, "no such stop"]) == cut
    assert model.session.last_result.stop_reason == "stop_string"
    pieces = list(model.generate(PROMPT, max_tokens=16, temperature=0, stop=word, stream=True))
    assert "".join(pieces) == cut and all(pieces)  # held-back text is not handed out as empty pieces


def test_break_out_of_a_stream_cancels(model, greedy):
    t0 = time.monotonic()
    stream = model.generate(PROMPT, stream=True, **LONG)
    for i, _ in enumerate(stream):
        if i == 3:
            break
    stream.close()
    assert time.monotonic() - t0 < 10
    assert model.session.last_result.stop_reason == "cancelled"
    assert model.session.last_result.n_generated < 50
    assert threading.active_count() == 1  # the worker is joined
    assert model.generate(PROMPT, max_tokens=16, temperature=0) == greedy
    # A stream dropped half-way is cancelled when it is collected.
    stream = model.generate(PROMPT, stream=True, **LONG)
    next(stream)
    del stream
    assert threading.active_count() == 1
    assert model.generate(PROMPT, max_tokens=16, temperature=0) == greedy


def test_gil_is_released_during_generation(model):
    count, done = [0], threading.Event()

    def counter():
        while not done.is_set():
            count[0] += 1

    # One engine thread: with two on two cores, the busy counter slows the pool's barriers.
    session = minnow.Session(model, n_threads=1)
    t = threading.Thread(target=counter)
    t.start()
    try:
        time.sleep(0.05)
        before = count[0]
        session.generate(PROMPT, max_tokens=64, temperature=0, stop_at_end_of_generation=False)
        during = count[0] - before
    finally:
        done.set()
        t.join()
        session.close()
    assert session.last_result.n_generated == 64
    assert during > 100_000, during  # the counter ran all along, not just between tokens


def test_generate_from_another_thread(model, greedy):
    out = []
    t = threading.Thread(target=lambda: out.append(model.generate(PROMPT, max_tokens=16, temperature=0)))
    t.start()
    t.join()
    assert out == [greedy]


def test_memory_does_not_grow(model):
    session = minnow.Session(model, n_threads=1)  # quicker on a busy machine (see the GIL test)
    for _ in range(10):
        session.generate(PROMPT, max_tokens=4)
    before = rss_bytes()
    for i in range(100):
        assert session.generate(f"Count to {i}:", max_tokens=4, seed=i)
        if i % 10 == 0:
            list(session.generate(PROMPT, max_tokens=4, stream=True))
    grown = rss_bytes() - before
    session.close()
    assert grown < 8 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 100 generations"


def interrupt_after(seconds):
    t = threading.Timer(seconds, _thread.interrupt_main)
    t.start()
    return t


@pytest.fixture
def sigint_handled():
    # A process started with SIGINT ignored (a background job of a non-interactive shell, as a
    # CI runner may start it) gets no KeyboardInterrupt handler from Python, and then
    # interrupt_main does nothing: install Python's own for the test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_keyboard_interrupt_stops_generation(model, greedy, sigint_handled):
    t0 = time.monotonic()
    timer = interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        model.generate(PROMPT, **LONG)
    timer.join()
    assert time.monotonic() - t0 < 5
    assert model.generate(PROMPT, max_tokens=16, temperature=0) == greedy
    # The same while streaming: the stream's worker is cancelled and joined.
    timer = interrupt_after(0.5)
    with pytest.raises(KeyboardInterrupt):
        for _ in model.generate(PROMPT, stream=True, **LONG):
            pass
    timer.join()
    assert time.monotonic() - t0 < 10
    assert threading.active_count() == 1
    assert model.generate(PROMPT, max_tokens=16, temperature=0) == greedy


def test_bad_arguments(model, tmp_path):
    with pytest.raises(minnow.MinnowError, match="/nonexistent/model.gguf") as e:
        minnow.Model("/nonexistent/model.gguf")
    assert e.value.status == "MINNOW_ERR_LOAD" and isinstance(e.value, RuntimeError)
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model" * 100)
    with pytest.raises(minnow.MinnowError, match="GGUF"):
        minnow.Model(bad)
    with pytest.raises(ValueError, match="kv_type"):
        minnow.Model(MODEL, kv_type="f8")
    with pytest.raises(minnow.InvalidArgumentError, match="n_threads"):
        minnow.Model(MODEL, n_threads=-1)
    with pytest.raises(ValueError, match="backend"):
        minnow.Model(MODEL, backend="cuda")
    with pytest.raises(ValueError, match="max_tokens"):
        model.generate(PROMPT, max_tokens=-1)
    with pytest.raises(ValueError, match="seed"):
        model.generate(PROMPT, seed=-5)
    with pytest.raises(ValueError, match="vocabulary"):
        model.generate([1, 10**6])
    with pytest.raises(ValueError, match="empty"):
        model.generate("")
    with pytest.raises(TypeError):
        model.generate([1.5, 2])
    with pytest.raises(minnow.MinnowError) as e, minnow.Session(model, n_ctx=16) as small:
        small.generate("word " * 100)
    assert e.value.status == "MINNOW_ERR_CONTEXT_FULL"
    with pytest.raises(ValueError):
        model.apply_chat_template([{"role": "user", "content": "hi"}], unknown=float("nan"))  # NaN is not JSON


def test_vulkan_backend_matches_cli(greedy):
    """The CLI's greedy continuation, from a session on the Vulkan device (CI: lavapipe)."""
    try:
        m = minnow.Model(MODEL, backend="vulkan")
        out = m.generate(PROMPT, max_tokens=16, temperature=0)
    except minnow.MinnowError as e:
        if "vulkan" in str(e).lower() and os.environ.get("MINNOW_REQUIRE_VULKAN") != "1":
            pytest.skip(f"no Vulkan device: {e}")
        raise
    assert out == greedy
    m.close()
    with minnow.Model(MODEL, backend="vulkan", gpu_layers=10) as half:  # 20 of 30 layers on the CPU
        assert half.generate(PROMPT, max_tokens=16, temperature=0) == greedy


def test_close_and_context_manager():
    with minnow.Model(MODEL) as m:
        session = minnow.Session(m)
        assert m.generate(PROMPT, max_tokens=2)
    assert m.closed
    with pytest.raises(minnow.InvalidArgumentError, match="closed"):
        m.generate(PROMPT)
    with pytest.raises(minnow.InvalidArgumentError, match="closed"):
        m.tokenize("hi")
    assert session.generate(PROMPT, max_tokens=2)  # an open session keeps the weights alive
    session.close()
    with pytest.raises(minnow.InvalidArgumentError, match="closed"):
        session.generate(PROMPT)
    m.close()  # twice is fine


def test_sessions_reuse_their_cache(model):
    with minnow.Session(model) as s:
        text = s.generate(PROMPT, max_tokens=8, temperature=0)
        assert s.n_past >= len(model.tokenize(PROMPT)) + 7
        s.generate(PROMPT + text + " It is", max_tokens=4, temperature=0)
        assert s.last_result.n_reused >= len(model.tokenize(PROMPT))
        s.reset()
        assert s.n_past == 0


def test_chat_template(model):
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    prompt = model.apply_chat_template(messages)
    assert "<|im_start|>user\nWhat is the capital of France?" in prompt and prompt.endswith("<|im_start|>assistant\n")
    assert not model.apply_chat_template(messages, add_generation_prompt=False).endswith("assistant\n")
    assert "Paris" in model.chat(messages, max_tokens=32, temperature=0)


def test_chat_completion_shapes(model):
    messages = [{"role": "system", "content": "Answer in one short sentence."},
                {"role": "user", "content": "What is the capital of France?"}]
    r = model.create_chat_completion(messages, max_tokens=32, temperature=0)
    assert r["object"] == "chat.completion" and r["id"].startswith("chatcmpl-")
    assert isinstance(r["created"], int) and r["model"] == str(MODEL)
    (choice,) = r["choices"]
    assert choice["index"] == 0 and choice["finish_reason"] in ("stop", "length")
    assert choice["message"]["role"] == "assistant" and "Paris" in choice["message"]["content"]
    u = r["usage"]
    assert u["prompt_tokens"] > 10 and 0 < u["completion_tokens"] <= 32
    assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]
    json.dumps(r)

    chunks = list(model.create_chat_completion(messages, max_tokens=32, temperature=0, stream=True))
    assert all(c["object"] == "chat.completion.chunk" and c["id"] == chunks[0]["id"] for c in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant"}
    assert chunks[-1]["choices"][0]["delta"] == {} and chunks[-1]["choices"][0]["finish_reason"] == choice["finish_reason"]
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    assert text == choice["message"]["content"]

    r = model.create_chat_completion(messages, max_tokens=3, temperature=0)
    assert r["choices"][0]["finish_reason"] == "length" and r["usage"]["completion_tokens"] == 3


def test_logits(model):
    tokens = model.tokenize(PROMPT)
    logits = model.logits(tokens)
    assert logits.shape == (len(tokens), model.info.vocab_size) and logits.dtype == np.float32
    assert logits.base is not None and not logits.flags.owndata  # the engine's buffer, not a copy
    first = model.generate(tokens, max_tokens=1, temperature=0)
    assert model.detokenize([int(logits[-1].argmax())]) == first
    j = json.loads(cli("logits", "-m", MODEL, "--tokens", " ".join(map(str, tokens)), "--top", "1", "--json"))
    assert [row["top"][0][0] for row in j["positions"]] == logits.argmax(axis=1).tolist()
    last = model.session.eval(tokens)
    assert last.shape == (model.info.vocab_size,)
    np.testing.assert_allclose(last, logits[-1], rtol=0, atol=1e-3)
    del logits  # the capsule frees the buffer
    with pytest.raises(ValueError):
        model.logits([])


def test_chat_example_with_piped_stdin():
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / "chat.py"), "--model", str(MODEL),
                        "--temp", "0", "--max-tokens", "32"],
                       input="What is the capital of France?\nAnd of Italy?\n", capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "Paris" in r.stdout and "Rome" in r.stdout, r.stdout
    assert ">" not in r.stdout[:2]  # no prompt when stdin is not a terminal


def test_json_schema_and_grammar_constrain_the_output(model):
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20},
                                               "population": {"type": "integer"}},
              "required": ["city", "population"]}
    grammar = minnow.json_schema_to_grammar(schema)
    assert "root" in grammar
    prompt = model.apply_chat_template([{"role": "user", "content": "Paris as JSON with city and population"}])
    text = model.generate(prompt, max_tokens=80, temperature=0, json_schema=schema)
    value = json.loads(text)
    assert set(value) == {"city", "population"} and isinstance(value["population"], int)
    assert model.generate(prompt, max_tokens=8, temperature=0, grammar='root ::= "yes" | "no"') in ("yes", "no")
    with pytest.raises(minnow.InvalidArgumentError):
        model.generate(prompt, grammar='root ::= "unterminated', max_tokens=4)
    with pytest.raises(minnow.InvalidArgumentError):
        model.generate(prompt, grammar='root ::= "a"', json_schema=schema)


def test_lookup_draft_keeps_the_output(model):
    code = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n"
    prompt = model.apply_chat_template([{"role": "user", "content": "Repeat this code exactly:\n" + code}])
    plain = model.generate(prompt, max_tokens=48, temperature=0)
    assert model.generate(prompt, max_tokens=48, temperature=0, lookup_draft=8) == plain


def test_draft_model_keeps_the_output(model):
    prompt = model.apply_chat_template([{"role": "user", "content": "Name three colours."}])
    plain = model.generate(prompt, max_tokens=24, temperature=0)
    with minnow.Model(MODEL) as draft, minnow.Session(model) as s:  # the same vocabulary: a valid draft
        s.set_draft(draft, draft_max=4, draft_p_min=0.0)
        assert s.generate(prompt, max_tokens=24, temperature=0) == plain
        s.reset()
        assert s.generate(prompt, max_tokens=24, temperature=0, lookup_draft=4) == plain
        with pytest.raises(minnow.InvalidArgumentError, match="draft_max"):
            s.set_draft(draft, draft_max=0)
        with minnow.Model(ROOT / "tests" / "reference" / "tiny" / "qwen2.gguf") as other:
            with pytest.raises(minnow.InvalidArgumentError, match="vocabulary"):
                s.set_draft(other)
        s.set_draft(None)
        s.reset()
        assert s.generate(prompt, max_tokens=24, temperature=0) == plain


EMBED = ROOT / "models" / "all-MiniLM-L6-v2"


@pytest.mark.skipif(not (EMBED / "model.safetensors").exists(), reason=f"missing {EMBED}")
def test_embedder_matches_cli():
    texts = ["A cat sits on the mat.", "Ein Hund schläft.", "x = f(y) + 1"]
    want = [json.loads(line) for line in cli("embed", "-m", EMBED, "-t", 2, *texts).splitlines()]
    with minnow.Embedder(EMBED, n_threads=2) as e:
        assert e.dim == 384
        got = e.embed(texts)
        assert np.allclose(np.array(got), np.array(want), atol=1e-6)
        single = e.embed(texts[0])
        assert len(single) == 384 and abs(sum(x * x for x in single) - 1) < 1e-4
    assert e.closed
    with pytest.raises(minnow.MinnowError):
        e.embed(["after close"])
    with pytest.raises(minnow.InvalidArgumentError):
        minnow.Embedder(EMBED, precision="int4")
    with pytest.raises(minnow.MinnowError, match="not a model directory"):
        minnow.Embedder(ROOT / "nonexistent")


CLS = ROOT / "models" / "rapidocr" / "cls.onnx"


@pytest.mark.skipif(not CLS.exists(), reason=f"missing {CLS} (scripts/fetch-models --ocr)")
def test_onnx_model_matches_cli(tmp_path):
    x = np.random.default_rng(3).random((6, 3, 48, 192), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    cli("onnx", "run", CLS, "--input", f"x={tmp_path / 'x.npy'}", "--save", tmp_path / "out", "-t", 2)
    net = minnow.OnnxModel(CLS)
    assert net.inputs == ["x"] and len(net.outputs) == 1
    with net.session(n_threads=2) as s:
        y = s.run({"x": x})[net.outputs[0]]
        want = np.load(tmp_path / "out" / (net.outputs[0].replace("/", "_") + ".npy"))  # the CLI's file name
        assert y.dtype == np.float32 and y.shape == want.shape == (6, 2)
        assert np.array_equal(y, want)
        # Another batch size on the same session; a non-contiguous array is copied first.
        y2 = s.run({"x": x[:2]})[net.outputs[0]]
        assert np.array_equal(y2, want[:2])
        assert s.run({"x": np.asfortranarray(x[:1])})[net.outputs[0]].shape == (1, 2)
        with pytest.raises(minnow.InvalidArgumentError, match="no input 'y'"):
            s.run({"y": x})
        with pytest.raises(minnow.InvalidArgumentError, match="takes float32"):
            s.run({"x": x.astype(np.float64)})
    assert s.closed
    with pytest.raises(minnow.InvalidArgumentError, match="closed"):
        s.run({"x": x})
    with pytest.raises(minnow.MinnowError, match="nonexistent"):
        minnow.OnnxModel(ROOT / "nonexistent.onnx")
