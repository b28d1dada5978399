"""minnow serve: the OpenAI-compatible HTTP server, driven by the official openai client.

One server (--parallel 4 --ctx 2048) serves the whole module; the queue-full test starts its own
small one. Contract: errors are {"error": {"message", "type", "param", "code"}}, greedy output does
not depend on what else runs concurrently, a disconnecting client frees its slot.
"""
import http.client
import json
import pathlib
import random
import re
import socket
import subprocess
import threading
import time

import pytest

openai = pytest.importorskip("openai")

ROOT = pathlib.Path(__file__).resolve().parents[2]
MINNOW = ROOT / "build" / "release" / "minnow"
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ID = "SmolLM2-135M-Instruct.Q4_1"
API_KEY = "test-key"
MAX_BODY = 65536

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"missing {MODEL}")

LISTENING = re.compile(r"^minnow serve: listening on http://127\.0\.0\.1:(\d+)$")


class Server:
    """A `minnow serve` child process; stderr is drained on a thread and kept for failure messages."""

    def __init__(self, *extra, startup_timeout=60.0, model=MODEL):
        self.args = [str(MINNOW), "serve", *(["-m", str(model)] if model else []), "--port", "0", *map(str, extra)]
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self.lines = []
        self.port = None
        self._ready = threading.Event()
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()
        end = time.time() + startup_timeout
        while not self._ready.wait(0.1):
            if self.proc.poll() is not None:
                self._drain.join(5)
                self.stop()
                pytest.fail(f"minnow serve exited with {self.proc.returncode} before listening:\n{self.stderr()}")
            if time.time() > end:
                self.stop()
                pytest.fail(f"minnow serve did not print its listening line in {startup_timeout:.0f}s:\n"
                            f"{self.stderr()}")
        self.base = f"http://127.0.0.1:{self.port}"

    def _read_stderr(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append(line)
            m = LISTENING.match(line)
            if m and self.port is None:
                self.port = int(m.group(1))
                self._ready.set()

    def stderr(self):
        return "\n".join(self.lines[-200:])

    def alive(self):
        return self.proc.poll() is None

    def check_alive(self):
        if not self.alive():
            pytest.fail(f"minnow serve died (exit {self.proc.returncode}); stderr:\n{self.stderr()}")

    def client(self, api_key=API_KEY, timeout=120.0):
        return openai.OpenAI(base_url=self.base + "/v1", api_key=api_key, max_retries=0, timeout=timeout)

    def rss_bytes(self):
        status = pathlib.Path(f"/proc/{self.proc.pid}/status").read_text()
        kb = int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M).group(1))
        return kb * 1024

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._drain.join(5)


@pytest.fixture(scope="module")
def server():
    s = Server("--parallel", 4, "--ctx", 2048, "-t", 2, "--api-key", API_KEY, "--max-body", MAX_BODY)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(autouse=True)
def server_survives(request):
    yield
    if "server" in request.fixturenames:
        request.getfixturevalue("server").check_alive()


@pytest.fixture(scope="module")
def client(server):
    return server.client()


# ---------------------------------------------------------------- helpers

def raw(server, method, path, body=None, key=API_KEY, headers=None, timeout=60):
    """One plain HTTP request; returns (status, headers dict (lower-case names), body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    hdrs = dict(headers or {})
    if key is not None:
        hdrs["Authorization"] = f"Bearer {key}"
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    if body is not None:
        hdrs.setdefault("Content-Type", "application/json")
    try:
        conn.request(method, path, body=body, headers=hdrs)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def check_error_body(body, type_, code, param="<any>"):
    """body: the decoded {"error": {...}} object of an error response."""
    assert set(body) == {"error"}, body
    err = body["error"]
    assert set(err) >= {"message", "type", "param", "code"}, err
    assert isinstance(err["message"], str) and err["message"], err
    if type_ != "<any>":
        assert err["type"] == type_, err
    assert err["code"] == code, err
    if param != "<any>":
        assert err["param"] == param, err


def raw_error(server, status, type_, code, param, method, path, body=None, **kw):
    got, headers, data = raw(server, method, path, body, **kw)
    assert got == status, (got, data[:300])
    assert headers.get("content-type", "").startswith("application/json"), headers
    check_error_body(json.loads(data), type_, code, param)


def api_error(call, status, code, param, type_="invalid_request_error"):
    """Runs call() through the openai client; it must raise APIStatusError with these fields."""
    with pytest.raises(openai.APIStatusError) as info:
        call()
    e = info.value
    assert e.status_code == status, (e.status_code, e.body)
    assert isinstance(e.body, dict) and isinstance(e.body.get("message"), str) and e.body["message"], e.body
    assert (e.type, e.code, e.param) == (type_, code, param), e.body
    return e


def metrics(server):
    status, _, data = raw(server, "GET", "/metrics", key=None)
    assert status == 200, data[:300]
    values = {}
    for line in data.decode().splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(None, 1)
            values.setdefault(name.split("{")[0], float(value))
    return values


def wait_slots_idle(server, timeout=3.0):
    end = time.time() + timeout
    while True:
        busy = metrics(server)["minnow_slots_busy"]
        if busy == 0 or time.time() > end:
            return busy
        time.sleep(0.05)


def user(text):
    return [{"role": "user", "content": text}]


def chat(client, text, **kw):
    kw.setdefault("temperature", 0)
    kw.setdefault("max_tokens", 32)
    return client.chat.completions.create(model=MODEL_ID, messages=user(text), **kw)


def stream_chat(client, text, **kw):
    """Streams a chat completion; returns (content, finish_reason, chunks)."""
    kw.setdefault("temperature", 0)
    kw.setdefault("max_tokens", 32)
    chunks = list(client.chat.completions.create(model=MODEL_ID, messages=user(text), stream=True, **kw))
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finishes) == 1, f"exactly one chunk must carry finish_reason, got {finishes}"
    return content, finishes[0], chunks


def check_usage(usage, prompt_tokens=None, completion_tokens=None):
    assert usage is not None
    assert usage.prompt_tokens > 0 and usage.completion_tokens >= 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    if prompt_tokens is not None:
        assert usage.prompt_tokens == prompt_tokens
    if completion_tokens is not None:
        assert usage.completion_tokens == completion_tokens


# ---------------------------------------------------------------- plain endpoints

def test_models_health_metrics_page(server, client):
    models = client.models.list()
    assert [m.id for m in models.data] == [MODEL_ID]
    m = models.data[0]
    assert m.object == "model" and m.owned_by == "minnow" and isinstance(m.created, int) and m.created > 0
    status, headers, data = raw(server, "GET", "/v1/models")
    assert status == 200 and json.loads(data)["object"] == "list"

    status, _, data = raw(server, "GET", "/health", key=None)
    assert status == 200 and json.loads(data) == {"status": "ok"}

    values = metrics(server)
    for name in ("minnow_requests_total", "minnow_request_errors_total", "minnow_prompt_tokens_total",
                 "minnow_completion_tokens_total", "minnow_decode_tokens_per_second", "minnow_queue_depth",
                 "minnow_slots_busy", "minnow_slots_total", "minnow_rss_bytes"):
        assert name in values, f"/metrics lacks {name}"
    assert values["minnow_slots_total"] == 4
    assert values["minnow_rss_bytes"] > 10e6

    status, headers, data = raw(server, "GET", "/", key=None)
    assert status == 200 and headers.get("content-type", "").startswith("text/html")
    assert b"<html" in data.lower()


# ---------------------------------------------------------------- chat completions

def test_chat_answers(client):
    r = chat(client, "What is the capital of France?")
    assert r.object == "chat.completion" and r.model == MODEL_ID and r.id
    assert len(r.choices) == 1
    c = r.choices[0]
    assert c.index == 0 and c.message.role == "assistant"
    assert "Paris" in c.message.content
    assert c.finish_reason in ("stop", "length")
    check_usage(r.usage)
    assert r.usage.completion_tokens <= 32


def test_chat_stream_matches_non_streaming(client):
    q = "Name three colors of the rainbow."
    full = chat(client, q, max_tokens=40)
    content, finish, chunks = stream_chat(client, q, max_tokens=40, stream_options={"include_usage": True})
    assert content == full.choices[0].message.content
    assert finish == full.choices[0].finish_reason
    assert all(c.object == "chat.completion.chunk" and c.model == MODEL_ID for c in chunks)
    first = chunks[0].choices[0]
    assert first.delta.role == "assistant" and first.delta.content == "" and first.finish_reason is None
    # The finish chunk has an empty delta, then the usage chunk with no choices.
    finish_chunk, usage_chunk = chunks[-2], chunks[-1]
    assert finish_chunk.choices[0].finish_reason == finish
    assert finish_chunk.choices[0].delta.content is None and finish_chunk.choices[0].delta.role is None
    assert usage_chunk.choices == []
    check_usage(usage_chunk.usage, full.usage.prompt_tokens, full.usage.completion_tokens)
    assert all(c.usage is None for c in chunks[:-1])
    # Without include_usage there is no usage chunk.
    content2, _, chunks2 = stream_chat(client, q, max_tokens=40)
    assert content2 == content
    assert all(c.choices and c.usage is None for c in chunks2)


def test_chat_stream_wire_format(server):
    """The SSE bytes: "data: {json}\\n\\n" events, "usage": null on every chunk, "data: [DONE]" last."""
    body = {"model": MODEL_ID, "messages": user("Say hello."), "temperature": 0, "max_tokens": 8,
            "stream": True, "stream_options": {"include_usage": True}}
    status, headers, data = raw(server, "POST", "/v1/chat/completions", body)
    assert status == 200, data[:300]
    assert headers.get("content-type", "").startswith("text/event-stream"), headers
    text = data.decode()
    assert text.endswith("data: [DONE]\n\n"), text[-200:]
    events = [e for e in text.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events), events
    objs = [json.loads(e[len("data: "):]) for e in events[:-1]]
    assert objs[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert all("usage" in o for o in objs)
    assert all(o["usage"] is None for o in objs[:-1])
    assert objs[-1]["choices"] == [] and objs[-1]["usage"]["total_tokens"] > 0
    assert objs[-2]["choices"][0]["delta"] == {} and objs[-2]["choices"][0]["finish_reason"] in ("stop", "length")


def test_max_tokens_gives_length(client):
    q = "Write a long story about a dragon who learns to fly."
    r = chat(client, q, max_tokens=5)
    assert r.choices[0].finish_reason == "length"
    check_usage(r.usage, completion_tokens=5)
    r = chat(client, q, max_tokens=None, max_completion_tokens=7)
    assert r.choices[0].finish_reason == "length"
    check_usage(r.usage, completion_tokens=7)
    content, finish, chunks = stream_chat(client, q, max_tokens=6, stream_options={"include_usage": True})
    assert finish == "length"
    check_usage(chunks[-1].usage, completion_tokens=6)
    # ignore_eos keeps generating past the end of the turn, to exactly max_tokens.
    r = chat(client, "Say hi.", max_tokens=40, extra_body={"ignore_eos": True})
    assert r.choices[0].finish_reason == "length"
    check_usage(r.usage, completion_tokens=40)


def test_stop_sequences(client):
    q = "Write a short poem about the sea."
    full = chat(client, q, max_tokens=48).choices[0].message.content
    assert len(full) >= 40, full
    # Eight characters from the middle, starting at a word: a stop string spanning several tokens,
    # known to be in the greedy output.
    p = full.rfind(" ", 0, len(full) // 2) + 1
    stop = full[p:p + 8]
    assert stop.strip(), full
    want = full[:full.index(stop)]
    for stop_arg in (stop, ["@@never@@", stop]):
        r = chat(client, q, max_tokens=48, stop=stop_arg)
        got = r.choices[0].message.content
        assert stop not in got
        assert r.choices[0].finish_reason == "stop", (stop_arg, got)
        assert got == want, f"stop={stop_arg!r}: expected the text before it"
    content, finish, _ = stream_chat(client, q, max_tokens=48, stop=[stop])
    assert (content, finish) == (want, "stop")
    # A stop string that never appears changes nothing.
    r = chat(client, q, max_tokens=48, stop="@@never@@")
    assert r.choices[0].message.content == full


def test_seed_reproducible(client):
    q = "Tell me a fun fact about cats."
    texts = [chat(client, q, temperature=0.8, seed=s, max_tokens=24).choices[0].message.content
             for s in (42, 42, 1, 2, 3)]
    assert texts[0] == texts[1]
    assert any(t != texts[0] for t in texts[2:]), texts


def test_sampling_fields_accepted(client):
    r = chat(client, "List some fruits.", temperature=0.7, top_p=0.9, presence_penalty=0.6,
             frequency_penalty=0.4, seed=5, extra_body={"top_k": 40, "min_p": 0.05})
    assert r.choices[0].message.content
    check_usage(r.usage)


# ---------------------------------------------------------------- completions

def test_completions(client):
    prompt = "The capital of France is"
    r = client.completions.create(model=MODEL_ID, prompt=prompt, max_tokens=16, temperature=0)
    assert r.object == "text_completion" and r.model == MODEL_ID
    text = r.choices[0].text
    assert text and r.choices[0].finish_reason in ("stop", "length")
    check_usage(r.usage)
    chunks = list(client.completions.create(model=MODEL_ID, prompt=prompt, max_tokens=16, temperature=0,
                                            stream=True, stream_options={"include_usage": True}))
    assert all(c.object == "text_completion" for c in chunks)
    assert "".join(c.choices[0].text for c in chunks if c.choices) == text
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == [r.choices[0].finish_reason]
    assert chunks[-1].choices == []
    check_usage(chunks[-1].usage, r.usage.prompt_tokens, r.usage.completion_tokens)

    r = client.completions.create(model=MODEL_ID, prompt=prompt, max_tokens=3, temperature=0)
    assert r.choices[0].finish_reason == "length"
    check_usage(r.usage, completion_tokens=3)

    stop = text.split()[1] if len(text.split()) > 1 else text.split()[0]
    r = client.completions.create(model=MODEL_ID, prompt=prompt, max_tokens=16, temperature=0, stop=[stop])
    assert r.choices[0].text == text[:text.index(stop)] and r.choices[0].finish_reason == "stop"


# ---------------------------------------------------------------- errors

def long_text(nbytes=12000):
    """Varied nonsense words: far more than 2048 tokens, far less than --max-body bytes."""
    rng = random.Random(0)
    words = []
    while sum(len(w) + 1 for w in words) < nbytes:
        words.append("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))))
    return " ".join(words)


def test_invalid_json(server):
    raw_error(server, 400, "invalid_request_error", "invalid_json", "<any>",
              "POST", "/v1/chat/completions", b'{"model": "' + MODEL_ID.encode() + b'", "messages": [')
    raw_error(server, 400, "invalid_request_error", "invalid_json", "<any>",
              "POST", "/v1/completions", b"not json at all")


@pytest.mark.parametrize("field,value", [
    ("temperature", "hot"),
    ("messages", "hello"),
    ("messages", []),
    ("max_tokens", -1),
    ("max_completion_tokens", -5),
    ("top_p", "x"),
    ("seed", "abc"),
    ("stream", "yes"),
    ("stop", 7),
    ("stop", ["a", "b", "c", "d", "e"]),
])
def test_chat_bad_values(client, field, value):
    body = {"model": MODEL_ID, "messages": user("hi"), "max_tokens": 4, field: value}
    api_error(lambda: client.post("/chat/completions", cast_to=object, body=body), 400, "invalid_value", field)


def test_bad_values_through_typed_calls(client):
    api_error(lambda: chat(client, "hi", temperature="hot"), 400, "invalid_value", "temperature")
    api_error(lambda: chat(client, "hi", max_tokens=-1), 400, "invalid_value", "max_tokens")
    api_error(lambda: chat(client, "hi", extra_body={"messages": "not a list"}), 400, "invalid_value", "messages")
    api_error(lambda: client.completions.create(model=MODEL_ID, prompt=5, max_tokens=4), 400, "invalid_value",
              "prompt")


def test_missing_fields(client):
    api_error(lambda: client.post("/chat/completions", cast_to=object, body={"model": MODEL_ID}),
              400, "missing_field", "messages")
    api_error(lambda: client.post("/completions", cast_to=object, body={"model": MODEL_ID, "max_tokens": 4}),
              400, "missing_field", "prompt")


def test_unknown_model(client):
    api_error(lambda: client.chat.completions.create(model="gpt-4o", messages=user("hi"), max_tokens=4),
              404, "model_not_found", "model")
    api_error(lambda: client.completions.create(model="gpt-4o", prompt="hi", max_tokens=4),
              404, "model_not_found", "model")


def test_prompt_longer_than_context(client):
    text = long_text()
    assert len(text.encode()) < MAX_BODY // 2
    api_error(lambda: chat(client, text, max_tokens=4), 400, "context_length_exceeded", "messages")
    api_error(lambda: client.completions.create(model=MODEL_ID, prompt=text, max_tokens=4),
              400, "context_length_exceeded", "prompt")
    api_error(lambda: chat(client, text, max_tokens=4, stream=True), 400, "context_length_exceeded", "messages")


def test_body_too_large(server, client):
    big = {"model": MODEL_ID, "messages": user("x" * (MAX_BODY + 1000)), "max_tokens": 4}
    raw_error(server, 413, "invalid_request_error", "request_too_large", "<any>",
              "POST", "/v1/chat/completions", big)
    with pytest.raises(openai.APIStatusError) as info:
        chat(client, "y" * (MAX_BODY + 1000), max_tokens=4)
    assert info.value.status_code == 413 and info.value.code == "request_too_large", info.value.body


def test_api_key(server):
    body = {"model": MODEL_ID, "messages": user("hi"), "max_tokens": 4}
    raw_error(server, 401, "invalid_request_error", "invalid_api_key", "<any>",
              "POST", "/v1/chat/completions", body, key=None)
    raw_error(server, 401, "invalid_request_error", "invalid_api_key", "<any>", "GET", "/v1/models", key=None)
    raw_error(server, 401, "invalid_request_error", "invalid_api_key", "<any>",
              "POST", "/v1/chat/completions", body, key="wrong-key")
    wrong = server.client(api_key="wrong-key")
    with pytest.raises(openai.AuthenticationError) as info:
        wrong.chat.completions.create(model=MODEL_ID, messages=user("hi"), max_tokens=4)
    assert (info.value.type, info.value.code) == ("invalid_request_error", "invalid_api_key")
    with pytest.raises(openai.AuthenticationError):
        wrong.models.list()
    # Outside /v1 no key is needed.
    assert raw(server, "GET", "/health", key=None)[0] == 200


def read_response(sock):
    """Reads one Content-Length-framed HTTP response from sock; returns (status, body bytes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed mid-response: {data!r}"
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    length = next(int(v) for k, _, v in (ln.partition(":") for ln in lines[1:]) if k.lower() == "content-length")
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed mid-body"
        rest += chunk
    return int(lines[0].split()[1]), rest[:length]


@pytest.mark.parametrize("case", ["wrong_key", "too_large"])
def test_connection_reusable_after_early_rejection(server, case):
    """A request rejected before its body was read (401, 413) must not poison the keep-alive
    connection: the body arrives in its own TCP segment here, as httpx (the openai client) sends it."""
    size = 200 if case == "wrong_key" else MAX_BODY + 1000
    body = json.dumps({"model": MODEL_ID, "messages": user("z" * size), "max_tokens": 2}).encode()
    key = "wrong-key" if case == "wrong_key" else API_KEY
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head)
        time.sleep(0.1)
        try:
            sock.sendall(body)
        except OSError:
            pass  # the server may close after rejecting; then the next request needs a new connection
        status, data = read_response(sock)
        assert status == (401 if case == "wrong_key" else 413), data
        try:
            sock.sendall(f"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {API_KEY}\r\n\r\n"
                         .encode())
            status, data = read_response(sock)
        except ConnectionError:
            return  # closing the connection after an unread body is fine too
        except AssertionError as e:
            if "closed" in str(e):
                return
            raise
        assert status == 200, f"next request on the same connection: {status} {data[:200]!r}"


def test_unknown_path(server, client):
    for method, path in (("GET", "/v1/nope"), ("POST", "/v1/nope"), ("GET", "/nope")):
        raw_error(server, 404, "<any>", "not_found", "<any>", method, path, {} if method == "POST" else None)
    # /v1/embeddings exists, but this server was started without --embedding-model.
    with pytest.raises(openai.NotFoundError) as info:
        client.embeddings.create(model=MODEL_ID, input="hi")
    assert info.value.code == "model_not_found" and "--embedding-model" in str(info.value)


def test_serves_after_errors(server, client):
    before = metrics(server)
    raw(server, "POST", "/v1/chat/completions", b"{oops")
    # Counted once the response is written (httplib's logger): poll, the client may be first.
    end = time.time() + 5
    while (after := metrics(server))["minnow_request_errors_total"] == before["minnow_request_errors_total"] \
            and time.time() < end:
        time.sleep(0.02)
    assert after["minnow_request_errors_total"] > before["minnow_request_errors_total"]
    r = chat(client, "What is the capital of France?")
    assert "Paris" in r.choices[0].message.content
    assert metrics(server)["minnow_requests_total"] > after["minnow_requests_total"]


# ---------------------------------------------------------------- disconnects and the queue

def test_disconnect_frees_slot(server, client):
    assert wait_slots_idle(server) == 0
    stream = client.chat.completions.create(model=MODEL_ID, messages=user("Count from one to a thousand."),
                                            stream=True, max_tokens=1500, temperature=0,
                                            extra_body={"ignore_eos": True})
    it = iter(stream)
    for _ in range(4):
        next(it)
    assert metrics(server)["minnow_slots_busy"] == 1
    stream.close()
    t0 = time.time()
    busy = wait_slots_idle(server, timeout=2.0)
    assert busy == 0, f"minnow_slots_busy still {busy} {time.time() - t0:.1f}s after the client disconnected; " \
                      f"metrics: {metrics(server)}"
    assert chat(client, "What is the capital of France?").choices[0].message.content


def test_queue_full():
    s = Server("--parallel", 1, "--queue", 1, "--ctx", 512, "-t", 2)
    try:
        client = s.client()
        n = 5
        barrier = threading.Barrier(n)
        release = threading.Event()
        outcomes = [None] * n

        def worker(i):
            barrier.wait()
            try:
                stream = client.completions.create(model=MODEL_ID, prompt="Once upon a time", stream=True,
                                                   max_tokens=400, temperature=0.7,
                                                   extra_body={"ignore_eos": True})
            except openai.APIStatusError as e:
                outcomes[i] = e
                return
            except Exception as e:  # noqa: BLE001 - reported below
                outcomes[i] = e
                return
            outcomes[i] = "ok"
            release.wait(60)
            stream.close()

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        end = time.time() + 30
        while time.time() < end and sum(o is not None for o in outcomes) < n - 1:
            time.sleep(0.05)
        release.set()
        for t in threads:
            t.join(60)
        s.check_alive()
        rejected = [o for o in outcomes if isinstance(o, openai.APIStatusError)]
        assert rejected, f"no request was rejected: {outcomes}"
        for e in rejected:
            assert e.status_code == 503 and (e.type, e.code) == ("server_error", "queue_full"), e.body
        assert "ok" in outcomes, outcomes
        assert not [o for o in outcomes if isinstance(o, Exception) and o not in rejected], outcomes
        # Afterwards the server serves again, once the cancelled streams have left the queue.
        end = time.time() + 5
        while metrics(s)["minnow_queue_depth"] > 0 and time.time() < end:
            time.sleep(0.05)
        r = client.completions.create(model=MODEL_ID, prompt="Hello", max_tokens=4, temperature=0)
        assert r.usage.completion_tokens == 4
    finally:
        s.stop()


# ---------------------------------------------------------------- load

QUESTIONS = [
    "What is the capital of France?",
    "Name a primary color.",
    "How many legs does a spider have?",
    "What is two plus two?",
    "Who wrote Romeo and Juliet?",
    "What is the boiling point of water?",
    "Name a planet in the solar system.",
    "What color is the sky on a clear day?",
]


def test_load_greedy_matches_sequential(server, client, capsys):
    n_clients, per_client, max_tokens = 16, 5, 24
    want = [chat(client, q, max_tokens=max_tokens).choices[0].message.content for q in QUESTIONS]

    def run_round(rounds):
        results, errors = [], []
        lock = threading.Lock()

        def worker(c):
            for k in range(rounds):
                qi = (c * 3 + k) % len(QUESTIONS)
                try:
                    content, finish, chunks = stream_chat(client, QUESTIONS[qi], max_tokens=max_tokens,
                                                          stream_options={"include_usage": True})
                    with lock:
                        results.append((qi, content, finish, chunks[-1].usage))
                except Exception as e:  # noqa: BLE001 - reported below
                    with lock:
                        errors.append(f"client {c} request {k}: {e!r}")

        threads = [threading.Thread(target=worker, args=(c,)) for c in range(n_clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert not errors, errors
        assert len(results) == n_clients * rounds
        return results

    run_round(1)  # warm-up: every slot and the queue have been used once
    rss0 = server.rss_bytes()
    t0 = time.time()
    results = run_round(per_client)
    wall = time.time() - t0
    rss1 = server.rss_bytes()
    with capsys.disabled():
        print(f"\n[load] {len(results)} streamed requests in {wall:.1f}s; server VmRSS after warm-up "
              f"{rss0 / 2**20:.1f} MiB, after load {rss1 / 2**20:.1f} MiB ({(rss1 - rss0) / 2**20:+.1f} MiB)")
    mismatches = [(QUESTIONS[qi], want[qi], got) for qi, got, _, _ in results if got != want[qi]]
    assert not mismatches, f"{len(mismatches)} of {len(results)} differ from the sequential output; " \
                           f"first: {mismatches[0]}"
    for qi, _, finish, usage in results:
        assert finish in ("stop", "length")
        assert 0 < usage.completion_tokens <= max_tokens
    assert rss1 - rss0 < 16 * 2**20, f"RSS grew {(rss1 - rss0) / 2**20:.1f} MiB during the load"
    assert wait_slots_idle(server) == 0
    assert metrics(server)["minnow_queue_depth"] == 0


def has_vulkan_device():
    r = subprocess.run([str(MINNOW), "devices"], capture_output=True, text=True, timeout=60)
    return "vulkan 0:" in r.stdout


@pytest.mark.parametrize("gpu_layers", [None, 15])  # all 30 layers, or the last 15 (the first 15 on the CPU)
def test_vulkan_server_answers_as_the_cpu(client, gpu_layers):
    if not has_vulkan_device():
        pytest.skip("no Vulkan device")
    questions = QUESTIONS[:4]
    want = [chat(client, q, max_tokens=8).choices[0].message.content for q in questions]
    extra = ["--gpu-layers", gpu_layers] if gpu_layers is not None else []
    s = Server("--backend", "vulkan", *extra, "--parallel", 2, "--ctx", 512, "-t", 2, startup_timeout=120)
    try:
        # Lavapipe decodes at ~0.5 token/s on 2 cores, and a waiting request queues behind the
        # others on the one device: minutes, not the default client's two.
        gpu = s.client(api_key="unused", timeout=600.0)
        got = [None] * len(questions)

        def worker(i):  # four requests on two slots: two run, two wait, in turn on the device
            if i % 2:
                got[i] = stream_chat(gpu, questions[i], max_tokens=8)[0]
            else:
                got[i] = chat(gpu, questions[i], max_tokens=8).choices[0].message.content

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(questions))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        assert got == want
        # The next turn of a conversation reuses its slot's device cache and prefills only what is new.
        turn = user(questions[0]) + [{"role": "assistant", "content": want[0]}, {"role": "user", "content": "Why?"}]
        a = gpu.chat.completions.create(model=MODEL_ID, messages=turn, temperature=0, max_tokens=8)
        b = client.chat.completions.create(model=MODEL_ID, messages=turn, temperature=0, max_tokens=8)
        assert a.choices[0].message.content == b.choices[0].message.content
        assert metrics(s)["minnow_prompt_tokens_reused_total"] > 0
        s.check_alive()
    finally:
        s.stop()


def test_vulkan_server_without_a_driver_fails_in_one_line():
    r = subprocess.run([str(MINNOW), "serve", "-m", str(MODEL), "--port", "0", "--backend", "vulkan"],
                       capture_output=True, text=True, timeout=60,
                       env={"VK_ICD_FILENAMES": "/nonexistent.json", "VK_DRIVER_FILES": "/nonexistent.json",
                            "PATH": "/usr/bin:/bin"})
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "vulkan" in lines[0].lower(), r.stderr
