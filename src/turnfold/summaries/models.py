"""Fast models that write the labels (spec S-7): callables, OpenAI-compatible endpoints, Anthropic.

Everything that can label a batch is a :class:`FastModel`: an object with a ``name`` and
``complete(request, timeout=...) -> Completion``. :func:`resolve_model` makes one from what the
``fast_model`` setting (or an argument) holds:

* a **callable** ``fn(request) -> str`` (or a :class:`Completion`, or an awaitable of either):
  it receives the :class:`~turnfold.summaries.prompt.SummaryRequest` and runs on a worker thread;
* a **model name** (``"gpt-4o-mini"``, ``"qwen-turbo"``, ``"llama3.2:1b"``,
  ``"anthropic:claude-haiku-4-5"``) whose endpoint comes from the environment;
* a **mapping** of endpoint options: ``model`` (required), ``provider`` (``"openai"`` or
  ``"anthropic"``), ``base_url``, ``api_key_env`` (the name of the variable holding the key; better
  than ``api_key``, which a saved settings file would hold in clear), ``api_key``, ``max_tokens``,
  ``timeout`` (seconds) and, for OpenAI-compatible servers, ``extra_body`` (sent as is, for example
  ``{"enable_thinking": false}`` for Qwen3 on DashScope) and ``token_param`` (the name the output
  budget is sent under: ``max_tokens``, what every compatible server reads, or
  ``max_completion_tokens``, which OpenAI's reasoning models require).

Environment variables, read when the model is resolved:

=================================  ==============================================================
``TURNFOLD_FAST_MODEL``            the model name, when the setting holds none (settings layer)
``TURNFOLD_FAST_MODEL_PROVIDER``   ``openai`` (any OpenAI-compatible server) or ``anthropic``
``TURNFOLD_FAST_MODEL_BASE_URL``   the endpoint, e.g. ``http://localhost:11434/v1`` (Ollama),
                                   ``http://localhost:8000/v1`` (vLLM), ``http://localhost:8080/v1``
                                   (llama.cpp server), ``https://dashscope.aliyuncs.com/compatible-mode/v1``
``TURNFOLD_FAST_MODEL_API_KEY``    the key for that endpoint
``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``, ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``
                                   the providers' own variables, used when the ones above are unset
=================================  ==============================================================

The provider is the mapping's ``provider``, else ``TURNFOLD_FAST_MODEL_PROVIDER``, else an
``openai:`` / ``anthropic:`` prefix of the name, else Anthropic for a name starting with
``claude`` and OpenAI-compatible for anything else. A local server needs no key: when a base URL
is set and no key is found, a placeholder is sent.

The SDKs are optional extras (``pip install 'turnfold[openai]'`` / ``'turnfold[anthropic]'``),
imported only when such a model is made; a missing one raises :class:`MissingExtraError` saying
what to install. Every request is one attempt (the SDKs' retries are off) with a timeout.
"""

from __future__ import annotations

import importlib
import inspect
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from turnfold.summaries.prompt import SummaryRequest

__all__ = [
    "AnthropicModel",
    "CallableModel",
    "Completion",
    "FastModel",
    "MissingExtraError",
    "OpenAIModel",
    "resolve_model",
]

ENV_MODEL = "TURNFOLD_FAST_MODEL"
ENV_PROVIDER = "TURNFOLD_FAST_MODEL_PROVIDER"
ENV_BASE_URL = "TURNFOLD_FAST_MODEL_BASE_URL"
ENV_API_KEY = "TURNFOLD_FAST_MODEL_API_KEY"
PROVIDERS = ("openai", "anthropic")
#: Sent as the key to a server that needs none (Ollama, vLLM, llama.cpp): the SDK insists on one.
NO_KEY = "not-needed"
_MAPPING_KEYS = frozenset(
    {"model", "provider", "base_url", "api_key", "api_key_env", "max_tokens", "timeout",
     "extra_body", "token_param"}
)  # fmt: skip


@dataclass(frozen=True)
class Completion:
    """A fast model's reply: its text and, when the provider reported them, the tokens it cost."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None


@runtime_checkable
class FastModel(Protocol):
    """What writes labels: ``complete`` sends one request (one attempt) and returns the reply,
    or raises; it must give up after ``timeout`` seconds."""

    name: str

    def complete(self, request: SummaryRequest, *, timeout: float) -> Completion: ...


class MissingExtraError(ImportError):
    """An optional SDK a fast model needs is not installed."""


def _import_sdk(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"this fast model needs the {module!r} package, an optional extra of turnfold: "
            f"pip install 'turnfold[{module}]'"
        ) from exc


# --- a Python callable ---------------------------------------------------------------------------


def _as_completion(value: Any) -> Completion:
    if isinstance(value, Completion):
        return value
    if value is None:
        return Completion("")
    if isinstance(value, str):
        return Completion(value)
    if isinstance(value, Mapping):
        return Completion(
            str(value.get("text") or ""),
            _int_or_none(value.get("input_tokens")),
            _int_or_none(value.get("output_tokens")),
        )
    raise TypeError(f"a fast model must return a str or a Completion, not {type(value).__name__}")


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


class CallableModel:
    """A Python callable as a fast model: ``fn(request)`` returns the label text.

    It may return a :class:`Completion` (to report tokens), a ``{"text", "input_tokens",
    "output_tokens"}`` mapping, or an awaitable of any of these (run on its own event loop in the
    worker thread, so a notebook's running loop is never touched). It runs on a helper thread so
    the timeout holds even if it never returns; such a call is abandoned, not interrupted.
    """

    def __init__(self, fn: Callable[[SummaryRequest], Any], *, name: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"a callable fast model must be callable, got {fn!r}")
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", None) or type(fn).__name__
        self.timeout: float | None = None

    def complete(self, request: SummaryRequest, *, timeout: float) -> Completion:
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                value = self.fn(request)
                if inspect.isawaitable(value):
                    import asyncio  # only for a coroutine model (asyncio imports ssl: issue 19)

                    value = asyncio.run(_awaited(value))
                box["value"] = _as_completion(value)
            except BaseException as exc:  # handed to the caller's thread, which decides
                box["error"] = exc

        helper = threading.Thread(target=call, name="turnfold-fast-model-call", daemon=True)
        helper.start()
        helper.join(timeout)
        if helper.is_alive():
            raise TimeoutError(f"fast model {self.name} did not answer within {timeout:g}s")
        if "error" in box:
            raise box["error"]
        completion: Completion = box["value"]
        return completion

    def __repr__(self) -> str:
        return f"CallableModel({self.name})"


# --- OpenAI-compatible endpoints -----------------------------------------------------------------


class OpenAIModel:
    """An OpenAI-compatible Chat Completions endpoint through the official ``openai`` SDK.

    Works with OpenAI, Qwen on DashScope's compatible mode, Ollama, vLLM, llama.cpp's server and
    anything else speaking ``POST {base_url}/chat/completions``. ``client`` may be an
    ``openai.OpenAI`` made elsewhere (retries should be off: labels are one attempt).
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int | None = None,
        extra_body: Mapping[str, Any] | None = None,
        token_param: str = "max_tokens",
        timeout: float | None = None,
        client: Any = None,
    ) -> None:
        if token_param not in ("max_tokens", "max_completion_tokens"):
            raise ValueError(
                f"token_param is max_tokens or max_completion_tokens, not {token_param!r}"
            )
        self.model = model
        self.base_url = base_url
        self.max_tokens = max_tokens
        self.token_param = token_param
        self.extra_body = dict(extra_body) if extra_body else None
        self.timeout = timeout
        self.name = f"openai:{model}" + (f" at {base_url}" if base_url else "")
        if client is None:
            openai = _import_sdk("openai")
            client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0)
        self.client = client

    def complete(self, request: SummaryRequest, *, timeout: float) -> Completion:
        options: dict[str, Any] = {self.token_param: self.max_tokens or request.max_tokens}
        if self.extra_body:
            options["extra_body"] = self.extra_body
        response = self.client.chat.completions.create(
            model=self.model, messages=request.messages, timeout=timeout, **options
        )
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        # A refusal (message.refusal) or a reasoning-only reply has no content: no label.
        text = getattr(message, "content", None) or ""
        usage = getattr(response, "usage", None)
        return Completion(
            str(text),
            _int_or_none(getattr(usage, "prompt_tokens", None)),
            _int_or_none(getattr(usage, "completion_tokens", None)),
        )

    def __repr__(self) -> str:
        return f"OpenAIModel({self.name})"


# --- Anthropic -----------------------------------------------------------------------------------


class AnthropicModel:
    """Anthropic's Messages API through the official ``anthropic`` SDK."""

    provider = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int | None = None,
        timeout: float | None = None,
        client: Any = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.name = f"anthropic:{model}" + (f" at {base_url}" if base_url else "")
        if client is None:
            anthropic = _import_sdk("anthropic")
            client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0)
        self.client = client

    def complete(self, request: SummaryRequest, *, timeout: float) -> Completion:
        response = self.client.messages.create(
            model=self.model,
            max_tokens=self.max_tokens or request.max_tokens,
            system=request.system,
            messages=[{"role": "user", "content": request.prompt}],
            timeout=timeout,
        )
        blocks = getattr(response, "content", None) or []
        text = "".join(
            str(getattr(block, "text", "") or "")
            for block in blocks
            if getattr(block, "type", None) == "text"
        )
        usage = getattr(response, "usage", None)
        return Completion(
            text,
            _int_or_none(getattr(usage, "input_tokens", None)),
            _int_or_none(getattr(usage, "output_tokens", None)),
        )

    def __repr__(self) -> str:
        return f"AnthropicModel({self.name})"


# --- from a setting ------------------------------------------------------------------------------


def _provider_and_name(name: str, explicit: Any, env: Mapping[str, str]) -> tuple[str, str]:
    prefix, sep, rest = name.partition(":")
    if sep and prefix.lower() in PROVIDERS and rest:
        name, prefixed = rest, prefix.lower()
    else:
        prefixed = None
    chosen = explicit or env.get(ENV_PROVIDER, "").strip() or prefixed
    if chosen:
        provider = str(chosen).strip().lower()
        if provider not in PROVIDERS:
            raise ValueError(f"unknown fast model provider {chosen!r}; use 'openai' or 'anthropic'")
        return provider, name
    return ("anthropic" if name.lower().startswith("claude") else "openai"), name


def _endpoint_model(options: Mapping[str, Any], env: Mapping[str, str]) -> FastModel:
    unknown = sorted(str(key) for key in options if key not in _MAPPING_KEYS)
    if unknown:
        raise ValueError(
            f"unknown fast_model options {', '.join(unknown)}; "
            f"known: {', '.join(sorted(_MAPPING_KEYS))}"
        )
    raw_name = options.get("model")
    if not isinstance(raw_name, str) or not raw_name.strip():
        raise ValueError("a fast_model mapping needs a 'model' name")
    provider, name = _provider_and_name(raw_name.strip(), options.get("provider"), env)
    base_url = options.get("base_url") or env.get(ENV_BASE_URL, "").strip() or None
    key_env = options.get("api_key_env")
    provider_key = "OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"
    api_key = (
        options.get("api_key")
        or (env.get(str(key_env), "").strip() if key_env else "")
        or env.get(ENV_API_KEY, "").strip()
        or env.get(provider_key, "").strip()
        or None
    )
    if api_key is None and base_url:
        api_key = NO_KEY  # a local server: the SDK insists on a key, the server ignores it
    if api_key is None:
        raise ValueError(
            f"no API key for the fast model {raw_name!r}: set {ENV_API_KEY} or {provider_key}, "
            "or name the variable holding it with 'api_key_env' in the fast_model setting"
        )
    max_tokens = _int_or_none(options.get("max_tokens"))
    timeout = options.get("timeout")
    timeout = float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None
    if provider == "anthropic":
        return AnthropicModel(
            name, base_url=base_url, api_key=api_key, max_tokens=max_tokens, timeout=timeout
        )
    extra = options.get("extra_body")
    return OpenAIModel(
        name,
        base_url=base_url,
        api_key=api_key,
        max_tokens=max_tokens,
        timeout=timeout,
        extra_body=extra if isinstance(extra, Mapping) else None,
        token_param=str(options.get("token_param") or "max_tokens"),
    )


def resolve_model(spec: Any, *, environ: Mapping[str, str] | None = None) -> FastModel | None:
    """The fast model ``spec`` describes, or None when it describes none (the feature is off).

    ``spec`` is what the ``fast_model`` setting holds (a name, a mapping of endpoint options or a
    callable), or a :class:`FastModel`. Raises ``ValueError`` for an unusable description and
    :class:`MissingExtraError` when the SDK it needs is not installed.
    """
    env = os.environ if environ is None else environ
    if spec is None:
        return None
    if isinstance(spec, FastModel) and not isinstance(spec, type):
        return spec
    if isinstance(spec, str):
        name = spec.strip()
        return _endpoint_model({"model": name}, env) if name else None
    if isinstance(spec, Mapping):
        return _endpoint_model(spec, env)
    if callable(spec):
        return CallableModel(spec)
    raise TypeError(f"a fast model is a name, a mapping or a callable, not {type(spec).__name__}")
