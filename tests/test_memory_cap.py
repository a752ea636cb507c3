"""The absolute cap on what one load holds of a compressed file or a Parquet file (spec X-1,
X-2): a hostile file built to stay under every bound relative to its stored bytes still
holds some hundreds of bytes of objects per line or value, so a large one would take the
kernel's memory; a load stops at a part of the memory the process may use, and says so.

The hostile files are made here: JSON lines compressed by Python's gzip, Parquet files by
pyarrow. Most tests scale the cap down (the process's memory, as
:func:`~turnfold.formats.compressed.memory_limit` reads it); the ``*_real_default`` ones run a
load in a fresh interpreter whose address space is limited (``RLIMIT_AS``), where the cap is
derived from that limit as it would be from a container's or a machine's: there the old code,
which had no cap, failed with a MemoryError.
"""

from __future__ import annotations

import gzip
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.held_memory import lowered_memory, refusal, with_peak
from turnfold.formats import compressed, tables
from turnfold.model import UserMessage

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

#: A record of 100 bytes whose last letter is one of two: gzip packs 100,000 of them into
#: 55 KB, 1.8 lines a compressed byte and 183 times as much text, just under both bounds
#: relative to the compressed bytes (2 and 256).
_PADDING = "x" * 70


def _lines_under_both_ratios(lines: int) -> bytes:
    """``lines`` tiny user messages as gzip members of 100,000 lines each."""
    rng = random.Random(7)
    block = "".join(
        f'{{"role":"user","content":"{_PADDING}{rng.choice("ab")}"}}\n' for _ in range(100_000)
    ).encode()
    part = gzip.compress(block)
    assert 1.5 < 100_000 / len(part) < compressed.MAX_LINES_PER_BYTE
    assert len(block) / len(part) < compressed.MAX_INFLATION
    whole, rest = divmod(lines, 100_000)
    tail = b"".join(block.splitlines(keepends=True)[:rest])
    return part * whole + (gzip.compress(tail) if rest else b"")


def test_X1_a_file_under_both_ratios_stops_at_the_memory_cap_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """120,000 lines under both ratios (read whole before: 75 MB of objects) in a process
    that may use 80 MB: read up to a quarter of it, with the warning."""
    lowered_memory(monkeypatch, 80 << 20)
    hostile = tmp_path / "rollouts.jsonl.gz"
    hostile.write_bytes(_lines_under_both_ratios(120_000))
    loaded, peak = with_peak(lambda: turnfold.load(hostile))
    [warning] = loaded.warnings
    held = (80 << 20) // compressed.HELD_SHARE
    said = re.fullmatch(
        rf"{re.escape(str(hostile))}: holds more than {held:,} bytes of text and lines \(a "
        rf"line's objects counted as {compressed.LINE_BYTES} bytes\), the part of this "
        rf"process's {80 << 20:,} bytes of memory one load may take, more than real "
        r"transcripts do: read no further, as a compression bomb must not be\. Its first "
        r"([\d,]+) lines are read \(([\d,]+) bytes of text from [\d,]+ gzip bytes\); to read "
        r"the rest, decompress the file yourself \(gunzip -k\) and load the file it writes",
        str(warning),
    )
    assert said is not None
    lines, text = (int(said[i].replace(",", "")) for i in (1, 2))
    assert lines == len(loaded.entries)  # every line read is kept
    assert text + compressed.LINE_BYTES * lines <= held + 200  # the line the cap fell in
    assert held // 2 < text + compressed.LINE_BYTES * lines
    assert peak < 2 * held  # the whole file's objects are some 75 MB


#: A load in a fresh interpreter that may use so many MiB of address space (pyarrow's
#: libraries take some 400 of it): the cap is a quarter of it. It prints its entries and
#: warnings, or the error that ended it, and its peak RSS (KiB).
_CAPPED = """
import resource, sys
limit = int(sys.argv[1]) << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import turnfold
try:
    transcript = turnfold.load(sys.argv[2], **eval(sys.argv[3]))
except (MemoryError, turnfold.TranscriptFormatError) as exc:
    print(type(exc).__name__, str(exc)[:2000].replace(chr(10), " "))
else:
    print("loaded", len(transcript.entries), *[str(w) for w in transcript.warnings])
# VmHWM, not ru_maxrss: Linux carries a parent's peak across fork and exec into ru_maxrss, and
# pytest's own process may be gigabytes by the time this runs.
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print("peak", peak.split()[1])
"""


def _capped_load(mib: int, path: Path, **options: Any) -> tuple[str, int]:
    """What a load of ``path`` in ``mib`` MiB of address space printed, and its peak RSS
    (KiB)."""
    out = subprocess.run(
        [sys.executable, "-c", _CAPPED, str(mib), str(path), repr(options)],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout.splitlines()  # fmt: skip
    return "\n".join(out[:-1]), int(out[-1].split()[1])


def test_X1_a_large_file_under_both_ratios_is_read_in_bounded_memory_real_default(
    tmp_path: Path,
) -> None:
    """A million lines (550 KB of gzip) under both ratios: 600 MB of objects read whole, a
    MemoryError in 512 MiB before the cap; with it, the load stops at a quarter of that."""
    hostile = tmp_path / "rollouts.jsonl.gz"
    hostile.write_bytes(_lines_under_both_ratios(1_000_000))
    said, peak = _capped_load(512, hostile)
    assert said.startswith("loaded "), said
    entries = int(said.split()[1])
    assert f"{hostile}: holds more than {(512 << 20) // 4:,} bytes of text and lines" in said
    assert f"Its first {entries:,} lines are read" in said
    assert 100_000 < entries < (512 << 20) // 4 // compressed.LINE_BYTES
    assert peak < 400 * 1024  # KiB, of the 512 MiB


def test_X2_the_bundled_compressed_file_reads_whole_under_the_real_cap(
    tmp_path: Path,
) -> None:
    """The cap at the machine's own memory leaves the bundled gzip file of runs whole (the
    bundled sessions compressed are read whole by ``test_compressed.py``)."""
    fixture = (
        Path(__file__).parent / "fixtures/harnesses/openhands/"
        "openhands_output-jsonl_v1-benchmarks_sdk-1.58.2_terminal-error.jsonl.gz"
    )
    plain = tmp_path / fixture.name.removesuffix(".gz")
    plain.write_bytes(gzip.decompress(fixture.read_bytes()))
    assert turnfold.load(fixture).dump().replace(str(fixture), "<source>") == turnfold.load(
        plain
    ).dump().replace(str(plain), "<source>")


# --- Parquet: the values a row group's cells hold -------------------------------------------

_MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])
_SCHEMA = pa.schema([("messages", pa.list_(_MESSAGE))])


def _parquet(path: Path, rows: list[Any], row_group_size: int | None = None) -> Path:
    """A Parquet file of runs in a ``messages`` column (its rows Arrow arrays or lists)."""
    column = pa.chunked_array(
        [row if isinstance(row, pa.Array) else pa.array([row], _SCHEMA[0].type) for row in rows],
        _SCHEMA[0].type,
    )
    table = pa.table({"messages": column}, schema=_SCHEMA)
    pq.write_table(table, path, compression="zstd", row_group_size=row_group_size)
    return path


def _tiny_messages(count: int, letters: str = "") -> Any:
    """One row of ``count`` messages, user and assistant in turn, each of two letters of
    ``letters`` (of "ok" when none), as an Arrow array built without Python objects each."""
    rng = random.Random(11)
    if letters:
        words = [a + b for a in letters for b in letters]
        content = pa.array(words).take(pa.array([rng.randrange(len(words)) for _ in range(count)]))
    else:
        content = pa.repeat(pa.scalar("ok"), count)
    role = pa.array(["user", "assistant"]).take(pa.array([n % 2 for n in range(count)]))
    messages = pa.StructArray.from_arrays([role, content], fields=list(_MESSAGE))
    return pa.ListArray.from_arrays(pa.array([0, count], pa.int32()), messages)


def _stored(path: Path) -> tuple[int, int]:
    """The values and the stored bytes of the file's first row group."""
    group = pq.ParquetFile(path).metadata.row_group(0)
    columns = [group.column(i) for i in range(group.num_columns)]
    return sum(c.num_values for c in columns), sum(c.total_compressed_size for c in columns)


def test_X1_a_cell_of_many_tiny_messages_small_on_disk_is_never_decoded(tmp_path: Path) -> None:
    """300,000 messages in a file of 2 KB (270 MB of objects when read): the footer counts
    them, the group's rows are never decoded, each says why."""
    path = _parquet(tmp_path / "bomb.parquet", [[{"role": "user", "content": "hi"}],
                                                _tiny_messages(300_000)])  # fmt: skip
    values, stored = _stored(path)
    assert values > max(tables.VALUE_FLOOR, tables.MAX_VALUES_PER_BYTE * stored)
    assert path.stat().st_size < 4096
    raised, peak = with_peak(lambda: refusal(lambda: turnfold.load(path, sample=1)))
    assert str(raised).startswith(f"{path}, row 1: ")
    assert (
        f"its messages in row group 0: {values:,} values stored in {stored:,} bytes, more "
        f"than {tables.MAX_VALUES_PER_BYTE} a byte, as a compression bomb's must not be; not "
        "read (to read them, read the file with pyarrow.parquet.read_table and scan the table)"
    ) in str(raised)
    assert peak < 16 << 20  # nothing of its 300,000 messages converted


def test_X1_a_row_group_of_many_tiny_rows_small_on_disk_is_never_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group of 3,000 rows of one message, a few hundred bytes stored, past a floor scaled
    down to 1,000 values: each row stands for itself, unread; the next group is read."""
    monkeypatch.setattr(tables, "VALUE_FLOOR", 1000)
    one = [{"role": "user", "content": "hi"}]
    rows = [pa.array([one] * 3000, _SCHEMA[0].type), [{"role": "user", "content": "after"}]]
    path = _parquet(tmp_path / "rows.parquet", rows, row_group_size=3000)
    assert pq.ParquetFile(path).metadata.num_row_groups == 2
    errors = {row["key"]: row["error"] for row in turnfold.scan(path, workers=1).rows}
    assert len(errors) == 3001  # none dropped
    assert all("as a compression bomb's must not be" in errors[f"{path}#{n}"] for n in range(3000))
    assert errors[f"{path}#3000"] is None
    [entry] = turnfold.load(path, sample=3000).entries
    assert isinstance(entry, UserMessage)
    assert entry.text == "after"


def test_X1_a_cell_over_the_values_a_load_converts_is_not_converted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cell of 60,000 messages of random letters (under the floor, so not refused by its
    footer) in a process that may use 40 MB: it is not converted, its neighbours are."""
    lowered_memory(monkeypatch, 40 << 20)
    most = tables.held_values()
    assert most == (40 << 20) // 4 // tables.VALUE_BYTES
    rows = [
        [{"role": "user", "content": "first"}],
        _tiny_messages(60_000, "abcdefghijklmnop"),
        [{"role": "user", "content": "third"}],
    ]
    path = _parquet(tmp_path / "runs.parquet", rows)
    assert _stored(path)[0] < tables.VALUE_FLOOR
    errors = {row["key"]: row["error"] for row in turnfold.scan(path, workers=1).rows}
    assert errors[f"{path}#0"] is None
    assert errors[f"{path}#2"] is None
    assert (
        f"its messages hold {1 + 3 * 60_000:,} values (each list, struct and field in them), "
        f"more than the {most:,} a load converts at once ({tables.VALUE_BYTES} bytes of "
        "objects each, in the part of this process's memory one load may take); not read"
    ) in errors[f"{path}#1"]
    raised, peak = with_peak(lambda: refusal(lambda: turnfold.load(path, sample=1)))
    assert re.match(
        rf"{re.escape(str(path))}, row 1: .*its messages hold 180,001 values", str(raised)
    )
    assert peak < most * tables.VALUE_BYTES  # its 60,000 messages: 54 MB converted


def test_X1_rows_are_converted_no_more_values_at_once_than_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty rows of 1,000 messages each, one batch of Arrow's, in a process that may use 20
    MB: converted a few rows at a time, every row read."""
    lowered_memory(monkeypatch, 20 << 20)
    most = tables.held_values()
    path = _parquet(tmp_path / "runs.parquet", [_tiny_messages(1000, "abcd")] * 20)
    converted: list[int] = []
    convert = tables.batch_cells

    def counted(batch: Any) -> list[Any]:
        converted.append(sum(tables._values(batch)))
        return convert(batch)

    monkeypatch.setattr(tables, "batch_cells", counted)
    errors = {row["key"]: row["error"] for row in turnfold.scan(path, workers=1).rows}
    assert set(errors.values()) == {None}
    assert len(errors) == 20
    assert len(converted) > 1
    assert max(converted) <= most


def test_X1_a_cell_of_many_tiny_messages_is_refused_in_bounded_memory_real_default(
    tmp_path: Path,
) -> None:
    """A cell of 600,000 messages of random letters, too many bytes stored for the ratio to
    refuse it: 540 MB of objects, a MemoryError in 768 MiB before the cap; with it, the row is
    refused, saying why, and the row beside it is read."""
    letters = "0123456789abcdefghijklmnopqrstuv"
    path = _parquet(tmp_path / "runs.parquet", [[{"role": "user", "content": "first"}],
                                                _tiny_messages(600_000, letters)])  # fmt: skip
    values, stored = _stored(path)
    assert tables.VALUE_FLOOR < values < tables.MAX_VALUES_PER_BYTE * stored
    said, peak = _capped_load(768, path, sample=1)
    assert said.startswith(f"TranscriptFormatError {path}, row 1: "), said
    assert f"its messages hold {1 + 3 * 600_000:,} values" in said
    assert peak < 400 * 1024  # KiB, of the 768 MiB
    said, _ = _capped_load(768, path, sample=0)
    assert said == "loaded 1"
