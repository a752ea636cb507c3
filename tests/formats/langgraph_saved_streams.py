"""A LangGraph stream saved to a file, the ways users save one (spec A-1, A-2), offline.

The runs are those of ``tests/formats/langchain_runs.py`` (``create_agent`` on a scripted
``FakeMessagesListChatModel`` that streams real ``AIMessageChunk`` tokens): the calculator
agent (a call of ``add``, a ``ToolException`` the tool handles, the answer) and the parent
whose ``ask_helper`` tool invokes a child agent. Their events are saved as users save
``graph.stream(...)``'s items, which are tuples of message objects json cannot write:

- ``dumps``: ``langchain_core.load.dumps(list(graph.stream(...)))``, LangChain's own
  serializer (messages as ``{"lc": 1, "type": "constructor", ...}``, tuples as lists);
- ``model_dump``: ``json.dumps(events, default=...)`` calling each message's
  ``model_dump()`` (the bare field form the LangGraph API server streams too);
- ``messages_to_dict``: ``json.dumps(events, default=...)`` calling
  ``langchain_core.messages.message_to_dict`` (``{"type", "data"}``);
- ``jsonl``: a line per event as it comes, each with the ``model_dump`` default.

``python -m tests.formats.langgraph_saved_streams`` (from the repository's root) writes the
fixtures under ``tests/fixtures/frameworks/langchain/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.formats import langchain_runs as runs


def _model_dump(value: Any) -> Any:
    """What users pass json as ``default``: a message's fields, anything else as text."""
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else str(value)


def _message_to_dict(value: Any) -> Any:
    from langchain_core.messages import BaseMessage, message_to_dict

    return message_to_dict(value) if isinstance(value, BaseMessage) else str(value)


def _dumps(events: list[Any]) -> str:
    from langchain_core.load import dumps

    return dumps(events, pretty=True)


#: Each way of saving a stream's events: the text of the file.
SAVERS: dict[str, Callable[[list[Any]], str]] = {
    "dumps": _dumps,
    "model_dump": lambda events: json.dumps(events, default=_model_dump),
    "messages_to_dict": lambda events: json.dumps(events, default=_message_to_dict),
    "jsonl": lambda events: "\n".join(json.dumps(e, default=_model_dump) for e in events) + "\n",
}

#: The fixtures: name → (run, stream mode, saver).
FIXTURE_RUNS: dict[str, tuple[Callable[[Any], tuple[list[Any], Any]], Any, str]] = {
    "stream-dumps_updates-messages_tool-error.json": (
        runs.stream_run,
        ["updates", "messages"],
        "dumps",
    ),
    "stream-model-dump_updates_tool-error.jsonl": (runs.stream_run, "updates", "jsonl"),
    "stream-dumps_subgraphs-values-messages_agent-tool.json": (
        runs.stream_parent,
        ["values", "messages"],
        "dumps",
    ),
}


def fixture_name(name: str) -> str:
    from langgraph.version import __version__

    return f"langgraph_v{__version__}_{name}"


def main() -> None:
    runs.FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, (run, mode, saver) in FIXTURE_RUNS.items():
        events, _ = run(mode)
        path = runs.FIXTURES / fixture_name(name)
        path.write_text(SAVERS[saver](events), encoding="utf-8")
        print(path, path.stat().st_size)


if __name__ == "__main__":
    main()
