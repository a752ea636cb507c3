"""The request sent to the fast model for one finished batch (spec S-4).

A fixed system prompt asks for a git-commit-subject label; the user prompt lists, for each
*successful* tool of the batch, its name, its input and its output, each serialized to compact
JSON and cut to :data:`FIELD_CHARS` characters by :func:`truncate_json`, after the first
:data:`INTENT_CHARS` characters of the assistant's last text (the intent). Obvious secrets are
redacted before anything is cut (:mod:`turnfold.summaries.redact`), so a key that straddles the
cut is not half sent.

>>> from turnfold.model import ToolCall, ToolResult
>>> call = ToolCall(call_id="c1", name="Read", args={"file_path": "a.ts"}, status="success",
...                 result=ToolResult(text="export const a = 1"))
>>> print(build_request([call], intent="Let me read a.ts.").prompt)
Intent (from the assistant's last message): Let me read a.ts.
<BLANKLINE>
Tools completed:
<BLANKLINE>
Tool: Read
Input: {"file_path":"a.ts"}
Output: "export const a = 1"
<BLANKLINE>
Label:
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from turnfold.model import AssistantText, Entry, ToolCall, UserMessage
from turnfold.summaries.redact import redact_secrets, redact_value

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "FIELD_CHARS",
    "INTENT_CHARS",
    "SYSTEM_PROMPT",
    "UNSERIALIZABLE",
    "SummaryRequest",
    "ToolInput",
    "build_request",
    "intent_before",
    "tool_output",
    "truncate_json",
]

#: Each tool's name, input and output is cut to this many characters (S-4).
FIELD_CHARS = 300
#: The first this-many characters of the assistant's last text go along as the intent (S-4).
INTENT_CHARS = 200
#: The output budget of one request: a label is one short line (S-4: "small output budget").
DEFAULT_MAX_TOKENS = 64
#: What :func:`truncate_json` returns for a value JSON cannot hold.
UNSERIALIZABLE = "[unable to serialize]"
#: Text past a cut is scanned this far for secrets, so one straddling the cut is still found.
_REDACT_MARGIN = 256

SYSTEM_PROMPT = """\
You label what a batch of tool calls did, for a one-line row in a transcript viewer. The row \
shows about 30 characters, so write it like a git commit subject, not a sentence.

Rules:
- Start with a past-tense verb.
- Keep the most distinctive noun (a file, a symbol, a pattern, a command).
- Drop articles, connectors and long paths first.
- Reply with the label alone: one line, no quotes, no trailing period, no explanation.

Examples:
Searched in auth/
Fixed NPE in UserService
Created signup endpoint
Read config.json
Ran failing tests"""


# --- truncate_json (S-4) -------------------------------------------------------------------------


class _Unserializable(Exception):
    pass


def _cut_leaves(value: Any, limit: int, active: set[int], depth: int = 0) -> Any:
    """A copy of ``value`` whose string leaves are cut to ``limit`` characters.

    The cut happens before serializing, so a megabyte of tool output is never serialized whole;
    it changes nothing in the result, because a string still longer than ``limit`` pushes
    everything after it past the final cut anyway. Cycles and absurd nesting are unserializable.
    """
    if isinstance(value, str):
        return value[:limit] if len(value) > limit else value
    if isinstance(value, (dict, list, tuple)):
        if id(value) in active or depth > 500:
            raise _Unserializable
        active.add(id(value))
        try:
            if isinstance(value, dict):
                return {
                    key: _cut_leaves(item, limit, active, depth + 1) for key, item in value.items()
                }
            return [_cut_leaves(item, limit, active, depth + 1) for item in value]
        finally:
            active.discard(id(value))
    return value


def truncate_json(value: Any, max_len: int) -> str:
    """``value`` as compact JSON, cut to ``max_len`` characters (spec S-4).

    Compact means no spaces after ``,`` and ``:``; non-ASCII characters are kept as they are.
    String leaves are cut first (to ``max_len``, which never changes the result), then the JSON,
    when longer than ``max_len``, is cut to ``max_len - 3`` characters plus ``...``. A value JSON
    cannot hold (an object, a set, bytes, a cycle) gives ``[unable to serialize]``.

    >>> truncate_json({"path": "a.ts", "limit": 10}, 300)
    '{"path":"a.ts","limit":10}'
    >>> truncate_json("日本語", 300)
    '"日本語"'
    >>> truncate_json("x" * 500, 10)
    '"xxxxxx...'
    >>> truncate_json({1, 2}, 300)
    '[unable to serialize]'
    """
    if max_len < 3:
        raise ValueError(f"max_len must be at least 3, got {max_len}")
    try:
        text = json.dumps(
            _cut_leaves(value, max_len, set()), ensure_ascii=False, separators=(",", ":")
        )
    except (_Unserializable, TypeError, ValueError, RecursionError):
        return UNSERIALIZABLE
    if len(text) <= max_len:
        return text
    return text[: max_len - 3] + "..."


# --- the request ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolInput:
    """One successful tool as sent: its name and its input and output as cut JSON text."""

    name: str
    input: str
    output: str


@dataclass(frozen=True)
class SummaryRequest:
    """Everything one label request sends, and the batch it is for.

    A callable fast model receives this object: ``system`` and ``prompt`` are the two messages
    (``messages`` has them in chat form), ``tools`` and ``intent`` the same facts unformatted.
    """

    system: str
    prompt: str
    tools: tuple[ToolInput, ...]
    intent: str | None
    #: Every call id of the batch: the label will cover them all (S-1).
    call_ids: tuple[str, ...] = ()
    max_tokens: int = DEFAULT_MAX_TOKENS
    purpose: str = "tool_use_summary_generation"
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, str]]:
        """The request as chat messages: ``[{"role": "system", …}, {"role": "user", …}]``."""
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.prompt},
        ]


def tool_output(call: ToolCall) -> Any:
    """What a tool returned, as sent: its text, else its structured result, else None.

    Images are never sent.
    """
    result = call.result
    if result is None:
        return None
    if result.text is not None:
        return result.text
    return result.structured


def _field(value: Any, *, redact: bool) -> str:
    if redact:
        value = redact_value(_precut(value, FIELD_CHARS + _REDACT_MARGIN))
    return truncate_json(value, FIELD_CHARS)


def _precut(value: Any, limit: int) -> Any:
    try:
        return _cut_leaves(value, limit, set())
    except (_Unserializable, RecursionError):
        return value  # truncate_json will call it unserializable


def _intent(text: str | None, *, redact: bool) -> str | None:
    if not text or not text.strip():
        return None
    if redact:
        return redact_secrets(text[: INTENT_CHARS + _REDACT_MARGIN])[:INTENT_CHARS]
    return text[:INTENT_CHARS]


def build_request(
    calls: Sequence[ToolCall],
    intent: str | None = None,
    *,
    redact: bool = True,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> SummaryRequest | None:
    """The label request for a batch, or None when no tool of it succeeded (S-2).

    Only tools whose status is ``success`` are sent; failed, cancelled, running and unknown ones
    are left out. ``intent`` is the assistant's last text (see :func:`intent_before`); its first
    :data:`INTENT_CHARS` characters are sent. ``redact=False`` sends secrets as they are.
    """
    succeeded = [call for call in calls if call.status == "success"]
    if not succeeded:
        return None
    tools = tuple(
        ToolInput(
            name=call.name,
            input=_field(call.args, redact=redact),
            output=_field(tool_output(call), redact=redact),
        )
        for call in succeeded
    )
    intent_text = _intent(intent, redact=redact)
    blocks = [f"Tool: {tool.name}\nInput: {tool.input}\nOutput: {tool.output}" for tool in tools]
    prefix = f"Intent (from the assistant's last message): {intent_text}\n\n" if intent_text else ""
    prompt = f"{prefix}Tools completed:\n\n" + "\n\n".join(blocks) + "\n\nLabel:"
    return SummaryRequest(
        system=SYSTEM_PROMPT,
        prompt=prompt,
        tools=tools,
        intent=intent_text,
        call_ids=tuple(call.call_id for call in calls),
        max_tokens=max_tokens,
    )


def intent_before(entries: Sequence[Entry], first_call: ToolCall) -> str | None:
    """The assistant's last text before ``first_call`` in its turn, or None.

    The search stops at the user message that opened the turn: an earlier turn's answer says
    nothing about why this batch ran.
    """
    index = _index_of(entries, first_call)
    if index is None:
        return None
    return _last_text(entries[i] for i in range(index - 1, -1, -1))


def _index_of(entries: Sequence[Entry], target: Entry) -> int | None:
    # Batches close at the end of a live transcript, so look from the end.
    for index in range(len(entries) - 1, -1, -1):
        if entries[index] is target:
            return index
    return None


def _last_text(backwards: Iterable[Entry]) -> str | None:
    for entry in backwards:
        if isinstance(entry, UserMessage):
            return None
        if isinstance(entry, AssistantText) and entry.text.strip():
            return entry.text
    return None
