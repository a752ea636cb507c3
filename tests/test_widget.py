"""The notebook widget, kernel side (spec W-1 … W-4, P-10, P-11, L-5), without a browser.

Messages are captured where ipywidgets hands them to the comm, so the byte counts below are what
a real kernel would put on the wire. The JS side is tested in ``js/test`` (disclosure memory) and
in ``tests/browser`` (a real JupyterLab).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import traitlets

from turnfold.display import register_display, transcript_mimebundle
from turnfold.model import Transcript, UserMessage
from turnfold.recording import Recorder
from turnfold.render.html import render_html
from turnfold.render.search import search_view
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.samples import demo_session
from turnfold.settings import DisplaySettings
from turnfold.transport import diff_nodes, unpack_view
from turnfold.widget import TranscriptWidget

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class Wire:
    """Every comm message a widget sends, as a kernel would serialize it."""

    def __init__(self, widget: TranscriptWidget) -> None:
        self.messages: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        widget.comm.send = self.send

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        with self.lock:
            self.messages.append(data)

    def custom(self, kind: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            found = [m["content"] for m in self.messages if m.get("method") == "custom"]
        return [m for m in found if kind is None or m.get("type") == kind]

    def clear(self) -> None:
        with self.lock:
            self.messages.clear()

    @staticmethod
    def size(message: Any) -> int:
        """Bytes of a message body as jupyter_client's session packs it (compact JSON, UTF-8)."""
        return len(json.dumps(message, ensure_ascii=False, allow_nan=False).encode())


def recorded(turns: int) -> Recorder:
    """A settled transcript of ``turns`` turns: a question, a read, a command, an answer."""
    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    for n in range(turns):
        rec.user(f"Question {n}: why does test_{n} fail?")
        read = rec.start_tool("Read", {"file_path": f"src/module_{n}.py"})
        rec.finish_tool(read, f"def f_{n}():\n    return {n}\n")
        run = rec.start_tool("Bash", {"command": f"pytest -k test_{n}"})
        rec.finish_tool(run, "1 passed")
        rec.assistant(f"Fixed test_{n}.")
    return rec


def make(
    widgets: list[TranscriptWidget], transcript: Transcript, **kwargs: Any
) -> TranscriptWidget:
    widget = TranscriptWidget(transcript, **kwargs)
    widgets.append(widget)
    return widget


def saved(widget: TranscriptWidget) -> dict[str, Any]:
    """The wire form the widget's ``_view`` trait holds (what a saved notebook keeps)."""
    return dict(unpack_view(widget._view)["view"])


# --- W-1: the initial state -----------------------------------------------------------------------


def test_W1_initial_view_is_the_view_model_and_settled_turns_start_closed(
    widgets: list[TranscriptWidget],
) -> None:
    transcript = demo_session()
    widget = make(widgets, transcript)
    view = saved(widget)
    raw = build_view_model(transcript)
    assert [n["key"] for n in view["nodes"]] == [n["key"] for n in raw["nodes"]]
    assert view["mode"] == "fully-folded"
    turns = [n for n in view["nodes"] if n["kind"] == "turn"]
    assert turns
    assert all(t["process"] is None or t["process"]["open"] is False for t in turns)  # P-8
    assert widget._folds == {}
    assert widget._strings["search"]
    assert widget._strings["arguments"] == "Arguments"
    json.dumps(view)  # JSON-ready


def test_W1_the_view_gets_catalog_phrases_so_the_js_needs_no_rules(
    widgets: list[TranscriptWidget],
) -> None:
    widget = make(widgets, demo_session())
    tools = [n for n in _nodes(widget.view) if n["kind"] == "tool"]
    assert tools
    for tool in tools:
        assert set(tool["fold"]) == {"args", "result", "note", "subagent"}
        assert (tool["status_label"] is None) == (tool["status"] == "success")
        if tool["result"] is not None:
            assert "more_label" in tool["result"]
            assert "notes_text" in tool["result"]


def test_W1_the_bundle_is_referenced_and_the_css_includes_content_styles() -> None:
    esm = TranscriptWidget._esm
    assert "export default" in str(esm) or str(getattr(esm, "_path", esm)).endswith("widget.js")
    assert ".tf-ansi-fg1" in TranscriptWidget._css  # content fragments (ANSI, code, diffs)


# --- W-2: incremental, small, independent of the transcript's length ------------------------------


def _bytes_for_one_appended_tool_call(
    widgets: list[TranscriptWidget], turns: int
) -> tuple[int, list[dict[str, Any]], str]:
    """The bytes sent for one call appended to the last of ``turns`` turns, the messages, and
    the key of that turn."""
    rec = recorded(turns)
    widget = make(widgets, rec.transcript)
    wire = Wire(widget)
    rec.start_tool("Grep", {"pattern": "needle", "path": "src"})
    widget.flush()
    messages = wire.custom()
    return sum(Wire.size(m) for m in wire.messages), messages, widget.view["nodes"][-1]["key"]


def test_W2_bytes_for_one_appended_tool_call_do_not_grow_with_the_transcript(
    widgets: list[TranscriptWidget],
) -> None:
    # Compared within each regime of N-1: a view that travels whole (10 and 400 turns), and one
    # past the budget (1000 and 3000 turns), where the turn the call joins was sent deferred, so
    # its process, open now that the turn runs, travels whole once.
    sizes = {}
    for turns in (10, 400, 1000, 3000):
        sizes[turns], messages, turn = _bytes_for_one_appended_tool_call(widgets, turns)
        (patch,) = messages
        assert patch["type"] == "patch"
        # Only the last turn, and only what changed in it: a patch of it, not the turn whole.
        assert patch["upsert"] == []
        assert [change["key"] for change in patch["change"]] == [turn]
        assert patch["remove"] == []
        assert "nodes" not in patch
        assert set(patch.get("fields", {})) <= {"session"}  # U-3: the header counts one more
    print(f"\nW-2 bytes for one appended tool call, by turns: {sizes}")
    assert sizes[400] / sizes[10] < 1.5
    assert sizes[3000] / sizes[1000] < 1.5
    assert max(sizes.values()) < 10_000


def test_W2_a_large_patch_delays_the_next_update_by_what_drawing_it_costs(
    widgets: list[TranscriptWidget], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next update waits nine times what the last one cost, its drawing in the browser
    included, which the kernel cannot hear while a cell runs: it is estimated from the
    patch's size. A row or two keep the view updating three times a second; a burst of a
    fast agent's hundreds of rows waits longer, up to a second."""
    from turnfold import transport

    rec = recorded(2)
    widget = make(widgets, rec.transcript)
    wire = Wire(widget)
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)  # building costs nothing
    delay = widget._updates._delay
    assert delay == transport.MIN_DELAY_S
    rec.start_tool("Grep", {"pattern": "needle", "path": "src"})
    widget.flush()
    (small,) = wire.custom("patch")
    assert widget._updates._delay == transport.MIN_DELAY_S  # a row: three updates a second
    wire.clear()
    for n in range(300):
        call = rec.start_tool("Read", {"file_path": f"src/module_{n}.py"})
        rec.finish_tool(call, "x = 1\n" * 20)
    widget.flush()
    (large,) = wire.custom("patch")
    drawing = Wire.size(large) * transport.DRAW_S_PER_BYTE
    assert drawing > transport.MIN_DELAY_S / 9  # enough to matter
    expected = min(transport.MAX_DELAY_S, drawing * (1 / transport.REDRAW_SHARE - 1))
    assert widget._updates._delay == pytest.approx(expected, rel=0.05)
    assert Wire.size(small) * transport.DRAW_S_PER_BYTE * 9 < transport.MIN_DELAY_S


def test_W2_a_status_change_resends_only_its_turn(widgets: list[TranscriptWidget]) -> None:
    rec = recorded(3)
    call = rec.start_tool("Bash", {"command": "make"})
    widget = make(widgets, rec.transcript)
    wire = Wire(widget)
    rec.finish_tool(call, "done")
    widget.flush()
    (patch,) = wire.custom("patch")
    assert patch["upsert"] == []
    assert [change["key"] for change in patch["change"]] == [widget.view["nodes"][-1]["key"]]
    assert patch["base"] == patch["rev"] - 1


def test_W2_nothing_is_sent_when_nothing_visible_changed(widgets: list[TranscriptWidget]) -> None:
    widget = make(widgets, demo_session())
    wire = Wire(widget)
    widget.flush()
    assert wire.custom() == []


def _fields_for(patch: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The fields a patch sends for the node ``key``, wherever it is nested."""
    found = [patch.get("fields", {})] if patch.get("key") == key else []
    for change in patch.get("change", []):
        found += _fields_for(change, key)
    return found


def test_L2_a_patch_sets_and_clears_a_summary_row_s_rejected_mark(
    widgets: list[TranscriptWidget],
) -> None:
    """The label is always on the node (None when not rejected), so a patch, which sends only
    the fields a node has, can take it away as well as put it there."""
    from turnfold.model import AssistantText, ToolCall

    calls = [
        ToolCall(call_id=f"c{n}", name="Read", args={"file_path": f"{n}.py"}, status="success",
                 batch_id="b")
        for n in (1, 2)
    ]  # fmt: skip
    transcript = Transcript([UserMessage(text="Read both"), *calls, AssistantText(text="Done.")])
    widget = make(widgets, transcript)
    (summary,) = [n for n in iter_nodes(widget.view) if n["kind"] == "summary"]
    assert summary["rejected_label"] is None
    wire = Wire(widget)
    for marks, label in (({"rejected": True}, "Rejected"), ({}, None)):
        for call in calls:
            transcript.update(call, meta=marks)
        widget.flush()
        (patch,) = wire.custom("patch")
        assert {"rejected_label": label}.items() <= _fields_for(patch, summary["key"])[0].items()
        wire.clear()


def test_W2_diff_nodes_sends_new_changed_and_moved_nodes_with_their_anchor() -> None:
    a, b, c = ({"key": k, "v": 0} for k in "abc")
    assert diff_nodes([a, b], [a, b, c]) == ([{"after": "b", "node": c}], [])
    changed = {"key": "b", "v": 1}
    assert diff_nodes([a, b, c], [a, changed, c]) == ([{"after": "a", "node": changed}], [])
    # A removal alone sends nothing else: the receiver drops "a" and "b" is first anyway.
    assert diff_nodes([a, b, c], [b, c]) == ([], ["a"])
    # A node whose predecessor changed is sent again with its new anchor.
    assert diff_nodes([a, b, c], [a, c, b]) == (
        [{"after": "a", "node": c}, {"after": "c", "node": b}],
        [],
    )
    assert diff_nodes([a, b], [a, b]) == ([], [])


def test_L5_appending_from_another_thread_reaches_the_view(widgets: list[TranscriptWidget]) -> None:
    rec = recorded(2)
    widget = make(widgets, rec.transcript)
    wire = Wire(widget)

    def agent() -> None:
        rec.user("One more thing")
        for n in range(20):  # a burst: coalesced, not one message per append
            call = rec.start_tool("Read", {"file_path": f"f{n}.py"})
            rec.finish_tool(call, "x")
        rec.assistant("Done.")

    worker = threading.Thread(target=agent)
    worker.start()
    worker.join()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        keys = [u["node"]["key"] for p in wire.custom("patch") for u in p["upsert"]]
        if widget.view["nodes"][-1]["key"] in keys and widget.view == _fresh_view(widget):
            break
        time.sleep(0.02)
    patches = wire.custom("patch")
    assert patches, "the timer thread never flushed"
    assert len(patches) < 20, "bursts are coalesced"
    assert [p["rev"] for p in patches] == list(range(1, len(patches) + 1))
    assert widget.view["nodes"][-1]["answer"]["html"].endswith("Done.</p></div>")


def _fresh_view(widget: TranscriptWidget) -> dict[str, Any]:
    return TranscriptWidget(widget.transcript, widget.settings).view


def test_L5_closed_widgets_stop_listening(widgets: list[TranscriptWidget]) -> None:
    rec = recorded(1)
    widget = make(widgets, rec.transcript)
    wire = Wire(widget)
    widget.close()
    rec.user("after close")
    time.sleep(0.15)
    assert wire.custom() == []


# --- T-1 / T-4: settings linked both ways ---------------------------------------------------------


def test_T1_given_settings_are_linked_both_ways(widgets: list[TranscriptWidget]) -> None:
    settings = DisplaySettings()
    widget = make(widgets, demo_session(), settings=settings)
    widget.transcript_display_mode = "flat"
    assert settings.transcript_display_mode == "flat"
    settings.show_thinking = False
    assert widget.show_thinking is False
    settings.locale = "zh-CN"
    assert widget.locale == "zh"
    assert widget._strings["search"] == "搜索此记录"


def test_T2_an_invalid_mode_resolves_alike_on_both_sides(widgets: list[TranscriptWidget]) -> None:
    settings = DisplaySettings(transcript_display_mode="flat")
    widget = make(widgets, demo_session(), settings=settings)
    with pytest.warns(UserWarning, match="invalid transcript_display_mode"):
        widget.transcript_display_mode = "sideways"
    assert widget.transcript_display_mode == settings.transcript_display_mode == "fully-folded"


def test_T1_a_setting_given_by_name_is_that_setting_and_an_unknown_name_is_refused(
    widgets: list[TranscriptWidget],
) -> None:
    """``TranscriptWidget(t, locale="zh")`` sets the locale (it failed with "multiple values
    for keyword argument"); a name that is no setting nor a widget's trait (``mode=``) is an
    error, where traitlets dropped it; a bad value is checked as the settings check it, and
    its warning points at the user's line."""
    widget = make(widgets, demo_session(), locale="zh", show_thinking=False)
    assert (widget.locale, widget.settings.locale, widget.show_thinking) == ("zh", "zh", False)
    assert widget._strings["search"] == "搜索此记录"
    with pytest.raises(TypeError, match=r"no argument 'mode'; its display settings are show_"):
        TranscriptWidget(demo_session(), mode="flat")
    with pytest.warns(UserWarning, match="invalid transcript_display_mode") as warned:
        make(widgets, demo_session(), transcript_display_mode="sideways")
    assert warned[0].filename == __file__


def test_T4_a_settings_widget_can_link_to_the_widget_traits(
    widgets: list[TranscriptWidget],
) -> None:
    panel = DisplaySettings()
    widget = make(widgets, demo_session())
    traitlets.link((panel, "transcript_display_mode"), (widget, "transcript_display_mode"))
    panel.transcript_display_mode = "command-first"
    assert widget.settings.transcript_display_mode == "command-first"


def test_T4_a_setting_change_sends_only_what_changed(widgets: list[TranscriptWidget]) -> None:
    widget = make(widgets, demo_session())
    wire = Wire(widget)
    widget.show_thinking = False
    widget.flush()
    (patch,) = wire.custom("patch")
    assert patch["fields"] == {"show_thinking": False}
    sent = {u["node"]["key"] for u in patch["upsert"]} | {c["key"] for c in patch["change"]}
    assert sent
    assert all(key.startswith("turn:") for key in sent)
    assert widget.view["show_thinking"] is False


# --- P-10: fold memory is the view's, never the transcript's or the settings' ---------------------


def test_P10_folds_written_by_the_view_touch_neither_transcript_nor_settings(
    widgets: list[TranscriptWidget],
) -> None:
    transcript = demo_session()
    settings = DisplaySettings()
    before = (transcript.dump(), settings.to_dict())
    widget = make(widgets, transcript, settings=settings)
    widget.set_state({"_folds": {"process:turn:e0": "open", "group:e1": "owned", "e2": "closed"}})
    assert widget._folds["group:e1"] == "owned"
    assert (transcript.dump(), settings.to_dict()) == before
    assert "_folds" not in json.dumps(widget._repr_mimebundle_()[0]["text/html"])


def test_P10_a_view_mounted_later_gets_the_current_view_once(
    widgets: list[TranscriptWidget],
) -> None:
    rec = recorded(2)
    widget = make(widgets, rec.transcript)
    wire = Wire(widget)
    widget._handle_custom_msg({"type": "hello", "view": "v1"}, [])
    (welcome,) = wire.custom("full")
    assert welcome == {"type": "full", "to": "v1", "rev": 0, "view": None}  # `_view` is current
    rec.user("more")
    widget.flush()
    wire.clear()
    widget._handle_custom_msg({"type": "hello", "view": "v2"}, [])
    (full,) = wire.custom("full")
    assert full["to"] == "v2"
    assert full["rev"] == 1
    assert full["view"] == widget._transport.wire_view()  # closed content stays on demand (Q-2)
    assert [n["key"] for n in full["view"]["nodes"]] == [n["key"] for n in widget.view["nodes"]]


# --- B-1: one widget reused for another transcript ------------------------------------------------


def test_B1_show_draws_another_transcript_whole_with_its_own_folds(
    widgets: list[TranscriptWidget],
) -> None:
    first = demo_session()
    widget = make(widgets, first)
    wire = Wire(widget)
    other = recorded(2).transcript
    widget.show(other, {"process:turn:other": "open"})
    (message,) = wire.custom("replace")
    assert message["rev"] == 1
    assert message["folds"] == {"process:turn:other": "open"}
    assert [n["key"] for n in message["view"]["nodes"]] == [
        n["key"] for n in build_view_model(other)["nodes"]
    ]
    assert widget.transcript is other
    assert widget._folds == {"process:turn:other": "open"}
    # The old transcript is no longer followed; the new one is (W-2).
    wire.clear()
    first.append(UserMessage(text="an old session's new line"))
    widget.flush()
    assert wire.custom("patch") == []
    other.append(UserMessage(text="the shown session's new line"))
    widget.flush()
    (patch,) = wire.custom("patch")
    assert patch["base"] == 1


# --- P-11: reveal and search ----------------------------------------------------------------------


def test_P11_reveal_sends_only_the_ancestor_path(
    widgets: list[TranscriptWidget], in_parts: None
) -> None:
    widget = make(widgets, demo_session())
    wire = Wire(widget)
    path = widget.reveal("e3")  # a Read inside the summary row of the first group
    assert path == ["process:turn:e0", "group:e1", "summary:e2"]
    (message,) = wire.custom("reveal")
    # The closed process travels with the request, so the view can open the path at once (Q-2).
    nodes = message.pop("nodes")
    assert message == {"type": "reveal", "key": "e3", "path": path}
    assert list(nodes) == ["process:turn:e0"]
    assert nodes["process:turn:e0"]["children"]


def test_B2_reveal_takes_the_anchors_of_a_static_page(widgets: list[TranscriptWidget]) -> None:
    widget = make(widgets, demo_session())
    wire = Wire(widget)
    assert widget.reveal("#call-e3") == ["process:turn:e0", "group:e1", "summary:e2"]
    assert widget.reveal("call-e3") == ["process:turn:e0", "group:e1", "summary:e2"]
    turns = [n["key"] for n in widget.view["nodes"] if n["kind"] == "turn"]
    assert widget.reveal("#turn-2") == []  # a turn is at the top: nothing to open, scrolled to
    assert [m["key"] for m in wire.custom("reveal")] == ["e3", "e3", turns[1]]
    assert widget.reveal("#turn-99") is None
    assert widget.reveal("#call-nothing") is None


def test_P11_hidden_thinking_stays_hidden(widgets: list[TranscriptWidget]) -> None:
    widget = make(widgets, demo_session(), settings=DisplaySettings(show_thinking=False))
    wire = Wire(widget)
    assert widget.reveal("e1") is None  # e1 is reasoning
    assert wire.custom("reveal") == []
    hits, _ = widget.search("parseConfig handles defaults")
    assert hits == []
    widget.show_thinking = True
    hits, _ = widget.search("parseConfig handles defaults")
    assert [h["key"] for h in hits] == ["e1"]


def test_P11_search_answers_the_asking_view_with_keys_and_paths(
    widgets: list[TranscriptWidget],
) -> None:
    widget = make(widgets, demo_session())
    wire = Wire(widget)
    widget._handle_custom_msg({"type": "search", "view": "v1", "id": 7, "query": "CONFIG.TS"}, [])
    (reply,) = wire.custom("search")
    assert reply["to"] == "v1"
    assert reply["id"] == 7
    assert reply["total"] == len(reply["hits"]) > 0
    assert reply["label"].endswith("matches")
    by_key = {hit["key"]: hit["path"] for hit in reply["hits"]}
    assert by_key["e3"] == ["process:turn:e0", "group:e1", "summary:e2"]
    assert all(path[0].startswith("process:") for path in by_key.values() if path)


def test_P11_search_finds_tool_output_and_ignores_titles() -> None:
    view = build_view_model(demo_session())
    hits, total = search_view(view, "Received: undefined")  # the failing command's output
    assert [h["key"] for h in hits] == ["e7"]
    assert total == 1
    assert search_view(view, "operations") == ([], 0)  # a generated group count, not text
    assert search_view(view, "   ") == ([], 0)


# --- W-4: the display bundle ----------------------------------------------------------------------


def test_W4_the_bundle_carries_the_widget_and_deterministic_text_and_html(
    widgets: list[TranscriptWidget],
) -> None:
    first = make(widgets, demo_session())._repr_mimebundle_()
    second = make(widgets, demo_session())._repr_mimebundle_()
    assert first is not None
    assert second is not None
    data, _ = first
    assert set(data) == {WIDGET_MIME, "text/plain", "text/html"}
    assert data[WIDGET_MIME]["model_id"]
    assert data["text/plain"] == second[0]["text/plain"]
    assert data["text/html"] == second[0]["text/html"]
    view = build_view_model(demo_session())
    assert data["text/plain"] == render_text(view)
    assert data["text/html"] == render_html(view, standalone=False)
    assert "<script" not in data["text/html"]


def test_W4_the_bundle_follows_live_changes(widgets: list[TranscriptWidget]) -> None:
    rec = recorded(1)
    widget = make(widgets, rec.transcript)
    rec.user("A brand new question")
    bundle = widget._repr_mimebundle_()
    assert bundle is not None
    assert "A brand new question" in bundle[0]["text/plain"]


# --- W-1: a Transcript as the last expression of a cell -------------------------------------------


class _Formatter:
    def __init__(self) -> None:
        self.types: dict[type, Any] = {}
        self.by_name: dict[tuple[str, str], Any] = {}

    def for_type(self, cls: type, function: Any) -> None:
        self.types[cls] = function

    def for_type_by_name(self, module: str, name: str, function: Any) -> None:
        self.by_name[module, name] = function


class _Shell:
    def __init__(self, kernel: object | None) -> None:
        self.kernel = kernel
        self.display_formatter = type("DF", (), {"mimebundle_formatter": _Formatter()})()


def test_W1_transcripts_display_as_the_widget_in_a_kernel_only() -> None:
    assert register_display(_Shell(kernel=None)) is False
    shell = _Shell(kernel=object())
    assert register_display(shell) is True
    function = shell.display_formatter.mimebundle_formatter.types[Transcript]
    assert function is transcript_mimebundle
    data, _ = function(demo_session())
    assert {WIDGET_MIME, "text/plain", "text/html"} <= set(data)


def test_A1_framework_run_objects_display_as_their_transcript_by_type_name() -> None:
    from turnfold.display import run_mimebundle
    from turnfold.formats.frameworks import RUN_OBJECTS

    shell = _Shell(kernel=object())
    assert register_display(shell) is True
    by_name = shell.display_formatter.mimebundle_formatter.by_name
    runs = {name: function for name, function in by_name.items() if name in RUN_OBJECTS}
    assert set(runs) == set(RUN_OBJECTS)  # registered by name: no framework imported
    assert set(runs.values()) == {run_mimebundle}
    state = Path(__file__).parent / "fixtures/frameworks/openai-agents"
    run = json.loads(next(state.glob("*_run-state_*.json")).read_text(encoding="utf-8"))
    data, _ = run_mimebundle(run)
    assert {WIDGET_MIME, "text/plain", "text/html"} <= set(data)
    assert "explode failed" in data["text/plain"]
    assert run_mimebundle({"not": "a run"}) is None  # the object's own display, then


def test_W1_the_widget_refuses_what_is_not_a_transcript() -> None:
    with pytest.raises(TypeError, match="Transcript"):
        TranscriptWidget([])  # type: ignore[arg-type]


def _nodes(view: dict[str, Any]) -> list[dict[str, Any]]:
    from turnfold.render.viewmodel import iter_nodes

    return list(iter_nodes(view))


# --- Q-2, Q-3: closed content on demand, settled turns reused ------------------------------------


def _turns(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [node for node in view["nodes"] if node["kind"] == "turn"]


def _ask(widget: TranscriptWidget, wire: Wire, **request: Any) -> list[dict[str, Any]]:
    """Send what the JS view sends, as view "v1"; the replies addressed to it."""
    wire.clear()
    widget._handle_custom_msg({**request, "view": "v1"}, [])
    return [m for m in wire.custom() if m.get("to") == "v1"]


def big_output_session(size: int = 5 * 2**20, tool: str = "Read") -> tuple[Recorder, str]:
    """A settled transcript with one tool output of ``size`` characters; and that output."""
    rec = recorded(2)
    rec.user("Dump the log")
    line = "2026-01-01 12:00:00 INFO worker: processed a batch of records\n"
    output = line * (size // len(line)) + "\x1b[31mlast line\x07\n"
    args = {"command": "cat app.log"} if tool == "Bash" else {"file_path": "app.log"}
    call = rec.start_tool(tool, args)
    rec.finish_tool(call, output)
    rec.assistant("The log is long.")
    return rec, output


def test_Q2_a_settled_view_is_sent_closed_and_its_processes_on_demand(
    widgets: list[TranscriptWidget], in_parts: None
) -> None:
    widget = make(widgets, demo_session())
    wire = Wire(widget)
    sent = _turns(saved(widget))
    whole = _turns(widget.view)
    assert sent
    assert all(t["process"]["deferred"] for t in sent if t["process"])
    assert all(t["process"]["children"] == [] for t in sent if t["process"])
    assert [t["answer"] for t in sent] == [t["answer"] for t in whole]  # answers up front
    key = whole[0]["process"]["key"]
    (reply,) = _ask(widget, wire, type="content", keys=[key, "no-such-key"])
    assert reply["type"] == "content"
    assert reply["nodes"]["no-such-key"] is None  # gone (or never there): nothing to draw
    process = reply["nodes"][key]
    assert process["key"] == key
    assert not process.get("deferred")
    assert [c["key"] for c in process["children"]] == [
        c["key"] for c in whole[0]["process"]["children"]
    ]
    for node in iter_wire(process["children"]):  # only Python reads a result's plain text
        assert "text" not in (node.get("result") or {})


def iter_wire(nodes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for node in nodes:
        yield node
        for field in ("children", "rows", "tools"):
            yield from iter_wire(node.get(field) or [])
        if node.get("tool"):
            yield from iter_wire([node["tool"]])


def state_size(widget: TranscriptWidget) -> int:
    """Bytes of the widget's synced state without the view's code and stylesheet (``_esm``,
    ``_css``: the same for every widget, as ``benchmarks/scale.py`` counts it): its JSON and
    its binary buffers (the compressed ``_view``)."""
    state = widget.get_state()
    for code in ("_esm", "_css"):
        del state[code]
    packed = state.pop("_view")
    return Wire.size(state) + len(packed)


def test_Q2_a_5_MB_output_travels_only_when_its_row_opens_capped_then_whole_on_request(
    widgets: list[TranscriptWidget], in_parts: None
) -> None:
    rec, output = big_output_session()
    widget = make(widgets, rec.transcript)
    wire = Wire(widget)
    initial = state_size(widget)
    assert initial < 64 * 1024, initial  # the 5 MB are not in the initial state
    turn = _turns(widget.view)[-1]
    (reply,) = _ask(widget, wire, type="content", keys=[turn["process"]["key"]])
    assert Wire.size(reply) < 16 * 1024  # the process: rows, the big result still deferred
    (tool,) = [n for n in iter_wire(reply["nodes"][turn["process"]["key"]]["children"])
               if n["kind"] == "tool"]  # fmt: skip
    assert tool["deferred"]
    assert tool["result"] is None
    (reply,) = _ask(widget, wire, type="content", keys=[tool["key"]])
    opened = reply["nodes"][tool["key"]]
    assert Wire.size(reply) < 64 * 1024  # capped as the view model caps it (F-12)
    assert opened["result"]["html"].startswith("<pre")
    assert opened["result"]["all_label"] == f"Show the whole output ({output.count(chr(10))} lines)"
    parts = _ask(widget, wire, type="output", key=tool["key"])
    assert len(parts) > 1
    assert [p["part"] for p in parts] == list(range(len(parts)))
    assert {p["parts"] for p in parts} == {len(parts)}
    assert max(Wire.size(p) for p in parts) < 300 * 1024  # no multi-megabyte message
    text = "".join(p["text"] for p in parts)
    assert text.endswith("last line␇\n")
    assert "\x1b" not in text
    assert len(text) == len(output) - len("\x1b[31m")


def test_Q2_a_5_MB_command_output_shown_under_its_row_arrives_capped_with_the_process(
    widgets: list[TranscriptWidget], in_parts: None
) -> None:
    rec, _ = big_output_session(tool="Bash")  # commands show their output (F-12), capped
    widget = make(widgets, rec.transcript)
    wire = Wire(widget)
    assert state_size(widget) < 64 * 1024
    turn = _turns(widget.view)[-1]
    (reply,) = _ask(widget, wire, type="content", keys=[turn["process"]["key"]])
    assert Wire.size(reply) < 64 * 1024
    (tool,) = [n for n in iter_wire(reply["nodes"][turn["process"]["key"]]["children"])
               if n["kind"] == "tool"]  # fmt: skip
    assert tool["result"]["all_label"]  # and the whole of it is one request away


def test_Q2_what_the_reader_opened_is_sent_with_its_content(
    widgets: list[TranscriptWidget], in_parts: None
) -> None:
    widget = make(widgets, demo_session())
    key = _turns(widget.view)[0]["process"]["key"]
    widget.set_state({"_folds": {key: "open"}})
    first = _turns(widget._transport.wire_view())[0]["process"]
    assert not first.get("deferred")
    assert first["children"]
    inner = _turns(widget.view)[1]["process"]["children"][0]["key"]
    widget.set_state({"_folds": {inner: "owned"}})  # P-10: a container holding an owned row
    assert not _turns(widget._transport.wire_view())[1]["process"].get("deferred")


def test_Q2_search_brings_the_closed_processes_its_hits_open(
    widgets: list[TranscriptWidget], in_parts: None
) -> None:
    rec, _ = big_output_session(10_000)
    widget = make(widgets, rec.transcript)
    wire = Wire(widget)
    (reply,) = _ask(widget, wire, type="search", id=1, query="test_1")
    assert reply["total"] >= 1
    for hit in reply["hits"]:
        for key in hit["path"]:
            if key.startswith("process:"):
                assert reply["nodes"][key]["children"]


def test_Q3_an_append_rebuilds_only_the_turn_it_changes(widgets: list[TranscriptWidget]) -> None:
    rec = recorded(30)
    widget = make(widgets, rec.transcript)
    before = {n["key"]: n for n in widget.view["nodes"]}
    rec.user("One more question")
    rec.start_tool("Grep", {"pattern": "needle"})
    widget.flush()
    after = {n["key"]: n for n in widget.view["nodes"]}
    rebuilt = [key for key, node in before.items() if after[key] is not node]
    assert rebuilt == []  # every settled turn reused as it was (not rebuilt, not compared deeply)
    # A label that arrives later for an earlier turn's call rebuilds that turn, and only it.
    first_call = next(e for e in rec.transcript.entries if e.kind == "tool_call")
    rec.label([first_call], "Read module_0 and ran its test")
    widget.flush()
    again = {n["key"]: n for n in widget.view["nodes"]}
    changed = [key for key, node in after.items() if again[key] is not node]
    assert len(changed) == 2  # that turn, and the running one (always rebuilt)
    assert "Read module_0" in json.dumps(again[changed[0]])
    # After changing entries in place (no notification), refresh() rebuilds everything.
    first_call.description = "changed in place"
    widget.refresh()
    assert "changed in place" in json.dumps(widget.view)


def test_Q3_a_settings_change_rebuilds_every_turn(widgets: list[TranscriptWidget]) -> None:
    widget = make(widgets, recorded(3).transcript)
    before = {n["key"]: n for n in widget.view["nodes"]}
    widget.locale = "zh"
    widget.flush()
    assert all(n is not before[n["key"]] for n in widget.view["nodes"])
    assert widget.view["locale"] == "zh"


def test_W4_the_notebook_fallback_of_a_long_session_stays_within_its_budget(
    widgets: list[TranscriptWidget], monkeypatch: pytest.MonkeyPatch
) -> None:
    import turnfold.widget

    widget = make(widgets, recorded(40).transcript)
    whole = widget._repr_mimebundle_()[0]["text/html"]
    assert "not in this saved output" not in whole  # 40 small turns fit the real budget
    monkeypatch.setattr(turnfold.widget, "STATIC_HTML_BUDGET", 20_000)
    kept = widget._repr_mimebundle_()[0]["text/html"]
    assert len(kept) < len(whole)
    assert "not in this saved output" in kept
    assert "Fixed test_0." in kept  # every answer stays
    assert "Fixed test_39." in kept


def test_Q2_the_whole_of_a_structured_output_is_the_json_the_view_showed(
    widgets: list[TranscriptWidget],
) -> None:
    from turnfold.model import ToolResult
    from turnfold.render.content import pretty_json

    rec = recorded(1)
    rec.user("List the records")
    records = [{"id": n, "name": f"record {n}", "tags": ["a", "b"]} for n in range(3000)]
    call = rec.start_tool("Bash", {"command": "query --json"})
    rec.finish_tool(call, ToolResult(structured=records))  # no text: drawn as JSON (X-2)
    widget = make(widgets, rec.transcript)
    wire = Wire(widget)
    tool = next(n for n in _nodes(widget.view) if n["kind"] == "tool" and n["key"] == call.id)
    assert tool["result"]["all_label"]
    parts = _ask(widget, wire, type="output", key=call.id)
    assert "".join(p["text"] for p in parts) == pretty_json(records)


def test_a_widget_whose_first_build_failed_is_collected_quietly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ipywidgets closes a widget when it is collected, even one whose ``__init__`` raised:
    closing the half-made widget must not print "Exception ignored" under the real error."""
    import gc
    import sys

    def broken(self: TranscriptWidget, running: bool | None) -> Any:
        raise RuntimeError("the view could not be built")

    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    monkeypatch.setattr(TranscriptWidget, "_build", broken)
    with pytest.raises(RuntimeError, match="could not be built"):
        TranscriptWidget(Transcript([UserMessage(text="hi")]))
    gc.collect()
    assert unraisable == []
