"""``turnfold render --help`` says what FILE may be (W-6, B-2): a folder, an eval log or a file of
runs makes a site with ``-o SITE/``, which the help's FILE line did not say (it named a
transcript file only, so a reader with a folder of sessions had to find it in the examples)."""

from __future__ import annotations

import os
import re
import subprocess
import sys


def _help(command: str) -> str:
    environment = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "turnfold", command, "--help"], capture_output=True, text=True,
        env=environment, timeout=120, check=True,
    )  # fmt: skip
    return " ".join(done.stdout.split())


def _file_line(text: str) -> str:
    found = re.search(r"positional arguments: FILE (.+?) options:", text)
    assert found is not None, text
    return found.group(1)


def test_W6_render_help_says_a_folder_or_file_of_runs_makes_a_site() -> None:
    line = _file_line(_help("render"))
    assert "a folder, an eval log or a file of runs" in line
    assert "-o SITE/" in line


def test_W6_show_help_names_only_what_show_reads() -> None:
    line = _file_line(_help("show"))
    assert line.startswith("the transcript file to read")
    assert "folder" not in line
