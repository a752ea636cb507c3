"""P-11: a search finds what a view capped (F-12: an output's or a message's rest, one click
away), in the widget and in ``search_view`` given the whole text."""

from __future__ import annotations

from turnfold.recording import Recorder
from turnfold.render.search import search_view
from turnfold.widget import TranscriptWidget


def _long_run() -> Recorder:
    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    rec.user("Why does the build fail?")
    log = "\n".join(f"step {n}: ok" for n in range(500))
    call = rec.start_tool("Bash", {"command": "make"})
    rec.finish_tool(call, log.replace("step 420: ok", "step 420: E1234 disk full"))
    rec.assistant("It ran out of disk. " + "Details follow. " * 20_000 + "Free /var/tmp first.")
    return rec


def test_P11_the_widget_finds_text_past_the_part_of_an_output_or_answer_its_view_shows() -> None:
    widget = TranscriptWidget(_long_run().transcript)
    assert widget.search("E1234 disk full") == ([{"key": "e1", "path": ["process:turn:e0"]}], 1)
    assert widget.search("free /VAR/tmp") == ([{"key": "e2", "path": []}], 1)
    hits, total, label = widget.search_hits("E1234")
    assert (hits, total, label) == ([{"key": "e1", "path": ["process:turn:e0"]}], 1, "1 match")


def test_P11_search_view_reads_the_whole_text_only_of_nodes_it_capped() -> None:
    widget = TranscriptWidget(_long_run().transcript)
    asked: list[str] = []

    def whole(key: str) -> str:
        asked.append(key)
        return "".join(widget.output_parts(key))

    assert search_view(widget.view, "E1234") == ([], 0)  # without it: only what the view holds
    assert search_view(widget.view, "E1234", whole=whole)[1] == 1
    assert sorted(asked) == ["e1", "e2"]  # the prompt, short, is never asked for
