"""Independent tool-call counters for eval-harness logs (issue 13), written from the formats'
documentation apart from the loaders. Each takes a path (``path#id/epoch`` is not a path: a
counter of a many-sample log counts the sample a key names, or the only one) and returns the
number of tool calls the source records, nested ones included.

``COUNTERS`` maps a format's ``NAME`` to its counter, like ``tests/formats/counters.py``.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def _inspect_samples(path: Path) -> Iterator[dict[str, Any]]:
    """Every sample of an Inspect log: ``samples/*.json`` members of an ``.eval`` zip
    (Zstandard members decoded with the ``zstandard`` package), or a ``.json`` log's
    ``samples`` list."""
    if zipfile.is_zipfile(path):
        import zstandard

        with zipfile.ZipFile(path) as log:
            for info in log.infolist():
                if not info.filename.startswith("samples/"):
                    continue
                if info.compress_type == 93:
                    with path.open("rb") as raw:  # zipfile reads method 93 only from 3.14
                        raw.seek(info.header_offset + 26)
                        skip = int.from_bytes(raw.read(2), "little")
                        skip += int.from_bytes(raw.read(2), "little")
                        raw.seek(skip, 1)
                        data = zstandard.ZstdDecompressor().decompress(
                            raw.read(info.compress_size), max_output_size=info.file_size
                        )
                else:
                    data = log.read(info)
                yield json.loads(data)
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
    return ids


def inspect(path: Path) -> int:
    """Tool calls of an Inspect log of one sample (the loader's ``load(path)`` reads only a
    log of one sample); for a log of many, the calls of all its samples."""
    return sum(len(_inspect_calls(sample)) for sample in _inspect_samples(path))


def inspect_sample(path: Path, sample_id: Any, epoch: int) -> int:
    """Tool calls of one sample and epoch of an Inspect log."""
    for sample in _inspect_samples(path):
        if str(sample.get("id")) == str(sample_id) and sample.get("epoch") == epoch:
            return len(_inspect_calls(sample))
    raise KeyError((sample_id, epoch))


COUNTERS: dict[str, Callable[[Path], int]] = {"inspect": inspect}
