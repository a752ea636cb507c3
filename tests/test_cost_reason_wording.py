"""Why a cost is missing reads the same wherever it is said (spec U-2, U-3, B-1, C-2, C-3).

A turn's header gives the reason in a few words and, on hover, in full: the same title the
session header's ``no_cost`` part has, in the notebook widget and in the exported page. The
session browser says a row's reason in the reader's language, as it says an outcome, while the
row keeps it in English for filters. Tokens a sub-agent spent with no model recorded are said to
be the sub-agent's in the turn that delegated, as the session header says it, and in the
corpus's rows (:data:`turnfold.cost.SUBAGENT_MODEL`).
"""

from __future__ import annotations

from typing import Any

import pytest

import turnfold
from turnfold.browser import SessionBrowser
from turnfold.cost import NoCost, session_cost_or_why, spend_of
from turnfold.model import AssistantText, SubAgent, ToolCall, Transcript, Usage, UserMessage
from turnfold.render.content import escape
from turnfold.render.html import render_html
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model, session_header
from turnfold.settings import DisplaySettings
from turnfold.transport import unpack_view
from turnfold.widget import TranscriptWidget

# Every scan its own index, never the user's.
pytestmark = pytest.mark.usefixtures("cache_dir")

WHEN = "2025-09-07T10:00:00Z"  # a day whose prices the table holds for gpt-4o
UNKNOWN = "no-such-model-xyz"
SUBAGENT = "sub-agent's model not recorded"


def _answer(model: str | None, entry_id: str = "a1", **tokens: int) -> AssistantText:
    counts = tokens or {"input_tokens": 1200, "output_tokens": 80}
    return AssistantText(id=entry_id, timestamp=WHEN, text="Done.", model=model,
                         usage=Usage(**counts))  # fmt: skip


def _session(*entries: Any, **metadata: Any) -> Transcript:
    asked = UserMessage(id="u1", timestamp=WHEN, text="Fix the failing test.")
    return Transcript([asked, *entries], metadata=metadata)


def _delegating(agent: SubAgent, **metadata: Any) -> Transcript:
    """A session whose one turn delegates to ``agent``, then answers with gpt-4o (priced)."""
    call = ToolCall(id="t1", timestamp=WHEN, name="Task", status="success", subagent=agent)
    return _session(call, _answer("gpt-4o", "a2", input_tokens=100, output_tokens=5), **metadata)


def _session_part(transcript: Transcript, locale: str = "en") -> dict[str, Any]:
    header = session_header(transcript, locale)
    assert header is not None
    [part] = [p for p in header["parts"] if p["name"] == "no_cost"]
    return dict(part)


def _turn_header(transcript: Transcript, locale: str = "en") -> dict[str, Any]:
    view = build_view_model(transcript, DisplaySettings(show_turn_usage=True, locale=locale))
    [turn] = [node for node in view["nodes"] if node["kind"] == "turn"]
    return dict(turn["header"])


# --- a turn's header: the reason in full on hover ----------------------------------------------


@pytest.mark.parametrize("locale", ["en", "zh"])
def test_U3_a_turns_reason_has_the_session_headers_full_wording_as_its_title(locale: str) -> None:
    transcript = _session(_answer(UNKNOWN))
    header = _turn_header(transcript, locale)
    part = _session_part(transcript, locale)
    assert header["usage"].endswith(part["text"])  # the few words, as before
    assert header["usage_title"] == part["title"]  # and the same full wording
    assert header["usage_title"] == NoCost("unknown_model", (UNKNOWN,)).title_in(locale)


def test_U3_a_priced_turn_or_one_without_tokens_has_no_reason_title() -> None:
    priced = _turn_header(_session(_answer("gpt-4o")))
    assert priced["usage"].startswith("1.3k tokens · ≈ $")
    assert "usage_title" not in priced
    silent = _turn_header(_session(AssistantText(id="a", timestamp=WHEN, text="Hi.")))
    assert "usage" not in silent
    assert "usage_title" not in silent


def test_U3_the_exported_page_shows_the_turns_reason_in_full_on_hover() -> None:
    transcript = _session(_answer(UNKNOWN))
    view = build_view_model(transcript, DisplaySettings(show_turn_usage=True))
    header = next(node["header"] for node in view["nodes"] if node["kind"] == "turn")
    page = render_html(view)
    title = escape(header["usage_title"])
    assert f'<span class="tf-fixed" title="{title}">{escape(header["usage"])}</span>' in page
    # The text rendering has no hover: it keeps the line as it was.
    assert f"Completed · 1.3k tokens · no cost: no price for {UNKNOWN}" in render_text(view)


def test_U3_the_widget_is_sent_the_turns_reason_in_full(widgets: list[Any]) -> None:
    transcript = _session(_answer(UNKNOWN))
    widget = TranscriptWidget(transcript, DisplaySettings(show_turn_usage=True))
    widgets.append(widget)
    sent = unpack_view(widget._view)["view"]
    [turn] = [node for node in sent["nodes"] if node["kind"] == "turn"]
    assert turn["header"]["usage_title"] == _session_part(transcript)["title"]


def test_X1_a_model_name_in_a_turns_reason_has_its_controls_made_visible() -> None:
    """The reason names the transcript's model; the widget sets it as text, so a bidi override
    in it would reorder the header line, as it would the session header's (made visible there)."""
    hostile = "evil\u202emodel"
    header = _turn_header(_session(_answer(hostile)))
    assert "\u202e" not in header["usage"]
    assert "\u202e" not in header["usage_title"]
    assert "evil" in header["usage_title"]
    assert "model" in header["usage_title"]


# --- the session browser: the reason in the reader's language ----------------------------------


def test_B1_the_browser_says_a_rows_reason_in_the_readers_language(
    browsers: list[SessionBrowser],
) -> None:
    corpus = turnfold.scan([_session(_answer(UNKNOWN)), _session(_answer(None)),
                            _session(_answer("gpt-4o"))], workers=1)  # fmt: skip
    # The rows keep the English text (NoCost.said), as a table's reader filters by it.
    stored = corpus.to_arrow().column("no_cost").to_pylist()
    assert stored == [f"no price for {UNKNOWN}", "model not recorded", None]
    browser = SessionBrowser(corpus, DisplaySettings(locale="zh"))
    browsers.append(browser)
    browser.query = {"sort": None, "descending": False, "columns": ["no_cost"], "filters": [],
                     "offset": 0}  # fmt: skip
    cells = [row["cells"][0] for row in browser._page["rows"]]
    assert [c["text"] for c in cells] == [f"{UNKNOWN} 无价格", "未记录模型", ""]
    unknown, unnamed = (NoCost.read(said) for said in stored[:2])
    assert unknown is not None
    assert unnamed is not None
    assert [c.get("title") for c in cells] == [unknown.title_in("zh"), unnamed.title_in("zh"),
                                               None]  # fmt: skip
    # A filter still reads the row's own text: the English words find the row.
    browser.query = {**browser.query, "filters": [
        {"column": "no_cost", "op": "contains", "value": "no price"}]}  # fmt: skip
    assert [row["cells"][0]["text"] for row in browser._page["rows"]] == [f"{UNKNOWN} 无价格"]


def test_B1_a_reason_this_version_does_not_word_is_shown_as_the_row_holds_it() -> None:
    from turnfold.corpus.columns import cell, column

    odd = "priced\u202eelsewhere"  # a row another turnfold wrote: its controls made visible
    shown = cell(column("no_cost"), odd, "zh")
    assert "title" not in shown
    assert "\u202e" not in shown["text"]
    assert shown["text"].startswith("priced")
    assert shown["text"].endswith("elsewhere")


# --- a sub-agent's model not recorded: one wording -----------------------------------------------


def _tool_agent() -> SubAgent:
    """An agent used as a tool: its tokens recorded, its transcript (and model) not."""
    return SubAgent(name="helper", transcript=None, usage=Usage(input_tokens=500, output_tokens=50))


def _agent_naming_no_model() -> SubAgent:
    """A sub-agent whose transcript names no model and records less than its total."""
    looked = AssistantText(id="c1", timestamp=WHEN, text="Looked.",
                           usage=Usage(input_tokens=100, output_tokens=10))  # fmt: skip
    child = Transcript([looked])
    return SubAgent(name="helper", transcript=child,
                    usage=Usage(input_tokens=500, output_tokens=50))  # fmt: skip


@pytest.mark.parametrize("agent", [_tool_agent, _agent_naming_no_model])
@pytest.mark.parametrize("locale", ["en", "zh"])
def test_U2_the_turn_that_delegated_says_it_is_the_sub_agents_model(
    agent: Any, locale: str
) -> None:
    transcript = _delegating(agent())
    header = _turn_header(transcript, locale)
    part = _session_part(transcript, locale)
    said = NoCost("subagent_unpriced")
    assert part["text"] == said.text_in(locale)
    assert header["usage"].endswith(part["text"])
    assert header["usage_title"] == part["title"] == said.title_in(locale)
    if locale == "en":
        assert part["text"] == f"no cost: {SUBAGENT}"


def test_U2_a_sub_agents_model_not_recorded_is_said_alike_in_every_row() -> None:
    transcript = _delegating(_tool_agent())
    assert spend_of(transcript, transcript.entries).no_cost == NoCost("subagent_unpriced")
    assert session_cost_or_why(transcript) == NoCost("subagent_unpriced")
    corpus = turnfold.scan([transcript], workers=1)
    assert corpus.to_arrow().column("no_cost").to_pylist() == [SUBAGENT]
    assert corpus.turns().column("no_cost").to_pylist() == [SUBAGENT]
    # A recorded cost that leaves the sub-agents out cannot add this one's: the same words.
    recorded = _delegating(_tool_agent(), cost_usd=0.01, cost_includes_subagents=False)
    assert session_cost_or_why(recorded) == NoCost("subagent_unpriced")


def test_U2_the_sessions_own_model_not_recorded_keeps_its_own_words() -> None:
    """No sub-agent: the model not recorded is the session's own, and said so."""
    transcript = _session(_answer(None))
    assert _turn_header(transcript)["usage"].endswith("no cost: model not recorded")
    assert _session_part(transcript)["text"] == "no cost: model not recorded"


def test_U2_where_neither_the_session_nor_its_sub_agent_names_a_model_both_are_said() -> None:
    """ "model not recorded" covers the session's own responses and the sub-agent's; saying the
    sub-agent's alone would read as if the session's own were priced."""
    call = ToolCall(id="t1", timestamp=WHEN, name="Task", status="success",
                    subagent=_agent_naming_no_model())  # fmt: skip
    transcript = _session(call, _answer(None, "a2", input_tokens=100, output_tokens=5))
    assert _turn_header(transcript)["usage"].endswith("no cost: model not recorded")
    assert _session_part(transcript)["text"] == "no cost: model not recorded"
    # Any other reason is said before the sub-agent's, as it is no less true.
    tool = ToolCall(id="t1", timestamp=WHEN, name="Task", status="success",
                    subagent=_tool_agent())  # fmt: skip
    unknown = _session(tool, _answer(UNKNOWN, "a2", input_tokens=100, output_tokens=5))
    assert session_cost_or_why(unknown) == NoCost("unknown_model", (UNKNOWN,))
    assert _turn_header(unknown)["usage"].endswith(f"no cost: no price for {UNKNOWN}")


def test_U2_a_sub_agent_whose_model_is_recorded_is_priced() -> None:
    child = Transcript([_answer("gpt-4o", "c1", input_tokens=100, output_tokens=10)])
    transcript = _delegating(SubAgent(name="helper", transcript=child,
                                      usage=Usage(input_tokens=500, output_tokens=50)))  # fmt: skip
    header = _turn_header(transcript)
    assert "≈ $" in header["usage"]
    assert "usage_title" not in header
    # A sub-agent that names no model, in a session that names one, is priced by it where it
    # records its responses, never where the total goes beyond them (whose model is not known).
    unnamed = _delegating(_agent_naming_no_model(), model="gpt-4o")
    assert _turn_header(unnamed)["usage"].endswith(f"no cost: {SUBAGENT}")
