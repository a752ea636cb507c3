"""The static site counts the files it skipped as the scan does (spec B-2, C-7): files no
loader recognises. A sub-agent's file, or another part of a run's session, is read with its
run: the site counted those too (the CLI said "7 files skipped" where ``scan()`` and the
session browser said 2)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.cli import main
from turnfold.render.site import INDEX, build_site

TREE = Path(__file__).parent / "fixtures" / "corpus"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    target = tmp_path / "tree"
    shutil.copytree(TREE, target)
    return target


def test_B2_the_site_skips_what_the_scan_skips_not_sub_agents_files(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = turnfold.scan(tree, workers=1, cache=False)
    files = [path for path in tree.rglob("*") if path.is_file()]
    read_with_a_run = len(files) - len({row["path"] for row in corpus}) - corpus.skipped
    assert read_with_a_run > 0  # the tree holds sub-agents' files: the case that differed
    report = build_site(tree, tmp_path / "site", workers=1, progress=False)
    assert report.skipped == corpus.skipped
    index = (tmp_path / "site" / INDEX).read_text("utf-8")
    line = re.search(r'<p class="tf-site-counts">([^<]*)</p>', index)
    assert line is not None
    assert line.group(1).endswith(f", {corpus.skipped} skipped"), line.group(1)
    again = build_site(tree, tmp_path / "site", workers=1, progress=False)  # from its manifest
    assert (again.written, again.skipped) == (0, corpus.skipped)
    assert main(["render", str(tree), "-o", str(tmp_path / "cli") + "/"]) == 0
    said = capsys.readouterr().err
    assert f"{corpus.skipped} files skipped)" in said, said
