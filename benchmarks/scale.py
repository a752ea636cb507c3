"""Huge transcripts in the notebook: Python time and bytes on the wire (issue #7, Python half).

The browser half is ``benchmarks/browser.py``. Each figure is a ratio against a baseline measured
in the same run:

  projection     ``build_view_model(transcript, more_chars=OUTPUT_REST_CHARS, timeline=
                 Timeline(lazy=True))``, the view model the widget builds (its timeline is laid
                 out when a reader opens it; with no bar, also the standalone page's, which
                 embeds ``MORE_CHARS`` of each long output's rest and lays the timeline out), of
                 the ``--mb`` MB Claude Code session of ``benchmarks/load.py`` (its generator,
                 imported from here) over json.loads of every line of the file (load.py's
                 ``parse_lines``); also, with no bar, ``TranscriptWidget(transcript)`` and its
                 ``_repr_mimebundle_()`` over the same baseline, called as a user calls them, and
                 the timeline's layout alone over the page's view model
  appended call  the comm bytes of one tool call started on a settled ``--turns``-turn transcript
                 (built with turnfold.recording.Recorder: a question, a read and a command with
                 a few lines of output, a Markdown answer per turn; then ``widget.flush()``) over
                 the bytes at 10 turns; also, with no bar, the Python time of that flush, and
                 the time of a mode switch (every turn rebuilt) over the widget's first build
  initial state  the widget's synced state of a settled ``--turns``-turn session from load.py's
                 ``generate_turns``, without ``_esm`` and ``_css`` (the view's code and
                 stylesheet, the same for every widget, printed apart), over the UTF-8 size of
                 its ``text/plain`` rendering; then, displayed, what a notebook saves of it. The
                 same for the ``--mb`` session. As in benchmarks/browser.py, tool outputs are cut
                 to 200, 800 or 3,000 characters (load.py's ``SMALL_OUTPUT_SIZES``; its default
                 sizes go up to 40,000); the file's size is printed
  timeline       the same ``--turns``-turn session's timeline (U-4): the time the first build of
                 ``TranscriptWidget`` spends on it over that whole first build, and its bytes in
                 the initial state; also, with no bar, laying it out when a reader opens it (the
                 ``content`` request the view sends) over the first build, and the bytes of that
                 reply and of one turn zoomed into
  large output   a settled turn whose tool printed 5 MB of log lines: the initial state, then the
                 messages the JS view sends when a reader opens the turn and the tool
                 (``content``) and asks for the whole output (``output``), handed to the widget's
                 message handler as the view sends them; the replies are captured where
                 ipywidgets hands them to the comm

Bytes are messages as jupyter_client's session packs them (json.dumps, UTF-8). Bars (issue #7):
projection <= 1.5x; appended call <= 1.2x and <= 4 KB; initial state <= 2x the text; large
output: initial state and the tool's content reply <= 64 KB each, the whole output reachable.
Bars (issue 17): the initial state of the ``--mb`` session too <= 2x its text, and what a
saved notebook holds of each widget (its state as JSON, the compressed view in base64, _esm and
_css included) <= 1 MB.
Bars (issue 15): the timeline adds <= 5% to the first build and <= 200 KB to the initial state.
A message the widget does not answer yet prints "not implemented yet" instead of a figure.
Times are best of ``--runs`` alternating runs. One line per figure with its bar; the last line
sums them up.

    python benchmarks/scale.py [--mb 50] [--turns 2000] [--runs 3]
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, for benchmarks.load

import turnfold
from benchmarks.load import SMALL_OUTPUT_SIZES, generate, generate_turns, parse_lines
from turnfold.gcpause import collector_paused
from turnfold.process import plan_projection
from turnfold.recording import Recorder
from turnfold.render.content import MORE_CHARS, plain_text
from turnfold.render.viewmodel import build_view_model
from turnfold.session import session_facts
from turnfold.timeline import Timeline
from turnfold.transport import unpack_view
from turnfold.widget import OUTPUT_REST_CHARS, TranscriptWidget

T = TypeVar("T")
Node = dict[str, Any]

PROJECTION_BAR = 1.5
APPEND_RATIO_BAR = 1.2
APPEND_BYTES_BAR = 4 * 1024
STATE_BAR = 2.0
#: N-1: what a saved notebook holds of one widget past the whole-view budget, _esm and _css in.
SAVED_BAR = 1_000_000
LARGE_BAR = 64 * 1024
TIMELINE_BUILD_BAR = 0.05
TIMELINE_STATE_BAR = 200 * 1024
#: The transcript length the appended call is compared with.
SMALL_TURNS = 10
LARGE_OUTPUT_BYTES = 5 * 2**20
#: The view id the simulated JS view signs its messages with; replies are addressed to it.
VIEW = "bench"
#: How long to wait for a reply the widget might send from another thread.
REPLY_WAIT_S = 1.0
NOT_YET = "not implemented yet"


class Wire:
    """Every comm message a widget sends, as a kernel would serialize it.

    Replacing ``widget.comm.send`` catches the messages where ipywidgets hands them over, so the
    byte counts are what a real kernel would put on the wire, without a kernel.
    """

    def __init__(self, widget: TranscriptWidget) -> None:
        self.messages: list[Any] = []
        self.lock = threading.Lock()
        widget.comm.send = self.send

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        with self.lock:
            self.messages.append(data)

    def replies(self, kind: str) -> list[tuple[Node, int]]:
        """The custom messages of ``kind`` addressed to our view, each with its bytes."""
        with self.lock:
            sent = list(self.messages)
        return [
            (message["content"], size(message))
            for message in sent
            if isinstance(message, dict)
            and message.get("method") == "custom"
            and isinstance(message.get("content"), dict)
            and message["content"].get("type") == kind
            and message["content"].get("to") == VIEW
        ]

    def total(self) -> int:
        with self.lock:
            return sum(size(message) for message in self.messages)

    def clear(self) -> None:
        with self.lock:
            self.messages.clear()


def size(message: Any) -> int:
    """Bytes of a message body as jupyter_client's session packs it."""
    return len(json.dumps(message, ensure_ascii=False, allow_nan=False).encode())


def timed(work: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    result = work()
    return result, time.perf_counter() - start


def close(widget: TranscriptWidget) -> None:
    """Close ``widget`` and wait for its update timer, so no rebuild of it runs on the other core
    while the next figure is measured (a change schedules one a moment later, L-5)."""
    widget.close()
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.join()


def kib(count: int) -> str:
    return f"{count / 1024:,.1f} KB"


def state_bytes(widget: TranscriptWidget) -> tuple[int, int, int]:
    """(synced state without ``_esm`` and ``_css``, ``_esm``, ``_css``), in bytes: the JSON of
    the state plus its binary buffers (the compressed ``_view``), as the comm sends them."""
    state, buffers = wire_state(widget)
    code = {name: state.pop(name, "") for name in ("_esm", "_css")}
    return size(state) + sum(map(len, buffers)), size(code["_esm"]), size(code["_css"])


def wire_state(widget: TranscriptWidget) -> tuple[dict[str, Any], list[bytes]]:
    """The widget's state as ipywidgets sends it: JSON, and the binary buffers taken out."""
    from ipywidgets.widgets.widget import _remove_buffers  # type: ignore[import-untyped]

    state, _, buffers = _remove_buffers(widget.get_state())
    return state, [bytes(buffer) for buffer in buffers]


def saved_bytes(widget: TranscriptWidget) -> int:
    """Bytes of the widget's entry in a notebook's saved widget state (N-1): the state as JSON,
    the buffers in base64 as nbconvert and JupyterLab save them, ``_esm`` and ``_css`` included."""
    state, buffers = wire_state(widget)
    return size(state) + sum(len(base64.b64encode(buffer)) for buffer in buffers)


def plain_text_of(widget: TranscriptWidget) -> str:
    bundle = widget._repr_mimebundle_()
    if bundle is None:
        raise SystemExit("the widget has no display bundle")
    return str(bundle[0]["text/plain"])


# --- 1. projection ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Projection:
    megabytes: float
    lines: int
    entries: int
    parse: float
    view: float
    page_view: float
    widget: float
    bundle: float
    layout: float


def projection(path: Path, megabytes: float, runs: int) -> Projection:
    written = generate(path, megabytes)
    lines = parse_lines(path)
    transcript = turnfold.load(path)
    items, facts = plan_projection(transcript), session_facts(transcript)
    best = [float("inf")] * 6
    for _ in range(runs):
        # Alternated, like load.py's best_of, so machine noise hits the baseline and the rest alike.
        _, parse = timed(lambda: parse_lines(path))
        # The view model as the widget builds it (an output's hidden rest is fetched on request,
        # the timeline laid out when opened), and as the standalone page does (which embeds
        # MORE_CHARS of that rest and draws the timeline).
        _, view = timed(
            lambda: build_view_model(
                transcript, more_chars=OUTPUT_REST_CHARS, timeline=Timeline(lazy=True)
            )
        )
        _, page_view = timed(lambda: build_view_model(transcript, more_chars=MORE_CHARS))
        widget, made = timed(lambda: TranscriptWidget(transcript))
        _, bundle = timed(widget._repr_mimebundle_)
        close(widget)
        with collector_paused():  # as the view model lays it out
            _, layout = timed(lambda: Timeline().node(items, "en", facts))
        figures = (parse, view, page_view, made, bundle, layout)
        best = [min(old, new) for old, new in zip(best, figures, strict=True)]
    return Projection(written / 2**20, lines, len(transcript.entries), *best)


# --- 2. one appended tool call ------------------------------------------------------------------

SOURCE = '''"""Parsing of the shop's config files, part {n}."""

def load_config_{n}(path: str) -> dict[str, str]:
    text = open(path, encoding="utf-8").read()
    if not text.strip():
        return {{}}
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
'''
PYTEST = """============================= test session starts ==============================
collected 4 items

tests/test_config_{n}.py ....                                              [100%]

============================== 4 passed in 0.{n:03d}s ==============================
"""
ANSWER = """The test failed because `load_config_{n}` returned `None` for an empty file, and the
caller indexed into the result. I changed it to return an empty dict instead.

- `src/config_{n}.py`: an empty or blank file now gives `{{}}`.
- `tests/test_config_{n}.py`: a new case covers the empty file.

All **4** tests pass now; nothing else calls `load_config_{n}`."""


def add_turn(rec: Recorder, n: int) -> None:
    """One settled turn: a question, a read and a command with a few lines of output, an answer."""
    rec.user(f"Question {n}: why does test_config_{n} fail on an empty config file? Please fix it.")
    read = rec.start_tool("Read", {"file_path": f"src/config_{n}.py"})
    rec.finish_tool(read, SOURCE.format(n=n))
    run = rec.start_tool("Bash", {"command": f"pytest -q tests/test_config_{n}.py"})
    rec.finish_tool(run, PYTEST.format(n=n))
    rec.assistant(ANSWER.format(n=n))


def recorded(turns: int) -> Recorder:
    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    for n in range(turns):
        add_turn(rec, n)
    return rec


def appended_call(turns: int, runs: int) -> tuple[int, float]:
    """(Bytes sent for one tool call appended to ``turns`` settled turns, its flush's best time)."""
    rec = recorded(turns)
    sent = 0
    best = float("inf")
    for run in range(runs):
        if run:
            # Each run appends to a settled transcript again: the last call ends, a turn follows.
            add_turn(rec, turns + run)
        # A widget per run: it is closed before the next, so its timer cannot rebuild meanwhile.
        widget = TranscriptWidget(rec.transcript)
        wire = Wire(widget)
        call = rec.start_tool("Grep", {"pattern": "load_config", "path": "src"})
        _, spent = timed(widget.flush)
        best = min(best, spent)
        if run == 0:
            sent = wire.total()
        close(widget)
        rec.finish_tool(call, "src/config.py:3:def load_config(path: str) -> dict[str, str]:")
    return sent, best


def mode_switch(turns: int, runs: int) -> tuple[float, float]:
    """(Best time to build the widget of ``turns`` settled turns, best time of a mode switch).

    A mode switch rebuilds every turn; what was converted from Markdown is remembered, so it
    costs a fraction of the first build. The Markdown cache is emptied before each first build.
    """
    from turnfold.render.content import _converted

    rec = recorded(turns)
    built = switched = float("inf")
    for _ in range(runs):
        _converted.cache_clear()
        widget, spent = timed(lambda: TranscriptWidget(rec.transcript))
        built = min(built, spent)
        Wire(widget)  # the patch goes nowhere
        widget.transcript_display_mode = "flat"
        _, spent = timed(widget.flush)
        switched = min(switched, spent)
        close(widget)
    return built, switched


# --- 3. the initial state -----------------------------------------------------------------------


@dataclass(frozen=True)
class InitialState:
    file: int
    turns: int
    state: int
    esm: int
    css: int
    text: int
    saved: int  # the widget's entry in a saved notebook once displayed (N-1)
    whole: bool  # its view fits WHOLE_VIEW_BUDGET: saved with every disclosure's content


def initial_state(path: Path, turns: int) -> InitialState:
    written = generate_turns(path, turns, output_sizes=SMALL_OUTPUT_SIZES)
    return state_of(path, written)


def state_of(path: Path, written: int) -> InitialState:
    """The state of a widget of the session at ``path``, then what a notebook saves of it."""
    widget = TranscriptWidget(turnfold.load(path))
    try:
        shown = sum(node["kind"] == "turn" for node in widget.view["nodes"])
        state, esm, css = state_bytes(widget)
        text = len(plain_text_of(widget).encode())  # displayed: the saved view renewed
        saved = saved_bytes(widget)
        whole = widget._transport.whole
    finally:
        close(widget)
    return InitialState(written, shown, state, esm, css, text, saved, whole)


# --- 4. the timeline (U-4) ---------------------------------------------------------------------


@dataclass(frozen=True)
class TimelineFigures:
    turns: int
    calls: int
    build: float  # the widget's first build
    spent: float  # the part of it spent on the timeline
    state: int  # the timeline's bytes in the initial state
    opened: float  # laying it out and answering the view that opens it
    reply: int  # the bytes of that reply
    zoomed: int  # the bytes of one turn's calls, zoomed into


def timeline_figures(path: Path, runs: int) -> TimelineFigures:
    """The timeline's share of a first build, measured inside it, and what opening it costs."""
    transcript = turnfold.load(path)
    node = Timeline.node
    spent = [0.0]

    def timed_node(self: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return node(self, *args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - started

    best_build = best_spent = best_opened = float("inf")
    state = reply = zoomed = 0
    Timeline.node = timed_node
    try:
        for _ in range(runs):
            spent[0] = 0.0
            widget, built = timed(lambda: TranscriptWidget(transcript))
            best_build, best_spent = min(best_build, built), min(best_spent, spent[0])
            wire = Wire(widget)
            state = size(unpack_view(widget._view)["view"]["timeline"])
            started = time.perf_counter()
            replies = ask(widget, wire, {"type": "content", "view": VIEW, "keys": ["timeline"]})
            best_opened = min(best_opened, time.perf_counter() - started)
            reply = replies[0][1]
            key = replies[0][0]["nodes"]["timeline"]["turns"][0]["key"]
            zoomed = ask(widget, wire, {"type": "content", "view": VIEW, "keys": [key]})[0][1]
            close(widget)
    finally:
        Timeline.node = node
    turns = sum(1 for item in widget.view["nodes"] if item["kind"] == "turn")
    calls = len(transcript.tool_calls())
    return TimelineFigures(turns, calls, best_build, best_spent, state, best_opened, reply, zoomed)


# --- 5. one large output ------------------------------------------------------------------------


def large_log(target: int) -> str:
    """About ``target`` bytes of build log: many short lines, a few coloured, a tab here and there.

    Real outputs carry colour; with it the comparison below also shows how the widget treats
    control characters.
    """
    lines: list[str] = []
    written = 0
    n = 0
    while written < target:
        if n % 997 == 0:
            line = f"\x1b[33mWARN\x1b[0m  worker-{n % 8}\tslow request {n}: took {n % 5000} ms"
        else:
            line = f"INFO  worker-{n % 8}\tprocessed request {n} for /api/items/{n * 7 % 10_007}"
        lines.append(line)
        written += len(line) + 1
        n += 1
    return "\n".join(lines) + "\n"


def find_tool(node: Any) -> Node | None:
    """The first tool node inside ``node`` (a process, a group, a batch, a summary row...)."""
    if isinstance(node, dict):
        if node.get("kind") == "tool":
            return node
        values: Any = node.values()
    elif isinstance(node, list):
        values = node
    else:
        return None
    for value in values:
        found = find_tool(value)
        if found is not None:
            return found
    return None


def ask(widget: TranscriptWidget, wire: Wire, message: Node) -> list[tuple[Node, int]]:
    """Send ``message`` as the JS view does; the replies to it with their bytes (none: no answer).

    The handler may answer at once or from another thread: wait briefly, until an ``output``
    reply has all its parts or any ``content`` reply came.
    """
    wire.clear()
    widget._on_view_message(widget, message, [])
    kind = str(message["type"])
    deadline = time.perf_counter() + REPLY_WAIT_S
    while True:
        replies = wire.replies(kind)
        if replies and (kind != "output" or len(replies) >= int(replies[0][0].get("parts", 1))):
            return replies
        if time.perf_counter() > deadline:
            return replies
        time.sleep(0.01)


def neutralized(text: str) -> str:
    """``text`` with C0 controls as their control pictures, as turnfold.render.content escapes."""
    table = {code: chr(0x2400 + code) for code in range(0x20) if chr(code) not in "\t\n"}
    return text.replace("\r\n", "\n").translate({**table, 0x0D: "\n", 0x7F: "\u2421"})


def compare(received: str, output: str) -> str:
    """Whether the concatenated parts are the output, allowing neutralized control characters."""
    if received == output:
        return "the parts joined equal the output"
    for name, expected in (
        ("controls shown as control pictures", neutralized(output)),
        ("ANSI interpreted, controls made visible", plain_text(output)),
    ):
        if received == expected:
            return f"the parts joined equal the output ({name})"
    at = next(
        (i for i, (a, b) in enumerate(zip(received, output, strict=False)) if a != b),
        min(len(received), len(output)),
    )
    return (
        f"DIFFERENT from the output: {len(received):,} vs {len(output):,} characters, first "
        f"difference at {at:,}: {received[at : at + 20]!r} vs {output[at : at + 20]!r}"
    )


@dataclass(frozen=True)
class LargeOutput:
    output: int
    lines: int
    state: int
    process: int | None  # bytes of the content reply for the turn's process; None: no answer
    tool: int | None  # bytes of the content reply for the tool
    tool_from: str  # where the tool's key was found
    parts: int | None  # output replies; None: no answer
    largest: int
    equal: str


def large_output() -> LargeOutput:
    output = large_log(LARGE_OUTPUT_BYTES)
    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    rec.user("Why is the nightly import slow? The log is in logs/nightly.log.")
    call = rec.start_tool("Bash", {"command": "cat logs/nightly.log"})
    rec.finish_tool(call, output)
    rec.assistant("Worker 3 waits on `/api/items` for seconds at a time; see the **WARN** lines.")
    widget = TranscriptWidget(rec.transcript)
    try:
        state, _, _ = state_bytes(widget)
        wire = Wire(widget)
        turn = next(node for node in widget.view["nodes"] if node["kind"] == "turn")
        process_key = str(turn["process"]["key"])

        replies = ask(widget, wire, {"type": "content", "view": VIEW, "keys": [process_key]})
        process_bytes = replies[0][1] if replies else None
        # The tool is looked up in the reply, as the JS view would; without one, in the widget's
        # view model (which holds everything), so the "output" figure does not wait for "content".
        tool, tool_from = None, "nowhere"
        if replies:
            tool, tool_from = find_tool(replies[0][0].get("nodes")), "the content reply"
        if tool is None:
            tool, tool_from = find_tool(turn["process"]), "the widget's view model"
        tool_bytes: int | None = None
        parts: list[tuple[Node, int]] = []
        if tool is not None:
            tool_key = str(tool["key"])
            replies = ask(widget, wire, {"type": "content", "view": VIEW, "keys": [tool_key]})
            tool_bytes = replies[0][1] if replies else None
            replies = ask(widget, wire, {"type": "output", "view": VIEW, "key": tool_key})
            parts = sorted(replies, key=lambda reply: int(reply[0].get("part", 0)))
        received = "".join(str(reply[0].get("text", "")) for reply in parts)
    finally:
        close(widget)
    return LargeOutput(
        len(output.encode()),
        output.count("\n"),
        state,
        process_bytes,
        tool_bytes,
        tool_from,
        len(parts) if parts else None,
        max((reply[1] for reply in parts), default=0),
        compare(received, output) if parts else NOT_YET,
    )


# --- report -------------------------------------------------------------------------------------


def bar(ok: bool) -> str:
    return "ok" if ok else "OVER"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    started = time.perf_counter()

    with tempfile.TemporaryDirectory() as tmp:
        p = projection(Path(tmp) / "session.jsonl", options.mb, options.runs)
        real = state_of(Path(tmp) / "session.jsonl", int(p.megabytes * 2**20))
        s = initial_state(Path(tmp) / "turns.jsonl", options.turns)
        tl = timeline_figures(Path(tmp) / "turns.jsonl", options.runs)
    small_bytes, small_time = appended_call(SMALL_TURNS, options.runs)
    large_bytes, large_time = appended_call(options.turns, options.runs)
    built, switched = mode_switch(options.turns, options.runs)
    big = large_output()

    view_ratio = p.view / p.parse
    print(
        f"projection: {p.megabytes:.1f} MB, {p.lines:,} lines, {p.entries:,} entries; json.loads "
        f"per line {p.parse:.2f}s, the widget's build_view_model {p.view:.2f}s = "
        f"{view_ratio:.2f}x (bar {PROJECTION_BAR}x, {bar(view_ratio <= PROJECTION_BAR)}); no bar: "
        f"the page's {p.page_view / p.parse:.2f}x (its timeline's layout {p.layout * 1e3:.0f} ms "
        f"= {p.layout / p.page_view:.0%} of it), TranscriptWidget() {p.widget / p.parse:.2f}x, "
        f"_repr_mimebundle_() {p.bundle / p.parse:.2f}x"
    )
    append_ratio = large_bytes / small_bytes
    append_ok = append_ratio <= APPEND_RATIO_BAR and large_bytes <= APPEND_BYTES_BAR
    print(
        f"appended call: {SMALL_TURNS} turns {small_bytes:,} B, {options.turns:,} turns "
        f"{large_bytes:,} B = {append_ratio:.2f}x (bars {APPEND_RATIO_BAR}x and "
        f"{APPEND_BYTES_BAR // 1024} KB, {bar(append_ok)}); no bar: flush "
        f"{small_time * 1e3:.2f} ms vs {large_time * 1e3:.2f} ms = {large_time / small_time:.1f}x"
    )
    print(
        f"mode switch: {options.turns:,} turns, first build {built * 1e3:.0f} ms, switch to flat "
        f"{switched * 1e3:.0f} ms = {switched / built:.2f}x the first build (no bar)"
    )
    state_ratio = s.state / s.text
    sizes = ", ".join(f"{chars:,}" for chars in SMALL_OUTPUT_SIZES)
    print(
        f"initial state: {s.turns:,} turns, {s.file / 2**20:.1f} MB file (tool outputs of {sizes} "
        f"characters); state {kib(s.state)}, text/plain {kib(s.text)} = {state_ratio:.2f}x "
        f"(bar {STATE_BAR}x, {bar(state_ratio <= STATE_BAR)}); apart: _esm {kib(s.esm)}, "
        f"_css {kib(s.css)}; saved in a notebook {kib(s.saved)} (bar {kib(SAVED_BAR)}, "
        f"{bar(s.saved <= SAVED_BAR)}; {'whole' if s.whole else 'in parts'})"
    )
    real_ratio = real.state / real.text
    print(
        f"initial state: the {real.file / 2**20:.1f} MB session, {real.turns:,} turns (outputs of "
        f"up to 40,000 characters); state {kib(real.state)}, text/plain {kib(real.text)} = "
        f"{real_ratio:.2f}x (bar {STATE_BAR}x, {bar(real_ratio <= STATE_BAR)}); saved in a "
        f"notebook {kib(real.saved)} (bar {kib(SAVED_BAR)}, {bar(real.saved <= SAVED_BAR)}; "
        f"{'whole' if real.whole else 'in parts'})"
    )
    tl_share = tl.spent / tl.build
    tl_ok = tl_share <= TIMELINE_BUILD_BAR and tl.state <= TIMELINE_STATE_BAR
    print(
        f"timeline: {tl.turns:,} turns, {tl.calls:,} calls; the first build {tl.build * 1e3:.0f} "
        f"ms, of which the timeline {tl.spent * 1e3:.2f} ms = {tl_share:.2%} (bar "
        f"{TIMELINE_BUILD_BAR:.0%}); {tl.state:,} B of initial state (bar "
        f"{TIMELINE_STATE_BAR // 1024} KB) ({bar(tl_ok)}); no bar: opening it (laid out on "
        f"request) {tl.opened * 1e3:.0f} ms = {tl.opened / tl.build:.2f}x the first build, a "
        f"{kib(tl.reply)} reply, one turn zoomed {kib(tl.zoomed)}"
    )
    print(
        f"large output: {big.output / 2**20:.1f} MB, {big.lines:,} lines; initial state "
        f"{kib(big.state)} (bar {LARGE_BAR // 1024} KB, {bar(big.state <= LARGE_BAR)})"
    )
    process = NOT_YET if big.process is None else kib(big.process)
    tool = NOT_YET
    if big.tool is not None:
        tool = f"{kib(big.tool)} (bar {LARGE_BAR // 1024} KB, {bar(big.tool <= LARGE_BAR)})"
    print(f"  content replies: the turn's process {process}; the tool {tool}")
    output = NOT_YET
    if big.parts is not None:
        output = f"{big.parts:,} parts, the largest {kib(big.largest)}; {big.equal}"
    print(f"  output replies (tool key from {big.tool_from}): {output}")
    print(f"({time.perf_counter() - started:.0f}s in all)")
    large_figure = "; ".join(
        (
            f"state {kib(big.state)}",
            f"tool reply {NOT_YET if big.tool is None else kib(big.tool)}",
            f"output {NOT_YET if big.parts is None else f'{big.parts:,} parts'}",
        )
    )
    print(
        f"projection/parse = {view_ratio:.2f}x (bar {PROJECTION_BAR}x); appended call "
        f"{options.turns}/{SMALL_TURNS} turns = {append_ratio:.2f}x, {large_bytes:,} B (bars "
        f"{APPEND_RATIO_BAR}x, {APPEND_BYTES_BAR // 1024} KB); initial state/text = "
        f"{state_ratio:.2f}x (bar {STATE_BAR}x); timeline {tl_share:.2%} of the first build, "
        f"{tl.state:,} B of state (bars {TIMELINE_BUILD_BAR:.0%}, "
        f"{TIMELINE_STATE_BAR // 1024} KB); large output: {large_figure} (bars "
        f"{LARGE_BAR // 1024} KB)"
    )


if __name__ == "__main__":
    main()
