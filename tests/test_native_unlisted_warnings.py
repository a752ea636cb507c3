"""A transcript with more warnings than a source lists round-trips through turnfold's own
format: the warning that counts the rest (``UnlistedWarnings``) is dumped with its count and
read back as itself, the count and the type kept (spec L-2.1 ``load(dump(t)) == t``, L-4).

The session is the real one in tests/fixtures/claude-code/v2.1.332_real_api-retry-then-error
.jsonl (Claude Code 2.1.332, tests/fixtures/SOURCES.md) with bad lines written into it here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import turnfold
from turnfold import SubAgent, ToolCall, Transcript
from turnfold.formats.source import MAX_LISTED_WARNINGS, UnlistedWarnings, warning_count

SESSION = Path(__file__).parent / "fixtures" / "claude-code"
SESSION /= "v2.1.332_real_api-retry-then-error.jsonl"
LAYOUTS = ["jsonl", "json"]
#: Bad lines past the listed warnings.
PAST = 234


def past_the_cap(tmp_path: Path) -> turnfold.Transcript:
    """The real session with more bad lines than a source lists, after its first line."""
    first, *rest = SESSION.read_text(encoding="utf-8").splitlines(keepends=True)
    bad = [f"not json {n}\n" for n in range(MAX_LISTED_WARNINGS + PAST)]
    path = tmp_path / "session.jsonl"
    path.write_text("".join([first, *bad, *rest]), encoding="utf-8")
    loaded = turnfold.load(path)
    assert type(loaded.warnings[-1]) is UnlistedWarnings
    # Besides the bad lines, what the session itself warns of (an excerpt: parents left out).
    own = warning_count(turnfold.load(SESSION).warnings)
    assert warning_count(loaded.warnings) == own + MAX_LISTED_WARNINGS + PAST
    assert loaded.entries  # the session's own entries, read around the bad lines
    return loaded


@pytest.mark.parametrize("layout", LAYOUTS)
def test_L2_a_transcript_past_the_warning_cap_round_trips(tmp_path: Path, layout: str) -> None:
    original = past_the_cap(tmp_path)
    dumped = original.dump(layout=layout)  # type: ignore[arg-type]
    loaded = turnfold.load(dumped)
    # It read as one "unknown field(s) count" problem, counted in place of the 234.
    assert loaded == original
    assert loaded.warnings == original.warnings
    assert type(loaded.warnings[-1]) is UnlistedWarnings
    assert warning_count(loaded.warnings) == warning_count(original.warnings)
    assert str(loaded.warnings[-1]) == str(original.warnings[-1])
    assert loaded.dump(layout=layout) == dumped  # type: ignore[arg-type]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_L2_a_sub_agent_s_transcript_past_the_warning_cap_round_trips(
    tmp_path: Path, layout: str
) -> None:
    child = past_the_cap(tmp_path)
    call = ToolCall(call_id="t1", name="Task", subagent=SubAgent(name="r", transcript=child))
    original = Transcript([call])
    loaded = turnfold.load(original.dump(layout=layout))  # type: ignore[arg-type]
    assert loaded == original
    assert loaded.warnings == []  # nothing of the sub-agent's left unread
    [nested] = loaded.tool_calls()
    assert nested.subagent is not None
    assert nested.subagent.transcript is not None
    assert warning_count(nested.subagent.transcript.warnings) == warning_count(child.warnings)


def test_L2_a_dump_past_the_cap_written_before_this_change_loads() -> None:
    # The last warning line exactly as turnfold wrote it before (a load past the cap of 1,000
    # listed warnings), which its loader refused.
    listed = "".join(
        f'{{"warning":{{"reason":"invalid JSON","line":{n},"source":"<bytes>"}}}}\n'
        for n in range(2, MAX_LISTED_WARNINGS + 2)
    )
    count = (
        '{"warning":{"reason":"5 more problem(s) like those above, not listed one by one",'
        '"line":1002,"source":"<bytes>","count":5}}\n'
    )
    loaded = turnfold.load('{"turnfold":1,"metadata":{}}\n' + listed + count)
    assert len(loaded.warnings) == MAX_LISTED_WARNINGS + 1
    unlisted = loaded.warnings[-1]
    assert type(unlisted) is UnlistedWarnings
    assert (unlisted.count, unlisted.line, unlisted.source) == (5, 1002, "<bytes>")
    assert warning_count(loaded.warnings) == MAX_LISTED_WARNINGS + 5


def test_L4_bad_lines_of_the_dump_itself_join_its_count(tmp_path: Path) -> None:
    original = past_the_cap(tmp_path)
    dumped = original.dump() + "".join(f"broken {n}\n" for n in range(7))
    loaded = turnfold.load(dumped)
    assert len(loaded.warnings) == MAX_LISTED_WARNINGS + 1
    assert loaded.warnings[:-1] == original.warnings[:-1]
    assert warning_count(loaded.warnings) == warning_count(original.warnings) + 7


@pytest.mark.parametrize(
    ("count", "shown"),
    [("0", "0"), ("-3", "-3"), ("true", "True"), ('"5"', "'5'"), ("2.5", "2.5"), ("null", "None")],
)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_L4_a_count_of_no_positive_whole_number_is_a_warning(
    count: str, shown: str, layout: str
) -> None:
    recorded = f'{{"reason": "r", "line": 9, "count": {count}}}'
    where: tuple[str, int | None]
    if layout == "jsonl":
        text = '{"turnfold": 1}\n{"warning": {"reason": "kept", "line": 1}}\n'
        text += f'{{"warning": {recorded}}}\n'
        where = ("<text>", 3)
    else:
        text = '{"turnfold": 1, "entries": [], "warnings": [{"reason": "kept", "line": 1}, '
        text += f"{recorded}]}}"
        where = ("<text>", None)
    loaded = turnfold.load(text)
    kept, warning = loaded.warnings
    assert (kept.reason, kept.line) == ("kept", 1)
    assert type(warning) is not UnlistedWarnings
    assert (warning.source, warning.line) == where
    assert f"count: {shown} is not a positive whole number" in warning.reason
