"""What holds for every format: detection, bad input, streaming, nothing modified (L-2, L-4)."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import turnfold
from turnfold import TranscriptFormatError, load
from turnfold.formats import FORMATS, detection, source
from turnfold.formats.detection import Evidence
from turnfold.formats.harnesses.inspect_log import SampleSelectionError

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_FORMATS = {
    "claude-code_v1.0.108_inline-sidechains.jsonl": "claude-code",
    "claude-code_v2.1.x_schema-coverage.jsonl": "claude-code",
    "codex_rollout_schema-coverage.jsonl": "codex",
    "codex_rollout_v0.129_two-turns.jsonl": "codex",
    "gemini-cli_legacy-json_file-ops.json": "gemini",
    "qwen-code_chatrecord.jsonl": "qwen",
}
FIXTURE_NAMES = sorted(FIXTURE_FORMATS)


def test_every_fixture_is_covered() -> None:
    on_disk = {p.name for p in FIXTURES.iterdir() if p.suffix in (".json", ".jsonl")}
    assert on_disk == set(FIXTURE_FORMATS)


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_L2_format_is_detected(name: str) -> None:
    transcript = load(FIXTURES / name)
    assert transcript.metadata["source_format"] == FIXTURE_FORMATS[name]
    assert transcript.entries


def _content(transcript: turnfold.Transcript) -> tuple[object, ...]:
    """A transcript without the source name its warnings carry (a path, ``<bytes>``, …)."""
    warnings = [(w.line, w.reason) for w in transcript.warnings]
    return transcript.entries, transcript.metadata, warnings


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_L2_every_input_shape_gives_the_same_transcript(name: str) -> None:
    path = FIXTURES / name
    data = path.read_bytes()
    from_path = load(path)
    assert load(str(path)) == from_path
    assert _content(load(data)) == _content(from_path)
    assert _content(load(data.decode("utf-8"))) == _content(from_path)
    with path.open("rb") as binary:
        assert load(binary) == from_path
    with path.open(encoding="utf-8") as text:
        assert load(text) == from_path


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_L2_fixture_round_trips_through_the_native_format(name: str) -> None:
    transcript = load(FIXTURES / name)
    assert load(transcript.dump()) == transcript
    assert load(transcript.dump(layout="json")) == transcript


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_L4_loading_never_modifies_the_file(name: str) -> None:
    path = FIXTURES / name
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    load(path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


@pytest.mark.parametrize(
    "garbage",
    [
        b"",
        b"   \n\n  \n",
        bytes(range(256)) * 4,
        b"\x89PNG\r\n\x1a\n" + bytes(200),
        b"hello world\nthis is not json\n",
        b"[1, 2, 3]",
        b'{"just": "an object"}',
        b'"a string"',
        b"42\n43\n",
        b"\xff\xfe\x00{\x00}",
    ],
)
def test_L4_input_that_is_not_a_transcript_raises_one_clear_error(garbage: bytes) -> None:
    with pytest.raises(TranscriptFormatError) as info:
        load(garbage)
    error = info.value
    assert error.source == "<bytes>"
    assert set(error.tried) == set(FORMATS)
    assert "formats tried" in str(error)


def test_L4_error_names_the_file_and_the_first_offending_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text("\n\nnot json at all\n{}\n", encoding="utf-8")
    with pytest.raises(TranscriptFormatError) as info:
        load(path)
    assert info.value.source == str(path)
    assert info.value.line == 3
    assert str(path) in str(info.value)
    assert "line 3" in str(info.value)


@pytest.mark.parametrize(("name", "wrong"), [("codex_rollout_v0.129_two-turns.jsonl", "gemini"),
                                             ("qwen-code_chatrecord.jsonl", "codex")])  # fmt: skip
def test_L2_a_forced_wrong_format_never_crashes(name: str, wrong: str) -> None:
    try:
        transcript = load(FIXTURES / name, format=wrong)
    except TranscriptFormatError as error:
        tried = error.tried
    else:
        tried = (wrong,)
        assert transcript.warnings or not transcript.entries
    assert wrong in tried


def test_L4_non_utf8_bytes_are_a_warning_not_a_crash() -> None:
    lines = (FIXTURES / "codex_rollout_v0.129_two-turns.jsonl").read_bytes().splitlines()
    broken = [*lines[:5], lines[5].replace(b"}", b"\xff}", 1), *lines[6:]]
    transcript = load(b"\n".join(broken))
    assert transcript.entries
    assert any("UTF-8" in w.reason and w.line == 6 for w in transcript.warnings)


def test_X1_a_value_nested_too_deeply_or_a_number_too_long_is_a_warned_line(
    tmp_path: Path,
) -> None:
    """Neither JSON reader can hold a line nested 100,000 deep (Python's recursion limit) or
    an integer of 5,000 digits (``sys.get_int_max_str_digits``): each is one warned line, and
    the lines around it still load; alone in a file, it is the file's clear error."""
    user = {"type": "user", "uuid": "u1", "sessionId": "s", "message": {"content": "hi"}}
    deep = "[" * 100_000 + "]" * 100_000
    long = json.dumps(user | {"uuid": "u2"})[:-1] + ', "n": ' + "9" * 5_000 + "}"
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([json.dumps(user), deep, long, json.dumps(user | {"uuid": "u3"})]))
    transcript = load(path)
    assert [e.text for e in transcript.entries] == ["hi", "hi"]  # type: ignore[attr-defined]
    reasons = {w.line: w.reason for w in transcript.warnings}
    assert "nested too deeply" in reasons[2]
    assert "a number too long to read" in reasons[3]
    alone = tmp_path / "deep.jsonl"
    alone.write_text(deep)
    with pytest.raises(TranscriptFormatError, match=r"deep\.jsonl, line 1: .*nested too deeply"):
        load(alone)
    # Pretty-printed, one document over many lines: said the same, not "invalid JSON".
    pretty = tmp_path / "deep.json"
    pretty.write_text('{"a":\n' * 100_000 + "1" + "\n}" * 100_000)
    with pytest.raises(TranscriptFormatError, match=r"deep\.json, line 1: .*nested too deeply"):
        load(pretty)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_L4_a_file_with_a_byte_order_mark_reads_as_its_utf8_twin(
    tmp_path: Path, encoding: str
) -> None:
    """Windows tools write JSON with a byte order mark, and PowerShell 5's ``>`` writes UTF-16:
    such a file loads, and scans, as the same text in UTF-8 does."""
    text = (FIXTURES / "codex_rollout_v0.129_two-turns.jsonl").read_text("utf-8")
    data = text.encode(encoding)
    if encoding == "utf-16-be":  # Python's big-endian codec writes no mark of its own
        data = b"\xfe\xff" + data
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    twin = load(text.encode("utf-8"))
    loaded = load(path)
    assert loaded.entries == twin.entries
    assert loaded.warnings == twin.warnings
    (row,) = turnfold.scan(tmp_path, workers=1, cache=False)
    assert row["error"] is None
    assert row["tool_calls"] == len(twin.tool_calls())


def test_L4_bytes_of_a_utf16_file_that_do_not_decode_are_warned_of_on_their_line(
    tmp_path: Path,
) -> None:
    """A lone surrogate in a UTF-16 file is shown as U+FFFD, and said, as invalid UTF-8 is."""
    user = '{"role": "user", "content": "hi"}\n'.encode("utf-16-le")
    broken = '{"role": "assistant", "content": "yo'.encode("utf-16-le") + b"\x00\xd8"
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"\xff\xfe" + user + broken + '"}\n'.encode("utf-16-le"))
    loaded = load(path)
    assert [e.text for e in loaded.entries] == ["hi", "yo\ufffd"]  # type: ignore[attr-defined]
    (warning,) = loaded.warnings
    assert warning.line == 2
    assert "undecodable bytes shown as U+FFFD" in warning.reason


def test_L4_unknown_format_name_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown format 'nope'"):
        load(FIXTURES / FIXTURE_NAMES[0], format="nope")


def _fixture_bytes() -> dict[str, bytes]:
    return {name: (FIXTURES / name).read_bytes() for name in FIXTURE_NAMES}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(FIXTURE_NAMES),
    st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)),
             max_size=12),
)  # fmt: skip
def test_L4_corrupted_bytes_give_warnings_or_a_format_error(
    name: str, flips: list[tuple[int, int]]
) -> None:
    data = bytearray(_fixture_bytes()[name])
    for position, value in flips:
        data[position % len(data)] = value
    try:
        transcript = load(bytes(data))
    except TranscriptFormatError:
        return
    assert isinstance(transcript, turnfold.Transcript)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FIXTURE_NAMES), st.data())
def test_L4_dropped_lines_give_warnings_or_a_format_error(name: str, data: st.DataObject) -> None:
    lines = _fixture_bytes()[name].splitlines(keepends=True)
    keep = data.draw(st.lists(st.booleans(), min_size=len(lines), max_size=len(lines)))
    kept = b"".join(line for line, k in zip(lines, keep, strict=True) if k)
    try:
        transcript = load(kept)
    except TranscriptFormatError:
        return
    assert isinstance(transcript, turnfold.Transcript)


@pytest.mark.parametrize("name", [n for n in FIXTURE_NAMES if n.endswith(".jsonl")])
def test_L4_a_truncated_last_line_is_a_warning(name: str) -> None:
    data = _fixture_bytes()[name].rstrip(b"\n")
    cut = data[: data.rfind(b"\n") + 1 + 10]  # the last line keeps only 10 bytes
    transcript = load(cut)
    assert transcript.entries
    assert transcript.warnings


def test_large_files_stream_with_a_progress_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(_fixture_bytes()["codex_rollout_schema-coverage.jsonl"])
    small = load(path)
    assert capsys.readouterr().err == ""  # small files load quietly
    monkeypatch.setattr(source, "PROGRESS_MIN_BYTES", 1)
    monkeypatch.setattr(source, "PROGRESS_DELAY_S", 0)
    monkeypatch.setattr(source, "_PROGRESS_STEP", 1)  # the clock is read once per step
    assert load(path) == small
    assert "Loading big.jsonl" in capsys.readouterr().err
    # A scan's bar counts its items: no bar of each file read (in a worker, whose standard
    # error is the terminal's too, or here), and none of a search's.
    import turnfold

    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path / "cache"))
    corpus = turnfold.scan(path, workers=1)
    assert corpus.search("nothing like this") == []
    assert "Loading" not in capsys.readouterr().err
    assert load(path) == small  # and a load after them still shows its own
    assert "Loading big.jsonl" in capsys.readouterr().err


def test_a_stream_is_read_line_by_line() -> None:
    """A JSONL stream is consumed as it is parsed, never read whole first (spec Q-1)."""
    lines = (FIXTURES / "codex_rollout_v0.129_two-turns.jsonl").read_bytes().splitlines(True)

    class Lines(io.RawIOBase):
        def __init__(self) -> None:
            self.served = 0

        def readable(self) -> bool:
            return True

        def readline(self, size: int | None = -1) -> bytes:
            if self.served == len(lines):
                return b""
            self.served += 1
            return lines[self.served - 1]

        def read(self, size: int | None = -1) -> bytes:
            raise AssertionError("read() of the whole stream")

    stream = Lines()
    transcript = load(stream)
    assert stream.served == len(lines)
    assert transcript.metadata["source_format"] == "codex"


#: A format's reader, the method it reads one record with, and a file of the format whose third
#: record it reads (a JSON-lines session, or a message list).
TRIPPED_READERS = [
    ("claude_code", "_Reader", "feed", "claude-code_v2.1.x_schema-coverage.jsonl"),
    ("codex", "_Pass", "feed", "codex_rollout_schema-coverage.jsonl"),
    ("qwen", "_Reader", "feed", "qwen-code_chatrecord.jsonl"),
    (
        "agents.claude_stream",
        "StreamReader",
        "feed",
        "agents/claude-stream-json/claude-code_v2.1.332_stream-json_subagent.jsonl",
    ),
    (
        "agents.codex_exec",
        "_Reader",
        "event",
        "agents/codex-exec-json/hand-made_exec-json_every-item.jsonl",
    ),
    ("common", "MessageBuilder", "feed_noted", "messages/openai_trailing-session-meta.json"),
    (
        "agents.gemini_stream",
        "_Reader",
        "event",
        "agents/gemini-stream-json/gemini-cli_v0.61.0_stream-json_tools-subagent.jsonl",
    ),
    ("agents.cline_json", "_Reader", "event", "cline/cline-cli-3.0.65_json/work.jsonl"),
    ("agents.opencode_json", "_Reader", "event", "opencode/work/stdout-0.jsonl"),
    (
        "agents.copilot",
        "_Reader",
        "event",
        "copilot/session-state/5522b163-29bf-4e3e-82c6-062172639e01/events.jsonl",
    ),
    (
        "agents.kimi",
        "_Reader",
        "event",
        "kimi/work/session_60f3c294-da52-4c40-857c-c0696d973df5/agents/main/wire.jsonl",
    ),
    (
        "agents.cursor_stream",
        "_Reader",
        "event",
        "agents/cursor-stream-json/cursor-agent_2026-02_stream-json_thinking-deltas.jsonl",
    ),
    (
        "agents.cline_messages",
        "ClineMessagesBuilder",
        "feed_noted",
        "cline/cline-4.x_hand-made_session/1784200000000_q7w2e/1784200000000_q7w2e.messages.json",
    ),
    ("llama_factory", "_Reader", "feed", "messages/llama-factory_v1_reason-tool-use_row.json"),
    (
        "harnesses.openhands_sdk",
        "_Reader",
        "feed",
        "harnesses/openhands-sdk/openhands-sdk_v1.58.2_events.jsonl",
    ),
    (
        "frameworks.llamaindex",
        "LlamaBuilder",
        "feed",
        "frameworks/llamaindex/llama-index-core_v0.14.25_memory_solo.json",
    ),
    (
        "frameworks.haystack",
        "HaystackBuilder",
        "feed",
        "frameworks/haystack/haystack-ai_v3.4.1_messages_solo.json",
    ),
    (
        "frameworks.agno",
        "AgnoBuilder",
        "feed_message",
        "frameworks/agno/agno_v3.1.10_run_solo.json",
    ),
]


@pytest.mark.parametrize(("module", "reader", "method", "fixture"), TRIPPED_READERS)
def test_L4_a_record_the_reader_fails_on_is_one_warned_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, reader: str, method: str,
    fixture: str,
) -> None:  # fmt: skip
    """A shape no version seen here wrote may still trip a reader: that record is warned of
    and the rest of the session is read, by a load and by a scan (which reads on from
    checkpoints through the same pass)."""
    import importlib

    path = tmp_path / Path(fixture).name
    path.write_bytes((FIXTURES / fixture).read_bytes())
    whole = load(path)
    cls = getattr(importlib.import_module(f"turnfold.formats.{module}"), reader)
    real = getattr(cls, method)
    tripped_at: list[int] = []

    def tripping(self: Any, *args: Any, **kwargs: Any) -> Any:
        # The line is the int argument (Qwen's reader takes (line, order within the line)).
        given = [a[0] if type(a) is tuple and a else a for a in args]
        line = next(a for a in given if type(a) is int)
        if not tripped_at and line >= 2:
            tripped_at.append(line)
            raise TypeError("a shape never seen")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, method, tripping)
    named = whole.metadata["source_format"]  # detection, which may read records, left out
    tripped = load(path, format=named)
    (line,) = tripped_at
    assert [w.reason for w in tripped.warnings if w.line == line] == [
        "not read: TypeError: a shape never seen"
    ]
    last = dataclasses.replace(tripped.entries[-1], id=whole.entries[-1].id)
    assert last == whole.entries[-1]  # read on to the end
    tripped_at.clear()
    (row,) = turnfold.scan(path, format=named, workers=1, cache=False)
    assert row["error"] is None
    assert row["warnings"] == len(tripped.warnings)


#: Sessions whose loader reads sibling files (sub-agents' sessions and metadata): the tree to
#: copy, the session in it, and the names of pipes its sibling reads would have opened.
SIBLING_READERS = [
    ("claude-code/v2.1_progress-and-subagent-file", "../v2.1_progress-and-subagent-file.jsonl",
     ["subagents/agent-0pipe.meta.json", "subagents/agent-0pipe.jsonl"]),
    ("qwen/background-agent", "chats/62c225bc-6b43-451c-baad-3eaede03a4f2.jsonl",
     ["subagents/62c225bc-6b43-451c-baad-3eaede03a4f2/agent-0pipe.jsonl",
      "subagents/62c225bc-6b43-451c-baad-3eaede03a4f2/agent-0pipe.meta.json"]),
    ("cursor/3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13", "3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13.jsonl",
     ["subagents/0pipe.jsonl"]),
    ("codex/threads", "rollout-2026-05-12T10-00-00-019c1a00-0000-7000-8000-0000000000aa.jsonl",
     ["0-019c1a00-0000-7000-8000-0000000000c1.jsonl", "0pipe.jsonl"]),
]  # fmt: skip


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize(("tree", "session", "pipes"), SIBLING_READERS)
def test_L4_a_named_pipe_among_a_session_s_sibling_files_is_passed_over(
    tmp_path: Path, tree: str, session: str, pipes: list[str]
) -> None:
    """Opening a pipe waits for a writer that may never come. A loader opens a session's
    sibling files unasked, so it reads regular files only (a pipe the user names is read)."""
    folder = tmp_path / Path(tree).name
    shutil.copytree(FIXTURES / tree, folder)
    if session.startswith("../"):  # the session file sits beside its folder
        shutil.copy(FIXTURES / tree / session, folder / session)
    whole = load(folder / session)
    assert any(call.subagent and call.subagent.transcript for call in whole.tool_calls())
    for name in pipes:
        os.mkfifo(folder / name)

    loaded: list[Any] = []
    # On a thread of its own: a load that waits on a pipe fails the test instead of hanging it.
    loading = threading.Thread(target=lambda: loaded.append(load(folder / session)), daemon=True)
    loading.start()
    loading.join(30)
    assert not loading.is_alive(), "the load waits on a named pipe"
    assert loaded == [whole]


def test_L2_a_path_from_home_is_read_as_a_shell_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A notebook has no shell to expand ``~``: load() and scan() do (``~/.claude/projects``
    was "no such file")."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "runs").mkdir()
    session = FIXTURES / "codex_rollout_v0.129_two-turns.jsonl"
    shutil.copy(session, tmp_path / "runs" / "s.jsonl")
    assert load("~/runs/s.jsonl") == load(session)
    assert load(Path("~/runs/s.jsonl")) == load(session)
    for typed in ("~/runs", "~/runs/*.jsonl", ["~/runs/s.jsonl"]):
        (row,) = turnfold.scan(typed, workers=1, cache=False)
        assert row["error"] is None
        assert row["key"] == str(tmp_path / "runs" / "s.jsonl")


def test_L4_an_address_or_a_stream_is_refused_with_what_to_do_instead() -> None:
    """load() reads files and finished runs: an address is not fetched, and a generator is not
    used up (it may be a framework's live stream, which turnfold.follow reads)."""
    with pytest.raises(ValueError, match=r"https://example\.com/s\.jsonl: load\(\) reads files"):
        load("https://example.com/s.jsonl")
    records = ({"role": "user", "content": "hi"} for _ in range(2))
    with pytest.raises(TypeError, match=r"a generator is a stream: .*turnfold\.follow"):
        load(records)
    assert len(list(records)) == 2  # not one record taken


def test_L4_python_records_that_hold_themselves_are_warned_lines() -> None:
    """A copy of a value that refers to itself (or nests past Python's recursion limit) never
    ends: such a record is one warned record and the others load; such an object alone is
    the clear error of a load."""
    messages: list[Any] = [{"role": "user", "content": "hi"}, {"role": "assistant"},
                           {"role": "user", "content": "again"}]  # fmt: skip
    messages[1]["content"], messages[1]["self"] = "yo", messages[1]
    transcript = load(messages)
    assert [e.text for e in transcript.entries] == ["hi", "again"]  # type: ignore[attr-defined]
    (warning,) = transcript.warnings
    assert warning.line == 2
    assert "holds itself" in warning.reason
    assert messages[1]["self"] is messages[1]  # the reader's object is left as it was
    alone = messages[1]
    with pytest.raises(TranscriptFormatError, match="the object holds itself"):
        load(alone)


def test_L2_one_trajectory_of_a_dataset_read_with_pandas_or_pyarrow_loads(tmp_path: Path) -> None:
    """``pd.read_parquet(...)["messages"][0]`` is a NumPy array of dicts, a row a Series, a
    pyarrow cell a scalar, and counts NumPy integers: each loads as the list it holds (they
    were "no known transcript structure"). A whole table of one row is its run."""
    pandas = pytest.importorskip("pandas")
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    messages = [{"role": "user", "content": "add 1 and 2"},
                {"role": "assistant", "content": "3"}]  # fmt: skip
    pq.write_table(pa.table({"messages": [messages], "reward": [1.0]}), tmp_path / "d.parquet")
    frame = pandas.read_parquet(tmp_path / "d.parquet")
    table = pq.read_table(tmp_path / "d.parquet")
    whole = load(messages)
    for row in (frame["messages"][0], frame.iloc[0], table["messages"][0]):
        assert load(row).entries == whole.entries
    function = {"name": "add", "arguments": {"a": np.int64(1), "b": np.int64(2)}}
    called = [
        messages[0],
        {"role": "assistant", "tool_calls": [{"id": "c1", "function": function}]},
    ]
    (call,) = load(called).tool_calls()
    assert call.args == {"a": 1, "b": 2}
    assert {type(value) for value in call.args.values()} == {int}  # JSON's own, dumped as such
    for one in (frame, table):  # a table of one run is that run (tests/test_load_table_rows.py)
        assert load(one).entries == whole.entries


def test_L2_python_objects_are_copied_not_shared() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    snapshot = json.dumps(messages)
    transcript = load(messages)
    transcript.entries[0].text = "changed"  # type: ignore[attr-defined]
    assert json.dumps(messages) == snapshot


WEIRD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _mutate(value: object, data: st.DataObject, depth: int = 0) -> object:
    """``value`` with one nested value somewhere replaced by a value of another shape."""
    children: list[object] = []
    if isinstance(value, dict):
        children = list(value)
    elif isinstance(value, list):
        children = list(range(len(value)))
    if not children or depth > 6 or data.draw(st.integers(0, 4)) == 0:
        return data.draw(WEIRD_VALUES)
    key = data.draw(st.sampled_from(children))
    copy_ = dict(value) if isinstance(value, dict) else list(value)  # type: ignore[call-overload]
    copy_[key] = _mutate(copy_[key], data, depth + 1)
    return copy_


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FIXTURE_NAMES), st.data())
def test_L4_values_of_unexpected_shape_never_crash(name: str, data: st.DataObject) -> None:
    """Unknown keys and values of the wrong type are tolerated: warnings or a format error."""
    raw = _fixture_bytes()[name]
    if name.endswith(".json"):
        mutated = json.dumps(_mutate(json.loads(raw), data)).encode()
    else:
        records = [json.loads(line) for line in raw.splitlines() if line.strip()]
        for _ in range(data.draw(st.integers(1, 4))):
            index = data.draw(st.integers(0, len(records) - 1))
            records[index] = _mutate(records[index], data)
        mutated = b"\n".join(json.dumps(r).encode() for r in records)
    try:
        transcript = load(mutated)
    except TranscriptFormatError:
        return
    assert load(transcript.dump()) == transcript


#: Every JSON or JSON-lines fixture of every format: frameworks' dumps, harnesses, traces...
EVERY_FIXTURE = sorted(
    str(path.relative_to(FIXTURES))
    for path in FIXTURES.rglob("*")
    if path.suffix in (".json", ".jsonl") and path.is_file()
)


@pytest.mark.parametrize("name", EVERY_FIXTURE)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_L4_any_fixture_with_values_of_unexpected_shape_never_crashes(
    name: str, data: st.DataObject
) -> None:
    """As above, for every fixture of every format: a record whose values have another shape
    than its format's (a list where a string was, a number where a list was) is read or warned
    of, never a crash of the load (found so: a type that is a dict, content that is a number,
    an OTLP span's events that are a boolean)."""
    raw = (FIXTURES / name).read_bytes()
    try:
        if name.endswith(".json"):
            document = json.loads(raw)
        else:
            records = [json.loads(line) for line in raw.splitlines() if line.strip()]
    except ValueError:
        return  # a fixture of bad input on purpose
    if name.endswith(".json"):
        mutated = json.dumps(_mutate(document, data)).encode()
    elif not records:
        return
    else:
        for _ in range(data.draw(st.integers(1, 4))):
            index = data.draw(st.integers(0, len(records) - 1))
            records[index] = _mutate(records[index], data)
        mutated = b"\n".join(json.dumps(r).encode() for r in records)
    try:
        load(mutated)
    except (TranscriptFormatError, SampleSelectionError):
        return  # clear errors naming the source (an eval log left with no sample to show)


@pytest.mark.parametrize(
    ("candidates", "chosen"),
    [
        # Marks beat no marks, whatever the share.
        ([("a", Evidence(share=1.0)), ("b", Evidence(share=0.6, marks=1))], "b"),
        # Among marked readings the larger share wins, then more marks.
        ([("a", Evidence(share=0.9, marks=9)), ("b", Evidence(share=1.0, marks=1))], "b"),
        ([("a", Evidence(share=1.0, marks=2)), ("b", Evidence(share=1.0, marks=5))], "b"),
        # Plain messages (no marks anywhere) read as Chat Completions.
        ([("anthropic", Evidence(share=1.0)), ("openai", Evidence(share=1.0))], "openai"),
        # Below half of the sample nothing fits.
        ([("a", Evidence(share=0.4, marks=4))], None),
    ],
)  # fmt: skip
def test_L2_detection_by_evidence(candidates: list[tuple[str, Evidence]], chosen: str) -> None:
    assert detection.choose(candidates) == chosen


def test_L2_a_tie_between_marked_readings_names_both() -> None:
    tie = [("a", Evidence(share=1.0, marks=3)), ("b", Evidence(share=1.0, marks=3))]
    with pytest.raises(detection.AmbiguousFormat, match="a: reads 100%; b: reads 100%"):
        detection.choose(tie)


def test_L4_no_fitting_format_names_the_closest_and_what_it_lacked() -> None:
    # Half Claude Code lines would be read; a third is not enough.
    claude = {"type": "user", "uuid": "u", "sessionId": "s", "message": {"content": "hi"}}
    lines = [claude, {"x": 1}, {"y": 2}]
    with pytest.raises(TranscriptFormatError, match=r"closest: claude-code: reads 33%"):
        turnfold.load("\n".join(json.dumps(v) for v in lines))


def test_X1_a_line_over_the_record_limit_is_skipped_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hostile or broken file must not exhaust memory: the long line is never held whole.
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", "1000")
    user = {"type": "user", "uuid": "u1", "sessionId": "s", "message": {"content": "hi"}}
    huge = {**user, "uuid": "u2", "message": {"content": "x" * 5000}}
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (user, huge, user | {"uuid": "u3"})) + "\n")
    transcript = load(path)
    assert [e.text for e in transcript.entries] == ["hi", "hi"]  # type: ignore[attr-defined]
    (warning,) = [w for w in transcript.warnings if w.line == 2]
    assert "over the limit of 1,000" in warning.reason
    assert "TURNFOLD_MAX_RECORD_BYTES" in warning.reason


@pytest.mark.parametrize("filler", ["0", "{}", "1 "])
def test_X1_a_line_of_countless_tiny_values_is_one_warned_line(tmp_path: Path, filler: str) -> None:
    """A line of ``0000…`` or ``{}{}…`` is not records glued by a tool (Qwen Code's ``}{``):
    read value by value, 64 MB of it took minutes and gigabytes. It is one warned line."""
    user = {"type": "user", "uuid": "u1", "sessionId": "s", "message": {"content": "hi"}}
    path = tmp_path / "session.jsonl"
    countless = filler * (source.MAX_GLUED_VALUES + 1)
    path.write_text("\n".join([json.dumps(user), countless, json.dumps(user | {"uuid": "u3"})]))
    transcript = load(path)
    assert [e.text for e in transcript.entries] == ["hi", "hi"]  # type: ignore[attr-defined]
    (warning,) = [w for w in transcript.warnings if w.line == 2]
    assert warning.reason.startswith("invalid JSON: Extra data")
    few = tmp_path / "few.jsonl"
    glued = json.dumps(user | {"uuid": "u2"}) * 3
    few.write_text("\n".join([json.dumps(user), glued]))
    assert len(load(few).entries) == 4  # records a tool glued are still read


def test_X1_bounded_lines_keep_at_most_the_limit_in_memory() -> None:
    stream = io.BytesIO(b"short\n" + b"y" * 10_000 + b"\nlast")
    lines = list(source.bounded_lines(stream, 100))
    assert lines == [b"short\n", source.Oversized(10_001), b"last"]


def test_X1_a_json_document_over_the_limit_is_refused_with_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", "1000")
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "x" * 2000}]}, indent=1))
    with pytest.raises(TranscriptFormatError, match=r"chat\.json.*over the limit of 1,000"):
        load(path)


def test_L4_a_warning_names_the_record_by_line_and_id() -> None:
    # Issue 21.15: the line alone is hard to find in a file rewritten since; the id is not.
    good = {"type": "user", "uuid": "u1", "sessionId": "s", "message": {"content": "hi"}}
    odd = {"type": "user", "uuid": "u-odd", "sessionId": "s", "message": "not a dict"}
    transcript = load("\n".join(json.dumps(r) for r in (good, odd, good | {"uuid": "u3"})))
    (warning,) = [w for w in transcript.warnings if w.line == 2]
    assert warning.record == "u-odd"
    assert str(warning).startswith("<text>:2 (u-odd): ")


def test_L2_json_text_longer_than_a_file_name_is_text() -> None:
    # One line of JSON text, no newline, longer than any file name a system allows.
    messages = [{"role": "user", "content": "x" * 300}, {"role": "assistant", "content": "ok"}]
    assert len(load(json.dumps(messages)).entries) == 2


def _every_fixture_source() -> list[Path]:
    """Every JSON and JSON-lines file the tests hold, of every format."""
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".json", ".jsonl"))


def test_L2_conclusive_evidence_belongs_to_one_format_alone() -> None:
    """A load stops asking formats at the first conclusive evidence (issue 19): that is the
    choice of weighing every format only while no two formats are conclusive on one sample.
    Every fixture of every format is weighed by every format here."""
    weighed = 0
    for path in _every_fixture_source():
        try:
            opened, stream = source.open_source(path)
        except Exception:  # not a source load() opens as JSON (a fixture of a path format)
            continue
        try:
            candidates = turnfold.formats.evidence(opened)
            conclusive = [name for name, found in candidates if found.conclusive]
            assert len(conclusive) <= 1, (path, candidates)
            try:
                full = detection.choose(candidates)
            except detection.AmbiguousFormat:
                full = "ambiguous"
            try:
                quick = turnfold.formats.which_format(opened)
            except detection.AmbiguousFormat:
                quick = "ambiguous"
            assert quick == full, path
            weighed += bool(conclusive)
        finally:
            if stream is not None:
                stream.close()
    assert weighed > 20  # the stop is taken on most fixtures, not a path no file reaches


def test_the_formats_that_read_paths_are_listed() -> None:
    readers = [m.NAME for m in turnfold.formats._modules() if hasattr(m, "read_path")]
    assert sorted(readers) == sorted(turnfold.formats.PATH_FORMATS)


@pytest.mark.parametrize("format", [None, "inspect", "aider", "openai"])
@pytest.mark.parametrize("name", ["empty", "runs.parquet"])
def test_a_folder_no_format_reads_is_refused_as_a_folder(
    tmp_path: Path, name: str, format: str | None
) -> None:
    """Only a format that reads folders (an OpenHands V1 conversation) is given one; a
    format that reads files gets none (no bare "Is a directory"), nor does the Parquet
    reader for a folder named like a table."""
    folder = tmp_path / name
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match=r"is a folder: .*scan the folder"):
        turnfold.load(folder, format)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
@pytest.mark.parametrize("format", [None, "claude-code"])
def test_a_device_is_refused_not_read_for_ever(format: str | None) -> None:
    # /dev/zero has no end and no line end: it was read, in bounded memory, for ever.
    with pytest.raises(ValueError, match=r"/dev/zero is a device, not a file"):
        turnfold.load("/dev/zero", format)


def test_the_formats_that_read_folders_read_paths() -> None:
    assert set(turnfold.formats.FOLDER_FORMATS) <= set(turnfold.formats.PATH_FORMATS)
