"""Tool calls through the server with the official openai client.

SmolLM2 (ChatML) is served with Qwen2.5-Coder's own chat template (`--chat-template-file`,
tests/reference/templates/qwen2.5-coder-instruct.jinja, read from that model's GGUF), which
renders `tools` and asks for <tool_call> blocks. A 135M model does not call tools by itself,
so calls are forced (`tool_choice`), which also tests the grammar that holds the arguments
to each function's schema; then a full round trip sends the call and a `role: "tool"`
result back.
"""
import json
import pathlib

import pytest

jsonschema = pytest.importorskip("jsonschema")
openai = pytest.importorskip("openai")

from test_server import API_KEY, MODEL, Server  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "tests" / "reference" / "templates" / "qwen2.5-coder-instruct.jinja"

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"missing {MODEL}")

WEATHER = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30},
                                            "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city",
                                            "parameters": WEATHER}},
         {"type": "function", "function": {"name": "add", "description": "Add two integers",
                                            "parameters": {"type": "object", "properties": {"a": {"type": "integer"},
                                                                                           "b": {"type": "integer"}},
                                                           "required": ["a", "b"]}}}]


@pytest.fixture(scope="module")
def client():
    s = Server("--parallel", 2, "--ctx", 2048, "-t", 2, "--api-key", API_KEY, "--chat-template-file", TEMPLATE)
    try:
        c = s.client()
        c.model_id = c.models.list().data[0].id
        yield c
    finally:
        s.stop()


def schema_of(name):
    return next(t["function"]["parameters"] for t in TOOLS if t["function"]["name"] == name)


def test_forced_call_round_trip(client):
    msgs = [{"role": "user", "content": "What is the weather in Paris?"}]
    r = client.chat.completions.create(model=client.model_id, messages=msgs, tools=TOOLS,
                                       tool_choice={"type": "function", "function": {"name": "get_weather"}},
                                       temperature=0, max_tokens=120)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    assert choice.message.content is None
    (call,) = choice.message.tool_calls
    assert call.type == "function" and call.function.name == "get_weather" and call.id.startswith("call_")
    jsonschema.validate(json.loads(call.function.arguments), WEATHER)
    # The call and its result go back; the template renders both and the model answers.
    msgs += [choice.message.model_dump(exclude_none=True),
             {"role": "tool", "tool_call_id": call.id, "content": json.dumps({"temperature": 21, "sky": "sunny"})}]
    r2 = client.chat.completions.create(model=client.model_id, messages=msgs, tools=TOOLS, temperature=0, max_tokens=40)
    assert r2.choices[0].message.content


@pytest.mark.parametrize("temperature", [0.0, 0.9])
def test_required_call_validates_streamed(client, temperature):
    chunks = list(client.chat.completions.create(
        model=client.model_id, messages=[{"role": "user", "content": "Add 2 and 40."}], tools=TOOLS,
        tool_choice="required", temperature=temperature, seed=3, max_tokens=150, stream=True))
    calls = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finish == ["tool_calls"], chunks[-3:]
    assert len(calls) == 1 and calls[0].index == 0 and calls[0].id.startswith("call_")
    jsonschema.validate(json.loads(calls[0].function.arguments), schema_of(calls[0].function.name))


def test_none_and_auto_answer_in_text(client):
    for choice in ("none", "auto"):
        r = client.chat.completions.create(model=client.model_id, messages=[{"role": "user", "content": "Say hi."}],
                                           tools=TOOLS, tool_choice=choice, temperature=0, max_tokens=20)
        assert r.choices[0].finish_reason in ("stop", "length")
        assert r.choices[0].message.tool_calls is None


def test_bad_tool_choices_are_refused(client):
    msgs = [{"role": "user", "content": "hi"}]
    for kwargs, needle in [({"tool_choice": "required"}, "no 'tools'"),
                           ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}},
                            "no tool named 'nope'"),
                           ({"tools": TOOLS, "tool_choice": "sometimes"}, "'tool_choice' must be"),
                           ({"tools": TOOLS, "tool_choice": "required", "response_format": {"type": "json_object"}},
                            "exclude each other")]:
        with pytest.raises(openai.BadRequestError) as e:
            client.chat.completions.create(model=client.model_id, messages=msgs, max_tokens=4, **kwargs)
        assert needle in str(e.value), e.value


def test_template_without_tool_calls_refuses_forcing():
    s = Server("--parallel", 1, "--ctx", 512, "-t", 1)  # SmolLM2's own template knows no tools
    try:
        c = s.client()
        with pytest.raises(openai.BadRequestError) as e:
            c.chat.completions.create(model=c.models.list().data[0].id, messages=[{"role": "user", "content": "hi"}],
                                      tools=TOOLS, tool_choice="required", max_tokens=4)
        assert "does not write <tool_call> blocks" in str(e.value)
    finally:
        s.stop()
