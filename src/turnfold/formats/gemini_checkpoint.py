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
  Code's list of skills, the date) or ``<qwen:…>`` block, is no prompt the user typed: it is a
  notice (``subtype="context"``) before the user's words; Gemini CLI's briefing sent in one
  content with the first prompt is its own notice. A checkpoint is surely a CLI's, so both
  hold from its first content (:func:`~turnfold.formats.gemini_injected.split_user_parts`, the
  rule :mod:`~turnfold.formats.gemini_api` follows where contents show a CLI's briefing).

The agent (``metadata["agent"]``) is told by the folder the file is in (``.gemini`` or
``.qwen``), else by the fields only one of them writes (``messageId``: Gemini CLI; ``promptId``:
Qwen Code 0.24); Gemini CLI's own briefing names it too. A checkpoint without its conversation
(``clientHistory``, optional in the CLI's schema) has nothing to show of the session: a load
says so, naming the file.

Detection: one JSON object with a ``toolCall`` object that has a ``name``, beside a
``clientHistory`` list, a ``history`` list or a ``commitHash``; no other format writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from turnfold.formats import gemini_api
from turnfold.formats.catalog import Records
from turnfold.formats.detection import DISTINCTIVE, NOT_MINE, Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.gemini import AGENT as GEMINI_CLI
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
        "user": gemini_api.RECORDS.mapped["user"] + " (from the first content: a checkpoint is "
        "surely a CLI's)",
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
#: The arguments that name the file a call changes (``file_path``; ``notebook_path`` of Qwen
#: Code's notebook edits, which it checkpoints too).
_FILE_ARGS = ("file_path", "notebook_path")
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
    # A checkpoint is surely the CLI's: its context blocks are notices from the first content.
    builder = GeminiContentsBuilder(transcript, source.name, cli=True)
    for line, content in enumerate(contents, start=1):
        builder.feed_noted(source, content, line, gemini_api.record_type(content))
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
