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
from turnfold.summaries.usage import PURPOSE, UsageCounter, UsageTracker, usage, usage_for

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
