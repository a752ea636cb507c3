"""The static site of many runs (spec B-2): ``turnfold render DIR_OR_LOG -o SITE/``.

Read as a visitor reads it: an index with a row per run, a page per run linked both ways, pages
that only change when their run does, and no script but the site's own. The site in a real
Chromium from ``file://``, with JavaScript on and off: ``tests/browser/test_site_browser.py``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.cli import main
from turnfold.model import AssistantText, Transcript, UserMessage
from turnfold.render import site
from turnfold.render.html import DEEP_LINKS
from turnfold.render.page import render_page
from turnfold.render.scripts import policy, script_tag
from turnfold.render.site import INDEX, MANIFEST, RUNS, build_site, page_name
from turnfold.settings import DisplaySettings

TREE = Path(__file__).parent / "fixtures" / "corpus"
EVAL_LOG = Path(__file__).parent / "fixtures" / "harnesses" / "inspect" / "mockllm_two-epochs.eval"
HREF = re.compile(r'<a (?:rel="(prev|next)" )?href="([^"]+)"')


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    target = tmp_path / "tree"
    shutil.copytree(TREE, target)
    return target


def stamps(folder: Path) -> dict[str, int]:
    """Each page of a site and when it was last written."""
    return {page.name: page.stat().st_mtime_ns for page in (folder / RUNS).glob("*.html")}


def nav(page: Path) -> dict[str | None, str]:
    """A run page's links at its end: previous, index, next."""
    end = page.read_text(encoding="utf-8").rsplit("</main>", 1)[1]
    return dict(HREF.findall(end))


def index_links(folder: Path) -> list[str]:
    return re.findall(r'<td[^>]*><a href="runs/([^"]+)"', (folder / INDEX).read_text("utf-8"))


def test_B2_an_index_and_a_page_per_run_linked_both_ways(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    report = build_site(tree, out, workers=1, progress=False)
    corpus = turnfold.scan(tree, workers=1, cache=False)
    readable = [row["key"] for row in corpus if row["error"] is None]
    assert report.rows == len(corpus)
    assert report.written == len(readable)
    assert report.skipped == corpus.skipped  # what no loader recognises (C-7), as the scan says
    assert index_links(out) == [page_name(key) for key in readable]  # the corpus's order
    pages = index_links(out)
    for at, name in enumerate(pages):
        links = nav(out / RUNS / name)
        assert links[""] == "../index.html"
        assert links.get("prev") == (pages[at - 1] if at else None)
        assert links.get("next") == (pages[at + 1] if at + 1 < len(pages) else None)
    index = (out / INDEX).read_text("utf-8")
    assert index.count("<tr ") == len(corpus)  # unreadable runs are rows too, without a page
    assert index.count(">⚠ ") == len(corpus) - len(readable)  # each a cell's text (and title)


def test_B2_the_index_counts_runs_errors_and_skipped_files_in_the_reader_s_language(
    tree: Path, tmp_path: Path
) -> None:
    corpus = turnfold.scan(tree, workers=1, cache=False)
    runs, errors = len(corpus), corpus.errors
    for locale, expected in (
        ("en", f"{runs} runs, {errors} error{'s' if errors != 1 else ''}, "),
        ("zh", f"{runs} 个运行，{errors} 个错误，跳过 "),
    ):
        out = tmp_path / locale
        build_site(tree, out, DisplaySettings(locale=locale), workers=1, progress=False)
        line = re.search(r'<p class="tf-site-counts">([^<]*)</p>', (out / INDEX).read_text("utf-8"))
        assert line is not None
        assert line.group(1).startswith(expected), line.group(1)


def test_B2_a_run_s_page_is_its_standalone_page_with_the_site_s_links(
    tree: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    build_site(tree, out, workers=1, progress=False)
    (path,) = tree.glob("codex/sessions/**/*09-59-55*.jsonl")  # the other is its sub-agent's
    (row,) = turnfold.scan([path], workers=1, cache=False)
    alone = render_page(turnfold.load(path), title=row["title"])
    page = (out / RUNS / page_name(str(path))).read_text("utf-8")
    assert page.startswith(alone.rsplit("</main>", 1)[0] + '</main>\n<nav class="tf-site-nav"')
    assert page.endswith(f"{script_tag(DEEP_LINKS)}\n</body>\n</html>\n")


def test_B2_a_rebuild_writes_only_what_changed(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    build_site(tree, out, workers=1, progress=False)
    first = stamps(out)
    again = build_site(tree, out, workers=1, progress=False)
    assert (again.written, again.kept) == (0, len(first))
    assert stamps(out) == first  # no page rewritten

    changed = next(tree.glob("claude/projects/*/ses_stage0_small.jsonl"))
    changed.write_text(changed.read_text("utf-8") + "\n", encoding="utf-8")
    report = build_site(tree, out, workers=1, progress=False)
    assert report.written == 1
    now = stamps(out)
    assert {name for name in now if now[name] != first.get(name)} == {page_name(str(changed))}


def test_B2_a_new_run_ends_its_neighbours_pages_anew_and_a_gone_run_s_page_goes(
    tree: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    build_site(tree, out, workers=1, progress=False)
    pages = index_links(out)
    added = tree / "claude" / "projects" / "-home-dev-shop" / "new.jsonl"
    shutil.copyfile(next(tree.glob("claude/projects/*/ses_stage0_small.jsonl")), added)
    report = build_site(tree, out, workers=1, progress=False)
    assert report.written == 1
    after = index_links(out)
    at = after.index(page_name(str(added)))
    assert nav(out / RUNS / after[at - 1])["next"] == after[at]
    assert nav(out / RUNS / after[at + 1])["prev"] == after[at]
    added.unlink()
    build_site(tree, out, workers=1, progress=False)
    assert index_links(out) == pages
    assert sorted(p.name for p in (out / RUNS).iterdir()) == sorted(pages)


def test_B2_an_eval_log_is_a_page_per_sample(tmp_path: Path) -> None:
    out = tmp_path / "site"
    report = build_site(EVAL_LOG, out, workers=1, progress=False)
    corpus = turnfold.scan(EVAL_LOG, workers=1, cache=False)
    assert report.rows == len(corpus) > 1
    assert index_links(out) == [page_name(key) for key in corpus.keys]


def test_B2_a_page_of_a_file_of_many_runs_is_named_for_its_file_and_its_run(
    tmp_path: Path,
) -> None:
    """An eval log's pages were named for the epoch alone (``1-<digest>.html``, ``2-…``): the
    readable part cut the key at the slash of ``#sample/epoch``, so every eval log's pages had
    the same few names and none said which log or sample it was."""
    out = tmp_path / "site"
    build_site(EVAL_LOG, out, workers=1, progress=False)
    names = [name.rsplit("-", 1)[0] for name in index_links(out)]
    assert names == ["mockllm_two-epochs.eval-1-1", "mockllm_two-epochs.eval-2-1",
                     "mockllm_two-epochs.eval-1-2", "mockllm_two-epochs.eval-2-2"]  # fmt: skip
    long = page_name(f"/logs/{'x' * 80}.eval#sample-7/3")  # cut, but not the run's id
    assert long.startswith("x" * 40)
    assert "x-sample-7-3-" in long


def test_B2_a_run_without_a_prompt_or_title_is_still_a_link_and_a_heading(
    tmp_path: Path,
) -> None:
    """A run with no user prompt (a stream whose prompt was never written) has no title: its
    index link had no text at all, nothing to click, so its page could not be reached."""
    runs = tmp_path / "runs"
    runs.mkdir()
    run = Transcript([AssistantText(text="Started on my own.")])
    (runs / "no-prompt.jsonl").write_text(run.dump(), encoding="utf-8")
    out = tmp_path / "site"
    build_site(runs, out, workers=1, progress=False)
    index = (out / INDEX).read_text()
    (link,) = re.findall(r'<td[^>]*><a href="runs/[^"]+"><span[^>]*>([^<]*)</span></a>', index)
    assert link == "no-prompt.jsonl"
    page = (out / RUNS / index_links(out)[0]).read_text("utf-8")
    assert "<h1>no-prompt.jsonl</h1>" in page


def test_W6_B2_a_run_s_page_is_headed_by_its_recorded_title_as_its_own_page_is(
    tmp_path: Path,
) -> None:
    """A session its source names (Claude Code's ``custom-title``) is headed by that name in
    ``turnfold render FILE``; its page in a site was headed by its first prompt instead."""
    session = Path(__file__).parent / "fixtures" / "claude-code_v2.1.x_schema-coverage.jsonl"
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copyfile(session, runs / session.name)
    out = tmp_path / "site"
    build_site(runs, out, workers=1, progress=False)
    assert main(["render", str(runs / session.name), "-o", str(tmp_path / "alone.html")]) == 0
    alone = (tmp_path / "alone.html").read_text("utf-8")
    page = (out / RUNS / page_name(str(runs / session.name))).read_text("utf-8")
    heading = re.search(r"<h1>[^<]*</h1>", alone)
    assert heading is not None
    assert heading.group() == "<h1>Stage0 small fixture</h1>"
    assert heading.group() in page
    assert "<title>Stage0 small fixture</title>" in page


def test_B2_a_dataset_of_trajectories_is_a_page_per_run(tmp_path: Path) -> None:
    """A Parquet file of rollouts (or the shards of one) and a JSON-lines file of them: a page
    per row, as a scan keys them (their site had no page at all: the Parquet file was
    skipped); an unchanged file's pages are kept by a rebuild."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"task": f"t{i}", "messages": [{"role": "user", "content": f"Task {i}"},
                                           {"role": "assistant", "content": f"Done {i}."}]}
            for i in range(5)]  # fmt: skip
    data = tmp_path / "data"
    data.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), data / "train.parquet")
    jsonl = tmp_path / "rollouts.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for source in (data, jsonl):
        out = tmp_path / f"site-{source.name}"
        report = build_site(source, out, workers=1, progress=False)
        corpus = turnfold.scan(source, workers=1, cache=False)
        assert report.rows == report.written == len(corpus) == 5
        assert index_links(out) == [page_name(key) for key in corpus.keys]
        assert "Task 3" in (out / RUNS / page_name(corpus.keys[3])).read_text("utf-8")
        again = build_site(source, out, workers=1, progress=False)
        assert (again.written, again.kept) == (0, 5)


def test_B2_a_large_dataset_or_eval_log_is_written_in_parts_to_the_same_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Parquet file's rows and an eval log's samples are written by every worker at once,
    each its own part's pages: the site is the one a single worker writes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from turnfold.corpus import engine, runs
    from turnfold.formats import tables

    rows = [{"task": f"t{i}", "messages": [{"role": "user", "content": f"Task {i}"},
                                           {"role": "assistant", "content": f"Done {i}."}]}
            for i in range(40)]  # fmt: skip
    data = tmp_path / "data"
    data.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), data / "train.parquet", row_group_size=8)
    for source in (data, EVAL_LOG):
        alone, shared = tmp_path / f"one-{source.name}", tmp_path / f"two-{source.name}"
        build_site(source, alone, workers=1, progress=False)
        with monkeypatch.context() as patched:
            patched.setattr(tables, "PART_MOST_ROWS", 8)
            patched.setattr(tables, "PART_ROWS", 4)
            patched.setattr(runs, "SPAN_BYTES", 1)
            patched.setattr(runs, "SPLIT_BYTES", 1)
            patched.setattr(engine, "LOCAL_BYTES", 0)
            assert len(tables.parts(str(data / "train.parquet"), "messages", 2) or []) == 5
            build_site(source, shared, workers=2, progress=False)
        names = [INDEX, *(f"{RUNS}/{page}" for page in index_links(alone))]
        assert len(names) > 4
        for name in names:
            assert (alone / name).read_bytes() == (shared / name).read_bytes(), name


def test_B2_the_site_is_the_same_built_on_one_core_or_many(tree: Path, tmp_path: Path) -> None:
    alone, shared = tmp_path / "one", tmp_path / "two"
    build_site(tree, alone, workers=1, progress=False)
    build_site(tree, shared, workers=2, progress=False)
    for name in [INDEX, *(f"{RUNS}/{page}" for page in index_links(alone))]:
        assert (alone / name).read_bytes() == (shared / name).read_bytes(), name


def test_X1_B2_the_site_runs_only_its_own_scripts_and_titles_stay_text(tmp_path: Path) -> None:
    hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    runs = tmp_path / "runs"
    runs.mkdir()
    for number in range(3):
        run = Transcript([UserMessage(text=f"{hostile} {number}"), AssistantText(text=hostile)])
        (runs / f"run-{number}.jsonl").write_text(run.dump(), encoding="utf-8")
    out = tmp_path / "site"
    build_site(runs, out, workers=1, progress=False)
    index = (out / INDEX).read_text("utf-8")
    assert f'content="{policy([site.INDEX_SCRIPT])}"' in index
    assert index.count("<script") == 1
    assert script_tag(site.INDEX_SCRIPT) in index
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in index
    assert "<img" not in index
    for page in (out / RUNS).glob("*.html"):
        text = page.read_text("utf-8")
        assert text.count("<script") == 1  # the deep links' (render/html.py checks the rest)
        assert "<img" not in text


def test_W6_turnfold_render_of_a_folder_writes_a_site(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["render", str(tree), "-o", f"{out}/"]) == 0
    assert (out / INDEX).is_file()
    assert main(["render", str(tree)]) == 0  # a folder without -o: FOLDER-site/
    assert (tree.with_name("tree-site") / INDEX).is_file()
    assert main(["render", str(tmp_path / "missing"), "-o", f"{out}/"]) == 2
    assert (out / MANIFEST).is_file()
    # A folder is never one page: -o names the site's folder without a trailing slash too
    # (it said the folder was "not a transcript file").
    assert main(["render", str(tree), "-o", str(tmp_path / "named")]) == 0
    assert (tmp_path / "named" / INDEX).is_file()


def test_B2_a_file_rewritten_to_its_size_with_its_time_set_back_is_built_again(
    tree: Path, tmp_path: Path
) -> None:
    """``cp -p`` or ``rsync -t`` over a run keeps its size and modification time: the page was
    kept, the old run's, as the scan's index once kept its rows (C-4)."""
    out = tmp_path / "site"
    build_site(tree, out, workers=1, progress=False)
    first = stamps(out)
    changed = next(tree.glob("claude/projects/*/ses_stage0_small.jsonl"))
    before = changed.stat()
    text = changed.read_text("utf-8")
    changed.write_text(text.replace("e", "E", 1), encoding="utf-8")  # the same size
    os.utime(changed, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (changed.stat().st_size, changed.stat().st_mtime_ns) == (
        before.st_size,
        before.st_mtime_ns,
    )
    report = build_site(tree, out, workers=1, progress=False)
    assert report.written == 1
    now = stamps(out)
    assert {name for name in now if now[name] != first.get(name)} == {page_name(str(changed))}
