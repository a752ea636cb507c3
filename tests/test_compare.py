"""Two runs side by side (spec B-3): the view, its static and text renderings, the widget, and
``turnfold render --compare``. The alignment itself is tested in ``test_comparison.py``; the JS
view in ``tests/browser/test_compare_browser.py``.

The two eval logs of ``tests/fixtures/compare`` are two runs of one task written by the real
``inspect_ai`` (``tests/formats/inspect_runs.py``): sample 2 regressed, sample 4 improved,
sample 3 passed both times with other tools.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold import keys
from turnfold.cli import main
from turnfold.compare_widget import CompareWidget
from turnfold.model import AssistantText, ToolCall, ToolResult, Transcript, UserMessage
from turnfold.render import compare_nodes
from turnfold.render.compare_html import COMPARE_CSS, render_compare_html
from turnfold.render.compare_text import render_compare_text
from turnfold.render.compare_view import build_compare_view, compare_runs
from turnfold.render.html import NO_SCRIPT, turnfold_css
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.samples import demo_session
from turnfold.settings import DisplaySettings

from .test_render_html import HOSTILE, Audit, hostile_transcript
from .test_viewmodel_schema import _WIRE, _check, _check_typed

RUNS = Path(__file__).parent / "fixtures" / "compare"
BASELINE = RUNS / "arithmetic_baseline.eval"
CANDIDATE = RUNS / "arithmetic_candidate.eval"
NAMES = ("baseline", "candidate")


pytestmark = pytest.mark.usefixtures("cache_dir")


def three_turns(middle_tool: str = "Bash", status: str = "success") -> Transcript:
    """Plan, build (one call of ``middle_tool``), test: each turn a prompt, calls, an answer."""
    entries: list[Any] = []
    for n, prompt in enumerate(("plan the change", "build it", "run the tests")):
        entries.append(UserMessage(text=prompt))
        if n == 1:
            entries.append(ToolCall(call_id=f"c{n}", name=middle_tool, status=status,
                                    result=ToolResult(text="x\n" * 50)))  # fmt: skip
        entries.append(ToolCall(call_id=f"r{n}", name="Read", description="README.md",
                                status="success", result=ToolResult(text="# readme")))  # fmt: skip
        entries.append(AssistantText(text=f"Answer {n}."))
    return Transcript(entries)


def view_of(a: Transcript, b: Transcript, **settings: Any) -> compare_nodes.CompareView:
    snapshot = DisplaySettings(**settings).snapshot()
    return build_compare_view(compare_runs(a, b, snapshot), snapshot, names=NAMES)


def unprefixed(value: Any) -> Any:
    """A side's nodes with the side's key prefix taken off every key."""
    if isinstance(value, list):
        return [unprefixed(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {name: unprefixed(item) for name, item in value.items()}
    if isinstance(out.get("key"), str):
        out["key"] = re.sub(r"\b[ab]/", "", out["key"])
    return out


# --- the view ------------------------------------------------------------------------------------


def test_B3_each_side_is_drawn_with_the_nodes_its_own_transcript_view_has() -> None:
    transcript = demo_session()
    view = view_of(transcript, demo_session())
    assert view["first"] is None  # the same run twice: nothing differs, nothing opens
    own = build_view_model(transcript)
    for side in ("a", "b"):
        nodes = [node for pair in view["pairs"] for node in pair[side] or []]
        assert unprefixed(nodes) == own["nodes"]
        prefixes = {keys.parse(n["key"]).prefix for n in iter_nodes({"nodes": nodes})}
        assert {prefix.split("/")[0] for prefix in prefixes} == {side}
    assert view["sides"][0]["session"] == own["session"]
    _check_typed(view, compare_nodes.CompareView, "view")


def test_B3_pair_headers_state_what_differs_and_the_first_difference_opens() -> None:
    view = view_of(three_turns(), three_turns("Edit", "error"))
    headers = [pair["header"] for pair in view["pairs"]]
    assert [h["status"] for h in headers] == ["same", "differs", "same"]
    assert headers[1]["text"] == (
        "Turn 2 · Differs · Bash 1 → 0, Edit 0 → 1 · failed tools 0 → 1 · same answer"
    )
    assert [p["name"] for p in headers[1]["parts"] if p["changed"]] == ["tools", "failed"]
    assert view["summary"] == "3 turns aligned · 1 differs"
    # The first pair that differs opens on both sides; the others keep their defaults (P-8).
    opened = [
        [node["process"]["open"] for node in pair[side] or [] if node["kind"] == "turn"]
        for pair in view["pairs"]
        for side in ("a", "b")
    ]
    assert opened == [[False], [False], [True], [True], [False], [False]]
    assert view["first"] == view["pairs"][1]["key"]


def test_B3_opening_a_process_is_linked_to_its_counterpart_both_ways() -> None:
    view = view_of(three_turns(), three_turns())
    links = view["links"]
    for pair in view["pairs"]:
        [turn_a] = [n for n in pair["a"] or [] if n["kind"] == "turn"]
        [turn_b] = [n for n in pair["b"] or [] if n["kind"] == "turn"]
        key_a, key_b = turn_a["process"]["key"], turn_b["process"]["key"]
        assert (links[key_a], links[key_b]) == (key_b, key_a)


def test_B3_a_turn_with_no_counterpart_is_a_gap_on_the_other_side() -> None:
    longer = three_turns()
    longer.append(UserMessage(text="write the changelog"))
    longer.append(AssistantText(text="Written."))
    view = view_of(three_turns(), longer)
    last = view["pairs"][-1]
    assert last["a"] is None
    assert last["b"] is not None
    assert last["header"]["text"] == "Turn 4 · Only in candidate · Completed · 0 tools"
    assert view["sides"][0]["gap"] == "No counterpart in baseline"
    assert view["summary"] == "3 turns aligned · 0 differ · 1 only in candidate"


def test_B3_the_comparison_speaks_the_readers_language() -> None:
    view = view_of(three_turns(), three_turns("Edit"), locale="zh")
    assert view["pairs"][1]["header"]["label"] == "第 2 轮"
    assert view["summary"] == "对齐 3 轮 · 1 轮有差异"


# --- the static renderings (W-4) ---------------------------------------------------------------


def test_B3_the_html_twin_is_two_columns_of_details_with_no_script() -> None:
    view = view_of(three_turns(), three_turns("Edit"))
    page = render_compare_html(view, title="plan vs plan")
    assert NO_SCRIPT in page  # its policy allows no script at all
    assert "<script" not in page
    assert page.count('class="tf-cols"') == 3
    assert page.count('<div class="tf-col" data-side="a">') == 3
    # Each side's turns are the transcript page's own <details>; the first difference is open.
    assert page.count('<details class="tf-process"') == 6
    assert page.count('<details class="tf-process" data-key="a/process:turn:e3" open>') == 1
    assert render_compare_html(view, title="plan vs plan") == page  # deterministic
    fragment = render_compare_html(view, standalone=False)
    assert fragment.startswith('<div class="turnfold"')
    assert COMPARE_CSS in fragment


def test_B3_the_text_twin_reads_pair_by_pair_under_each_runs_name() -> None:
    text = render_compare_text(view_of(three_turns(), three_turns("Edit")))
    lines = text.splitlines()
    at = lines.index("Turn 2 · Differs · Bash 1 → 0, Edit 0 → 1 · same answer")
    assert lines[at + 1 : at + 4] == ["  baseline", "    User", "      build it"]
    assert "  candidate" in lines[at:]
    assert "Answer 1." in text
    assert render_compare_text(view_of(three_turns(), three_turns("Edit"))) == text


class _CompareAudit(Audit):
    """The transcript page's audit, plus the attributes a comparison adds (checked here)."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        kept = []
        for name, value in attrs:
            if name in ("data-side", "data-status"):
                assert re.fullmatch(r"[a-z-]+", value or ""), (name, value)
            elif name == "id" or (name == "href" and (value or "").startswith("#")):
                # A pair's anchor, or a tool row's (its side's key, as the transcript page's).
                assert re.fullmatch(r"#?(?:pair-\d+|call-[ab]/e\d+(?:/e\d+)*)", value or ""), (
                    name,
                    value,
                )
            else:
                kept.append((name, value))
        super().handle_starttag(tag, kept)


@pytest.mark.parametrize("payload", HOSTILE)
def test_X1_hostile_content_is_inert_on_both_sides(payload: str) -> None:
    hostile = hostile_transcript(payload)
    view = view_of(hostile, hostile_transcript(payload + " "), full_detail=True)
    for page in (render_compare_html(view, title=payload),
                 render_compare_html(view, standalone=False)):  # fmt: skip
        assert not re.search(r"<\s*/?\s*script", page, re.I)
        audit = _CompareAudit()
        audit.feed(page)
        audit.close()
        assert audit.problems == []
        (css,) = re.findall(r"<style>(.*?)</style>", page, re.S)
        assert css.strip() in (
            (turnfold_css(standalone=True) + COMPARE_CSS).strip(),
            (turnfold_css(standalone=False) + COMPARE_CSS).strip(),
        )


# --- the widget ---------------------------------------------------------------------------------


def _sent(widget: CompareWidget) -> list[Any]:
    sent: list[Any] = []
    widget.comm.send = lambda data=None, metadata=None, buffers=None: sent.append(data)
    return sent


def _custom(sent: list[Any], kind: str) -> list[dict[str, Any]]:
    found = [m["content"] for m in sent if isinstance(m, dict) and m.get("method") == "custom"]
    return [m for m in found if m.get("type") == kind]


def test_B3_the_compare_view_is_its_own_bundle_styled_as_the_transcript_view() -> None:
    esm = CompareWidget._esm
    assert "export default" in str(esm) or str(getattr(esm, "_path", esm)).endswith("compare.js")
    assert COMPARE_CSS in CompareWidget._css
    assert ".tf-ansi-fg1" in CompareWidget._css  # content fragments, as the transcript's


def test_B3_two_transcripts_are_sent_with_closed_processes_deferred_and_fetched_on_demand(
    widgets: list[CompareWidget],
) -> None:
    widget = turnfold.compare(three_turns(), three_turns("Edit"), names=NAMES)
    widgets.append(widget)
    wire = widget._compare
    assert wire is not None
    first, second = wire["pairs"][0], wire["pairs"][1]
    closed = next(n for n in first["a"] if n["kind"] == "turn")["process"]
    opened = next(n for n in second["a"] if n["kind"] == "turn")["process"]
    assert (closed["deferred"], closed["children"]) == (True, [])
    assert "deferred" not in opened
    assert opened["children"]
    sent = _sent(widget)
    widget._handle_custom_msg({"type": "content", "view": "v", "keys": [closed["key"]]}, [])
    [reply] = _custom(sent, "content")
    assert reply["to"] == "v"
    assert reply["nodes"][closed["key"]]["children"]
    tool = next(n for n in iter_nodes({"nodes": second["b"]}) if n["kind"] == "tool")
    widget._handle_custom_msg({"type": "output", "view": "v", "key": tool["key"]}, [])
    [output] = _custom(sent, "output")
    assert output["text"] == "x\n" * 50  # the whole output, from the right side's transcript
    _WIRE["on"] = True
    try:
        _check(wire, compare_nodes.CompareView, "_compare")
    finally:
        _WIRE["on"] = False


def test_B3_the_folds_the_reader_opened_are_sent_with_their_content(
    widgets: list[CompareWidget],
) -> None:
    widget = CompareWidget(three_turns(), three_turns())
    widgets.append(widget)
    key = "b/process:turn:e3"
    widget._folds = {"compare": {"b": {key: "open"}}}
    assert widget.view is not None
    wired = widget._wire(widget.view)
    process = next(n for n in wired["pairs"][1]["b"] if n["kind"] == "turn")["process"]
    assert process["key"] == key
    assert process["children"]
    assert "deferred" not in process


def test_B3_messages_of_the_view_are_checked_and_odd_ones_ignored(
    widgets: list[CompareWidget],
) -> None:
    widget = CompareWidget(three_turns(), three_turns())
    widgets.append(widget)
    sent = _sent(widget)
    for nonsense in ("text", {"type": "select", "key": "x"}, {"type": "page", "page": "two"},
                     {"type": "output", "view": "v", "key": "c/e1"}):  # fmt: skip
        widget._handle_custom_msg(nonsense, [])
    assert [m["text"] for m in _custom(sent, "output")] == [""]
    with pytest.raises(TypeError, match="two transcripts or two corpora"):
        CompareWidget(three_turns(), turnfold.scan([three_turns()]))
    with pytest.raises(TypeError, match=r"no argument 'mode'; give display settings as"):
        CompareWidget(three_turns(), three_turns(), mode="flat")


def test_B3_two_eval_logs_show_the_regressions_first_and_open_one_side_by_side(
    widgets: list[CompareWidget],
) -> None:
    # Issue 18's "done when": one table of which samples regressed, each opening its two runs
    # side by side with the first differing turn open.
    widget = turnfold.compare(BASELINE, CANDIDATE, names=NAMES)
    widgets.append(widget)
    table = widget._table
    assert table is not None
    assert [(r["key"], r["change_label"], r["a"], r["b"]) for r in table["rows"]] == [
        ("arithmetic · 2/1", "Regressed", "Passed · score 1", "Failed · score 0"),
        ("arithmetic · 4/1", "Improved", "Failed · score 0", "Passed · score 1"),
    ]
    assert table["summary"] == "1 regressed · 1 improved · 2 the same"
    assert [t["text"].split(" · ")[:2] for t in table["totals"]] == [
        ["4 items", "pass rate 75%"], ["4 items", "pass rate 75%"],
    ]  # fmt: skip
    assert table["selected"] == "arithmetic · 2/1"  # the first regression is open from the start

    widget._handle_custom_msg({"type": "select", "key": "arithmetic · 4/1"}, [])
    view = widget.view
    assert view is not None
    assert widget._table["selected"] == view["key"] == "arithmetic · 4/1"
    [pair] = view["pairs"]
    assert pair["header"]["text"].startswith(
        "Turn 1 · Differs · lookup 1 → 0, add 0 → 1 · failed tools 1 → 0"
    )
    assert all(
        node["process"]["open"] for side in "ab" for node in pair[side] if node["kind"] == "turn"
    )
    _check_typed(dict(widget._table), compare_nodes.PairTable, "_table")


def test_B3_the_table_is_paged_by_python_and_sends_only_its_page(
    widgets: list[CompareWidget],
) -> None:
    rows_a = [Transcript([UserMessage(text=f"q{n}"), AssistantText(text="yes")],
                         metadata={"outcome": "pass", "sample": n}) for n in range(60)]  # fmt: skip
    rows_b = [Transcript([UserMessage(text=f"q{n}"), AssistantText(text="no")],
                         metadata={"outcome": "fail", "sample": n}) for n in range(60)]  # fmt: skip
    widget = turnfold.compare(turnfold.scan(rows_a), turnfold.scan(rows_b))
    widgets.append(widget)
    assert widget._table is not None
    assert (len(widget._table["rows"]), widget._table["pages"]) == (50, 2)
    assert widget._table["range_label"] == "1–50 of 60"
    widget._handle_custom_msg({"type": "page", "page": 1}, [])
    assert [r["key"] for r in widget._table["rows"]] == [str(n) for n in range(50, 60)]
    widget._handle_custom_msg({"type": "select", "key": "3"}, [])
    assert widget._table["page"] == 0  # the page of the chosen row


def test_W4_the_bundle_carries_deterministic_text_and_html(widgets: list[CompareWidget]) -> None:
    widget = turnfold.compare(BASELINE, CANDIDATE, names=NAMES)
    widgets.append(widget)
    data, _ = widget._repr_mimebundle_()
    again, _ = widget._repr_mimebundle_()
    assert (data["text/plain"], data["text/html"]) == (again["text/plain"], again["text/html"])
    plain = data["text/plain"]
    assert plain.splitlines()[3:6] == [
        "Sample            Change     baseline          candidate",
        "arithmetic · 2/1  Regressed  Passed · score 1  Failed · score 0",
        "arithmetic · 4/1  Improved   Failed · score 0  Passed · score 1",
    ]
    assert "Turn 1 · Differs" in plain
    html = data["text/html"]
    assert '<a class="tf-cmp-pick" href="#pair-1">arithmetic · 2/1</a>' in html
    assert "<script" not in html


# --- the command line (W-6) -------------------------------------------------------------------


def test_B3_render_compare_writes_the_table_and_each_changed_pair(tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    assert main(["render", "--compare", str(BASELINE), str(CANDIDATE), "-o", str(target)]) == 0
    page = target.read_text("utf-8")
    assert NO_SCRIPT in page  # its policy allows no script at all
    assert "<script" not in page
    assert "<title>arithmetic_baseline.eval vs arithmetic_candidate.eval</title>" in page
    assert page.index("Regressed") < page.index("Improved")
    assert page.count('class="tf-cmp-section"') == 2
    assert page.count('class="tf-pair"') == 2


def test_B3_render_compare_of_two_transcripts_writes_them_side_by_side(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(three_turns().dump(), encoding="utf-8")
    b.write_text(three_turns("Edit").dump(), encoding="utf-8")
    assert main(["render", "--compare", str(a), str(b)]) == 0
    page = (tmp_path / "a-vs-b.html").read_text("utf-8")
    assert page.count('class="tf-pair"') == 3
    assert "Bash 1 → 0, Edit 0 → 1" in page


def test_B3_render_compare_says_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["render", "--compare", str(tmp_path / "none.jsonl"), str(BASELINE)]) == 2
    assert "none.jsonl: no such file or folder" in capsys.readouterr().err
    single = tmp_path / "one.json"
    single.write_text(three_turns().dump(), encoding="utf-8")
    assert main(["render", "--compare", str(single), str(BASELINE)]) == 2
    assert "two transcripts or two corpora" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["render", str(BASELINE), "--compare", str(BASELINE), str(CANDIDATE)])


def test_B3_compare_is_public() -> None:
    assert turnfold.compare is turnfold.compare_widget.compare
    assert "compare" in turnfold.__all__
    assert "CompareWidget" in turnfold.__all__
    assert json.dumps(compare_nodes.typescript())  # the JS declarations generate
