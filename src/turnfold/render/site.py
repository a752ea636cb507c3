"""Many runs as a static site (spec B-2): ``turnfold render DIR_OR_LOG -o SITE/``.

``SITE/index.html``
    every run as a row, in the session browser's columns and cells (:mod:`turnfold.render.table`),
    sorted, filtered and searched (titles, samples and first prompts) by a script of the page's
    own that its Content-Security-Policy allows by hash alone (:mod:`turnfold.render.scripts`);
    without script, the whole table. A run is named by one title, in its link and as its page's
    heading: the title its source records, else its row's (the first prompt).
``SITE/runs/*.html``
    one standalone page per run (:func:`turnfold.render.page.write_page`: folds, timeline, deep
    links), linked to the index and to the runs before and after it.
``SITE/.turnfold-site.json``
    what each page was built from (its file's path, size and modification time, turnfold's
    version and the display settings), so a rebuild reads and writes only what changed.

Each session file is read once: a worker process summarises it into its rows (C-2) and writes the
page of every run it holds while it has the run's transcript (``examine(..., visit=...)``), so a
site costs about what its pages cost, spread over every core by the corpus engine. Which runs
stand beside a page is known only once every file is read, so a worker writes a page up to its
end and this process ends it (:func:`~turnfold.render.html.page_end`), later rewriting only that
end when a neighbour changes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from turnfold.atomic import Part, write_whole
from turnfold.corpus.columns import (
    CHOICE_COLUMNS,
    Row,
    cell,
    column,
    derived,
    heads_of,
    label,
    options_of,
    row_of,
)
from turnfold.corpus.discover import Item, discover, parquet_files
from turnfold.corpus.engine import Deaths, spread, worth_workers
from turnfold.corpus.paging import default_columns, sample_order
from turnfold.corpus.parts import Parts
from turnfold.corpus.summarize import (
    DATETIME_COLUMNS,
    TITLE_LIMIT,
    Summary,
    error_row,
    examine,
)
from turnfold.i18n import plural, translate
from turnfold.model import Transcript, UserMessage
from turnfold.render.content import escape
from turnfold.render.html import page_end, turnfold_css
from turnfold.render.page import write_page
from turnfold.render.scripts import policy, script_tag
from turnfold.render.table import RUNS_CSS, runs_table
from turnfold.settings import DisplaySettings, SettingsSnapshot, snapshot_of

__all__ = ["INDEX", "MANIFEST", "RUNS", "SiteReport", "build_site"]

INDEX = "index.html"
#: The folder of the runs' pages, beside the index.
RUNS = "runs"
MANIFEST = ".turnfold-site.json"
#: The index's own script: sort, filter, search.
INDEX_SCRIPT = "site-index.js"
#: Characters of a run's first prompt the index's search reads (its title is the first line).
PROMPT_LIMIT = 1000
#: Changes when what a page holds changes without turnfold's version changing.
_FORMAT = 3


@dataclass(frozen=True)
class SiteReport:
    """What a build did: rows in the index, pages written and kept as they were, files skipped
    (no loader recognises them: ``Corpus.skipped``)."""

    index: Path
    rows: int
    written: int
    kept: int
    skipped: int


# --- the workers: read each file once, write its runs' pages ------------------------------------


@dataclass(frozen=True)
class _Run:
    """A run as a worker read it: its C-2 row, its page (None: it could not be read), the bytes
    written before the page's end, its first prompt (for the index's search) and the title its
    source records, on one line (None: none)."""

    row: dict[str, Any]
    page: str | None
    body: int
    prompt: str
    title: str | None


@dataclass(frozen=True)
class _File:
    kind: str
    runs: list[_Run]


@dataclass(frozen=True)
class _PageWriter:
    """Picklable: a chunk of files' runs, each run's page written as its file is read."""

    folder: str
    settings: SettingsSnapshot

    def __call__(self, items: list[Item]) -> list[_File]:
        return [self.read(item) for item in items]

    def read(self, item: Item) -> _File:
        runs = Path(self.folder) / RUNS
        written: list[tuple[dict[str, Any], Part, int, str, str | None]] = []

        def visit(transcript: Transcript, row: dict[str, Any]) -> None:
            # Named once the row's key is final (a file of one instance ends up keyed by its path).
            part = Part(runs / f".{os.getpid()}-{len(written)}.part")
            recorded = _recorded_title(transcript)
            with part.stream as stream:
                body = write_page(stream, transcript, self.settings, title=_title(recorded, row),
                                  fork=False, end=False)  # fmt: skip
            line = _one_line(recorded) if recorded else None
            written.append((row, part, body, _first_prompt(transcript), line))

        found = examine(item, tables=False, visit=visit)
        pages: dict[str, tuple[str | None, int, str, str | None]] = {}
        for row, part, body, prompt, title in written:
            name = page_name(row["key"])
            part.replace(runs / name)
            pages[row["key"]] = (name, body, prompt, title)
        built = []
        for row in _rows(found):
            # A run that could not be read has no page: its row says why.
            page, body, prompt, title = pages.get(row["key"], (None, 0, "", None))
            built.append(_Run(row, page, body, prompt, title))
        return _File(found.kind, built)


def _rows(found: Summary) -> Iterator[dict[str, Any]]:
    """Every row of a summary, those an eval log packed into record batches first."""
    for rows, _, _ in found.packed:
        yield from rows.to_pylist()
    yield from found.rows


def _recorded_title(transcript: Transcript) -> str | None:
    """The title a run's source records (a Claude Code session's name, a Codex thread's), as
    ``turnfold render FILE`` heads the run's page; None: it records none."""
    recorded = transcript.metadata.get("title")
    return recorded if isinstance(recorded, str) and recorded.strip() else None


def _title(recorded: str | None, row: dict[str, Any]) -> str:
    """A run's one title, its page's heading and its index link's words: the title its source
    records, else its row's title (the first prompt), else its file and id."""
    return recorded or str(row["title"] or _readable(str(row["key"])))


def _one_line(title: str) -> str:
    """A recorded title as the index shows it: on one line and cut as a row's title is (C-2)."""
    line = " ".join(title.split())
    return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1].rstrip() + "…"


def _readable(key: str) -> str:
    """A run's key without its folders: its file's name and, for a file of many runs, the
    run's id in it (an eval log's ``log.eval#7/1``, whose id holds a slash too).

    >>> _readable("/runs/a/log.eval#7/1"), _readable("/home/me/5c0375b4.jsonl")
    ('log.eval#7/1', '5c0375b4.jsonl')
    """
    run = key.find("#")
    return key[key.rfind("/", 0, run if run >= 0 else len(key)) + 1 :]


def _first_prompt(transcript: Transcript) -> str:
    for entry in transcript.entries:
        if isinstance(entry, UserMessage) and entry.text.strip():
            return entry.text[:PROMPT_LIMIT]
    return ""


def page_name(key: str) -> str:
    """The file name of a run's page: readable (its file's name and its id in the file, which
    a long name is cut to keep), and unique by a digest of its key.

    >>> page_name("/home/me/.claude/projects/shop/5c0375b4.jsonl")
    '5c0375b4.jsonl-eb7c295262.html'
    >>> page_name("/logs/arithmetic.eval#2/1")
    'arithmetic.eval-2-1-ceeca31b04.html'
    """
    name, _, run = _readable(key).partition("#")
    run = _slug(run)[:20]
    readable = _slug(name)[: 59 - len(run)].strip("-.") + (f"-{run}" if run else "")
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:10]
    return f"{readable}-{digest}.html"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")


# --- the build ------------------------------------------------------------------------------------


def build_site(
    source: str | os.PathLike[str],
    folder: str | os.PathLike[str],
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    workers: int | None = None,
    progress: bool = True,
) -> SiteReport:
    """Write the site of every run in ``source`` (a folder, an eval log, a file of runs, a
    Parquet file of trajectories or the shards of one, a list of paths) into ``folder``; a
    page whose inputs did not change since the last build is left as it is.
    ``workers``: worker processes (None: every core)."""
    snapshot = snapshot_of(settings)
    out = Path(folder)
    (out / RUNS).mkdir(parents=True, exist_ok=True)
    found = discover(source, None)
    if found.parquet and not found.items:  # nothing but Parquet files: a dataset's shards
        found, _ = parquet_files(found.parquet, None, None)
    before = _read_manifest(out)
    prints = {item.key: _fingerprint(item, snapshot) for item in found.items}
    todo = [item for item in found.items if not _fresh(before.get(item.key), prints[item.key], out)]
    read: dict[str, _File] = {}
    from turnfold import progress as bars

    # A large Parquet file or eval log is written in parts, by every worker at once (their
    # rows are keyed as the file's, so each page is named as it is written).
    parts = Parts(todo, workers, None, {}, numbered=False)
    work = parts.work
    # A file whose reading killed its worker (C-7) is a run that could not be read, as one
    # whose load raised is (its row says why; no page), which the manifest keeps as it keeps
    # any (a rebuild kills no worker again unless the file changed); a part's death makes its
    # whole file one, as a scan's row of it (:func:`turnfold.scan`).
    deaths = Deaths(_unreadable, lambda: _File("rows", []))
    with bars.bar(len(work), "Rendering", "file", delay=bars.DELAY_S,
                  disable=not progress) as bar:  # fmt: skip
        writer = _PageWriter(str(out), snapshot)
        for at, done in spread(writer, work, workers=workers, parallel=worth_workers(work),
                               died=deaths):  # fmt: skip
            bar.update(1)
            file = parts.gathered(at, done)
            if file is not None:
                at_todo, built = file
                item = todo[at_todo]
                error = deaths.of(item)
                if error is not None:
                    _unlink_pages(out, built)
                    built = [_unreadable(item, error)]
                read[item.key] = _File(built[0].kind,
                                       [r for one in built for r in one.runs])  # fmt: skip
    files: dict[str, dict[str, Any]] = {}
    for item in found.items:
        fresh = read.get(item.key)
        files[item.key] = before[item.key] if fresh is None else _entry(prints[item.key], fresh)
    runs = [run for entry in files.values() for run in entry["runs"]]
    _end_pages(out, [run for run in runs if run["page"]], snapshot.locale)
    _forget(out, before, files)
    index = out / INDEX
    counts, skipped = _counts(found.skipped, files, runs, snapshot.locale)
    _write_whole(index, _index_html(runs, counts, snapshot.locale).encode("utf-8"))
    _write_whole(out / MANIFEST, json.dumps({"files": files}, ensure_ascii=False).encode())
    written = sum(1 for entry in read.values() for run in entry.runs if run.page)
    pages = sum(1 for run in runs if run["page"])
    return SiteReport(index, len(runs), written, pages - written, skipped)


def _unreadable(item: Item, error: str) -> _File:
    return _File("rows", [_Run(error_row(item, error), None, 0, "", None)])


def _unlink_pages(out: Path, built: list[_File]) -> None:
    """Delete the pages the other parts of a file that is one unreadable run wrote: no row
    links to them, and no manifest names them for a later build to delete."""
    for one in built:
        for run in one.runs:
            if run.page:
                (out / RUNS / run.page).unlink(missing_ok=True)


def _fingerprint(item: Item, settings: SettingsSnapshot) -> str:
    """What a file's pages are built from, as one digest."""
    from turnfold.caches import code_version

    # The change time too: a rewrite to the same size with its modification time set back
    # (cp -p, rsync -t) moves it, as the scan's index knows (C-4).
    facts = [item.path, item.size, item.mtime_ns, item.ctime_ns, code_version(), _FORMAT,
             dataclasses.asdict(settings)]  # fmt: skip
    if item.column is not None:  # a Parquet file's: the column its runs were read from
        facts.append(item.column)
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode("utf-8")).hexdigest()


def _fresh(entry: dict[str, Any] | None, fingerprint: str, out: Path) -> bool:
    """Whether a file's pages, as the last build recorded them, can stay as they are."""
    if entry is None or entry.get("fingerprint") != fingerprint:
        return False
    return all((out / RUNS / run["page"]).is_file() for run in entry["runs"] if run["page"])


def _entry(fingerprint: str, built: _File) -> dict[str, Any]:
    """A file's record in the manifest: its runs' rows (moments as ISO text) and pages."""
    runs = [
        {"row": {name: _plain(value) for name, value in run.row.items()}, "page": run.page,
         "body": run.body, "prompt": run.prompt, "title": run.title, "nav": None}
        for run in built.runs
    ]  # fmt: skip
    return {"fingerprint": fingerprint, "kind": built.kind, "runs": runs}


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _read_manifest(out: Path) -> dict[str, dict[str, Any]]:
    """The files the last build recorded, by key; none when there is no readable manifest."""
    try:
        files = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not isinstance(files, dict):
        return {}
    # The manifest names the files a build deletes and rewrites: an entry whose page is not
    # a file name this module makes (``../../.bashrc`` in a site folder from elsewhere) is
    # forgotten, its file built again, and nothing outside ``runs/`` is ever touched.
    return {key: entry for key, entry in files.items() if _trusted(entry)}


#: What :func:`page_name` makes: one file name, no folder, not hidden.
_PAGE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*\.html")


def _trusted(entry: Any) -> bool:
    """Whether a manifest's record of a file has the shape :func:`_entry` gives it."""
    runs = entry.get("runs") if isinstance(entry, dict) else None
    return isinstance(runs, list) and all(
        isinstance(run, dict)
        and isinstance(run.get("title"), (str, type(None)))
        and (run.get("page") is None
             or (isinstance(run["page"], str) and _PAGE_NAME.fullmatch(run["page"]) is not None
                 and type(run.get("body")) is int))
        for run in runs
    )  # fmt: skip


def _end_pages(out: Path, pages: list[dict[str, Any]], locale: str) -> None:
    """End each page with links to the index and to the pages before and after it; a page
    whose end already links to those is left as it is."""
    for at, run in enumerate(pages):
        previous = pages[at - 1]["page"] if at else None
        following = pages[at + 1]["page"] if at + 1 < len(pages) else None
        if run["nav"] == [previous, following]:
            continue
        with (out / RUNS / run["page"]).open("r+b") as stream:
            stream.seek(run["body"])
            stream.write(page_end(_nav_html(previous, following, locale)).encode("utf-8"))
            stream.truncate()
        run["nav"] = [previous, following]


#: A run page's links stay at the bottom of the window (they end the page, after the transcript).
_NAV_STYLE = (
    "position:sticky;bottom:0;display:flex;gap:24px;justify-content:center;padding:6px;"
    "background:var(--tf-bg);border-top:1px solid var(--tf-border)"
)


def _nav_html(previous: str | None, following: str | None, locale: str) -> str:
    """The links of a run's page, kept in view at the bottom of the window."""
    links = [f'<a href="../{INDEX}">{escape(translate("site.index", locale))}</a>']
    if previous:
        label = escape(translate("site.previous", locale))
        links.insert(0, f'<a rel="prev" href="{escape(previous)}">← {label}</a>')
    if following:
        label = escape(translate("site.next", locale))
        links.append(f'<a rel="next" href="{escape(following)}">{label} →</a>')
    return f'<nav class="tf-site-nav" style="{_NAV_STYLE}">{"".join(links)}</nav>\n'


def _forget(out: Path, before: dict[str, dict[str, Any]], files: dict[str, dict[str, Any]]) -> None:
    """Delete the pages of runs that are gone, and any a build left half written."""
    kept = {run["page"] for entry in files.values() for run in entry["runs"] if run["page"]}
    for entry in before.values():
        for run in entry.get("runs", []):
            if run.get("page") and run["page"] not in kept:
                (out / RUNS / run["page"]).unlink(missing_ok=True)
    for part in (out / RUNS).glob(".*.part"):
        part.unlink(missing_ok=True)


def _counts(
    skipped: int, files: dict[str, dict[str, Any]], runs: list[dict[str, Any]], locale: str
) -> tuple[str, int]:
    """The index's line of counts (runs, errors, files skipped), in the reader's language, and
    the files skipped: what the corpus counts (C-7), files no loader recognises; a sub-agent's
    file or another part of a run's session is read with its run, not skipped."""
    others = skipped + sum(1 for entry in files.values() if entry["kind"] == "skipped")
    errors = sum(1 for run in runs if run["row"]["error"] is not None)
    line = translate("site.counts", locale, runs=plural("browser.counts", len(runs), locale),
                     errors=plural("site.errors", errors, locale),
                     skipped=plural("site.skipped", others, locale))  # fmt: skip
    return line, others


def _write_whole(path: Path, data: bytes) -> None:
    # The part's name is one the CLI knows as a site's own (a build cut short leaves it).
    write_whole(path, lambda stream: stream.write(data), path.with_name(f".{path.name}.part"))


# --- the index ------------------------------------------------------------------------------------

#: A table wider than the window scrolls in a box of its own, under the counts and the filters
#: that stay in view; the titles (the first column) are at most a quarter of the window, so the
#: default columns fit 1280 pixels. Narrower, the text columns (title, agent, model: a table
#: never makes a column narrower than its longest unbreakable text) give way as the session
#: browser's do: their text may break anywhere, down to 7em, and shows its first line only, cut
#: with an ellipsis (its whole text the cell's title), before any figure is pushed out of view.
_INDEX_RULES = """\
body.tf-page .turnfold.tf-site-index { max-width: 1400px; }
.tf-site-index .tf-site-table { overflow-x: auto; }
.tf-site-index .tf-runs-table td:first-child { max-width: min(40em, 25vw); }
@media (max-width: 700px) { .tf-site-index .tf-runs-table td:first-child { max-width: 60vw; } }
.tf-site-index .tf-runs-clip { display: -webkit-box; -webkit-box-orient: vertical;
  -webkit-line-clamp: 1; overflow: hidden; white-space: normal; word-break: break-all;
  min-width: 7em; }
.tf-site-index .tf-site-filters { display: flex; flex-wrap: wrap; gap: 8px 12px;
  align-items: center; margin: 0 0 8px; color: var(--tf-dim); }
.tf-site-index .tf-site-filters[hidden] { display: none; }
.tf-site-index .tf-site-filters input[type=search] { flex: 1 1 18em; max-width: 32em; }
.tf-site-index .tf-site-filters select { max-width: 16em; }  /* a long name: wide as its option */
.tf-site-index th button { font: inherit; color: inherit; background: none; border: 0; padding: 0;
  cursor: pointer; }
.tf-site-index th[aria-sort=ascending] button::after { content: " \\25B2"; font-size: 0.8em; }
.tf-site-index th[aria-sort=descending] button::after { content: " \\25BC"; font-size: 0.8em; }
"""


def _index_html(runs: list[dict[str, Any]], counts: str, locale: str) -> str:
    """The index: every run in the browser's default columns and cells. Built from the rows
    as they are (no Arrow: a rebuild of one run costs what that run costs)."""
    paths = [run["row"]["path"] for run in runs if run["row"]["path"] is not None]
    names = default_columns(len(paths) > len(set(paths)))
    shown = [column(name) for name in names]
    titled = names.index("title")
    # Samples sort as a reader counts them (``2/1`` before ``10/1``), as the browser sorts them:
    # the script compares numbers, so each row carries its sample's place in that order.
    samples = [str(run["row"]["sample"]) for run in runs if run["row"]["sample"] is not None]
    ranks = {sample: at for at, sample in enumerate(sample_order(samples))}
    rows: list[Row] = []
    attributes: dict[str, str] = {}
    for run in runs:
        plain = derived(run["row"])  # moments as ISO text, as the manifest keeps them
        row = row_of({name: _moment(name, value) for name, value in plain.items()}, shown, locale)
        if plain["error"] is None:
            # The run's one title, as its page is headed: the one its source records, else
            # its first prompt; a run with neither is named by its file, since its link, the
            # one way to its page, needs words to click on.
            row["cells"][titled] = cell(shown[titled], _title(run.get("title"), plain), locale)
        for each, col in zip(row["cells"], shown, strict=True):
            if col.clip and each["text"]:  # a text cell may be cut short (_INDEX_RULES)
                # A cell's own tooltip is its fuller form: an unreadable run's, its file's path.
                each.setdefault("title", each["text"])
        rows.append(row)
        sample = plain["sample"]
        searched = f"{row['cells'][titled]['text']} {sample or ''} {run['prompt']}"
        titles = run.get("title") or plain["title"]
        order = {"title": titles.lower() if titles else None,
                 "sample": None if sample is None else ranks[str(sample)]}  # fmt: skip
        sort = [order[col.name] if col.name in order else _sort_value(col.name, plain)
                for col in shown]  # fmt: skip
        attributes[plain["key"]] = _row_attributes(plain, sort, searched)
    pages = {run["row"]["key"]: run["page"] for run in runs}

    def link(row: Row) -> str | None:
        name = pages[row["key"]]
        return f"{RUNS}/{name}" if name else None

    title = escape(translate("site.title", locale))
    table = runs_table(heads_of(shown, locale), rows, link=link,
                       row_attrs=lambda row: attributes[row["key"]])  # fmt: skip
    return (
        f'<!DOCTYPE html>\n<html lang="{escape(locale)}">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy([INDEX_SCRIPT])}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<style>\n{turnfold_css(standalone=True)}\n{RUNS_CSS}\n"
        f"{_INDEX_RULES}</style>\n</head>\n"
        f'<body class="tf-page">\n<main class="turnfold tf-site-index">\n<h1>{title}</h1>\n'
        f'<p class="tf-site-counts">{escape(counts)}</p>\n{_filters(runs, locale)}\n'
        f'<div class="tf-site-table">{table}</div>\n'
        f"</main>\n{script_tag(INDEX_SCRIPT)}\n</body>\n</html>\n"
    )


def _moment(name: str, value: Any) -> Any:
    return datetime.fromisoformat(value) if name in DATETIME_COLUMNS and value else value


def _row_attributes(values: dict[str, Any], sort: list[Any], searched: str) -> str:
    """What the index's script reads of a row: each cell's value to sort by, the text to
    search (what its title cell shows, which names a run with no prompt or an unreadable
    file, its sample and its first prompt), the values its filters compare."""
    text = " ".join(searched.split()).lower()
    facts = {
        # ASCII: escape() turns a raw U+2028 into a newline, which JSON.parse refuses.
        "data-sort": json.dumps(sort),
        "data-text": text,
        "data-failed": "1" if values["failed_tools"] else "0",
        **{f"data-{name}": values[name] or "" for name in CHOICE_COLUMNS},
    }  # fmt: skip
    return "".join(f' {name}="{escape(str(value))}"' for name, value in facts.items())


def _sort_value(name: str, row: dict[str, Any]) -> Any:
    """How the index's script orders a cell: numbers as numbers, words regardless of case,
    moments by their ISO text; missing values (null) last."""
    value = row.get(name)
    return value.lower() if isinstance(value, str) and name not in DATETIME_COLUMNS else value


def _filters(runs: list[dict[str, Any]], locale: str) -> str:
    """The index's filters, hidden until its script runs (without script they could do
    nothing): the search, a choice of agent, model and outcome, and "has failures"."""
    search = escape(translate("site.filter", locale))
    parts = [f'<input type="search" aria-label="{search}" placeholder="{search}">']
    any_value = escape(translate("browser.any", locale))
    for name in CHOICE_COLUMNS:
        counted = Counter(run["row"][name] for run in runs)
        options = "".join(
            f'<option value="{escape(option["value"])}">{escape(option["label"])} '
            f"({option['count']})</option>"
            for option in options_of(column(name), counted.items(), locale)
        )
        heading = escape(label(name, locale))
        parts.append(f'<label>{heading} <select data-column="{name}"><option value="">'
                     f"{any_value}</option>{options}</select></label>")  # fmt: skip
    failures = escape(translate("browser.has_failures", locale))
    parts.append(f'<label><input type="checkbox" data-failed> {failures}</label>')
    template = escape(translate("site.shown", locale, shown="{shown}", total="{total}"))
    parts.append(
        f'<span class="tf-site-shown" aria-live="polite" data-template="{template}"></span>'
    )
    return f'<div class="tf-site-filters" role="search" hidden>{"".join(parts)}</div>'
