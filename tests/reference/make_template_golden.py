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


# SmolLM2's template, as stored in its GGUF tokenizer.chat_template.
SMOLLM2 = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

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
        # Real model templates from shared/data/tokenizers.
        "gemma3": (model_template("gemma3"), {"bos_token": "<bos>", "eos_token": "<end_of_turn>"}),
        "llama3": (model_template("llama3"), {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"}),
        "qwen3": (model_template("qwen3"), {"bos_token": "", "eos_token": "<|im_end|>"}),
    }
    env = make_env()
    cases = []
    for tname, (text, tokens) in templates.items():
        compiled = env.from_string(text)
        # add_generation_prompt only matters to templates that read it.
        agps = (True, False) if "add_generation_prompt" in text else (True,)
        for cname, messages in CONVERSATIONS.items():
            for agp in agps:
                case = {"template": tname, "conversation": cname, "add_generation_prompt": agp, **tokens}
                try:
                    # The variables transformers passes (tools/documents are None when absent).
                    case["expected"] = compiled.render(messages=messages, tools=None, documents=None,
                                                       add_generation_prompt=agp, **tokens)
                except jinja2.exceptions.TemplateError as e:
                    # raise_exception messages must surface; other errors only need to be errors.
                    case["expected_error"] = str(e) if type(e) is jinja2.exceptions.TemplateError else ""
                cases.append(case)
    doc = {
        "generator": f"tests/reference/make_template_golden.py (jinja2 {jinja2.__version__})",
        "templates": {name: text for name, (text, _) in templates.items()},
        "conversations": CONVERSATIONS,
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    errors = sum("expected_error" in c for c in cases)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(cases)} cases ({errors} expecting errors)")


if __name__ == "__main__":
    main()
