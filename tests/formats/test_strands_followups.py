"""Strands Agents follow-ups: a run that ends with structured output
(``structured_output_model``) shows that output as its answer, and a run a tool's own
``interrupt`` stopped shows its call waiting for the human, then the resumed run.

The runs are real strands-agents 1.62.0 ``Agent``\\s on the scripted model of
``strands_runs``; the committed files (``strands_v1.62.0_messages_structured-output.json``,
``strands_v1.62.0_file-sessions-followups/``) were written by them and the real
``FileSessionManager`` (``tests/fixtures/frameworks/strands/strands_followups_recipe.py``),
whose ``write`` also makes them live here, beside the agents and their ``AgentResult``\\s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("strands")

import turnfold
from tests.formats import strands_runs
from tests.formats.recipes import recipe as load_recipe
from turnfold.model import AssistantText, PendingAction, ToolCall, Transcript, UserMessage

recipe = load_recipe(strands_runs.FIXTURES / "strands_followups_recipe.py")
STRUCTURED = recipe.SESSIONS / "session_structured"
STOPPED = recipe.SESSIONS / "session_stopped"


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    storage = tmp_path_factory.mktemp("sessions")
    return {"storage": storage, **recipe.write(storage)}


def fenced(value: Any) -> str:
    return "```json\n" + json.dumps(value, indent=2) + "\n```"


def shown(transcript: Transcript) -> list[tuple[Any, ...]]:
    """Each entry's kind and text, or its call's name, args, outcome and result."""
    rows: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result is not None else None
            rows.append(("call", entry.call_id, entry.name, entry.args, entry.status, result))
        elif isinstance(entry, PendingAction):
            rows.append(("pending", entry.action, entry.call_id, entry.text))
        else:
            rows.append((type(entry).__name__, getattr(entry, "text", None)))
    return rows


# --- structured output ------------------------------------------------------------------------

#: The model's input to the structured output tool: the output as the messages hold it.
STATED = {"city": "Paris", "temp_c": 21.5}
#: Strands' own result of the structured output tool when the output validated.
VALIDATED = "Successfully validated Weather structured output"
WEATHER_RUN = [
    ("UserMessage", recipe.STRUCTURED_PROMPT),
    ("call", "w_1", "lookup", {"city": "Paris"}, "success", "Paris: 21.5 C, clear"),
    ("AssistantText", "Filling in the form. "),
    ("call", "w_2", "Weather", STATED, "success", VALIDATED),
    ("AssistantText", fenced(STATED)),
]


def test_a_run_ending_in_structured_output_shows_it_as_the_answer(live: dict[str, Any]) -> None:
    """The run's last message was the structured output tool's call and its result, so the
    turn had no answer. The call's input (the output) now is, as other frameworks' structured
    output is: loading the agent, its saved messages (now and as committed) or its session."""
    agent, result = live["weather"], live["weather_result"]
    assert result.structured_output.model_dump() == recipe.OUTPUT  # the run's own output
    for transcript in (turnfold.load(agent), turnfold.load(agent.messages),
                       turnfold.load(recipe.MESSAGES)):  # fmt: skip
        assert shown(transcript) == WEATHER_RUN
        assert transcript.warnings == []
        assert transcript.entries[-1].meta == {"structured_output": True}
    for folder in (live["storage"] / "session_structured", STRUCTURED):
        stored = turnfold.load(folder)
        assert stored.metadata["source_format"] == "strands-session"
        assert shown(stored) == WEATHER_RUN
        # Stamped as the message whose result ended the run was stored.
        answer, call = stored.entries[-1], stored.entries[-2]
        assert answer.timestamp is not None
        assert answer.timestamp > call.timestamp


def test_an_agent_result_shows_its_structured_output_whole(live: dict[str, Any]) -> None:
    """``load(AgentResult)`` showed only the output tool's call; its ``structured_output``
    (the validated object, the model's defaults filled in) is the answer."""
    transcript = turnfold.load(live["weather_result"])
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == fenced(recipe.OUTPUT)
    assert [c.name for c in transcript.tool_calls()] == ["Weather"]


def test_a_followed_structured_output_run_ends_as_load_of_the_agent() -> None:
    async def go() -> tuple[Any, Any]:
        agent = recipe.weather_agent()
        followed = turnfold.follow(agent.stream_async(recipe.STRUCTURED_PROMPT), display=False)
        async for _ in followed:
            pass
        return agent, followed

    agent, followed = strands_runs.on_fresh_thread(go)
    assert followed.transcript.warnings == []
    assert shown(followed.transcript) == WEATHER_RUN
    assert followed.transcript == turnfold.load(agent)


def test_a_failed_validation_is_no_answer() -> None:
    """Only the structured output tool's validated result makes the answer: a call of it
    whose input did not validate (an error result the model is asked to fix) does not."""
    messages = json.loads(recipe.MESSAGES.read_text(encoding="utf-8"))
    result = messages[-1]["content"][0]["toolResult"]
    result["status"] = "error"
    result["content"] = [{"text": "Validation failed for Weather. Please fix the following "
                          "errors:\n- Field 'temp_c': Field required"}]  # fmt: skip
    transcript = turnfold.load(messages)
    assert [type(e).__name__ for e in transcript.entries][-1] == "ToolCall"
    assert transcript.tool_calls()[-1].status == "error"


# --- a tool's own interrupt -------------------------------------------------------------------

STOPPED_RUN = [
    ("UserMessage", recipe.STOPPED_PROMPT),
    ("call", "o_1", "read", {"path": "/a"}, "success", "contents of /a"),
    ("call", "o_2", "delete", {"path": "/a"}, "confirming", None),
    ("pending", "question", "o_2", 'approve-delete: {"path":"/a"}'),
]


def test_a_run_a_tool_interrupted_waits_for_the_human_and_resumes(
    live: dict[str, Any], tmp_path: Path
) -> None:
    """``delete`` interrupts itself (``tool_context.interrupt``): the run is stopped waiting
    on the human (the call ``confirming``, a pending question), not failed; ``read``, which
    ran, has its result from the interrupt state, in the agent and in its stored session.
    Resumed with the answer, the session and the agent show the call done and the answer."""
    agent, result = live["ops"], live["ops_result"]
    assert result.stop_reason == "interrupt"
    stopped = [turnfold.load(agent), turnfold.load(live["storage"] / "session_stopped"),
               turnfold.load(STOPPED)]  # fmt: skip
    for transcript in stopped:
        assert shown(transcript) == STOPPED_RUN
        assert transcript.warnings == []
        assert not any(c.status == "error" for c in transcript.tool_calls())
    from_result = turnfold.load(result)
    assert [r for r in shown(from_result) if r[0] == "pending"] == [STOPPED_RUN[-1]]

    recipe.resume(agent, result)
    for transcript in (turnfold.load(agent), turnfold.load(live["storage"] / "session_stopped")):
        assert shown(transcript) == RESUMED
        assert transcript.warnings == []


#: The stopped run resumed with a yes: Strands runs ``delete`` again, its interrupt answered,
#: stores both results and the model answers (the responses are in no message).
RESUMED = [
    *STOPPED_RUN[:2],
    ("call", "o_2", "delete", {"path": "/a"}, "success", "deleted /a"),
    ("AssistantText", recipe.STOPPED_ANSWER + " "),
]


def test_a_followed_resumed_run_continues_the_stopped_one() -> None:
    """Followed, the resumed run (``agent.stream_async(interrupt_responses)``) lost the calls
    it resumed: its first event is the message of their results, which comes before any event
    carries the agent (whose messages hold the calls), so each result was "for an unknown
    toolUseId" and only the answer was shown. It now ends as a load of the agent."""
    agent = recipe.ops_agent()
    result = strands_runs.on_fresh_thread(lambda: agent.invoke_async(recipe.STOPPED_PROMPT))
    answers = [{"interruptResponse": {"interruptId": i.id, "response": "yes"}}
               for i in result.interrupts]  # fmt: skip

    async def go() -> Any:
        followed = turnfold.follow(agent.stream_async(answers), display=False)
        async for _ in followed:
            pass
        return followed

    followed = strands_runs.on_fresh_thread(go)
    assert followed.transcript.warnings == []
    assert shown(followed.transcript) == RESUMED
    assert followed.transcript == turnfold.load(agent)


def test_a_followed_run_a_tool_interrupted_ends_as_load_of_the_agent() -> None:
    async def go() -> tuple[Any, Any]:
        agent = recipe.ops_agent()
        followed = turnfold.follow(agent.stream_async(recipe.STOPPED_PROMPT), display=False)
        async for _ in followed:
            pass
        return agent, followed

    agent, followed = strands_runs.on_fresh_thread(go)
    assert followed.transcript.warnings == []
    assert shown(followed.transcript) == STOPPED_RUN
    assert followed.transcript == turnfold.load(agent)
    assert not isinstance(followed.transcript.entries[-1], UserMessage)
