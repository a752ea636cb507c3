"""A file that cannot be read says one thing, wherever a user meets it (spec C-7, L-4): its
row's ``error`` is the message ``corpus[key]`` raises, word for word, and ``load(path)``'s.

Before, a scan wrote a short text of its own (``the file is empty``, ``line 1: invalid JSON``)
while opening the row raised ``path: not a transcript (the source is empty); formats tried:
…``: a user who filtered the table on ``error`` and opened a row read another reason. The
row's error is now the load's, so it names the file too, as every other error row already did
(a run of a file of runs, a table's row, a log that cannot be read).

The bad files are a real Claude Code session cut short, gzip data cut off, bytes of no text,
an empty file, text that is no JSON, JSON no format reads, and a session its reader may not
open: the tests may run as root, whom ``chmod`` binds not, so that one is read by a child
process that gives up root first.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold import scan
from turnfold.formats import FORMATS, TranscriptFormatError
from turnfold.formats.detection import Evidence

CLAUDE_CODE = Path(__file__).parent / "fixtures" / "claude-code"
SESSION = CLAUDE_CODE / "v2.1.56_real_prompt-taken-mid-turn.jsonl"
#: Who the child process reading a file it may not open runs as, when the tests run as root.
NOBODY = 65534


pytestmark = pytest.mark.usefixtures("cache_dir")


def _opened_error(opener: Callable[[], Any]) -> Exception | None:
    try:
        opener()
    except Exception as exc:
        return exc
    return None


def _bad_files(folder: Path) -> dict[str, str]:
    """Each kind of file that cannot be read, by name, with the reason its error gives."""
    lines = SESSION.read_bytes().splitlines(keepends=True)
    first = lines[0].rstrip(b"\n")
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "blank.jsonl").write_bytes(b"\n  \n\t\n")
    (folder / "notes.jsonl").write_bytes(b"remember to rerun the evals\nand the benchmarks\n")
    (folder / "cut.jsonl").write_bytes(first[: len(first) // 2])  # its only line cut off
    (folder / "image.jsonl").write_bytes(bytes(range(256)) * 4)
    (folder / "cut.jsonl.gz").write_bytes(gzip.compress(SESSION.read_bytes())[:12])
    return {
        "empty.jsonl": "the source is empty",
        "blank.jsonl": "the source is empty",
        "notes.jsonl": "invalid JSON",
        "cut.jsonl": "invalid JSON: Expecting property name",
        "image.jsonl": "binary data, not JSON text",
        "cut.jsonl.gz": "nothing read: the gzip data is cut off or corrupt",
    }


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder another user can list (pytest's own are its user's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="turnfold-errors-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def _as_another_user(read: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """What ``read`` returns in a child process that is not root (root opens any file)."""
    out, into = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child: its result goes back through the pipe
        os.close(out)
        try:
            if os.geteuid() == 0:
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            result = read()
        except BaseException as exc:
            result = {"crash": f"{type(exc).__name__}: {exc}"}
        os.write(into, json.dumps(result).encode())
        os._exit(0)
    os.close(into)
    data = b""
    while chunk := os.read(out, 1 << 16):
        data += chunk
    os.close(out)
    os.waitpid(pid, 0)
    result: dict[str, Any] = json.loads(data)
    return result


def test_C7_an_unreadable_file_s_row_error_is_what_opening_its_row_raises(
    shared_folder: Path,
) -> None:
    folder = shared_folder
    reasons = _bad_files(folder)
    # JSON no format reads: counted, not a row (C-7). A session whose last line was cut short:
    # a row with no error, its warnings what opening it shows.
    (folder / "settings.json").write_text(json.dumps({"theme": "dark", "fontSize": 13}))
    data = SESSION.read_bytes()
    cut_at_end = folder / "session.jsonl"
    cut_at_end.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 20])
    locked = shutil.copyfile(SESSION, folder / "locked.jsonl")
    corpus = scan(folder, workers=1, cache=False)
    rows = {Path(row["key"]).name: row for row in corpus}
    assert sorted(rows) == sorted([*reasons, "session.jsonl", "locked.jsonl"])
    assert corpus.skipped == 1
    for name, reason in reasons.items():
        path = folder / name
        error = rows[name]["error"]
        assert isinstance(error, str), name
        opened = _opened_error(lambda key=str(path): corpus[key])
        loaded = _opened_error(lambda path=path: turnfold.load(path))
        assert isinstance(opened, TranscriptFormatError), name
        assert isinstance(loaded, TranscriptFormatError), name
        assert error == str(opened) == str(loaded), name
        # It names the file, the first offending line where there is one, and the formats tried.
        where = f"{path}, line 1" if reason.startswith(("invalid", "binary")) else str(path)
        assert error.startswith(f"{where}: not a transcript ({reason}"), name
        assert error.endswith(f"; formats tried: {', '.join(FORMATS)}"), name
    # A filter on the error column finds the rows whose opening says the same.
    empty = [key for key, row in rows.items() if "(the source is empty)" in (row["error"] or "")]
    assert sorted(empty) == ["blank.jsonl", "empty.jsonl"]

    with pytest.raises(KeyError):
        corpus[str(folder / "settings.json")]
    with pytest.raises(TranscriptFormatError, match=r"settings\.json, line 1: not a transcript "
                       r"\(no known transcript structure"):  # fmt: skip
        turnfold.load(folder / "settings.json")

    transcript = corpus[str(cut_at_end)]
    assert rows["session.jsonl"]["error"] is None
    assert rows["session.jsonl"]["warnings"] == len(transcript.warnings)
    last = data.rstrip(b"\n").count(b"\n") + 1  # the line cut short
    assert [w.line for w in transcript.warnings if w.reason.startswith("invalid JSON")] == [last]

    # A file its reader may not open (every module the child needs is imported by now).
    locked.chmod(0)

    def read() -> dict[str, Any]:
        corpus = scan(folder, workers=1, cache=False)
        opened = _opened_error(lambda: corpus[str(locked)])
        loaded = _opened_error(lambda: turnfold.load(locked))
        return {
            "row": next(row["error"] for row in corpus if row["key"] == str(locked)),
            "opened": [type(opened).__name__, str(opened)],
            "loaded": [type(loaded).__name__, str(loaded)],
        }

    found = _as_another_user(read)
    assert "crash" not in found, found
    said = f"[Errno 13] Permission denied: '{locked}'"
    assert found["row"] == said
    assert found["opened"] == found["loaded"] == ["PermissionError", said]


def test_C7_a_file_read_equally_well_as_two_formats_says_so_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No two formats of turnfold's read one sample alike today (each has marks of its own),
    so the tie is made here, where every load weighs the formats' evidence."""
    folder = tmp_path / "runs"
    folder.mkdir()
    path = shutil.copyfile(SESSION, folder / "session.jsonl")
    tie = [("codex", Evidence(share=1.0, marks=3)), ("claude-code", Evidence(share=1.0, marks=3))]
    monkeypatch.setattr(turnfold.formats, "_weigh", lambda source: tie)
    corpus = scan(folder, workers=1, cache=False)
    (row,) = list(corpus)
    with pytest.raises(TranscriptFormatError) as caught:
        corpus[str(path)]
    assert row["error"] == str(caught.value)
    tie_said = "codex: reads 100%; claude-code: reads 100%; pass format="
    assert row["error"].startswith(
        f"{path}, line 1: not a transcript (reads equally well as {tie_said})"
    )
