"""Compressed session files (``rollouts.jsonl.gz``, ``session.jsonl.zst``): loaded and scanned
as the text they hold, cut-off data read up to the cut with a warning, and a compression bomb
read no further than its bound (X-1, L-4, C-1).

The fixtures are the sample sessions of ``tests/fixtures`` (see its SOURCES.md), compressed
here by Python's own compressors and the ``zstandard`` package.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

import turnfold
from turnfold.formats import compressed
from turnfold.formats.errors import TranscriptFormatError

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
    # The bound grows with the compressed bytes read: a bomb is stopped before its end.
    assert max(text_read) <= compressed.MAX_INFLATION * len(data) + (1 << 20)
    assert 0 < len(loaded.entries) < lines
    bomb = [w.reason for w in loaded.warnings if "compression bomb" in w.reason]
    assert len(bomb) == 1
    assert re.fullmatch(
        rf"decompresses to more than {compressed.MAX_INFLATION} times its gzip bytes \(past "
        r"[\d,]+ bytes\): the rest is not read, as a compression bomb's must not be; "
        r"decompress the file yourself to read all of it",
        bomb[0],
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
