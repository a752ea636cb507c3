"""Following a growing transcript costs what changed (Q-3), and shows what a fresh build shows.

:class:`ProjectionPlanner` re-plans only the turns whose entries changed; the widget rebuilds
only their nodes. Both are checked against building from scratch after every step of random
agent runs, recorded with :class:`Recorder` as a live agent would be.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from turnfold.model import ToolCall
from turnfold.process import ProjectionPlanner, project
from turnfold.recording import Recorder
from turnfold.settings import DisplaySettings
from turnfold.widget import TranscriptWidget

STEPS = st.lists(
    st.sampled_from(
        ["user", "assistant", "thinking", "read", "bash", "finish", "end", "label", "relabel",
         "notice", "stream", "abort", "fail", "pending"]
    ),
    max_size=30,
)  # fmt: skip


def step(rec: Recorder, action: str, n: int) -> None:
    """One thing a live agent (or its labeller) does; ``n`` makes texts differ."""
    calls = [e for e in rec.transcript.entries if isinstance(e, ToolCall)]
    running = [c for c in calls if c.status in ("pending", "executing")]
    if action == "user":
        rec.user(f"Question {n}")
    elif action == "assistant":
        rec.assistant(f"Answer {n} with `code`")
    elif action == "thinking":
        rec.thinking(f"Thinking {n}")
    elif action == "read":
        rec.start_tool("Read", {"file_path": f"f{n}.py"})
    elif action == "bash":
        rec.start_tool("Bash", {"command": f"pytest -k t{n}"})
    elif action == "finish" and running:
        rec.finish_tool(running[0], f"output {n}\n" * 3)
    elif action == "end":
        rec.end_batch()
    elif action in ("label", "relabel") and calls:
        label = rec.label([calls[n % len(calls)]], f"Label {n}")
        if action == "relabel":  # a label changed in place, through the transcript
            rec.transcript.update(label, label=f"Relabelled {n}")
    elif action == "notice":
        rec.notice(f"Notice {n}")
    elif action == "stream":
        entry = rec.assistant("Partly")
        rec.stream(entry, f" streamed {n}", done=True)
    elif action == "abort":
        rec.abort()
    elif action == "fail":
        rec.fail(f"Error {n}")
    elif action == "pending":
        rec.pending("permission", f"Allow {n}?")


@settings(max_examples=60, deadline=None)
@given(STEPS, st.sampled_from(["fully-folded", "flat", "command-first"]), st.booleans())
def test_Q3_the_planner_plans_what_a_fresh_projection_plans(
    actions: list[str], mode: str, hint: bool
) -> None:
    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    settings_ = DisplaySettings(transcript_display_mode=mode)
    planner = ProjectionPlanner(rec.transcript)
    changed: set[str] = set()
    rec.transcript.observe(lambda change: changed.add(change.entry.id))
    for n, action in enumerate(actions):
        step(rec, action, n)
        items, _ = planner.plan(settings_, running=hint, changed=set(changed))
        changed.clear()
        expected = project(rec.transcript, settings_, running=hint)
        assert [item.project() for item in items] == expected, action


def fresh_nodes(widget: TranscriptWidget) -> list[Any]:
    other = TranscriptWidget(widget.transcript, DisplaySettings(**widget.settings.to_dict()))
    try:
        return list(other.view["nodes"])
    finally:
        other.close()


@settings(max_examples=40, deadline=None)
@given(STEPS)
def test_Q3_the_widget_rebuilding_only_what_changed_shows_a_fresh_build(actions: list[str]) -> None:
    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    widget = TranscriptWidget(rec.transcript, DisplaySettings())
    try:
        for n, action in enumerate(actions):
            step(rec, action, n)
            if n % 3 == 0:  # several changes between flushes too, as the timer coalesces them
                widget.flush()
                assert widget.view["nodes"] == fresh_nodes(widget), action
        widget.flush()
        assert widget.view["nodes"] == fresh_nodes(widget)
    finally:
        widget.close()
