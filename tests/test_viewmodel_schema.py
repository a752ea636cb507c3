"""The view model's schema is one contract on both sides (issue 14, W-1).

``turnfold.render.nodes`` declares every node kind; these tests hold the built view models to it
at run time (every node carries exactly its declared fields, of the declared types), and keep
the JS declarations (``js/src/nodes.d.ts``, read by ``tsc --strict``) equal to the ones
generated from it.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints

import pytest

import turnfold
from turnfold import transport
from turnfold.model import AbortMarker, AssistantError, PendingAction, Thinking, UserMessage
from turnfold.render import compare_nodes, nodes
from turnfold.render.viewmodel import build_view_model
from turnfold.samples import demo_session
from turnfold.settings import DisplaySettings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = sorted((ROOT / "tests" / "fixtures").glob("*.json*"))
MODES = ("flat", "command-first", "fully-folded")


@pytest.mark.parametrize(
    ("file", "module"),
    [
        ("nodes.d.ts", "turnfold.render.nodes"),
        ("messages.d.ts", "turnfold.transport"),
        ("compare.d.ts", "turnfold.render.compare_nodes"),
        ("settings.d.ts", "turnfold.settings_widget"),
        ("browser.d.ts", "turnfold.browser"),
    ],
)
def test_the_js_declarations_are_generated_from_the_schema(file: str, module: str) -> None:
    written = (ROOT / "js" / "src" / file).read_text(encoding="utf-8")
    generated = importlib.import_module(module).typescript()
    assert written == generated, f"js/src/{file} is out of date: python -m {module} > js/src/{file}"


def test_every_node_kind_is_declared_once_with_its_literal_kind() -> None:
    kinds: dict[str, str] = {}
    for cls in nodes.SCHEMA:
        hint = get_type_hints(cls).get("kind")
        if hint is None or get_origin(hint) is not Literal:
            continue  # a part of a node (a header, a result), not a node
        (kind,) = get_args(hint)
        assert kind not in kinds, f"{kind!r} declared by {kinds.get(kind)} and {cls.__name__}"
        kinds[kind] = cls.__name__
    assert "process" in kinds  # a turn's process is a node like any other


# --- every built node matches its declaration ----------------------------------------------------


def _check(value: Any, hint: Any, where: str) -> None:
    """``value`` is of the schema's type ``hint`` (TypedDicts field by field)."""
    origin = get_origin(hint)
    if origin is NotRequired:
        (hint,) = get_args(hint)
        origin = get_origin(hint)
    if hint is Any:
        return
    if origin is Literal:
        assert value in get_args(hint), f"{where}: {value!r} is not one of {get_args(hint)}"
    elif origin is Union or origin is types.UnionType:
        options = get_args(hint)
        if isinstance(value, dict) and any(_tag_of(o) for o in options):
            chosen = [o for o in options if (tag := _tag_of(o)) and value.get(tag[0]) == tag[1]]
            assert chosen, f"{where}: {value.get('kind', value.get('type'))!r} is not allowed here"
            _check(value, chosen[0], where)
            return
        failures = []
        for option in options:
            try:
                _check(value, option, where)
                return
            except AssertionError as exc:
                failures.append(str(exc))
        raise AssertionError(f"{where}: {value!r} matches none of {options}: {failures}")
    elif origin is list:
        assert isinstance(value, list), f"{where}: {value!r} is not a list"
        (item,) = get_args(hint)
        for index, each in enumerate(value):
            _check(each, item, f"{where}[{index}]")
    elif origin is dict:
        assert isinstance(value, dict), f"{where}: not a dict"
    elif hint is type(None):
        assert value is None, f"{where}: {value!r} is not None"
    elif hint in TYPED:
        _check_typed(value, hint, where)
    elif hint is int:
        assert isinstance(value, int), f"{where}: {value!r}"
        assert not isinstance(value, bool), f"{where}: {value!r}"
    else:
        assert isinstance(value, hint), f"{where}: {value!r} is not {hint}"


def _tag_of(cls: Any) -> tuple[str, str] | None:
    """The field and value that tell this class apart in a union: a node's ``kind``, a
    message's ``type``."""
    if cls not in TYPED:
        return None
    hints = get_type_hints(cls)
    for field in ("kind", "type"):
        hint = hints.get(field)
        if hint is not None and get_origin(hint) is Literal:
            return field, get_args(hint)[0]
    return None


#: Every class a value is checked against field by field: nodes, messages, a comparison's nodes.
TYPED = frozenset({*nodes.SCHEMA, *transport.MESSAGES, *compare_nodes.SCHEMA})

#: Set while a message is checked: its nodes are in their wire form, which leaves out the
#: fields only Python reads (``ondemand.PYTHON_ONLY``) and content sent on demand.
_WIRE = {"on": False}


def _check_typed(value: Any, cls: type, where: str) -> None:
    assert isinstance(value, dict), f"{where}: {value!r} is not a {cls.__name__}"
    hints = get_type_hints(cls, include_extras=True)
    required = {k for k, h in hints.items() if get_origin(h) is not NotRequired}
    missing, extra = required - value.keys(), value.keys() - hints.keys()
    if _WIRE["on"] and cls not in transport.MESSAGES and cls not in compare_nodes.SCHEMA:
        missing = set()
    assert not missing, f"{where} ({cls.__name__}): fields missing: {sorted(missing)}"
    assert not extra, f"{where} ({cls.__name__}): undeclared fields: {sorted(extra)}"
    for field, item in value.items():
        _check(item, hints[field], f"{where}.{field}")


def _views() -> Iterator[tuple[str, Any]]:
    transcripts = {path.name: turnfold.load(path) for path in FIXTURES}
    transcripts["demo"] = demo_session()
    extra = demo_session()
    extra.append(UserMessage(text="and then?"))
    extra.append(Thinking(text="", form="redacted"))
    extra.append(AssistantError(message="overloaded"))
    extra.append(AbortMarker(reason=None))
    extra.append(PendingAction(action="permission", text="Run rm?", options=["yes", "no"]))
    transcripts["every outside kind"] = extra
    for name, transcript in transcripts.items():
        for mode in MODES:
            settings = DisplaySettings(transcript_display_mode=mode, locale="en")
            yield f"{name} ({mode})", build_view_model(transcript, settings)


@pytest.mark.parametrize(("name", "view"), list(_views()), ids=lambda v: str(v)[:60])
def test_every_built_view_is_what_the_schema_declares(name: str, view: Any) -> None:
    _check_typed(view, nodes.View, name)


# --- every message the widget sends is a declared message -----------------------------------------


def test_every_message_the_widget_sends_and_answers_is_declared() -> None:
    from turnfold.recording import Recorder
    from turnfold.widget import TranscriptWidget

    rec = Recorder(clock=lambda: "2026-01-01T00:00:00Z")
    rec.user("Read the log")
    call = rec.start_tool("Read", {"file_path": "app.log"})
    rec.finish_tool(call, "a line\n" * 5000)
    rec.assistant("Done.")
    widget = TranscriptWidget(rec.transcript)
    sent: list[Any] = []
    widget.comm.send = lambda data=None, metadata=None, buffers=None: sent.append(data)
    try:
        view = widget.view
        turn = view["nodes"][-1]
        tool_key = next(k["key"] for k in _tools(turn))
        for request in (
            {"type": "hello", "view": "v1"},
            {"type": "content", "view": "v1", "keys": [turn["process"]["key"], tool_key, "gone"]},
            {"type": "output", "view": "v1", "key": tool_key},
            {"type": "search", "view": "v1", "id": 3, "query": "line"},
            {"type": "nonsense", "view": "v1"},
            "not even a dict",
        ):
            widget._handle_custom_msg(request, [])
        rec.user("And again?")
        rec.assistant("Yes.")
        widget.flush()
        widget.reveal(tool_key)
    finally:
        widget.close()
    messages = [m["content"] for m in sent if isinstance(m, dict) and m.get("method") == "custom"]
    kinds = sorted({m["type"] for m in messages})
    assert kinds == ["content", "full", "output", "patch", "reveal", "search"]
    _WIRE["on"] = True
    try:
        for number, message in enumerate(messages):
            _check(message, transport.KernelMessage, f"message {number} ({message['type']})")
    finally:
        _WIRE["on"] = False


def _tools(node: Any) -> Iterator[Any]:
    from turnfold.render.viewmodel import iter_nodes

    return (n for n in iter_nodes({"nodes": [node]}) if n["kind"] == "tool")


def _kinds(union: Any) -> set[str]:
    return {tag[1] for member in get_args(union) if (tag := _tag_of(member))}


def test_the_page_draws_every_kind_the_schema_declares() -> None:
    # The page dispatches by a table (the text outline and the JS view by checked switches):
    # a kind added to the schema must get its draw function here too.
    from turnfold.render.html import _Renderer

    renderer = _Renderer("en")
    assert set(renderer._top) == _kinds(nodes.TopNode)
    assert set(renderer._child) == _kinds(nodes.ChildNode)
