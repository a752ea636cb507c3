"""Tables of runs as a scan takes them, for the tests of runs split over columns
(tests/test_corpus_prompt_completion.py, tests/test_corpus_preference_tables.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


def table_source(kind: str, folder: Path, rows: list[dict[str, Any]], name: str) -> Any:
    """``rows`` as a pyarrow Table, a pandas DataFrame, or a Parquet file ``name`` in
    ``folder`` (its path)."""
    table = pa.Table.from_pylist(rows)
    if kind == "arrow":
        return table
    if kind == "pandas":
        return table.to_pandas()
    path = folder / name
    pq.write_table(table, path)
    return path
