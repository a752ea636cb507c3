"""The warning counts a user sees are the real counts, past the listed ones (spec L-4, C-2, X-1).

Past :data:`~turnfold.formats.source.MAX_LISTED_WARNINGS` a load only counts its warnings, in one
:class:`~turnfold.formats.source.UnlistedWarnings`: the notice, the corpus row's ``warnings``
and the CLI's summary say how many there were, not how long the list is; lists of warnings
joined (a sub-agent's into its parent's, a source's into its transcript's) keep the rule: the
listed ones first, up to the bound, then one count of the rest.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold import scan
from turnfold.cli import _say_warnings
from turnfold.formats import source
from turnfold.formats.source import (
    MAX_LISTED_WARNINGS,
    Source,
    UnlistedWarnings,
    join_warnings,
    keep_warning,
    warning_count,
)
from turnfold.model import LoadWarning
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

FIXTURES = Path(__file__).parent / "fixtures"
#: A real Codex rollout (``codex exec``, v0.129): it loads without a warning.
ROLLOUT = FIXTURES / "codex_rollout_v0.129_two-turns.jsonl"
BAD_LINES = 1_200


@pytest.fixture
def broken_rollout(tmp_path: Path) -> Path:
    """The real rollout with 1,200 lines that are not JSON after its records."""
    path = tmp_path / "rollout.jsonl"
    shutil.copyfile(ROLLOUT, path)
    with path.open("a") as out:
        out.writelines(f"not json {n}\n" for n in range(BAD_LINES))
    return path


def test_L4_a_load_past_the_listed_warnings_says_how_many_there_were(broken_rollout: Path) -> None:
    assert turnfold.load(ROLLOUT).warnings == []
    transcript = turnfold.load(broken_rollout)
    assert len(transcript.warnings) == MAX_LISTED_WARNINGS + 1  # the listed ones and the count
    assert warning_count(transcript.warnings) == BAD_LINES

    notice = build_view_model(transcript)["notice"]
    assert notice is not None
    assert notice["text"] == (
        f"Loaded with {BAD_LINES} problems: some records may not be shown; "
        f"the first {MAX_LISTED_WARNINGS} are listed, the rest counted"
    )
    assert len(notice["items"]) == MAX_LISTED_WARNINGS + 1
    assert notice["items"][-1].endswith(
        f"{BAD_LINES - MAX_LISTED_WARNINGS} more problem(s) like those above, not listed one by one"
    )
    zh = build_view_model(transcript, DisplaySettings(locale="zh"))["notice"]
    assert zh is not None
    assert zh["text"].startswith(f"加载时出现 {BAD_LINES} 个问题")
    assert f"列出前 {MAX_LISTED_WARNINGS} 个" in zh["text"]

    said = io.StringIO()
    _say_warnings(broken_rollout, transcript, said)
    assert f": {BAD_LINES} problems while loading" in said.getvalue()


def test_L4_a_load_with_every_warning_listed_keeps_its_notice() -> None:
    transcript = turnfold.load(ROLLOUT)
    transcript.warnings.append(LoadWarning(reason="invalid JSON", line=3, source="r.jsonl"))
    notice = build_view_model(transcript)["notice"]
    assert notice is not None
    assert notice["text"] == "Loaded with 1 problem: some records may not be shown"


def test_C2_a_corpus_row_counts_the_warnings_past_the_listed_ones(broken_rollout: Path) -> None:
    corpus = scan(broken_rollout.parent, workers=1, cache=False)
    (row,) = list(corpus)
    assert row["error"] is None
    assert row["warnings"] == BAD_LINES


# --- lists joined ------------------------------------------------------------------------------

LISTED = 3


@pytest.fixture
def few_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source, "MAX_LISTED_WARNINGS", LISTED)


def kept(count: int, name: str, first_line: int = 1) -> list[LoadWarning]:
    """A list of ``count`` warnings as a source keeps them (past :data:`LISTED`, counted)."""
    warnings: list[LoadWarning] = []
    for line in range(first_line, first_line + count):
        keep_warning(warnings, LoadWarning(reason="bad", line=line, source=name))
    return warnings


def test_X1_two_lists_past_the_listed_ones_joined_stay_listed_then_counted(
    few_listed: None,
) -> None:
    parent, child = kept(5, "parent"), kept(6, "child", first_line=10)
    shared = child[-1]
    join_warnings(parent, child)
    assert len(parent) == LISTED + 1
    assert [w.line for w in parent[:LISTED]] == [1, 2, 3]
    assert isinstance(parent[-1], UnlistedWarnings)
    assert warning_count(parent) == 11
    assert isinstance(shared, UnlistedWarnings)
    assert shared.count == 3  # the child's left as it was


def test_X1_a_list_joined_before_puts_its_listed_ones_first(few_listed: None) -> None:
    own = [LoadWarning(reason="own", line=50)]
    join_warnings(own, kept(5, "source"), before=True)
    assert [w.source for w in own[:LISTED]] == ["source"] * LISTED
    assert len(own) == LISTED + 1
    assert warning_count(own) == 6


def test_X1_a_count_joined_to_fewer_listed_ones_is_counted_and_stays_last(
    few_listed: None,
) -> None:
    # A run's share of its file's warnings may be the count alone (its line past the listed).
    run = [LoadWarning(reason="run's own", line=7)]
    join_warnings(run, [UnlistedWarnings(reason="", line=4, count=2)], before=True)
    assert [type(w) for w in run] == [LoadWarning, UnlistedWarnings]
    assert warning_count(run) == 3
    keep_warning(run, LoadWarning(reason="said after", line=9))
    assert [w.line for w in run] == [7, 9, 4]  # listed before the count ("like those above")
    assert warning_count(run) == 4


def test_X1_a_sub_agent_file_past_the_listed_warnings_joins_its_parents_capped(
    few_listed: None, tmp_path: Path
) -> None:
    # Kimi's sub-agent wire file (formats/agents/kimi.py) joins its warnings to the session's;
    # a real session of kimi-cli (tests/fixtures/kimi/kimi_recipe.py).
    folder = tmp_path / "session"
    shutil.copytree(next((FIXTURES / "kimi" / "work").glob("session_*")), folder)
    parent = folder / "agents" / "main" / "wire.jsonl"
    # Before the sub-agent is read: the session's list is already past its listed ones.
    lines = parent.read_text().splitlines(keepends=True)
    parent.write_text("".join([*lines[:3], *(f"parent junk {n}\n" for n in range(5)), *lines[3:]]))
    with (folder / "agents" / "agent-0" / "wire.jsonl").open("a") as out:
        out.writelines(f"child junk {n}\n" for n in range(6))
    transcript = turnfold.load(folder)
    assert warning_count(transcript.warnings) == 11
    assert len(transcript.warnings) == LISTED + 1
    assert sum(isinstance(w, UnlistedWarnings) for w in transcript.warnings) == 1


# --- CrewAI outputs tallied after they are read ------------------------------------------------


def test_X2_crewai_a_task_output_that_warned_is_tallied_warned(tmp_path: Path) -> None:
    saved = json.loads(
        (FIXTURES / "crewai" / "crewai_v1.15.30_crew-output_two-tasks.json").read_text()
    )
    saved["tasks_output"][0]["tool_failures"] = ["no object"]
    path = tmp_path / "crew.json"
    path.write_text(json.dumps(saved))
    transcript = turnfold.load(path, format="crewai")
    assert [w.reason for w in transcript.warnings] == ["a tool failure that is no object not read"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["task_output"] == {"warned": 1, "mapped": 1}


def test_X2_crewai_an_agent_output_that_warned_is_tallied_warned(tmp_path: Path) -> None:
    saved = json.loads((FIXTURES / "crewai" / "crewai_v1.15.30_agent-kickoff.json").read_text())
    saved["tool_failures"] = [7]
    path = tmp_path / "agent.json"
    path.write_text(json.dumps(saved))
    transcript = turnfold.load(path, format="crewai")
    assert [w.reason for w in transcript.warnings] == ["a tool failure that is no object not read"]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["agent_output"] == {"warned": 1}


def test_X1_a_record_s_count_moved_alone_joins_its_source_s_count_whole(
    few_listed: None,
) -> None:
    """A builder's warnings of one record that are only a count (its own list past the listed
    ones) reach a source that lists fewer than the bound as the whole count, the record
    accounted as warned once (the count was said as one plain warning, the rest lost)."""
    record = {"type": "message"}
    src = Source("s.jsonl", iter([(1, record)]))
    for line, value in src.records():
        assert (line, value) == (1, record)
        src.take_warnings([UnlistedWarnings(reason="", line=1, count=5)], 1,
                          record_type="message")  # fmt: skip
    assert warning_count(src.warnings) == 5
    assert [type(w) for w in src.warnings] == [UnlistedWarnings]
    assert src.accounting.counts["message"] == {"warned": 1}
