"""Reading JSON lines in chunks (issue 19): the same lines, numbers and values as one
``readline`` per line, for lines that span chunks, lines over the record limit and files that
end without a newline; and a load that leaves no reference cycle behind."""

from __future__ import annotations

import gc
import io
import json
from pathlib import Path

import pytest

import turnfold
from turnfold.formats import source

FIXTURES = Path(__file__).parent / "fixtures"


def _readline_lines(data: bytes, limit: int) -> list[bytes | source.Oversized]:
    """What ``readline(limit + 1)`` per line gives (the reading this module replaced)."""
    stream, lines = io.BytesIO(data), []
    while raw := stream.readline(limit + 1):
        if len(raw) <= limit or raw.endswith(b"\n"):
            lines.append(raw)
            continue
        size = len(raw)
        while raw and not raw.endswith(b"\n"):
            raw = stream.readline(1 << 20)
            size += len(raw)
        lines.append(source.Oversized(size))
    return lines


SAMPLES = [
    b"",
    b"\n",
    b"short\n" + b"y" * 10_000 + b"\nlast",
    b"a\n\n\r\nb\r\n",
    b"x" * 99 + b"\n" + b"x" * 100 + b"\n" + b"x" * 101 + b"\n" + b"x" * 101,
    b"\n".join(b"z" * n for n in range(0, 400, 7)),
]


@pytest.mark.parametrize("chunk", [1, 3, 64, 1 << 20])
@pytest.mark.parametrize("data", SAMPLES)
def test_X1_chunked_lines_are_the_lines_readline_gives(
    data: bytes, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(source, "CHUNK_BYTES", chunk)
    assert list(source.bounded_lines(io.BytesIO(data), 100)) == _readline_lines(data, 100)


@pytest.mark.parametrize("chunk", [5, 200, 1 << 20])
def test_X1_records_parsed_across_chunk_edges_match_line_by_line_parsing(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", "300")
    records = [{"type": "user", "n": n, "text": "w" * (n * 37 % 400)} for n in range(40)]
    lines = [json.dumps(r).encode() for r in records]
    lines[7] = b'{"a": NaN}'  # the careful path: the stdlib reads it
    lines[11] = b"not json"
    lines[13] = b""  # a blank line: counted, no record
    data = b"\n".join(lines)
    expected = list(source._parse_lines(enumerate(_readline_lines(data, 300), 1), "<t>", []))
    monkeypatch.setattr(source, "CHUNK_BYTES", chunk)
    read = source.from_binary_stream(io.BytesIO(data), "<t>")
    assert list(read.records()) == expected
    over = [value for _, value in expected if isinstance(value, source.MalformedLine)]
    assert any("over the limit of 300" in value.reason for value in over)


def test_L4_a_load_in_small_chunks_gives_the_same_transcript(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = FIXTURES / "claude-code_v2.1.x_schema-coverage.jsonl"
    whole = turnfold.load(path)
    monkeypatch.setattr(source, "CHUNK_BYTES", 17)
    assert turnfold.load(path).dump() == whole.dump()


def test_Q1_a_loaded_transcript_is_freed_without_the_cyclic_collector() -> None:
    # A reader kept its own bound methods, so it and every entry it read waited for the cyclic
    # collector (a twentieth of a large load, paid again at exit). The first load of a process
    # imports what it needs (an enum class is a cycle of its own): measured on the second. Only
    # turnfold's objects count: a thread another test left running (a tracer's export queue, a
    # browser driver's loop) makes garbage of its own meanwhile.
    path = FIXTURES / "claude-code_v2.1.x_schema-coverage.jsonl"
    turnfold.load(path)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        turnfold.load(path)
        gc.collect()
        ours = [type(o).__qualname__ for o in gc.garbage
                if type(o).__module__.startswith("turnfold")]  # fmt: skip
        assert ours == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
