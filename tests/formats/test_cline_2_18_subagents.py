"""The real Cline CLI 2.18.0 with ``subagentsEnabled``: the lead calls ``use_subagents`` with two
prompts, each sub-agent makes its own requests, then the lead completes
(``tests/fixtures/cline/cline-cli-2.18.0_subagents_recipe.py``). The panel says the sub-agents'
status (``subagent``) and their tokens (``subagent_usage``): both had been warned of and shown as
notices, and the sub-agents' tokens counted nowhere.

The scripted server's usage for the n-th response of a conversation: ``prompt 1000n+7,
completion 10n+3, 100(n-1) cached``; the lead made two requests, sub-agent A two, B one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import turnfold
from turnfold import AssistantText, SystemNotice, ToolCall
from turnfold.model import Transcript
from turnfold.usage import transcript_tokens

CLINE = Path(__file__).parents[1] / "fixtures" / "cline"
TASK = CLINE / "cline-cli-2.18.0_tasks" / "subagents"
PROMPTS = [
    "TF-SUBTASK-A: read notes.txt and report its first line.",
    "TF-SUBTASK-B: say which file this folder holds.",
]
#: The lead's own two requests, and the sub-agents' three (A: n=1, 2; B: n=1).
LEAD = {"input_tokens": 1007 + 2007, "output_tokens": 13 + 23, "cache_read_tokens": 100}
SUBAGENTS = {"input_tokens": 1007 + 2007 + 1007, "output_tokens": 13 + 23 + 13,
             "cache_read_tokens": 100}  # fmt: skip


def _read(name: str) -> Transcript:
    if name == "--json":
        return turnfold.load(CLINE / "cline-cli-2.18.0_json" / "subagents.jsonl")
    return turnfold.load(TASK / name)


def _tokens(counts: dict[str, int]) -> dict[str, int]:
    return {k: counts.get(k, 0) for k in ("input_tokens", "output_tokens", "cache_read_tokens")}


@pytest.mark.parametrize("name", ["ui_messages.json", "--json", "api_conversation_history.json"])
def test_F7_U1_the_subagents_are_the_call_s_and_their_tokens_are_counted_once_under_it(
    name: str,
) -> None:
    transcript = _read(name)
    assert not any("shown as a notice" in w.reason for w in transcript.warnings)
    assert not any(isinstance(e, SystemNotice) for e in transcript.entries)
    (call,) = transcript.tool_calls()
    assert (call.name, call.status) == ("use_subagents", "success")
    assert call.subagent is not None
    assert call.subagent.task == "\n\n".join(PROMPTS)
    assert call.subagent.tool_count == 3  # A's read_file and each one's attempt_completion
    assert call.subagent.steps_missing  # the panel and the history hold none of their steps
    assert call.result is not None
    assert call.result.text is not None
    assert "TF-SUB-A-DONE: A file for the agents to read." in call.result.text
    assert "TF-SUB-B-DONE: notes.txt" in call.result.text
    tokens = transcript_tokens(transcript)
    assert _tokens(tokens.subagents) == SUBAGENTS  # under the call, not doubled
    if name != "--json":  # the CLI prints each request before its counts are known
        assert _tokens(tokens.own) == LEAD
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    answers = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert answers[-1] == "TF-DONE-SUBAGENTS: both reported."


def test_the_panel_s_subagent_row_is_the_call_it_approved_when_it_asked() -> None:
    """Cline says nothing of a ``use_subagents`` call yolo mode runs: the ``subagent`` row is
    the call. One the user approved is the ``ask: use_subagents`` before it: that call, not a
    second one."""
    messages = json.loads((TASK / "ui_messages.json").read_text())
    at = next(i for i, m in enumerate(messages) if m.get("say") == "subagent")
    asked = {"ts": messages[at]["ts"] - 1, "type": "ask", "ask": "use_subagents",
             "text": json.dumps({"prompts": PROMPTS})}  # fmt: skip
    messages.insert(at, asked)
    transcript = turnfold.load(messages)
    (call,) = transcript.tool_calls()
    assert call.call_id == f"ui-{asked['ts']}"
    assert call.args == {"prompts": PROMPTS}
    assert call.subagent is not None
    assert call.subagent.usage is not None
    assert call.subagent.usage.output_tokens == SUBAGENTS["output_tokens"]


def test_a_history_s_use_subagents_tag_is_a_call_with_its_prompts() -> None:
    """Cline 3.82 writes ``<use_subagents><prompt_1>…`` in the assistant's text: it was left in
    the answer as raw tags, and its ``[subagents] Result:`` shown as the user's words."""
    transcript = _read("api_conversation_history.json")
    (call,) = transcript.tool_calls()
    assert call.args == {"prompt_1": PROMPTS[0], "prompt_2": PROMPTS[1]}
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts[0] == "TF-TEXT-SUB: two sub-agents will look."
    assert not any("Subagent results" in (getattr(e, "text", "") or "") for e in
                   transcript.entries if not isinstance(e, ToolCall))  # fmt: skip
