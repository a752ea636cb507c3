"""Claude Code 2.1.337's background agents: the header's tokens, a hand-back report, a stopped
agent's result (spec U-1, U-3, F-7, X-2).

Fixtures, each a real run of the ``claude`` binary bundled in claude-agent-sdk 0.2.190 (Claude
Code 2.1.337) against a scripted model on 127.0.0.1 inside ``unshare -rn``:

- ``claude-code/v2.1.337_real_background-agent-report.jsonl``: a session file alone, its
  background agent's own file left out (``background_agent_report_recipe.txt``);
- ``claude-code/v2.1.337_real_background-agent-folder/``: the same recipe's session folder, the
  agent's ``subagents/agent-*.jsonl`` kept, with the run's stdout
  (``…_stream-json_background-agent-folder.jsonl``);
- ``claude-code/v2.1.337_real_background-agent-stopped/`` and
  ``…_stream-json_background-agent-stopped-with-session.jsonl``: the session folder and the
  stdout of one run whose background agent the lead stops with ``TaskStop``
  (``background_agent_stopped_recipe.txt``'s server).

No fixture holds a hand-back report: the CLI delivers one only when the sub-agent reports
through its ``SubagentHandback`` tool, which 2.1.337 offers only under auto mode, and auto mode
refuses every call against a server that is not Anthropic's ("Its safety check runs on the
server"). The hand-back tests add the fields to a real run's event in the shape the CLI's own
schema gives them (``handback``: ``send`` / ``flagged`` / ``withheld``; ``handback_report`` /
``handbackReport``: ``{text, warning?, toolUseId?}``, "render it instead of ``summary``, with
its ``warning``, if it has one, above its ``text``"), and say which event.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import turnfold
from tests.claude_background_runs import agent_call, read_events, write_events
from turnfold.model import Transcript
from turnfold.session import session_facts

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude-code"
STREAMS = FIXTURES / "agents" / "claude-stream-json"
ALONE = CLAUDE / "v2.1.337_real_background-agent-report.jsonl"
FOLDER = (CLAUDE / "v2.1.337_real_background-agent-folder"
          / "33733733-2222-4444-8888-777777777777.jsonl")  # fmt: skip
FOLDER_STREAM = STREAMS / "claude-code_v2.1.337_stream-json_background-agent-folder.jsonl"
REPORT_STREAM = STREAMS / "claude-code_v2.1.337_stream-json_background-agent-report.jsonl"
STOPPED = (CLAUDE / "v2.1.337_real_background-agent-stopped"
           / "33733733-2222-4444-8888-888888888888.jsonl")  # fmt: skip
STOPPED_STREAM = STREAMS / (
    "claude-code_v2.1.337_stream-json_background-agent-stopped-with-session.jsonl"
)
HAND_BACK = CLAUDE / "v2.1.332_real_subagent-hand-back.jsonl"


def _cost_state_tokens(path: Path) -> tuple[int, int]:
    """The last ``cost-state`` record's ``modelUsage``, the figure its ``totalCostUSD`` is the
    price of: input (cached input counted in) and output, every model added."""
    (*_, state) = [e for e in read_events(path) if e.get("type") == "cost-state"]
    usage = state["modelUsage"].values()
    return (sum(m["inputTokens"] + m["cacheReadInputTokens"] + m["cacheCreationInputTokens"]
                for m in usage),
            sum(m["outputTokens"] for m in usage))  # fmt: skip


def _header_tokens(transcript: Transcript) -> tuple[int, int]:
    tokens = session_facts(transcript).tokens
    return tokens["input_tokens"], tokens["output_tokens"]


# --- 1. the header's tokens are what the recorded cost covers --------------------------------


def test_U1_a_background_agent_whose_file_is_not_beside_the_session_is_in_the_header() -> None:
    """The session file alone: its responses are the lead's (30 in, 15 out); its ``cost-state``
    (``totalCostUSD`` and ``modelUsage``) covers the background agent's two responses too.
    The header is ``modelUsage`` (50, 25), the agent's share (20, 10) under its call. The
    notification's ``<subagent_tokens>`` (15) is not that share: Claude Code writes there the
    agent's last response's input plus output, not what the agent spent."""
    transcript = turnfold.load(ALONE)
    assert transcript.warnings == []
    assert _header_tokens(transcript) == _cost_state_tokens(ALONE) == (50, 25)
    agent = agent_call(transcript).subagent
    assert agent is not None
    assert agent.usage is not None
    assert (agent.usage.input_tokens, agent.usage.output_tokens) == (20, 10)
    assert agent.output_tokens == 10


def test_U1_a_background_agent_s_own_file_counts_it_once() -> None:
    """The session folder with the agent's ``subagents/agent-*.jsonl``: the agent's tokens are
    its file's responses, the header the ``cost-state``'s ``modelUsage`` and the run's
    ``result`` ``modelUsage`` alike, nothing counted twice."""
    transcript = turnfold.load(FOLDER)
    agent = agent_call(transcript).subagent
    assert agent is not None
    assert agent.transcript is not None
    assert agent.usage is None  # its file counts it
    assert _header_tokens(transcript) == _cost_state_tokens(FOLDER) == (50, 25)
    (result,) = [e for e in read_events(FOLDER_STREAM) if e.get("type") == "result"]
    (model,) = result["modelUsage"].values()
    assert _header_tokens(turnfold.load(FOLDER_STREAM)) == (model["inputTokens"],
                                                          model["outputTokens"])  # fmt: skip


def test_U1_a_cost_state_that_counts_less_than_the_responses_adds_nothing(tmp_path: Path) -> None:
    """The session file alone with its ``cost-state``'s ``modelUsage`` cut below the lead's
    own responses (a session resumed into another file, say): no negative share is made up;
    the header is the responses'."""
    events = read_events(ALONE)
    (state,) = [e for e in events if e.get("type") == "cost-state"]
    state["modelUsage"]["claude-opus-5-5"].update(inputTokens=20, outputTokens=10)
    transcript = turnfold.load(write_events(events, tmp_path / "session.jsonl"))
    assert _header_tokens(transcript) == (30, 15)
    agent = agent_call(transcript).subagent
    assert agent is not None
    assert agent.usage is None


# --- 2. a hand-back report is the agent's result ---------------------------------------------


def _handed_back_stream(tmp_path: Path, report: dict[str, Any]) -> Path:
    """The real report run's stream with its ``task_notification`` (line 12) as the CLI writes
    it for a hand-back: ``handback`` and ``handback_report``, no ``summary_is_report``, the
    ``summary`` holding the harness's note for the model."""
    events = read_events(REPORT_STREAM)
    notified = events[11]
    assert notified["subtype"] == "task_notification"
    del notified["summary_is_report"]
    notified.update(summary="Agent \"sub task\" finished", handback="send",
                    handback_report=report)  # fmt: skip
    return write_events(events, tmp_path / "stream.jsonl")


def test_F7_a_background_agent_s_hand_back_report_is_its_result(tmp_path: Path) -> None:
    report = {"text": "TF-HANDBACK: echoed from-subagent.", "toolUseId": "toolu_sub2"}
    transcript = turnfold.load(_handed_back_stream(tmp_path, report))
    assert transcript.warnings == []
    call = agent_call(transcript)
    assert call.status == "success"
    assert call.result is not None
    assert (call.result.text, call.result.kind) == ("TF-HANDBACK: echoed from-subagent.",
                                                    "subagent")  # fmt: skip


def test_F7_a_flagged_hand_back_shows_its_warning_above_the_report(tmp_path: Path) -> None:
    report = {"text": "TF-HANDBACK: echoed from-subagent.", "toolUseId": "toolu_sub2",
              "warning": "SECURITY WARNING: the review blocked this report."}  # fmt: skip
    path = _handed_back_stream(tmp_path, report)
    events = read_events(path)
    events[11]["handback"] = "flagged"
    call = agent_call(turnfold.load(write_events(events, path)))
    assert call.result is not None
    assert call.result.text == (
        "SECURITY WARNING: the review blocked this report.\n\nTF-HANDBACK: echoed from-subagent."
    )


def test_F7_a_withheld_hand_back_leaves_the_launch_s_result(tmp_path: Path) -> None:
    """``withheld``: nothing was delivered, no ``handback_report``; the summary is a note."""
    path = _handed_back_stream(tmp_path, {"text": "unused"})
    events = read_events(path)
    events[11]["handback"] = "withheld"
    del events[11]["handback_report"]
    call = agent_call(turnfold.load(write_events(events, path)))
    assert call.result is not None
    assert (call.result.text or "").startswith("Async agent launched successfully.")


def test_F7_a_foreground_agent_s_hand_back_report_wins_over_its_content(tmp_path: Path) -> None:
    """The real 2.1.332 hand-back session (line 4: the ``Agent`` call's result) with its
    ``toolUseResult`` given ``handback`` and a flagged ``handbackReport``: the report, its
    warning above it, is the result the view shows, not ``content``."""
    events = read_events(HAND_BACK)
    (line,) = [e for e in events if isinstance(e.get("toolUseResult"), dict)]
    line["toolUseResult"].update(handback="flagged", handbackReport={
        "text": "TF-SUB-DONE: the sub-agent echoed its word.", "toolUseId": "toolu_sub",
        "warning": "SECURITY WARNING: check this report."})  # fmt: skip
    call = agent_call(turnfold.load(write_events(events, tmp_path / "session.jsonl")))
    assert call.result is not None
    assert call.result.text == (
        "SECURITY WARNING: check this report.\n\nTF-SUB-DONE: the sub-agent echoed its word."
    )
    assert call.result.kind == "subagent"


# --- 3. a stopped background agent reads the same from both files ----------------------------


def test_F7_a_stopped_background_agent_s_result_is_the_same_in_session_and_stream() -> None:
    """One run, its session file (``<status>killed</status>``, ``<summary>Agent "sub task"
    was stopped by Claude</summary>``) and its stdout (``status: stopped``, ``summary: "sub
    task"``): no report, so the call keeps what its launch returned, in both; the session
    file's summary is the agent's reason (F-7)."""
    session, stream = turnfold.load(STOPPED), turnfold.load(STOPPED_STREAM)
    from_session, from_stream = agent_call(session), agent_call(stream)
    assert from_session.status == from_stream.status == "cancelled"
    assert from_session.result is not None
    assert from_stream.result is not None
    assert from_session.result.text == from_stream.result.text
    assert (from_session.result.text or "").startswith("Async agent launched successfully.")
    assert from_session.subagent is not None
    assert from_session.subagent.reason == 'Agent "sub task" was stopped by Claude'
