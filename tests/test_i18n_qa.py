"""The Chinese locale as a Chinese-reading user meets it: no English phrase left in what turnfold
writes itself (the transcript's own text, tool names and paths are content and stay as written),
the catalog's house style (spaces between Chinese and numbers or Latin words, full-width
punctuation), and the strings code used to build in English word order.

The renderings checked: the outline (``turnfold show --expand``), the standalone page with its
tooltips, a comparison, the session browser's saved output and the cost's tooltip."""

from __future__ import annotations

import io
import json
import re
import string
import warnings
from datetime import date
from html.parser import HTMLParser
from pathlib import Path

import pytest

import turnfold
from turnfold.cli import main
from turnfold.cost import Cost
from turnfold.i18n import catalog
from turnfold.model import Transcript
from turnfold.prices import table_version
from turnfold.render.page import write_page
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model, open_all
from turnfold.session import session_facts
from turnfold.settings import snapshot_of

FIXTURES = Path(__file__).parent / "fixtures"

#: Transcripts that between them show sub-agents, failures, thinking, compaction, an estimated
#: cost (with its tooltip), an eval's outcome and score, and Codex's tools.
RENDERED = [
    "claude-code_v1.0.108_inline-sidechains.jsonl",
    "claude-code_v2.1.x_schema-coverage.jsonl",
    "codex_rollout_v0.129_two-turns.jsonl",
    "harnesses/inspect/mockllm_one-sample.json",
]

#: Latin words a Chinese rendering keeps by design: "token" is the loanword zh.json uses,
#: the duration unit "ms" (spec F-6), the price table's name, key names, image formats.
KEPT = {"token", "UTC", "ms", "genai-prices", "Enter", "PNG", "JPEG", "GIF", "WebP"}
#: Spec F-2: the verbs placed before a concrete description are English literals in every locale.
VERBS = {"Read", "Reading", "Edited", "Editing", "Wrote", "Writing", "Searched", "Searching",
         "Listed", "Listing", "Ran", "Running", "Used", "Using"}  # fmt: skip
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")


def _strings(value: object, into: set[str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            into.add(str(key))
            _strings(item, into)
    elif isinstance(value, list):
        for item in value:
            _strings(item, into)
    elif value is not None:
        into.add(str(value))


def content_words(transcript: Transcript) -> set[str]:
    """Every Latin word of the transcript itself: its text, calls, results and metadata (as its
    lossless dump holds them), and the agent's and models' names its header shows."""
    found: set[str] = set()
    for line in transcript.dump().splitlines():
        _strings(json.loads(line), found)
    facts = session_facts(transcript)
    found.update([facts.agent or "", *facts.models])
    return {word for text in found for word in WORD.findall(text)}


class _Visible(HTMLParser):
    """A page's visible text, and the tooltips and labels a reader meets on hover."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._hidden += tag in ("script", "style")
        for name, value in attrs:
            if name in ("title", "aria-label", "placeholder", "alt", "data-template") and value:
                self.lines.append(value)

    def handle_endtag(self, tag: str) -> None:
        self._hidden -= tag in ("script", "style")

    def handle_data(self, data: str) -> None:
        if not self._hidden and data.strip():
            self.lines.append(data.strip())


def visible(page: str) -> list[str]:
    parser = _Visible()
    parser.feed(page)
    return parser.lines


def english_left(lines: list[str], content: set[str]) -> list[str]:
    """The lines holding a Latin word that is neither content nor kept by design (a call's
    arguments are shown as JSON, whose escaped line breaks would glue ``\\n`` to a word)."""
    return [
        line
        for line in lines
        if any(
            len(word) > 1 and word not in content and word not in KEPT and word not in VERBS
            for word in WORD.findall(re.sub(r"\\[nt]", " ", line))
        )
    ]


@pytest.mark.parametrize("name", RENDERED)
def test_a_chinese_rendering_has_no_english_of_its_own(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        transcript = turnfold.load(FIXTURES / name)
    settings = snapshot_of({"locale": "zh"})
    view = build_view_model(transcript, settings)
    open_all(view["nodes"])
    outline = render_text(view, width=200).splitlines()
    page = io.BytesIO()
    write_page(page, transcript, settings, title="t", expand=True)
    lines = outline + visible(page.getvalue().decode())
    assert english_left(lines, content_words(transcript)) == []


def test_the_estimated_cost_says_where_it_comes_from_in_the_readers_language() -> None:
    cost = Cost(0.33, False, "0.2.3", date(2025, 9, 7))
    assert cost.source == "estimated with genai-prices 0.2.3, prices of 2025-09-07"
    assert cost.source_in("zh") == "由 genai-prices 0.2.3 按 2025-09-07 的价格估算"
    assert Cost(0.1, False, "0.2.3").source_in("zh") == "由 genai-prices 0.2.3 按今天的价格估算"
    assert Cost(0.1, False, "0.2.3").source == "estimated with genai-prices 0.2.3, prices of today"
    assert (Cost(0.42, True).source, Cost(0.42, True).source_in("zh")) == (
        "recorded by the source",
        "来源记录",
    )


def test_the_header_tooltips_of_a_chinese_page_are_chinese() -> None:
    transcript = turnfold.load(FIXTURES / "claude-code_v1.0.108_inline-sidechains.jsonl")
    pages = {}
    for locale in ("en", "zh"):
        page = io.BytesIO()
        write_page(page, transcript, snapshot_of({"locale": locale}), title="t")
        pages[locale] = page.getvalue().decode()
    assert f'title="由 genai-prices {table_version()} 按 2025-09-07 的价格估算"' in pages["zh"]
    assert "estimated with" not in pages["zh"]
    # The token breakdown and the sub-agents' share: two clauses, joined as each language does.
    assert "缓存写入 47,747；其中子代理 157,362" in pages["zh"]
    assert "cache write 47,747; 157,362 of them spent by sub-agents" in pages["en"]


COMPARED = [FIXTURES / "compare" / f"arithmetic_{run}.eval" for run in ("baseline", "candidate")]


def test_a_chinese_comparison_page_is_titled_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "--compare", *map(str, COMPARED), "--locale", "zh", "-o", "-"]) == 0
    page = capsys.readouterr().out
    title = "arithmetic_baseline.eval 与 arithmetic_candidate.eval 对比"
    assert f"<title>{title}</title>" in page
    assert " vs " not in page
    assert main(["render", "--compare", *map(str, COMPARED), "-o", "-"]) == 0  # en: as before
    assert "<title>arithmetic_baseline.eval vs arithmetic_candidate.eval</title>" in (
        capsys.readouterr().out
    )


def test_a_turn_one_run_lacks_is_said_with_full_width_brackets_in_chinese() -> None:
    a = turnfold.load(FIXTURES / "claude-code_v2.1.x_schema-coverage.jsonl")
    b = turnfold.load(FIXTURES / "claude-code_v1.0.108_inline-sidechains.jsonl")
    zh = turnfold.compare(a, b, settings=turnfold.DisplaySettings(locale="zh"))
    plain = zh._repr_mimebundle_()[0]["text/plain"]  # type: ignore[index]
    assert "    （B 中没有对应的轮次）" in plain.splitlines()
    assert "对齐 1 轮 · 1 轮有差异 · 6 轮仅在 A 中" in plain  # B-3: the first prompts pair
    en = turnfold.compare(a, b)
    assert "    (No counterpart in B)" in en._repr_mimebundle_()[0]["text/plain"].splitlines()  # type: ignore[index]


def test_the_session_browsers_saved_output_counts_in_chinese() -> None:
    from turnfold.browser import SessionBrowser

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        corpus = turnfold.scan(FIXTURES / "corpus")
    assert corpus.describe() == "6 rows, 2 errors, 2 skipped"  # en: as before
    assert corpus.describe("zh") == "6 条记录，2 个错误，跳过 2 个文件"
    browser = SessionBrowser(corpus, settings=turnfold.DisplaySettings(locale="zh"))
    try:
        data = browser._repr_mimebundle_()[0]  # type: ignore[index]
    finally:
        browser.close()
    counts = "6 条记录，2 个错误，跳过 2 个文件"
    assert data["text/plain"] == f"SessionBrowser：{counts}；第 1–6 条，共 6 条"
    assert "<p>6 条记录，2 个错误，跳过 2 个文件</p>" in data["text/html"]
    assert not re.search(r"\b(rows?|errors?|skipped|showing)\b", data["text/plain"])


def test_the_rows_a_saved_table_leaves_out_are_counted_in_its_language() -> None:
    import pyarrow as pa

    from turnfold.corpus.paging import Paging
    from turnfold.render.table import HTML_ROWS, runs_html

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = turnfold.scan(FIXTURES / "corpus").to_arrow()
    many = pa.concat_tables([table] * (HTML_ROWS // table.num_rows + 2))
    left = many.num_rows - HTML_ROWS
    for locale, said in (
        ("en", f"… {left} more rows: .rows of the browser, or corpus.to_pandas()"),
        ("zh", f"… 还有 {left} 条记录：见浏览器的 .rows，或 corpus.to_pandas()"),
    ):
        paging = Paging(many, locale)
        assert f"<p>{said}</p>" in runs_html(paging, paging.query(None)[0], "")


# --- the catalog's house style ---------------------------------------------------------------

HAN = r"[\u4e00-\u9fff]"
#: Phrases whose placeholders are Chinese phrases themselves (the actions of a group title, P-6):
#: joined without a space, as Chinese joins words.
JOINS_CHINESE = {"list.pair", "list.last", "list.etc"}


def _forms(message: object) -> list[str]:
    return [str(f) for f in message.values()] if isinstance(message, dict) else [str(message)]


def test_zh_spaces_chinese_from_numbers_placeholders_and_latin_words() -> None:
    glued = re.compile(rf"{HAN}[A-Za-z0-9{{$]|[A-Za-z0-9}}]{HAN}")
    bad = {
        key: form
        for key, message in catalog("zh").items()
        if key not in JOINS_CHINESE
        for form in _forms(message)
        if glued.search(form)
    }
    assert bad == {}


def test_zh_uses_full_width_punctuation_beside_chinese() -> None:
    half = re.compile(rf"{HAN}\s*[,;:?!()]|[,;:?!()]\s*{HAN}")
    bad = {key: form for key, m in catalog("zh").items() for form in _forms(m) if half.search(form)}
    assert bad == {}


def test_zh_plural_phrases_have_the_one_category_chinese_has() -> None:
    """CLDR: Chinese cardinals are all ``other``; a ``one`` form would never be used."""
    forms = {key: set(m) for key, m in catalog("zh").items() if isinstance(m, dict)}
    assert {key: found for key, found in forms.items() if found != {"other"}} == {}


def test_placeholders_keep_their_format_in_every_locale() -> None:
    """``{count:,}`` in English and ``{count}`` in Chinese would write 12,345 in one, 12345 in
    the other (test_i18n compares the names only)."""

    def fields(message: object) -> set[tuple[str, str]]:
        return {
            (name, spec or "")
            for form in _forms(message)
            for _, name, spec, _ in string.Formatter().parse(form)
            if name
        }

    zh = catalog("zh")
    assert {k: m for k, m in catalog("en").items() if fields(m) != fields(zh[k])} == {}
