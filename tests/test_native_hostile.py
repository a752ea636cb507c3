"""A hostile or corrupt turnfold dump (spec L-4, X-1): a value not of its field's declared type
is a warning naming the file, the line (or entry) and the field, the field read as its default,
and every view still draws everything else the file holds.

The cases are made from the model's dataclasses (:func:`_field_cases`): a field added to
``turnfold.model`` is covered here with no change to this file.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NamedTuple

import pytest

import turnfold
from tests.test_model_and_native_format import SAMPLES, make_full_transcript
from turnfold.corpus import scan
from turnfold.formats.native import entry_to_dict
from turnfold.model import ENTRY_TYPES, ToolCall, Transcript, Wording
from turnfold.render.page import render_page
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.widget import TranscriptWidget

HEADER = {"turnfold": 1, "metadata": {"model": "claude-x-1"}}
PROMPT = {"kind": "user", "id": "prompt", "text": "Fix the failing test"}
ANSWER = {"kind": "assistant", "id": "answer", "text": "Fixed: the import order."}
#: The hostile entry's line: after the header and the prompt.
LINE = 3

Path_ = tuple[str | int, ...]


class Case(NamedTuple):
    kind: str  # the entry kind whose sample is made hostile
    path: Path_  # where in the entry's dump, field names and list positions
    value: Any  # the value written there
    #: "default": the entry loads with that field at its default (a list item: left out);
    #: "unreadable": the entry holds a record that cannot be read at all, and is skipped.
    outcome: Literal["default", "unreadable"]
    #: The field the warning of an unreadable entry names (a dict's key is no field).
    field: str = ""

    @property
    def id(self) -> str:
        return f"{self.kind}.{_dotted(self.path)}={json.dumps(self.value)}"


def _dotted(path: Path_) -> str:
    """A path as the loader's warning names it: ``subagent.usage.input_tokens``, ``images[0]``."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else f".{step}" if text else step
    return text


def _wrong_scalars(tp: Any) -> list[Any]:
    """JSON values that are not of the declared scalar type ``tp``: the wrong type, and for a
    number the same number written as text (which a dump never holds, so is no number)."""
    if typing.get_origin(tp) is Literal:
        return ["telepathy", 5]
    return {
        str: [5, ["x"]],
        int: ["3", 1.5, True],
        float: ["2.5", "x", False],
        bool: ["yes", 1],
    }[tp]


def _record(tp: Any) -> type[Any] | None:
    return tp if isinstance(tp, type) and dataclasses.is_dataclass(tp) else None


def _field_cases(kind: str, cls: type[Any], path: Path_, wording: bool) -> Iterator[Case]:
    """Hostile values for every field of ``cls`` (and of the records it holds), from its
    declared types. Inside a :class:`~turnfold.model.Wording` every bad value makes the entry
    unreadable: its params are formatted into a catalog's message (the i18n tests' rule)."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp, here = hints[f.name], (*path, f.name)
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        plain: Literal["default", "unreadable"] = "unreadable" if wording or required else "default"
        members = [m for m in typing.get_args(tp) if m is not type(None)]
        if typing.get_origin(tp) in (typing.Union, types.UnionType) and len(members) == 1:
            tp = members[0]
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if tp is Any:
            continue  # any JSON value is one (a call's args, a result's structured value)
        if tp is Transcript:  # its entries' fields: the sub-agent test below
            yield Case(kind, here, 5, "unreadable")
            continue
        if (record := _record(tp)) is not None:
            yield Case(kind, here, 5, "unreadable")  # a record's shape, not a value
            yield from _field_cases(kind, record, here, wording or record is Wording)
            continue
        if origin is list:
            yield Case(kind, here, "x", plain)
            if (item := _record(args[0])) is not None:
                yield Case(kind, (*here, 0), 5, "unreadable")
                yield from _field_cases(kind, item, (*here, 0), wording)
            elif args[0] is not Any:
                yield Case(kind, (*here, 1), 5, "unreadable" if wording else "default")
            continue
        if origin is dict:
            yield Case(kind, here, "x", plain)
            if args[1] is not Any:
                outcome: Literal["default", "unreadable"] = "unreadable" if wording else "default"
                yield Case(kind, (*here, "k"), 5, outcome, f.name)
            continue
        for value in _wrong_scalars(tp):
            yield Case(kind, here, value, plain)


CASES = [case for kind, cls in ENTRY_TYPES.items() for case in _field_cases(kind, cls, (), False)]


def _set(document: Any, path: Path_, value: Any) -> None:
    """Write ``value`` at ``path`` in an entry's dump, making the objects and list items on the
    way that a sample leaves at their default (and so out of its dump)."""
    for step, following in itertools.pairwise(path):
        if isinstance(step, int):
            while len(document) <= step:
                document.append({} if isinstance(following, str) else [])
            document = document[step]
        else:
            if not isinstance(document.get(step), (dict, list)):
                document[step] = [] if isinstance(following, int) else {}
            document = document[step]
    if isinstance(path[-1], int):
        while len(document) <= path[-1]:
            document.append("ok")
    document[path[-1]] = value


def _defaulted(value: Any, path: Path_) -> Any:
    """``value`` (a loaded sample) with the field at ``path`` at its default, or the list item
    at ``path`` left out: what a reader of the hostile entry should see."""
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        if not rest:
            return [v for i, v in enumerate(value) if i != head]
        return [_defaulted(v, rest) if i == head else v for i, v in enumerate(value)]
    if isinstance(value, dict):
        if not rest:
            return {k: v for k, v in value.items() if k != head}
        return {**value, head: _defaulted(value[head], rest)}
    if not rest:
        f = next(f for f in dataclasses.fields(value) if f.name == head)
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        return dataclasses.replace(value, **{head: default})
    return dataclasses.replace(value, **{head: _defaulted(getattr(value, head), rest)})


def _write(tmp_path: Path, lines: list[Any]) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir()
    path = folder / "hostile.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _every_view_draws(transcript: Transcript, folder: Path, warned: bool = True) -> None:
    """The page, the widget's view and its static bundle, the text and a scan of the folder all
    succeed, and show the file's prompt and answer."""
    page = render_page(transcript, expand=True)
    widget = TranscriptWidget(transcript)
    shown = widget._repr_mimebundle_()
    assert shown is not None
    bundle = shown[0]
    text = render_text(build_view_model(transcript))
    for drawn in (page, bundle["text/html"], bundle["text/plain"], text, json.dumps(widget.view)):
        assert "Fix the failing test" in drawn
    assert "import order" in text
    (row,) = scan(folder, workers=1).rows
    assert row["error"] is None
    assert row["warnings"] == len(transcript.warnings)
    assert bool(row["warnings"]) is warned


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_L4_X1_a_value_not_of_its_declared_type_is_a_warning_naming_the_field(
    case: Case, tmp_path: Path
) -> None:
    sample = SAMPLES[case.kind]()
    valid = entry_to_dict(sample)
    hostile = json.loads(json.dumps(entry_to_dict(sample)))
    _set(hostile, case.path, case.value)
    path = _write(tmp_path, [HEADER, PROMPT, hostile, ANSWER])
    transcript = turnfold.load(path)
    ids = [e.id for e in transcript.entries]
    own_id = None if case.path == ("id",) else valid["id"]  # else a fresh id is given
    named = [w for w in transcript.warnings if w.line == LINE and w.source == str(path)]
    assert named, transcript.warnings
    leaf = case.field or next(str(s) for s in reversed(case.path) if isinstance(s, str))
    if case.outcome == "unreadable":
        assert ids == ["prompt", "answer"]
        assert any(leaf in w.reason for w in named), named
    else:
        loaded = transcript.entries[1]
        assert ids == ["prompt", own_id or loaded.id, "answer"]
        # Everything else the entry holds is kept: only the bad value is gone.
        assert loaded == dataclasses.replace(_defaulted(sample, case.path), id=loaded.id)
        assert len(named) == 1
        (warning,) = named
        assert warning.reason.startswith(f"{case.kind} field {_dotted(case.path)}: ")
        assert warning.record == own_id
        where = f"{path}:{LINE} ({own_id}): " if own_id else f"{path}:{LINE}: "
        assert str(warning).startswith(where)
        if isinstance(case.value, str) and case.value.replace(".", "").isdigit():
            assert "a number written as text is not read as one" in warning.reason
    _every_view_draws(transcript, path.parent)


SUBAGENT_NUMBERS = {"kind": "tool_call", "name": "Task", "status": "success",
                    "subagent": {"name": "r", "tool_count": "3", "subagent_count": "1",
                                 "duration_ms": "1200", "output_tokens": "40",
                                 "usage": {"output_tokens": "40"}}}  # fmt: skip
#: The QA pass's table: each value once crashed the page, the widget and a scan.
QA_ROWS = [
    pytest.param({"kind": "tool_call", "name": "Read", "status": "done"}, "status", id="status"),
    pytest.param({"kind": "pending_action", "text": "Go?", "action": "vote"}, "action",
                 id="pending-action"),
    pytest.param({"kind": "tool_call", "name": "Read", "status": "success", "duration_ms": "x"},
                 "duration_ms", id="duration"),
    pytest.param({"kind": "tool_call", "name": "Read", "status": "success", "started_at": 5},
                 "started_at", id="started-at"),
    pytest.param({"kind": "assistant", "text": "a", "model": ["x"]}, "model", id="model"),
    pytest.param({"kind": "tool_call", "name": 5, "status": "success"}, "name", id="tool-name"),
    pytest.param(SUBAGENT_NUMBERS, "subagent.tool_count", id="subagent-numbers"),
    pytest.param({"kind": "abort", "reason": 5}, "reason", id="abort-reason"),
]  # fmt: skip


@pytest.mark.parametrize(("entry", "field"), QA_ROWS)
@pytest.mark.parametrize("layout", ["jsonl", "json"])
def test_L4_the_qa_table_s_hostile_values_load_with_a_warning_and_every_view_draws(
    entry: dict[str, Any], field: str, layout: str, tmp_path: Path
) -> None:
    entry = {"id": "bad", **entry}
    if layout == "jsonl":
        path = _write(tmp_path, [HEADER, PROMPT, entry, ANSWER])
        where = f"{path}:{LINE} (bad): {entry['kind']} field {field}: "
    else:
        path = tmp_path / "runs" / "hostile.json"
        path.parent.mkdir()
        document = {**HEADER, "entries": [PROMPT, entry, ANSWER], "warnings": []}
        path.write_text(json.dumps(document), encoding="utf-8")
        where = f"{path} (bad): entry 1: {entry['kind']} field {field}: "
    transcript = turnfold.load(path)
    assert [e.id for e in transcript.entries] == ["prompt", "bad", "answer"]
    assert any(str(w).startswith(where) for w in transcript.warnings), transcript.warnings
    _every_view_draws(transcript, path.parent)


def test_L4_numbers_written_as_text_are_not_read_as_numbers(tmp_path: Path) -> None:
    transcript = turnfold.load(_write(tmp_path, [HEADER, PROMPT, SUBAGENT_NUMBERS]))
    call = transcript.entries[1]
    assert isinstance(call, ToolCall)
    assert call.subagent is not None
    agent = call.subagent
    assert agent.name == "r"
    assert agent.usage is not None
    counts = (agent.tool_count, agent.subagent_count, agent.duration_ms, agent.output_tokens)
    assert counts == (None, None, None, None)
    assert agent.usage.output_tokens is None
    said = [w.reason for w in transcript.warnings]
    assert len(said) == 5
    assert all("(a number written as text is not read as one); left out" in s for s in said)


def test_L4_an_int_in_a_float_field_is_kept_as_it_is(tmp_path: Path) -> None:
    call = {"kind": "tool_call", "name": "Read", "status": "success", "duration_ms": 1500}
    transcript = turnfold.load(_write(tmp_path, [HEADER, PROMPT, call]))
    assert transcript.warnings == []
    loaded = transcript.entries[1]
    assert isinstance(loaded, ToolCall)
    assert loaded.duration_ms == 1500
    assert '"duration_ms":1500}' in transcript.dump()  # no 1500.0: the dump is unchanged


def test_L4_a_nested_sub_agent_s_bad_value_is_named_in_the_file_s_warnings(tmp_path: Path) -> None:
    inner = {"entries": [PROMPT, {"kind": "tool_call", "id": "deep", "name": "Read", "status": 7},
                         {"kind": "telepathy"}]}  # fmt: skip
    call = {"kind": "tool_call", "id": "task", "name": "Task", "status": "success",
            "subagent": {"name": "r", "transcript": {"metadata": [1], **inner}}}  # fmt: skip
    path = _write(tmp_path, [HEADER, PROMPT, call, ANSWER])
    transcript = turnfold.load(path)
    reasons = sorted(w.reason for w in transcript.warnings if w.line == LINE)
    assert reasons == [
        "tool_call field subagent.transcript.entries[1].status: 7 is not one of 'pending', "
        "'executing', 'confirming', 'success', 'error', 'cancelled', 'unknown'; read as 'pending'",
        "tool_call field subagent.transcript.entries[2]: unknown entry kind 'telepathy'",
        "tool_call field subagent.transcript.metadata: [1] is not an object; left out",
    ]
    task = transcript.entries[1]
    assert isinstance(task, ToolCall)
    assert task.subagent is not None
    assert task.subagent.transcript is not None
    assert [e.id for e in task.subagent.transcript.entries] == ["prompt", "deep"]
    _every_view_draws(transcript, path.parent)


@pytest.mark.parametrize(
    ("header", "where"),
    [
        pytest.param({"turnfold": 1, "metadata": ["x"]}, "metadata", id="metadata"),
        pytest.param({"turnfold": 1, "metadata": {}, "entries": 5}, "entries", id="entries"),
        pytest.param({"turnfold": 1, "metadata": {}, "warnings": "w"}, "warnings", id="warnings"),
        pytest.param({"turnfold": 1, "metadata": {}, "warnings": [5, {"reason": 3},
                     {"reason": "kept", "line": "4"}]}, "warnings[", id="warning-items"),
    ],
)  # fmt: skip
def test_L4_a_json_dump_s_parts_of_the_wrong_type_are_warnings(
    header: dict[str, Any], where: str, tmp_path: Path
) -> None:
    document = {"entries": [PROMPT, ANSWER], **header}
    path = tmp_path / "runs" / "hostile.json"
    path.parent.mkdir()
    path.write_text(json.dumps(document), encoding="utf-8")
    transcript = turnfold.load(path)
    assert any(w.reason.startswith(where) for w in transcript.warnings), transcript.warnings
    if where == "entries":
        assert transcript.entries == []
        return
    _every_view_draws(transcript, path.parent)


#: What the views read of a header's metadata, as they read it (checked where they read it, with
#: ``as_text``, ``isinstance``: one rule for every format's metadata, not only turnfold's).
METADATA_KEYS = ["title", "task", "agent", "model", "cwd", "git_branch", "session_id", "outcome",
                 "score", "cost_usd", "usage", "session_usage", "subagent_usage", "started_at",
                 "ended_at", "start_time", "completed_at", "duration_ms", "source_format",
                 "usage_lower_bound", "version", "error", "final_output"]  # fmt: skip


@pytest.mark.parametrize("value", [["x"], {"a": [1]}, 5, True, "x", {"input_tokens": "x"}],
                         ids=json.dumps)  # fmt: skip
def test_X1_metadata_of_any_type_is_read_where_the_views_use_it(value: Any, tmp_path: Path) -> None:
    header = {"turnfold": 1, "metadata": dict.fromkeys(METADATA_KEYS, value)}
    path = _write(tmp_path, [header, PROMPT, ANSWER])
    transcript = turnfold.load(path)
    assert transcript.warnings == []  # metadata is free-form: its readers judge its values
    _every_view_draws(transcript, path.parent, warned=False)


@pytest.mark.parametrize("layout", ["jsonl", "json"])
def test_L2_a_valid_dump_loads_exactly_as_before_with_no_new_warning(layout: str) -> None:
    original = make_full_transcript()
    loaded = turnfold.load(original.dump(layout=layout))  # type: ignore[arg-type]
    assert loaded == original
    assert loaded.warnings == original.warnings
    assert loaded.dump(layout=layout) == original.dump(layout=layout)  # type: ignore[arg-type]


def test_every_field_of_every_entry_kind_has_a_case() -> None:
    """The cases are the model's: each field of each entry kind is made hostile at least once,
    but for a value of any type (``Any``: a call's args, a result's structured value)."""
    covered = {(c.kind, c.path[0]) for c in CASES}
    for kind, cls in ENTRY_TYPES.items():
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            assert hints[f.name] is Any or (kind, f.name) in covered, (kind, f.name)
