"""Structured output: --grammar / --json-schema in the CLI, response_format in the server.

Every output must parse and validate with the `jsonschema` package (an outside reference),
greedy and sampled, for the schemas of tests/reference/json_schema_cases.py. One server
serves the many-schema test (a model load per case would cost more than the decoding).
"""
import json
import pathlib
import subprocess
import sys

import pytest

jsonschema = pytest.importorskip("jsonschema")
openai = pytest.importorskip("openai")

from test_server import API_KEY, MINNOW, MODEL, Server  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "reference"))
from json_schema_cases import CASES  # noqa: E402

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"missing {MODEL}")


def cases():
    for c in CASES:
        if isinstance(c, dict) and "schema" in c:
            yield c["name"], c["schema"]
        else:
            yield c[0], c[1]


def run(*args, timeout=120):
    return subprocess.run([str(MINNOW), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def ask(schema):
    return ("Reply with one JSON value for this JSON Schema, with realistic values and nothing else:\n"
            + json.dumps(schema))


def test_cli_grammar_yes_no():
    r = run("run", "-m", MODEL, "--chat", "--temp", "0", "-n", "16", "-q",
            "--grammar", 'root ::= "yes" | "no"', "-p", "Is Paris in France? Answer yes or no.")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() in ("yes", "no"), r.stdout


def test_cli_json_schema_greedy_and_sampled(tmp_path):
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 40},
                                               "population": {"type": "integer"},
                                               "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}},
              "required": ["city", "population"]}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema))
    for flags in (["--temp", "0"], ["--temp", "0.9", "--seed", "5"]):
        r = run("run", "-m", MODEL, "--chat", "-n", "160", "-q", *flags, "--json-schema-file", path,
                "-p", "Describe Paris as JSON with its city name, population and tags.")
        assert r.returncode == 0, r.stderr
        jsonschema.validate(json.loads(r.stdout), schema)


@pytest.mark.parametrize("flags,message", [
    (["--grammar", "root ::= item"], "grammar: rule 'item' is used but not defined"),
    (["--json-schema", '{"type": "string", "pattern": "^a"}'], "pattern"),
    (["--json-schema", "{not json"], "not valid JSON"),
    (["--grammar-file", "/nonexistent/g.gbnf"], "cannot read the grammar file"),
    (["--grammar", 'root ::= "a"', "--json-schema", "{}"], "excludes"),
])
def test_cli_refuses_bad_grammars_in_one_line(flags, message):
    r = run("run", "-m", MODEL, "-n", "4", "-p", "hi", *flags)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.fixture(scope="module")
def client():
    s = Server("--parallel", 2, "--ctx", 2048, "-t", 2, "--api-key", API_KEY)
    try:
        yield s.client()
    finally:
        s.stop()


def test_server_every_case_validates_greedy_and_sampled(client):
    failures, complete, total = [], 0, 0
    model = client.models.list().data[0].id
    for i, (name, schema) in enumerate(cases()):
        for temperature in (0.0, 0.8):
            r = client.chat.completions.create(
                model=model,
                messages=[{"role": "user", "content": ask(schema)}],
                response_format={"type": "json_schema", "json_schema": {"name": name, "schema": schema}},
                temperature=temperature, seed=i, max_tokens=400)
            text = r.choices[0].message.content
            total += 1
            if r.choices[0].finish_reason != "stop":
                continue  # cut off by max_tokens: incomplete by construction
            complete += 1
            try:
                jsonschema.validate(json.loads(text), schema)
            except Exception as e:  # noqa: BLE001 - collect every failure
                failures.append(f"{name} (temperature {temperature}): {e.__class__.__name__}: {str(e)[:200]}\n{text[:300]}")
    assert not failures, "\n\n".join(failures)
    print(f"{complete} of {total} outputs complete within max_tokens, all valid")
    assert complete >= 0.8 * total, f"only {complete} of {total} outputs complete within max_tokens"


def test_server_json_object_and_stream(client):
    model = client.models.list().data[0].id
    r = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Give me a JSON object about a cat."}],
                                       response_format={"type": "json_object"}, temperature=0, max_tokens=200)
    if r.choices[0].finish_reason == "stop":
        assert isinstance(json.loads(r.choices[0].message.content), dict)
    schema = {"type": "object", "properties": {"answer": {"type": "boolean"}}, "required": ["answer"]}
    chunks = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Is the sky blue?"}], stream=True, temperature=0,
        response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}, max_tokens=50)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    jsonschema.validate(json.loads(text), schema)


def test_server_refuses_bad_response_formats(client):
    model = client.models.list().data[0].id
    msgs = [{"role": "user", "content": "hi"}]
    for rf, needle in [({"type": "xml"}, "'response_format.type'"),
                       ({"type": "json_schema"}, "json_schema"),
                       ({"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "string", "pattern": "x"}}},
                        "pattern")]:
        with pytest.raises(openai.BadRequestError) as e:
            client.chat.completions.create(model=model, messages=msgs, response_format=rf, max_tokens=4)
        assert needle in str(e.value), e.value
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=model, messages=msgs, max_tokens=4, extra_body={"grammar": "root ::= nope"})
    assert "'nope' is used but not defined" in str(e.value)
    r = client.chat.completions.create(model=model, messages=msgs, max_tokens=8, temperature=0,
                                       extra_body={"grammar": 'root ::= "ok" | "no"'})
    assert r.choices[0].message.content in ("ok", "no")
