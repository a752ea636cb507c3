"""Gemini CLI's ``/restore`` checkpoints, and Qwen Code's (spec L-2): the conversation up to a
call that was about to change a file.

With checkpointing on (``general.checkpointing.enabled``), Gemini CLI's terminal UI saves, for
each file-changing call waiting for the user's approval (``replace``, ``write_file``…), the
session so far and a snapshot of the project in a shadow git repository, so that
``/restore <name>`` can go back to it (``processRestorableToolCalls``,
``packages/core/src/utils/checkpointUtils.ts``, and ``useGeminiStream``'s
``saveRestorableToolCalls``, @google/gemini-cli 0.61.0)::

    ~/.gemini/tmp/<project>/checkpoints/<time>-<file>-<tool>.json
    {"history": [...], "clientHistory": [...], "toolCall": {"name", "args"},
     "commitHash": "<the snapshot>", "messageId": "<session id>########<prompt>"}

Qwen Code 0.24.4 writes the same file under ``~/.qwen/tmp/<project>/checkpoints/`` with
``promptId`` and ``filePath`` in place of ``commitHash`` and ``messageId`` (its files are put
back from its own file history), and older Qwen Code wrote Gemini CLI's fields.

- ``clientHistory`` is the chat as the model was sent it (``GeminiClient.getHistory()``: Gemini
  API ``Content`` objects), read as :mod:`~turnfold.formats.gemini_api` reads contents. It ends
  with the model's content holding the call the checkpoint was taken before: that call has no
  result (it had not run; ``unknown``, spec L-3).
- ``toolCall`` names that call: a notice first (``subtype="checkpoint"``) says the file is a
  checkpoint of a session and which call it precedes, the call's ``meta["checkpoint"]`` marks
  it. A call the contents do not hold is warned of.
- ``history`` is the terminal UI's items of the same conversation (``HistoryItem``: the prompts,
  answers and tool groups it showed, its info lines), which ``/restore`` puts back on screen: it
  restates what ``clientHistory`` holds, so it is passed over (counted as ignored).
- ``commitHash``, ``filePath`` and the prompt's id are ``metadata["checkpoint"]``; the session
  id (the prompt id's part before ``########``) is ``metadata["session_id"]``.
- Context the CLI put into a user's content, a text part that is one ``<system-reminder>`` (Qwen
  Code's list of skills, the date) or ``<qwen:…>`` block (``_INJECTED`` of
  :mod:`~turnfold.formats.qwen`), is no prompt the user typed: it is a notice
  (``subtype="context"``) before the user's words.

The agent (``metadata["agent"]``) is told by the folder the file is in (``.gemini`` or
``.qwen``), else by the fields only one of them writes (``messageId``: Gemini CLI; ``promptId``:
Qwen Code 0.24); Gemini CLI's own briefing names it too. A checkpoint without its conversation
(``clientHistory``, optional in the CLI's schema) has nothing to show of the session: a load
says so, naming the file.

Detection: one JSON object with a ``toolCall`` object that has a ``name``, beside a
``clientHistory`` list, a ``history`` list or a ``commitHash``; no other format writes them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turnfold.formats import gemini_api
from turnfold.formats.catalog import Records
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.gemini import AGENT as GEMINI_CLI
from turnfold.formats.gemini import is_briefing
from turnfold.formats.gemini_api import GeminiContentsBuilder
from turnfold.formats.source import Source
from turnfold.formats.wording import notice
from turnfold.formats.wrappers import keep_wrapper_keys
from turnfold.model import SystemNotice, ToolCall, Transcript

NAME = "gemini-checkpoint"
#: ``metadata["agent"]`` of a Qwen Code checkpoint (:data:`turnfold.session.AGENT_NAMES`).
QWEN_CODE = "qwen"

RECORDS = Records(
    mapped={
        **gemini_api.RECORDS.mapped,
        "user": gemini_api.RECORDS.mapped["user"] + "; Gemini CLI's briefing sent in one content "
        "with the first prompt its own notice; a part that is one <system-reminder> or <qwen:…> "
        "block the CLI put in (Qwen Code's skills, the date) a notice of that context",
        "toolCall": "the call the checkpoint was taken before: a notice naming it, first, and "
        "the call's meta['checkpoint']",
    },
    ignored={
        "history": "the terminal UI's items of the same conversation (prompts, answers, tool "
        "groups, info lines), which /restore puts back on screen: clientHistory holds the "
        "conversation they show",
    },
)

#: The keys of a checkpoint that are the reader's own (the rest is kept as metadata).
_READ = frozenset({"history", "clientHistory", "toolCall", "commitHash", "messageId", "promptId",
                   "filePath"})  # fmt: skip
#: What stands between the session id and the prompt's number in a prompt id
#: (``${sessionId}########${n}``, Gemini CLI's and Qwen Code's ``prompt_id``).
_PROMPT_ID_SEPARATOR = "########"
#: A text part the CLI put into a user's content: one ``<system-reminder>`` or ``<qwen:…>``
#: block, as Qwen Code's chat reader tells its injected context.
_INJECTED = re.compile(
    r"^\s*(?:<qwen:([\w-]+)>.*</qwen:\1>|<system-reminder>.*</system-reminder>)\s*$", re.DOTALL
)
#: The arguments that name the file a call changes (``file_path``; ``notebook_path`` of Qwen
#: Code's notebook edits, which it checkpoints too).
_FILE_ARGS = ("file_path", "notebook_path")
#: The lines of a long injected context its notice shows.
_CONTEXT_LINES = 3
_LACKS = "no toolCall with a name and clientHistory list (a Gemini CLI /restore checkpoint)"


def is_checkpoint(value: Any) -> bool:
    """Whether ``value`` is a checkpoint: a ``toolCall`` object with a ``name``, beside a
    ``clientHistory`` list or the other fields only a checkpoint has.

    >>> is_checkpoint({"toolCall": {"name": "replace", "args": {}}, "clientHistory": []})
    True
    >>> is_checkpoint({"history": [], "authType": "gemini-api-key"})  # a /chat save
    False
    """
    if not isinstance(value, Mapping):
        return False
    call = value.get("toolCall")
    if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
        return False
    return (
        isinstance(value.get("clientHistory"), list)
        or "commitHash" in value
        or isinstance(value.get("history"), list)
    )


def _classify(value: Any) -> int:
    return DISTINCTIVE if is_checkpoint(value) else NOT_MINE


def detect(source: Source) -> Evidence:
    """One JSON object that is a checkpoint (:func:`is_checkpoint`)."""
    if not source.is_document or not isinstance(source.document, Mapping):
        return Evidence.none(_LACKS)
    return Evidence.of([source.document], _classify, _LACKS)


def read(source: Source) -> Transcript:
    """The conversation a checkpoint holds, after a notice naming the call it precedes."""
    document = source.document if source.is_document else None
    if not is_checkpoint(document):
        raise TranscriptFormatError(source.name, [NAME], 1, _LACKS)
    assert isinstance(document, Mapping)
    contents = document.get("clientHistory")
    if not isinstance(contents, list):
        raise TranscriptFormatError(
            source.name, [NAME], 1,
            "a Gemini CLI /restore checkpoint without its conversation (no clientHistory): "
            "nothing of the session it was taken in to show",
        )  # fmt: skip
    call = document["toolCall"]
    args = call.get("args") if isinstance(call.get("args"), Mapping) else {}
    transcript = Transcript(metadata={"source_format": NAME})
    transcript.append(_checkpoint_notice(call["name"], args, document.get("filePath")))
    builder = GeminiContentsBuilder(transcript, source.name)
    for line, content in enumerate(contents, start=1):
        kind = gemini_api.record_type(content)
        briefing, context, typed = _user_parts(content)
        if context:
            transcript.append(_context_notice(context))
        if briefing:
            # Gemini CLI sends its briefing and the first prompt in one content: the briefing
            # fed alone is the notice of its facts, the prompt is the user's message.
            builder.feed({"role": "user", "parts": briefing}, line)
        if typed is None:
            builder.feed_noted(source, content, line, kind)
        elif typed["parts"]:
            builder.feed_noted(source, typed, line, kind)
        else:
            source.note(kind, "mapped")
    source.note("toolCall", "mapped")
    history = document.get("history")
    for _ in history if isinstance(history, list) else ():
        source.note("history", "ignored")
    _mark_call(builder, transcript, call["name"], args)
    transcript.metadata.update(_facts(document, source.path))
    keep_wrapper_keys(transcript, {k: v for k, v in document.items() if k not in _READ})
    return transcript


def _checkpoint_notice(tool: str, args: Mapping[str, Any], file: Any) -> SystemNotice:
    """The notice that says what the file is: a checkpoint taken before ``tool`` ran (on the
    file it names)."""
    target = next((args[k] for k in _FILE_ARGS if isinstance(args.get(k), str)), None)
    target = target if target is not None else file if isinstance(file, str) else None
    if target is None:
        return notice("reader.restore_checkpoint_call", {"tool": tool}, subtype="checkpoint")
    return notice("reader.restore_checkpoint", {"tool": tool, "file": target},
                  subtype="checkpoint")  # fmt: skip


def _user_parts(
    content: Any,
) -> tuple[list[Mapping[str, Any]], list[str], dict[str, Any] | None]:
    """Of a user's content, the parts of Gemini CLI's briefing, the text of the context the CLI
    put into it, and the content without either (None: neither is in it). A copy: the input is
    never modified."""
    if not gemini_api.is_content(content) or content.get("role") == "model":
        return [], [], None
    briefing: list[Mapping[str, Any]] = []
    context: list[str] = []
    typed: list[Any] = []
    for part in content.get("parts") or ():
        text = part.get("text") if isinstance(part, Mapping) else None
        if not isinstance(text, str):
            typed.append(part)
        elif _INJECTED.match(text):
            context.append(text.strip())
        elif is_briefing(text) and len(content["parts"]) > 1:
            briefing.append(part)
        else:
            typed.append(part)
    if not briefing and not context:
        return [], [], None
    return briefing, context, {**content, "parts": typed}


def _context_notice(texts: list[str]) -> SystemNotice:
    """The context the CLI put into a user's content, as a notice: whole when short, else its
    first lines with the whole in ``meta["context"]`` (Qwen Code's list of skills runs long)."""
    text = "\n\n".join(texts)
    lines = text.split("\n")
    left_out = sum(1 for line in lines[_CONTEXT_LINES:] if line.strip())
    if left_out < 2:  # a cut that saves a line or none says more than it hides
        return SystemNotice(text=text, subtype="context")
    said = {"facts": "\n".join(lines[:_CONTEXT_LINES]), "count": left_out}
    cut = notice("reader.session_context_cut", said, subtype="context")
    cut.meta["context"] = text
    return cut


def _mark_call(
    builder: GeminiContentsBuilder, transcript: Transcript, tool: str, args: Mapping[str, Any]
) -> None:
    """Mark the call the checkpoint precedes: the last one of its name and arguments."""
    for entry in reversed(transcript.entries):
        if isinstance(entry, ToolCall) and entry.name == tool and entry.args == dict(args):
            entry.meta["checkpoint"] = True
            return
    builder.warn(f"the call the checkpoint was taken before ({tool}) is not in its "
                 "conversation", None)  # fmt: skip


def _facts(document: Mapping[str, Any], path: Path | None) -> dict[str, Any]:
    """The session id, the agent and the checkpoint's own fields, as metadata."""
    facts: dict[str, Any] = {}
    prompt = document.get("messageId", document.get("promptId"))
    if isinstance(prompt, str) and _PROMPT_ID_SEPARATOR in prompt:
        facts["session_id"] = prompt.split(_PROMPT_ID_SEPARATOR, 1)[0]
    agent = _agent(document, path)
    if agent is not None:
        facts["agent"] = agent
    kept = {k: document[k] for k in ("commitHash", "filePath", "messageId", "promptId")
            if k in document}  # fmt: skip
    if kept:
        facts["checkpoint"] = kept
    return facts


def _agent(document: Mapping[str, Any], path: Path | None) -> str | None:
    """Gemini CLI or Qwen Code, by the folder the file is in, else by the fields only one of
    them writes; None when neither tells (an older Qwen Code wrote Gemini CLI's)."""
    folders = path.parts if path is not None else ()
    if ".qwen" in folders:
        return QWEN_CODE
    if ".gemini" in folders or "messageId" in document:
        return GEMINI_CLI
    return QWEN_CODE if "promptId" in document else None
