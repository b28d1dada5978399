"""The web chat page that `minnow serve` serves at /, in headless Chromium: streaming replies,
Stop, multi-turn history, server errors."""
import json
import pathlib
import re
import shutil
import subprocess
import threading
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
MINNOW = ROOT / "build" / "release" / "minnow"
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ID = "SmolLM2-135M-Instruct.Q4_1"
CHROMIUM = "/usr/bin/chromium"  # Debian's, installed by scripts/setup (Playwright's own browsers are not downloaded)

try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # a missing tool is a broken setup, not a reason to skip
    sync_playwright = None


@pytest.fixture(scope="module")
def server():
    """One `minnow serve` for the module; yields its base URL and always stops it."""
    if not MODEL.exists():
        pytest.skip(f"missing {MODEL}")
    p = subprocess.Popen([str(MINNOW), "serve", "-m", str(MODEL), "--port", "0", "--parallel", "2",
                          "--ctx", "2048", "-t", "2"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines, ready = [], threading.Event()

    def drain():  # keep reading stderr, or a chatty server would block on a full pipe
        for line in p.stderr:
            lines.append(line)
            if "listening on" in line:
                ready.set()
        ready.set()  # EOF: the server died

    threading.Thread(target=drain, daemon=True).start()
    try:
        ready.wait(60)
        m = next((re.search(r"listening on (http://\S+)", l) for l in lines if "listening on" in l), None)
        assert m, f"server did not start: {''.join(lines)[-2000:]}"
        yield m.group(1)
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.fixture(scope="module")
def browser():
    if sync_playwright is None:
        pytest.fail("playwright is not installed in .venv: run scripts/setup")
    if not shutil.which(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run scripts/setup (it installs Debian's chromium)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(server, browser):
    """A fresh tab on the chat page, its model id loaded; page.console_errors collects what the page logs as errors."""
    pg = browser.new_page()
    pg.set_default_timeout(10_000)
    pg.console_errors = []
    pg.on("console", lambda m: pg.console_errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.console_errors.append(str(e)))
    pg.goto(server)
    expect(pg.get_by_test_id("model")).to_have_text(MODEL_ID)
    yield pg
    pg.close()


def assistant_text(pg, i=-1):
    return pg.get_by_test_id("assistant-message").all_text_contents()[i]


def watch_reply_lengths(pg):
    """Records the length of the newest assistant bubble at every DOM change, to see it grow while streaming."""
    pg.evaluate("""() => {
        window.replyLengths = [];
        new MutationObserver(() => {
            const b = [...document.querySelectorAll('[data-testid="assistant-message"]')].at(-1);
            if (b) window.replyLengths.push(b.textContent.length);
        }).observe(document.getElementById("log"), {subtree: true, childList: true, characterData: true});
    }""")


def settings(pg, **values):
    """Opens the settings panel and fills fields by test id: settings(pg, temperature="0")."""
    if not pg.get_by_test_id("temperature").is_visible():
        pg.get_by_test_id("settings").click()
    for name, value in values.items():
        pg.get_by_test_id(name.replace("_", "-")).fill(value)


def send(pg, text):
    pg.get_by_test_id("message-input").fill(text)
    pg.get_by_test_id("send-button").click()


def wait_idle(pg, timeout=30_000):
    expect(pg.get_by_test_id("send-button")).to_be_enabled(timeout=timeout)
    expect(pg.get_by_test_id("stop-button")).to_be_disabled()


def test_streams_a_reply_then_a_second_turn(page):
    assert page.title() == "minnow"
    wait_idle(page)
    settings(page, temperature="0", max_tokens="48")

    # This reply is a few tokens, short enough to arrive in one network read: growth while
    # streaming is checked on the long reply of test_stop_keeps_the_partial_reply.
    send(page, "What is the capital of France?")
    expect(page.get_by_test_id("stats")).to_have_count(1, timeout=30_000)
    wait_idle(page)
    assert "Paris" in assistant_text(page)
    assert re.fullmatch(r"\d+ tokens · [\d.]+ tokens/s · first token after [\d.]+ s( · .*)?",
                        page.get_by_test_id("stats").text_content()), page.get_by_test_id("stats").text_content()

    # The second turn is answered from the first: the whole history is sent again.
    send(page, "And what is the capital of Germany?")
    expect(page.get_by_test_id("stats")).to_have_count(2, timeout=30_000)
    expect(page.get_by_test_id("user-message")).to_have_count(2)
    expect(page.get_by_test_id("assistant-message")).to_have_count(2)
    assert "Berlin" in assistant_text(page)
    expect(page.get_by_test_id("error")).to_be_hidden()
    assert page.console_errors == []


def test_stop_keeps_the_partial_reply(page):
    settings(page, max_tokens="400")
    bodies = []
    page.on("request", lambda r: bodies.append(json.loads(r.post_data)) if r.url.endswith("/v1/chat/completions") else None)
    watch_reply_lengths(page)

    send(page, "Write a very long story about a dragon who learns to cook.")
    page.wait_for_function("""() => {
        const b = [...document.querySelectorAll('[data-testid="assistant-message"]')].at(-1);
        return b && b.textContent.length > 200;
    }""", timeout=30_000)
    lengths = page.evaluate("window.replyLengths")
    assert len({n for n in lengths if n > 0}) >= 3, f"the reply did not grow while streaming: {lengths}"
    expect(page.get_by_test_id("stop-button")).to_be_enabled()
    expect(page.get_by_test_id("send-button")).to_be_disabled()
    page.get_by_test_id("stop-button").click()
    wait_idle(page, timeout=5_000)
    partial = assistant_text(page)
    time.sleep(1.0)
    assert assistant_text(page) == partial, "the reply kept growing after Stop"
    assert "stopped" in page.get_by_test_id("stats").text_content()

    # The stopped reply stays on the page and in the history sent with the next turn.
    settings(page, max_tokens="16")
    send(page, "Thanks!")
    expect(page.get_by_test_id("stats")).to_have_count(2, timeout=30_000)
    expect(page.get_by_test_id("assistant-message")).to_have_count(2)
    assert assistant_text(page, 0) == partial
    assert [m["role"] for m in bodies[-1]["messages"]] == ["user", "assistant", "user"]
    assert bodies[-1]["messages"][1]["content"] == partial
    assert bodies[0]["stream"] is True and bodies[0]["stream_options"] == {"include_usage": True}
    assert page.console_errors == []


def test_shows_server_errors(page):
    # Ask for a model the server does not have: its 404 error body must reach the user, readably.
    page.route("**/v1/chat/completions", lambda route: route.continue_(
        post_data=json.dumps(dict(json.loads(route.request.post_data), model="no-such-model"))))
    send(page, "Hello")
    expect(page.get_by_test_id("error")).to_be_visible(timeout=10_000)
    text = page.get_by_test_id("error").text_content()
    assert "404" in text and "model_not_found" in text and "{" not in text, text
    # The failed turn is taken back, its text returned to the box to send again.
    expect(page.get_by_test_id("user-message")).to_have_count(0)
    expect(page.get_by_test_id("message-input")).to_have_value("Hello")
    wait_idle(page)
