#!/usr/bin/env python3
"""Writes tests/reference/golden/templates/cases.json: chat templates rendered by
jinja2 exactly as transformers' apply_chat_template renders them, for the C++
template engine to reproduce byte for byte.

Run with the project venv (jinja2 comes from requirements.txt):
    .venv/bin/python tests/reference/make_template_golden.py
"""
import json
import pathlib

import jinja2
import jinja2.ext
import jinja2.sandbox

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests/reference/golden/templates/cases.json"
TOKENIZERS = ROOT.parent / "shared/data/tokenizers"  # /work/shared next to the checkout
if not TOKENIZERS.is_dir():
    TOKENIZERS = pathlib.Path("/work/shared/data/tokenizers")


def make_env():
    # transformers (utils/chat_template_utils.py): sandboxed, trim_blocks and
    # lstrip_blocks, loop controls, its own tojson and a raise_exception global.
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


# Chat templates stored in the GGUF files scripts/fetch-models downloads, extracted once
# with the gguf package (see the file's "source"). Gemma 3 270M's GGUF has none.
GGUF_TEMPLATES = json.loads((ROOT / "tests/reference/templates/gguf_chat_templates.json").read_text())["files"]
SMOLLM2_GGUF = GGUF_TEMPLATES["SmolLM2-135M-Instruct.Q4_1.gguf"]
SMOLLM2 = SMOLLM2_GGUF["chat_template"]

CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# Synthetic templates, one per feature area.
WHITESPACE = """{# comments vanish, and so does their newline #}
{% for m in messages %}
    {% if m.role == 'system' %}
  [SYS] {{ m.content }}
    {% elif m.role == 'user' -%}
  [USER]   {{- m.content -}}   !
    {%+ else %}
  [BOT] {{ m.content }}
    {% endif %}
{% endfor %}
  {#- strip left #} | {#+ keep +#}
{%- if add_generation_prompt %}
  [BOT]{% endif %}
{% raw %}{{ not rendered }} {% endraw %}
tail
"""

LOOPS = """{% for m in messages %}{{ loop.index }}/{{ loop.length }} i0={{ loop.index0 }} first={{ loop.first }} last={{ loop.last }} rev={{ loop.revindex }}: {{ m.role }}
{% else %}(no messages)
{% endfor %}
{% for m in messages if m.role != 'system' %}{{ loop.index }}:{{ m.role }}{% if not loop.last %}, {% endif %}{% endfor %}

{% for i in range(5) %}{% if i == 1 %}{% continue %}{% endif %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}
{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}
{% for c in 'héllo' %}[{{ c }}]{% endfor %}
{% for m in messages %}{% for n in messages %}{{ loop.index }}{% endfor %}{{ loop.index }};{% endfor %}
"""

SETS = """{% set count = 0 %}{% set ns = namespace(users=0, last='') %}
{% for m in messages %}
{% set count = count + 1 %}
{% if m.role == 'user' %}{% set ns.users = ns.users + 1 %}{% set ns.last = m.content %}
{% elif m.role == 'assistant' %}{% set ns.last = 'A' %}
{% else %}{% set ns.last = 'S' %}
{% endif %}
{% endfor %}
count={{ count }} users={{ ns.users }} last={{ ns.last }}
{% set greeting %}Hello {{ messages|length }}{% endset %}{{ greeting }}
{% set a, b = 1, 2 %}{{ a + b }}
{% if messages|length > 3 %}many{% elif messages|length > 1 %}some{% elif messages %}one{% else %}none{% endif %}
"""

FILTERS = """{% for m in messages %}
{{ m.content|trim }}|{{ m.content|length }}|{{ m.content|upper }}|{{ m.content|lower }}|{{ m.content.strip() }}|{{ m.content.startswith('H') }}|{{ m.content.endswith('!') }}|{{ m.content.split() }}|{{ m.content.split(' ', 1) }}|{{ m.role|capitalize }}|{{ m.content|replace(' ', '_') }}
{% endfor %}
{{ missing|default('dflt') }}|{{ ''|default('empty', true) }}|[{{ missing }}]|{{ messages|map(attribute='role')|join(',') }}|{{ messages|selectattr('role', 'equalto', 'user')|list|length }}
{{ messages[0]|tojson if messages else '' }}
"""

EXPRESSIONS = """{{ messages[::-1]|map(attribute='role')|join(' ') }}
{% if messages %}{{ messages[-1].content[:5] }}|{{ messages[0]['content'][::-1] }}|{{ messages[1:]|length }}|{{ messages[0].nope }}|{{ messages[99] }}{% endif %}

{{ 7 // 2 }} {{ 7 % 3 }} {{ -7 // 2 }} {{ 7 / 2 }} {{ 2 ** 8 }} {{ 1.5 * 2 }} {{ 'ab' ~ 3 ~ none }} {{ 'x' * 3 }} {{ [1, 2] + [3] }}
{{ 1 < 2 <= 2 }} {{ 'user' in messages|map(attribute='role')|list }} {{ 'z' not in 'abc' }} {{ not true or false and true }}
{{ undefined_var is defined }} {{ messages is defined }} {{ none is none }} {{ 'x' is string }} {{ 3 is odd }} {{ messages is not string }}
{{ 'yes' if messages|length > 2 else 'no' }} {{ 'shown' if false }}. {{ {'k': [1, 'two', none, true, 1.0]} }} {{ (1, 'a') }}
"""

GUARD = """{% if messages and messages[0]['role'] == 'assistant' %}{{ raise_exception('Conversation must start with user or system') }}{% endif %}
{% for m in messages %}{{ m.role }}: {{ m.content }}
{% endfor %}"""

CONVERSATIONS = {
    "user_only": [{"role": "user", "content": "Hello!"}],
    "with_system": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi there"}],
    "multi_turn": [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "How are you?"},
        {"role": "assistant", "content": "Fine, thanks."},
        {"role": "user", "content": "Great!"},
    ],
    "empty_content": [{"role": "user", "content": ""}, {"role": "assistant", "content": ""}, {"role": "user", "content": " "}],
    "non_ascii": [
        {"role": "user", "content": "  Ça va ? 日本語 — 🙂\n"},
        {"role": "assistant", "content": "Très bien ✓ straße"},
    ],
    "thinking": [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "<think>\nadd them\n</think>\n\n4"},
        {"role": "user", "content": "3+3?"},
    ],
    "assistant_first": [{"role": "assistant", "content": "I start."}, {"role": "user", "content": "ok"}],
    "empty": [],
}

TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}

# A synthetic template in the style of tool-calling templates (Llama 3.1, Hermes,
# Mistral): tool schemas as indented JSON, tool calls from dicts or strings,
# reasoning_content, None content, and extra variables.
OPENAI_TOOLS = """{{ bos_token }}
{%- if tools is not none %}
[TOOLS {{ tools|length }}]
{%- for t in tools %}
{{ t|tojson(indent=2) }}
{{ t.function.name }}({{ t.function.parameters.properties|list|join(', ') }}) {{ t['function'].get('description', '-')|trim }}
{%- for name, prop in t.function.parameters.properties|items %}
  {{ name }}: {{ prop.type }}{{ ' required' if name in t.function.parameters.get('required', []) }}{{ ' default=' ~ prop.default if prop.default is defined }}
{%- endfor %}
{%- endfor %}
[/TOOLS]
{%- endif %}
{%- if enable_thinking is defined %}
thinking={{ enable_thinking }} {{ enable_thinking|tojson }}
{%- endif %}
{%- for m in messages %}
<{{ m.role }}{{ ' id=' ~ m.tool_call_id if m.tool_call_id is defined }}{{ ' name=' ~ m.name if m.name is defined }}>
{%- if m.reasoning_content is defined and m.reasoning_content %}(thought: {{ m.reasoning_content|trim }}){% endif %}
{%- if m.content is none %}(none){% elif m.content is string %}{{ m.content }}{% else %}
{%- for part in m.content %}[{{ part.type }}:{{ part.text }}]{% endfor %}
{%- endif %}
{%- if 'tool_calls' in m %}
{%- for call in m.tool_calls %}
 call#{{ loop.index }} {{ call.id|default('?') }} {{ call.function.name }}
{%- if call.function.arguments is mapping %} {{ call.function.arguments|tojson }} {{ call.function.arguments|tojson(sort_keys=true) }}
{%- for k, v in call.function.arguments.items() %} {{ k }}={{ v }}/{{ v|tojson }}{% endfor %}
{%- else %} str:{{ call.function.arguments }}{% endif %}
{%- endfor %}
{%- endif %}
{%- if m.get('weight') is not none %} weight={{ m.weight }}{% endif %}
</{{ m.role }}>
{%- endfor %}
{%- if add_generation_prompt %}
<assistant>{{ '<think>' if enable_thinking|default(true) else '' }}
{%- endif %}
"""

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city — in °C by default.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Zürich"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
            },
            "required": ["city"],
        },
    },
}
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "  Search the web.\n",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "max_results": {"type": "integer", "default": 5, "minimum": 1, "maximum": 1e16},
                "threshold": {"type": "number", "default": 0.5, "minimum": 1e-07, "maximum": 1.0},
                "safe": {"type": "boolean", "default": False},
                "tags": {"type": "array", "items": {"type": "string"}, "default": None},
            },
            "required": ["query", "max_results"],
        },
    },
}
TOOLS = {"weather": [WEATHER_TOOL], "weather_search": [WEATHER_TOOL, SEARCH_TOOL]}

def call(id_, name, arguments):
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}

# OpenAI-style conversations: tool calls, tool results, reasoning, None content.
TOOL_CONVERSATIONS = {
    "tool_call_dict": [
        {"role": "system", "content": "You can check the weather."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [call("call_1", "get_weather", {"city": "Paris", "unit": "celsius"})]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"temp\": 18.5, \"sky\": \"clear\"}"},
        {"role": "assistant", "content": "It is 18.5 °C and clear in Paris."},
    ],
    "tool_call_string": [
        {"role": "user", "content": "Weather in Zürich, in fahrenheit?"},
        {"role": "assistant", "content": None,
         "tool_calls": [call("call_a", "get_weather", "{\"city\": \"Zürich\", \"unit\": \"fahrenheit\"}")]},
        {"role": "tool", "tool_call_id": "call_a", "content": "64 F"},
    ],
    "parallel_tools": [
        {"role": "user", "content": "Compare Paris and Tokyo, then search for flights."},
        {"role": "assistant", "content": "Let me check both.", "tool_calls": [
            call("c1", "get_weather", {"city": "Paris"}),
            call("c2", "get_weather", {"city": "東京", "unit": "celsius"}),
            call("c3", "search", {"query": "flights CDG→HND", "max_results": 3, "threshold": 0.25, "safe": True, "tags": ["a", None]}),
        ]},
        {"role": "tool", "tool_call_id": "c1", "name": "get_weather", "content": "18"},
        {"role": "tool", "tool_call_id": "c2", "name": "get_weather", "content": "24"},
        {"role": "tool", "tool_call_id": "c3", "name": "search", "content": "[]"},
        {"role": "assistant", "content": "Tokyo is warmer; no flights found."},
        {"role": "user", "content": "Thanks!"},
    ],
    "reasoning": [
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4", "reasoning_content": "\nTwo plus two is four.\n"},
        {"role": "user", "content": "And 3+3?"},
        {"role": "assistant", "content": "6", "reasoning_content": "Three plus three."},
    ],
    "reasoning_then_user": [
        {"role": "system", "content": "Think first."},
        {"role": "user", "content": "Capital of Japan?"},
        {"role": "assistant", "content": "<think>\nIt is Tokyo.\n</think>\n\nTokyo.", "reasoning_content": None},
        {"role": "user", "content": "And of France?"},
        {"role": "assistant", "content": "\n\nParis.", "reasoning_content": ""},
        {"role": "user", "content": "Spell it."},
    ],
    "multi_step_tools": [
        {"role": "user", "content": "Plan my day in Oslo."},
        {"role": "assistant", "content": "<think>\nNeed weather.\n</think>\n\n", "tool_calls": [call("w", "get_weather", {"city": "Oslo"})]},
        {"role": "tool", "content": "-3"},
        {"role": "assistant", "content": "", "reasoning_content": "Cold; search indoor things.", "tool_calls": [call("s", "search", "{\"query\": \"museums Oslo\"}")]},
        {"role": "tool", "content": "Munch museum"},
    ],
    "tool_response_as_user": [
        {"role": "user", "content": "Start."},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "<tool_response>\nresult\n</tool_response>"},
    ],
    "content_none": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": None}],
    "content_parts": [
        {"role": "system", "content": [{"type": "text", "text": "Be brief. "}]},
        {"role": "user", "content": [{"type": "text", "text": " Describe "}, {"type": "image"}, {"type": "text", "text": "this."}]},
    ],
    "extra_fields": [
        {"role": "user", "content": "Ünïcödé ✓ 🙂 \u00a0 tab\tend", "weight": 0.1, "name": "alice"},
        {"role": "assistant", "content": "", "weight": 1e-05},
        {"role": "user", "content": "\n"},
    ],
}

# (conversation, tools, extra variables): what transformers' apply_chat_template
# would be called with (tools=..., and the rest as keyword arguments).
SCENARIOS = [(c, None, {}) for c in TOOL_CONVERSATIONS]
SCENARIOS += [(c, "weather_search", {}) for c in ("tool_call_dict", "tool_call_string", "parallel_tools", "multi_step_tools")]
SCENARIOS += [(c, "weather", {}) for c in ("user_only", "with_system", "tool_call_dict")]
SCENARIOS += [(c, t, {"enable_thinking": e}) for c, t in (("multi_turn", None), ("reasoning", None), ("thinking", None),
                                                         ("multi_step_tools", "weather_search")) for e in (True, False)]
SCENARIOS += [("reasoning_then_user", None, {"enable_thinking": False, "custom_var": {"k": [1, 2.5]}})]


def model_template(name):
    path = TOKENIZERS / name / "tokenizer_config.json"
    return json.loads(path.read_text())["chat_template"]


def main():
    templates = {
        "smollm2": (SMOLLM2, {"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}),
        "chatml": (CHATML, TOKENS),
        "whitespace": (WHITESPACE, TOKENS),
        "loops": (LOOPS, TOKENS),
        "sets": (SETS, TOKENS),
        "filters": (FILTERS, TOKENS),
        "expressions": (EXPRESSIONS, TOKENS),
        "guard": (GUARD, TOKENS),
        "openai_tools": (OPENAI_TOOLS, TOKENS),
        # Real model templates from shared/data/tokenizers.
        "gemma3": (model_template("gemma3"), {"bos_token": "<bos>", "eos_token": "<end_of_turn>"}),
        "llama3": (model_template("llama3"), {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"}),
        "qwen3": (model_template("qwen3"), {"bos_token": "", "eos_token": "<|im_end|>"}),
    }
    env = make_env()
    cases = []

    def add_case(compiled, case, messages, tools, extra):
        try:
            # The variables transformers passes: tools (None when absent), documents
            # (None), add_generation_prompt, the special tokens and any extra kwargs.
            case["expected"] = compiled.render(messages=messages, tools=tools, documents=None,
                                               add_generation_prompt=case["add_generation_prompt"],
                                               bos_token=case["bos_token"], eos_token=case["eos_token"], **extra)
        except Exception as e:  # TemplateError, or TypeError etc. from Python operators
            # raise_exception messages must surface; other errors only need to be errors.
            case["expected_error"] = str(e) if type(e) is jinja2.exceptions.TemplateError else ""
        cases.append(case)

    for tname, (text, tokens) in templates.items():
        compiled = env.from_string(text)
        # add_generation_prompt only matters to templates that read it.
        agps = (True, False) if "add_generation_prompt" in text else (True,)
        for cname, messages in CONVERSATIONS.items():
            for agp in agps:
                case = {"template": tname, "conversation": cname, "add_generation_prompt": agp, **tokens}
                add_case(compiled, case, messages, None, {})
    # OpenAI-style messages, tools and extra variables, on the templates that care.
    all_conversations = {**CONVERSATIONS, **TOOL_CONVERSATIONS}
    for tname in ("openai_tools", "qwen3", "llama3", "gemma3", "smollm2", "chatml"):
        text, tokens = templates[tname]
        compiled = env.from_string(text)
        for cname, tools, extra in SCENARIOS:
            for agp in (True, False):
                case = {"template": tname, "conversation": cname, "add_generation_prompt": agp, **tokens}
                if tools is not None:
                    case["tools"] = tools
                if extra:
                    case["vars"] = extra
                add_case(compiled, case, all_conversations[cname], TOOLS[tools] if tools else None, extra)
    doc = {
        "generator": f"tests/reference/make_template_golden.py (jinja2 {jinja2.__version__})",
        "templates": {name: text for name, (text, _) in templates.items()},
        "conversations": all_conversations,
        "tools": TOOLS,
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    errors = sum("expected_error" in c for c in cases)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(cases)} cases ({errors} expecting errors)")


if __name__ == "__main__":
    main()
