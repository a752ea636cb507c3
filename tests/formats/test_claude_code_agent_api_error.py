"""A Claude Code Agent (Task) call whose sub-agent stopped on an API error (spec L-3: a failure
is shown as one).

Claude Code 2.1.79 hands back the text of the sub-agent's last message as the call's report
(``cli.js``: the Agent tool's ``finalizeAgentTool``, ``tZ8``, and its tool result, ``status:
"completed"``, with no ``is_error``). When the sub-agent's request fails, that last message is
the one Claude Code writes for the error (``R9``: ``isApiErrorMessage``, model ``<synthetic>``,
a usage of no token), so the report is ``API Error: 400 {…}`` and the call was shown as a
success. A report the model wrote that merely speaks of an API error stays a success.

The fixture (``tests/fixtures/claude-code/v2.1.79_hand-made_agent-api-error/``) is hand-made,
each record in the shape 2.1.79's ``cli.js`` writes it (``insertMessageChain``, ``g8``, ``PNq``,
the Anthropic SDK's ``APIError.makeMessage``): a session of two Agent calls, the first's
sub-agent stopped by a 400 on its second request, the second's report beginning with the same
words, and both sub-agents' files in ``subagents/``.
"""

from __future__ import annotations

import json
from pathlib import Path

import turnfold
from turnfold.formats.claude_code import failed_on_api_error
from turnfold.model import AssistantError, ToolCall

FIXTURE = (
    Path(__file__).parent.parent
    / "fixtures/claude-code/v2.1.79_hand-made_agent-api-error"
    / "7f9a2c41-3b8e-4d15-9c07-2e6b8d4a1f79.jsonl"
)
API_ERROR = (
    'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"messages.2.'
    "content.0.tool_result.content.0.image.source.base64.data: The image was specified using the "
    'image/png media type, but the image appears to be a image/jpeg image"},"request_id":'
    '"req_011CZ4mVb7sK2qTnW8xJd3Ry"}'
)


def _agents() -> tuple[ToolCall, ToolCall]:
    failed, reported = turnfold.load(FIXTURE).tool_calls()
    return failed, reported


def test_L3_an_agent_whose_report_is_its_sub_agent_s_api_error_failed() -> None:
    failed, _ = _agents()
    assert failed.status == "error"
    assert failed.result is not None
    assert (failed.result.kind, failed.result.text) == ("subagent", API_ERROR)  # whole
    agent = failed.subagent
    assert agent is not None
    assert agent.transcript is not None
    assert agent.reason is not None
    assert API_ERROR.startswith(agent.reason.rstrip("…"))  # its first line, as a failure's
    # The sub-agent's own file ends with the error its report is.
    assert [(c.name, c.status) for c in agent.transcript.tool_calls()] == [("Read", "success")]
    last = agent.transcript.entries[-1]
    assert isinstance(last, AssistantError)
    assert last.message == API_ERROR


def test_L3_a_report_that_speaks_of_an_api_error_is_still_a_success() -> None:
    _, reported = _agents()
    assert reported.status == "success"
    assert reported.result is not None
    assert reported.result.text is not None
    assert reported.result.text.startswith("API Error: 400 is what the package registry answered")
    assert reported.subagent is not None
    assert reported.subagent.reason is None


def test_L3_the_stream_json_of_the_run_says_the_same() -> None:
    """``claude -p --output-format stream-json`` prints each line of the main conversation as
    an event carrying the same ``toolUseResult`` (2.1.79's ``cli.js``: ``{type, message,
    parent_tool_use_id, session_id, uuid, timestamp, tool_use_result}``); the sub-agents' own
    events are left out here, the calls' outcomes being the point."""
    records = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    session = records[0]["sessionId"]
    events: list[dict[str, object]] = [{"type": "system", "subtype": "init", "session_id": session,
                                        "cwd": records[0]["cwd"], "tools": ["Agent", "Read"],
                                        "model": "claude-sonnet-4-6"}]  # fmt: skip
    for record in records:
        event = {
            "type": record["type"],
            "message": record["message"],
            "parent_tool_use_id": None,
            "session_id": session,
            "uuid": record["uuid"],
        }
        if record["type"] == "user":
            event["timestamp"] = record["timestamp"]
            if "toolUseResult" in record:
                event["tool_use_result"] = record["toolUseResult"]
        events.append(event)
    events.append({"type": "result", "subtype": "success", "is_error": False, "num_turns": 3,
                   "result": records[-1]["message"]["content"][0]["text"],
                   "session_id": session})  # fmt: skip
    stream = "".join(json.dumps(event) + "\n" for event in events).encode()
    transcript = turnfold.load(stream, format="claude-stream-json")
    assert [(c.name, c.status) for c in transcript.tool_calls()] == [
        ("Agent", "error"),
        ("Agent", "success"),
    ]
    failed = transcript.tool_calls()[0]
    assert failed.result is not None
    assert failed.result.text == API_ERROR


def test_L3_only_the_message_claude_code_wrote_for_the_error_is_a_failure() -> None:
    """The report must be that message alone: its one text, of Claude Code's API error, and a
    usage of no token (no response came); not a model's words, nor a report cut short."""
    error = [{"type": "text", "text": API_ERROR}]
    nothing = {"input_tokens": 0, "output_tokens": 0}
    assert failed_on_api_error({"status": "completed", "content": error, "usage": nothing})
    login = [{"type": "text", "text": "Please run /login · API Error: 401 {}"}]
    assert failed_on_api_error({"status": "completed", "content": login, "usage": nothing})
    spent = {"input_tokens": 3, "output_tokens": 121}
    for extra in (
        {"status": "completed", "content": error, "usage": spent},  # the model's own words
        {"status": "completed", "content": error},  # no usage: nothing tells who wrote it
        {"status": "completed", "content": [*error, *error], "usage": nothing},
        {"status": "completed", "content": [{"type": "text", "text": "Done."}], "usage": nothing},
        {"status": "async_launched", "content": error, "usage": nothing},
        {
            "status": "completed",
            "content": error,
            "usage": {"input_tokens": False, "output_tokens": False},
        },
    ):
        assert not failed_on_api_error(extra), extra
