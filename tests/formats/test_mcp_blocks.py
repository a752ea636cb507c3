"""MCP tool results read alike by every reader (:mod:`turnfold.formats.mcp`): Codex and OpenHands
show each content block kind the same way, and warn of a block type MCP does not define.

The Codex rollout is the real CLI's (0.171.0, tests/agents) calling a stdio MCP server whose
tools return one block kind each; the OpenHands trajectory holds mcp 1.16's
``CallToolResult.model_dump(mode="json")`` as ``call_tool_mcp`` writes it (tests/fixtures/
SOURCES.md). The shapes no run here produced (an audio block a model takes, the end event's
and the item's results, older rollouts' JSON) are written as codex-rs writes them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold import ToolCall, Transcript

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CODEX = FIXTURES / "codex" / "v0.171_mcp-content-blocks.jsonl"
OPENHANDS = FIXTURES / "harnesses/openhands/openhands_trajectory_hand-made_mcp-content-blocks.json"
TS = "2026-12-05T04:10:52.670Z"
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
    "rkJggg=="
)
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="

#: What each block kind shows as, whichever reader read it.
LINK = "[attachment: file:///srv/docs/guide.md · text/markdown · 2.0 KB]"
BLOB = "[attachment: file:///srv/docs/report.pdf · application/pdf · 9 B]"
AUDIO = "[attachment: audio · audio/wav · 44 B]"
EMBEDDED = "embedded notes"
#: Codex 0.171 gives a model without audio input a text block in place of the audio.
NO_AUDIO = "<audio content omitted because you do not support audio input>"

BLOCKS = [
    {"type": "text", "text": "Release notes"},
    {"type": "image", "data": PNG, "mimeType": "image/png"},
    {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
    {"type": "resource_link", "uri": "file:///srv/docs/guide.md", "name": "guide.md",
     "mimeType": "text/markdown", "size": 2048},
    {"type": "resource", "resource": {"uri": "file:///srv/docs/notes.txt",
                                      "mimeType": "text/plain", "text": EMBEDDED}},
    {"type": "resource", "resource": {"uri": "file:///srv/docs/report.pdf",
                                      "mimeType": "application/pdf", "blob": "JVBERi0xLjQK"}},
]  # fmt: skip
SHOWN = "\n".join(["Release notes", AUDIO, LINK, EMBEDDED, BLOB])


def calls(transcript: Transcript) -> dict[str, ToolCall]:
    return {c.name.rsplit("__", 1)[-1]: c for c in transcript.tool_calls()}


def shown(call: ToolCall) -> tuple[str | None, list[str], Any]:
    result = call.result
    assert result is not None, call
    return result.text, [i.media_type for i in result.images], result.structured


# --- real session files ------------------------------------------------------------------------


CODEX_CALLS = [
    ("text_block", "plain text from the server", [], "success"),
    ("image_block", "a pixel:", ["image/png"], "success"),
    ("audio_block", NO_AUDIO, [], "success"),
    ("link_block", LINK, [], "success"),
    ("embedded_text", EMBEDDED, [], "success"),
    ("embedded_blob", BLOB, [], "success"),
    ("mixed_with_image", f"[attachment: file:///srv/docs/guide.md]\n{NO_AUDIO}", ["image/png"],
     "success"),
    ("structured", '{"open":3}', [], "success"),  # the structuredContent the model read
    ("failing", "no such page", [], "error"),  # isError
]  # fmt: skip


@pytest.mark.parametrize(
    ("tool", "text", "images", "status"), CODEX_CALLS, ids=[c[0] for c in CODEX_CALLS]
)
def test_codex_rollout_shows_each_mcp_block_kind(
    tool: str, text: str, images: list[str], status: str
) -> None:
    """Codex hands a link or an embedded resource to the model as the block's JSON in an
    ``input_text`` part: it is read as the block it is, not shown as escaped JSON."""
    transcript = turnfold.load(CODEX)
    call = calls(transcript)[tool]
    assert call.name == f"mcp__blocks__{tool}"
    assert shown(call)[:2] == (text, images)
    assert call.status == status
    assert transcript.warnings == []


OPENHANDS_CALLS = [
    ("fetch_page", "Release notes, page 1 of 3", ["image/png"], None, "success"),
    ("play_sample", AUDIO, [], None, "success"),
    ("list_docs", LINK, [], None, "success"),
    ("read_notes", EMBEDDED, [], None, "success"),
    ("get_report", BLOB, [], None, "success"),
    ("count_issues", '{"open": 3}', [], {"open": 3}, "success"),
    ("search", "index unavailable", [], None, "error"),
    ("fetch_slow_page", 'Tool "fetch_slow_page" timed out after 30 seconds', [], None,
     "error"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("tool", "text", "images", "structured", "status"),
    OPENHANDS_CALLS,
    ids=[c[0] for c in OPENHANDS_CALLS],
)
def test_openhands_trajectory_shows_each_mcp_block_kind(
    tool: str, text: str, images: list[str], structured: Any, status: str
) -> None:
    transcript = turnfold.load(OPENHANDS)
    call = calls(transcript)[tool]
    assert shown(call) == (text, images, structured)
    assert call.status == status
    assert transcript.warnings == []


# --- Codex: the other shapes it writes ----------------------------------------------------------


def rollout(*payloads: tuple[str, dict[str, Any]]) -> Transcript:
    meta = {"id": "s1", "timestamp": TS, "cwd": "/work", "cli_version": "0.171.0"}
    records = [("session_meta", meta), *payloads]
    text = "".join(
        json.dumps({"timestamp": TS, "type": kind, "payload": payload}) + "\n"
        for kind, payload in records
    )
    return turnfold.load(text, format="codex")


def mcp_call(call_id: str = "m1", tool: str = "fetch") -> tuple[str, dict[str, Any]]:
    return ("response_item", {"type": "function_call", "name": tool, "namespace": "mcp__docs",
                              "arguments": "{}", "call_id": call_id})  # fmt: skip


def end_event(result: dict[str, Any], call_id: str = "m1") -> tuple[str, dict[str, Any]]:
    """``mcp_tool_call_end`` (protocol.rs ``McpToolCallEndEvent``: ``Result`` as Ok / Err)."""
    invocation = {"server": "docs", "tool": "fetch", "arguments": {}}
    return ("event_msg", {"type": "mcp_tool_call_end", "call_id": call_id,
                          "invocation": invocation, "duration": {"secs": 0, "nanos": 1_000_000},
                          "result": {"Ok": result}})  # fmt: skip


def output(value: Any, call_id: str = "m1") -> tuple[str, dict[str, Any]]:
    return ("response_item", {"type": "function_call_output", "call_id": call_id, "output": value})


def test_codex_end_event_shows_every_block_kind_and_structured_content() -> None:
    """A call the end event settles (a code-mode script's, or one whose output is not
    written): its ``CallToolResult`` as OpenHands shows one."""
    result = {"content": BLOCKS, "structuredContent": {"open": 3}}
    call = calls(rollout(mcp_call(), end_event(result)))["fetch"]
    assert shown(call) == (SHOWN, ["image/png"], {"open": 3})
    assert call.status == "success"


def test_codex_mcp_item_shows_every_block_kind() -> None:
    """A paginated rollout's ``McpToolCall`` item (items.rs) holds the same result."""
    item = {"type": "McpToolCall", "id": "m1", "server": "docs", "tool": "fetch",
            "arguments": {}, "status": "completed", "result": {"content": BLOCKS}}  # fmt: skip
    call = calls(rollout(mcp_call(), ("event_msg", {"type": "item_completed", "item": item})))
    assert shown(call["fetch"]) == (SHOWN, ["image/png"], None)


def test_codex_output_reads_blocks_written_as_json_text() -> None:
    """``convert_mcp_content_to_items`` writes a block that is neither text nor image as its
    JSON in an ``input_text`` part (audio reaches it for a model that takes audio); a tool's own
    JSON text stays text."""
    written = [json.dumps(b, separators=(",", ":")) for b in BLOCKS[2:]]
    own = '{"type":"User","login":"octocat"}'
    parts = [
        {"type": "input_text", "text": "Wall time: 0.0019 seconds\nOutput:"},
        {"type": "input_text", "text": "Release notes"},
        *({"type": "input_text", "text": text} for text in written),
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "high"},
        {"type": "input_text", "text": own},
    ]
    call = calls(rollout(mcp_call(), output(parts)))["fetch"]
    assert shown(call) == (f"{SHOWN}\n{own}", ["image/png"], None)


def test_codex_legacy_output_of_blocks_as_a_json_string_shows_each_kind() -> None:
    """Rollouts of mid-2025: ``serde_json::to_string(&result.content)`` as the output."""
    call = calls(rollout(mcp_call(), output(json.dumps(BLOCKS))))["fetch"]
    assert shown(call) == (SHOWN, ["image/png"], None)


def test_codex_warns_once_of_a_block_type_mcp_does_not_define() -> None:
    """A block of an unknown type is shown as its JSON (nothing lost), and said: one warning
    per type, its line accounted as warned about."""
    video = {"type": "video", "uri": "file:///srv/clip.mp4"}
    result = {"content": [{"type": "text", "text": "a clip:"}, video]}
    transcript = rollout(
        mcp_call("m1"), end_event(result, "m1"), mcp_call("m2"), end_event(result, "m2")
    )
    first, second = transcript.tool_calls()
    assert first.result is not None
    assert first.result.text == f"a clip:\n{json.dumps(video, indent=2)}"
    assert second.result == first.result
    assert [w.reason for w in transcript.warnings] == [
        "unknown MCP content block type 'video' shown as JSON"
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["event_msg/mcp_tool_call_end"] == {
        "warned": 1,
        "mapped": 1,
    }


# --- OpenHands ----------------------------------------------------------------------------------


def test_openhands_warns_once_of_a_block_type_mcp_does_not_define() -> None:
    video = {"type": "video", "uri": "file:///srv/clip.mp4", "annotations": None, "meta": None}
    content = json.dumps({"meta": None, "content": [video], "structuredContent": None,
                          "isError": False})  # fmt: skip
    events: list[dict[str, Any]] = []
    for index in range(2):
        metadata = {"function_name": "clip", "tool_call_id": f"toolu_{index}"}
        events += [
            {"id": 2 * index, "source": "agent", "action": "call_tool_mcp",
             "tool_call_metadata": metadata, "args": {"name": "clip", "arguments": {}}},
            {"id": 2 * index + 1, "cause": 2 * index, "source": "agent", "observation": "mcp",
             "content": content, "extras": {"name": "clip", "arguments": {}}},
        ]  # fmt: skip
    transcript = turnfold.load(events)
    first, second = transcript.tool_calls()
    assert first.result is not None
    assert first.result.text == json.dumps(video, indent=2)
    assert second.result == first.result
    assert [w.reason for w in transcript.warnings] == [
        "unknown MCP content block type 'video' shown as JSON"
    ]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["observation/mcp"] == {"warned": 1, "mapped": 1}


def test_X2_an_mcp_output_part_that_reads_as_nothing_makes_no_line() -> None:
    """An ``input_image`` without its data reads as nothing: no empty line between the texts
    around it, as the Responses reader shows the same parts."""
    from turnfold.formats.codex import _mcp_part
    from turnfold.formats.common import text_and_images

    parts = [
        {"type": "input_text", "text": "a"},
        {"type": "input_image"},
        {"type": "input_text", "text": "b"},
    ]
    assert text_and_images(parts, _mcp_part) == ("a\nb", [])
