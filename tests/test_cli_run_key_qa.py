"""``FILE#ID`` (one run of a file of many, as a scan keys it) as a user types it: what a QA
pass found wrong.

* A sample whose id holds a ``#`` itself (Inspect takes any string: ``s#3``) could not be named:
  ``log.eval#s#3/1`` was cut at its last ``#``, so the command looked for a file
  ``log.eval#s`` and said there was no such file, in ``show``, ``render`` and ``--compare``
  alike, although the site, the corpus and the error that lists the samples all key it so.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.cli import main

COMPARE = Path(__file__).parent / "fixtures" / "compare-qa"


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The two versions of ``qa_recipe.py``, named as a user names files: a space, a ``#``."""
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path / "cache"))
    pair = (tmp_path / "arith #1 v1.eval", tmp_path / "arith #1 v2.eval")
    for name, target in zip(("qa_v1.eval", "qa_v2.eval"), pair, strict=True):
        shutil.copyfile(COMPARE / name, target)
    return pair


def test_W6_FILE_ID_names_a_sample_whose_id_holds_a_hash(
    logs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    v1, _ = logs
    keys = turnfold.scan(v1, workers=1, cache=False).keys
    assert f"{v1}#s#3/1" in keys  # as the corpus keys it
    assert main(["show", f"{v1}#s#3/1", "--width", "100"]) == 0
    out = capsys.readouterr().out
    assert "What is 5 + 6?" in out
    assert main(["show", f"{v1}#s 2/1", "--width", "100"]) == 0  # and the others still
    assert "What is 3 + 4?" in capsys.readouterr().out


def test_B3_render_compare_of_two_samples_whose_id_holds_a_hash(
    logs: tuple[Path, Path], tmp_path: Path
) -> None:
    v1, v2 = logs
    target = tmp_path / "page.html"
    assert main(["render", "--compare", f"{v1}#s#3/1", f"{v2}#s#3/1", "-o", str(target)]) == 0
    page = target.read_text("utf-8")
    assert "<title>arith #1 v1.eval#s#3/1 vs arith #1 v2.eval#s#3/1</title>" in page
    # The same score, another transcript: v2 looked the answer up first, and that failed.
    assert "nothing remembered for 5 + 6" in page
    # Without -o the page is named for both runs, beside the first file.
    assert main(["render", "--compare", f"{v1}#s#3/1", f"{v2}#s#3/1"]) == 0
    assert (v1.parent / "arith #1 v1-s_3_1-vs-arith #1 v2-s_3_1.html").is_file()
