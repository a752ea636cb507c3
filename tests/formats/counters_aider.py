"""Independent tool-call counter for Aider chat histories (issue 13), written from aider's
source apart from the loader: ``aider/io.py`` writes the user's input as ``#### `` lines and its
own output quoted ``> ``; ``aider/coders/editblock_coder.py`` reads SEARCH/REPLACE blocks.

A call is a SEARCH/REPLACE block of a reply (a ``<<<<<<< SEARCH`` line closed by a
``>>>>>>> REPLACE`` line; the copy of a failed block that aider's error message quotes, right
under its ``## SearchReplaceNoExactMatch`` line, is not one), or a ``/run``, ``/test`` or ``!``
command the user typed, or aider's question whether to run a reply's shell block, or an
``Applied edit to X`` line (``Did not apply edit to X`` in a dry run) for a file no block of the
prompt's replies named (edit formats without blocks, ``whole``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

_HEAD = re.compile(r"<{5,9} SEARCH>?\s*$")
_END = re.compile(r">{5,9} REPLACE\s*$")
_COMMAND = re.compile(r"#### (/run|/test|!)\s*\S")
_RUN_QUESTION = re.compile(r"> Run shell commands?\? ")
_APPLIED = re.compile(r"> (?:Applied edit to (.+?)|Did not apply edit to (.+?) \(--dry-run\))\s*$")


def count_aider(path: Path) -> int:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    calls = 0
    quoted_copy = False
    in_block = False
    named: set[str] = set()  # files the blocks since the last prompt edit
    file_name = ""
    for number, line in enumerate(lines):
        if line.startswith("#### "):
            named.clear()
        if _COMMAND.match(line) or _RUN_QUESTION.match(line):
            calls += 1
        if _HEAD.match(line.strip()):
            before = lines[number - 1] if number else ""
            quoted_copy = before.startswith("## SearchReplaceNoExactMatch")
            above = lines[number - 2] if before.startswith("```") and number > 1 else before
            file_name = above.strip()
            in_block = True
        elif in_block and _END.match(line.strip()):
            in_block = False
            if not quoted_copy:
                calls += 1
                named.add(file_name)
        elif applied := _APPLIED.match(line):
            calls += (applied[1] or applied[2]) not in named
    return calls


COUNTERS: dict[str, Callable[[Path], int]] = {"aider": count_aider}
