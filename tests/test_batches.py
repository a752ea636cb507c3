"""The tool batch rendering rules as one pure function (spec F-10 … F-15)."""

from __future__ import annotations

import copy

import pytest

from turnfold.batches import (
    BatchView,
    SummaryRow,
    ToolRow,
    build_batch_view,
    iter_batches,
    label_for,
    labels_by_call,
)
from turnfold.model import (
    AssistantText,
    ImageData,
    SubAgent,
    ToolCall,
    ToolResult,
    ToolUseSummary,
    Transcript,
)

TEXT = ToolResult(text="file contents")


def call(
    name: str,
    description: str | None = None,
    status: str = "success",
    result: ToolResult | None = TEXT,
    **extra: object,
) -> ToolCall:
    call_id = f"{name}:{description}:{status}"
    return ToolCall(
        call_id=call_id,
        name=name,
        description=description,
        status=status,  # type: ignore[arg-type]
        result=result,
        **extra,  # type: ignore[arg-type]
    )


def shape(view: BatchView) -> list[str]:
    """The batch as a list: ``summary:<text>`` for the summary row, the tool name for a row."""
    return [
        f"summary:{item.text}" if isinstance(item, SummaryRow) else item.name for item in view.items
    ]


def rows(view: BatchView) -> list[ToolRow]:
    out: list[ToolRow] = []
    for item in view.items:
        out.extend(item.rows if isinstance(item, SummaryRow) else [item])
    return out


# --- F-10 / F-10a -------------------------------------------------------------------------------

PARTITION_CASES = [
    ("empty batch", [], []),
    ("one read", [call("Read", "a.ts")], ["summary:Read a.ts"]),
    (
        "reads, searches and lists fold into one row",
        [call("Read", "a.ts"), call("Grep", "TODO"), call("LS", "/src")],
        ["summary:Searched TODO, read a.ts, listed /src"],
    ),
    (
        "mutations render one row each",
        [call("Edit", "a.ts"), call("Bash", "ls"), call("Write", "b.ts"), call("x")],
        ["Edit", "Bash", "Write", "x"],
    ),
    (
        "mixed: the summary row stands where its first tool was called",
        [call("Bash", "ls"), call("Read", "a.ts"), call("Edit", "a.ts"), call("Read", "b.ts")],
        ["Bash", "summary:Read a.ts, b.ts", "Edit"],
    ),
    (
        "a cancelled collapsible tool gets its own row",
        [call("Read", "a.ts"), call("Read", "b.ts", "cancelled")],
        ["summary:Read a.ts", "Read"],
    ),
    (
        "a result with an inline image gets its own row",
        [
            call("Read", "a.ts"),
            call(
                "Read",
                "b.png",
                result=ToolResult(images=[ImageData(media_type="image/png", data="")]),
            ),
        ],
        ["summary:Read a.ts", "Read"],
    ),
    (
        "an active batch uses active verbs and an ellipsis",
        [call("Read", "a.ts"), call("Read", "b.ts", "executing", None)],
        ["summary:Reading a.ts, b.ts…"],
    ),
    (
        "a command still running makes the whole batch active",
        [call("Read", "a.ts"), call("Bash", "make", "pending", None)],
        ["summary:Reading a.ts…", "Bash"],
    ),
]


@pytest.mark.parametrize(
    ("batch", "expected"),
    [case[1:] for case in PARTITION_CASES],
    ids=[case[0] for case in PARTITION_CASES],
)
def test_F10_type_partition(batch: list[ToolCall], expected: list[str]) -> None:
    view = build_batch_view(batch)
    assert shape(view) == expected
    assert not view.force_expand


def test_F10_cancelled_collapsible_tool_is_struck_and_keeps_output() -> None:
    partial = ToolResult(text="partial")
    view = build_batch_view(
        [call("Read", "a.ts", "cancelled", partial), call("Bash", "x", "cancelled")]
    )
    read, bash = rows(view)
    assert read.struck
    assert not read.result_folded
    assert not bash.struck  # only collapsible tools are struck through


def test_F10a_summary_row_opens_to_each_tool() -> None:
    batch = [call("Read", "a.ts"), call("Grep", "TODO"), call("Bash", "ls")]
    summary = build_batch_view(batch).items[0]
    assert isinstance(summary, SummaryRow)
    assert [r.name for r in summary.rows] == ["Read", "Grep"]
    assert [r.call_id for r in summary.rows] == [batch[0].call_id, batch[1].call_id]
    assert all(r.result_folded for r in summary.rows)


def test_F5_active_and_done() -> None:
    for status in ("executing", "pending", "confirming"):
        assert build_batch_view([call("Read", "a.ts", status)]).active
    for status in ("success", "error", "cancelled", "unknown"):
        assert not build_batch_view([call("Read", "a.ts", status)]).active


# --- F-11 -----------------------------------------------------------------------------------------

MEMORY_CASES = [
    (
        "all recalled",
        [call("recall", memory="read"), call("recall", memory="read")],
        "Recalled 2 memories",
    ),
    ("one written", [call("save_memory")], "Wrote 1 memory"),
    (
        "both",
        [call("r", memory="read"), call("save_memory"), call("save_memory")],
        "Recalled 1 memory, Wrote 2 memories",
    ),
]


@pytest.mark.parametrize(
    ("batch", "badges"), [c[1:] for c in MEMORY_CASES], ids=[c[0] for c in MEMORY_CASES]
)
def test_F11_memory_only_batch_is_badges(batch: list[ToolCall], badges: str) -> None:
    view = build_batch_view(batch)
    assert view.memory_only
    assert view.items == ()
    assert view.memory_badges == badges


@pytest.mark.parametrize("flag", ["full_detail", "show_tool_call_args"])
def test_F11_detail_renders_memory_tools_as_rows(flag: str) -> None:
    view = build_batch_view([call("save_memory"), call("r", memory="read")], **{flag: True})
    assert not view.memory_only
    assert view.memory_badges is None
    assert shape(view) == ["save_memory", "r"]


def test_F11_failed_memory_tool_is_not_badges() -> None:
    view = build_batch_view([call("save_memory"), call("save_memory", "x", "error")])
    assert not view.memory_only
    assert shape(view) == ["save_memory", "save_memory"]


def test_F11_mixed_batch_gets_dim_badge_line() -> None:
    view = build_batch_view(
        [
            call("r", memory="read"),
            call("Read", "a.ts"),
            call("r", memory="read"),
            call("save_memory"),
        ]
    )
    assert not view.memory_only
    assert shape(view) == ["summary:Read a.ts"]
    assert view.memory_badges == "Recalled 2 memories, Wrote 1 memory"


def test_F11_badges_in_chinese() -> None:
    view = build_batch_view([call("r", memory="read"), call("save_memory")], locale="zh")
    assert view.memory_badges == "回忆了 1 条记忆, 写入了 1 条记忆"


# --- F-12 -----------------------------------------------------------------------------------------

FOLDING_CASES = [
    ("collapsible text succeeded", call("Read", "a"), True),
    (
        "collapsible ANSI succeeded",
        call("Read", "a", result=ToolResult(text="x", kind="ansi")),
        True,
    ),
    ("collapsible diff", call("Read", "a", result=ToolResult(text="x", kind="diff")), False),
    ("collapsible plan", call("Read", "a", result=ToolResult(text="x", kind="plan")), False),
    ("collapsible todo", call("Read", "a", result=ToolResult(text="x", kind="todo")), False),
    (
        "collapsible markdown",
        call("Read", "a", result=ToolResult(text="x", kind="markdown")),
        False,
    ),
    ("collapsible without result", call("Read", "a", result=None), False),
    ("collapsible running", call("Read", "a", "executing"), False),
    ("collapsible pending", call("Read", "a", "pending"), False),
    ("collapsible outcome unknown", call("Read", "a", "unknown"), False),
    ("non-collapsible command", call("Bash", "ls"), False),
    ("non-collapsible edit", call("Edit", "a"), False),
    ("non-collapsible other", call("WebFetch", "x"), False),
]


@pytest.mark.parametrize(
    ("tool", "folded"), [c[1:] for c in FOLDING_CASES], ids=[c[0] for c in FOLDING_CASES]
)
def test_F12_result_folding(tool: ToolCall, folded: bool) -> None:
    (row,) = rows(build_batch_view([tool]))
    assert row.result_folded is folded


def test_F12_errors_and_cancelled_keep_their_output() -> None:
    view = build_batch_view([call("Read", "a", "error"), call("Read", "b", "cancelled")])
    assert [r.result_folded for r in rows(view)] == [False, False]


# --- F-13 -----------------------------------------------------------------------------------------


def test_F13_rows_carry_the_tool_name_for_bold_rendering() -> None:
    view = build_batch_view([call("Read", "a.ts"), call("Bash", "ls")])
    assert [r.name for r in rows(view)] == ["Read", "Bash"]


# --- F-14 -----------------------------------------------------------------------------------------


def finished_subagent() -> ToolCall:
    return call("Task", "research", result=ToolResult(text="done", kind="subagent"),
                subagent=SubAgent(name="researcher", task="research", tool_count=2))  # fmt: skip


def waiting_subagent() -> ToolCall:
    child = Transcript([ToolCall(call_id="c", name="Bash", status="confirming")])
    return call("Task", "research", "executing", None, subagent=SubAgent(transcript=child))


FORCE_CASES = [
    ("a tool error", [call("Read", "a"), call("Read", "b", "error")], {}, [False, True]),
    ("awaiting confirmation", [call("Read", "a"), call("Bash", "rm", "confirming", None)], {},
     [False, True]),
    ("a sub-agent awaiting confirmation", [call("Read", "a"), waiting_subagent()], {},
     [False, True]),
    ("a finished sub-agent", [call("Read", "a"), finished_subagent()], {}, [False, True]),
    ("a user-initiated batch", [call("Bash", "ls"), call("Read", "a")], {"user_initiated": True},
     [True, True]),
    ("a user-initiated call", [call("Read", "a"), call("Bash", "ls", user_initiated=True)], {},
     [False, True]),
    ("full detail", [call("Read", "a"), call("Read", "b")], {"full_detail": True}, [True, True]),
    ("tool arguments shown", [call("Read", "a"), call("Read", "b")], {"show_tool_call_args": True},
     [False, False]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("batch", "flags", "forced"), [c[1:] for c in FORCE_CASES], ids=[c[0] for c in FORCE_CASES]
)
def test_F14_force_expand(
    batch: list[ToolCall], flags: dict[str, bool], forced: list[bool]
) -> None:
    view = build_batch_view(batch, **flags)
    assert view.force_expand
    assert all(isinstance(item, ToolRow) for item in view.items), "no partition when forced"
    assert [r.result_forced_open for r in rows(view)] == forced


def test_F14_successful_siblings_keep_normal_folding() -> None:
    view = build_batch_view([call("Read", "a"), call("Grep", "b", "error")])
    read, grep = rows(view)
    assert read.result_folded
    assert not read.result_forced_open
    assert grep.result_forced_open
    assert not grep.result_folded


def test_F14_show_args_marks_rows() -> None:
    view = build_batch_view([call("Read", "a")], show_tool_call_args=True)
    assert all(r.show_args for r in rows(view))
    assert not any(r.show_args for r in rows(build_batch_view([call("Read", "a")])))


def test_F14_running_subagent_does_not_force_expand() -> None:
    running = call("Task", "research", "executing", None, subagent=SubAgent(task="research"))
    view = build_batch_view([call("Read", "a"), running])
    assert not view.force_expand
    assert shape(view) == ["summary:Reading a…", "Task"]


def test_F7_finished_subagent_row_carries_its_line() -> None:
    row = rows(build_batch_view([finished_subagent()]))[0]
    assert row.subagent_line == "✔ researcher: research · 2 tools"
    assert rows(build_batch_view([call("Bash", "ls")]))[0].subagent_line is None


# --- F-15 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flags", [{}, {"full_detail": True}, {"show_tool_call_args": True}, {"user_initiated": True}]
)
def test_F15_label_always_renders_beside_the_summary(flags: dict[str, bool]) -> None:
    batch = [call("Read", "a.ts"), call("Grep", "auth")]
    label = ToolUseSummary(label="Searched in auth/", call_ids=[batch[0].call_id])
    view = build_batch_view(batch, label=label, **flags)
    assert view.label_line == "● Searched in auth/"
    assert build_batch_view(batch, label="Read config", **flags).label_line == "● Read config"
    assert build_batch_view(batch, **flags).label_line is None


def test_F15_label_on_memory_only_batch() -> None:
    assert build_batch_view([call("save_memory")], label="Saved prefs").label == "Saved prefs"


def test_label_for_attaches_by_call_ids_even_after_later_batches() -> None:
    first = [call("Read", "a"), call("Read", "b")]
    second = [call("Bash", "ls")]
    entries = [*first, *second, ToolUseSummary(label="Read both", call_ids=[first[1].call_id])]
    assert label_for(first, entries) is entries[-1]
    assert label_for(second, entries) is None


# --- batches and purity ---------------------------------------------------------------------------


def test_iter_batches_groups_consecutive_calls_by_batch_id() -> None:
    a1, a2 = call("Read", "1", batch_id="a"), call("Read", "2", batch_id="a")
    b1 = call("Bash", "3", batch_id="b")
    loose1, loose2 = call("Read", "4"), call("Read", "5")
    a3 = call("Read", "6", batch_id="a")
    entries = [a1, a2, b1, AssistantText(text="hm"), loose1, loose2, a3]
    assert [[c.description for c in b] for b in iter_batches(entries)] == [
        ["1", "2"], ["3"], ["4"], ["5"], ["6"]
    ]  # fmt: skip


def test_build_batch_view_does_not_modify_its_input() -> None:
    batch = [call("Read", "a"), call("Bash", "ls", "error"), finished_subagent()]
    snapshot = copy.deepcopy(batch)
    build_batch_view(batch, full_detail=True, label="x")
    build_batch_view(batch)
    assert batch == snapshot


def test_F2_summary_row_in_chinese() -> None:
    view = build_batch_view([call("Read"), call("Read"), call("Read")], locale="zh")
    assert shape(view) == ["summary:读取了 3 个文件"]


def test_S6_label_for_picks_the_label_the_projection_shows() -> None:
    from turnfold.model import Transcript, UserMessage
    from turnfold.process import project

    batch = [call("Read", "a", batch_id="b1"), call("Read", "b", batch_id="b1")]
    later = ToolUseSummary(label="Read a", call_ids=[batch[0].call_id])
    earlier = ToolUseSummary(label="Read b", call_ids=[batch[1].call_id])
    entries = [UserMessage(text="go"), *batch, earlier, later, AssistantText(text="ok")]
    transcript = Transcript(entries)
    chosen = label_for(batch, transcript.entries)
    assert chosen is earlier  # the label of the batch's last labelled call, as shown
    assert label_for(batch, labels_by_call(transcript.entries)) is chosen
    (turn,) = [item for item in project(transcript) if hasattr(item, "process")]
    assert "Read b" in repr(turn.process)
