"""What the session browser's rows say, kernel side (spec B-1): a table source's model and agent
columns fill the browser's Model and Agent columns, and an unreadable file's row names the file.

The view draws these cells as sent; ``tests/browser/test_widget_qa_browser.py`` checks them in
a real JupyterLab.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from turnfold.browser import SessionBrowser
from turnfold.corpus import scan
from turnfold.corpus.columns import column as column_of
from turnfold.corpus.columns import row_of, unreadable
from turnfold.formats import FORMATS

# Every test its own index, never the user's.
pytestmark = pytest.mark.usefixtures("cache_dir")


TREE = Path(__file__).parent / "fixtures" / "corpus"


def cells(browser: SessionBrowser, name: str) -> list[str]:
    """The text of every shown row's cell in the column ``name``."""
    at = [head["name"] for head in browser._page["columns"]].index(name)
    return [row["cells"][at]["text"] for row in browser._page["rows"]]


def _runs(extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"messages": [{"role": "user", "content": f"Task {i}"},
                      {"role": "assistant", "content": "Done."}], **more}
        for i, more in enumerate(extra)
    ]  # fmt: skip


def test_B1_a_dataframe_s_model_and_agent_name_fill_the_model_and_agent_columns(
    browsers: list[SessionBrowser],
) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(_runs([
        {"model": "gpt-4o", "agent_name": "solver"},
        {"model": "claude-sonnet-4", "agent_name": "critic"},
        {"model": None, "agent_name": None},
    ]))  # fmt: skip
    browser = SessionBrowser(scan(frame, workers=1))
    browsers.append(browser)
    assert cells(browser, "model") == ["gpt-4o", "claude-sonnet-4", ""]
    assert cells(browser, "agent") == ["solver", "critic", ""]
    # The filters offer them, and keep what they say.
    controls = {control["column"]: control for control in browser._choices["controls"]}
    assert {option["value"] for option in controls["agent"]["options"]} == {"solver", "critic"}
    assert {option["value"] for option in controls["model"]["options"]} == {
        "gpt-4o", "claude-sonnet-4",
    }  # fmt: skip
    browser.query = {"filters": [{"column": "model", "op": "==", "value": "gpt-4o"}]}
    assert cells(browser, "agent") == ["solver"]


def test_B1_a_table_s_agent_column_wins_over_agent_name_and_a_run_s_own_model_over_both(
    browsers: list[SessionBrowser],
) -> None:
    pd = pytest.importorskip("pandas")
    runs = _runs([{"agent": "planner", "agent_name": "solver", "model": "gpt-4o"},
                  {"agent": None, "agent_name": "solver", "model": "gpt-4o"}])  # fmt: skip
    runs[0]["messages"][1]["model"] = "gpt-4o-mini"  # the response names the model it came from
    browser = SessionBrowser(scan(pd.DataFrame(runs), workers=1))
    browsers.append(browser)
    assert cells(browser, "agent") == ["planner", "solver"]
    assert cells(browser, "model")[1] == "gpt-4o"
    # The run opened from a row names the agent its row does.
    corpus = scan(pd.DataFrame(runs), workers=1)
    opened = [corpus[key].metadata.get("agent") for key in corpus.keys]
    assert opened == ["planner", "solver"]


def test_B1_an_unreadable_file_s_row_names_the_file_and_its_path_on_hover(
    browsers: list[SessionBrowser],
) -> None:
    browser = SessionBrowser(scan(TREE, workers=1))
    browsers.append(browser)
    at = [head["name"] for head in browser._page["columns"]].index("title")
    broken = {row["cells"][at]["text"]: row["cells"][at]["title"]
              for row in browser._page["rows"] if row.get("tone") == "error"}  # fmt: skip
    # The row's error is the load's, which names the file first: the cell names it once, and
    # counts the formats tried (the same sixty in every such row) that its tooltip names.
    tried, counted = f"; formats tried: {', '.join(FORMATS)}", f"; {len(FORMATS)} formats tried"
    said = {
        "empty.jsonl": "not a transcript (the source is empty)",
        "garbage.jsonl": "line 1: not a transcript (invalid JSON)",
    }
    assert broken == {f"⚠ {name}: {error}{counted}": f"{TREE / 'broken' / name}: {error}{tried}"
                      for name, error in said.items()}  # fmt: skip


def test_B1_an_unreadable_sample_of_a_file_of_many_runs_is_named_by_file_and_sample() -> None:
    shown = [column_of("title"), column_of("turns")]
    row = row_of({"key": "log.eval#3/1", "path": "/runs/log.eval", "sample": "3/1",
                  "error": "no messages", "title": None, "turns": None}, shown, "en")  # fmt: skip
    assert row["tone"] == "error"
    assert row["cells"][0] == {
        "text": "⚠ log.eval#3/1: no messages", "tone": "error",
        "title": "/runs/log.eval#3/1: no messages",
    }  # fmt: skip
    # A row of a DataFrame has no file: the error alone, as before.
    assert unreadable("no messages", None)["text"] == "⚠ no messages"
