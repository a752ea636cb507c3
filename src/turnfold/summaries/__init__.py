"""Tool-use summary labels from a fast model: live, in the background, never in the way (spec §4).

After a tool batch finishes, a small "fast" model writes a short git-commit-style label for it
(``Searched in auth/``, ``Fixed NPE in UserService``), stored in the transcript as a
``tool_use_summary`` entry and shown as a dim ``● label`` line under the batch.

>>> import turnfold
>>> from turnfold.summaries import TranscriptLabeller
>>> labeller = TranscriptLabeller(turnfold.Transcript(), lambda request: "Ran failing tests")
>>> rec = turnfold.Recorder(labeller=labeller)  # each batch the recorder closes gets a label
>>> labeller.close()

The modules:

* :mod:`~turnfold.summaries.prompt`: the system prompt, :func:`truncate_json` and the request;
* :mod:`~turnfold.summaries.clean`: :func:`clean_summary`, from raw reply to label;
* :mod:`~turnfold.summaries.gate`: the ``emit_tool_use_summaries`` setting and the
  ``TURNFOLD_EMIT_TOOL_USE_SUMMARIES`` switch;
* :mod:`~turnfold.summaries.models`: callables, OpenAI-compatible endpoints, Anthropic;
* :mod:`~turnfold.summaries.scheduler`: :class:`TranscriptLabeller` and :func:`label_batches`;
* :mod:`~turnfold.summaries.usage`: what it cost, per purpose;
* :mod:`~turnfold.summaries.redact`: secrets kept out of the requests.

What leaves the machine: for each successful tool of a batch, its name and its input and output
cut to 300 characters of JSON, plus the first 200 characters of the assistant's last text, go to
the fast model's provider, after obvious secrets are redacted. Nothing is sent unless a fast
model is configured and the feature is on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# The usage counters are imported now: the package's ``usage`` is the function, not the submodule
# of the same name that an import of turnfold.summaries.usage would otherwise leave here.
from turnfold.summaries.usage import PURPOSE, UsageCounter, UsageTracker, usage, usage_for

if TYPE_CHECKING:
    from turnfold.summaries.clean import clean_summary
    from turnfold.summaries.gate import ENV_VARIABLE, env_override, summaries_enabled
    from turnfold.summaries.models import (
        AnthropicModel,
        CallableModel,
        Completion,
        FastModel,
        MissingExtraError,
        OpenAIModel,
        resolve_model,
    )
    from turnfold.summaries.prompt import (
        FIELD_CHARS,
        INTENT_CHARS,
        SYSTEM_PROMPT,
        SummaryRequest,
        ToolInput,
        build_request,
        truncate_json,
    )
    from turnfold.summaries.redact import redact_secrets, redact_value
    from turnfold.summaries.scheduler import (
        DEFAULT_TIMEOUT,
        TranscriptLabeller,
        is_subagent_transcript,
        label_batches,
    )

# Each other name is imported from its module on first use (issue 19): what needs only the usage
# counters (the widget) or clean_summary does not import the model clients (asyncio, ssl), the
# scheduler or the redaction patterns.
_HOMES: dict[str, tuple[str, ...]] = {
    "clean": ("clean_summary",),
    "gate": ("ENV_VARIABLE", "env_override", "summaries_enabled"),
    "models": (
        "AnthropicModel",
        "CallableModel",
        "Completion",
        "FastModel",
        "MissingExtraError",
        "OpenAIModel",
        "resolve_model",
    ),
    "prompt": (
        "FIELD_CHARS",
        "INTENT_CHARS",
        "SYSTEM_PROMPT",
        "SummaryRequest",
        "ToolInput",
        "build_request",
        "truncate_json",
    ),
    "redact": ("redact_secrets", "redact_value"),
    "scheduler": (
        "DEFAULT_TIMEOUT",
        "TranscriptLabeller",
        "is_subagent_transcript",
        "label_batches",
    ),
}
_HOME: dict[str, str] = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> object:
    """A name of :data:`__all__`, imported from its module on first use; or a submodule."""
    home = _HOME.get(name)
    if home is None and name in _HOMES:  # turnfold.summaries.models, as if imported
        home = name
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    __import__(f"{__name__}.{home}")
    module = globals()[home]  # an imported submodule is an attribute of its package
    value = module if home == name else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "DEFAULT_TIMEOUT",
    "ENV_VARIABLE",
    "FIELD_CHARS",
    "INTENT_CHARS",
    "PURPOSE",
    "SYSTEM_PROMPT",
    "AnthropicModel",
    "CallableModel",
    "Completion",
    "FastModel",
    "MissingExtraError",
    "OpenAIModel",
    "SummaryRequest",
    "ToolInput",
    "TranscriptLabeller",
    "UsageCounter",
    "UsageTracker",
    "build_request",
    "clean_summary",
    "env_override",
    "is_subagent_transcript",
    "label_batches",
    "redact_secrets",
    "redact_value",
    "resolve_model",
    "summaries_enabled",
    "truncate_json",
    "usage",
    "usage_for",
]
