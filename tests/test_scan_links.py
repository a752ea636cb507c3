"""Symbolic links in a scanned folder (spec C-1, C-7, B-2): a scan covers the folder it was
given, as ``find`` and ``rsync`` do by default. A link that leads out of it is not followed
(the static site publishes what the scan reads: a file elsewhere on the machine must not be
published by surprise); it is counted as skipped and the scan warns, naming it. A link that
stays inside is read once, by the name of what it leads to, and a link cycle ends."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

from turnfold import scan
from turnfold.render.site import INDEX, build_site

FIXTURE = Path(__file__).parent / "fixtures" / "codex_rollout_v0.129_two-turns.jsonl"
SECRET = "TF-SECRET-OUTSIDE"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``shared/`` holds a session, ``.hidden/`` one the walk does not enter, ``elsewhere/``
    (outside) one with a word no page may show; links lead to each, and back up."""
    root, elsewhere = tmp_path / "shared", tmp_path / "elsewhere"
    (root / "sub").mkdir(parents=True)
    (root / ".hidden").mkdir()
    (elsewhere / "deep").mkdir(parents=True)
    shutil.copy(FIXTURE, root / "sub" / "mine.jsonl")
    shutil.copy(FIXTURE, root / ".hidden" / "kept.jsonl")
    text = FIXTURE.read_text().replace("two-turns", SECRET)
    (elsewhere / "secret.jsonl").write_text(text)
    (elsewhere / "deep" / "secret.jsonl").write_text(text)
    (root / "leak.jsonl").symlink_to(elsewhere / "secret.jsonl")
    (root / "outdir").symlink_to(elsewhere, target_is_directory=True)
    (root / "relative.jsonl").symlink_to(Path("..") / "elsewhere" / "secret.jsonl")
    (root / "again.jsonl").symlink_to(Path("sub") / "mine.jsonl")
    (root / "alias").symlink_to("sub", target_is_directory=True)
    (root / "shown").symlink_to(".hidden", target_is_directory=True)
    (root / "sub" / "up").symlink_to("..", target_is_directory=True)
    (root / "sub" / "loop").symlink_to("loop")  # a link to itself
    return root


def _scan(source: str | Path) -> tuple[list[str], int, list[str]]:
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        corpus = scan(source, workers=1, cache=False)
    return corpus.keys, corpus.skipped, [str(w.message) for w in said]


MINE, KEPT = Path("sub") / "mine.jsonl", Path("shown") / "kept.jsonl"


@pytest.mark.parametrize(
    ("glob", "read"),
    [
        ("", [MINE, KEPT]),
        # ``**`` enters no link (as pathlib's): the hidden folder's session is no match.
        ("/**", [MINE, KEPT]),  # the folder itself matches, and is walked
        ("/**/*.jsonl", [MINE]),
        ("/*", [MINE, KEPT]),
    ],
)
def test_a_link_out_of_the_folder_is_skipped_and_said(tree: Path, glob: str,
                                                      read: list[Path]) -> None:  # fmt: skip
    keys, skipped, said = _scan(f"{tree}{glob}")
    assert sorted(keys) == sorted(str(tree / path) for path in read)
    # leak.jsonl, relative.jsonl and outdir (met by a walk or by ``**``, or matched by ``*``).
    assert skipped >= 3
    [warning] = [w for w in said if "leading out of the folder" in w]
    assert str(tree / "leak.jsonl") in warning
    assert str(tree / "outdir") in warning


def test_a_link_inside_the_folder_is_read_once_by_its_target_s_name(tree: Path) -> None:
    keys, _, _ = _scan(tree)
    # again.jsonl and alias/ lead to sub/: one row, by sub's name; shown/ leads to a hidden
    # folder the walk would not enter by its own name: read, once, by the link's.
    assert keys == [str(tree / "sub" / "mine.jsonl"), str(tree / "shown" / "kept.jsonl")]


def test_a_folder_reached_through_a_link_is_scanned_when_named(tree: Path) -> None:
    """The user naming the linked folder (or the scanned folder being a link) reads it."""
    keys, skipped, said = _scan(tree / "outdir")
    assert keys == [str(tree / "outdir" / "secret.jsonl"),
                    str(tree / "outdir" / "deep" / "secret.jsonl")]  # fmt: skip
    assert (skipped, [w for w in said if "leading out" in w]) == (0, [])
    keys, _, _ = _scan(tree / "leak.jsonl")
    assert keys == [str(tree / "leak.jsonl")]


def test_the_site_of_a_folder_publishes_nothing_from_outside_it(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    with pytest.warns(UserWarning, match="leading out of the folder"):
        report = build_site(tree, out, progress=False, workers=1)
    # leak.jsonl, relative.jsonl, outdir/, and sub/loop (a file of no session's name).
    assert (report.rows, report.skipped) == (2, 4)
    published = "".join(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())
    assert SECRET not in published
    index = (out / INDEX).read_text()
    assert str(tree / "sub" / "mine.jsonl") in index or "mine.jsonl" in index
