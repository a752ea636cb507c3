"""A file read beside a session, or refused, costs no more than the record limit and leaves no
file open (spec Q-4, C-7).

``json_object_file`` reads a sibling's JSON object (a sub-agent's ``.meta.json``, an OpenCode
session file's lead while a scan lists its files): it read the file whole, so a huge or
hostile one cost its size in memory, where a document is refused past
``TURNFOLD_MAX_RECORD_BYTES``. And a scan (or a load) of a JSON document over that limit left
the file it opened to the garbage collector: the refusal came before the file was handed back
to be closed (``ResourceWarning: unclosed file``).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.corpus.discover import is_session_bookkeeping
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.source import RECORD_LIMIT_ENV, json_object_file

LIMIT = 4096

pytestmark = pytest.mark.usefixtures("cache_dir")


class _Spied:
    """A file as :func:`io.open` made it, counting the bytes read from it."""

    def __init__(self, stream: Any, reads: list[int]) -> None:
        self._stream, self._reads = stream, reads

    def read(self, size: int = -1) -> Any:
        data = self._stream.read(size)
        self._reads.append(len(data))
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def __enter__(self) -> _Spied:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stream.close()


@pytest.fixture
def limited(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv(RECORD_LIMIT_ENV, str(LIMIT))
    return LIMIT


@pytest.fixture
def streams(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every file this process opens through :func:`io.open` (``Path.open`` too)."""
    made: list[Any] = []
    real = io.open

    def opening(*args: Any, **kwargs: Any) -> Any:
        stream = real(*args, **kwargs)
        made.append(stream)
        return stream

    monkeypatch.setattr(io, "open", opening)
    return made


def _meta(path: Path, size: int) -> Path:
    """A sub-agent's ``.meta.json`` of about ``size`` bytes (its description padded)."""
    value = {"agentType": "general-purpose", "description": "x" * max(0, size - 60)}
    path.write_text(json.dumps(value), "utf-8")
    return path


def test_Q4_a_sibling_over_the_limit_is_read_no_further_and_said(
    tmp_path: Path, limited: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    real = io.open
    monkeypatch.setattr(io, "open", lambda *a, **k: _Spied(real(*a, **k), reads))
    big = _meta(tmp_path / "agent-a1.meta.json", 40 * limited)
    with pytest.warns(UserWarning, match=rf"agent-a1\.meta\.json: not read, over the limit of "
                      rf"{limited:,} bytes \({RECORD_LIMIT_ENV}\)"):  # fmt: skip
        assert json_object_file(big) == {}
    assert sum(reads) <= limited + 1
    small = _meta(tmp_path / "agent-a2.meta.json", limited // 2)
    assert json_object_file(small)["agentType"] == "general-purpose"


def test_Q4_an_opencode_session_file_over_the_limit_is_no_sub_agent_s_unread(
    tmp_path: Path, limited: int
) -> None:
    """A scan of OpenCode's ``storage/`` asks each session file for its lead (``parentID``):
    one over the limit is not read whole for it, is said, and stays an item of its own (its
    load says it is too large)."""
    folder = tmp_path / "storage" / "session" / "global"
    folder.mkdir(parents=True)
    session = folder / "ses_1.json"
    value = {"id": "ses_1", "projectID": "global", "directory": "/w", "parentID": "ses_0",
             "title": "x" * (2 * limited)}  # fmt: skip
    session.write_text(json.dumps(value), "utf-8")
    with pytest.warns(UserWarning, match="ses_1.json: not read, over the limit"):
        assert not is_session_bookkeeping(session, "opencode")


def test_C7_a_document_over_the_limit_leaves_no_file_open(
    tmp_path: Path, limited: int, streams: list[Any]
) -> None:
    """Refused by a scan (an error row) and by a load (an error naming it), its file closed."""
    document = tmp_path / "run.json"
    document.write_text(json.dumps({"messages": [{"role": "user", "content": "x" * limited}]},
                                   indent=2), "utf-8")  # fmt: skip
    corpus = turnfold.scan(document, workers=1, cache=False)
    assert "over the limit" in str(corpus.rows[0]["error"])
    with pytest.raises(TranscriptFormatError, match="over the limit"):
        turnfold.load(document)
    mine = [stream for stream in streams if getattr(stream, "name", None) == str(document)]
    assert mine
    assert all(stream.closed for stream in mine)
