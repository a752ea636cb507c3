"""``turnfold render … -o FOLDER`` (spec W-6, B-2): a site goes only into a folder that is new,
empty, or one turnfold wrote; a folder of other files is refused, named, with the ``-o`` for
a site of its own and for one page, and nothing is written into it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from turnfold.cli import main
from turnfold.render.site import INDEX, MANIFEST, RUNS

FIXTURES = Path(__file__).parent / "fixtures"
SESSION = FIXTURES / "agents" / "claude-stream-json" / (
    "claude-code_v2.1.332_stream-json_tokens-first.jsonl")  # fmt: skip


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    shutil.copy(SESSION, path)
    return path


def _refused(argv: list[str]) -> object:
    """The exit status of a command line refused as bad usage."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    return exit_.value.code


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("slash", ["", "/"])
def test_W6_a_site_is_not_written_into_a_folder_of_other_files(
    slash: str, session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / INDEX).write_text("<h1>my own page</h1>")
    (docs / "notes.txt").write_text("mine")
    before = _tree(docs)
    assert _refused(["render", str(session), "-o", f"{docs}{slash}"]) == 2
    err = capsys.readouterr().err
    assert f"the folder {docs} holds other files and no site turnfold wrote" in err
    assert f"-o {docs}/session-site/" in err
    assert f"or for one page: -o {docs}/session.html" in err
    assert _tree(docs) == before  # its index.html kept, no runs/ added
    # The page the message offers is written where it says.
    assert main(["render", str(session), "-o", str(docs / "session.html")]) == 0
    assert (docs / "session.html").is_file()
    assert _tree(docs)[INDEX] == before[INDEX]


def test_W6_a_folder_of_runs_is_refused_a_foreign_folder_too(
    session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder of runs has no one page: the message offers a site folder only."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.move(session, runs / "one.jsonl")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("export X=1")
    assert _refused(["render", str(runs), "-o", str(home)]) == 2
    err = capsys.readouterr().err
    assert f"say where, as -o {home}/runs-site/\n" in err
    assert "one page" not in err
    assert sorted(p.name for p in home.iterdir()) == [".bashrc"]


def test_W6_a_site_goes_into_a_new_an_empty_or_its_own_folder(
    session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = tmp_path / "new"
    assert main(["render", str(session), "-o", f"{new}/"]) == 0
    assert (new / INDEX).is_file()
    assert (new / MANIFEST).is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["render", str(session), "-o", str(empty)]) == 0
    assert (empty / INDEX).is_file()
    # Built again over itself: the site turnfold wrote, its manifest says so.
    assert main(["render", str(session), "-o", str(new)]) == 0
    assert "1 unchanged" in capsys.readouterr().err


def test_W6_a_site_whose_first_build_was_cut_short_is_built_again(
    session: Path, tmp_path: Path
) -> None:
    """A build stopped before its manifest (Ctrl-C) leaves only a site's own names: its folder
    is turnfold's, and the next build finishes it."""
    site = tmp_path / "site"
    (site / RUNS).mkdir(parents=True)
    (site / RUNS / "half.html").write_text("<p>half")
    (site / f".{INDEX}.part").write_text("<p>half")
    assert main(["render", str(session), "-o", str(site)]) == 0
    assert (site / MANIFEST).is_file()
