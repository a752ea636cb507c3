"""The static site's index (B-2) as a user searches it: what a QA pass found wrong.

* The index's search read a run's recorded title and first prompt only, so a row whose title
  cell shows other words hid itself when those words were searched: a run with no prompt (its
  title cell is its file's name) and a run that could not be read (its title cell names the
  file and the error) were never found by what the reader saw in them.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from turnfold.model import AssistantText, Transcript
from turnfold.render.site import INDEX, build_site

#: A row of the index: its search text (``data-text``) and its title cell's shown text.
ROW = re.compile(r'<tr data-sort="[^"]*" data-text="([^"]*)".*?<td[^>]*>(?:<a [^>]*>)?'
                 r'<span class="tf-runs-clip">([^<]*)</span>', re.S)  # fmt: skip


def searched_and_shown(site: Path) -> dict[str, str]:
    """Each row's title cell as shown, and the text the index's script searches for it."""
    page = (site / INDEX).read_text("utf-8")
    return {html.unescape(shown): html.unescape(text) for text, shown in ROW.findall(page)}


def test_B2_the_index_finds_a_row_by_the_words_its_title_cell_shows(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "no-prompt.jsonl").write_text(
        Transcript([AssistantText(text="Started on my own.")]).dump(), encoding="utf-8"
    )
    (runs / "broken séance.jsonl").write_text('{"type": "user", "message":', encoding="utf-8")
    out = tmp_path / "site"
    build_site(runs, out, workers=1, progress=False)
    rows = searched_and_shown(out)
    assert len(rows) == 2
    # The script lower-cases what the reader types and looks for it in data-text.
    assert "no-prompt.jsonl" in rows["no-prompt.jsonl"]
    (broken,) = (shown for shown in rows if "broken" in shown)
    assert broken.startswith("⚠ broken séance.jsonl: ")
    assert "broken séance.jsonl" in rows[broken]
    assert "not a transcript" in rows[broken]  # its reason is what the row says too
    for shown, searched in rows.items():
        assert searched == searched.lower(), shown


# --- an unreadable run's tooltip ------------------------------------------------------------------

#: The title cell of a run that could not be read: its tooltip, and its text.
ERROR_CELL = re.compile(r'<td class="tf-tone-error" title="([^"]*)"><span class="tf-runs-clip">'
                        r"([^<]*)</span></td>")  # fmt: skip


def test_B2_X1_an_unreadable_run_s_tooltip_names_its_whole_path_as_text(tmp_path: Path) -> None:
    """The index's title cell of an unreadable run said the file's name and why, and its
    tooltip said the same: which of two files of one name, in which folder, failed was
    nowhere. The tooltip names the whole path (a folder's name is anyone's: text, never
    markup), the cell stays as short as it was."""
    folder = tmp_path / "runs" / '<img src=x onerror="alert(1)"> & co'
    folder.mkdir(parents=True)
    broken = folder / "broken.jsonl"
    broken.write_text('{"type": "user", "message":', encoding="utf-8")
    out = tmp_path / "site"
    build_site(tmp_path / "runs", out, workers=1, progress=False)
    page = (out / INDEX).read_text("utf-8")
    ((tooltip, text),) = ERROR_CELL.findall(page)
    reason = "line 1: not a transcript (invalid JSON: Expecting value (column 28))"
    assert html.unescape(text).startswith(f"⚠ broken.jsonl: {reason}; ")
    assert html.unescape(text).endswith(" formats tried")  # counted in the cell, as it was
    assert html.unescape(tooltip).startswith(f"{broken}: {reason}; formats tried: ")
    assert "<img" not in page
