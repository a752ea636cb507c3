"""Compressed session files (``rollouts.jsonl.gz``, ``session.jsonl.zst``): loaded and scanned
as the text they hold, cut-off data read up to the cut with a warning, a compression bomb read
no further than its bounds (of text, and of lines: many tiny records, in bounded memory) and
the real files that compress the most read whole (X-1, L-4, C-1).

The fixtures are the sample sessions of ``tests/fixtures`` (see its SOURCES.md), compressed
here by Python's own compressors and the ``zstandard`` package; the hostile files and the
session of many logged calls are made here too.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard

import turnfold
from tests.formats.oversized import peak_kib
from turnfold.formats import compressed
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.source import record_limit
from turnfold.model import UserMessage

FIXTURES = Path(__file__).parent / "fixtures"

COMPRESSORS: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "gzip": (".gz", gzip.compress),
    "bzip2": (".bz2", bz2.compress),
    "xz": (".xz", lzma.compress),
    "zstd": (".zst", lambda data: zstandard.ZstdCompressor(write_checksum=True).compress(data)),
}

#: JSON lines, and JSON documents of several formats (one read by a format's own file reader).
SAMPLES = [
    "claude-code_v1.0.108_inline-sidechains.jsonl",
    "codex_rollout_schema-coverage.jsonl",
    "gemini-cli_legacy-json_file-ops.json",
    "harnesses/inspect/mockllm_one-sample.json",
    "harnesses/swe-agent/swe-agent_v1_marshmallow-1867_function-calling-replace.traj",
]


def _compressed(tmp_path: Path, sample: str, kind: str) -> Path:
    suffix, compress = COMPRESSORS[kind]
    original = FIXTURES / sample
    path = tmp_path / (original.name + suffix)
    path.write_bytes(compress(original.read_bytes()))
    return path


@pytest.mark.parametrize("kind", COMPRESSORS)
@pytest.mark.parametrize("sample", SAMPLES)
def test_L2_a_compressed_file_loads_as_the_file_it_holds(
    tmp_path: Path, sample: str, kind: str
) -> None:
    expected = _named(turnfold.load(FIXTURES / sample), FIXTURES / sample)
    path = _compressed(tmp_path, sample, kind)
    assert _named(turnfold.load(path), path) == expected
    assert _named(turnfold.load(path.read_bytes()), "<bytes>") == expected  # the bytes
    with path.open("rb") as opened:  # an open file
        assert _named(turnfold.load(opened), path) == expected


def _named(transcript: turnfold.Transcript, source: Path | str) -> str:
    """The transcript's dump, its source's name (in its warnings) left out."""
    return transcript.dump().replace(json.dumps(str(source))[1:-1], "<source>")


def test_L2_known_by_its_bytes_not_its_name(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"  # gzip under a plain name
    path.write_bytes(gzip.compress((FIXTURES / SAMPLES[0]).read_bytes()))
    assert _named(turnfold.load(path), path) == _named(
        turnfold.load(FIXTURES / SAMPLES[0]), FIXTURES / SAMPLES[0]
    )


def test_L2_concatenated_members_and_frames_are_read_through(tmp_path: Path) -> None:
    lines = (FIXTURES / SAMPLES[0]).read_bytes().splitlines(keepends=True)
    half = len(lines) // 2
    parts = [b"".join(lines[:half]), b"".join(lines[half:])]
    whole = turnfold.load(FIXTURES / SAMPLES[0]).dump()
    frames = zstandard.ZstdCompressor()
    for data in (
        b"".join(gzip.compress(p) for p in parts),  # `cat a.gz b.gz`
        b"".join(frames.compress(p) for p in parts),  # `zstd` of each part, concatenated
    ):
        assert turnfold.load(data).dump() == whole


@pytest.mark.parametrize("kind", COMPRESSORS)
def test_L4_data_cut_off_is_read_up_to_the_cut_and_warned_of(kind: str) -> None:
    data = COMPRESSORS[kind][1]((FIXTURES / SAMPLES[0]).read_bytes())
    # The end marker (and the checksum) gone: every line is there, the file is not whole. The
    # zstandard package's own readers take such a frame as whole: the load must not.
    cut = turnfold.load(data[:-3])
    assert cut.entries == turnfold.load(FIXTURES / SAMPLES[0]).entries
    warned = [w.reason for w in cut.warnings]
    assert len(warned) == 1
    assert warned[0].startswith(f"the {kind} data is cut off or corrupt after ")
    assert "the text before it is read" in warned[0]


def test_L4_lines_before_a_cut_are_kept() -> None:
    text = (FIXTURES / SAMPLES[0]).read_bytes()
    data = gzip.compress(text)
    whole = turnfold.load(text)
    half = turnfold.load(data[: len(data) // 2])
    assert 0 < len(half.entries) < len(whole.entries)
    kept = {e.id for e in half.entries}
    assert kept <= {e.id for e in whole.entries}
    assert any("gzip data is cut off" in w.reason for w in half.warnings)


def test_L4_nothing_readable_says_why() -> None:
    data = bz2.compress((FIXTURES / SAMPLES[0]).read_bytes())
    with pytest.raises(TranscriptFormatError, match="nothing read: the bzip2 data is cut off"):
        turnfold.load(data[: len(data) // 2])  # half a block: no text at all


def test_X1_a_compression_bomb_is_read_no_further_than_its_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", str(1 << 20))  # the bound's floor, 1 MB
    line = json.dumps({"role": "user", "content": "again"}).encode() + b"\n"
    lines = 2_000_000  # 88 MB of text in about 90 KB: a thousand times its size
    data = gzip.compress(line * lines, compresslevel=9)
    text_read = []
    real_next = compressed._Inflated._next

    def counted(self: compressed._Inflated) -> bool:
        more = real_next(self)
        text_read.append(self._count)
        return more

    monkeypatch.setattr(compressed._Inflated, "_next", counted)
    loaded = turnfold.load(data)
    # The bound grows with the compressed bytes read: a bomb is stopped before its end, the
    # line it stopped in finished (no half line read as invalid JSON).
    assert max(text_read) <= compressed.MAX_INFLATION * len(data) + (1 << 20) + len(line)
    assert 0 < len(loaded.entries) < lines
    [bomb] = [w.reason for w in loaded.warnings]
    said = re.fullmatch(
        rf"decompresses to more than {compressed.MAX_INFLATION} times its gzip bytes, more "
        r"than real transcripts do: read no further, as a compression bomb must not be\. Its "
        r"first ([\d,]+) lines are read \(([\d,]+) bytes of text from [\d,]+ gzip bytes\); to "
        r"read the rest, decompress the file yourself \(gunzip -k\) and load the file it writes",
        bomb,
    )
    assert said is not None
    assert int(said[1].replace(",", "")) == len(loaded.entries)
    assert int(said[2].replace(",", "")) == len(loaded.entries) * len(line)


def _tiny_records(kind: str, size: int) -> bytes:
    """About ``size`` bytes of tiny records (each a user message), a few random ones among
    them: about 250 times as much text, just under MAX_INFLATION (such a file of 36 MB was
    read on past 1.5 GB of memory)."""
    rng = random.Random(7)
    every = {"gzip": 150, "zstd": 50}[kind]  # a random record in so many: about 250 times
    text = b"".join(
        json.dumps(
            {"role": "user", "content": "again" if i % every else f"{rng.getrandbits(32):08x}"}
        ).encode()
        + b"\n"
        for i in range(100_000)
    )
    part = COMPRESSORS[kind][1](text)  # gzip members and Zstandard frames, one after another
    data = part * (size // len(part))
    assert 200 < len(text) / len(part) < compressed.MAX_INFLATION
    return data


#: A load in a fresh interpreter that may not take more than 2 GB of address space: the bomb
#: read whole (ten million records and more) fails here with a MemoryError, not the machine.
_CAPPED_LOAD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
import turnfold
transcript = turnfold.load(sys.argv[1])
print(len(transcript.entries), len(transcript.warnings))
"""


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_X1_a_file_of_many_tiny_records_is_read_in_bounded_memory(
    tmp_path: Path, kind: str
) -> None:
    """36 MB of tiny records at 250 times their compressed bytes: the load stops at the bound
    on lines, its memory that of a small session's load and some 100 MB more, not the
    gigabytes of the records' objects."""
    hostile = tmp_path / f"rollouts.jsonl{COMPRESSORS[kind][0]}"
    hostile.write_bytes(_tiny_records(kind, 36 << 20))
    small = _compressed(tmp_path, SAMPLES[0], kind)
    _, _, peak = peak_kib(small, record_limit(), _CAPPED_LOAD)
    entries, warnings, held = peak_kib(hostile, record_limit(), _CAPPED_LOAD)
    assert warnings == 1  # the bound, said
    assert compressed.LINE_FLOOR // 2 < entries <= compressed.LINE_FLOOR + 1
    assert held - peak < 256 * 1024  # KiB: 250,000 records' objects, about 110 MB


def test_X1_the_bound_on_lines_says_what_was_read_and_how_to_read_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path / "cache"))
    # The wording at a floor of a tenth: the floor's own test above reads up to the real one;
    # here its 250,000 records, read three times, were most of the suite's slowest unit test.
    monkeypatch.setattr(compressed, "LINE_FLOOR", compressed.LINE_FLOOR // 10)
    hostile = tmp_path / "rollouts.jsonl.gz"
    hostile.write_bytes(_tiny_records("gzip", 1 << 20))
    loaded = turnfold.load(hostile)
    [warning] = loaded.warnings
    said = re.fullmatch(
        rf"{re.escape(str(hostile))}: holds more than {compressed.MAX_LINES_PER_BYTE} lines "
        r"per byte of its gzip data, more than real transcripts do: read no further, as a "
        r"compression bomb must not be\. Its first ([\d,]+) lines are read \([\d,]+ bytes of "
        r"text from ([\d,]+) gzip bytes\); to read the rest, decompress the file yourself "
        r"\(gunzip -k\) and load the file it writes",
        str(warning),
    )
    assert said is not None
    # Every line read is kept, each a user message; the compressed bytes read are a few
    # dozen kilobytes of the file's megabyte.
    assert int(said[1].replace(",", "")) == len(loaded.entries)
    assert int(said[2].replace(",", "")) < (1 << 20) // 4
    # A scan reads the file as a load does: its row counts what was read, and the warning.
    corpus = turnfold.scan(tmp_path, workers=1)
    [row] = corpus.rows
    assert (row["error"], row["warnings"]) == (None, 1)
    assert corpus[str(hostile)] == loaded


#: The system prompt every request repeats: the first 48 KB of turnfold's own format guide,
#: more than gzip's window, so that only xz and Zstandard see each copy as the last one.
_SYSTEM = (Path(__file__).parents[1] / "docs" / "formats.md").read_text()[:48_000]


def _logged_session(turns: int) -> bytes:
    """A session of ``turns`` turns as a log of its API calls (Anthropic's raw stream events,
    each call's request before its events), built on the two calls of the SDK-made fixture:
    each turn's two requests repeat the large system prompt and the whole conversation so far,
    each answer says a passage of its own (so that the file compresses as a real one does, not
    as copies)."""
    template = (FIXTURES / STREAM_WITH_REQUESTS).read_text()
    history: list[Any] = []
    out = []
    for turn in range(turns):
        text = template
        for old, new in [
            ("msg_01TFS0001", f"msg_01TFS{2 * turn + 1:04d}"),
            ("msg_01TFS0002", f"msg_01TFS{2 * turn + 2:04d}"),
            ("toolu_TFS01", f"toolu_TFS{turn:04d}"),
        ]:
            text = text.replace(old, new)
        lines = text.splitlines()
        passage = _SYSTEM[turn * 700 : turn * 700 + 600]
        piece = {"delta": {"text": passage, "type": "text_delta"}, "index": 0}
        lines.insert(27, json.dumps({**piece, "type": "content_block_delta"}))  # the answer's
        asked = json.loads(lines[21])["messages"]  # the second call's: the tool's result too
        for at in (0, 21):  # the turn's two requests
            request = json.loads(lines[at])
            messages = history + request["messages"]
            lines[at] = json.dumps({**request, "system": _SYSTEM, "messages": messages})
        out.extend(lines)
        answer = "Python 3.12.4 is installed, as your notes say." + passage
        history = [*history, *asked, {"role": "assistant", "content": answer}]
    return ("\n".join(out) + "\n").encode()


STREAM_WITH_REQUESTS = "messages/anthropic-2.15.0_stream-events_with-requests.jsonl"
#: The densest lines of the bundled files: a pretty-printed LangGraph stream dump, about 0.8
#: lines per byte by xz.
DENSEST = "frameworks/langchain/langgraph_v1.2.24_stream-dumps_updates-messages_v1-blocks.json"
#: The compressors at their strongest, which give the most text and lines per byte.
STRONGEST: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda data: gzip.compress(data, compresslevel=9),
    "xz": lambda data: lzma.compress(data, preset=9 | lzma.PRESET_EXTREME),
    "zstd": lambda data: zstandard.ZstdCompressor(level=19).compress(data),
}


@pytest.mark.parametrize("kind", STRONGEST)
def test_X1_real_files_that_compress_the_most_load_whole(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session whose every request repeats a 48 KB system prompt (xz and Zstandard make it
    a five-hundredth of its size), and the bundled file densest in lines, load whole, their
    lines judged by the bound's ratio alone (no floor of lines)."""
    monkeypatch.setattr(compressed, "LINE_FLOOR", 0)
    text = _logged_session(60)
    plain = tmp_path / "session.jsonl"
    plain.write_bytes(text)
    whole = turnfold.load(plain)
    assert sum(isinstance(e, UserMessage) for e in whole.entries) == 60
    assert not whole.warnings
    packed = tmp_path / f"session.jsonl{COMPRESSORS[kind][0]}"
    packed.write_bytes(STRONGEST[kind](text))
    if kind != "gzip":  # gzip's 32 KB window holds no earlier copy of the prompt
        # Past the bound on text, which its floor (a record's limit, 256 MB) leaves it under.
        assert len(text) > compressed.MAX_INFLATION * packed.stat().st_size
    assert _named(turnfold.load(packed), packed) == _named(whole, plain)
    dense = tmp_path / f"dense.json{COMPRESSORS[kind][0]}"
    dense.write_bytes(STRONGEST[kind]((FIXTURES / DENSEST).read_bytes()))
    assert _named(turnfold.load(dense), dense) == _named(
        turnfold.load(FIXTURES / DENSEST), FIXTURES / DENSEST
    )


def test_X1_a_zstandard_bomb_is_fed_in_small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Zstandard's decompressor gives all a step's output at once: a step is a few KB of input,
    so one step of a bomb holds a bounded amount of text."""
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", str(1 << 20))
    data = zstandard.ZstdCompressor(level=19).compress(b"\n" * (64 << 20))  # 64 MB of newlines
    steps = []
    frames = compressed._ZstdFrames(io.BytesIO(data))
    while chunk := frames.step():
        steps.append(len(chunk))
    assert sum(steps) == 64 << 20
    assert max(steps) <= 128 * 1024 * compressed._ZSTD_STEP // 4
    with pytest.raises(TranscriptFormatError, match="compression bomb"):
        turnfold.load(data)  # blank lines only: nothing read before the bound


@pytest.mark.parametrize("kind", COMPRESSORS)
def test_C1_a_scan_reads_compressed_sessions(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path / "cache"))
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    plain.mkdir()
    packed.mkdir()
    for sample in SAMPLES[:3]:
        (plain / Path(sample).name).write_bytes((FIXTURES / sample).read_bytes())
        _compressed(packed, sample, kind)
    expected = turnfold.scan(plain, workers=1, cache=False).to_pandas()
    found = turnfold.scan(packed, workers=1)
    assert (len(found), found.errors, found.skipped) == (3, 0, 0)
    rows = found.to_pandas()
    columns = ["format", "turns", "tool_calls", "failed_tools", "errors", "warnings"]
    assert rows[columns].equals(expected[columns])
    key = rows["key"][0]
    assert key.endswith(COMPRESSORS[kind][0])
    assert found[key] == turnfold.load(key)


def test_C4_a_compressed_file_that_changed_is_read_again_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grown compressed file has no line at an offset of the file: it is read whole, and no
    checkpoint is kept of it."""
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path / "cache"))
    lines = (FIXTURES / SAMPLES[0]).read_bytes().splitlines(keepends=True)
    path = tmp_path / "session.jsonl.gz"
    path.write_bytes(gzip.compress(b"".join(lines[:40])))
    first = turnfold.scan(tmp_path, workers=1)
    path.write_bytes(gzip.compress(b"".join(lines)))  # the agent wrote on: archived again
    again = turnfold.scan(tmp_path, workers=1)
    assert again.read == 1
    assert again.to_pandas()["tool_calls"][0] > first.to_pandas()["tool_calls"][0]
    assert again[str(path)] == turnfold.load(FIXTURES / SAMPLES[0])


@pytest.mark.parametrize("packed", [False, True])
def test_L4_a_tar_archive_says_to_extract_it(tmp_path: Path, packed: bool) -> None:
    # An OpenHands session folder kept as .tar.gz read as "line 1: invalid JSON".
    import tarfile

    session = tmp_path / "session.jsonl"
    session.write_text(json.dumps({"role": "user", "content": "hi"}) + "\n")
    archive = tmp_path / ("runs.tar.gz" if packed else "runs.tar")
    with tarfile.open(archive, "w:gz" if packed else "w") as out:
        out.add(session, arcname="session.jsonl")
    with pytest.raises(TranscriptFormatError, match=r"runs\.tar.*a tar archive: extract it"):
        turnfold.load(archive)
    # An archive of no session is no run: a scan counts it among the files it skipped.
    corpus = turnfold.scan(archive, workers=1, cache=False)
    assert (corpus.rows, corpus.skipped) == ([], 1)
