"""A ``claude -p --output-format stream-json`` stream cut off before its run's ``result``
(spec L-4, H-6, P-7).

``claude-code_v2.1.332_stream-json_killed.jsonl`` is the stdout of the real Claude Code 2.1.332
(``tests/agents``) against the harness's scripted model, its process group killed (SIGKILL)
while the run's second call (``sleep 45``) ran: the CLI wrote no ``result`` (recipe: the
folder's README). The other cut streams here are the real fixtures with their last lines
taken off, as a closed pipe or a copy taken while the run went on leaves them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import turnfold
from turnfold.cli import main
from turnfold.formats.agents.claude_stream import StreamReader
from turnfold.formats.common import UNFINISHED
from turnfold.formats.source import open_source
from turnfold.model import AbortMarker, AssistantText, Transcript
from turnfold.process import Turn, project

FIXTURES = Path(__file__).parents[1] / "fixtures" / "agents" / "claude-stream-json"
KILLED = FIXTURES / "claude-code_v2.1.332_stream-json_killed.jsonl"
TOKENS_FIRST = FIXTURES / "claude-code_v2.1.332_stream-json_tokens-first.jsonl"
TWO_PROMPTS = FIXTURES / "claude-code_v2.1.332_stream-json_tokens-two-prompts.jsonl"
INTERRUPTED = FIXTURES / "claude-code_v2.1.332_stream-json_interrupted.jsonl"
QWEN_FIRST = FIXTURES.parent / "qwen-stream-json" / (
    "qwen-code_v0.24.4_stream-json_tokens-first.jsonl")  # fmt: skip


def _turn_statuses(transcript: Transcript) -> list[str]:
    return [item.header.status for item in project(transcript) if isinstance(item, Turn)]


def _cut(path: Path, tmp_path: Path, keep: int) -> Path:
    """``path`` with only its first ``keep`` lines (negative: all but the last ``-keep``)."""
    lines = path.read_text().splitlines(keepends=True)
    cut = tmp_path / f"cut-{path.name}"
    cut.write_text("".join(lines[:keep]))
    return cut


def _reasons(transcript: Transcript) -> list[str]:
    return [w.reason for w in transcript.warnings]


def test_L4_a_killed_run_s_stream_says_it_ends_before_its_result() -> None:
    transcript = turnfold.load(KILLED)
    assert _reasons(transcript) == [
        "the stream ends inside the run begun on line 1 (no result): how that run ended is "
        "not recorded"
    ]
    assert transcript.warnings[0].source == str(KILLED)


def test_P7_a_killed_run_s_turn_is_stopped_not_completed_and_keeps_what_it_did() -> None:
    """Everything the stream holds is still shown: both texts, the read that finished, the
    command that was running (its outcome not recorded, L-3); the turn reads stopped."""
    transcript = turnfold.load(KILLED)
    assert [e.text for e in transcript if isinstance(e, AssistantText)] == [
        "TF-LOOK: reading the notes first.",
        "TF-NOTES-READ: the notes say to run the slow job; running it now.",
    ]
    calls = [(c.name, c.status) for c in transcript.tool_calls()]
    assert calls == [("Read", "success"), ("Bash", "unknown")]
    read = transcript.tool_calls()[0]
    assert read.result is not None
    assert "TF-NOTE-LINE" in read.result.text
    last = transcript.entries[-1]
    assert isinstance(last, AbortMarker)
    assert last.reason == UNFINISHED
    assert _turn_statuses(transcript) == ["stopped"]
    assert transcript.metadata["outcome"] == "incomplete"


def test_L4_a_whole_run_cut_just_before_its_result_is_unfinished(tmp_path: Path) -> None:
    """The real run of a sub-agent and an answer, its ``result`` line lost: the answer is
    there, but the run's end is not, so the turn does not claim to have completed."""
    whole = turnfold.load(TOKENS_FIRST)
    assert whole.warnings == []
    assert _turn_statuses(whole) == ["completed"]
    assert whole.metadata["outcome"] == "pass"
    cut = turnfold.load(_cut(TOKENS_FIRST, tmp_path, -1))
    assert _reasons(cut) == [
        "the stream ends inside the run begun on line 1 (no result): how that run ended is "
        "not recorded"
    ]
    assert _turn_statuses(cut) == ["stopped"]
    assert cut.metadata["outcome"] == "incomplete"
    assert [e.kind for e in cut.entries[:-1]] == [e.kind for e in whole.entries]


def test_L4_the_warning_names_the_run_that_was_cut_off_of_several(tmp_path: Path) -> None:
    """Two prompts in one process, the stream cut before the second's ``result``: the first
    run finished (its turn completed), the second began on its own ``init`` line."""
    lines = TWO_PROMPTS.read_text().splitlines()
    second_init = [n for n, text in enumerate(lines, 1) if '"subtype":"init"' in text][1]
    cut = turnfold.load(_cut(TWO_PROMPTS, tmp_path, -1))
    assert _reasons(cut) == [
        f"the stream ends inside the run begun on line {second_init} (no result): how that "
        "run ended is not recorded"
    ]
    assert _turn_statuses(cut) == ["completed", "stopped"]


def test_P7_a_stream_cut_after_the_cli_s_own_interrupt_gets_no_second_stop(
    tmp_path: Path,
) -> None:
    """The CLI's ``[Request interrupted…]`` already ends the turn stopped: the cut stream is
    warned of, its turn keeps the one stop the CLI wrote."""
    cut = turnfold.load(_cut(INTERRUPTED, tmp_path, -1))
    assert len(_reasons(cut)) == 1
    stops = [e.reason for e in cut if isinstance(e, AbortMarker)]
    assert stops == ["Request interrupted by user for tool use"]


@pytest.mark.parametrize("path", [KILLED, TOKENS_FIRST, QWEN_FIRST], ids=["killed", "whole",
                                                                          "qwen"])  # fmt: skip
def test_A2_a_stream_followed_live_is_never_warned_of_as_cut_off(path: Path) -> None:
    """Followed live, every event leaves a run without its ``result`` until the last one: no
    warning at any event, nor at the end (following records an interrupt or error itself)."""
    source, _ = open_source(path)
    reader = StreamReader(source, live=True)
    for line, record in source.records():
        reader.feed(record, line)
        assert reader.main.transcript.warnings == []
        assert source.warnings == []
    transcript = reader.finish()
    assert source.warnings == []
    assert transcript.warnings == []
    assert not any(isinstance(e, AbortMarker) and e.reason == UNFINISHED for e in transcript)


def test_L4_a_whole_qwen_stream_is_not_warned_of() -> None:
    assert turnfold.load(QWEN_FIRST).warnings == []


def test_L4_the_terminal_says_a_killed_run_s_stream_is_unfinished(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["show", str(KILLED), "--width", "100"]) == 0
    captured = capsys.readouterr()
    assert "the stream ends inside the run begun on line 1 (no result)" in captured.err
    assert "Stopped" in captured.out
