"""minnow: on-device LLM inference on the CPU (GGUF files and Hugging Face checkpoints).

    import minnow

    with minnow.Model("models/SmolLM2-135M-Instruct.Q4_1.gguf") as llm:
        print(llm.generate("The capital of France is", max_tokens=16, temperature=0))
        for piece in llm.chat([{"role": "user", "content": "Hi!"}], stream=True):
            print(piece, end="", flush=True)

Failures raise MinnowError (a RuntimeError) with the engine's one-line message; bad
arguments raise InvalidArgumentError, which is also a ValueError.
"""
from __future__ import annotations

import dataclasses
import json
import operator
import os
import queue
import random
import threading
import time
import uuid
from typing import Any, Callable, Dict, Generator, Iterator, List, Optional, Sequence, Union

from . import _minnow
from ._minnow import InvalidArgumentError, MinnowError

__version__ = "0.1.0"
__all__ = ["Model", "Session", "Embedder", "OnnxModel", "OnnxSession", "ModelInfo", "GenerateResult", "MinnowError", "InvalidArgumentError",
           "library_version", "json_schema_to_grammar"]

Prompt = Union[str, bytes, Sequence[int]]
Message = Dict[str, Any]

_KV_TYPES = {"f16": 0, "f32": 1, "q8_0": 2}
_BACKENDS = {"cpu": 0, "vulkan": 1}
# OpenAI's finish_reason for each of the engine's stop reasons.
_FINISH_REASON = {
    "end_of_generation": "stop",
    "stop_string": "stop",
    "cancelled": "stop",
    "max_tokens": "length",
    "context_full": "length",
}


def library_version() -> str:
    """The version of the engine linked into this package."""
    return _minnow.version()


def json_schema_to_grammar(schema: Union[str, Dict[str, Any]]) -> str:
    """The GBNF grammar of the JSON texts a JSON Schema accepts (docs/structured-output.md)."""
    return _minnow.json_schema_to_grammar(schema if isinstance(schema, str) else json.dumps(schema))


@dataclasses.dataclass(frozen=True)
class ModelInfo:
    """A model's hyper-parameters (Model.info)."""

    architecture: str  # "llama", "qwen2", "qwen3", "gemma3"
    name: str  # general.name, may be ""
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    vocab_size: int
    context_length: int  # trained context
    n_params: int
    weight_bytes: int
    bos_id: int  # -1 when the model has none
    eos_id: int
    has_chat_template: bool


@dataclasses.dataclass(frozen=True)
class GenerateResult:
    """What a generation did (Session.last_result)."""

    n_prompt: int  # prompt tokens evaluated
    n_reused: int  # prompt tokens whose KV cache was reused from the previous call
    n_generated: int
    stop_reason: str  # "end_of_generation", "max_tokens", "stop_string", "cancelled", "context_full"
    prompt_seconds: float
    generate_seconds: float

    @property
    def finish_reason(self) -> str:
        """OpenAI's name: "stop" or "length"."""
        return _FINISH_REASON[self.stop_reason]


def _token_ids(tokens: Sequence[int]) -> List[int]:
    return [operator.index(t) for t in tokens]  # numpy ints pass, floats do not


def _prompt(prompt: Prompt) -> Union[str, List[int]]:
    if isinstance(prompt, bytes):
        return prompt.decode("utf-8")
    return prompt if isinstance(prompt, str) else _token_ids(prompt)


def _stops(stop: Union[None, str, Sequence[str]]) -> List[str]:
    if stop is None:
        return []
    return [stop] if isinstance(stop, str) else list(stop)


def _params(max_tokens: int, temperature: float, top_k: int, top_p: float, min_p: float, repeat_penalty: float,
            repeat_last_n: int, presence_penalty: float, frequency_penalty: float, seed: Optional[int],
            stop_at_end_of_generation: bool, parse_special: bool, grammar: Optional[str] = None,
            json_schema: Union[None, str, Dict[str, Any]] = None, lookup_draft: int = 0) -> _minnow.GenerateParams:
    p = _minnow.GenerateParams()
    if grammar is not None and json_schema is not None:
        raise InvalidArgumentError("give grammar or json_schema, not both")
    p.grammar = json_schema_to_grammar(json_schema) if json_schema is not None else grammar
    if lookup_draft < 0:
        raise InvalidArgumentError(f"lookup_draft must be >= 0, not {lookup_draft}")
    p.lookup_draft = lookup_draft
    p.max_tokens = max_tokens
    p.temperature = temperature
    p.top_k = top_k
    p.top_p = top_p
    p.min_p = min_p
    p.repeat_penalty = repeat_penalty
    p.repeat_last_n = repeat_last_n
    p.presence_penalty = presence_penalty
    p.frequency_penalty = frequency_penalty
    if seed is None or seed == -1:  # llama-cpp-python's "random seed"
        seed = random.getrandbits(64)
    if not 0 <= seed < 2**64:
        raise InvalidArgumentError(f"seed must be in [0, 2**64) or -1/None for a random one, not {seed}")
    p.seed = seed
    p.stop_at_end_of_generation = stop_at_end_of_generation
    p.parse_special = parse_special
    return p


def _require_numpy() -> None:
    try:
        import numpy  # noqa: F401  (the extension returns numpy arrays)
    except ImportError as e:
        raise ImportError("logits need numpy: pip install numpy (or minnow[numpy])") from e


class Session:
    """One conversation's KV cache. Each generation reuses the longest prefix of its prompt
    that the cache already holds, so a chat that re-sends its history only evaluates the
    new turn. One generation at a time per session; use several sessions for several
    conversations at once (they share the model's weights)."""

    def __init__(self, model: "Model", n_ctx: int = 0, n_threads: int = 0, n_batch: int = 0):
        self.model = model
        self._s = _minnow.Session(model._m, n_threads, n_ctx, n_batch)
        self.last_result: Optional[GenerateResult] = None

    def set_draft(self, draft: Optional["Model"], draft_max: int = 8, draft_p_min: float = 0.5) -> None:
        """Speculative decoding with a draft model: draft, a smaller model with the same
        vocabulary (Qwen2.5-Coder-0.5B for -1.5B), proposes up to draft_max (1..16) tokens per
        step, stopping at one it gives less than draft_p_min, and this session's model checks
        them in one pass: the same output, sooner where the draft guesses well. The draft gets
        a KV cache of its own. With generate's lookup_draft too, prompt lookup proposes first.
        None turns it off."""
        self._s.set_draft(None if draft is None else draft._m, draft_max, draft_p_min)

    @property
    def n_past(self) -> int:
        """Tokens in the cache."""
        return self._s.n_past

    @property
    def n_ctx(self) -> int:
        """The context size in tokens."""
        return self._s.n_ctx

    def reset(self) -> None:
        """Forget the conversation."""
        self._s.reset()

    def cancel(self) -> None:
        """Stop a running generation after its current token (from any thread)."""
        self._s.cancel()

    def eval(self, tokens: Sequence[int]):
        """Make the cache hold exactly tokens; the logits after the last one, a float32 numpy
        array of shape (vocab_size,)."""
        _require_numpy()
        return self._s.eval(_token_ids(tokens))

    def eval_all(self, tokens: Sequence[int]):
        """Evaluate tokens from position 0; float32 logits of shape (len(tokens), vocab_size)."""
        _require_numpy()
        ids = _token_ids(tokens)
        if not ids:
            raise InvalidArgumentError("no tokens to evaluate")
        return self._s.eval_all(ids)

    def generate(self, prompt: Prompt, max_tokens: int = 256, temperature: float = 0.8, top_k: int = 40,
                 top_p: float = 0.95, min_p: float = 0.05, repeat_penalty: float = 1.0, repeat_last_n: int = 64,
                 presence_penalty: float = 0.0, frequency_penalty: float = 0.0, seed: Optional[int] = 0,
                 stop: Union[None, str, Sequence[str]] = None, stream: bool = False,
                 stop_at_end_of_generation: bool = True, parse_special: bool = True, grammar: Optional[str] = None,
                 json_schema: Union[None, str, Dict[str, Any]] = None,
                 lookup_draft: int = 0) -> Union[str, Iterator[str]]:
        """Continue prompt (text or token ids) and return the generated text, or with
        stream=True an iterator of its pieces as they come.

        temperature <= 0 is greedy; top_k <= 0, top_p >= 1, min_p <= 0 and repeat_penalty 1
        turn those off; seed -1 or None picks a random seed. Generation stops at max_tokens,
        at the end of the model's turn, or before the first of the stop strings (which is
        not returned). Breaking out of a stream stops the generation. grammar (GBNF) or
        json_schema (a dict or its JSON text) constrain the output to what they accept;
        lookup_draft N > 0 speculates up to N tokens copied from the context per step (same
        output, faster on text that repeats its prompt)."""
        params = _params(max_tokens, temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n,
                         presence_penalty, frequency_penalty, seed, stop_at_end_of_generation, parse_special,
                         grammar, json_schema, lookup_draft)
        if stream:
            return self._stream(_prompt(prompt), params, _stops(stop))
        return self._generate(_prompt(prompt), params, _stops(stop))[0]

    def _generate(self, prompt, params, stop, callback: Optional[Callable[[str, int], bool]] = None):
        text, result = self._s.generate(prompt, params, stop, callback)
        self.last_result = GenerateResult(**result)
        return text, self.last_result

    def _stream(self, prompt, params, stop) -> Generator[str, None, GenerateResult]:
        # The C API has no step-by-step generation, so a worker thread runs it and hands
        # the pieces over through a queue; the generator's return value is the result.
        pieces: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        abandoned = threading.Event()
        done = object()

        def on_piece(piece: str, token: int) -> bool:
            if abandoned.is_set():
                return False
            if piece:  # empty while text is held back (a partial character, a possible stop)
                pieces.put(piece)
            return True

        def work():
            try:
                pieces.put((done, self._generate(prompt, params, stop, on_piece)[1]))
            except BaseException as e:  # handed to the consumer
                pieces.put((done, e))

        worker = threading.Thread(target=work, name="minnow-generate")
        worker.start()
        try:
            while True:
                item = pieces.get()
                if isinstance(item, tuple) and item[0] is done:
                    if isinstance(item[1], BaseException):
                        raise item[1]
                    return item[1]
                yield item
        finally:
            # Reached by break, close(), garbage collection or an exception (Ctrl-C).
            if worker.is_alive():
                abandoned.set()
                self._s.cancel()
                worker.join()

    def close(self) -> None:
        """Free the KV cache now (a running generation is cancelled first)."""
        self._s.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Model:
    """A loaded model: a GGUF file or a Hugging Face checkpoint directory.

    n_threads 0 uses one thread per (big) core; n_ctx 0 is 4096 tokens capped by the
    model's trained context; kv_type is the KV cache's storage ("f16", "f32" exact, or
    "q8_0" about a quarter of f32); int8_activations makes quantized matmuls faster at the
    cost of logits moving by ~0.05; backend "vulkan" runs sessions on GPU `device` (the
    index `minnow devices` prints) with the whole model and an f16 KV cache in its memory,
    or only its last `gpu_layers` layers (and the output head), the rest on the CPU.
    Generation on the model itself uses one Session it keeps, so successive calls reuse the
    cached prefix of their prompts."""

    def __init__(self, path: Union[str, "os.PathLike[str]"], n_threads: int = 0, n_ctx: int = 0,
                 kv_type: str = "f16", int8_activations: bool = False, backend: str = "cpu", device: int = 0,
                 gpu_layers: int = -1):
        if kv_type not in _KV_TYPES:
            raise InvalidArgumentError(f"kv_type must be one of {', '.join(_KV_TYPES)}, not {kv_type!r}")
        if backend not in _BACKENDS:
            raise InvalidArgumentError(f"backend must be one of {', '.join(_BACKENDS)}, not {backend!r}")
        self.path = os.fsdecode(path)
        self._m = _minnow.Model(self.path, n_threads, n_ctx, _KV_TYPES[kv_type], bool(int8_activations),
                                _BACKENDS[backend], device, gpu_layers)
        self.info = ModelInfo(**self._m.info())
        self._session: Optional[Session] = None
        self._session_lock = threading.Lock()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.info.architecture}, {self.info.n_params / 1e6:.0f}M parameters"
        return f"<minnow.Model {self.path!r} ({state})>"

    @property
    def session(self) -> Session:
        """The session that generate, chat and logits use (created on first use)."""
        with self._session_lock:
            if self._session is None:
                self._session = Session(self)
            return self._session

    @property
    def closed(self) -> bool:
        return self._m.closed

    def tokenize(self, text: Union[str, bytes], parse_special: bool = True) -> List[int]:
        """Text -> token ids (with BOS when the model wants one). parse_special: control-token
        text such as "<|im_start|>" becomes that token."""
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return self._m.tokenize(text, parse_special)

    def detokenize(self, ids: Sequence[int], render_special: bool = False) -> str:
        """Token ids -> text (render_special: control tokens appear as their text)."""
        return self._m.detokenize(_token_ids(ids), render_special)

    def is_end_of_generation(self, token: int) -> bool:
        """True for EOS and end-of-turn tokens."""
        return self._m.is_end_of_generation(token)

    def apply_chat_template(self, messages: Sequence[Message], add_generation_prompt: bool = True,
                            tools: Optional[Sequence[Dict[str, Any]]] = None, **variables: Any) -> str:
        """Render the model's own chat template over OpenAI-style messages ({"role": ...,
        "content": ...}, tool calls included). Extra keyword arguments become template
        variables (e.g. enable_thinking=False)."""
        v: Dict[str, Any] = dict(variables, messages=list(messages), add_generation_prompt=add_generation_prompt)
        if tools is not None:
            v["tools"] = list(tools)
        return self._m.chat_apply_json(json.dumps(v, ensure_ascii=False, allow_nan=False))

    def generate(self, prompt: Prompt, max_tokens: int = 256, temperature: float = 0.8, top_k: int = 40,
                 top_p: float = 0.95, min_p: float = 0.05, repeat_penalty: float = 1.0, repeat_last_n: int = 64,
                 presence_penalty: float = 0.0, frequency_penalty: float = 0.0, seed: Optional[int] = 0,
                 stop: Union[None, str, Sequence[str]] = None, stream: bool = False,
                 stop_at_end_of_generation: bool = True, parse_special: bool = True, grammar: Optional[str] = None,
                 json_schema: Union[None, str, Dict[str, Any]] = None,
                 lookup_draft: int = 0) -> Union[str, Iterator[str]]:
        """Continue prompt; see Session.generate."""
        return self.session.generate(prompt, max_tokens=max_tokens, temperature=temperature, top_k=top_k,
                                     top_p=top_p, min_p=min_p, repeat_penalty=repeat_penalty,
                                     repeat_last_n=repeat_last_n, presence_penalty=presence_penalty,
                                     frequency_penalty=frequency_penalty, seed=seed, stop=stop, stream=stream,
                                     stop_at_end_of_generation=stop_at_end_of_generation,
                                     parse_special=parse_special, grammar=grammar, json_schema=json_schema,
                                     lookup_draft=lookup_draft)

    def chat(self, messages: Sequence[Message], tools: Optional[Sequence[Dict[str, Any]]] = None,
             **kwargs: Any) -> Union[str, Iterator[str]]:
        """The assistant's reply to messages: apply_chat_template, then generate (which
        takes the same keyword arguments, stream=True included)."""
        return self.generate(self.apply_chat_template(messages, True, tools), **kwargs)

    def logits(self, tokens: Sequence[int]):
        """The logits at every position of tokens: float32 numpy array (len(tokens), vocab_size)."""
        return self.session.eval_all(tokens)

    def create_chat_completion(self, messages: Sequence[Message], max_tokens: Optional[int] = None,
                               temperature: float = 0.2, top_p: float = 0.95, top_k: int = 40, min_p: float = 0.05,
                               repeat_penalty: float = 1.0, presence_penalty: float = 0.0,
                               frequency_penalty: float = 0.0, seed: Optional[int] = 0,
                               stop: Union[None, str, Sequence[str]] = None, stream: bool = False,
                               tools: Optional[Sequence[Dict[str, Any]]] = None
                               ) -> Union[Dict[str, Any], Iterator[Dict[str, Any]]]:
        """An OpenAI-shaped chat completion ("chat.completion" dict), or with stream=True an
        iterator of "chat.completion.chunk" dicts. max_tokens None: until the context is full."""
        session = self.session
        prompt = self.apply_chat_template(messages, True, tools)
        if max_tokens is None or max_tokens <= 0:
            max_tokens = session.n_ctx
        params = _params(max_tokens, temperature, top_k, top_p, min_p, repeat_penalty, 64, presence_penalty,
                         frequency_penalty, seed, True, True)
        head = {"id": "chatcmpl-" + uuid.uuid4().hex, "created": int(time.time()), "model": self.path}
        if stream:
            return self._chunks(session._stream(prompt, params, _stops(stop)), head)
        text, result = session._generate(prompt, params, _stops(stop))
        return {
            "id": head["id"],
            "object": "chat.completion",
            "created": head["created"],
            "model": head["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": None,
                         "finish_reason": result.finish_reason}],
            "usage": {"prompt_tokens": result.n_prompt + result.n_reused, "completion_tokens": result.n_generated,
                      "total_tokens": result.n_prompt + result.n_reused + result.n_generated},
        }

    @staticmethod
    def _chunks(pieces: Generator[str, None, GenerateResult], head: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
        def chunk(delta: Dict[str, str], finish_reason: Optional[str] = None) -> Dict[str, Any]:
            return dict(head, object="chat.completion.chunk",
                        choices=[{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}])

        yield chunk({"role": "assistant"})
        try:
            while True:
                try:
                    piece = next(pieces)
                except StopIteration as end:  # carries the GenerateResult
                    result = end.value
                    break
                yield chunk({"content": piece})
        finally:
            pieces.close()  # a consumer that stops early cancels the generation
        yield chunk({}, result.finish_reason)

    def close(self) -> None:
        """Free the model now (sessions still open keep it alive until they close)."""
        if self._session is not None:
            self._session.close()
        self._m.close()

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_PRECISIONS = {"bf16": 0, "f32": 1, "q8_0": 2}


class Embedder:
    """A sentence-embedding model (a BERT-family sentence-transformers directory such as
    all-MiniLM-L6-v2): texts -> fixed-size vectors, unit length when the model normalizes.

        with minnow.Embedder("models/all-MiniLM-L6-v2") as e:
            a, b = e.embed(["A cat sits on the mat.", "A kitten is on a rug."])
            similarity = sum(x * y for x, y in zip(a, b))

    precision "bf16" (default: fast, cosine ~0.99999 to f32), "f32" (exact) or "q8_0"
    (coarser). One embed call runs at a time per Embedder (docs/embeddings.md)."""

    def __init__(self, path: Union[str, "os.PathLike[str]"], n_threads: int = 0, precision: str = "bf16"):
        if precision not in _PRECISIONS:
            raise InvalidArgumentError(f"precision must be one of {', '.join(_PRECISIONS)}, not {precision!r}")
        self.path = os.fsdecode(path)
        self._e = _minnow.Embedder(self.path, n_threads, _PRECISIONS[precision])

    @property
    def dim(self) -> int:
        """Floats per embedding."""
        return self._e.dim

    @property
    def closed(self) -> bool:
        return self._e.closed

    def embed(self, texts: Union[str, Sequence[str]]) -> Union[List[float], List[List[float]]]:
        """One embedding (a list of dim floats) per text; a single string gives one list."""
        if isinstance(texts, str):
            return self._e.embed([texts])[0]
        return self._e.embed(list(texts))

    def close(self) -> None:
        """Free the model now."""
        self._e.close()

    def __enter__(self) -> "Embedder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class OnnxSession:
    """One set of tensors and threads for an OnnxModel; run() as often as needed, with the
    same or other input shapes. One run at a time per session (docs/onnx.md)."""

    def __init__(self, model: "OnnxModel", n_threads: int = 0, optimize: bool = True):
        self.model = model
        self._s = _minnow.OnnxSession(model._m, n_threads, optimize)

    def run(self, inputs: Dict[str, Any]) -> Dict[str, Any]:
        """inputs: {name: numpy array} for every model input (float32 for most CNNs);
        returns {output name: numpy array}."""
        _require_numpy()
        import numpy as np
        return self._s.run([(name, np.ascontiguousarray(value)) for name, value in inputs.items()])

    @property
    def closed(self) -> bool:
        return self._s.closed

    def close(self) -> None:
        """Free the session's tensors now."""
        self._s.close()

    def __enter__(self) -> "OnnxSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class OnnxModel:
    """An ONNX model (a CNN for classification, detection, OCR...) on minnow's own runtime,
    shaped like MNN's: the model is loaded once, sessions hold tensors and threads.

        net = minnow.OnnxModel("mobilenet.onnx")
        with net.session(n_threads=2) as s:
            logits = s.run({"x": image})[net.outputs[0]]

    A model using an operator minnow lacks is refused at load (minnow.MinnowError naming the
    operator and the node)."""

    def __init__(self, path: Union[str, "os.PathLike[str]"]):
        self.path = os.fsdecode(path)
        self._m = _minnow.OnnxModel(self.path)

    @property
    def inputs(self) -> List[str]:
        return list(self._m.inputs)

    @property
    def outputs(self) -> List[str]:
        return list(self._m.outputs)

    def session(self, n_threads: int = 0, optimize: bool = True) -> OnnxSession:
        """A new session (n_threads 0: one per core; optimize: constant folding and Conv fusions)."""
        return OnnxSession(self, n_threads, optimize)
