"""Langfuse exports of more frameworks, and exports as Langfuse writes them now (spec H-4, L-4).

The fixtures are real exports, byte-for-byte copies of langfuse/langfuse's
``worker/src/__tests__/chatml/framework-traces/*.trace.json`` (MIT; commit 6275144): LangGraph
Python through the Langfuse SDK 3.3.0's callback handler, the Claude Agent SDK through
LangSmith's OTel exporter, Koog 0.3, OpenInference's google_genai, google_adk and llama_index
instrumentors. The other exports here are made from them by what Langfuse and its SDK write
instead, each step citing the code that writes it; the expected values are read from the
exports, never written down.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.formats import which_format
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.source import from_json_value
from turnfold.model import AssistantText, Thinking, ToolCall, Transcript, UserMessage
from turnfold.usage import transcript_tokens

LANGFUSE = Path(__file__).parent.parent / "fixtures" / "traces" / "langfuse"


def _export(name: str) -> dict[str, Any]:
    export: dict[str, Any] = json.loads((LANGFUSE / f"{name}.trace.json").read_text("utf-8"))
    return export


def _calls(transcript: Transcript) -> list[ToolCall]:
    return [e for e in transcript.entries if isinstance(e, ToolCall)]


def _texts(transcript: Transcript, kind: type[UserMessage | AssistantText]) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, kind)]


def _seen(transcript: Transcript) -> list[tuple[Any, ...]]:
    """What a reader sees of a transcript: each entry's kind and content, each call's id,
    name, arguments, status and result."""
    seen: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result is not None else None
            seen.append(("call", entry.call_id, entry.name, entry.args, entry.status, result))
        elif isinstance(entry, UserMessage | AssistantText | Thinking):
            seen.append((type(entry).__name__, entry.text))
        else:
            seen.append((type(entry).__name__,))
    return seen


def _attributes(observation: dict[str, Any]) -> dict[str, Any]:
    attributes = json.loads(observation["metadata"]).get("attributes")
    return attributes if isinstance(attributes, dict) else {}


def _named(export: dict[str, Any], name: str) -> list[dict[str, Any]]:
    found = [o for o in export["observations"] if o["name"] == name]
    assert found
    return sorted(found, key=lambda o: o["startTime"])


# --- LangGraph Python through the Langfuse SDK ------------------------------------------------


def test_H4_langgraph_python_calls_are_named_and_settled_by_their_tool_message() -> None:
    """langfuse-python 3.3.0 writes an AI message's calls only in ``additional_kwargs``, the
    tools offered as ``tool`` messages of their definitions, and the tool's run as a SPAN whose
    output is the ToolMessage: one call, named, with its arguments and result."""
    export = _export("langgraph-python-2025-08-22")
    t = turnfold.load(export)
    [tool] = _named(export, "Web-Search")
    answer = json.loads(tool["output"])
    [call] = _calls(t)
    assert (call.call_id, call.name, call.args) == (
        answer["tool_call_id"],
        "Web-Search",
        {"query": "example"},
    )
    assert call.status == "success"
    assert call.result is not None
    assert call.result.text is not None
    # The tool returned a JSON list of one search result: shown whole, as the tool returned
    # it (a list of anything but content parts is the tool's value, not parts to join).
    assert json.loads(call.result.text) == json.loads(answer["content"])
    assert call.result.text.startswith("[")
    [*_, last] = _named(export, "ChatOpenAI")
    assert _texts(t, AssistantText) == [json.loads(last["output"])["content"]]
    assert t.warnings == []


def _langfuse_python_3_3_4(export: dict[str, Any]) -> dict[str, Any]:
    """The export as langfuse-python 3.3.4 and later writes it (langfuse/langchain/
    CallbackHandler.py): an AI message's calls also as LangChain's ``tool_calls``
    (``_convert_message_to_dict``, #1316), parsed from ``additional_kwargs`` as langchain-core's
    ``default_tool_parser`` parses them; a tool's run typed TOOL (3.3.1, #1290)."""
    later = copy.deepcopy(export)
    for observation in later["observations"]:
        if observation["type"] == "GENERATION":
            for key in ("input", "output"):
                value = json.loads(observation[key])
                messages = value if isinstance(value, list) else [value]
                for message in messages:
                    asked = (message.get("additional_kwargs") or {}).get("tool_calls")
                    if message.get("role") == "assistant" and asked:
                        message["tool_calls"] = [
                            {"name": c["function"]["name"], "args": json.loads(
                                c["function"]["arguments"]), "id": c["id"], "type": "tool_call"}
                            for c in asked
                        ]  # fmt: skip
                observation[key] = json.dumps(value)
        elif observation["name"] == "Web-Search":
            observation["type"] = "TOOL"
    return later


def test_H4_langchain_tool_calls_of_later_sdks_read_as_the_earlier_ones() -> None:
    export = _export("langgraph-python-2025-08-22")
    later = _langfuse_python_3_3_4(export)
    # The premise: the calls as LangChain's graph state holds them (the root span's output).
    [root] = _named(export, "LangGraph")
    [asked] = [
        m["tool_calls"] for m in json.loads(root["output"])["messages"] if m.get("tool_calls")
    ]
    generations = [json.loads(o["output"]) for o in _named(later, "ChatOpenAI")]
    assert generations[0]["tool_calls"] == asked
    assert _seen(turnfold.load(later)) == _seen(turnfold.load(export))


# --- the trace list ---------------------------------------------------------------------------


def _listed(export: dict[str, Any]) -> dict[str, Any]:
    """The trace as the trace list gives it (``GET /api/public/traces``: ``TraceWithDetails``
    in fern/apis/server/definition/commons.yml, its observations' ids only)."""
    trace = export["trace"]
    return {
        **{k: trace[k] for k in ("id", "timestamp", "name", "userId", "sessionId", "tags")},
        "htmlPath": f"/project/{trace['projectId']}/traces/{trace['id']}",
        "latency": 1.5,
        "totalCost": 0.0,
        "observations": [o["id"] for o in export["observations"]],
        "scores": [],
    }


def test_L4_a_trace_list_page_says_what_to_export_instead() -> None:
    export = _export("koog-2025-08-26")
    page = {
        "data": [_listed(export)],
        "meta": {"page": 1, "limit": 50, "totalItems": 1, "totalPages": 1},
    }
    assert which_format(from_json_value(page)) == "langfuse"
    trace_id = export["trace"]["id"]
    with pytest.raises(TranscriptFormatError, match=f"/api/public/traces/{trace_id}"):
        turnfold.load(page)


def test_L4_a_listed_trace_beside_a_whole_one_is_a_warning() -> None:
    koog, other = _export("koog-2025-08-26"), _export("llamaindex-2025-06-05")
    t = turnfold.load([koog, _listed(other)])
    assert [c.name for c in _calls(t)] == ["HelloTool", "ByeTool"]
    trace_id = other["trace"]["id"]
    assert any(f"/api/public/traces/{trace_id}" in w.reason for w in t.warnings), t.warnings


# --- exports since Langfuse took the attributes it read out of the metadata --------------------

#: What Langfuse takes out of a span's attributes once it has read its input and output
#: (packages/shared/src/server/otel/OtelIngestionProcessor.ts, ``potentialInputOutputKeys``
#: and the prefixes after it; langfuse/langfuse#9707, 14 October 2025).
_MOVED = frozenset({
    "langfuse.trace.input", "langfuse.trace.output", "langfuse.observation.input",
    "langfuse.observation.output", "ai.prompt.messages", "ai.prompt", "ai.toolCall.args",
    "ai.response.text", "ai.result.text", "ai.toolCall.result", "ai.response.object",
    "ai.result.object", "ai.response.toolCalls", "ai.result.toolCalls",
    "gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response",
    "gcp.vertex.agent.tool_call_args", "gcp.vertex.agent.tool_response", "prompt",
    "all_messages_events", "events", "mlflow.spanInputs", "mlflow.spanOutputs",
    "traceloop.entity.input", "traceloop.entity.output", "input.value", "output.value",
    "final_result", "pydantic_ai.all_messages", "gen_ai.system_instructions", "input", "output",
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
})  # fmt: skip
_MOVED_PREFIXES = ("gen_ai.prompt", "gen_ai.completion", "llm.input_messages",
                   "llm.output_messages")  # fmt: skip


def _as_langfuse_keeps_it_now(export: dict[str, Any]) -> dict[str, Any]:
    """The export as Langfuse writes it since #9707: the same input and output (read by the
    same rules), the attributes they were read from no longer in the metadata."""
    moved = copy.deepcopy(export)
    for observation in moved["observations"]:
        metadata = json.loads(observation["metadata"])
        attributes = metadata.get("attributes")
        if isinstance(attributes, dict):
            metadata["attributes"] = {
                k: v
                for k, v in attributes.items()
                if k not in _MOVED and not k.startswith(_MOVED_PREFIXES)
            }
            observation["metadata"] = json.dumps(metadata)
    return moved


@pytest.mark.parametrize(
    "name",
    [
        "google-gemini-2025-08-01",  # OpenInference: only input.value / output.value kept
        "openai-agents-2025-09-30",  # the Responses API's items and response
        "llamaindex-2025-06-05",  # a completion call
        "koog-2025-08-26",  # gen_ai.prompt.N.* made one list by Langfuse
    ],
)
def test_H4_an_export_keeping_only_input_and_output_reads_as_before(name: str) -> None:
    export = _export(name)
    now = _as_langfuse_keeps_it_now(export)
    kept = [_attributes(o) for o in now["observations"]]
    assert not any(k.startswith(("llm.input_messages", "gen_ai.prompt")) for a in kept for k in a)
    assert _seen(turnfold.load(now)) == _seen(turnfold.load(export))
    assert transcript_tokens(turnfold.load(now)).own == transcript_tokens(turnfold.load(export)).own


def _nested(attributes: dict[str, Any], prefix: str) -> Any:
    """Flattened attributes as Langfuse nests them (``convertKeyPathToNestedObject``: a numeric
    first segment makes a list, a numeric segment after it a list too)."""
    leaves = {k[len(prefix) + 1 :]: v for k, v in attributes.items() if k.startswith(prefix + ".")}
    root: Any = []
    for key, value in leaves.items():
        parts = key.split(".")
        node = root
        for part, after in itertools.pairwise(parts):
            index: Any = int(part) if isinstance(node, list) else part
            if isinstance(node, list):
                node.extend([None] * (index + 1 - len(node)))
            if node[index] is None if isinstance(node, list) else index not in node:
                node[index] = [] if after.isdigit() else {}
            node = node[index]
        last: Any = int(parts[-1]) if isinstance(node, list) else parts[-1]
        if isinstance(node, list):
            node.extend([None] * (last + 1 - len(node)))
        node[last] = value
    return root


def test_H4_openinference_messages_langfuse_nested_are_read_as_flattened() -> None:
    """A model span without ``input.value``: Langfuse read its ``llm.input_messages.*`` and
    ``llm.output_messages.*`` (in that order of its rules), nested them, and took them out."""
    export = _export("openai-agents-2025-09-30")
    nested = copy.deepcopy(export)
    for observation in nested["observations"]:
        attributes = _attributes(observation)
        if attributes.get("openinference.span.kind") == "LLM":
            observation["input"] = json.dumps(_nested(attributes, "llm.input_messages"))
            observation["output"] = json.dumps(_nested(attributes, "llm.output_messages"))
            metadata = json.loads(observation["metadata"])
            metadata["attributes"] = {
                k: v
                for k, v in attributes.items()
                if k not in _MOVED and not k.startswith(_MOVED_PREFIXES)
            }
            observation["metadata"] = json.dumps(metadata)
    [first, _] = _named(nested, "response")
    assert json.loads(first["input"])[0]["message"]["role"] == "system"  # the premise
    assert _seen(turnfold.load(nested)) == _seen(turnfold.load(export))


# --- Google GenAI and ADK: the model's role ``model`` -----------------------------------------


def test_H4_gemini_replies_of_role_model_are_the_assistants() -> None:
    export = _export("google-gemini-2025-08-01")
    t = turnfold.load(export)
    [call] = export["observations"]
    [candidate] = json.loads(_attributes(call)["output.value"])["candidates"]
    assert _texts(t, UserMessage) == ["What is Langfuse?"]
    assert _texts(t, AssistantText) == ["".join(p["text"] for p in candidate["content"]["parts"])]
    assert t.warnings == []


def test_H4_adk_reply_and_call_of_role_model_are_read() -> None:
    export = _export("google-adk-2025-08-28")
    t = turnfold.load(export)
    _, second = _named(export, "call_llm")
    [part] = json.loads(second["output"])["content"]["parts"]
    assert part["text"] in _texts(t, AssistantText)
    assert "say_hello" in [c.name for c in _calls(t)]
    assert not any("model" in w.reason for w in t.warnings), t.warnings
    request = json.loads(_attributes(second)["gcp.vertex.agent.llm_request"])
    assert t.metadata["system"] == request["config"]["system_instruction"]


# --- llama_index's completion API -------------------------------------------------------------


def test_H4_a_completion_calls_prompts_and_completion_are_its_messages() -> None:
    export = _export("llamaindex-2025-06-05")
    t = turnfold.load(export)
    [call] = _named(export, "OpenAI.complete")
    attributes = _attributes(call)
    assert _texts(t, UserMessage) == json.loads(attributes["llm.prompts"])
    assert _texts(t, AssistantText) == [attributes["output.value"]]
    tokens = transcript_tokens(t).own
    assert (tokens["input_tokens"], tokens["output_tokens"]) == (
        int(attributes["llm.token_count.prompt"]),
        int(attributes["llm.token_count.completion"]),
    )


# --- the Claude Agent SDK through LangSmith's OTel exporter ----------------------------------


def test_H4_langsmith_claude_agent_tool_use_blocks_are_calls_settled_by_tool_runs() -> None:
    export = _export("claude-agent-2025-12-22")
    t = turnfold.load(export)
    turns = [json.loads(o["output"]) for o in _named(export, "claude.assistant.turn")]
    asked = [b for turn in turns for b in turn["content"] if b["type"] == "tool_use"]
    runs = {json.dumps(json.loads(o["input"])["input"]): json.loads(o["output"])
            for o in _named(export, "mcp__weather__get_weather")}  # fmt: skip
    calls = _calls(t)
    assert sorted((c.call_id, c.name) for c in calls) == sorted((b["id"], b["name"]) for b in asked)
    for call in calls:
        [block] = [b for b in asked if b["id"] == call.call_id]
        assert call.args == block["input"]
        assert call.status == "success"
        assert call.result is not None
        [text] = runs[json.dumps(block["input"])]["content"]
        assert call.result.text == text["text"]
    replies = [b["text"] for turn in turns for b in turn["content"] if b["type"] == "text"]
    assert sorted(_texts(t, AssistantText)) == sorted(replies)
    [conversation] = _named(export, "claude.conversation")
    given = json.loads(conversation["input"])
    assert _texts(t, UserMessage) == [given["prompt"]]
    assert t.metadata["system"] == given["system"]
    # The integration wrote the later turns' history as dict(history): {"content": "role"}.
    unread = [o["id"] for o in export["observations"] if o["input"] == '{"content":"role"}']
    assert len(unread) == 3
    for observation in unread:
        assert any(observation in w.reason for w in t.warnings), t.warnings


# --- Koog ------------------------------------------------------------------------------------


def test_H4_koog_tool_call_lists_are_calls_and_their_results() -> None:
    """Koog 0.3 writes a message's calls as the JSON text of a list of Chat calls (role
    ``tool`` in the prompt, ``assistant`` in the completion), its results without a call id,
    and its tool spans without an operation."""
    export = _export("koog-2025-08-26")
    t = turnfold.load(export)
    tools = {_attributes(o)["gen_ai.tool.call.id"]: _attributes(o)
             for o in export["observations"] if o["name"].startswith("tool.")}  # fmt: skip
    first, _ = _named(export, "llm.chat")
    asked = [c for m in json.loads(first["output"]) for c in json.loads(m["content"])]
    calls = _calls(t)
    assert [(c.call_id, c.name) for c in calls] == [(a["id"], a["function"]["name"]) for a in asked]
    for call in calls:
        assert call.args == json.loads(tools[call.call_id]["input.value"])
        assert call.status == "success"
        assert call.result is not None
        assert call.result.text == tools[call.call_id]["output.value"]
    assert t.metadata["system"] == _attributes(first)["gen_ai.prompt.0.content"]
    assert _texts(t, UserMessage) == [_attributes(first)["gen_ai.prompt.1.content"]]
    _, last = _named(export, "llm.chat")
    assert _texts(t, AssistantText) == [_attributes(last)["gen_ai.completion.0.content"]]
    assert t.warnings == []
