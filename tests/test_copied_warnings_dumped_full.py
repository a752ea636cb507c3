"""A sub-agent's warnings its reader copied into a session's list already full are counted once
in a dump loaded again too (spec L-2.1 ``load(dump(t)) == t``, L-4: the notice, the corpus row
and the command's stderr say the number the original's view does).

Past ``MAX_LISTED_WARNINGS`` the session's list only counts the copies, and knows them by the
chain its count joined (``UnlistedWarnings.joined``): objects of the load, which a dump did
not write, so that the copies read back counted twice (Cursor: 1,005 + 3 problems read as
1,011). A dump now writes with the count one warning of each sub-agent's list it holds, never
the chain itself, which a load of many parts makes as long as the parts are many; a dump
written before reads as it always did.

The Cursor session is the real tool's fixture with bad lines added, as
``tests/test_copied_warnings_full_list.py`` builds it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest

import turnfold
import turnfold.corpus
from tests.test_copied_warnings_full_list import (
    SESSION_BAD,
    SUBAGENT_BAD,
    assert_counted_once,
    cursor_session,
    own_warnings,
    run,
    subagent_transcripts,
)
from turnfold.formats.source import (
    MAX_LISTED_WARNINGS,
    UnlistedWarnings,
    join_warnings,
    warning_count,
)
from turnfold.model import LoadWarning, Transcript
from turnfold.nesting import copies_counted, warning_total
from turnfold.render.viewmodel import build_view_model

LAYOUTS: list[Literal["jsonl", "json"]] = ["jsonl", "json"]
#: Lists joined to a full one, each a link of its count's chain.
PARTS = 10_000


def notice_of(transcript: Transcript) -> dict[str, Any]:
    notice = build_view_model(transcript)["notice"]
    assert notice is not None
    return {"text": notice["text"], "items": notice["items"]}


def last_count(transcript: Transcript) -> UnlistedWarnings:
    count = transcript.warnings[-1]
    assert type(count) is UnlistedWarnings
    return count


@pytest.mark.parametrize("layout", LAYOUTS)
def test_L4_a_cursor_session_past_the_cap_dumped_and_loaded_again_counts_each_problem_once(
    tmp_path: Path, layout: Literal["jsonl", "json"], capsys: pytest.CaptureFixture[str]
) -> None:
    loaded = turnfold.load(cursor_session(tmp_path / "read"))
    assert_counted_once(loaded)
    dumped = loaded.dump(layout=layout)
    again = turnfold.load(dumped)
    assert again == loaded
    # The notice, warning_total and the sub-agent's own list, as the original's.
    assert_counted_once(again)
    assert notice_of(again) == notice_of(loaded)
    (child,) = subagent_transcripts(again)
    assert len(child.warnings) == SUBAGENT_BAD  # the sub-agent keeps its own, as read
    # Written again as it was: the copies are known by what the loaded count holds.
    assert again.dump(layout=layout) == dumped

    # The corpus row and the command's stderr of the dump's file say the original's number.
    folder = tmp_path / "dumped"
    folder.mkdir()
    path = folder / ("session.jsonl" if layout == "jsonl" else "session.json")
    path.write_text(dumped, encoding="utf-8")
    (row,) = turnfold.corpus.scan(folder, workers=1, cache=False).rows
    assert row["warnings"] == SESSION_BAD + SUBAGENT_BAD
    from turnfold.cli import main

    assert main(["render", str(path), "-o", str(tmp_path / "page.html")]) == 0
    assert f"{SESSION_BAD + SUBAGENT_BAD} problems while loading" in capsys.readouterr().err


def test_L4_the_count_writes_one_of_the_sub_agent_s_copies_with_its_fields() -> None:
    """What the dump writes: the count's fields as before, then, as ``joined``, the first of
    the sub-agent's warnings the count holds (its list, written whole inside its call, holds
    the rest)."""
    top, child = Transcript(), Transcript()
    own_warnings(child, 3, "c.jsonl")
    own_warnings(top, MAX_LISTED_WARNINGS, "t.jsonl")
    join_warnings(top.warnings, child.warnings)
    run(top, child, "c1")
    reason = "3 more problem(s) like those above, not listed one by one"
    assert json.loads(top.dump().splitlines()[-1]) == {
        "warning": {
            "reason": reason,
            "line": 1,
            "source": "c.jsonl",
            "count": 3,
            "joined": [{"reason": "bad", "line": 1, "source": "c.jsonl"}],
        }
    }


def test_L4_a_count_that_joined_ten_thousand_lists_writes_one_warning_per_sub_agent() -> None:
    """A load of many parts joins each part's list to the session's, one link of the chain
    each: the dump writes none of them, only one warning of each sub-agent whose copies the
    count holds (two here, in the order they nest), however many were joined."""
    top, first, second = Transcript(), Transcript(), Transcript()
    own_warnings(top, MAX_LISTED_WARNINGS, "t.jsonl")
    own_warnings(first, 40, "first.jsonl")
    own_warnings(second, 2, "second.jsonl")
    join_warnings(top.warnings, first.warnings)
    for part in range(PARTS):
        join_warnings(top.warnings, [LoadWarning(reason="bad", line=part, source="parts")])
    join_warnings(top.warnings, second.warnings)
    run(top, first, "a1")
    run(top, second, "a2")
    total = MAX_LISTED_WARNINGS + 40 + PARTS + 2
    assert warning_total(top) == total
    dumped = top.dump()
    written = json.loads(dumped.splitlines()[-1])["warning"]["joined"]
    assert [(w["source"], w["line"]) for w in written] == [("first.jsonl", 1), ("second.jsonl", 1)]
    again = turnfold.load(dumped)
    assert warning_total(again) == total
    assert last_count(again).joined == (first.warnings[0], second.warnings[0])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_L4_a_grandchild_s_copies_in_two_full_lists_count_once_after_a_dump(
    layout: Literal["jsonl", "json"],
) -> None:
    """The grandchild's warnings joined to its parent's full list, the parent's to the top's:
    each level's count writes what it holds (the top's the parent's and the grandchild's)."""
    top, child, grandchild = Transcript(), Transcript(), Transcript()
    own_warnings(grandchild, 2, "g.jsonl")
    own_warnings(child, MAX_LISTED_WARNINGS, "c.jsonl")
    join_warnings(child.warnings, grandchild.warnings)
    own_warnings(top, MAX_LISTED_WARNINGS, "t.jsonl")
    join_warnings(top.warnings, child.warnings)
    run(child, grandchild, "inner")
    run(top, child, "outer")
    again = turnfold.load(top.dump(layout=layout))
    assert again == top
    assert warning_total(again) == warning_total(top) == 2 * MAX_LISTED_WARNINGS + 2
    assert notice_of(again) == notice_of(top)
    copies = copies_counted(again)
    assert [len(found) for found in copies.values()] == [2, 1]  # the top's, the child's


def test_L4_copies_of_a_sub_agent_no_call_runs_are_not_written() -> None:
    """A list joined to the session's whose transcript no call runs: the notice has nothing of
    it to tell apart, and the dump writes the count alone, as before."""
    top, lost = Transcript(), Transcript()
    own_warnings(lost, 3, "lost.jsonl")
    own_warnings(top, MAX_LISTED_WARNINGS, "t.jsonl")
    join_warnings(top.warnings, lost.warnings)
    assert copies_counted(top) == {}
    assert "joined" not in json.loads(top.dump().splitlines()[-1])["warning"]


def old_dump(count_line: str) -> str:
    """A dump as turnfold wrote it before counts held their copies (formats/native.py of
    commit da06af9): a call whose sub-agent read two bad lines, the session's list full, and
    its count, which holds the sub-agent's two, written with its fields only."""
    subagent = {
        "turnfold": 1,
        "metadata": {},
        "entries": [],
        "warnings": [{"reason": "bad", "line": n, "source": "c.jsonl"} for n in (1, 2)],
    }
    call = {"kind": "tool_call", "id": "e0", "call_id": "c1", "name": "Task",
            "subagent": {"name": "c1", "transcript": subagent}}  # fmt: skip
    lines = ['{"turnfold":1,"metadata":{}}', json.dumps(call, separators=(",", ":"))]
    lines += [
        f'{{"warning":{{"reason":"bad","line":{n},"source":"t.jsonl"}}}}'
        for n in range(1, MAX_LISTED_WARNINGS + 1)
    ]
    return "\n".join([*lines, count_line]) + "\n"


OLD_COUNT = (
    '{"warning":{"reason":"2 more problem(s) like those above, not listed one by one",'
    '"line":1,"source":"c.jsonl","count":2}}'
)


def test_L2_a_dump_written_before_counts_held_their_copies_still_loads() -> None:
    """It does not say which of its count are a sub-agent's copies: it reads as it always did,
    each of its lines read, the count with nothing joined, the sub-agent's own listed apart."""
    loaded = turnfold.load(old_dump(OLD_COUNT))
    assert len(loaded.warnings) == MAX_LISTED_WARNINGS + 1
    assert all(w.source == "t.jsonl" for w in loaded.warnings[:-1])  # no problem of its own
    count = last_count(loaded)
    assert (count.count, count.line, count.source, count.joined) == (2, 1, "c.jsonl", ())
    assert warning_count(loaded.warnings) == MAX_LISTED_WARNINGS + 2
    # Nothing says the sub-agent's two are among the count's: they are counted again.
    assert warning_total(loaded) == MAX_LISTED_WARNINGS + 2 + 2
    # Written again, it says what it said: no copy is made up.
    again = turnfold.load(loaded.dump())
    assert again == loaded
    assert warning_total(again) == warning_total(loaded)


@pytest.mark.parametrize(
    ("joined", "said", "read"),
    [
        ('"c.jsonl"', "warning field joined: 'c.jsonl' is not a list; left out", 0),
        ("[7]", "warning field joined[0]: 7 is not a warning object; left out", 0),
        (
            '[{"reason":"bad","line":1,"source":"c.jsonl","count":2,"joined":[]}]',
            "warning field joined[0]: unknown field(s) joined for UnlistedWarnings; left out",
            0,
        ),
        (  # a field read as its default: the copy is kept, and holds no copy of its list
            '[{"reason":"bad","line":"1","source":"c.jsonl"}]',
            "warning field joined[0].line: '1' is not an integer or null (a number written as text "
            "is not read as one); left out",
            1,
        ),
    ],
)
def test_L4_copies_a_count_cannot_read_are_warnings_naming_its_line(
    joined: str, said: str, read: int
) -> None:
    """A hand-written or corrupt ``joined``: the count is kept with what of it reads, the rest
    a warning on its line; the sub-agent's copies not known are counted again as its own."""
    header, call, *_ = old_dump(OLD_COUNT).splitlines()
    line = OLD_COUNT[:-2] + f',"joined":{joined}}}}}'
    loaded = turnfold.load(f"{header}\n{call}\n{line}\n")
    *problems, count = loaded.warnings
    assert [(w.line, w.source, w.reason) for w in problems] == [(3, "<text>", said)]
    assert type(count) is UnlistedWarnings
    assert (count.count, len(count.joined)) == (2, read)
    assert warning_total(loaded) == 1 + 2 + 2


def test_L4_copies_a_json_layout_count_cannot_read_name_their_place() -> None:
    """The JSON layout numbers no lines: its problem names the warning and the copy."""
    text = json.dumps(
        {
            "turnfold": 1,
            "entries": [],
            "warnings": [
                {"reason": "bad", "line": 1, "source": "t.jsonl"},
                {"reason": "r", "line": 2, "source": "c.jsonl", "count": 4, "joined": [None]},
            ],
        }
    )
    loaded = turnfold.load(text)
    assert [w.reason for w in loaded.warnings[1:] if type(w) is not UnlistedWarnings] == [
        "warnings[1].joined[0]: None is not a warning object; left out"
    ]
    assert warning_count(loaded.warnings) == 1 + 4 + 1
