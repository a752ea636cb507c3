"""An independent tool-call counter for LangGraph's SQLite checkpointer database
(``langgraph-checkpoints``), apart from the loader: LangGraph's own ``SqliteSaver`` (trusted
here: the fixtures are the project's own) reads each thread's newest root checkpoint
(``get_tuple``), and a call is an id of an AI message's ``tool_calls`` or
``invalid_tool_calls``, or the ``tool_call_id`` of a tool message answering none of them,
summed over the file's threads.

``COUNTERS`` maps the format's ``NAME`` to it, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path


def langgraph_checkpoints(path: Path) -> int:
    from langgraph.checkpoint.sqlite import SqliteSaver

    uri = f"{path.resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True, check_same_thread=False)) as db:
        threads = [t for (t,) in db.execute("SELECT DISTINCT thread_id FROM checkpoints")]
        saver = SqliteSaver(db)
        saver.is_setup = True  # read only: no tables made, no journal mode set
        count = 0
        for thread in threads:
            found = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
            messages = found.checkpoint["channel_values"].get("messages", []) if found else []
            ids: set[str] = set()
            for message in messages:
                if message.type == "ai":
                    for call in [*message.tool_calls, *message.invalid_tool_calls]:
                        ids.add(str(call.get("id")))
                elif message.type == "tool":
                    ids.add(str(message.tool_call_id))
            count += len(ids)
    return count


COUNTERS: dict[str, Callable[[Path], int]] = {"langgraph-checkpoints": langgraph_checkpoints}
