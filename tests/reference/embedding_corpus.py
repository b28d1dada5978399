"""Deterministic texts for the embedding parity test and benchmark (no dependencies).

corpus(n) gives n texts: about half from the tokenizer corpus (14 scripts and kinds of
text, edge cases included), the rest sentences made from templates: questions, statements,
code, numbers, accented and mixed-case text, and long documents past the model's 256
tokens (truncation). sentences(n) gives only the natural sentences (the speed benchmark).
"""
import pathlib
import random
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from tokenizer_corpus import corpus as tokenizer_corpus  # noqa: E402

SUBJECTS = ["The cat", "A young engineer", "My grandmother", "The new phone", "This library", "Our team",
            "The city council", "A small robot", "The river", "Every student", "The CPU", "Maria", "The model",
            "Der Hund", "La voiture", "El tren", "O café"]
VERBS = ["runs", "explains", "repairs", "measures", "describes", "forgets", "builds", "compresses", "loads",
         "translates", "visits", "sells", "predicts", "ignores", "paints"]
OBJECTS = ["the old bridge", "a quantized model", "three red apples", "the weather in Zürich", "its own memory",
           "a long report about climate change", "the museum on Sunday", "every token", "an empty file",
           "the 2.5 GHz processor", "résumés and CVs", "the naïve approach", "a cup of green tea", "JSON over HTTP"]
ENDINGS = [".", "!", "?", " quickly.", " before lunch.", " on an Android phone.", " without any help.",
           ", but nobody noticed.", " in 2026.", " (again)."]
QUESTIONS = ["How do I {}?", "What is the best way to {}?", "Why does nobody {}?", "Can you {} in Python?",
             "Is it safe to {} at night?", "Where can I {} near Berlin?"]
ACTIONS = ["sort a list of numbers", "cook rice without a rice cooker", "reset my password", "learn Japanese",
           "embed a language model in an app", "fix a flat tire", "measure memory bandwidth", "write a haiku",
           "convert Celsius to Fahrenheit", "compare two sentences"]
CODE = ["def add(a, b):\n    return a + b", "for (int i = 0; i < n; ++i) sum += x[i];", "SELECT name FROM users WHERE id = 42;",
        "git commit -m 'fix tokenizer'", "const x = await fetch(url).then(r => r.json());", "#include <vector>"]


def natural(r):
    kind = r.randrange(5)
    if kind == 0:
        return r.choice(QUESTIONS).format(r.choice(ACTIONS))
    if kind == 1:
        return r.choice(CODE)
    s = f"{r.choice(SUBJECTS)} {r.choice(VERBS)} {r.choice(OBJECTS)}{r.choice(ENDINGS)}"
    if kind == 3:
        s = s.upper() if r.random() < 0.3 else s + f" It cost {r.randint(1, 9999)}.{r.randint(0, 99):02d} EUR."
    if kind == 4:
        s += " " + f"{r.choice(SUBJECTS)} {r.choice(VERBS)} {r.choice(OBJECTS)}{r.choice(ENDINGS)}"
    return s


def document(r, n_sentences):
    return " ".join(natural(r) for _ in range(n_sentences))


def sentences(n, seed=11):
    r = random.Random(seed)
    return [natural(r) for _ in range(n)]


def corpus(n=1000, seed=5):
    r = random.Random(seed)
    from_tokenizer = [t for _, t in tokenizer_corpus(36)]  # 523 texts
    out = from_tokenizer[: n // 2]
    longs = [document(r, r.randint(25, 60)) for _ in range(max(1, n // 50))]  # well past 256 tokens
    out += longs
    while len(out) < n:
        out.append(natural(r))
    return out[:n]
