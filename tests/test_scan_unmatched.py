"""A scan's source that names nothing to read (spec C-1, C-7, L-4): a glob that matches no
file says so, naming the pattern (of several sources, the one that found nothing); a plain
path that does not exist is an error row naming it; the command line says the same of FILE."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pytest

import turnfold
from turnfold.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
SESSION = FIXTURES / "agents" / "claude-stream-json" / (
    "claude-code_v2.1.332_stream-json_tokens-first.jsonl")  # fmt: skip


def _runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(SESSION, runs / "one.jsonl")
    return runs


@pytest.mark.parametrize("pattern", ["nowhere/*.jsonl", "runs/*.json", "runs/**/x*.jsonl"])
def test_C1_a_glob_that_matches_nothing_says_so_naming_the_pattern(
    pattern: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _runs(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning, match="matches this pattern") as caught:
        corpus = turnfold.scan(pattern, cache=False, workers=1)
    assert len(corpus) == 0
    (warning,) = caught.list
    assert str(warning.message) == (
        f"{pattern}: no file or folder matches this pattern; nothing is read from it"
    )
    assert warning.filename == __file__  # the user's own line, not turnfold's


def test_C1_of_several_sources_the_glob_that_matched_nothing_is_named(
    tmp_path: Path,
) -> None:
    runs = _runs(tmp_path)
    empty = str(tmp_path / "other" / "*.jsonl")
    with pytest.warns(UserWarning, match="matches this pattern") as caught:
        corpus = turnfold.scan([str(runs / "*.jsonl"), empty], cache=False, workers=1)
    assert [row["key"] for row in corpus] == [str(runs / "one.jsonl")]
    assert [str(w.message) for w in caught.list] == [
        f"{empty}: no file or folder matches this pattern; nothing is read from it"]  # fmt: skip


def test_C1_a_glob_that_matches_warns_of_nothing(tmp_path: Path) -> None:
    runs = _runs(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        corpus = turnfold.scan(str(runs / "*.jsonl"), cache=False, workers=1)
    assert len(corpus) == 1


def test_C7_a_plain_path_that_does_not_exist_is_an_error_row_naming_it(tmp_path: Path) -> None:
    """Not a pattern: the path is the item, read and failed as any unreadable file is (C-7),
    never dropped; its row names it and says why."""
    missing = str(tmp_path / "nope.jsonl")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        corpus = turnfold.scan([str(_runs(tmp_path) / "one.jsonl"), missing], cache=False,
                               workers=1)  # fmt: skip
    rows = {row["key"]: row["error"] for row in corpus}
    assert rows[missing] is not None
    assert "No such file" in rows[missing]
    assert missing in rows[missing]


@pytest.mark.parametrize("command", [["show"], ["render"], ["render", "-o", "SITE/"]])
def test_W6_a_file_pattern_that_matches_nothing_is_an_error_naming_it(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A shell passes a pattern that matches nothing on as it is: the command says the
    pattern matched nothing, and writes nothing."""
    _runs(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main([command[0], "runs/*.json", *command[1:]]) == 2
    err = capsys.readouterr().err
    assert "turnfold: runs/*.json: no such file" in err
    assert "no file or folder matches it as a pattern" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]


def test_W6_a_quoted_pattern_that_matches_says_it_is_not_expanded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _runs(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["show", "runs/*.jsonl"]) == 2
    assert capsys.readouterr().err.strip() == (
        "turnfold: runs/*.jsonl: no such file; as a pattern it matches 1 path, which this "
        "command does not expand: name one file, or a folder of runs"
    )


def test_W6_a_missing_plain_file_is_still_said_plainly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.jsonl"
    assert main(["show", str(missing)]) == 2
    assert capsys.readouterr().err.strip() == f"turnfold: {missing}: no such file"
