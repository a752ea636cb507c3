"""What Gemini CLI itself writes into a ``user`` message of its chat recording, told apart from
what the user typed (spec L-1: a user message is what the user asked).

- **The continuation.** When a response ends empty or with a malformed function call (the CLI
  records ``⚠️  Response stopped due to malformed function call.``), Gemini CLI asks the model
  again in the same turn with ``System: Please continue.`` (``packages/core/src/core/client.ts``,
  ``sendMessageStream`` with ``continueOnFailedApiCall``), recorded as a ``user`` message whose
  ``displayContent`` is the turn's prompt again, or blank. It is the CLI speaking: a
  :class:`~turnfold.model.SystemNotice` (``subtype="continuation"``), not a prompt typed twice.
- **A steering hint.** What the user types while the agent works is sent as
  ``User steering update:\\n<user_input>\\n{hint}\\n</user_input>\\n{instruction}``
  (``buildUserSteeringHintPrompt``, ``packages/core/src/utils/fastAckHelper.ts``), alone or
  with the calls' responses. The user's message is the hint; what was sent is kept in
  ``meta["sent_text"]``.

Both seen in real Gemini CLI sessions of April 2026 (0.3x legacy JSON).

- **The briefing beside the first prompt.** Gemini CLI 0.61 sends its ``<session_context>``
  briefing and the first prompt as two text parts of one content (its ``/chat share`` JSON and
  its ``/restore`` checkpoints hold it so): the briefing is the CLI's notice, the other part
  the user's words (:func:`split_user_parts`).
- **Context blocks.** Qwen Code, a fork, puts its context into a user's content as text parts
  that are each one ``<system-reminder>`` (its list of skills, its briefing, the date) or
  ``<qwen:…>`` block, as its own chat reader tells them: a notice (``subtype="context"``,
  :func:`context_notice`), not a prompt. Only where the contents are surely a CLI's (a
  checkpoint, or a briefing in the CLI's own words among them): a user's own contents may hold
  such a tag as words of theirs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from turnfold.formats.gemini_parts import as_parts, joined_text
from turnfold.formats.wording import notice
from turnfold.model import SystemNotice, UserMessage

CONTINUATION_TEXT = "System: Please continue."

_STEERING = re.compile(r"User steering update:\n<user_input>\n(.*?)\n</user_input>\n", re.DOTALL)
#: A text part the CLI put into a user's content: one ``<system-reminder>`` or ``<qwen:…>``
#: block (group 2 or 3 its inside): the one rule for Qwen Code's injected context, its chat
#: reader's (:mod:`turnfold.formats.qwen`) and a contents list's.
CONTEXT_BLOCK = re.compile(
    r"^\s*(?:<qwen:([\w-]+)>(.*)</qwen:\1>|<system-reminder>(.*)</system-reminder>)\s*$",
    re.DOTALL,
)
#: The lines of a long injected context its notice shows.
_CONTEXT_LINES = 3


def continuation_notice(record: dict[str, Any], stamp: str | None) -> SystemNotice | None:
    """The notice of a ``user`` record that is Gemini CLI's own continuation, else None.

    >>> continuation_notice({"content": [{"text": "System: Please continue."}],
    ...                      "displayContent": [{"text": "fix it"}]}, None).subtype
    'continuation'
    >>> continuation_notice({"content": "fix it"}, None) is None
    True
    """
    parts = as_parts(record.get("content"))
    if len(parts) != 1 or joined_text(parts, sep="\n").strip() != CONTINUATION_TEXT:
        return None
    return SystemNotice(text=CONTINUATION_TEXT, subtype="continuation", timestamp=stamp)


def unwrap_steering(message: UserMessage) -> None:
    """Show a steering hint as the words the user typed (see the module docstring).

    >>> m = UserMessage(text="User steering update:\\n<user_input>\\nstop\\n</user_input>\\nAck.")
    >>> unwrap_steering(m); m.text, m.meta["sent_text"][:20]
    ('stop', 'User steering update')
    """
    match = _STEERING.match(message.text)
    if match is None or not match[1].strip():
        return
    message.meta["sent_text"] = message.text
    message.text = match[1]


@dataclass
class UserParts:
    """A user's content taken apart (:func:`split_user_parts`): the parts of the CLI's
    briefing, the text of each context block, and the parts the user sent."""

    briefing: list[Any] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    typed: list[Any] = field(default_factory=list)
    #: A part is a CLI's briefing in its own words (bare, or inside a context block: Qwen
    #: Code's): the contents are surely a CLI's.
    cli: bool = False


def split_user_parts(
    parts: Sequence[Any], is_briefing: Callable[[str], bool], *, cli: bool
) -> UserParts:
    """The parts of a user's content, the CLI's told from the user's: a part that is the
    CLI's briefing beside other parts (the briefing alone is the whole content's, read as
    such), and, where the contents are surely a CLI's (``cli``, or a briefing among these
    parts), the context blocks. ``is_briefing`` is :func:`turnfold.formats.gemini.is_briefing`,
    passed in because that module imports this one. The parts are not modified.

    >>> from turnfold.formats.gemini import is_briefing
    >>> brief = "<session_context>\\nThis is the Gemini CLI.\\n</session_context>"
    >>> split = split_user_parts([{"text": brief}, {"text": "fix it"}], is_briefing, cli=False)
    >>> len(split.briefing), split.typed, split.cli
    (1, [{'text': 'fix it'}], True)
    >>> tagged = [{"text": "<system-reminder>mine</system-reminder>"}, {"text": "hi"}]
    >>> split_user_parts(tagged, is_briefing, cli=False).context  # a user's own tag: theirs
    []
    """
    split = UserParts()
    texts = [p.get("text") if isinstance(p, Mapping) else None for p in parts]
    blocks = [CONTEXT_BLOCK.match(t) if isinstance(t, str) else None for t in texts]
    split.cli = any(
        isinstance(t, str) and (is_briefing(t) or (b is not None and is_briefing(_inside(b))))
        for t, b in zip(texts, blocks, strict=True)
    )
    for part, text, block in zip(parts, texts, blocks, strict=True):
        if block is not None and (cli or split.cli):
            split.context.append(block[0].strip())
        elif isinstance(text, str) and len(parts) > 1 and is_briefing(text):
            split.briefing.append(part)
        else:
            split.typed.append(part)
    return split


def _inside(block: re.Match[str]) -> str:
    """The text inside a context block, without its tags."""
    inside = block[2] if block[2] is not None else block[3]
    return inside.strip() if inside is not None else ""


def context_notice(texts: list[str]) -> SystemNotice:
    """The context the CLI put into a user's content, as a notice: whole when short, else its
    first lines with the whole in ``meta["context"]`` (Qwen Code's list of skills runs long).

    >>> context_notice(["<system-reminder>\\nThe date is today.\\n</system-reminder>"]).subtype
    'context'
    """
    text = "\n\n".join(texts)
    lines = text.split("\n")
    left_out = sum(1 for line in lines[_CONTEXT_LINES:] if line.strip())
    if left_out < 2:  # a cut that saves a line or none says more than it hides
        return SystemNotice(text=text, subtype="context")
    said = {"facts": "\n".join(lines[:_CONTEXT_LINES]), "count": left_out}
    cut = notice("reader.session_context_cut", said, subtype="context")
    cut.meta["context"] = text
    return cut
