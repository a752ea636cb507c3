"""Every agent's headless stream cut off before the record that ends its run reads by one rule,
``common.stream_cut_off`` (spec L-4, H-6, P-7): warned of once, the run ``incomplete``, its
turn stopped, everything the stream holds still shown; never while a stream is followed.

The ``*_killed`` streams are the stdout of the real CLIs (Gemini CLI 0.61.0, Qwen Code 0.24.4,
Codex CLI 0.171.0, GitHub Copilot CLI 1.0.102) in the offline ``tests/agents`` harness, their
process group killed (SIGKILL) while the run's second call (``echo TF-SLOW-START; sleep 45``)
ran, so that the CLI wrote no end record (recipe: ``agents/gemini-stream-json/README.md``).
cursor-agent does not run here: its real streams are cut before their ``result``, as a closed
pipe or a copy taken while the run went on leaves them. Claude Code's own cases are in
``test_claude_stream_cut_off.py``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.cli import main
from turnfold.formats.agents import codex_exec, copilot, cursor_stream, gemini_stream
from turnfold.formats.agents.claude_stream import StreamReader
from turnfold.formats.common import UNFINISHED
from turnfold.formats.source import Source, open_source
from turnfold.model import AbortMarker, AssistantText, Transcript
from turnfold.process import Turn, project

AGENTS = Path(__file__).parents[1] / "fixtures" / "agents"
GEMINI_KILLED = AGENTS / "gemini-stream-json" / "gemini-cli_v0.61.0_stream-json_killed.jsonl"
GEMINI_WHOLE = AGENTS / "gemini-stream-json" / "gemini-cli_v0.61.0_stream-json_tools-subagent.jsonl"
QWEN_KILLED = AGENTS / "qwen-stream-json" / "qwen-code_v0.24.4_stream-json_killed.jsonl"
QWEN_WHOLE = AGENTS / "qwen-stream-json" / "qwen-code_v0.24.4_stream-json_subagent.jsonl"
CODEX_KILLED = AGENTS / "codex-exec-json" / "codex_v0.171.0_exec-json_killed.jsonl"
CODEX_WHOLE = AGENTS / "codex-exec-json" / "codex_v0.171.0_exec-json_tokens-first.jsonl"
CURSOR = (
    AGENTS / "cursor-stream-json" / "cursor-agent_2026-02_stream-json_parallel-shell-calls.jsonl"
)
COPILOT = Path(__file__).parents[1] / "fixtures" / "copilot"
COPILOT_KILLED = COPILOT / "stdout" / "killed_stdout-0.jsonl"
COPILOT_WHOLE = COPILOT / "stdout" / "work_stdout-0.jsonl"
#: The durable session file of a real interrupted Copilot run: no ``result`` is ever written
#: there, and it is no headless stream.
COPILOT_SESSION = (
    COPILOT / "session-state" / "7eb3eca4-e4ba-4bac-9395-7f6bb4b47243" / "events.jsonl"
)

TEXTS = [
    "TF-LOOK: reading the notes first.",
    "TF-NOTES-READ: the notes say to run the slow job; running it now.",
]


def _cut_off(line: int, end: str = "result") -> str:
    return (
        f"the stream ends inside the run begun on line {line} (no {end}): how that run ended "
        "is not recorded"
    )


def _reasons(transcript: Transcript) -> list[str]:
    return [w.reason for w in transcript.warnings]


def _turn_statuses(transcript: Transcript) -> list[str]:
    return [item.header.status for item in project(transcript) if isinstance(item, Turn)]


def _texts(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript if isinstance(e, AssistantText)]


def _calls(transcript: Transcript) -> list[tuple[str, str]]:
    return [(c.name, c.status) for c in transcript.tool_calls()]


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def _accounted(transcript: Transcript, path: Path) -> None:
    """Nothing dropped: every line of the stream is accounted for, none warned of (the one
    warning is the stream's, not a record's)."""
    accounting = transcript.accounting
    assert accounting is not None
    assert accounting.unaccounted == []
    assert accounting.total() == len(_lines(path))
    assert accounting.total("warned") == 0


def _stopped_by_the_cut(transcript: Transcript) -> None:
    last = transcript.entries[-1]
    assert isinstance(last, AbortMarker)
    assert last.reason == UNFINISHED
    assert transcript.metadata["outcome"] == "incomplete"
    assert _turn_statuses(transcript)[-1] == "stopped"


# --- real CLIs killed while a call ran ----------------------------------------------------------


def test_L4_P7_a_killed_gemini_run_s_stream_is_warned_of_once_and_reads_stopped() -> None:
    transcript = turnfold.load(GEMINI_KILLED)
    assert transcript.metadata["source_format"] == "gemini-stream-json"
    assert _reasons(transcript) == [_cut_off(1)]
    assert transcript.warnings[0].source == str(GEMINI_KILLED)
    _stopped_by_the_cut(transcript)
    assert _texts(transcript) == TEXTS
    # The read finished; the command was running (its outcome not recorded, L-3).
    assert _calls(transcript) == [("read_file", "success"), ("run_shell_command", "unknown")]
    assert transcript.tool_calls()[1].args["command"] == "echo TF-SLOW-START; sleep 45"
    _accounted(transcript, GEMINI_KILLED)


def test_L4_P7_a_killed_qwen_run_s_stream_is_warned_of_once_and_reads_stopped() -> None:
    """Qwen Code prints Claude Code's stream-json, read by the same reader and the same rule."""
    transcript = turnfold.load(QWEN_KILLED)
    assert transcript.metadata["agent"] == "qwen"
    assert _reasons(transcript) == [_cut_off(1)]
    _stopped_by_the_cut(transcript)
    assert _texts(transcript) == TEXTS
    assert _calls(transcript) == [("read_file", "success"), ("run_shell_command", "unknown")]
    read = transcript.tool_calls()[0]
    assert read.result is not None
    assert "TF-NOTE-LINE" in read.result.text
    _accounted(transcript, QWEN_KILLED)


def test_L4_P7_a_killed_codex_exec_stream_is_warned_of_once_and_reads_stopped() -> None:
    """``codex exec --json`` begins its run at ``turn.started`` (line 3, after the thread and a
    notice of the model's unknown metadata) and ends it with ``turn.completed`` or
    ``turn.failed``; the command running when the process was killed stays in progress."""
    transcript = turnfold.load(CODEX_KILLED)
    assert _reasons(transcript) == [_cut_off(3, "turn.completed or turn.failed")]
    _stopped_by_the_cut(transcript)
    assert _texts(transcript) == TEXTS
    assert _calls(transcript) == [("exec_command", "success"), ("exec_command", "unknown")]
    read = transcript.tool_calls()[0]
    assert read.result is not None
    assert "TF-NOTE-LINE" in read.result.text
    _accounted(transcript, CODEX_KILLED)


def test_L4_P7_a_killed_copilot_run_s_json_output_shows_what_the_running_call_printed() -> None:
    """``copilot -p --output-format json`` ends every run with a ``result``; killed, its stream
    has none. The command that was running keeps what it printed (the live-only
    ``tool.shell_output``), its outcome not recorded."""
    transcript = turnfold.load(COPILOT_KILLED)
    assert transcript.metadata["source_format"] == "copilot"
    assert _reasons(transcript) == [_cut_off(1)]
    _stopped_by_the_cut(transcript)
    assert _texts(transcript) == TEXTS
    assert _calls(transcript) == [("view", "success"), ("bash", "unknown")]
    running = transcript.tool_calls()[1]
    assert running.result is not None
    assert running.result.text == "TF-SLOW-START\n"
    _accounted(transcript, COPILOT_KILLED)


def test_L4_a_copilot_session_file_is_never_judged_cut_off() -> None:
    """``events.jsonl`` has no ``result`` at all: the rule is the printed stream's only."""
    assert turnfold.load(COPILOT_SESSION).warnings == []


# --- cursor-agent: a real stream cut before its result -------------------------------------


def _cut(path: Path, tmp_path: Path, keep: int) -> Path:
    cut = tmp_path / f"cut-{path.name}"
    cut.write_text("".join(_lines(path)[:keep]), encoding="utf-8")
    return cut


def test_L4_P7_a_cursor_agent_stream_cut_just_before_its_result_is_unfinished(
    tmp_path: Path,
) -> None:
    whole = turnfold.load(CURSOR)
    assert whole.warnings == []
    assert _turn_statuses(whole) == ["completed"]
    cut = turnfold.load(_cut(CURSOR, tmp_path, -1))
    assert _reasons(cut) == [_cut_off(1)]
    _stopped_by_the_cut(cut)
    assert [e.kind for e in cut.entries[:-1]] == [e.kind for e in whole.entries]
    assert _calls(cut) == [("Shell", "success"), ("Shell", "success")]
    assert _texts(cut)[-1] == "done"


def test_L4_P7_a_cursor_agent_stream_cut_while_its_calls_ran_keeps_them_unknown(
    tmp_path: Path,
) -> None:
    """Cut after both ``sleep`` calls started: the calls stay, without an outcome."""
    lines = _lines(CURSOR)
    started = [n for n, line in enumerate(lines, 1) if '"subtype":"started"' in line]
    path = _cut(CURSOR, tmp_path, started[-1])
    cut = turnfold.load(path)
    assert _reasons(cut) == [_cut_off(1)]
    _stopped_by_the_cut(cut)
    assert _calls(cut) == [("Shell", "unknown"), ("Shell", "unknown")]
    assert [c.args["command"] for c in cut.tool_calls()] == ["sleep 6", "sleep 4"]
    _accounted(cut, path)


# --- the rule is judged at the end of a whole read only ----------------------------------------


def test_L4_a_stream_cut_off_twice_over_is_warned_of_once_for_its_last_run(tmp_path: Path) -> None:
    """Two runs appended to one file, the first whole: only the second, begun on its own
    ``init`` line, was cut off."""
    path = tmp_path / "two-runs.jsonl"
    path.write_text(GEMINI_WHOLE.read_text() + GEMINI_KILLED.read_text())
    transcript = turnfold.load(path)
    assert _reasons(transcript) == [_cut_off(len(_lines(GEMINI_WHOLE)) + 1)]
    assert _turn_statuses(transcript) == ["completed", "stopped"]


Feed = Callable[[Source], tuple[Callable[[Any, int], None], Callable[[], Transcript]]]


def _gemini(source: Source) -> tuple[Callable[[Any, int], None], Callable[[], Transcript]]:
    reader = gemini_stream._Reader(source)
    return reader.event, lambda: reader.transcript


def _cursor(source: Source) -> tuple[Callable[[Any, int], None], Callable[[], Transcript]]:
    reader = cursor_stream._Reader(source)
    return reader.event, lambda: reader.transcript


def _codex(source: Source) -> tuple[Callable[[Any, int], None], Callable[[], Transcript]]:
    reader = codex_exec._Reader(source)
    return reader.event, lambda: reader.transcript


def _copilot(source: Source) -> tuple[Callable[[Any, int], None], Callable[[], Transcript]]:
    reader = copilot._Reader(source)
    return reader.event, lambda: reader.main.transcript


@pytest.mark.parametrize(
    ("path", "feed"),
    [(GEMINI_KILLED, _gemini), (GEMINI_WHOLE, _gemini), (CURSOR, _cursor),
     (CODEX_KILLED, _codex), (CODEX_WHOLE, _codex), (COPILOT_KILLED, _copilot),
     (COPILOT_WHOLE, _copilot)],
    ids=["gemini-killed", "gemini-whole", "cursor", "codex-killed", "codex-whole",
         "copilot-killed", "copilot-whole"],
)  # fmt: skip
def test_A2_a_stream_read_event_by_event_is_not_warned_of_as_it_goes(
    path: Path, feed: Feed
) -> None:
    """Every event but the last leaves a run without its end record: fed one event at a time,
    as a follower feeds them, no event is warned of as cut off, and no stop is added."""
    source, _ = open_source(path)
    event, transcript = feed(source)
    for line, record in source.records():
        event(record, line)
        assert source.warnings == []
        assert not any(isinstance(e, AbortMarker) for e in transcript())


@pytest.mark.parametrize("path", [QWEN_KILLED, QWEN_WHOLE], ids=["killed", "whole"])
def test_A2_a_qwen_stream_followed_live_is_never_warned_of_as_cut_off(path: Path) -> None:
    """Followed live (the Claude Agent SDK's follower's reader), a killed run is still running
    at its last event: no warning at any event, nor at the end, and no stop is made up."""
    source, _ = open_source(path)
    reader = StreamReader(source, live=True)
    for line, record in source.records():
        reader.feed(record, line)
        assert source.warnings == []
    transcript = reader.finish()
    assert source.warnings == []
    assert not any(isinstance(e, AbortMarker) and e.reason == UNFINISHED for e in transcript)


@pytest.mark.parametrize("path", [GEMINI_WHOLE, CODEX_WHOLE, CURSOR, COPILOT_WHOLE])
def test_L4_a_whole_stream_is_not_warned_of(path: Path) -> None:
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    assert not any(isinstance(e, AbortMarker) and e.reason == UNFINISHED for e in transcript)


def test_L4_the_terminal_says_a_killed_gemini_run_s_stream_is_unfinished(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", str(GEMINI_KILLED), "--width", "100"]) == 0
    captured = capsys.readouterr()
    assert "the stream ends inside the run begun on line 1 (no result)" in captured.err
    assert "Stopped" in captured.out


def test_the_killed_streams_end_inside_their_second_call() -> None:
    """What the fixtures are: each stream's last event is the second call's start, and no
    end record follows it (the recipe killed the process while that call ran)."""
    for path, ends in [(GEMINI_KILLED, {"result"}), (QWEN_KILLED, {"result"}),
                       (CODEX_KILLED, {"turn.completed", "turn.failed"}),
                       (COPILOT_KILLED, {"result"})]:  # fmt: skip
        types = Counter(json.loads(line)["type"] for line in _lines(path))
        assert not ends & set(types), path
        assert "TF-SLOW-START; sleep 45" in path.read_text(), path
