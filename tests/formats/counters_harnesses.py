"""Independent tool-call counters for eval-harness logs (issue 13), written from the formats'
documentation apart from the loaders. Each takes a path (``path#id/epoch`` is not a path: a
counter of a many-sample log counts the sample a key names, or the only one) and returns the
number of tool calls the source records, nested ones included.

``COUNTERS`` maps a format's ``NAME`` to its counter, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def _inspect_samples(path: Path) -> Iterator[dict[str, Any]]:
    """Every sample of an Inspect log: ``samples/*.json`` members of an ``.eval`` zip
    (Zstandard members decoded with the ``zstandard`` package), a chunked sample's folder
    (``samples/<id>_epoch_<n>/``: its ``sample.json`` with the events of its ``events/<n>.json``
    chunks, in order), or a ``.json`` log's ``samples`` list."""
    if zipfile.is_zipfile(path):
        chunked: dict[str, dict[str, Any]] = {}
        with zipfile.ZipFile(path) as log:
            for info in log.infolist():
                parts = info.filename.split("/")
                if parts[0] != "samples":
                    continue
                if len(parts) == 2:
                    yield json.loads(_member(path, log, info))
                    continue
                folder = chunked.setdefault(parts[1], {"events": {}})
                if parts[2:] == ["sample.json"]:
                    folder["sample"] = json.loads(_member(path, log, info))
                elif parts[2] == "events" and parts[3].removesuffix(".json").isdigit():
                    start = int(parts[3].removesuffix(".json"))
                    folder["events"][start] = json.loads(_member(path, log, info))
        for folder in chunked.values():
            events = [e for _, chunk in sorted(folder["events"].items()) for e in chunk]
            yield {**folder.get("sample", {}), "events": events}
    else:
        yield from json.loads(path.read_text(encoding="utf-8")).get("samples") or []


def _inspect_calls(sample: dict[str, Any]) -> set[str]:
    """Ids of the calls one sample records: assistant ``tool_calls`` in its messages and in
    its model events' outputs, ``tool`` events (nested ``events`` too), server-side
    ``tool_use`` content parts, and one per ``subtask`` event."""
    ids: set[str] = set()

    def message(value: Any) -> None:
        if not isinstance(value, dict) or value.get("role") != "assistant":
            return
        for call in value.get("tool_calls") or []:
            ids.add(str(call.get("id")))
        content = value.get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "tool_use":
                ids.add(str(part.get("id")))

    def events(values: Any) -> None:
        for event in values if isinstance(values, list) else []:
            kind = event.get("event")
            if kind == "model":
                for choice in (event.get("output") or {}).get("choices") or []:
                    message(choice.get("message"))
            elif kind == "tool":
                ids.add(str(event.get("id")))
            elif kind == "subtask":
                ids.add(f"subtask:{event.get('span_id')}")
            if kind in ("tool", "subtask"):
                events(event.get("events"))

    if sample.get("events"):
        events(sample["events"])
    else:
        for value in sample.get("messages") or []:
            message(value)
    # A shell command the user ran in Codex (``!``), which Codex sends its model as a user
    # message of its own, ``<user_shell_command>…``: a call of the user's, one per message.
    pool = (sample.get("events_data") or {}).get("messages") or []
    for value in [*(sample.get("messages") or []), *pool]:
        if isinstance(value, dict) and value.get("role") == "user":
            content = value.get("content")
            parts = content if isinstance(content, list) else [{"text": content}]
            texts = [p.get("text") for p in parts if isinstance(p, dict)]
            if any(isinstance(t, str) and t.startswith("<user_shell_command>") for t in texts):
                ids.add(f"user_shell:{value.get('id')}")
    return ids


def _inspect_count(sample: dict[str, Any]) -> int:
    """Tool calls of one sample and of each failed attempt it kept (``error_retries[].events``:
    an attempt begins anew, so its calls are its own even where their ids are the same)."""
    retried = [r.get("events") for r in sample.get("error_retries") or [] if isinstance(r, dict)]
    return len(_inspect_calls(sample)) + sum(
        len(_inspect_calls({"events": events})) for events in retried if events
    )


def inspect(path: Path) -> int:
    """Tool calls of an Inspect log of one sample (the loader's ``load(path)`` reads only a
    log of one sample); for a log of many, the calls of all its samples."""
    return sum(_inspect_count(sample) for sample in _inspect_samples(path))


def inspect_sample(path: Path, sample_id: Any, epoch: int) -> int:
    """Tool calls of one sample and epoch of an Inspect log."""
    for sample in _inspect_samples(path):
        if str(sample.get("id")) == str(sample_id) and sample.get("epoch") == epoch:
            return _inspect_count(sample)
    raise KeyError((sample_id, epoch))


def _member(path: Path, log: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, a Zstandard one decoded (zipfile reads method 93 only from 3.14)."""
    if info.compress_type != 93:
        return log.read(info)
    import zstandard

    with path.open("rb") as raw:
        raw.seek(info.header_offset + 26)
        skip = int.from_bytes(raw.read(2), "little")
        skip += int.from_bytes(raw.read(2), "little")
        raw.seek(skip, 1)
        return zstandard.ZstdDecompressor().decompress(
            raw.read(info.compress_size), max_output_size=info.file_size
        )


def _document(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8", errors="replace"))


def _json_lines(path: Path) -> Iterator[Any]:
    """The values of a JSON document, or of each line of a JSONL file."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        yield json.loads(text)
        return
    except ValueError:
        pass
    for line in text.splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue


def swe_agent(path: Path) -> int:
    """SWE-agent ``.traj``: one call per trajectory step with an action (sweagent/types.py
    ``TrajectoryStep.action``, the command the step ran); a demonstration (a history and no
    trajectory): one per assistant history item with an action."""
    document = _document(path)
    steps = document.get("trajectory")
    if steps is None:
        steps = [m for m in document.get("history") or [] if isinstance(m, dict)]
        steps = [m for m in steps if m.get("role") == "assistant" and not m.get("is_demo")]
    return sum(1 for s in steps if isinstance(s, dict) and str(s.get("action") or "").strip())


_MINI_BLOCK = re.compile(r"```(?:mswea_bash_command|bash)\s*\n(.*?)\n```", re.DOTALL)


def _mini_rejected_calls(response: Any) -> int:
    """The calls of a response a format error rejected (2.3.1+ keep it in the error message's
    ``extra.response``): a Chat response's ``tool_calls``, a Responses one's ``function_call``
    items. None of them ran."""
    if not isinstance(response, dict):
        return 0
    if response.get("object") == "response":
        return sum(1 for i in response.get("output") or [] if i.get("type") == "function_call")
    choices = response.get("choices") or [{}]
    return len((choices[0].get("message") or {}).get("tool_calls") or [])


def mini_swe_agent(path: Path) -> int:
    """mini-swe-agent: the commands each model response asked for. ``extra.actions`` when
    recorded (2.x); else Chat ``tool_calls``, Responses ``function_call`` items, or the
    fenced block of a text response (exactly one: ``parse_regex_actions`` rejects others);
    and the calls of the responses format errors rejected; and the commands the user ran in
    human mode (a user message with ``extra.actions``)."""
    document = _document(path)
    messages = document.get("messages", []) if isinstance(document, dict) else document
    total = 0
    for message in messages:
        if not isinstance(message, dict):
            continue
        extra = message.get("extra") if isinstance(message.get("extra"), dict) else {}
        if message.get("role") == "user" and isinstance(extra.get("actions"), list):
            total += len(extra["actions"])
        elif message.get("role") == "user" and extra.get("interrupt_type") == "FormatError":
            total += _mini_rejected_calls(extra.get("response"))
        elif message.get("object") == "response":
            total += sum(1 for i in message.get("output") or [] if i.get("type") == "function_call")
        elif message.get("role") != "assistant":
            continue
        elif isinstance(extra.get("actions"), list):
            total += len(extra["actions"])
        elif message.get("tool_calls"):
            total += len(message["tool_calls"])
        elif isinstance(message.get("content"), str):
            total += 1 if len(_MINI_BLOCK.findall(message["content"])) == 1 else 0
    return total


#: OpenHands action types that run something (openhands/core/schema/action.py); messages,
#: thoughts, finish/reject, state changes, recall and condensation are not tool calls.
OPENHANDS_TOOL_ACTIONS = {
    "run", "run_ipython", "read", "write", "edit", "browse", "browse_interactive",
    "delegate", "call_tool_mcp", "task_tracking",
}  # fmt: skip


def _openhands_events(value: Any) -> Iterator[dict[str, Any]]:
    """Events of an event list, of an eval output's ``history``, or of the old history of
    ``[action, observation]`` pairs."""
    if isinstance(value, dict) and isinstance(value.get("history"), list):
        value = value["history"]
    if not isinstance(value, list):
        return
    for item in value:
        if isinstance(item, list):
            yield from (i for i in item if isinstance(i, dict))
        elif isinstance(item, dict):
            yield item


def openhands(path: Path) -> int:
    """OpenHands: action events of a tool-running type, in an event list (a JSON array, or
    one event per line) or in the first instance's ``history`` of an eval ``output.jsonl``
    (one instance is one transcript)."""
    values = list(_json_lines(path))
    if values and isinstance(values[0], dict) and "history" in values[0]:
        values = values[:1]
    elif len(values) == 1 and isinstance(values[0], list):
        values = values[0]
    return sum(
        1
        for value in values
        for event in _openhands_events(
            value if isinstance(value, dict) and "history" in value else [value]
        )
        if event.get("action") in OPENHANDS_TOOL_ACTIONS
    )


def atif(path: Path) -> int:
    """ATIF (Harbor's ``trajectory.json``, RFC 0001): each step's ``tool_calls``, and the calls of
    the trajectories its observation results delegate to (``subagent_trajectory_ref``: an
    embedded ``subagent_trajectories`` entry by ``trajectory_id``, or a ``trajectory_path`` file
    beside it), plus one call per delegation no tool call made (a result with no
    ``source_call_id``), and the embedded runs no result refers to (Harbor's Codex converter's
    spawned agents: under the call whose result names the run's id, else a call of their own);
    then the files its ``continued_trajectory_ref`` chain names, past the steps they copied for
    context (``is_copied_context``)."""

    def count(document: dict[str, Any], copied: bool) -> int:
        runs = {
            run.get("trajectory_id"): run for run in document.get("subagent_trajectories") or []
        }
        total = 0
        referred: set[Any] = set()
        for step in document["steps"]:
            if step.get("is_copied_context") and not copied:
                continue
            total += len(step.get("tool_calls") or [])
            for result in (step.get("observation") or {}).get("results", []):
                refs = result.get("subagent_trajectory_ref") or []
                # A delegation of no call is a call of its own; a call's first sub-agent is it.
                total += (
                    len(refs)
                    if result.get("source_call_id") is None
                    else len(refs) - 1
                    if refs
                    else 0
                )
                for ref in refs:
                    referred.add(ref.get("trajectory_id"))
                    run = runs.get(ref.get("trajectory_id")) if ref.get("trajectory_id") else None
                    if run is None and ref.get("trajectory_path"):
                        run = json.loads((path.parent / ref["trajectory_path"]).read_text())
                    total += count(run, True) if run is not None else 0
        # An embedded run no result refers to (Harbor's Codex converter's spawned agents): its
        # calls, under the call whose result names its id, else under a call of its own.
        said = json.dumps([step.get("observation") for step in document["steps"]])
        for run_id, run in runs.items():
            if run_id not in referred:
                total += count(run, True) + (0 if run_id and run_id in said else 1)
        return total

    document = json.loads(path.read_text(encoding="utf-8"))
    total = count(document, True)
    while document.get("continued_trajectory_ref"):
        document = json.loads((path.parent / document["continued_trajectory_ref"]).read_text())
        total += count(document, False)
    return total


COUNTERS: dict[str, Callable[[Path], int]] = {
    "atif": atif,
    "inspect": inspect,
    "swe-agent": swe_agent,
    "mini-swe-agent": mini_swe_agent,
    "openhands": openhands,
}
