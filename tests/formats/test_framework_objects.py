"""Frameworks' run objects as a notebook may hold them (spec A-1, A-2, L-4, X-2; issue 22):
changed after the run, or built by hand with a value of another type than the framework's.

A load loses the one object (a message, an item, an event, a step) that the framework's own
serializer or turnfold's reader fails on, never the run; a followed stream loses the one event,
never the run or the user's loop over it. The runs are the real frameworks' scripted offline
runs of the ``*_runs`` modules here; each is changed on a deep copy, never in place.
"""

from __future__ import annotations

import copy
import importlib
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.display import transcript_mimebundle
from turnfold.formats import TranscriptFormatError

#: Values of other shapes than a framework's fields hold, each made anew for each change, so
#: that one change never puts a container that is already in the object inside itself.
_WEIRD: list[Callable[[], Any]] = [
    lambda: None, lambda: 0, lambda: -1, lambda: 10**30, lambda: float("nan"), lambda: "",
    lambda: "x", lambda: "2025-99-99", lambda: [], lambda: {}, lambda: [1, "a"],
    lambda: {"type": 5}, lambda: True, lambda: b"\xff", lambda: ("t",), lambda: object(),
]  # fmt: skip

#: Objects a change never walks into: the machinery a run object may refer to.
_MACHINERY = ("asyncio", "threading", "concurrent", "httpx", "openai", "_thread", "logging",
              "opentelemetry", "rich", "smolagents.monitoring")  # fmt: skip


def _places(value: Any, depth: int, seen: set[int], out: list[tuple[Any, Any, bool]]) -> None:
    """Every place in ``value`` a change can put another value: ``(holder, key, is_item)``."""
    if depth > 9 or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, dict):
        for key in list(value)[:40]:
            out.append((value, key, True))
            _places(value[key], depth + 1, seen, out)
    elif isinstance(value, list):
        for index, item in enumerate(value[:60]):
            out.append((value, index, True))
            _places(item, depth + 1, seen, out)
    elif not isinstance(value, (str, int, float, bytes, type, type(None))):
        fields = getattr(value, "__dict__", None)
        if not isinstance(fields, dict) or type(value).__module__.startswith(_MACHINERY):
            return
        for key in [k for k in fields if not k.startswith("__")][:40]:
            out.append((value, key, False))
            _places(fields[key], depth + 1, seen, out)


def _change(value: Any, rnd: random.Random) -> None:
    """One place in ``value`` given a value of another shape, or a list item dropped or
    doubled; an object's field is set in its ``__dict__``, past any validation, as
    ``model_construct`` or a later assignment would leave it."""
    places: list[tuple[Any, Any, bool]] = []
    _places(value, 0, set(), places)
    if not places:
        return
    holder, key, is_item = rnd.choice(places)
    new = rnd.choice(_WEIRD)()
    what = rnd.random()
    if is_item and isinstance(holder, list) and what < 0.15:
        del holder[key]
    elif is_item and isinstance(holder, list) and what < 0.25:
        holder.insert(key, holder[key])
    elif is_item:
        holder[key] = new
    else:
        holder.__dict__[key] = new


#: The package each framework's runs need.
_PACKAGES = {
    "openai_agents": "agents", "langchain": "langgraph", "pydantic_ai": "pydantic_ai",
    "smolagents": "smolagents", "adk": "google.adk", "autogen": "autogen_agentchat",
    "strands": "strands", "claude_agent_sdk": "claude_agent_sdk", "llamaindex": "llama_index.core",
}  # fmt: skip


def _runs(name: str) -> Any:
    pytest.importorskip(_PACKAGES[name])
    return importlib.import_module(f"tests.formats.{name}_runs")


def _whole(value: Any) -> Any:
    return value


def _llamaindex_messages() -> Any:
    runs = _runs("llamaindex")
    return runs.memory_of(runs.run_agent(runs.counting_agent(3), "count")[0])


#: Each framework's finished run objects that ``turnfold.load`` reads, and the part of each a
#: change walks (a Strands agent refers to its tracer and tool registry, shared by the process).
RUN_OBJECTS: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]] = {
    "openai_agents-RunResult": (lambda: _runs("openai_agents").run_chain(), _whole),
    "openai_agents-items": (lambda: _runs("openai_agents").run_chain().new_items, _whole),
    "langchain-result": (lambda: _runs("langchain").run_result(), _whole),
    "pydantic_ai-AgentRunResult": (lambda: _runs("pydantic_ai").run(), _whole),
    "pydantic_ai-messages": (lambda: _runs("pydantic_ai").run().all_messages(), _whole),
    "smolagents-memory": (lambda: _runs("smolagents").run().memory, _whole),
    "adk-Session": (lambda: _runs("adk").run()[0], _whole),
    "adk-events": (lambda: _runs("adk").run()[1], _whole),
    "autogen-TaskResult": (lambda: _runs("autogen").team_run(), _whole),
    "strands-Agent": (lambda: _runs("strands").run()[0], lambda agent: agent.messages),
    "claude_agent_sdk-messages": (lambda: _runs("claude_agent_sdk").run(), _whole),
    # A run's ChatMessage objects, read in place (issue 22).
    "llamaindex-messages": (lambda: _llamaindex_messages(), _whole),
}

#: Each framework's recorded stream, as ``turnfold.follow`` is given it live.
STREAMS: dict[str, Callable[[], list[Any]]] = {
    "langchain-updates": lambda: _runs("langchain").stream_run("updates")[0],
    "langchain-messages": lambda: _runs("langchain").stream_run(["updates", "messages"])[0],
    "pydantic_ai-events": lambda: _runs("pydantic_ai").stream_events(),
    "adk-events": lambda: _runs("adk").run()[1],
    "autogen-stream": lambda: _runs("autogen").team_stream(),
    "claude_agent_sdk-messages": lambda: _runs("claude_agent_sdk").run(),
}


def _changed_copies(
    make: Callable[[], Any], part: Callable[[Any], Any], seed: int, n: int
) -> list[Any]:
    """``n`` changed copies of what ``make`` gives; a fresh run for each where it cannot be
    copied (a smolagents step's error holds its logger, a Strands agent a lock)."""
    rnd = random.Random(seed)
    original = make()
    copies = []
    for _ in range(n):
        try:
            value = copy.deepcopy(original)
        except Exception:
            value = make()
        for _ in range(rnd.randint(1, 3)):
            _change(part(value), rnd)
        copies.append(value)
    return copies


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(RUN_OBJECTS))
def test_L4_a_run_object_with_values_of_unexpected_shape_never_crashes(name: str) -> None:
    """Found so (by longer runs of these changes): a ToolOrigin whose type is a number, a
    pydantic-ai message whose parts are not a list, an ADK event holding a value its
    serializer does not know, a list holding itself, a TaskResult whose messages are a number
    (each of them crashed the load)."""
    make, part = RUN_OBJECTS[name]
    for value in _changed_copies(make, part, seed=sum(map(ord, name)), n=12):
        try:
            transcript = turnfold.load(value)
        except TranscriptFormatError:
            continue  # a clear error naming the object, when the whole of it is unreadable
        transcript_mimebundle(transcript)
        assert turnfold.load(transcript.dump()).entries == transcript.entries


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(STREAMS))
def test_X2_a_stream_with_events_of_unexpected_shape_is_passed_on_whole(name: str) -> None:
    """Each event reaches the user's loop unchanged whatever the follower makes of it; one it
    fails on is a warning, not the end of following (found so: pydantic-ai's result event,
    an ADK event its serializer fails on, an Agents SDK item whose origin is broken)."""
    for events in _changed_copies(STREAMS[name], lambda events: events, seed=len(name), n=12):
        followed = turnfold.follow(events, display=False)
        passed = list(followed)
        assert len(passed) == len(events)
        assert all(a is b for a, b in zip(passed, events, strict=True))
        transcript_mimebundle(followed.transcript)


def test_L4_a_message_its_framework_cannot_serialize_is_one_warned_record() -> None:
    """pydantic-ai's own serializer fails on a message changed after the run: that message is
    lost and said, the others are read, and the user's message is left as it was."""
    runs = _runs("pydantic_ai")
    messages = runs.run().all_messages()
    whole = turnfold.load(messages)
    changed = copy.deepcopy(messages)
    changed[1].parts = 5
    transcript = turnfold.load(changed)
    assert changed[1].parts == 5
    first, *rest = transcript.warnings
    assert (first.line, first.reason) == (
        2, "ModelResponse not read: TypeError: 'int' object is not iterable"
    )  # fmt: skip
    # The calls of that response are unknown to their returns, which say so.
    assert all("unknown tool_call_id" in w.reason for w in rest)
    assert transcript.accounting.counts["(object not read)"] == {"warned": 1}
    assert transcript.entries[-1].text == whole.entries[-1].text  # type: ignore[attr-defined]
    # One part of a message: that part is lost and said, the message's others are read.
    changed = copy.deepcopy(messages)
    changed[1].parts[0] = object()
    (warning,) = turnfold.load(changed).warnings
    assert (warning.line, warning.reason) == (
        2, "response part: object not read: PydanticSerializationError: Unable to serialize "
        "unknown type: <class 'object'>"
    )  # fmt: skip


@pytest.mark.filterwarnings("ignore")
def test_L4_an_adk_session_reads_each_event_it_holds_alone() -> None:
    """A Session whose events the ADK cannot dump whole (one holds a value of no JSON form)
    loses that event only; an event kept as its dump (a dict) is read like the others."""
    session = _runs("adk").run()[0]
    whole = turnfold.load(session)
    dumped = copy.deepcopy(session)
    dumped.events[1] = dumped.events[1].model_dump(mode="json")
    assert turnfold.load(dumped).entries == whole.entries
    broken = copy.deepcopy(session)
    broken.events[1].custom_metadata = {"handle": object()}
    transcript = turnfold.load(broken)
    assert transcript.warnings[0].line == 2
    assert transcript.warnings[0].reason.startswith(
        "Event not read: PydanticSerializationError: Unable to serialize unknown type"
    )
    assert len(transcript.entries) < len(whole.entries)


def test_L4_a_run_object_unreadable_as_a_whole_is_a_clear_error() -> None:
    result = copy.deepcopy(_runs("autogen").team_run())
    result.messages = 1.5
    with pytest.raises(
        TranscriptFormatError,
        match=r"the TaskResult could not be read: TypeError: 'float' object is not iterable",
    ):
        turnfold.load(result)


def test_L2_a_value_of_no_json_form_is_saved_as_its_text() -> None:
    """A message a user built by hand may hold any Python value (a tool's input holding an
    object): the views show its ``str``, and ``Transcript.dump`` writes that too rather than
    fail to save the transcript."""
    messages = [
        {"role": "user", "content": [{"text": "add"}]},
        {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": Path("/x")}}}
        ]},
    ]  # fmt: skip
    transcript = turnfold.load(messages, format="strands")
    (call,) = transcript.tool_calls()
    assert call.args == {"a": Path("/x")}
    assert turnfold.load(transcript.dump()).tool_calls()[0].args == {"a": "/x"}
