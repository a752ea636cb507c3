"""Files whose records are runs (spec C-1): a dataset kept as JSON lines or a JSON array.

Datasets of trajectories are published as Parquet, but as often as ``train.jsonl`` (one
trajectory per line) or one JSON array of rows (LLaMA-Factory's demo data): each record is a
row, its run's messages under one key (``messages``, ``conversations``…) and its other fields
(a task id, a reward) beside them. No session format reads such a file: its records are not
the messages of one session but many runs. A scan makes each record a row of its own, keyed
``<path>#<n>`` (its place among the file's records, from 0, as a Parquet file's rows are), and
reads it as ``load(record)`` reads it: its messages, its other fields as the transcript's
metadata. The file is read once, one record at a time. Such a file is told by
:func:`~turnfold.formats.wrappers.runs_key`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from turnfold.formats.source import open_source

#: What a search names a file of runs by (``Item.format``), its rows read in one pass: a row
#: opened alone is read to its place, so each read alone would read the file once per row.
FILE = "(a file of runs)"


def records(path: str) -> Iterator[tuple[int, int, Any]]:
    """Each record of the file at ``path``: its place among the records (from 0), its line and
    its value (a :class:`~turnfold.formats.errors.MalformedLine` for a line that is no JSON)."""
    source, stream = open_source(path)
    try:
        for place, (line, value) in enumerate(source.records()):
            yield place, line, value
    finally:
        if stream is not None:
            stream.close()
