"""A plain Responses API ``web_search_call`` is described by what it did (spec F-2, L-2.5), as
Codex describes the same item in its rollouts: a search by its query, an opened page by its
URL, a find in a page by its pattern and the page. It was described by its action's URL alone,
the pattern of a find lost, and a search of ``queries`` alone not described at all.

The items are made by the installed openai SDK's own types
(``openai.types.responses.response_function_web_search``: ``ActionSearch``,
``ActionOpenPage``, ``ActionFind``), passed as the objects and as a Response saved as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")

from openai.types.responses.response_function_web_search import (
    ActionFind,
    ActionOpenPage,
    ActionSearch,
    ActionSearchSource,
    ResponseFunctionWebSearch,
)

import turnfold
from turnfold.formats import openai_responses

SOURCE = ActionSearchSource(type="url", url="https://docs.example/tf")
#: Each action shape of the SDK, and how the call is described.
ACTIONS: list[tuple[Any, str | None]] = [
    (ActionSearch(type="search", query="TF query", sources=[SOURCE]), "TF query"),
    (ActionSearch(type="search", query="TF query", queries=["TF one", "TF two"]), "TF query"),
    # Queries alone: the first, and a sign of more.
    (ActionSearch(type="search", queries=["TF one", "TF two"]), "TF one ..."),
    (ActionSearch(type="search", queries=["TF one"]), "TF one"),
    (ActionOpenPage(type="open_page", url="https://a.example/p"), "https://a.example/p"),
    (
        ActionFind(type="find_in_page", url="https://a.example/p", pattern="TF-PATTERN"),
        "'TF-PATTERN' in https://a.example/p",
    ),
    # Nothing to say: every field of these is optional in the SDK's types.
    (ActionSearch(type="search"), None),
    (ActionOpenPage(type="open_page"), None),
]


def _call(number: int, action: Any) -> ResponseFunctionWebSearch:
    return ResponseFunctionWebSearch(
        id=f"ws_{number}", type="web_search_call", status="completed", action=action
    )


def _described(items: Any) -> list[tuple[str, str, str | None, str]]:
    transcript = turnfold.load(items)
    assert transcript.metadata["source_format"] == "openai-responses"
    assert transcript.warnings == []
    return [(c.call_id, c.name, c.description, c.status) for c in transcript.tool_calls()]


EXPECTED = [(f"ws_{n}", "web_search", d, "success") for n, (_, d) in enumerate(ACTIONS)]


def test_F2_web_search_calls_of_the_sdk_are_described_by_what_they_did() -> None:
    items = [_call(n, action) for n, (action, _) in enumerate(ACTIONS)]
    assert _described(items) == EXPECTED


def test_F2_a_saved_response_s_web_search_calls_are_described_alike(tmp_path: Path) -> None:
    output = [_call(n, action).model_dump(mode="json") for n, (action, _) in enumerate(ACTIONS)]
    path = tmp_path / "response.json"
    path.write_text(json.dumps({"id": "resp_1", "object": "response", "output": output}))
    assert _described(path) == EXPECTED


def test_F2_a_search_s_sources_are_its_result() -> None:
    (call,) = turnfold.load([_call(0, ACTIONS[0][0])]).tool_calls()
    assert call.result is not None
    assert "https://docs.example/tf" in (call.result.text or "")


def test_F2_the_older_sdk_s_find_action_is_described_as_a_find_in_page() -> None:
    """openai-python before 2.17.0 typed the action ``find`` (``ActionFind``'s
    ``type: Literal["find"]``, src/openai/types/responses/response_function_web_search.py)."""
    item = {"type": "web_search_call", "id": "ws_old", "status": "completed",
            "action": {"type": "find", "url": "https://a.example/p", "pattern": "TF"}}  # fmt: skip
    assert _described([item]) == [
        ("ws_old", "web_search", "'TF' in https://a.example/p", "success")
    ]


@pytest.mark.parametrize(
    ("action", "description"),
    [
        ({"type": "find_in_page", "url": "https://a.example", "pattern": "\nTF one\nTF two"},
         "'TF one TF two' in https://a.example"),
        ({"type": "find_in_page", "pattern": "TF"}, "'TF'"),
        ({"type": "search", "query": "TF\nquery"}, "TF query"),
        ({"type": "search", "queries": ["TF\tone"]}, "TF one"),
        ({"type": "other", "url": "https://a.example"}, None),
        ("not an action", None),
    ],
    ids=["pattern-lines", "no-url", "query-lines", "queries-lines", "other", "no-mapping"],
)  # fmt: skip
def test_F2_a_web_search_detail_is_one_line(action: Any, description: str | None) -> None:
    """The model's pattern and query may hold line breaks: a description is one line."""
    assert openai_responses.web_search_detail(action) == description
