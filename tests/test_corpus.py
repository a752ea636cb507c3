"""The corpus (spec §13): scan sources into rows (C-1, C-2), tables (C-3), cache (C-4), search
(C-6) and bad input (C-7). Worker processes, Dask and table sources: test_corpus_engines.py.

Counts are checked against the widget's own view model (``build_view_model``), never against
numbers written down here, so these tests hold while the loaders change.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import turnfold
from turnfold.corpus import COLUMNS, Corpus, scan
from turnfold.corpus.discover import Item
from turnfold.corpus.index import INDEX_NAME
from turnfold.corpus.summarize import TOOL_CALL_COLUMNS, TURN_COLUMNS
from turnfold.cost import session_cost
from turnfold.formats import resume
from turnfold.model import FAILED_STATUSES, TOOL_STATUSES, ToolCall
from turnfold.process import BatchPiece, _has_failure
from turnfold.render.viewmodel import build_view_model

#: The module, not the function ``turnfold.corpus.summarize`` that shadows it as an attribute.
summarize_module = importlib.import_module("turnfold.corpus.summarize")
FIXTURES = Path(__file__).parent / "fixtures"
TREE = FIXTURES / "corpus"
PARENTS = {
    "claude/projects/-home-dev-shop/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl",
    "claude/projects/-home-dev-shop/ses_stage0_small.jsonl",
    "codex/sessions/2026/05/12/rollout-2026-05-12T09-59-55-a1b2c3d4-e5f6-7890-abcd-ef1234567890.jsonl",
    "gemini/tmp/907f2064/chats/session-2026-01-16T11-01-37b7abef.json",
}
BROKEN = {"broken/empty.jsonl", "broken/garbage.jsonl"}


pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the sample tree the test may change."""
    target = tmp_path / "tree"
    shutil.copytree(TREE, target)
    return target


def _relative(corpus: Corpus, root: Path) -> set[str]:
    return {str(Path(row["key"]).relative_to(root)) for row in corpus}


# --- C-1: sources -------------------------------------------------------------------------------


def test_C1_directory_walk_rows_are_sessions_and_subagent_files_belong_to_their_parent() -> None:
    corpus = scan(TREE, workers=1, cache=False)
    assert _relative(corpus, TREE) == PARENTS | BROKEN
    # README.md (no loader reads Markdown) and settings.json (JSON, but no transcript)
    assert corpus.skipped == 2


def test_C1_a_glob_a_list_of_paths_and_one_file() -> None:
    by_glob = scan(str(TREE / "claude" / "**" / "*.jsonl"), workers=1, cache=False)
    assert _relative(by_glob, TREE) == {p for p in PARENTS if p.startswith("claude/")}
    paths = [TREE / p for p in sorted(PARENTS)]
    listed = scan(paths, workers=1, cache=False)
    assert [row["key"] for row in listed] == [str(p) for p in paths]
    single = scan(paths[0], workers=1, cache=False)
    assert len(single) == 1


def test_C1_an_otlp_file_of_several_conversations_is_a_row_per_conversation(
    tmp_path: Path,
) -> None:
    """An OTLP export of several conversations was one error row ("2 conversations in one
    file"), though ``load(path, sample=<conversation id>)`` reads each: it is a row per
    conversation keyed ``path#<conversation id>``, as an eval log's samples are, the file read
    once; a file of one conversation stays one row keyed by its path."""
    fixture = FIXTURES / "traces" / "otlp" / "genai_openai_weather-agent.jsonl"
    first, second = fixture.read_text(encoding="utf-8").splitlines()
    path = tmp_path / "traces.jsonl"
    path.write_text(f"{first}\n{second.replace('tf-conversation-1', 'tf-conversation-2')}\n")
    corpus = scan(path, workers=1, cache=False)
    rows = list(corpus)
    assert [(r["key"], r["sample"], r["format"], r["error"]) for r in rows] == [
        (f"{path}#tf-conversation-{n}", f"tf-conversation-{n}", "otlp", None) for n in (1, 2)
    ]
    for row in rows:
        loaded = turnfold.load(path, sample=row["sample"])
        assert corpus[row["key"]] == loaded
        assert row["tool_calls"] == len(loaded.tool_calls())
        assert row["warnings"] == len(loaded.warnings)
    assert {hit.key for hit in corpus.search("weather")} <= {r["key"] for r in rows}
    (one,) = scan(fixture, workers=1, cache=False)
    assert (one["key"], one["sample"], one["error"]) == (str(fixture), None, None)


def test_C1_an_aider_history_is_a_row_whether_walked_or_named(tmp_path: Path) -> None:
    """Aider writes its Markdown history as ``.aider.chat.history.md`` in the folder it ran in:
    a walk passed it over as hidden, and a scan of the file itself told formats apart from
    JSON records alone, so neither gave a row (nor an error), though ``load(path)`` reads it."""
    fixture = FIXTURES / "aider" / "aider_0.86.2_edits-commands.md"
    project = tmp_path / "project"
    project.mkdir()
    history = project / ".aider.chat.history.md"
    shutil.copyfile(fixture, history)
    (project / ".aider.input.history").write_text("+hello\n")  # aider's, but no transcript
    expected = turnfold.load(history)
    for source in (tmp_path, history):
        corpus = scan(source, workers=1, cache=False)
        rows = list(corpus)
        assert [(r["key"], r["format"], r["error"]) for r in rows] == [
            (str(history), "aider", None)
        ], source
        assert rows[0]["tool_calls"] == len(expected.tool_calls()) > 0
        assert corpus.skipped == 0
        assert corpus[str(history)].tool_calls() == expected.tool_calls()


def test_C1_the_agents_hidden_folders_are_walked_and_other_hidden_folders_are_not(
    tmp_path: Path,
) -> None:
    """A project (or a home folder) keeps its agents' sessions in hidden folders of theirs,
    ``.gemini/tmp/<project>/chats``, ``.claude/projects``: a walk passed them over as hidden.
    ``.git`` and other hidden folders hold no sessions and stay unwalked."""
    chats = tmp_path / ".gemini" / "tmp" / "project" / "chats"
    chats.mkdir(parents=True)
    session = chats / "session-2026-01-01T00-00-abcd1234.json"
    shutil.copyfile(FIXTURES / "gemini-cli_legacy-json_file-ops.json", session)
    claude = tmp_path / ".claude" / "projects" / "-repo"
    claude.mkdir(parents=True)
    shutil.copyfile(FIXTURES / "claude-code_v1.0.108_inline-sidechains.jsonl", claude / "s.jsonl")
    git = tmp_path / ".git"
    git.mkdir()
    shutil.copyfile(FIXTURES / "qwen-code_chatrecord.jsonl", git / "not-a-session.jsonl")
    rows = list(scan(tmp_path, workers=1, cache=False))
    assert sorted((r["key"], r["format"]) for r in rows) == [
        (str(claude / "s.jsonl"), "claude-code"),
        (str(session), "gemini"),
    ]


def test_C1_a_file_met_twice_is_one_row() -> None:
    """A list naming a file twice, a folder and a file in it, or ``**`` (which matches the
    folders as well as their files) gave a row per meeting: rows of one key, which the corpus
    could open only one of, and files counted as skipped twice."""
    whole = scan(TREE, workers=1, cache=False)
    first = next(iter(whole))["key"]
    for source in ([first, first, str(TREE)], [str(TREE), str(TREE)], f"{TREE}/**"):
        again = scan(source, workers=1, cache=False)
        assert len(again) == len(set(again.keys)) == len(whole), source
        assert again.skipped == whole.skipped, source


def test_C1_a_list_of_transcripts_each_keyed_and_returned_as_it_is() -> None:
    transcripts = [turnfold.load(TREE / p) for p in sorted(PARENTS)]
    corpus = scan(transcripts)
    assert [row["key"] for row in corpus] == [f"#{i}" for i in range(len(transcripts))]
    assert corpus["#1"] is transcripts[1]
    assert [row["format"] for row in corpus] == [t.metadata["source_format"] for t in transcripts]


def test_C1_a_codex_child_thread_is_no_row_but_a_rollout_naming_no_parent_is() -> None:
    folder = TREE / "codex" / "sessions" / "2026" / "05" / "12"
    corpus = scan(folder, workers=1, cache=False)
    assert len(corpus) == 1
    assert "a1b2c3d4" in corpus.keys[0]


def test_C1_unknown_format_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        scan(TREE, format="no-such-format")


# --- C-2: rows ----------------------------------------------------------------------------------


def _tools(children: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool nodes a turn's process shows (not those inside a sub-agent's transcript), a
    scorer's call left out: the view marks it as the scoring's, none of the agent's calls."""
    found: list[dict[str, Any]] = []
    for node in children:
        kind = node["kind"]
        if kind == "group":
            found += _tools(node["children"])
        elif kind == "batch":
            found += _tools(node["rows"])
        elif kind == "summary":
            found += [tool for tool in node["tools"] if not tool.get("scoring")]
        elif kind == "command":
            found.append(node["tool"])
        elif kind == "tool" and not node.get("scoring"):
            found.append(node)
    return found


def _widget_counts(transcript: turnfold.Transcript) -> dict[str, int]:
    view = build_view_model(transcript)
    turns = [n for n in view["nodes"] if n["kind"] == "turn"]
    tools = [t for n in turns if n["process"] for t in _tools(n["process"]["children"])]
    return {
        "turns": len(turns),
        "tool_calls": len(tools),
        "failed_tools": sum(1 for t in tools if t["status"] in ("error", "cancelled")),
        "errors": sum(1 for n in turns for o in n["outside"] if o["kind"] == "error")
        + sum(1 for n in view["nodes"] if n["kind"] == "system" and n["level"] == "error"),
    }


def test_C2_columns_exactly_in_order() -> None:
    corpus = scan(TREE, workers=1, cache=False)
    assert corpus.to_arrow().column_names == list(COLUMNS)
    assert all(list(row) == list(COLUMNS) for row in corpus)
    # The spec's columns (C-2) in its order, then why a row with tokens has no cost (U-2).
    assert COLUMNS == (
        "key", "path", "sample", "format", "agent", "title", "model", "started", "ended",
        "duration_s", "turns", "tool_calls", "failed_tools", "errors", "subagents",
        "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd",
        "outcome", "score", "warnings", "error", "no_cost",
    )  # fmt: skip


def test_C2_counts_equal_what_the_items_widget_shows() -> None:
    corpus = scan(TREE, workers=1, cache=False)
    checked = 0
    for row in corpus:
        if row["error"] is not None:
            continue
        transcript = corpus[row["key"]]
        shown = _widget_counts(transcript)
        assert {name: row[name] for name in shown} == shown, row["key"]
        assert row["warnings"] == len(transcript.warnings)
        checked += 1
    assert checked == len(PARENTS)


def test_C2_failed_tools_use_the_projections_definition_of_a_failure() -> None:
    for status in TOOL_STATUSES:
        piece = BatchPiece("k", (ToolCall(call_id="c", name="Bash", status=status),), (), None,
                           None, False)  # fmt: skip
        assert _has_failure([piece]) == (status in FAILED_STATUSES), status


def test_C2_title_is_the_first_prompt_on_one_line_cut_at_120() -> None:
    long = "Fix   the\nparser " + "x" * 200
    corpus = scan([turnfold.load([{"role": "user", "content": long},
                                  {"role": "assistant", "content": "done"}])])  # fmt: skip
    (row,) = corpus.rows
    assert row["title"].startswith("Fix the parser x")
    assert "\n" not in row["title"]
    assert len(row["title"]) == 120
    assert row["title"].endswith("…")


def test_C2_times_are_utc_and_missing_values_are_null() -> None:
    corpus = scan(TREE, workers=1, cache=False)
    for row in corpus:
        if row["error"] is not None:
            assert all(row[c] is None for c in COLUMNS if c not in ("key", "path", "error"))
            continue
        assert row["started"].utcoffset().total_seconds() == 0
        assert row["started"] <= row["ended"]
        assert row["duration_s"] == pytest.approx((row["ended"] - row["started"]).total_seconds())
        # The header's cost (turnfold.cost): estimated where a known model spent tokens,
        # else null, never guessed.
        assert row["cost_usd"] == (
            c.usd if (c := session_cost(corpus[row["key"]], row["started"])) else None
        )


def test_C2_getitem_loads_the_item_on_demand_and_unknown_keys_raise() -> None:
    corpus = scan(TREE, workers=1, cache=False)
    key = next(row["key"] for row in corpus if row["error"] is None)
    assert corpus[key] == turnfold.load(key)
    assert key in corpus
    with pytest.raises(KeyError):
        corpus["no/such/key.jsonl"]


def test_C2_summarize_is_picklable_and_names_files_a_scan_leaves_out() -> None:
    import pickle

    assert pickle.loads(pickle.dumps(summarize_module.summarize)) is summarize_module.summarize
    child = TREE / "claude/projects/-home-dev-shop/agent-d4e5f6.jsonl"
    row = summarize_module.summarize(Item(key=str(child), path=str(child)))
    assert list(row) == list(COLUMNS)
    assert "sub-agent" in row["error"]


# --- C-3: tables --------------------------------------------------------------------------------


def test_C3_tool_calls_and_turns_tables_agree_with_the_rows(tmp_path: Path) -> None:
    corpus = scan(TREE, workers=1, cache=False)
    calls, turns = corpus.tool_calls(), corpus.turns()
    assert calls.column_names == list(TOOL_CALL_COLUMNS)
    assert turns.column_names == list(TURN_COLUMNS)
    frame = corpus.to_pandas()
    assert calls.num_rows == frame["tool_calls"].sum()
    assert turns.num_rows == frame["turns"].sum()
    failing = pa.array(sorted(FAILED_STATUSES))
    failed = calls.filter(pa.compute.is_in(calls.column("status"), failing))
    assert failed.num_rows == frame["failed_tools"].sum()
    written = corpus.write_parquet(tmp_path / "out")
    assert sorted(written) == ["sessions", "tool_calls", "turns"]
    assert pq.read_table(written["sessions"]).equals(corpus.to_arrow())
    assert pq.read_table(written["tool_calls"]).num_rows == calls.num_rows
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(NotADirectoryError, match=r"notes\.txt is a file: write_parquet\(\)"):
        corpus.write_parquet(tmp_path / "notes.txt")  # was "[Errno 17] File exists"
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_C3_polars_and_a_clear_error_naming_the_extra_when_it_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    corpus = scan(TREE, workers=1, cache=False)
    polars = pytest.importorskip("polars")
    frame = corpus.to_polars()
    assert isinstance(frame, polars.DataFrame)
    assert frame.columns == list(COLUMNS)
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "polars" else real(name, *a))  # fmt: skip
    with pytest.raises(ImportError, match=r"turnfold\[polars\]"):
        corpus.to_polars()


# --- display ------------------------------------------------------------------------------------


def test_C7_repr_and_html_table_say_rows_errors_and_skipped() -> None:
    corpus = scan(TREE, workers=1, cache=False)
    assert repr(corpus) == "<Corpus: 6 rows, 2 errors, 2 skipped>"
    page = corpus._repr_html_()
    assert "6 rows, 2 errors, 2 skipped" in page
    assert page.count("<tr>") == 1 + len(corpus)
    assert page == corpus._repr_html_()  # deterministic


def test_C2_html_shows_the_first_50_rows_and_how_many_more() -> None:
    sample = turnfold.load([{"role": "user", "content": "hi"}])
    corpus = scan([sample] * 60)
    page = corpus._repr_html_()
    assert page.count("<tr>") == 1 + 50
    assert "10 more rows" in page


# --- C-7: bad input -----------------------------------------------------------------------------


def test_C7_unreadable_and_empty_items_are_rows_with_their_error() -> None:
    corpus = scan(TREE / "broken", workers=1, cache=False)
    errors = {Path(row["key"]).name: row["error"] for row in corpus}
    empty, garbage = TREE / "broken" / "empty.jsonl", TREE / "broken" / "garbage.jsonl"
    # The error load(path) raises, which names the file (tests/test_corpus_errors_agree.py).
    assert errors["empty.jsonl"].startswith(f"{empty}: not a transcript (the source is empty); ")
    assert errors["garbage.jsonl"].startswith(f"{garbage}, line 1: not a transcript (invalid JSON")
    assert corpus.errors == 2


def test_C1_a_linked_folder_is_walked_once_and_a_link_back_up_ends(tmp_path: Path) -> None:
    """Sessions kept on another disk and linked into the scanned folder are not read (a scan,
    and the site it publishes, covers the folder it was given: tests/test_scan_links.py), but
    never left out without a word: skipped, and the scan says where the link leads; a link
    back up the tree is not walked again."""
    fixture = FIXTURES / "codex_rollout_v0.129_two-turns.jsonl"
    root, elsewhere = tmp_path / "sessions", tmp_path / "elsewhere"
    (root / "a").mkdir(parents=True)
    elsewhere.mkdir()
    shutil.copy(fixture, root / "a" / "one.jsonl")
    shutil.copy(fixture, elsewhere / "two.jsonl")
    (root / "b").symlink_to(elsewhere, target_is_directory=True)
    (root / "a" / "up").symlink_to(root, target_is_directory=True)
    with pytest.warns(UserWarning, match="skipped a link leading out of the folder"):
        corpus = scan(root, workers=1, cache=False)
    assert corpus.keys == [str(root / "a" / "one.jsonl")]
    assert corpus.skipped == 1
    assert scan(root / "b", workers=1, cache=False).keys == [str(root / "b" / "two.jsonl")]


def test_C7_a_count_past_64_bits_is_null_in_the_table_and_said(tmp_path: Path) -> None:
    """Arrow's int64 cannot hold a broken record's 10**30 tokens (the scan raised OverflowError):
    that cell is null, a warning names the row and column, and the other counts stay."""
    from turnfold.model import AssistantText, Usage, UserMessage

    answer = AssistantText(text="hi", usage=Usage(input_tokens=10**30, output_tokens=7))
    transcript = turnfold.Transcript([UserMessage(text="q"), answer])
    with pytest.warns(UserWarning, match=r"#0: input_tokens past 64 bits, null in the table"):
        (row,) = scan([transcript])
    assert row["input_tokens"] is None
    assert row["output_tokens"] == 7
    path = tmp_path / "session.jsonl"  # a file's rows are packed by the worker that reads it
    path.write_text(transcript.dump())
    with pytest.warns(UserWarning, match=r"session\.jsonl: input_tokens past 64 bits"):
        (row,) = scan(path, workers=1)
    assert (row["input_tokens"], row["output_tokens"]) == (None, 7)


def test_C1_any_iterable_of_paths_scans_and_anything_else_is_a_clear_type_error(
    tmp_path: Path,
) -> None:
    for name in ("a.jsonl", "b.jsonl"):
        shutil.copy(FIXTURES / "codex_rollout_v0.129_two-turns.jsonl", tmp_path / name)
    corpus = scan(tmp_path.glob("*.jsonl"), workers=1, cache=False)  # a generator of paths
    assert sorted(Path(row["key"]).name for row in corpus) == ["a.jsonl", "b.jsonl"]
    with pytest.raises(TypeError, match=r"scan\(\) takes a folder, .*; got int$"):
        scan(123)
    with pytest.raises(TypeError, match=r"; got NoneType among them$"):
        scan([tmp_path / "a.jsonl", None])


def test_C7_a_file_whose_name_is_not_utf8_is_skipped_by_name(tmp_path: Path) -> None:
    """Linux allows any bytes in a name; Python holds the undecodable ones as lone surrogates,
    which neither the index nor an Arrow table can store: the file is skipped and named in a
    warning that points at the scan's line, and the rest of the folder is read."""
    fixture = (FIXTURES / "codex_rollout_v0.129_two-turns.jsonl").read_bytes()
    (tmp_path / "ok.jsonl").write_bytes(fixture)
    try:
        with open(os.fsencode(tmp_path) + b"/caf\xe9.jsonl", "wb") as odd:
            odd.write(fixture)
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    said = r"caf\\xe9\.jsonl: skipped, its name is not UTF-8"
    with pytest.warns(UserWarning, match=said) as seen:
        corpus = scan(tmp_path, workers=1)
    assert seen[0].filename == __file__
    assert [Path(row["key"]).name for row in corpus] == ["ok.jsonl"]
    assert corpus.skipped == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_C7_a_named_pipe_is_skipped_unopened_and_a_broken_link_is_an_error_row(
    tmp_path: Path,
) -> None:
    """Opening a pipe waits for a writer that may never come: a scan passes it over (found by
    a walk, a glob or its own name) instead of hanging; a glob's broken link is a row that says
    why it could not be read, not left out silently."""
    shutil.copy(FIXTURES / "codex_rollout_v0.129_two-turns.jsonl", tmp_path / "good.jsonl")
    os.mkfifo(tmp_path / "pipe.jsonl")
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    for source in (tmp_path, str(tmp_path / "*.jsonl"), [tmp_path / "pipe.jsonl",
                                                         tmp_path / "good.jsonl"]):  # fmt: skip
        corpus = scan(source, workers=1, cache=False)
        rows = {Path(row["key"]).name: row["error"] for row in corpus}
        assert "pipe.jsonl" not in rows
        assert rows["good.jsonl"] is None
        assert corpus.skipped == 1
        if not isinstance(source, list):
            assert "No such file" in rows["gone.jsonl"]


def test_C7_a_loader_that_raises_is_a_row_not_an_aborted_scan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(path: Any, format: str | None = None) -> turnfold.Transcript:
        raise RuntimeError("loader bug")

    monkeypatch.setattr(summarize_module, "load", broken)
    monkeypatch.setattr(summarize_module, "read_source", broken)  # a file opened to detect it
    corpus = scan(TREE, workers=1, cache=False)
    assert len(corpus) == len(PARENTS | BROKEN)
    loaded = [row for row in corpus if Path(row["key"]).name not in {"empty.jsonl",
                                                                     "garbage.jsonl"}]  # fmt: skip
    assert all(row["error"] == "RuntimeError: loader bug" for row in loaded)
    assert all(row["format"] is not None for row in loaded)  # detection still said what it was


# --- C-4: cache ---------------------------------------------------------------------------------


class _Reads:
    """Counts every session file a scan opens or loads in this process."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened: list[str] = []
        self.loaded: list[str] = []
        real_open, real_load = summarize_module.open_source, summarize_module.load
        real_read = summarize_module.read_source

        def open_source(source: Any) -> Any:
            self.opened.append(str(source))
            return real_open(source)

        def load(source: Any, format: str | None = None, **pick: Any) -> turnfold.Transcript:
            self.loaded.append(str(source))
            return real_load(source, format=format, **pick)

        def read_source(source: Any, format: str | None = None) -> turnfold.Transcript:
            self.loaded.append(source.name)  # a file read on from the records that named it
            return real_read(source, format)

        #: Files read as growing (C-4), with the offset each was read on from (None: whole).
        self.growing: list[tuple[str, int | None]] = []
        real_growing = resume.read_growing

        def read_growing(path: Path, format: str, checkpoint: Any = None) -> Any:
            self.growing.append((str(path), checkpoint.offset if checkpoint else None))
            return real_growing(path, format, checkpoint)

        monkeypatch.setattr(summarize_module, "open_source", open_source)
        monkeypatch.setattr(summarize_module, "load", load)
        monkeypatch.setattr(summarize_module, "read_source", read_source)
        monkeypatch.setattr(resume, "read_growing", read_growing)

    @property
    def count(self) -> int:
        return len(self.opened) + len(self.loaded) + len(self.growing)


def test_C4_unchanged_rescan_reads_no_session_file(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = scan(tree, workers=1)
    reads = _Reads(monkeypatch)

    def made(summaries: list[Any]) -> list[Any]:  # rows come as the index keeps them
        raise AssertionError(f"{len(summaries)} files' batches made again")

    monkeypatch.setattr("turnfold.corpus.tables.summaries_batches", made)
    again = scan(tree, workers=1)
    assert reads.count == 0
    assert (again.read, again.cached) == (0, first.read)
    assert again.to_arrow().equals(first.to_arrow())
    assert again.tool_calls().equals(first.tool_calls())
    assert again.turns().equals(first.turns())
    assert again.skipped == first.skipped


def test_C4_files_converted_together_are_stored_each_alone(tree: Path, cache_dir: Path) -> None:
    """A scan converts many files' rows at once (one Arrow conversion per table), then stores
    each file's own slice: the index holds every file's rows and nothing of the others'."""
    from turnfold.corpus.tables import batch_of, decode, encode, schema

    corpus = scan(tree, workers=1)
    assert len(corpus) > 3
    with sqlite3.connect(cache_dir / INDEX_NAME) as db:
        entries = db.execute(
            "SELECT key, rows, tool_calls, turns FROM files WHERE kind = 'rows'"
        ).fetchall()
    assert len(entries) == len(corpus)
    empty = 0
    for key, *blobs in entries:
        for blob, columns in zip(blobs, (COLUMNS, TOOL_CALL_COLUMNS, TURN_COLUMNS), strict=True):
            batch = decode(blob, schema(columns))
            assert {k.split("#")[0] for k in batch.column("key").to_pylist()} <= {key}
            if not batch.num_rows:
                # An empty slice would carry the buffers of every file converted with it.
                assert len(blob) == len(encode(batch_of([], schema(columns))))
                empty += 1
    assert empty  # the sample tree has sessions without tool calls
    keyed = {key: decode(rows, schema(COLUMNS)).to_pylist() for key, rows, *_ in entries}
    assert [keyed[row["key"]] for row in corpus] == [[row] for row in corpus]


def _append_prompt(session: Path, text: str) -> None:
    """The agent writes on: one more user line after the session's last."""
    last = json.loads(session.read_text().splitlines()[-1])
    record = {**last, "uuid": f"f0000000-0000-4000-8000-{len(text):012d}",
              "parentUuid": last["uuid"], "type": "user",
              "message": {"role": "user", "content": text}}  # fmt: skip
    with session.open("a") as out:
        out.write(json.dumps(record) + "\n")


def test_C4_a_grown_file_is_read_alone_then_on_from_its_last_complete_line(
    tree: Path, monkeypatch: pytest.MonkeyPatch, cache_dir: Path
) -> None:
    scan(tree, workers=1)
    grown = tree / "claude/projects/-home-dev-shop/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    _append_prompt(grown, "and one more thing")
    reads = _Reads(monkeypatch)
    again = scan(tree, workers=1)
    # The first growth seen: that file alone, read whole and checkpointed at its last line.
    assert reads.growing == [(str(grown), None)]
    assert (reads.loaded, again.read) == ([], 1)
    assert again[str(grown)] == turnfold.load(grown)
    size = grown.stat().st_size
    _append_prompt(grown, "and the tests, please")
    third = scan(tree, workers=1)
    assert reads.growing[1:] == [(str(grown), size)]  # read on from where it stood
    fresh = scan(tree, workers=1, cache=False)
    for name in ("to_arrow", "tool_calls", "turns"):
        assert getattr(third, name)().equals(getattr(fresh, name)()), name
    with sqlite3.connect(cache_dir / INDEX_NAME) as db:
        assert db.execute("SELECT count(*) FROM checkpoints").fetchone() == (1,)
    scan(tree, workers=1)  # unchanged: the agent stopped, its checkpoint is forgotten
    with sqlite3.connect(cache_dir / INDEX_NAME) as db:
        assert db.execute("SELECT count(*) FROM checkpoints").fetchone() == (0,)


#: Sessions whose sub-agents run in files of their own, each as its agent lays them out: the
#: session file, the folder of its sub-agents' files, and one sub-agent's file.
SUBAGENT_LAYOUTS = {
    "claude-code v2.1": (
        "claude-code/v2.1_progress-and-subagent-file.jsonl",
        "claude-code/v2.1_progress-and-subagent-file",
        "subagents/agent-ab12cd34ef56ab78c.jsonl",
    ),
    "claude-code workflow": (
        "claude-code/v2.1.332_workflow/11111111-2222-3333-4444-666666666666.jsonl",
        "claude-code/v2.1.332_workflow/11111111-2222-3333-4444-666666666666",
        "subagents/workflows/wf_306ba340-b64/agent-a3454888b50a34f18.jsonl",
    ),
    "qwen": (
        "qwen/background-agent/chats/62c225bc-6b43-451c-baad-3eaede03a4f2.jsonl",
        "qwen/background-agent/subagents",
        "62c225bc-6b43-451c-baad-3eaede03a4f2/"
        "agent-general-purpose-call_3_1796160830575880678.jsonl",
    ),
    "cursor": (
        "cursor/3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13/3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13.jsonl",
        "cursor/3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13/subagents",
        "b7e2d4f0-5c1a-4e93-8f60-2a9d1c3e4b57.jsonl",
    ),
}


def _copy_layout(layout: str, root: Path) -> tuple[Path, Path]:
    """The session and its sub-agents' folder of ``layout``, copied under ``root`` (a new
    folder: the test's own holds the index); the session's file and the sub-agent's."""
    session_name, folder_name, child_name = SUBAGENT_LAYOUTS[layout]
    session = root / Path(session_name).relative_to(Path(session_name).parts[0])
    folder = root / Path(folder_name).relative_to(Path(folder_name).parts[0])
    session.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURES / session_name, session)
    shutil.copytree(FIXTURES / folder_name, folder, dirs_exist_ok=True)
    return session, folder / child_name


@pytest.mark.parametrize("layout", list(SUBAGENT_LAYOUTS))
def test_C1_a_subagents_file_is_no_row_of_its_own_in_every_layout(
    layout: str, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    session, _ = _copy_layout(layout, runs)
    corpus = scan(runs, workers=1, cache=False)
    assert corpus.keys == [str(session)]
    assert (corpus.skipped, corpus.errors) == (0, 0)


@pytest.mark.parametrize("layout", ["claude-code workflow", "qwen", "cursor"])
def test_C1_a_subagents_file_whose_session_is_gone_is_a_row(layout: str, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    session, child = _copy_layout(layout, runs)
    session.unlink()  # no session to nest it in: the sub-agent's run is shown on its own
    assert str(child) in scan(runs, workers=1, cache=False).keys


def test_C4_a_subagents_file_names_its_session_in_every_format() -> None:
    """The pattern a sub-agent's file gives for its session (read again when the file
    changes) matches that session's file and no other file of the tree."""
    from fnmatch import fnmatchcase

    from turnfold.corpus.discover import session_of
    from turnfold.formats.source import open_source

    claude = TREE / "claude/projects/-home-dev-shop"
    claude_session = claude / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    codex = TREE / "codex/sessions/2026/05/12"
    chats = TREE / "gemini/tmp/907f2064/chats"
    cases = {  # a sub-agent's file: its format, its session's file
        claude / "agent-d4e5f6.jsonl": ("claude-code", claude_session),
        claude_session.with_suffix("") / "subagents/agent-a1b2c3.jsonl": (
            "claude-code", claude_session),
        codex / "rollout-2026-05-12T10-00-01-b2c3d4e5-f6a7-8901-bcde-f12345678901.jsonl": (
            "codex",
            codex / "rollout-2026-05-12T09-59-55-a1b2c3d4-e5f6-7890-abcd-ef1234567890.jsonl"),
        chats / "37b7abef-713d-4522-85f0-8ff15a4e6d17/c0ffee00.json": (
            "gemini", chats / "session-2026-01-16T11-01-37b7abef.json"),
    }  # fmt: skip
    files = [str(p) for p in TREE.rglob("*") if p.is_file()]
    for child, (format, session) in cases.items():
        source, stream = open_source(child)
        try:
            pattern = session_of(child, format, source.head_values())
        finally:
            if stream is not None:
                stream.close()
        assert pattern is not None, child
        assert [f for f in files if fnmatchcase(f, pattern)] == [str(session)], child


#: The layouts whose session's row counts its sub-agents' tokens (Cursor records none).
COUNTED = [layout for layout in SUBAGENT_LAYOUTS if layout != "cursor"]


@pytest.mark.parametrize("layout", COUNTED)
def test_C4_a_changed_subagent_file_reads_its_session_again(
    layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    session, child = _copy_layout(layout, runs)
    # The sub-agent has done half its work when the session is scanned: then its file grows,
    # and the session's does not (it waits for its sub-agent).
    lines = child.read_bytes().splitlines(keepends=True)
    child.write_bytes(b"".join(lines[: len(lines) // 2]))
    first = scan(runs, workers=1)
    child.write_bytes(b"".join(lines))
    reads = _Reads(monkeypatch)
    again = scan(runs, workers=1)
    assert (again.read, again.cached) == (2, first.read - 2)  # the sub-agent's file, its session
    assert sorted(reads.opened) == sorted([str(child), str(session)])
    fresh = scan(runs, workers=1, cache=False)
    assert not fresh.to_arrow().equals(first.to_arrow())  # the row counts the sub-agent's work
    for name in ("to_arrow", "tool_calls", "turns"):
        assert getattr(again, name)().equals(getattr(fresh, name)()), name
    assert (again.errors, again.skipped) == (0, 0)
    assert scan(runs, workers=1).read == 0  # and kept: the next rescan reads nothing


def test_C4_a_changed_subagent_file_reads_its_session_again_under_a_relative_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, child = _copy_layout("claude-code v2.1", tmp_path / "runs")
    monkeypatch.chdir(tmp_path)  # scanned as "runs": items, and so patterns, are relative
    lines = child.read_bytes().splitlines(keepends=True)
    child.write_bytes(b"".join(lines[: len(lines) // 2]))
    first = scan("runs", workers=1)
    child.write_bytes(b"".join(lines))
    again = scan("runs", workers=1)
    assert (again.read, again.cached) == (2, first.read - 2)
    assert again.to_arrow().equals(scan("runs", workers=1, cache=False).to_arrow())


@pytest.mark.parametrize("layout", COUNTED)
def test_C4_a_deleted_subagent_file_reads_its_session_again(
    layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    session, child = _copy_layout(layout, runs)
    first = scan(runs, workers=1)
    child.unlink()
    reads = _Reads(monkeypatch)
    again = scan(runs, workers=1)
    assert reads.opened == [str(session)]  # the session alone: its sub-agent's file is gone
    fresh = scan(runs, workers=1, cache=False)
    assert not fresh.to_arrow().equals(first.to_arrow())
    for name in ("to_arrow", "tool_calls", "turns"):
        assert getattr(again, name)().equals(getattr(fresh, name)()), name
    assert scan(runs, workers=1).read == 0


def test_C4_a_deleted_file_leaves_the_corpus_and_the_index(tree: Path, cache_dir: Path) -> None:
    first = scan(tree, workers=1)
    gone = tree / "claude/projects/-home-dev-shop/ses_stage0_small.jsonl"
    gone.unlink()
    again = scan(tree, workers=1)
    assert str(gone) not in again
    assert len(again) == len(first) - 1
    with sqlite3.connect(cache_dir / INDEX_NAME) as db:
        paths = {p for (p,) in db.execute("SELECT path FROM files")}
    assert str(gone.resolve()) not in paths
    assert str(gone) not in paths


def test_C4_a_new_version_or_format_or_cache_false_reads_again(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scan(tree, workers=1)
    reads = _Reads(monkeypatch)
    candidates = [p for p in tree.rglob("*") if p.suffix in (".json", ".jsonl")]
    assert scan(tree, workers=1, cache=False).read == len(candidates)
    assert reads.count > 0
    import turnfold.corpus.index as index_module

    monkeypatch.setattr(index_module, "_version", lambda: "99.0")
    assert scan(tree, workers=1).cached == 0


def test_C4_a_development_version_s_key_changes_with_its_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between releases the version stays 0.1.0.devN while the readers change: rows an index
    # kept under the version alone were the old readers' (stale tokens, outcomes…).
    import turnfold
    import turnfold.caches as caches

    package = tmp_path / "turnfold"
    (package / "formats").mkdir(parents=True)
    (package / "caches.py").write_text("")
    reader = package / "formats" / "reader.py"
    reader.write_text("A = 1\n")
    monkeypatch.setattr(caches, "__file__", str(package / "caches.py"))
    for version, changes in (("0.1.0.dev0", True), ("0.1.0", False)):
        monkeypatch.setattr(turnfold, "__version__", version)
        caches.code_version.cache_clear()
        before = caches.code_version()
        reader.write_text("A = 22\n")  # a reader changed under the same version
        caches.code_version.cache_clear()
        assert (caches.code_version() != before) is changes
        assert caches.code_version().startswith(version)
    caches.code_version.cache_clear()


#: A scan in a process of its own that waits, once imported, for the test's word to start.
SCAN_ON_CUE = """\
import sys
import turnfold
import turnfold.corpus.index as index

index._version = lambda: sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()
print(len(turnfold.scan(sys.argv[1], workers=1)))"""


def test_C4_two_scans_at_once_leave_a_sound_index(
    tree: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three scans open and fill a new index together. They start on a cue once all three are
    imported: started one after the other, on a loaded machine they need not overlap at all.
    They and the last scan key the index by one version: in a checkout, the version is a digest
    of turnfold's modules (``caches.code_version``), and a module saved meanwhile made the last
    scan read every file again."""
    import turnfold.corpus.index as index_module

    version = index_module._version()
    monkeypatch.setattr(index_module, "_version", lambda: version)
    runs = [subprocess.Popen([sys.executable, "-c", SCAN_ON_CUE, str(tree), version],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for _ in range(3)]  # fmt: skip
    stuck = [threading.Timer(120, run.kill) for run in runs]  # none waits for its cue forever
    for timer in stuck:
        timer.start()
    try:
        for run in runs:
            assert run.stdout is not None
            assert run.stdout.readline() == "ready\n"
    finally:
        for timer in stuck:
            timer.cancel()
    for run in runs:  # the cue to all three before any is waited for
        assert run.stdin is not None
        run.stdin.write("go\n")
        run.stdin.flush()
    outputs = [run.communicate(timeout=120)[0].strip() for run in runs]
    assert all(run.returncode == 0 for run in runs)
    assert set(outputs) == {str(len(PARENTS | BROKEN))}
    with sqlite3.connect(cache_dir / INDEX_NAME) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert scan(tree, workers=1).read == 0


# --- C-6: search --------------------------------------------------------------------------------


def test_C6_search_returns_hits_with_key_turn_entry_and_snippet() -> None:
    corpus = scan(TREE, workers=1, cache=False)
    hits = corpus.search("readme")
    assert hits
    for hit in hits:
        entry = _searched_entry(corpus[hit.key], hit.entry_id)
        assert entry is not None
        assert "readme" in hit.snippet.lower()
        assert hit.turn is None or hit.turn >= 1
    assert len({(h.key, h.entry_id) for h in hits}) == len(hits)


def _searched_entry(transcript: turnfold.Transcript, entry_id: str) -> object:
    """The entry a hit names: an entry of a sub-agent's transcript by its key in the view, the
    spawning call's id, then its own (``e1/e2``)."""
    head, _, inner = entry_id.partition("/")
    entry = transcript.get(head)
    if not inner:
        return entry
    assert isinstance(entry, ToolCall)
    assert entry.subagent is not None
    assert entry.subagent.transcript is not None
    return _searched_entry(entry.subagent.transcript, inner)


def test_C6_search_stops_at_the_limit_and_takes_regular_expressions() -> None:
    corpus = scan(TREE, workers=1, cache=False)
    every = corpus.search("e", limit=1000)
    assert len(every) > 3
    assert corpus.search("e", limit=3) == every[:3]
    assert corpus.search(r"READ\w+\.md", regex=True) == corpus.search("readme.md")
    assert corpus.search("no such text anywhere 4b8e") == []
    with pytest.raises(ValueError, match=r"'\(' is no regular expression: missing \)"):
        corpus.search("(", regex=True)
    with pytest.raises(ValueError, match="the query is empty"):
        corpus.search("")  # would match every message
    with pytest.raises(TypeError, match="looks for a str, not NoneType"):
        corpus.search(None)  # type: ignore[arg-type]
    assert corpus.search("e", limit=0) == []
    for limit in (-1, "3", 2.5):  # a negative limit returned nothing, a string failed inside
        with pytest.raises(ValueError, match=f"a limit of 0 or more hits, not {limit!r}"):
            corpus.search("e", limit=limit)  # type: ignore[arg-type]


@pytest.mark.parametrize("workers", [0, -2, "2", 1.5, True])
def test_C5_a_worker_count_that_is_no_count_of_processes_is_refused(workers: Any) -> None:
    """Before, 0 and -2 ran in this process and "2" failed inside the pool."""
    with pytest.raises(ValueError, match=r"scan\(\) takes workers=1 or more .* not "):
        scan(TREE, workers=workers, cache=False)


def test_C2_a_position_given_for_a_key_says_how_a_corpus_is_read() -> None:
    corpus = scan(TREE, workers=1, cache=False)
    with pytest.raises(KeyError, match=r"read by key .*the row there is '.*"):
        corpus[0]  # type: ignore[index]
    with pytest.raises(KeyError, match=r"^'no such key'$"):
        corpus["no such key"]


def test_C4_an_index_another_scan_is_creating_is_waited_for_not_refused() -> None:
    """SQLite refuses the switch to WAL at once while another connection opens a new index
    (seen in CI with three scans started together): the switch is retried, other errors not."""
    from turnfold.corpus import index

    class Busy:
        def __init__(self, refusals: int, message: str = "database is locked") -> None:
            self.refusals, self.message, self.calls = refusals, message, 0

        def execute(self, sql: str) -> None:
            self.calls += 1
            if self.calls <= self.refusals:
                raise sqlite3.OperationalError(self.message)

    busy = Busy(3)
    index._write_ahead(busy)  # type: ignore[arg-type]
    assert busy.calls == 4
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        index._write_ahead(Busy(1, "disk I/O error"))  # type: ignore[arg-type]


def test_C1_a_claude_workflow_run_s_agents_and_journal_belong_to_the_session(
    tmp_path: Path,
) -> None:
    """Claude Code's Workflow tool runs its agents in ``<session>/subagents/workflows/<runId>/``
    (``agent-<id>.jsonl``, ``.meta.json`` with ``agentType: workflow-subagent``, and the run's
    ``journal.jsonl`` of ``started`` / ``result`` records; shapes of daaain/claude-code-log's
    ``test/test_data/workflow_scriptpath``). The session's loader nests every run of the
    session, even one no Workflow call names (as here): the files are the session's, not rows
    (more in ``tests/formats/test_claude_code_workflows.py``)."""
    session = "22220000-0000-4000-8000-000000000002"
    run = tmp_path / session / "subagents" / "workflows" / "wf_sp01"
    run.mkdir(parents=True)
    base = {"isSidechain": False, "userType": "external", "cwd": "/repo", "version": "2.1.2"}
    user = {**base, "type": "user", "uuid": "u1", "parentUuid": None, "sessionId": session,
            "timestamp": "2026-06-28T09:00:00.000Z",
            "message": {"role": "user", "content": "Run the docs sweep workflow."}}  # fmt: skip
    (tmp_path / f"{session}.jsonl").write_text(json.dumps(user) + "\n")
    agent = {**user, "isSidechain": True, "agentId": "agsp0001",
             "sessionId": f"{session}#agent-agsp0001",
             "message": {"role": "user", "content": "Sweep docs batches a and b."}}  # fmt: skip
    (run / "agent-agsp0001.jsonl").write_text(json.dumps(agent) + "\n")
    (run / "agent-agsp0001.meta.json").write_text('{"agentType": "workflow-subagent"}')
    journal = [
        {"type": "started", "key": "v2:hsp0", "agentId": "agsp0001"},
        {"type": "result", "key": "v2:hsp0", "agentId": "agsp0001", "result": "Swept."},
    ]
    (run / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in journal))
    # The run's snapshot, read by the session's loader too: neither a row nor a skipped file.
    (tmp_path / session / "workflows").mkdir()
    (tmp_path / session / "workflows" / "wf_sp01.json").write_text('{"runId": "wf_sp01"}')
    corpus = scan(tmp_path, workers=1, cache=False)
    assert _relative(corpus, tmp_path) == {f"{session}.jsonl"}
    assert corpus.skipped == 0
    [row] = list(corpus)
    assert (row["subagents"], row["warnings"]) == (2, 1)  # the run, its agent; "names no call"


def test_C2_a_row_s_title_is_its_first_prompt_as_shown_a_slash_command_and_its_words() -> None:
    # A real Claude Code session that starts with a slash command (the command's arguments
    # alone said "7933"), and a command of no arguments, which was passed over for the next.
    real = FIXTURES / "claude-code" / "v2.0.67_real_background-agents-queued-notifications.jsonl"
    (row,) = scan([real], cache=False).rows
    assert row["title"] == "/erk:plan-implement 7933"
    said = turnfold.Transcript()
    said.append(turnfold.UserMessage(command="/review"))
    said.append(turnfold.UserMessage(text="and then?"))
    (row,) = scan([said], cache=False).rows
    assert row["title"] == "/review"


def test_C2_a_session_whose_prompts_are_pictures_alone_is_titled_image() -> None:
    pictured = turnfold.Transcript()
    png = turnfold.ImageData(media_type="image/png", data="iVBORw0KGgo=")
    pictured.append(turnfold.UserMessage(images=[png]))
    pictured.append(turnfold.AssistantText(text="A cat."))
    (row,) = scan([pictured], cache=False).rows
    assert row["title"] == "[image]"
    pictured.metadata["title"] = "Cats"  # a title the source records says more
    (row,) = scan([pictured], cache=False).rows
    assert row["title"] == "Cats"
