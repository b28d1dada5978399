"""End-to-end checks of `minnow template`: the prompt SmolLM2's own chat template makes,
byte for byte as jinja2 renders it (tests/reference/make_template_golden.py)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# MINNOW_BIN: test another build than build/release.
MINNOW = pathlib.Path(os.environ.get("MINNOW_BIN", ROOT / "build" / "release" / "minnow"))
MODEL = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
GOLDEN = json.loads((ROOT / "tests/reference/golden/templates/cases.json").read_text(encoding="utf-8"))

sys.path.insert(0, str(ROOT / "tests" / "reference"))
import make_template_golden  # noqa: E402  (jinja2 configured as transformers does)


def template(*args):
    return subprocess.run([str(MINNOW), "template", *map(str, args)], capture_output=True, timeout=60)


def assert_clean_failure(r, needle):
    assert r.returncode != 0
    assert r.stdout == b"", "nothing may be half-printed on stdout"
    lines = r.stderr.decode().strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert needle in lines[0], r.stderr


def write_json(path, value):
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


def args_for(case, tmp_path):
    args = ["-m", MODEL, "--messages", write_json(tmp_path / "messages.json", GOLDEN["conversations"][case["conversation"]])]
    if case["add_generation_prompt"]:
        args.append("--add-generation-prompt")
    if "tools" in case:
        args += ["--tools", write_json(tmp_path / "tools.json", GOLDEN["tools"][case["tools"]])]
    for name, value in case.get("vars", {}).items():
        args += ["--var", f"{name}={json.dumps(value)}"]
    return args


SMOLLM2_CASES = [c for c in GOLDEN["cases"] if c["template"] == "smollm2"]


@pytest.mark.parametrize("case", SMOLLM2_CASES, ids=lambda c: "-".join(
    [c["conversation"], c.get("tools", "notools"), "gen" if c["add_generation_prompt"] else "nogen"] +
    [f"{k}={v}" for k, v in c.get("vars", {}).items()]))
def test_matches_golden(case, tmp_path):
    r = template(*args_for(case, tmp_path))
    if "expected" in case:
        assert r.returncode == 0, r.stderr
        assert r.stdout.decode("utf-8") == case["expected"]
    else:
        assert_clean_failure(r, "template: line ")


def test_golden_covers_smollm2_with_tools():
    assert len(SMOLLM2_CASES) > 50
    assert any("tools" in c for c in SMOLLM2_CASES)


def test_matches_live_jinja2(tmp_path):
    # The GGUF's own template text, rendered here by jinja2, for input the goldens lack.
    gguf = json.loads((ROOT / "tests/reference/templates/gguf_chat_templates.json").read_text(encoding="utf-8"))
    smol = gguf["files"][MODEL.name]
    messages = [{"role": "system", "content": "{{ not a template }} {% raw %}"},
                {"role": "user", "content": "tabs\tand \"quotes\" and \\ and \u00e9\u20ac\U0001f600 and \r\n"},
                {"role": "assistant", "content": "  "}]
    want = make_template_golden.make_env().from_string(smol["chat_template"]).render(
        messages=messages, tools=None, documents=None, add_generation_prompt=True,
        bos_token=smol["bos_token"], eos_token=smol["eos_token"])
    r = template("-m", MODEL, "--messages", write_json(tmp_path / "m.json", messages), "--add-generation-prompt")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode("utf-8") == want


def test_request_object_and_extra_variables(tmp_path):
    # A chat-completions request body works as --messages; extra variables pass through.
    request = {"model": "x", "messages": [{"role": "user", "content": "Hi"}], "tools": []}
    r = template("-m", MODEL, "--messages", write_json(tmp_path / "req.json", request),
                 "--var", "enable_thinking=false", "--var", 'note={"a": [1, 2.5]}')
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().endswith("<|im_start|>user\nHi<|im_end|>\n")


def test_help_teaches():
    r = template("--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    for needle in ("--messages", "--tools", "--var", "--add-generation-prompt", "Example", "minnow template -m"):
        assert needle in out


def test_bad_inputs(tmp_path):
    good = write_json(tmp_path / "good.json", [{"role": "user", "content": "Hi"}])
    bad = tmp_path / "bad.json"
    bad.write_text('[{"role": "user", ')
    assert_clean_failure(template("-m", MODEL, "--messages", tmp_path / "missing.json"), "cannot read")
    assert_clean_failure(template("-m", MODEL, "--messages", bad), "not valid JSON")
    assert_clean_failure(template("-m", MODEL, "--messages", write_json(tmp_path / "o.json", {"a": 1})), "list of messages")
    assert_clean_failure(template("-m", MODEL, "--messages", good, "--tools", bad), "--tools")
    assert_clean_failure(template("-m", MODEL, "--messages", good, "--var", "x=not json"), "--var")
    assert_clean_failure(template("-m", MODEL, "--messages", good, "--var", "=1"), "NAME=JSON")
    assert_clean_failure(template("-m", tmp_path / "none.gguf", "--messages", good), "none.gguf")
    # A template error (here: a message without content) is one line too.
    no_content = write_json(tmp_path / "nc.json", [{"role": "user"}])
    assert_clean_failure(template("-m", MODEL, "--messages", no_content), "template: line ")
