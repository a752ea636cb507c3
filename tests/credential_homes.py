"""Homes holding agents' credential files beside their sessions, for the tests that a scan never
opens such a file and a load refuses it (spec C-1, C-7, L-4; tests/test_scan_agent_credentials.py,
tests/test_scan_crush_openhands_credentials.py, tests/test_credentials_agents.py,
tests/test_credentials_more.py, tests/test_credentials_cursor_continue.py).

A test plants each tool's files, values made up, at their places under a home (``place``:
``/``-separated, relative to the home), scans in this process (:func:`scan_here`, so conftest's
``opened`` sees every file the scan opens) and asks which of those places it touched
(:func:`touched`); one file named to a scan is said (:func:`said_unopened`), named to a load
refused (:func:`refused_unopened`)."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold import scan
from turnfold.corpus import Corpus
from turnfold.formats.errors import TranscriptFormatError

#: The committed Codex rollout (tests/fixtures/SOURCES.md): the session a home holds.
ROLLOUT = Path(__file__).parent / "fixtures" / "codex_rollout_schema-coverage.jsonl"

#: What writes one credential file at the path it is given.
Maker = Callable[[Path], None]


def written(value: Any) -> Maker:
    """A maker writing ``value``: a ``str`` as it is, anything else as JSON."""
    body = value if isinstance(value, str) else json.dumps(value)

    def write(path: Path) -> None:
        path.write_text(body, "utf-8")

    return write


def indented(value: Any) -> Maker:
    """A maker writing ``value`` as JSON indented as the tools write it
    (``JSON.stringify(v, null, 2)``)."""
    return written(json.dumps(value, indent=2))


def plant(home: Path, makers: Mapping[str, Maker]) -> None:
    """Each maker's file at its place under ``home``, in ``makers``' order (a file may copy one
    made before it)."""
    for place, make in makers.items():
        path = home / place
        path.parent.mkdir(parents=True, exist_ok=True)
        make(path)


def codex_home(root: Path, secrets: Mapping[str, Any] | None) -> Path:
    """``root/me``, whose ``.codex/sessions`` holds :data:`ROLLOUT`, and (unless ``secrets`` is
    None) each of ``secrets``' values written as JSON at its place."""
    home = root / "me"
    sessions = home / ".codex" / "sessions"
    sessions.mkdir(parents=True)
    shutil.copyfile(ROLLOUT, sessions / "rollout-2025-01-01T00-00-00.jsonl")
    if secrets is not None:
        plant(home, {place: written(value) for place, value in secrets.items()})
    return home


def scan_here(source: Any) -> Corpus:
    """``source`` scanned in this process, uncached: every file it reads is opened here."""
    return scan(source, workers=1, cache=False)


def scans_without_and_with(
    root: Path, secrets: Mapping[str, Any], opened: list[str]
) -> tuple[Corpus, Corpus, Path]:
    """Scans of two homes (:func:`codex_home`) under ``root``, alike but for ``secrets``: the
    corpus of the one without them, of the one with them, and that home; ``opened`` (conftest's)
    then holds what the second scan alone opened."""
    return scans_of_homes(
        lambda folder, full: codex_home(folder, secrets if full else None), root, opened
    )


def scans_of_homes(
    home: Callable[[Path, bool], Path], root: Path, *seen: list[str]
) -> tuple[Corpus, Corpus, Path]:
    """As :func:`scans_without_and_with`, of the homes ``home(folder, secrets)`` makes under
    ``root/plain`` (without the secrets) and ``root/full`` (with them): each of ``seen``
    (conftest's ``opened`` and ``connected``) then holds what the second scan alone opened, not
    what made its home."""
    plain = scan_here(home(root / "plain", False))
    full = home(root / "full", True)
    for paths in seen:
        paths.clear()
    return plain, scan_here(full), full


def said_unopened(path: Path, keeper: str) -> None:
    """A scan of ``path`` alone, one of ``keeper``'s credential files, says whose it is and
    finds nothing, counting it as no skipped file either (C-7)."""
    said = rf"^{re.escape(str(path))}: {keeper}'s credentials \(keys, tokens\), never opened$"
    with pytest.warns(UserWarning, match=said):
        corpus = scan_here(path)
    assert (len(corpus), corpus.skipped) == (0, 0)


def refused_unopened(path: Path, keeper: str, token: str) -> None:
    """A load of ``path``, one of ``keeper``'s credential files, is refused whatever format is
    asked for (none, or the keeper's): the error names the file and whose it is, and holds
    none of ``token`` (L-4)."""
    for format in (None, keeper):
        with pytest.raises(TranscriptFormatError) as raised:
            turnfold.load(path, format=format)
        assert str(path) in str(raised.value)
        assert f"{keeper}'s credentials (keys, tokens), never opened" in str(raised.value)
        assert token not in str(raised.value)


def touched(paths: Iterable[str], places: Iterable[str]) -> list[str]:
    """The paths among ``paths`` that are one of ``places``' files: SQLite opens a database by
    its URI (``file:…?mode=ro``), so what follows a ``?`` is no part of the path."""
    endings = tuple(f"{os.sep}{place}".replace("/", os.sep) for place in places)
    return [path for path in paths if path.split("?")[0].endswith(endings)]
