"""The OpenHands app server's export of a V1 conversation, read and scanned (spec H-3, C-1, X-1).

``GET /api/v1/app-conversations/<id>/download`` sends a zip that
``LiveStatusAppConversationService._stream_conversation_zip`` (OpenHands, ``openhands-ai``
1.11.0) writes: ``meta.json`` (the ``AppConversationInfo``) and ``event_{i:06d}_{id}.json``
for each event the agent server sent the app server, at the zip's top. The fixture was written
by that code, on the events of a real ``openhands-sdk`` 1.58.2 conversation, and the same run's
persisted folder is kept beside it (``export_recipe.py`` in the fixture's folder).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

import turnfold
from turnfold.corpus import scan

FOLDER = Path(__file__).parents[1] / "fixtures" / "harnesses" / "openhands-app-export"
CONVERSATION = "851dd3eacc684db8a39251e14f833d6a"
EXPORT = FOLDER / "conversation_851dd3ea-cc68-4db8-a392-51e14f833d6a.zip"
PERSISTED = FOLDER / f"openhands-sdk_v1.58.2_persisted_{CONVERSATION}.tar.gz"


pytestmark = pytest.mark.usefixtures("cache_dir")


def _shown(transcript: turnfold.Transcript) -> list[tuple[str, str | None, str | None]]:
    """What each entry shows: its kind, its text or call, and a call's status."""
    return [
        (type(entry).__name__, getattr(entry, "text", None) or getattr(entry, "name", None),
         getattr(entry, "status", None))
        for entry in transcript.entries
    ]  # fmt: skip


def test_H3_the_app_server_s_export_reads_as_the_conversation_the_sdk_persisted() -> None:
    """The same run, read from the export and from the SDK's own folder: the same prompt,
    reasoning, replies, calls and outcomes, and the same totals (the export's stats are
    running totals: each response's usage is their difference where that is exact)."""
    exported = turnfold.load(EXPORT)
    persisted = turnfold.load(PERSISTED)
    assert exported.warnings == []
    assert exported.accounting is not None
    assert exported.accounting.unaccounted == []
    assert exported.accounting.counts["meta"] == {"mapped": 1}
    assert _shown(exported) == _shown(persisted)
    assert [(c.name, c.description, c.status) for c in exported.tool_calls()] == [
        ("file_editor create", "hello.py", "success"),
        ("terminal", "python3 hello.py", "success"),
        ("terminal", "python3 missing.py", "error"),
    ]
    assert exported.metadata["title"] == "Write hello.py"  # meta.json's; the folder has none
    for key in ("session_id", "model", "cwd", "agent_class", "execution_status", "usage"):
        assert exported.metadata[key] == persisted.metadata[key], key
    assert exported.metadata["usage"]["input_tokens"] == 1000 + 1100 + 1200 + 1300
    assert "cost_usd" not in exported.metadata  # litellm has no price for the scripted model


def test_C1_an_export_is_one_row_keyed_by_its_path_and_its_id_names_it(tmp_path: Path) -> None:
    download = tmp_path / EXPORT.name
    download.write_bytes(EXPORT.read_bytes())
    (row,) = scan(tmp_path, workers=1, cache=False).rows
    assert (row["key"], row["format"]) == (str(download), "openhands")
    assert row["title"] == "Write hello.py that prints hi, and run it."  # the first prompt (C-2)
    assert (row["tool_calls"], row["failed_tools"], row["warnings"]) == (3, 1, 0)
    assert row["input_tokens"] == 4600
    named = turnfold.load(download, sample=CONVERSATION)
    assert named.entries == turnfold.load(download).entries
    with pytest.raises(ValueError, match=f"no session 'nope'; its sessions: {CONVERSATION}"):
        turnfold.load(download, sample="nope")


def test_X1_an_export_s_foreign_and_escaping_members_are_warned_of_never_read(
    tmp_path: Path,
) -> None:
    """A member whose name leaves the archive is refused; a file beside the events that is no
    event is named; the conversation reads as without them."""
    hostile = tmp_path / "hostile.zip"
    with zipfile.ZipFile(EXPORT) as source, zipfile.ZipFile(hostile, "w") as target:
        for info in source.infolist():
            target.writestr(info, source.read(info))
        target.writestr("../event_000099_00000000-0000-0000-0000-000000000000.json", "{}")
        target.writestr("notes.txt", "not an event")
    transcript = turnfold.load(hostile)
    assert [w.reason for w in transcript.warnings] == [
        "member ../event_000099_00000000-0000-0000-0000-000000000000.json: a name outside the "
        "archive, not read",
        f"notes.txt in {hostile}: not an event file, not read",
    ]
    assert transcript.entries == turnfold.load(EXPORT).entries
    assert not (tmp_path.parent / "event_000099_00000000-0000-0000-0000-000000000000.json").exists()
