"""Transcript model and turnfold's own format (spec §1: L-1 model, L-2.1 round trip, L-4)."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import turnfold
from turnfold import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    Entry,
    ImageData,
    LoadWarning,
    PendingAction,
    SubAgent,
    SystemNotice,
    Thinking,
    ToolCall,
    ToolResult,
    ToolUseSummary,
    Transcript,
    TranscriptFormatError,
    Usage,
    UserMessage,
    load,
)
from turnfold.model import ACTIVE_STATUSES, ENTRY_TYPES, TOOL_STATUSES, Wording

# --- sample data: every entry kind with every field set to a non-default value --------------------

UNICODE = (
    '修复失败的测试 🚀🧪 — naïve café, Ελληνικά, עברית, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢\n\t"quoted" \\ back\x00\x1b[31m'
)
IMAGE = ImageData(media_type="image/png", data="iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ")
IMAGE_2 = ImageData(media_type="image/jpeg", data="/9j/4AAQSkZJRgABAQ==")


def _common(tag: str) -> dict[str, Any]:
    return {
        "id": f"{tag}-id",
        "timestamp": "2025-03-04T05:06:07.123Z",
        "meta": {"source": "claude", "raw": {"uuid": f"{tag}-uuid", "n": [1, 2.5, None, True]}},
    }


def make_user(tag: str = "user") -> UserMessage:
    return UserMessage(**_common(tag), text=f"{tag}: {UNICODE}", command="/review", images=[IMAGE])


def make_assistant(tag: str = "assistant") -> AssistantText:
    usage = Usage(
        input_tokens=1200,
        output_tokens=345,
        cache_read_tokens=9000,
        cache_write_tokens=17,
        cache_write_1h_tokens=8,
        reasoning_tokens=64,
        response_id=f"msg_{tag}",
    )
    return AssistantText(
        **_common(tag), text=f"答案 {tag} ✅", model="claude-x-1", usage=usage, images=[IMAGE_2]
    )


def make_thinking(tag: str = "thinking", form: str = "summary") -> Thinking:
    return Thinking(
        **_common(tag),
        text=f"let me think… {tag} 🤔",
        form=form,  # type: ignore[arg-type]
        data="ZW5jcnlwdGVkLXBheWxvYWQ=",
        streaming=True,
        usage=Usage(
            input_tokens=7,
            output_tokens=2,
            cache_read_tokens=1,
            cache_write_tokens=1,
            cache_write_1h_tokens=1,
            reasoning_tokens=2,
            response_id=f"msg_{tag}",
        ),
    )


def make_tool_call(tag: str = "tool", subagent: SubAgent | None = None) -> ToolCall:
    return ToolCall(
        **_common(tag),
        call_id=f"toolu_01{tag}ÄÖ",
        name="Task" if subagent else "Read",
        args={"path": "src/数据.ts", "limit": 10, "flags": [True, None, 1.5], "nested": {"k": []}},
        description=f"{tag} 📄 a.ts",
        status="error",
        result=ToolResult(
            text=f"\x1b[31mboom\x1b[0m {tag}",
            kind="json",
            images=[IMAGE, IMAGE_2],
            structured={"rows": [1, 2, {"x": "ü"}], "ok": False, "ratio": 0.25},
            wording=Wording(key="reader.denied.said", params={"said": f"{tag} 😱"}),
        ),
        batch_id="batch-7",
        started_at="2025-03-04T05:06:07Z",
        ended_at="2025-03-04T05:06:09.500Z",
        duration_ms=2500.5,
        memory="write",
        user_initiated=True,
        subagent=subagent
        if subagent is not None
        else SubAgent(
            name="researcher",
            task="investigate import order",
            transcript=Transcript([make_user(f"{tag}-leaf")], metadata={"leaf": True}),
            agent_id="agent-1",
            tool_count=5,
            subagent_count=1,
            duration_ms=12000.0,
            output_tokens=2400,
            usage=Usage(
                input_tokens=31000,
                output_tokens=2400,
                cache_read_tokens=20000,
                cache_write_tokens=900,
                cache_write_1h_tokens=450,
                reasoning_tokens=300,
                response_id="resp-researcher",
            ),
            reason="cancelled by user",
            steps_missing=True,
            is_run=False,
        ),
        usage=Usage(
            input_tokens=9,
            output_tokens=4,
            cache_read_tokens=2,
            cache_write_tokens=3,
            cache_write_1h_tokens=1,
            reasoning_tokens=1,
            response_id="msg_tool",
        ),
    )


def make_summary(tag: str = "summary") -> ToolUseSummary:
    return ToolUseSummary(
        **_common(tag),
        label="Fixed import order 🛠",
        call_ids=["c1", "c2"],
        entry_ids=["e1", "e2"],
    )


def make_system(tag: str = "system") -> SystemNotice:
    return SystemNotice(
        **_common(tag),
        text=f"hook ran {tag}",
        level="warning",
        subtype="hook",
        wording=Wording(key="reader.hook", params={"tag": tag}),
    )


def make_compaction(tag: str = "compaction") -> CompactionBoundary:
    return CompactionBoundary(**_common(tag), summary="摘要", trigger="auto", pre_tokens=150000)


def make_abort(tag: str = "abort") -> AbortMarker:
    return AbortMarker(
        **_common(tag),
        reason="Stopped: limits_exceeded",
        wording=Wording(key="reader.stopped", params={"reason": "limits_exceeded"}),
    )


def make_error(tag: str = "error") -> AssistantError:
    return AssistantError(
        **_common(tag),
        message="API Error: 529 overloaded 😱",
        wording=Wording(key="reader.api_error.status.said", params={"status": "529", "said": "😱"}),
        usage=Usage(
            input_tokens=7,
            output_tokens=1,
            cache_read_tokens=2,
            cache_write_tokens=3,
            cache_write_1h_tokens=1,
            reasoning_tokens=1,
            response_id="msg_refused",
        ),
    )


def make_pending(tag: str = "pending") -> PendingAction:
    return PendingAction(
        **_common(tag), action="question", text="Proceed?", call_id="c9", options=["yes", "否"]
    )


#: One fully populated sample per entry kind (the keys must cover ENTRY_TYPES, see below).
SAMPLES: dict[str, Callable[[], Entry]] = {
    "user": make_user,
    "assistant": make_assistant,
    "thinking": make_thinking,
    "tool_call": make_tool_call,
    "tool_use_summary": make_summary,
    "system": make_system,
    "compaction": make_compaction,
    "abort": make_abort,
    "error": make_error,
    "pending_action": make_pending,
}

THINKING_FORMS = ("text", "summary", "redacted", "encrypted")


def make_full_transcript() -> Transcript:
    """Every entry kind, every field non-default, sub-agents two levels deep, warnings, metadata."""
    grandchild = Transcript(
        [make_user("gc"), make_tool_call("gc-call"), make_assistant("gc")],
        metadata={"agent": "grandchild", "深さ": 2},
        warnings=[LoadWarning(reason="grandchild warning", line=4, source="agent-b.jsonl")],
    )
    nested_agent = SubAgent(
        name="inner",
        task="nested task 🧩",
        transcript=grandchild,
        agent_id="agent-inner",
        tool_count=1,
        subagent_count=0,
        duration_ms=800.0,
        output_tokens=99,
        usage=Usage(
            input_tokens=512,
            output_tokens=99,
            cache_read_tokens=256,
            cache_write_tokens=64,
            cache_write_1h_tokens=32,
            reasoning_tokens=9,
            response_id="resp-inner",
        ),
        reason="failed",
        steps_missing=True,
        is_run=False,
    )
    child = Transcript(
        [
            make_user("child"),
            make_thinking("child", form="redacted"),
            make_tool_call("child-call", subagent=nested_agent),
            make_assistant("child"),
        ],
        metadata={"agent": "child"},
        warnings=[LoadWarning(reason="child warning", line=2)],
    )
    outer_agent = SubAgent(
        name="researcher",
        task="investigate import order",
        transcript=child,
        agent_id="agent-outer",
        tool_count=5,
        subagent_count=1,
        duration_ms=12345.0,
        output_tokens=2400,
        usage=Usage(
            input_tokens=40000,
            output_tokens=2400,
            cache_read_tokens=30000,
            cache_write_tokens=1200,
            cache_write_1h_tokens=600,
            reasoning_tokens=700,
            response_id="resp-outer",
        ),
        reason="cancelled",
        steps_missing=True,
        is_run=False,
    )
    entries: list[Entry] = [factory() for factory in SAMPLES.values()]
    entries += [make_thinking(f"thinking-{form}", form=form) for form in THINKING_FORMS]
    entries.append(make_tool_call("delegate", subagent=outer_agent))
    entries.append(ToolCall(call_id="minimal", name="Bash"))  # defaults everywhere
    return Transcript(
        entries,
        metadata={
            "format": "claude-code",
            "session": "abc-123",
            "title": "会话 🚀",
            "tags": ["a", "b"],
            "nested": {"x": None, "y": [1.5, False]},
        },
        warnings=[
            LoadWarning(reason="skipped unknown record type 'foo'", line=12, source="s.jsonl"),
            LoadWarning(reason="dangling parentUuid"),
        ],
    )


def _non_default_check(obj: Any, path: str = "") -> list[str]:
    """Dataclass fields (recursively) still at their default value."""
    found: list[str] = []
    if isinstance(obj, Transcript):
        for entry in obj.entries:
            found += _non_default_check(entry, f"{path}/{entry.id}")
        return found
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return found
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.default is not dataclasses.MISSING and value == f.default:
            found.append(f"{path}.{f.name}")
        if f.default_factory is not dataclasses.MISSING and value == f.default_factory():
            found.append(f"{path}.{f.name}")
        if isinstance(value, list):
            for item in value:
                found += _non_default_check(item, f"{path}.{f.name}[]")
        else:
            found += _non_default_check(value, f"{path}.{f.name}")
    return found


# --- L-1: the model -------------------------------------------------------------------------------

SPEC_KINDS = [
    ("user", UserMessage),
    ("assistant", AssistantText),
    ("thinking", Thinking),
    ("tool_call", ToolCall),
    ("tool_use_summary", ToolUseSummary),
    ("system", SystemNotice),
    ("compaction", CompactionBoundary),
    ("abort", AbortMarker),
    ("error", AssistantError),
    ("pending_action", PendingAction),
]


@pytest.mark.parametrize(("kind", "cls"), SPEC_KINDS)
def test_L1_spec_entry_kinds_are_registered(kind: str, cls: type[Entry]) -> None:
    assert ENTRY_TYPES[kind] is cls
    assert cls.kind == kind


@pytest.mark.parametrize("kind", sorted(ENTRY_TYPES))
def test_L1_every_entry_kind_is_constructible_with_defaults(kind: str) -> None:
    cls = ENTRY_TYPES[kind]
    entry = cls()
    assert isinstance(entry, Entry)
    assert entry.kind == kind
    assert entry.id == ""
    assert entry.timestamp is None
    assert entry.meta == {}
    assert cls().meta is not entry.meta  # no shared mutable default
    assert Transcript([entry]).entries == [entry]


def test_L1_samples_cover_every_entry_kind() -> None:
    assert set(SAMPLES) == set(ENTRY_TYPES)
    for kind, factory in SAMPLES.items():
        assert type(factory()) is ENTRY_TYPES[kind]


@pytest.mark.parametrize("kind", sorted(ENTRY_TYPES))
def test_L1_every_entry_kind_is_constructible_with_every_field(kind: str) -> None:
    entry = SAMPLES[kind]()
    assert _non_default_check(entry) == []


def test_L1_ids_are_assigned_in_order_on_append() -> None:
    t = Transcript()
    entries = [t.append(UserMessage(text=str(i))) for i in range(12)]
    assert [e.id for e in entries] == [f"e{i}" for i in range(12)]
    assert [e.id for e in t] == [f"e{i}" for i in range(12)]
    assert t.append(AssistantText()) is t.entries[-1]


def test_L1_constructor_assigns_ids_like_append() -> None:
    t = Transcript([UserMessage(), AssistantText(), ToolCall(call_id="c")])
    assert [e.id for e in t] == ["e0", "e1", "e2"]
    assert len(t) == 3


def test_L1_ids_never_change_when_more_entries_are_appended() -> None:
    t = Transcript()
    first = [t.append(ENTRY_TYPES[k]()) for k in sorted(ENTRY_TYPES)]
    snapshot = [(id(e), e.id) for e in first]
    for kind in sorted(ENTRY_TYPES):
        t.append(ENTRY_TYPES[kind](id="e0"))  # a clashing explicit id
        t.append(ENTRY_TYPES[kind]())
    assert [(id(e), e.id) for e in t.entries[: len(first)]] == snapshot
    assert len({e.id for e in t}) == len(t)
    for entry in first:
        assert t.get(entry.id) is entry


@pytest.mark.parametrize(
    ("given_ids", "expected"),
    [
        pytest.param(["x", "x", "x"], ["x", "x~2", "x~3"], id="duplicates-get-suffix"),
        pytest.param(["x", "x~2", "x"], ["x", "x~2", "x~3"], id="suffix-skips-taken"),
        pytest.param(["toolu_01", "", "msg_9"], ["toolu_01", "e0", "msg_9"], id="explicit-kept"),
        pytest.param(["e1", "", "", ""], ["e1", "e0", "e2", "e3"], id="auto-skips-explicit"),
        pytest.param(["", "e0", ""], ["e0", "e0~2", "e1"], id="explicit-clashes-with-auto"),
        pytest.param(["会话-1", "会话-1"], ["会话-1", "会话-1~2"], id="unicode-id"),
    ],
)
def test_L1_explicit_and_duplicate_ids(given_ids: list[str], expected: list[str]) -> None:
    t = Transcript()
    for given_id in given_ids:
        t.append(UserMessage(id=given_id))
    assert [e.id for e in t] == expected
    assert all(t.get(i) is e for i, e in zip(expected, t, strict=True))
    assert t.get("missing") is None


def test_L1_tool_statuses_are_the_seven_of_the_spec() -> None:
    assert TOOL_STATUSES == (
        "pending",
        "executing",
        "confirming",
        "success",
        "error",
        "cancelled",
        "unknown",
    )
    assert frozenset({"pending", "executing", "confirming"}) == ACTIVE_STATUSES
    assert ToolCall().status == "pending"


@pytest.mark.parametrize("status", TOOL_STATUSES)
def test_L1_tool_call_accepts_each_status(status: str) -> None:
    call = ToolCall(call_id="c1", name="Read", status=status)  # type: ignore[arg-type]
    t = Transcript([call])
    assert t.tool_calls() == [call]
    assert load(t.dump()).tool_calls()[0].status == status


def test_L1_a_transcript_refuses_what_is_no_entry_and_an_unknown_status() -> None:
    """A message dict or a string appended by hand (load() reads those) and a status the view
    has no name for are errors at the call: the first failed on a missing ``id``, the second
    only when the widget drew it."""
    transcript = Transcript()
    for add in (lambda: transcript.append("hi"),  # type: ignore[arg-type]
                lambda: transcript.extend([{"role": "user"}]),  # type: ignore[list-item]
                lambda: Transcript([UserMessage(text="a"), "b"])):  # type: ignore[list-item]  # fmt: skip
        with pytest.raises(TypeError, match=r"a transcript holds entries .*, not (str|dict)"):
            add()
    call = transcript.append(ToolCall(name="Read"))
    with pytest.raises(ValueError, match="no tool status 'done'; one of pending"):
        transcript.update(call, status="done")
    assert call.status == "pending"


START = "2025-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("duration_ms", "started_at", "ended_at", "expected"),
    [
        pytest.param(1500.0, None, None, 1500.0, id="recorded"),
        pytest.param(1500, START, "2025-01-01T00:00:10Z", 1500, id="recorded-wins-over-span"),
        pytest.param(0.0, None, None, 0.0, id="recorded-zero-is-kept"),
        pytest.param(-5.0, START, "2025-01-01T00:00:10Z", None, id="recorded-negative-is-nonsense"),
        pytest.param(None, START, "2025-01-01T00:00:02.500Z", 2500.0, id="span-with-Z"),
        pytest.param(None, START, "2025-01-01T01:02:03Z", 3723000.0, id="span-hours"),
        pytest.param(
            None, "2025-01-01T00:00:00+00:00", "2025-01-01T02:00:01+02:00", 1000.0, id="offsets"
        ),
        pytest.param(None, "2025-01-01T00:00:00", "2025-01-01T00:00:01.25", 1250.0, id="naive"),
        pytest.param(None, START, START, 0.0, id="span-zero-is-real"),
        pytest.param(None, None, None, None, id="nothing-recorded"),
        pytest.param(None, START, None, None, id="no-end"),
        pytest.param(None, None, START, None, id="no-start"),
        pytest.param(None, "", "", None, id="empty-strings"),
        pytest.param(None, "yesterday", START, None, id="unreadable-start"),
        pytest.param(None, START, "2025-13-45T99:00:00Z", None, id="unreadable-end"),
        pytest.param(None, "2025-01-01T00:00:05Z", START, None, id="negative-span"),
        # A naive stamp is UTC, as everywhere (the session's span, a turn's start).
        pytest.param(
            None, "2025-01-01T00:00:00", "2025-01-01T00:00:01Z", 1000.0, id="naive-vs-aware"
        ),
    ],
)
def test_L1_recorded_duration_ms(
    duration_ms: float | None, started_at: str | None, ended_at: str | None, expected: float | None
) -> None:
    call = ToolCall(duration_ms=duration_ms, started_at=started_at, ended_at=ended_at)
    if expected is None:
        assert call.recorded_duration_ms is None
    else:
        assert call.recorded_duration_ms == pytest.approx(expected)


def test_L1_missing_duration_is_none_never_zero() -> None:
    assert ToolCall().duration_ms is None
    assert ToolCall().recorded_duration_ms is None
    assert SubAgent().duration_ms is None
    assert load(Transcript([ToolCall()]).dump()).tool_calls()[0].recorded_duration_ms is None


def test_L1_subagent_carries_a_child_transcript() -> None:
    child = Transcript([UserMessage(text="investigate"), ToolCall(call_id="c-child", name="Grep")])
    agent = SubAgent(
        name="researcher",
        task="investigate import order",
        transcript=child,
        tool_count=1,
        duration_ms=12000.0,
        output_tokens=2400,
    )
    parent = Transcript(
        [UserMessage(text="go"), ToolCall(call_id="c1", name="Task", subagent=agent)]
    )
    call = parent.tool_calls()[0]
    assert call.subagent is agent
    assert call.subagent.transcript is child
    assert [c.call_id for c in parent.tool_calls()] == ["c1"]  # not the child's calls
    assert [c.call_id for c in child.tool_calls()] == ["c-child"]
    assert [e.id for e in child] == ["e0", "e1"]  # ids are per transcript
    assert (agent.name, agent.task, agent.tool_count) == (
        "researcher",
        "investigate import order",
        1,
    )
    assert (agent.duration_ms, agent.output_tokens) == (12000.0, 2400)


def test_L1_transcript_equality_and_hashing() -> None:
    assert Transcript() == Transcript()
    assert Transcript([UserMessage(text="a")]) != Transcript([UserMessage(text="b")])
    assert Transcript(metadata={"a": 1}) != Transcript()
    assert Transcript(warnings=[LoadWarning(reason="r")]) != Transcript()
    assert Transcript() != []
    with pytest.raises(TypeError):
        hash(Transcript())


@pytest.mark.parametrize(
    ("warning", "text"),
    [
        (LoadWarning(reason="bad line", line=3, source="s.jsonl"), "s.jsonl:3: bad line"),
        (LoadWarning(reason="bad line", line=3), "3: bad line"),
        (LoadWarning(reason="bad line"), "bad line"),
    ],
)
def test_L4_load_warning_text(warning: LoadWarning, text: str) -> None:
    assert str(warning) == text


# --- L-2: round trip ------------------------------------------------------------------------------

LAYOUTS = ["jsonl", "json"]


def test_L2_full_sample_sets_every_field_to_a_non_default_value() -> None:
    t = make_full_transcript()
    for entry in t.entries[:-1]:  # the last one is a deliberately minimal tool call
        expected = [".form"] if isinstance(entry, Thinking) and entry.form == "text" else []
        assert _non_default_check(entry) == expected, entry.kind
    assert {e.kind for e in t} == set(ENTRY_TYPES)
    assert {e.form for e in t if isinstance(e, Thinking)} == set(THINKING_FORMS)
    inner = t.entries[-2].subagent.transcript.entries[2].subagent  # type: ignore[union-attr]
    assert inner.transcript.entries  # the nested sub-agent's transcript is not empty


@pytest.mark.parametrize("layout", LAYOUTS)
def test_L2_round_trip_full_transcript(layout: str) -> None:
    t = make_full_transcript()
    text = t.dump(layout=layout)  # type: ignore[arg-type]
    loaded = load(text)
    assert loaded == t
    assert [e.id for e in loaded] == [e.id for e in t]
    assert loaded.warnings == t.warnings
    assert loaded.metadata == t.metadata
    assert loaded.dump(layout=layout) == text  # type: ignore[arg-type]
    assert "修复失败的测试 🚀" in text  # non-ASCII kept as is


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kind", sorted(ENTRY_TYPES))
@pytest.mark.parametrize("populated", [True, False], ids=["every-field", "defaults"])
def test_L2_round_trip_each_entry_kind_alone(layout: str, kind: str, populated: bool) -> None:
    entry = SAMPLES[kind]() if populated else ENTRY_TYPES[kind]()
    t = Transcript([entry])
    loaded = load(t.dump(layout=layout))  # type: ignore[arg-type]
    assert loaded == t
    assert type(loaded.entries[0]) is type(entry)
    assert loaded.warnings == []


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("form", THINKING_FORMS)
def test_L2_round_trip_thinking_forms(layout: str, form: str) -> None:
    t = Transcript([make_thinking(form=form), Thinking(form=form)])  # type: ignore[arg-type]
    assert load(t.dump(layout=layout)) == t  # type: ignore[arg-type]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    "result_kind", ["text", "ansi", "markdown", "json", "diff", "plan", "todo"]
)
def test_L2_round_trip_tool_result_kind(layout: str, result_kind: str) -> None:
    t = Transcript([ToolCall(call_id="c", result=ToolResult(text="x", kind=result_kind))])  # type: ignore[arg-type]
    loaded = load(t.dump(layout=layout))  # type: ignore[arg-type]
    assert loaded.tool_calls()[0].result.kind == result_kind  # type: ignore[union-attr]
    assert loaded == t


@pytest.mark.parametrize("layout", LAYOUTS)
def test_L2_round_trip_empty_transcript(layout: str) -> None:
    assert load(Transcript().dump(layout=layout)) == Transcript()  # type: ignore[arg-type]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "session 会话.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def _from_text(text: str, tmp_path: Path) -> Transcript:
    return load(text)


def _from_str_path(text: str, tmp_path: Path) -> Transcript:
    return load(str(_write(tmp_path, text)))


def _from_path(text: str, tmp_path: Path) -> Transcript:
    return load(_write(tmp_path, text))


def _from_bytes(text: str, tmp_path: Path) -> Transcript:
    return load(text.encode("utf-8"))


def _from_bytearray(text: str, tmp_path: Path) -> Transcript:
    return load(bytearray(text.encode("utf-8")))


def _from_text_file(text: str, tmp_path: Path) -> Transcript:
    with _write(tmp_path, text).open(encoding="utf-8") as stream:
        return load(stream)


def _from_binary_file(text: str, tmp_path: Path) -> Transcript:
    with _write(tmp_path, text).open("rb") as stream:
        return load(stream)


def _from_dict(text: str, tmp_path: Path) -> Transcript:
    return load(json.loads(text))


def _from_records(text: str, tmp_path: Path) -> Transcript:
    # split("\n"), not splitlines(): U+2028 etc. may appear raw inside a JSON string
    return load([json.loads(line) for line in text.split("\n") if line])


SOURCES = [
    pytest.param(layout, feed, id=f"{layout}-{feed.__name__[6:]}")
    for layout in LAYOUTS
    for feed in (
        _from_text,
        _from_str_path,
        _from_path,
        _from_bytes,
        _from_bytearray,
        _from_text_file,
        _from_binary_file,
    )
] + [
    pytest.param("json", _from_dict, id="json-dict"),
    pytest.param("jsonl", _from_records, id="jsonl-records"),
]


@pytest.mark.parametrize(("layout", "feed"), SOURCES)
def test_L2_round_trip_from_every_kind_of_source(
    layout: str, feed: Callable[[str, Path], Transcript], tmp_path: Path
) -> None:
    t = make_full_transcript()
    assert feed(t.dump(layout=layout), tmp_path) == t  # type: ignore[arg-type]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_L2_format_can_be_forced(layout: str) -> None:
    t = make_full_transcript()
    assert load(t.dump(layout=layout), format="turnfold") == t  # type: ignore[arg-type]
    assert "turnfold" in turnfold.FORMATS


def test_L2_one_line_json_layout_and_blank_lines_are_read() -> None:
    t = make_full_transcript()
    one_line = json.dumps(json.loads(t.dump(layout="json")), ensure_ascii=False) + "\n"
    assert load(one_line) == t
    spaced = "\n\n" + t.dump().replace("\n", "\n\n")
    assert load(spaced) == t
    crlf = t.dump().replace("\n", "\r\n").encode("utf-8")
    assert load(crlf) == t


@pytest.mark.parametrize("layout", LAYOUTS)
def test_L2_dump_is_deterministic(layout: str) -> None:
    t = make_full_transcript()
    first = t.dump(layout=layout)  # type: ignore[arg-type]
    assert t.dump(layout=layout) == first  # type: ignore[arg-type]
    assert make_full_transcript().dump(layout=layout) == first  # type: ignore[arg-type]
    assert first.endswith("\n")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_L2_dump_does_not_mutate_the_transcript(layout: str) -> None:
    t = make_full_transcript()
    before = copy.deepcopy(t)
    entries_before = list(t.entries)
    t.dump(layout=layout)  # type: ignore[arg-type]
    assert t == before
    assert all(a is b for a, b in zip(t.entries, entries_before, strict=True))
    assert [e.id for e in t] == [e.id for e in before]


def test_L2_jsonl_layout_shape() -> None:
    t = Transcript(
        [UserMessage(text="hi"), ToolCall(call_id="c1", name="Read")],
        metadata={"m": 1},
        warnings=[LoadWarning(reason="r", line=2)],
    )
    records = [json.loads(line) for line in t.dump().splitlines()]
    assert records == [
        {"turnfold": 1, "metadata": {"m": 1}},
        {"kind": "user", "id": "e0", "text": "hi"},
        {"kind": "tool_call", "id": "e1", "call_id": "c1", "name": "Read"},
        {"warning": {"reason": "r", "line": 2}},
    ]
    assert json.loads(t.dump(layout="json")) == {
        "turnfold": 1,
        "metadata": {"m": 1},
        "entries": records[1:3],
        "warnings": [{"reason": "r", "line": 2}],
    }


def test_L2_unknown_layout_is_rejected() -> None:
    with pytest.raises(ValueError, match="layout"):
        Transcript().dump(layout="yaml")  # type: ignore[arg-type]


# --- L-2: property test ---------------------------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
OPT_TEXT = st.none() | TEXT
OPT_INT = st.none() | st.integers(min_value=-(2**63), max_value=2**63)
OPT_FLOAT = st.none() | st.floats(allow_nan=False, allow_infinity=False)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
META = st.dictionaries(TEXT, JSON_VALUES, max_size=3)
IDS = st.sampled_from(["", "", "", "x", "e1", "toolu_1", "会话"])
COMMON = {"id": IDS, "timestamp": OPT_TEXT, "meta": META}
WORDINGS = st.none() | st.builds(Wording, key=TEXT, params=st.dictionaries(TEXT, TEXT, max_size=2))

SIMPLE_ENTRIES = st.one_of(
    st.builds(UserMessage, **COMMON, text=TEXT, command=OPT_TEXT),
    st.builds(
        AssistantText,
        **COMMON,
        text=TEXT,
        model=OPT_TEXT,
        usage=st.none()
        | st.builds(
            Usage,
            input_tokens=OPT_INT,
            output_tokens=OPT_INT,
            cache_read_tokens=OPT_INT,
            cache_write_tokens=OPT_INT,
            reasoning_tokens=OPT_INT,
        ),
    ),
    st.builds(
        Thinking,
        **COMMON,
        text=TEXT,
        form=st.sampled_from(THINKING_FORMS),
        data=OPT_TEXT,
        streaming=st.booleans(),
    ),
    st.builds(
        ToolUseSummary,
        **COMMON,
        label=TEXT,
        call_ids=st.lists(TEXT, max_size=3),
        entry_ids=st.lists(TEXT, max_size=3),
    ),
    st.builds(
        SystemNotice,
        **COMMON,
        text=TEXT,
        level=st.sampled_from(["info", "warning", "error"]),
        subtype=OPT_TEXT,
        wording=WORDINGS,
    ),
    st.builds(CompactionBoundary, **COMMON, summary=OPT_TEXT, trigger=OPT_TEXT, pre_tokens=OPT_INT),
    st.builds(AbortMarker, **COMMON, reason=OPT_TEXT, wording=WORDINGS),
    st.builds(AssistantError, **COMMON, message=TEXT, wording=WORDINGS),
    st.builds(
        PendingAction,
        **COMMON,
        action=st.sampled_from(["permission", "question", "plan", "goal"]),
        text=TEXT,
        call_id=OPT_TEXT,
        options=st.lists(TEXT, max_size=3),
    ),
)
RESULTS = st.none() | st.builds(
    ToolResult,
    text=OPT_TEXT,
    kind=st.sampled_from(["text", "ansi", "markdown", "json", "diff", "plan", "todo", "subagent"]),
    images=st.lists(st.builds(ImageData, media_type=TEXT, data=TEXT), max_size=2),
    structured=JSON_VALUES,
)
WARNINGS = st.lists(st.builds(LoadWarning, reason=TEXT, line=OPT_INT, source=OPT_TEXT), max_size=2)


def _tool_calls(subagents: st.SearchStrategy[SubAgent | None]) -> st.SearchStrategy[ToolCall]:
    return st.builds(
        ToolCall,
        **COMMON,
        call_id=TEXT,
        name=TEXT,
        args=JSON_VALUES,
        description=OPT_TEXT,
        status=st.sampled_from(TOOL_STATUSES),
        result=RESULTS,
        batch_id=OPT_TEXT,
        started_at=OPT_TEXT,
        ended_at=OPT_TEXT,
        duration_ms=OPT_FLOAT,
        memory=st.sampled_from([None, "read", "write"]),
        user_initiated=st.booleans(),
        subagent=subagents,
    )


def _transcripts(entries: st.SearchStrategy[Entry]) -> st.SearchStrategy[Transcript]:
    return st.builds(Transcript, st.lists(entries, max_size=6), metadata=META, warnings=WARNINGS)


CHILD_TRANSCRIPTS = _transcripts(SIMPLE_ENTRIES | _tool_calls(st.none()))
SUBAGENTS = st.none() | st.builds(
    SubAgent,
    name=OPT_TEXT,
    task=OPT_TEXT,
    transcript=st.none() | CHILD_TRANSCRIPTS,
    agent_id=OPT_TEXT,
    tool_count=OPT_INT,
    subagent_count=OPT_INT,
    duration_ms=OPT_FLOAT,
    output_tokens=OPT_INT,
    reason=OPT_TEXT,
)
TRANSCRIPTS = _transcripts(SIMPLE_ENTRIES | _tool_calls(SUBAGENTS))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(t=TRANSCRIPTS, layout=st.sampled_from(LAYOUTS), as_bytes=st.booleans())
def test_L2_property_round_trip(t: Transcript, layout: str, as_bytes: bool) -> None:
    text = t.dump(layout=layout)  # type: ignore[arg-type]
    loaded = load(text.encode("utf-8") if as_bytes else text)
    assert loaded == t
    assert [e.id for e in loaded] == [e.id for e in t]
    assert loaded.dump(layout=layout) == text  # type: ignore[arg-type]


# --- L-4: bad input -------------------------------------------------------------------------------

NOT_TRANSCRIPTS = [
    # (id, source, source name in the message, line or None)
    ("empty-text", "", "<text>", None),
    ("whitespace-only", "   ", "<text>", None),
    ("blank-lines", " \n\t\n\n", "<text>", None),
    ("empty-bytes", b"", "<bytes>", None),
    ("json-object", '{"hello": "world"}', "<text>", 1),
    ("json-array", "[1, 2, 3]", "<text>", 1),
    ("json-array-of-dicts", '[{"type": "user"}]', "<text>", 1),
    ("pretty-json-object", '{\n  "messages": []\n}\n', "<text>", 1),
    ("wrong-version", '{"turnfold": 2, "entries": []}', "<text>", 1),
    ("scalar-bytes", b"42", "<bytes>", 1),
    ("random-text", "hello world\nthis is not JSON at all\n", "<text>", 1),
    ("random-text-after-blanks", "\n\nnot json\n", "<text>", 3),
    ("random-bytes", "résumé ☃ \x00\x07 text\n".encode(), "<bytes>", 1),
    ("invalid-utf8", b"\xff\xfe\xfa garbage\n", "<bytes>", 1),
    ("jsonl-without-header", '{"type": "user"}\n{"type": "assistant"}\n', "<text>", 1),
    ("jsonl-header-late", '\n{"type": "user"}\n{"turnfold": 1}\n', "<text>", 2),
    ("header-not-first", '{"kind": "user"}\n{"turnfold": 1, "metadata": {}}\n', "<text>", 1),
    ("object-dict", {"messages": []}, "<object>", 1),
    ("object-list", [{"type": "user"}], "<object>", 1),
    ("object-empty-list", [], "<object>", None),
    ("object-none", None, "<object>", 1),
]


def _check_format_error(exc: TranscriptFormatError, name: str, line: int | None) -> None:
    message = str(exc)
    assert isinstance(exc, ValueError)
    assert exc.source == name
    assert name in message
    assert "turnfold" in exc.tried
    assert "formats tried: turnfold" in message
    assert exc.line == line
    if line is not None:
        assert f"line {line}" in message
    assert exc.reason in message


@pytest.mark.parametrize(
    ("source", "name", "line"), [pytest.param(*row[1:], id=row[0]) for row in NOT_TRANSCRIPTS]
)
def test_L4_not_a_transcript_raises_a_clear_error(source: Any, name: str, line: int | None) -> None:
    with pytest.raises(TranscriptFormatError) as info:
        load(source)
    _check_format_error(info.value, name, line)


def _load_via(how: str, path: Path) -> Transcript:
    if how == "str":
        return load(str(path))
    if how == "Path":
        return load(path)
    with path.open("rb") if how == "binary-file" else path.open(encoding="utf-8") as stream:
        return load(stream)


@pytest.mark.parametrize(
    ("content", "line", "how"),
    [
        pytest.param(row[1], row[3], how, id=f"{how}-{row[0]}")
        for how in ("str", "Path", "text-file", "binary-file")
        for row in NOT_TRANSCRIPTS
        if isinstance(row[1], (str, bytes))
        # a strict UTF-8 text stream of the caller's fails on invalid bytes before load sees them
        and not (how == "text-file" and row[0] == "invalid-utf8")
    ],
)
def test_L4_not_a_transcript_names_the_file(
    content: str | bytes, line: int | None, how: str, tmp_path: Path
) -> None:
    path = tmp_path / "not-a-session.jsonl"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(TranscriptFormatError) as info:
        _load_via(how, path)
    _check_format_error(info.value, str(path), line)


HEADER = '{"turnfold": 1, "metadata": {"m": "ok"}}'
GOOD_1 = '{"kind": "user", "id": "e0", "text": "hi"}'
GOOD_2 = '{"kind": "assistant", "id": "e1", "text": "bye"}'


@pytest.mark.parametrize(
    ("bad_line", "reason"),
    [
        pytest.param(
            '{"kind": "telepathy", "text": "?"}', "unknown entry kind 'telepathy'", id="kind"
        ),
        pytest.param('{"text": "no kind"}', "unknown entry kind None", id="no-kind"),
        pytest.param('{"kind": "user", "colour": "red"}', "unknown field(s) colour", id="field"),
        pytest.param(
            '{"kind": "tool_call", "result": {"txt": "x"}}',
            "unknown field(s) txt",
            id="nested-field",
        ),
        pytest.param('{"kind": "tool_call", "result": 5}', "", id="nested-not-object"),
        pytest.param('{"kind": "assistant", "usage": {"tokens": 1}}', "tokens", id="usage-field"),
        pytest.param('{"warning": {"why": "?"}}', "why", id="bad-warning"),
        pytest.param("42", "", id="scalar"),
        pytest.param("null", "", id="null"),
        pytest.param('["kind", "user"]', "", id="array"),
    ],
)
@pytest.mark.parametrize("as_path", [False, True], ids=["text", "path"])
def test_L4_unreadable_native_entry_becomes_a_warning(
    bad_line: str, reason: str, as_path: bool, tmp_path: Path
) -> None:
    text = "\n".join([HEADER, GOOD_1, bad_line, GOOD_2]) + "\n"
    if as_path:
        path = tmp_path / "s.jsonl"
        path.write_text(text, encoding="utf-8")
        t, name = load(path), str(path)
    else:
        t, name = load(text), "<text>"
    assert t.entries == [
        UserMessage(id="e0", text="hi"),
        AssistantText(id="e1", text="bye"),
    ]
    assert t.metadata == {"m": "ok"}
    assert len(t.warnings) == 1
    warning = t.warnings[0]
    assert (warning.line, warning.source) == (3, name)
    assert reason in warning.reason
    assert str(warning).startswith(f"{name}:3: ")


@pytest.mark.parametrize("blank_lines", [0, 1, 3])
def test_L4_warning_line_numbers_count_leading_blank_lines(blank_lines: int) -> None:
    text = "\n" * blank_lines + "\n".join([HEADER, GOOD_1, '{"kind": "x"}', "", '{"kind": "y"}'])
    t = load(text)
    assert [w.line for w in t.warnings] == [blank_lines + 3, blank_lines + 5]
    t = load("\n" * blank_lines + "\n".join([HEADER, GOOD_1, "{oops"]))
    assert [w.line for w in t.warnings] == [blank_lines + 3]
    with pytest.raises(TranscriptFormatError) as info:
        load("\n" * blank_lines + "\n".join(["{oops", HEADER, GOOD_1]))
    assert info.value.line == blank_lines + 1


def test_L4_several_bad_entries_keep_their_line_numbers_after_recorded_warnings() -> None:
    recorded = '{"warning": {"reason": "from the original source", "line": 99}}'
    text = "\n".join([HEADER, GOOD_1, '{"kind": "x"}', GOOD_2, '{"kind": "y"}', recorded])
    t = load(text)
    assert [e.id for e in t] == ["e0", "e1"]
    assert [(w.line, w.reason) for w in t.warnings] == [
        (99, "from the original source"),
        (3, "unknown entry kind 'x'"),
        (5, "unknown entry kind 'y'"),
    ]


@pytest.mark.parametrize(
    "bad_entry",
    [
        pytest.param({"kind": "telepathy"}, id="kind"),
        pytest.param({"kind": "user", "colour": "red"}, id="field"),
        pytest.param(42, id="scalar"),
        pytest.param(None, id="null"),
        pytest.param(["user"], id="array"),
    ],
)
@pytest.mark.parametrize("as_text", [False, True], ids=["dict", "text"])
def test_L4_unreadable_entry_in_json_layout_becomes_a_warning(
    bad_entry: Any, as_text: bool
) -> None:
    document = {
        "turnfold": 1,
        "metadata": {},
        "entries": [
            {"kind": "user", "text": "hi"},
            bad_entry,
            {"kind": "assistant", "text": "bye"},
        ],
        "warnings": [],
    }
    t = load(json.dumps(document, indent=1)) if as_text else load(document)
    assert [(e.kind, e.id) for e in t] == [("user", "e0"), ("assistant", "e1")]
    assert len(t.warnings) == 1
    assert t.warnings[0].reason.startswith("entry 1: ")
    assert t.warnings[0].source == ("<text>" if as_text else "<object>")


# Spec L-4: a line that is not JSON inside a valid native JSONL file (including the truncated last
# line of a file still being written) is skipped with a warning naming its line; the rest loads.
@pytest.mark.parametrize(
    ("lines", "bad_line"),
    [
        pytest.param([HEADER, GOOD_1, "{not json", GOOD_2], 3, id="bad-json-in-middle"),
        pytest.param([HEADER, GOOD_1, GOOD_2, '{"kind": "user", "te'], 4, id="truncated-last-line"),
    ],
)
def test_L4_bad_json_line_in_native_file_becomes_a_warning(lines: list[str], bad_line: int) -> None:
    t = load("\n".join(lines) + "\n")
    assert [e.kind for e in t] == ["user", "assistant"]
    (warning,) = t.warnings
    assert (warning.line, warning.source) == (bad_line, "<text>")
    assert "invalid JSON" in warning.reason


def test_L4_load_does_not_modify_the_objects_passed() -> None:
    t = make_full_transcript()
    document = json.loads(t.dump(layout="json"))
    records = [json.loads(line) for line in t.dump().split("\n") if line]
    bad_document = copy.deepcopy(document)
    bad_document["entries"].insert(1, {"kind": "user", "colour": "red"})
    bad_records = [*records[:2], {"kind": "nope"}, 42, *records[2:]]
    for source in (document, records, bad_document, bad_records):
        before = copy.deepcopy(source)
        load(source)
        assert source == before


def test_L4_loaded_transcript_shares_nothing_with_the_objects_passed() -> None:
    document = {
        "turnfold": 1,
        "metadata": {"tags": ["a"]},
        "entries": [{"kind": "tool_call", "call_id": "c", "args": {"paths": ["a"]}, "meta": {}}],
    }
    records = [{"turnfold": 1, "metadata": {"tags": ["a"]}}, *document["entries"]]  # type: ignore[list-item]
    for source in (document, records):
        before = copy.deepcopy(source)
        t = load(source)
        t.metadata["tags"].append("b")
        t.tool_calls()[0].args["paths"].append("b")
        t.tool_calls()[0].meta["x"] = 1
        t.append(UserMessage())
        assert source == before


def test_L4_load_of_a_transcript_returns_it() -> None:
    t = make_full_transcript()
    assert load(t) is t


@pytest.mark.parametrize("fmt", ["nope", "", "claude", "TURNFOLD"])
def test_L4_unknown_format_name_is_a_value_error(fmt: str) -> None:
    with pytest.raises(ValueError, match="unknown format") as info:
        load(make_full_transcript().dump(), format=fmt)
    assert not isinstance(info.value, TranscriptFormatError)
    assert "turnfold" in str(info.value)


def test_L4_missing_file_is_not_swallowed(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.jsonl")


def test_L5_append_unless_checks_and_appends_under_one_lock() -> None:
    from turnfold.model import AssistantText, Transcript

    transcript = Transcript()
    seen: list[str] = []
    transcript.observe(lambda change: seen.append(change.entry.id))
    assert transcript.append_unless(AssistantText(text="late"), lambda: True) is None
    assert transcript.entries == []
    assert seen == []  # nothing appended, nobody told
    kept = transcript.append_unless(AssistantText(text="on time"), lambda: False)
    assert kept is not None
    assert transcript.entries == [kept]
    assert seen == [kept.id]
