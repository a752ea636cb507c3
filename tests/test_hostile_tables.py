"""A hostile Parquet file (spec X-1, X-2): a file of a few kilobytes whose cell decodes to
gigabytes must not take the kernel's memory.

Arrow decodes a row group's column whole, page by page, before any of it can be looked at: a
14 KB file holding one 400 MB cell of one repeated letter (Zstandard packs it thirty thousand
times) failed ``turnfold.load(path, sample=1)`` and ``turnfold.scan(path)`` with a MemoryError
under a 1.5 GB address space, even for the small row beside it, and a 55 KB file of eight such
rows took 2.9 GB. A row group is now weighed by its footer before it is decoded, as a JSON line
is (``TURNFOLD_MAX_RECORD_BYTES``) and a compressed file is (``MAX_INFLATION``); these tests set
the record limit low so their files stay small.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import TranscriptFormatError
from turnfold.formats.compressed import MAX_INFLATION

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

LIMIT = 100_000


def _run(prompt: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]


def _parquet(path: Path, groups: list[list[list[dict[str, str]]]]) -> Path:
    """A Parquet file of runs in a ``messages`` column, each list of ``groups`` a row group."""
    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    schema = pa.schema([("messages", pa.list_(message))])
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for rows in groups:
            writer.write_table(pa.table({"messages": rows}, schema=schema))
    return path


def _errors(path: Path) -> dict[str, Any]:
    rows = turnfold.scan(path, workers=1).rows
    return {row["key"]: row["error"] for row in rows}


@pytest.fixture
def low_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNFOLD_MAX_RECORD_BYTES", str(LIMIT))


def test_X1_a_row_over_the_record_limit_is_not_decoded_and_its_neighbours_are_read(
    tmp_path: Path, low_limit: None
) -> None:
    # Its own row group (each row its own, as an eval writer's rows often are): the footer
    # gives its size; the run is named as a long JSON line is, and skipped unread.
    path = _parquet(tmp_path / "runs.parquet", [
        [_run("first", "fine")], [_run("huge", "z" * (3 * LIMIT))], [_run("third", "also fine")],
    ])  # fmt: skip
    errors = _errors(path)
    assert errors[f"{path}#0"] is None
    assert errors[f"{path}#2"] is None
    said = errors[f"{path}#1"]
    assert "over the limit of 100,000 bytes (TURNFOLD_MAX_RECORD_BYTES); not read" in said
    with pytest.raises(TranscriptFormatError, match="TURNFOLD_MAX_RECORD_BYTES"):
        turnfold.load(path, sample=1)
    assert turnfold.load(path, sample=2).entries[-1].text == "also fine"


def test_X1_a_row_group_that_inflates_like_a_compression_bomb_is_not_decoded(
    tmp_path: Path, low_limit: None
) -> None:
    # Several rows in one row group: one of them cannot be told from the footer, but a group
    # that inflates past MAX_INFLATION times its stored bytes is no real text (it compresses 5
    # to 25 times). Each of its rows says so; the next group is read.
    bomb = [_run("small", "ok"), _run("huge", "z" * (3 * LIMIT)), _run("small", "ok")]
    path = _parquet(tmp_path / "bomb.parquet", [bomb, [_run("after", "read")]])
    group = pq.ParquetFile(path).metadata.row_group(0)
    stored = sum(group.column(i).total_compressed_size for i in range(group.num_columns))
    assert group.total_byte_size > MAX_INFLATION * stored  # a bomb, if a small one
    errors = _errors(path)
    for row in range(3):
        assert "compression bomb" in errors[f"{path}#{row}"]
    assert errors[f"{path}#3"] is None
    assert turnfold.load(path, sample=3).entries[-1].text == "read"


def test_X2_a_large_row_group_of_real_text_is_read_whole(tmp_path: Path, low_limit: None) -> None:
    # Over the record limit, but many rows that compress as text does: nothing is refused.
    words = [" ".join(f"w{(n * 7919 + k) % 10007}" for k in range(400)) for n in range(120)]
    path = _parquet(tmp_path / "text.parquet", [[_run(f"q{n}", w) for n, w in enumerate(words)]])
    assert pq.ParquetFile(path).metadata.row_group(0).total_byte_size > LIMIT
    errors = _errors(path)
    assert len(errors) == 120
    assert set(errors.values()) == {None}


def test_X1_long_rows_are_converted_a_few_at_a_time(
    tmp_path: Path, low_limit: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Arrow joins the rows of one row group to the next in a batch: eight rows of 200 MB, each
    # its own group and each within the record limit, were decoded and converted together.
    from turnfold.formats import tables

    long = "y" * (LIMIT // 2)
    path = _parquet(tmp_path / "long.parquet", [[_run(f"p{n}", long)] for n in range(4)])
    monkeypatch.setattr(tables, "BATCH_BYTES", 3 * LIMIT // 2)  # two of its rows
    converted: list[int] = []
    real = tables.batch_cells

    def counted(batch: Any) -> list[Any]:
        converted.append(batch.num_rows)
        return real(batch)

    monkeypatch.setattr(tables, "batch_cells", counted)
    errors = _errors(path)
    assert set(errors.values()) == {None}
    assert converted == [2, 2]  # each batch about BATCH_BYTES, not all four rows at once


def test_X1_a_bomb_in_a_run_s_other_column_is_not_read_and_says_so(
    tmp_path: Path, low_limit: None
) -> None:
    # The other columns are the runs' metadata beside their rows (C-1): a 400 MB cell of one
    # letter there was read whole by the scan and by load(sample=n).
    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    table = pa.table({
        "messages": pa.array([_run("a", "one"), _run("b", "two")], pa.list_(message)),
        "note": ["z" * (3 * LIMIT), "short"],
        "id": ["r0", "r1"],
    })  # fmt: skip
    path = tmp_path / "side.parquet"
    pq.write_table(table, path, compression="zstd")
    with pytest.warns(UserWarning, match=r"the column 'note' in row group 0: .*compression bomb"):
        rows = turnfold.scan(path, workers=1).to_pandas()
    assert list(rows["id"]) == ["r0", "r1"]  # the rest of the row is read
    assert rows["note"].isna().all()
    assert list(rows["error"].isna()) == [True, True]
    with pytest.warns(UserWarning, match="the column 'note'"):
        run = turnfold.load(path, sample=1)
    assert run.entries[-1].text == "two"
