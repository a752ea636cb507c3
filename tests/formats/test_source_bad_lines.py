"""Lines that are not JSON (spec L-4, X-1): what a load reads of each kind of bad line, how
it counts them and what its warnings say. A log file, a JSONL cut off mid-record or overwritten
with binary bytes reads in seconds, not minutes; these cases pin what is read and reported,
which the faster careful path must keep line for line."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import turnfold
from turnfold import codec
from turnfold.formats import source
from turnfold.formats.errors import MalformedLine
from turnfold.render.viewmodel import build_view_model


def _shown(value: Any) -> Any:
    """A record's value comparable with ``==``: NaN as the text ``NaN``, a malformed line as
    its reason."""
    if isinstance(value, MalformedLine):
        return ("bad", value.reason)
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {key: _shown(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shown(item) for item in value]
    return value


def _records(data: bytes) -> tuple[list[tuple[int, Any]], list[str]]:
    """The records of JSON lines (after a first good line) and the source's own warnings."""
    read = source.from_binary_stream(io.BytesIO(b'{"type":"user"}\n' + data), "s.jsonl")
    records = [(line, _shown(value)) for line, value in read.records()][1:]
    return records, [str(warning) for warning in read.warnings]


#: One line of each kind, what is read of it (line 2, the line after a good one) and the
#: source's warnings about it.
LINES: list[tuple[str, bytes, list[Any], list[str]]] = [
    ("a word", b"x", [("bad", "invalid JSON: Expecting value (column 1)")], []),
    ("a control byte", b"\x00\x01", [("bad", "invalid JSON: Expecting value (column 1)")], []),
    ("text after spaces", b" \t x", [("bad", "invalid JSON: Expecting value (column 4)")], []),
    ("a prefix of null", b"nul", [("bad", "invalid JSON: Expecting value (column 1)")], []),
    (
        "a log line: one line that is not JSON, not the numbers it starts with",
        b"2026-01-01 12:00:07 INFO worker 7 done",
        [("bad", "invalid JSON: Extra data (column 5)")],
        [],
    ),
    (
        "JSON cut off mid-key (its newline is inside the string)",
        b'{"type":"user","mess',
        [("bad", "invalid JSON: Invalid control character at (column 21)")],
        [],
    ),
    (
        "JSON cut off after a comma",
        b"[1,2",
        # Where the line ends, not column 1 of the next line, where the stdlib counts it.
        [("bad", "invalid JSON: Expecting ',' delimiter (column 5, where the line ends)")],
        [],
    ),
    (
        "NaN in an object",
        b'{"type":"progress","value":NaN}',
        [{"type": "progress", "value": "NaN"}],
        [],
    ),
    ("NaN alone", b"NaN", ["NaN"], []),
    (
        "Infinity and a number: no glued records",
        b"-Infinity 1",
        [("bad", "invalid JSON: Extra data (column 11)")],
        [],
    ),
    (
        "an object and a number",
        b'{"a":1} 5',
        [{"a": 1}, ("bad", "invalid JSON after 1 glued objects: a value that is no object")],
        [],
    ),
    ("glued objects", b'{"a":1}{"b":2}', [{"a": 1}, {"b": 2}], []),
    (
        "glued objects, the last cut off",
        b'{"a":1} {"b":2}  {"c"',
        [
            {"a": 1},
            {"b": 2},
            ("bad", "invalid JSON after 2 glued objects: Expecting ':' delimiter"),
        ],
        [],
    ),
    (
        "an object and a word",
        b'{"a":1} x',
        [{"a": 1}, ("bad", "invalid JSON after 1 glued objects: Expecting value")],
        [],
    ),
    (
        "three numbers: no glued records",
        b"1 2 3",
        [("bad", "invalid JSON: Extra data (column 3)")],
        [],
    ),
    (
        "too many glued values to be glued records",
        b"{}" * (source.MAX_GLUED_VALUES + 1),
        [("bad", "invalid JSON: Extra data (column 3)")],
        [],
    ),
    ("glued after a vertical tab", b'\x0b{"a":1}{"b":2}', [{"a": 1}, {"b": 2}], []),
    ("glued after a no-break space", b'\xc2\xa0{"a":1}{"b":2}', [{"a": 1}, {"b": 2}], []),
    (
        "a vertical tab before a word",
        b"\x0bx",
        [("bad", "invalid JSON: Expecting value (column 1)")],
        [],
    ),
    (
        "glued after a byte order mark",
        b'\xef\xbb\xbf{"a":1}{"b":2}',
        [("bad", "invalid JSON: Extra data (column 8)")],
        [],
    ),
    ("NaN after a byte order mark", b'\xef\xbb\xbf{"a":NaN}', [{"a": "NaN"}], []),
    (
        "a word after a byte order mark",
        b"\xef\xbb\xbfx",
        [("bad", "invalid JSON: Expecting value (column 1)")],
        [],
    ),
    ("a lone surrogate escape", b'"\\ud800"', ["\ud800"], []),
    (
        "binary bytes",
        b'\x80\xff\x00{"',
        [("bad", "invalid JSON: Expecting value (column 1)")],
        ["s.jsonl:2: invalid UTF-8 at byte 0; undecodable bytes shown as U+FFFD"],
    ),
    (
        "an invalid UTF-8 byte inside a string",
        b'{"a":"\xff"}',
        [{"a": "\ufffd"}],
        ["s.jsonl:2: invalid UTF-8 at byte 6; undecodable bytes shown as U+FFFD"],
    ),
    ("a blank line", b"   ", [], []),
    (
        "a value nested too deeply",
        b"[" * 100_000,
        [("bad", "nested too deeply to read")],
        [],
    ),
]


@pytest.mark.parametrize(
    ("line", "read", "warned"),
    [case[1:] for case in LINES],
    ids=[case[0] for case in LINES],
)
def test_L4_each_kind_of_bad_line_reads_as_before(
    line: bytes, read: list[Any], warned: list[str]
) -> None:
    assert _records(line + b"\n") == ([(2, value) for value in read], warned)


def test_L4_bad_lines_keep_their_numbers_among_good_ones() -> None:
    data = b"\n".join(case[1] for case in LINES) + b"\n"
    records, warned = _records(data)
    expected = [(number, value) for number, case in enumerate(LINES, start=2) for value in case[2]]
    assert records == expected
    utf8 = [(number, case[3]) for number, case in enumerate(LINES, start=2) if case[3]]
    assert warned == [
        warning.replace("s.jsonl:2:", f"s.jsonl:{number}:") for number, w in utf8 for warning in w
    ]


_PROMPT = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}
_ANSWER = {"type": "assistant", "uuid": "a9", "parentUuid": "u1",
           "message": {"role": "assistant", "model": "m",
                       "content": [{"type": "text", "text": "the answer"}]}}  # fmt: skip


def _session(path: Path, bad: Callable[[int], bytes], count: int) -> Path:
    """A Claude Code session: a prompt, ``count`` bad lines, an answer."""
    lines = [json.dumps(_PROMPT).encode(), *(bad(i) for i in range(count)),
             json.dumps(_ANSWER).encode()]  # fmt: skip
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _log(i: int) -> bytes:
    return f"2026-01-01 12:00:{i:02d} INFO worker {i} done".encode()


#: A kind of bad line, the first lines of a load's warnings (``P`` for the path), and its
#: accounting, for a session with eight such lines and five listed warnings.
LOADS: list[tuple[str, Callable[[int], bytes], list[str], dict[str, dict[str, int]]]] = [
    (
        "words",
        lambda i: b"x",
        [f"P:{n}: invalid JSON: Expecting value (column 1)" for n in range(2, 7)]
        + ["P:7: 3 more problem(s) like those above, not listed one by one"],
        {"(invalid JSON)": {"warned": 8}},
    ),
    (
        "log lines",
        _log,
        [f"P:{n}: invalid JSON: Extra data (column 5)" for n in range(2, 7)]
        + ["P:7: 3 more problem(s) like those above, not listed one by one"],
        {"(invalid JSON)": {"warned": 8}},
    ),
    (
        "truncated JSON",
        lambda i: b'{"type":"user","mess',
        [f"P:{n}: invalid JSON: Invalid control character at (column 21)" for n in range(2, 7)]
        + ["P:7: 3 more problem(s) like those above, not listed one by one"],
        {"(invalid JSON)": {"warned": 8}},
    ),
    (
        "NaN-bearing records",
        lambda i: b'{"type":"progress","uuid":"p%d","value":NaN}' % i,
        [],
        {"progress": {"ignored": 8}},
    ),
    (
        "glued records",
        lambda i: b'{"type":"progress","uuid":"g%d"}{"type":"progress","uuid":"h%d"}' % (i, i),
        [],
        {"progress": {"ignored": 16}},
    ),
    (
        "binary garbage",
        lambda i: bytes([0x80 + i, 0xFF, 0x00, 0x7B, 0x22]),
        [f"P:{n}: invalid UTF-8 at byte 0; undecodable bytes shown as U+FFFD" for n in range(2, 7)]
        + ["P:7: 11 more problem(s) like those above, not listed one by one"],
        {"(invalid JSON)": {"warned": 8}},
    ),
]


@pytest.mark.parametrize(
    ("bad", "warnings", "counts"), [case[1:] for case in LOADS], ids=[case[0] for case in LOADS]
)
def test_X1_a_load_of_bad_lines_counts_and_names_them_as_before(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    bad: Callable[[int], bytes],
    warnings: list[str],
    counts: dict[str, dict[str, int]],
) -> None:
    monkeypatch.setattr(source, "MAX_LISTED_WARNINGS", 5)
    path = _session(tmp_path / "bad.jsonl", bad, 8)
    transcript = turnfold.load(path, format="claude-code")
    assert [str(w).replace(str(path), "P") for w in transcript.warnings] == warnings
    assert transcript.accounting is not None
    assert transcript.accounting.counts == {
        "user": {"mapped": 1},
        **counts,
        "assistant": {"mapped": 1},
    }
    assert transcript.accounting.unaccounted == []
    assert [type(e).__name__ for e in transcript.entries] == ["UserMessage", "AssistantText"]


def test_X1_past_a_thousand_listed_warnings_every_bad_line_is_still_counted(
    tmp_path: Path,
) -> None:
    path = _session(tmp_path / "bad.jsonl", lambda i: b"x" if i % 2 else _log(i % 60), 3_000)
    transcript = turnfold.load(path, format="claude-code")
    shown = [str(w).replace(str(path), "P") for w in transcript.warnings]
    # A log line, then a word: one warning each.
    first = [
        "P:2: invalid JSON: Extra data (column 5)",
        "P:3: invalid JSON: Expecting value (column 1)",
    ]
    assert shown[:2] == first
    assert len(shown) == source.MAX_LISTED_WARNINGS + 1
    assert shown[-2] == "P:1001: invalid JSON: Expecting value (column 1)"
    assert shown[-1] == "P:1002: 2,000 more problem(s) like those above, not listed one by one"
    assert transcript.accounting is not None
    assert "(int)" not in transcript.accounting.counts
    assert transcript.accounting.counts["(invalid JSON)"] == {"warned": 3_000}
    # The view names the file, not its path, and still says how many were not listed.
    notice = build_view_model(transcript)["notice"]
    assert notice is not None
    assert notice["items"][-1] == (
        "bad.jsonl:1002: 2,000 more problem(s) like those above, not listed one by one"
    )


#: Characters that make lines of every kind: JSON's own, the words NaN and Infinity, whitespace
#: JSON knows and whitespace it does not, a byte order mark, a replacement character.
_ALPHABET = '{}[]",:0123456789-+.eE tfnNIa\t\r\x0b\xa0\ufeff\ufffdxy\\'


def _stdlib_error(line: str) -> json.JSONDecodeError | None:
    """What the stdlib (behind msgspec) says is wrong with ``line``; None when it reads it."""
    try:
        codec.loads(line)
    except json.JSONDecodeError as exc:
        return exc
    return None


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=24))
def test_L4_a_refused_line_reads_as_the_standard_library_reads_it(text: str) -> None:
    # The careful path (what the fast decoder refused) agrees with the stdlib: one value when
    # the line is one, its message and column when it is no JSON and holds no glued values.
    line = text + "\n"
    read = list(source._careful(line, 7))
    if not line.strip():
        assert read == []
        return
    assert {number for number, _ in read} == {7}
    error = _stdlib_error(line)
    glued = source._glued_values(line.lstrip())
    if error is None:
        assert [_shown(v) for _, v in read] == [_shown(codec.loads(line))]
    elif isinstance(error, codec.UnreadableJSON):
        assert read == [(7, MalformedLine(error.msg))]
    elif len(glued) >= 2:
        assert [_shown(v) for _, v in read] == [_shown(v) for v in glued]
    else:
        # A value still open at the line's end: the stdlib counts that on the next line.
        where = (
            f"{error.colno}"
            if error.lineno == 1
            else f"{len(text.rstrip()) + 1}, where the line ends"
        )
        assert read == [(7, MalformedLine(f"invalid JSON: {error.msg} (column {where})"))]
