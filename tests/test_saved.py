"""The widget's saved state, which a published notebook draws with no kernel (spec N-1).

The browser half (an executed notebook exported to HTML, read offline in Chromium) is
``tests/browser/test_published_browser.py``.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from IPython.core.events import EventManager, available_events

from turnfold import ondemand
from turnfold import widget as widget_module
from turnfold.codec import dump_bytes
from turnfold.recording import Recorder
from turnfold.render.viewmodel import iter_nodes
from turnfold.samples import claude_code_session
from turnfold.transport import unpack_view
from turnfold.widget import TranscriptWidget


def recorded(turns: int) -> Recorder:
    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    for n in range(turns):
        rec.user(f"Question {n}")
        call = rec.start_tool("Read", {"file_path": f"src/module_{n}.py"})
        rec.finish_tool(call, "x = 1\n" * 200)  # a folded result of 1,200 characters
        rec.assistant(f"Answer {n}.")
    return rec


def saved(widget: TranscriptWidget) -> dict[str, Any]:
    return dict(unpack_view(widget._view))


def processes(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [node["process"] for node in view["nodes"] if node["kind"] == "turn"]


def test_N1_a_view_within_the_budget_is_saved_with_every_disclosures_content(
    widgets: list[TranscriptWidget],
) -> None:
    transcript = claude_code_session()  # sub-agents, summaries, folded results
    widget = TranscriptWidget(transcript)
    widgets.append(widget)
    widget._repr_mimebundle_()  # displayed: the timeline is laid out for the static renderings
    view = saved(widget)["view"]
    assert all(not process.get("deferred") for process in processes(view))
    nodes = list(iter_nodes(view))
    assert not [node["key"] for node in nodes if node.get("deferred")]
    assert {node["key"] for node in nodes} == {node["key"] for node in iter_nodes(widget.view)}
    assert view["timeline"]["turns"]  # the timeline opens with no kernel too
    assert len(widget._view) < len(dump_bytes(view)) / 4  # compressed


def test_N1_past_the_budget_headers_and_answers_are_saved_and_processes_wait(
    widgets: list[TranscriptWidget], monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = recorded(40)
    whole = TranscriptWidget(rec.transcript)
    widgets.append(whole)
    assert whole._transport.whole  # about 60 KB whole: within the budget
    monkeypatch.setattr(ondemand, "WHOLE_VIEW_BUDGET", 20_000)
    widget = TranscriptWidget(rec.transcript)
    widgets.append(widget)
    view = saved(widget)["view"]
    assert not widget._transport.whole
    assert all(process["deferred"] and not process["children"] for process in processes(view))
    answers = [node["answer"]["html"] for node in view["nodes"] if node["kind"] == "turn"]
    assert len(answers) == 40
    assert all("Answer" in answer for answer in answers)


def test_N1_the_saved_view_is_renewed_when_shown_again_not_per_change(
    widgets: list[TranscriptWidget],
) -> None:
    rec = recorded(2)
    widget = TranscriptWidget(rec.transcript)
    widgets.append(widget)
    first = widget._view
    rec.user("One more question")
    widget.flush()  # the views get a patch; the saved state waits for the cell to end
    assert widget._view == first
    widget.save_view()
    renewed = saved(widget)
    assert renewed["rev"] == widget._transport.rev == 1
    assert renewed["view"]["nodes"][-1]["kind"] == "user"
    widget.save_view()  # nothing changed since: the trait is not sent again
    assert saved(widget)["rev"] == 1


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """A stand-in for the kernel's IPython shell: its events, as IPython triggers them."""
    shell = SimpleNamespace(kernel=object())
    shell.events = EventManager(shell, available_events)
    monkeypatch.setattr(widget_module, "kernel_shell", lambda: shell)
    return shell


def test_N1_a_cell_that_ends_saves_the_transcript_as_it_left_it(
    kernel: SimpleNamespace,
) -> None:
    rec = recorded(1)
    widget = TranscriptWidget(rec.transcript)
    rec.assistant("A last word, appended by the cell.")
    kernel.events.trigger("post_execute")
    answers = [node["answer"] for node in saved(widget)["view"]["nodes"] if node["kind"] == "turn"]
    assert "A last word" in answers[-1]["html"]
    widget.close()
    assert kernel.events.callbacks["post_execute"] == []  # a closed widget saves nothing more


def test_N1_a_view_mounting_later_gets_the_whole_view_only_if_it_drew_another(
    widgets: list[TranscriptWidget],
) -> None:
    rec = recorded(1)
    widget = TranscriptWidget(rec.transcript)
    widgets.append(widget)
    sent: list[dict[str, Any]] = []
    widget.comm.send = lambda data=None, metadata=None, buffers=None: sent.append(data["content"])
    rec.user("More")
    widget.flush()  # revision 1; the saved view is still revision 0
    for drew, gets_view in ((1, False), (0, True), (-1, True), (None, True)):
        sent.clear()
        hello = {"type": "hello", "view": "v"} | ({} if drew is None else {"rev": drew})
        widget._on_view_message(widget, hello, [])
        (full,) = [message for message in sent if message["type"] == "full"]
        assert full["rev"] == 1
        assert (full["view"] is not None) is gets_view, drew
