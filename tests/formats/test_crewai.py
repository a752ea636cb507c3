"""CrewAI's runs (``crewai``): a crew's ``CrewOutput`` (a hierarchical crew's too), an agent's
``LiteAgentOutput``, their saved form (``model_dump_json()``) and the crew's ``output_log_file``
log, JSON or text.

The committed files were written by the real crewai 1.15.30 on a scripted ``BaseLLM``
(``crewai_runs.py``, run in a venv of its own: CrewAI's pins conflict with the test set's),
with the frames of the crew's run streamed, which following reads.
The tests of live objects run where crewai is installed, and check that an object loads as
its saved form does.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import turnfold
from turnfold.formats import TranscriptFormatError
from turnfold.model import (
    AssistantError,
    AssistantText,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    Usage,
    UserMessage,
)
from turnfold.session import session_facts

FIXTURES = Path(__file__).parent.parent / "fixtures" / "crewai"
CREW = FIXTURES / "crewai_v1.15.30_crew-output_two-tasks.json"
REACT = FIXTURES / "crewai_v1.15.30_crew-output_react-text.json"
AGENT = FIXTURES / "crewai_v1.15.30_agent-kickoff.json"
LOG = FIXTURES / "crewai_v1.15.30_output-log.json"
FRAMES = FIXTURES / "crewai_v1.15.30_stream-frames.jsonl"
CHUNKS = FIXTURES / "crewai_v1.15.30_stream-frames_chunks.jsonl"
HIERARCHICAL = FIXTURES / "crewai_v1.15.30_crew-output_hierarchical.json"
HIERARCHICAL_FRAMES = FIXTURES / "crewai_v1.15.30_stream-frames_hierarchical.jsonl"
TEXT_LOG = FIXTURES / "crewai_v1.15.30_logs.txt"
#: Written by ``crewai_runs_shapes.py``: tasks run side by side, a guardrail's rejection.
ASYNC_FRAMES = FIXTURES / "crewai_v1.15.30_stream-frames_async.jsonl"
GUARDRAIL_FRAMES = FIXTURES / "crewai_v1.15.30_stream-frames_guardrail.jsonl"
#: Written by ``crewai_runs_shapes.py`` too: two tasks side by side, each calling a tool (the
#: crew's output, its log as JSON and as text, its frames); an agent reaching ``max_iter``.
SIDE_BY_SIDE = FIXTURES / "crewai_v1.15.30_crew-output_async.json"
SIDE_BY_SIDE_LOG = FIXTURES / "crewai_v1.15.30_output-log_async.json"
SIDE_BY_SIDE_TEXT_LOG = FIXTURES / "crewai_v1.15.30_logs_async.txt"
SIDE_BY_SIDE_FRAMES = FIXTURES / "crewai_v1.15.30_stream-frames_async-tools.jsonl"
MAX_ITER = FIXTURES / "crewai_v1.15.30_crew-output_max-iter.json"
MAX_ITER_FRAMES = FIXTURES / "crewai_v1.15.30_stream-frames_max-iter.jsonl"
ASYNC_MAX_ITER_FRAMES = FIXTURES / "crewai_v1.15.30_stream-frames_async-max-iter.jsonl"
#: The notice of an agent that reached its iteration limit, as its frames say it and as a
#: task's messages tell it.
LIMIT_SAID = (
    "Iteration limit reached ({limit}): CrewAI stopped the agent's tool calls and asked for "
    "its final answer."
)
LIMIT_TOLD = (
    "Iteration limit reached (max_iter): the task's messages end with tool results the "
    "model never answered; its answer is the one CrewAI asks for at the limit."
)


def shown(transcript: Transcript) -> list[tuple[Any, ...]]:
    """Each entry as a user sees it, with the agent it is attributed to."""
    rows: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        agent = entry.meta.get("agent")
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result is not None else None
            rows.append(("call", agent, entry.name, entry.args, entry.status, result))
        else:
            rows.append((type(entry).__name__, agent, getattr(entry, "text", None)))
    return rows


def frames_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def followed(frames: list[Any]) -> Transcript:
    run = turnfold.follow(frames, format="crewai", display=False)
    list(run)
    return run.transcript


def usages(transcript: Transcript) -> list[tuple[str, int | None, int | None]]:
    """Each entry's usage, as (kind, input, output), for the entries that carry one."""
    return [
        (e.kind, u.input_tokens, u.output_tokens)
        for e in transcript.entries
        if (u := getattr(e, "usage", None)) is not None
    ]


def test_a_crew_s_tasks_are_turns_with_their_agents_calls_and_answers() -> None:
    transcript = turnfold.load(CREW)
    assert transcript.metadata["source_format"] == "crewai"
    assert shown(transcript) == [
        ("UserMessage", "Researcher", "Add 1 and 2, then explode y."),
        ("SystemNotice", "Researcher", "Agent: Researcher"),
        ("call", "Researcher", "add", {"a": 1, "b": 2}, "unknown", "3"),
        ("call", "Researcher", "explode", {"x": "y"}, "error", "Error executing tool: boom: y"),
        ("AssistantText", "Researcher", "1+2=3; explode failed."),
        ("UserMessage", "Writer", "Write one sentence about the result."),
        ("SystemNotice", "Writer", "Agent: Writer"),
        # CrewAI left the writer's final text out of its messages: raw is the answer.
        ("AssistantText", "Writer", "The sum is 3."),
    ]
    assert transcript.warnings == []
    first, second = (e for e in transcript.entries if isinstance(e, UserMessage))
    assert first.meta["task"] == "research"
    assert first.meta["expected_output"] == "The sum."
    assert first.meta["system"].startswith("You are Researcher. You add things.")
    # What the model was sent: the task with its criteria, and the earlier task's output.
    assert "Current Task: Add 1 and 2, then explode y." in first.meta["prompt"]
    assert "1+2=3; explode failed." in second.meta["prompt"]
    assert "task" not in second.meta  # an unnamed task: CrewAI names it by its description
    assert transcript.metadata["agents"] == ["Researcher", "Writer"]
    # Whose work each turn is, shown under its task.
    notices = [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert [(n.subtype, n.text) for n in notices] == [
        ("agent", "Agent: Researcher"),
        ("agent", "Agent: Writer"),
    ]


def test_a_crew_s_token_usage_is_the_run_s_total_and_no_turn_s() -> None:
    transcript = turnfold.load(CREW)
    # Four scripted calls of 10 + 5 tokens; CrewAI's zero cache counts are its defaults.
    assert transcript.metadata["usage"] == {"input_tokens": 40, "output_tokens": 20}
    assert transcript.metadata["requests"] == 4
    assert all(getattr(e, "usage", None) is None for e in transcript.entries)


def test_every_task_of_a_crew_is_accounted_for() -> None:
    transcript = turnfold.load(CREW)
    assert transcript.accounting.counts == {
        "crew_output": {"mapped": 1},
        "task_output": {"mapped": 2},
    }


def test_an_agent_s_kickoff_is_one_turn_from_its_first_user_message() -> None:
    transcript = turnfold.load(AGENT)
    assert shown(transcript) == [
        ("UserMessage", "Calculator", "Add 2 and 5, and explode z."),
        ("call", "Calculator", "add", {"a": 2, "b": 5}, "unknown", "7"),
        ("call", "Calculator", "explode", {"x": "z"}, "error", "Error executing tool: boom: z"),
        ("AssistantText", "Calculator", "2+5=7; explode failed."),
    ]
    calls = [e for e in transcript.entries if isinstance(e, ToolCall)]
    assert calls[0].batch_id == calls[1].batch_id  # one response made both
    assert transcript.metadata["agent"] == "Calculator"
    assert transcript.metadata["usage"] == {"input_tokens": 20, "output_tokens": 10}


@pytest.mark.parametrize(
    "rendered",
    [
        "\nCurrent Task: Sum the list.\nThen stop.",  # native_task
        "\nCurrent Task: Sum the list.\nThen stop.\n\nProvide your complete response:",
        "\nCurrent Task: Sum the list.\nThen stop.\n\nBegin! This is VERY important to you, "
        "use the tools available and give your best Final Answer, your job depends on it!\n\n"
        "Thought:",  # task: a ReAct agent's, with tools
    ],
)
def test_an_agent_s_prompt_is_what_it_was_asked_not_crewai_s_rendering(
    tmp_path: Path, rendered: str
) -> None:
    """CrewAI renders ``Agent.kickoff("…")``'s message in its task slice: the prompt (and the
    run's title) is the message; the rendering is kept as ``meta["prompt"]``."""
    output = json.loads(AGENT.read_text())
    output["messages"][1]["content"] = rendered
    path = tmp_path / "kickoff.json"
    path.write_text(json.dumps(output))
    prompt = turnfold.load(path).entries[0]
    assert isinstance(prompt, UserMessage)
    assert prompt.text == "Sum the list.\nThen stop."
    assert prompt.meta["prompt"] == rendered.strip()
    assert turnfold.scan(path).rows[0]["title"] == "Sum the list. Then stop."


def test_calls_written_in_the_text_are_calls_and_crewai_s_prompts_are_no_turns() -> None:
    transcript = turnfold.load(REACT)
    rows = shown(transcript)
    assert rows[:4] == [
        ("UserMessage", "Texter", "Add 1 and 2 in text mode."),
        ("SystemNotice", "Texter", "Agent: Texter"),
        ("Thinking", "Texter", "I should add."),
        ("call", "Texter", "add", {"a": 1, "b": 2}, "unknown", "3"),
    ]
    assert rows[4] == ("Thinking", "Texter", "try explode.")
    failed = rows[5]
    assert failed[:5] == ("call", "Texter", "explode", {"x": "q"}, "error")
    assert failed[5].startswith("I encountered an error while trying to use the tool.")
    assert rows[-1] == ("AssistantText", "Texter", "3, and explode failed.")
    assert len(rows) == 7
    # CrewAI's "Analyze the tool result…" after each call stays with it: one task, one turn.
    notices = [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert [p.subtype for p in notices] == ["agent"]
    for call in transcript.tool_calls():
        assert call.meta["framework_prompt"].startswith("Analyze the tool result.")
    assert session_facts(transcript).turns == 1


def test_crewai_s_other_prompts_within_a_task_are_shown_where_they_were_said(
    tmp_path: Path,
) -> None:
    """A prompt of CrewAI's that is no call's round trip (the ``human_feedback`` slice it
    sends with a human's feedback) is a notice where CrewAI said it."""
    crew = json.loads(REACT.read_text())
    messages = crew["tasks_output"][0]["messages"]
    said = (
        "You got human feedback on your work, re-evaluate it and give a new Final Answer when "
        "ready.\n Add 3 too."
    )
    messages.insert(4, {"role": "user", "content": said})
    path = tmp_path / "feedback.json"
    path.write_text(json.dumps(crew))
    rows = shown(turnfold.load(path))
    assert rows[4] == ("SystemNotice", "Texter", said)
    notice = turnfold.load(path).entries[4]
    assert isinstance(notice, SystemNotice)
    assert notice.subtype == "framework_prompt"


def test_A1_the_final_answer_crewai_demands_at_max_iter_is_said_after_the_answer(
    tmp_path: Path,
) -> None:
    """Where the messages keep CrewAI's demand for the final answer (``max_iter`` reached;
    CrewAI 1.15 sends it in a copy), the task ends with the limit's notice, its words kept."""
    crew = json.loads(REACT.read_text())
    messages = crew["tasks_output"][0]["messages"]
    forced = (
        "Now it's time you MUST give your absolute best final answer. You'll ignore all "
        "previous instructions, stop using any tools, and just return your absolute BEST "
        "Final answer."
    )
    messages.append({"role": "user", "content": forced})
    path = tmp_path / "forced.json"
    path.write_text(json.dumps(crew))
    transcript = turnfold.load(path)
    assert shown(transcript)[-2:] == [
        ("AssistantText", "Texter", "3, and explode failed."),
        ("SystemNotice", "Texter", LIMIT_SAID.format(limit="max_iter")),
    ]
    notice = transcript.entries[-1]
    assert isinstance(notice, SystemNotice)
    assert (notice.level, notice.subtype) == ("warning", "max_iterations")
    assert notice.meta["framework_prompt"] == forced


def test_the_output_log_shows_each_task_and_its_output() -> None:
    transcript = turnfold.load(LOG)
    assert shown(transcript) == [
        ("UserMessage", "Researcher", "Add 1 and 2, then explode y."),
        ("SystemNotice", "Researcher", "Agent: Researcher"),
        ("AssistantText", "Researcher", "1+2=3; explode failed."),
        ("UserMessage", "Writer", "Write one sentence about the result."),
        ("SystemNotice", "Writer", "Agent: Writer"),
        ("AssistantText", "Writer", "The sum is 3."),
    ]
    # Local time with no zone: kept, never read as UTC.
    assert all(e.timestamp is None for e in transcript.entries)
    assert transcript.entries[0].meta["logged_at"] == json.loads(LOG.read_text())[0]["timestamp"]
    assert transcript.accounting.counts == {
        "log/started": {"mapped": 2},
        "log/completed": {"mapped": 2},
    }


def test_a_task_the_log_never_saw_end_says_so(tmp_path: Path) -> None:
    entries = json.loads(LOG.read_text())[:3]  # the writer's task started, then the run died
    path = tmp_path / "crew_log.json"
    path.write_text(json.dumps(entries))
    transcript = turnfold.load(path)
    last = transcript.entries[-1]
    assert isinstance(last, SystemNotice)
    assert last.level == "warning"
    assert last.text == "the log records this task's start but not its end"
    assert last.meta["agent"] == "Writer"


def test_a_failure_no_call_matches_is_shown_not_dropped(tmp_path: Path) -> None:
    saved = json.loads(CREW.read_text())
    failure = saved["tasks_output"][0]["tool_failures"][0]
    saved["tasks_output"][0]["tool_failures"].append({**failure, "tool_name": "search"})
    path = tmp_path / "crew.json"
    path.write_text(json.dumps(saved))
    transcript = turnfold.load(path)
    notice = next(
        e for e in transcript.entries if isinstance(e, SystemNotice) and e.subtype != "agent"
    )
    assert (notice.subtype, notice.level, notice.text) == (
        "tool_failure",
        "warning",
        "Tool search failed: boom: y",
    )
    assert notice.meta["agent"] == "Researcher"
    assert [c.status for c in transcript.tool_calls()] == ["unknown", "error"]


def test_a_task_output_that_is_no_task_is_warned_of_with_its_line(tmp_path: Path) -> None:
    saved = json.loads(CREW.read_text())
    saved["tasks_output"].insert(1, {"oops": True})
    path = tmp_path / "crew.json"
    path.write_text(json.dumps(saved))
    transcript = turnfold.load(path)
    assert [str(w.reason) for w in transcript.warnings] == [
        "tasks_output[1] is no task output: not read"
    ]
    assert transcript.warnings[0].source == str(path)
    assert sum(isinstance(e, UserMessage) for e in transcript.entries) == 2


def test_a_list_of_task_outputs_loads_as_the_crew_s_turns(tmp_path: Path) -> None:
    tasks = json.loads(CREW.read_text())["tasks_output"]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    assert shown(turnfold.load(path)) == shown(turnfold.load(CREW))


def test_a_record_that_is_no_crewai_output_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps([{"task": "x", "status": "weird"}]))
    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load(path, format="crewai")
    assert str(path) in str(raised.value)


def test_answers_are_the_turns_last_texts() -> None:
    transcript = turnfold.load(CREW)
    answers = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert answers == ["1+2=3; explode failed.", "The sum is 3."]


# --- live objects (where crewai is installed) -----------------------------------------------


@pytest.fixture(scope="module")
def runs() -> Any:
    pytest.importorskip("crewai")
    from tests.formats import crewai_runs

    return crewai_runs


def test_a_crew_output_object_loads_as_its_saved_form(runs: Any) -> None:
    output = runs.crew_run()
    transcript = turnfold.load(output)
    assert transcript.metadata["source_format"] == "crewai"
    assert shown(transcript) == shown(turnfold.load(CREW))
    assert transcript.metadata["usage"] == {"input_tokens": 40, "output_tokens": 20}
    assert transcript.warnings == []


def test_an_agent_output_object_loads_as_its_saved_form(runs: Any) -> None:
    transcript = turnfold.load(runs.agent_run())
    assert shown(transcript) == shown(turnfold.load(AGENT))


def test_a_task_output_object_is_one_turn(runs: Any) -> None:
    task = runs.crew_run().tasks_output[0]
    assert shown(turnfold.load(task)) == shown(turnfold.load(CREW))[:5]


def test_a_crew_followed_live_shows_its_tasks_tools_and_answers(runs: Any) -> None:
    from turnfold.formats.frameworks.crewai import stream_events

    seen: list[list[tuple[Any, ...]]] = []
    run = turnfold.follow(stream_events(runs.crew_with_tools()), display=False)
    for frame in run:
        if frame.type == "tool_usage_started":  # the call shows while it runs
            seen.append(shown(run.transcript))
    assert seen[0][-1] == ("call", "Researcher", "add", {"a": 1, "b": 2}, "executing", None)
    assert shown(run.transcript) == [
        ("UserMessage", "Researcher", "Add 1 and 2, then explode y."),
        ("SystemNotice", "Researcher", "Agent: Researcher"),
        ("call", "Researcher", "add", {"a": 1, "b": 2}, "success", "3"),
        # The error as CrewAI's tool_usage_error frame gives it.
        ("call", "Researcher", "explode", {"x": "y"}, "error", "ValueError('boom: y')"),
        ("AssistantText", "Researcher", "1+2=3; explode failed."),
        ("UserMessage", "Writer", "Write one sentence about the result."),
        ("SystemNotice", "Writer", "Agent: Writer"),
        ("AssistantText", "Writer", "The sum is 3."),
    ]
    calls = run.transcript.tool_calls()
    assert all(c.duration_ms is not None and c.duration_ms >= 0 for c in calls[:1])
    assert run.transcript.metadata["source_format"] == "crewai"
    assert run.transcript.metadata["usage"] == {"input_tokens": 40, "output_tokens": 20}
    assert run.transcript.warnings == []


def test_saved_frames_followed_give_the_live_view_without_crewai() -> None:
    """The frames of the same run, saved with ``model_dump_json()``: what following shows
    where crewai is not installed (its frames read as dicts)."""
    frames = [json.loads(line) for line in FRAMES.read_text().splitlines()]
    run = turnfold.follow(frames, format="crewai", display=False)
    assert list(run) == frames  # passed on unchanged
    assert shown(run.transcript) == [
        ("UserMessage", "Researcher", "Add 1 and 2, then explode y."),
        ("SystemNotice", "Researcher", "Agent: Researcher"),
        ("call", "Researcher", "add", {"a": 1, "b": 2}, "success", "3"),
        ("call", "Researcher", "explode", {"x": "y"}, "error", "ValueError('boom: y')"),
        ("AssistantText", "Researcher", "1+2=3; explode failed."),
        ("UserMessage", "Writer", "Write one sentence about the result."),
        ("SystemNotice", "Writer", "Agent: Writer"),
        ("AssistantText", "Writer", "The sum is 3."),
    ]
    assert run.transcript.warnings == []


def test_a_tool_still_running_when_the_stream_ends_has_no_outcome() -> None:
    frames = [json.loads(line) for line in FRAMES.read_text().splitlines()]
    cut = next(i for i, f in enumerate(frames) if f["type"] == "tool_usage_started") + 1
    run = turnfold.follow(frames[:cut], format="crewai", display=False)
    list(run)
    assert [(c.name, c.status, c.result) for c in run.transcript.tool_calls()] == [
        ("add", "unknown", None)
    ]


def test_an_event_that_is_no_frame_is_warned_of_once() -> None:
    run = turnfold.follow([object(), object()], format="crewai", display=False)
    list(run)
    assert [w.reason for w in run.transcript.warnings] == [
        "object is no CrewAI stream frame: not shown"
    ]


def test_saved_frames_load_as_following_them_shows_them() -> None:
    frames = [json.loads(line) for line in FRAMES.read_text().splitlines()]
    followed = turnfold.follow(frames, format="crewai", display=False)
    list(followed)
    loaded = turnfold.load(FRAMES)
    assert shown(loaded) == shown(followed.transcript)
    counts = loaded.accounting.counts
    assert counts["frame/tool_usage_started"] == {"mapped": 2}
    assert counts["frame/flow_started"] == {"ignored": 2}  # the agent executor's bookkeeping
    assert loaded.accounting.unaccounted == []


def test_saved_frames_date_their_entries_at_their_frames_times() -> None:
    """Every frame has its event's time (UTC): the prompt is dated when its task started, a
    call when it began, the answer when its task completed."""
    frames = frames_of(FRAMES)
    at = {f["type"]: f["timestamp"] for f in reversed(frames)}  # each type's first frame
    loaded = turnfold.load(FRAMES)
    prompt, call = loaded.entries[0], loaded.tool_calls()[0]
    assert prompt.timestamp == at["task_started"]
    assert call.timestamp == at["tool_usage_started"]
    facts = session_facts(loaded)
    assert facts.started is not None
    assert facts.started.isoformat().replace("+00:00", "Z") == at["task_started"]
    assert facts.duration_s is not None
    assert 0 < facts.duration_s < 5


def test_a_live_frame_s_time_is_its_entries_time() -> None:
    """A live ``StreamFrame``'s ``timestamp`` is a ``datetime``, not text."""
    frame = frames_of(FRAMES)[1]
    assert frame["type"] == "task_started"
    live = SimpleNamespace(
        type=frame["type"],
        id=frame["id"],
        data=frame["data"],
        timestamp=datetime(2026, 12, 6, 10, 6, 58, 747275, tzinfo=timezone.utc),
    )
    assert followed([live]).entries[0].timestamp == "2026-12-06T10:06:58.747275+00:00"


def test_tasks_run_side_by_side_each_keep_their_agent_and_their_answer_once() -> None:
    """``async_execution=True``: two tasks start before either ends, their frames interleave;
    each task's answer is its own model's text, shown once, and each prompt names its agent."""
    loaded = turnfold.load(ASYNC_FRAMES)
    prompts = {e.text: e.meta.get("agent") for e in loaded.entries if isinstance(e, UserMessage)}
    assert prompts == {"Do alpha.": "A", "Do beta.": "B", "Join them.": "C"}
    texts = sorted(e.text for e in loaded.entries if isinstance(e, AssistantText))
    assert texts == ["alpha done", "beta done", "both done"]
    assert loaded.warnings == []


def test_a_guardrail_s_rejection_is_shown_before_the_task_runs_again() -> None:
    """CrewAI reruns a task whose guardrail rejects its answer: the rejected answer, the
    guardrail's feedback, then the second run and its answer."""
    loaded = turnfold.load(GUARDRAIL_FRAMES)
    rejected = "The answer must contain a digit."
    assert shown(loaded) == [
        ("UserMessage", "Counter", "Count to three."),
        ("SystemNotice", "Counter", "Agent: Counter"),
        ("AssistantText", "Counter", "three"),
        ("SystemNotice", "Counter", f"Guardrail rejected the answer: {rejected}"),
        ("SystemNotice", "Counter", "Agent: Counter"),
        ("AssistantText", "Counter", "3"),
    ]
    rejection = loaded.entries[3]
    assert isinstance(rejection, SystemNotice)
    assert (rejection.level, rejection.subtype) == ("warning", "guardrail")
    counts = loaded.accounting.counts
    assert counts["frame/llm_guardrail_completed"] == {"mapped": 2}
    assert loaded.accounting.unaccounted == []


def test_a_failed_task_s_frame_is_an_error_of_its_turn() -> None:
    frames = [json.loads(line) for line in FRAMES.read_text().splitlines()]
    end = next(i for i, f in enumerate(frames) if f["type"] == "task_completed")
    failed = {**frames[end], "type": "task_failed", "data": {"error": "LLM quota exceeded"}}
    run = turnfold.follow([*frames[:end], failed], format="crewai", display=False)
    list(run)
    error = run.transcript.entries[-1]
    assert isinstance(error, AssistantError)
    assert error.message == "LLM quota exceeded"
    assert error.meta["agent"] == "Researcher"


def test_a_flow_s_own_event_stream_is_followed_too(runs: Any) -> None:
    from crewai.flow.flow import Flow, start

    class Research(Flow):
        @start()
        def run(self) -> str:
            return str(runs.crew_run().raw)

    run = turnfold.follow(Research().stream_events(), display=False)
    frames = list(run)
    assert frames[0].type == "flow_started"
    assert shown(run.transcript) == shown(turnfold.load(FRAMES))
    assert run.transcript.warnings == []


# --- hierarchical crews: a manager delegating to coworkers -----------------------------------


def test_a_manager_s_delegations_are_its_coworkers_sub_agents_in_the_saved_output() -> None:
    transcript = turnfold.load(HIERARCHICAL)
    assert shown(transcript)[0] == (
        "UserMessage",
        "Crew Manager",
        "Find 1+2 and say it in one sentence.",
    )
    delegated, asked = transcript.tool_calls()
    assert (delegated.name, delegated.result and delegated.result.text) == (
        "delegate_work_to_coworker",
        "1+2=3",
    )
    assert (asked.name, asked.result and asked.result.text) == (
        "ask_question_to_coworker",
        "Say: the sum is 3.",
    )
    # The output keeps each coworker's answer, none of its steps: said, not an empty run.
    assert delegated.subagent is not None
    assert asked.subagent is not None
    assert (delegated.subagent.name, delegated.subagent.task) == ("Researcher", "Add 1 and 2.")
    assert (asked.subagent.name, asked.subagent.task) == ("Writer", "How would you say it?")
    assert delegated.subagent.steps_missing
    assert asked.subagent.steps_missing
    assert shown(transcript)[-1] == ("AssistantText", "Crew Manager", "The sum is 3.")
    assert transcript.warnings == []


HIERARCHICAL_SHOWN = [
    ("UserMessage", "Crew Manager", "Find 1+2 and say it in one sentence."),
    ("SystemNotice", "Crew Manager", "Agent: Crew Manager"),
    (
        "call",
        "Crew Manager",
        "delegate_work_to_coworker",
        {"task": "Add 1 and 2.", "context": "Use the add tool.", "coworker": "Researcher"},
        "success",
        "1+2=3",
    ),
    (
        "call",
        "Crew Manager",
        "ask_question_to_coworker",
        {
            "question": "How would you say it?",
            "context": "The sum of 1 and 2 is 3.",
            "coworker": "Writer",
        },
        "success",
        "Say: the sum is 3.",
    ),
    ("AssistantText", "Crew Manager", "The sum is 3."),
]


def test_following_a_hierarchical_crew_nests_each_coworker_s_run_under_its_call() -> None:
    transcript = followed(frames_of(HIERARCHICAL_FRAMES))
    assert shown(transcript) == HIERARCHICAL_SHOWN  # the coworkers' steps are not the manager's
    delegated, asked = transcript.tool_calls()
    assert delegated.subagent is not None
    assert delegated.subagent.transcript is not None
    assert (delegated.subagent.name, delegated.subagent.task) == ("Researcher", "Add 1 and 2.")
    assert not delegated.subagent.steps_missing
    assert shown(delegated.subagent.transcript) == [
        ("UserMessage", "Researcher", "Add 1 and 2."),
        ("call", "Researcher", "add", {"a": 1, "b": 2}, "success", "3"),
        ("AssistantText", "Researcher", "1+2=3"),
    ]
    assert asked.subagent is not None
    assert asked.subagent.transcript is not None
    assert shown(asked.subagent.transcript) == [
        ("UserMessage", "Writer", "How would you say it?"),
        ("AssistantText", "Writer", "Say: the sum is 3."),
    ]
    # Six model calls of 10 + 5 tokens: the manager's three, the coworkers' three, each once.
    nested = [delegated.subagent.transcript, asked.subagent.transcript]
    counted = usages(transcript) + [u for t in nested for u in usages(t)]
    assert [(i, o) for _, i, o in counted] == [(10, 5)] * 6
    assert transcript.warnings == []


def test_a_coworker_whose_end_is_not_streamed_ends_with_its_call() -> None:
    frames = frames_of(HIERARCHICAL_FRAMES)
    ends = [i for i, f in enumerate(frames) if f["type"] == "agent_execution_completed"]
    cut = [f for i, f in enumerate(frames) if i != ends[0]]  # the researcher's end lost
    transcript = followed(cut)
    assert shown(transcript) == HIERARCHICAL_SHOWN
    delegated = transcript.tool_calls()[0]
    assert delegated.subagent is not None
    assert delegated.subagent.transcript is not None
    assert shown(delegated.subagent.transcript)[-1] == ("AssistantText", "Researcher", "1+2=3")


def test_saved_hierarchical_frames_load_as_following_them_shows_them() -> None:
    loaded = turnfold.load(HIERARCHICAL_FRAMES)
    calls = loaded.tool_calls()
    assert shown(loaded) == HIERARCHICAL_SHOWN
    assert [c.subagent and c.subagent.name for c in calls] == ["Researcher", "Writer"]
    assert [c.name for c in loaded.tool_calls(nested=True)] == [
        "delegate_work_to_coworker",
        "add",
        "ask_question_to_coworker",
    ]
    assert loaded.accounting.unaccounted == []


# --- the model's calls, followed ---------------------------------------------------------------


def test_each_model_call_s_usage_is_on_the_entry_its_response_made() -> None:
    transcript = followed(frames_of(FRAMES))
    # A response of calls only: its call carries it; a text: the text (spec U-1).
    assert usages(transcript) == [
        ("tool_call", 10, 5),
        ("tool_call", 10, 5),
        ("assistant", 10, 5),
        ("assistant", 10, 5),
    ]
    ids = [u.response_id for e in transcript.entries if (u := getattr(e, "usage", None))]
    assert len(set(ids)) == 4
    assert all(ids)
    # The model's final text is the task's answer: shown once.
    answers = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert answers == ["1+2=3; explode failed.", "The sum is 3."]


def test_the_model_s_text_shows_as_it_streams() -> None:
    frames = frames_of(CHUNKS)
    run = turnfold.follow(frames, format="crewai", display=False)
    growing: list[str] = []
    for frame in run:
        if frame["type"] == "llm_stream_chunk" and not frame["data"].get("tool_call"):
            last = run.transcript.entries[-1]
            assert isinstance(last, AssistantText)
            growing.append(last.text)
    # The researcher's words before its call reach only the stream (its response is the call).
    assert growing[:3] == ["I ", "I will ", "I will add "]
    assert shown(run.transcript)[2:4] == [
        ("AssistantText", "Researcher", "I will add them first."),
        ("call", "Researcher", "add", {"a": 1, "b": 2}, "success", "3"),
    ]
    assert [e.text for e in run.transcript.entries if isinstance(e, AssistantText)] == [
        "I will add them first.",
        "1+2=3; explode failed.",
        "The sum is 3.",
    ]
    # The response that said it and made the call: its usage once, on its first entry.
    assert usages(run.transcript) == [
        ("assistant", 10, 5),
        ("tool_call", 10, 5),
        ("assistant", 10, 5),
        ("assistant", 10, 5),
    ]
    assert run.transcript.warnings == []


def test_the_model_s_thinking_shows_as_it_streams() -> None:
    """A provider that streams reasoning (CrewAI's Anthropic one) emits
    ``llm_thinking_chunk`` frames with the call's id: the writer's chunks, as such."""
    frames = frames_of(CHUNKS)
    writer = [
        i
        for i, f in enumerate(frames)
        if f["type"] == "llm_stream_chunk" and f["data"]["agent_role"] == "Writer"
    ]
    thought = [
        {**f, "type": "llm_thinking_chunk", "data": {**f["data"], "chunk": "hmm "}}
        for f in (frames[writer[0]], frames[writer[1]])
    ]
    run = turnfold.follow(
        [*frames[: writer[0]], *thought, *frames[writer[0] :]], format="crewai", display=False
    )
    seen = []
    for _ in run:
        last = run.transcript.entries[-1] if run.transcript.entries else None
        if isinstance(last, Thinking):
            seen.append((last.text, last.streaming))
    assert seen[:2] == [("hmm ", True), ("hmm hmm ", True)]
    thinking = next(e for e in run.transcript.entries if isinstance(e, Thinking))
    assert (thinking.text, thinking.streaming, thinking.meta["agent"]) == (
        "hmm hmm ",
        False,
        "Writer",
    )
    assert isinstance(thinking.usage, Usage)  # the first entry of the writer's response


# --- the text log (output_log_file=True) -------------------------------------------------------


def test_the_text_log_reads_as_the_json_log_its_values_spanning_lines() -> None:
    transcript = turnfold.load(TEXT_LOG)
    assert transcript.metadata["source_format"] == "crewai"
    rows = shown(transcript)
    assert rows[:6] == shown(turnfold.load(LOG))  # the same two-task run
    assert rows[6:] == [
        ("UserMessage", "Editor", 'Summarise the "Q3" report.\nKeep it to two lines.'),
        ("SystemNotice", "Editor", "Agent: Editor"),
        ("AssistantText", "Editor", 'Costs rose.\nRevenue was "flat", said the CFO.'),
    ]
    prompts = [e for e in transcript.entries if isinstance(e, UserMessage)]
    assert [p.meta.get("task") for p in prompts] == ["research", None, "summary"]  # None: none
    assert prompts[0].meta["logged_at"] == TEXT_LOG.read_text()[:19]
    assert transcript.warnings == []
    assert transcript.accounting.counts == {
        "log/started": {"mapped": 3},
        "log/completed": {"mapped": 3},
    }


def test_a_text_log_entry_of_another_shape_is_warned_of_with_its_line(tmp_path: Path) -> None:
    lines = TEXT_LOG.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('status="completed"', 'status="failed"')
    path = tmp_path / "logs.txt"
    path.write_text("".join(lines))
    transcript = turnfold.load(path)
    assert [(w.line, w.reason) for w in transcript.warnings] == [
        (2, 'log entry not read: no status="started" or "completed" ends it as CrewAI writes it'),
        # Its task, shown started, is then never ended: said too.
        (
            None,
            "task 'Add 1 and 2, then explode y.': the log records this task's start but not "
            "its end",
        ),
    ]
    assert shown(transcript)[:3] == [
        ("UserMessage", "Researcher", "Add 1 and 2, then explode y."),
        ("SystemNotice", "Researcher", "Agent: Researcher"),
        ("UserMessage", "Writer", "Write one sentence about the result."),
    ]
    assert len(transcript.entries) == 8
    assert transcript.accounting.counts["log/unreadable"] == {"warned": 1}


def test_a_text_log_value_holding_a_separator_is_shown_with_a_warning(tmp_path: Path) -> None:
    line = (
        '2026-12-06 10:00:00: task_name="t", task="Say ", agent=" twice", agent="A", '
        'status="started"\n'
    )
    path = tmp_path / "logs.txt"
    path.write_text(line)
    transcript = turnfold.load(path)
    assert [w.line for w in transcript.warnings] == [1]
    assert "is a guess" in transcript.warnings[0].reason
    assert shown(transcript)[0] == ("UserMessage", "A", 'Say ", agent=" twice')


def test_a_text_file_with_no_log_entry_is_an_error_saying_to_log_as_json(tmp_path: Path) -> None:
    path = tmp_path / "logs.txt"
    path.write_text("nothing here\n")
    with pytest.raises(TranscriptFormatError) as raised:
        turnfold.load(path, format="crewai")
    assert str(path) in str(raised.value)
    assert 'output_log_file="crew_log.json"' in str(raised.value)


def test_a_crew_output_is_a_run_object_a_cell_shows() -> None:
    from turnfold.formats.frameworks import RUN_OBJECTS

    assert ("crewai.crews.crew_output", "CrewOutput") in RUN_OBJECTS


# --- live objects, continued (where crewai is installed) ---------------------------------------


def test_a_crew_output_as_a_cell_s_last_value_displays_as_its_transcript(runs: Any) -> None:
    from turnfold.display import run_mimebundle
    from turnfold.formats.frameworks import RUN_OBJECTS

    output = runs.crew_run()
    assert (type(output).__module__, type(output).__name__) in RUN_OBJECTS
    shown_bundle = run_mimebundle(output)
    assert shown_bundle is not None
    assert "explode failed" in shown_bundle[0]["text/plain"]


def test_a_hierarchical_crew_followed_live_nests_its_coworkers(runs: Any) -> None:
    from turnfold.formats.frameworks.crewai import stream_events

    run = turnfold.follow(stream_events(runs.hierarchical_crew()), display=False)
    inside: list[tuple[Any, ...]] = []
    for frame in run:
        if frame.type == "tool_usage_started" and frame.data.get("tool_name") == "add":
            delegated = run.transcript.tool_calls()[0]
            assert delegated.status == "executing"
            assert delegated.subagent is not None
            assert delegated.subagent.transcript is not None
            inside = shown(delegated.subagent.transcript)
    # The coworker's call shows inside the manager's while both run.
    assert inside[-1] == ("call", "Researcher", "add", {"a": 1, "b": 2}, "executing", None)
    assert shown(run.transcript) == HIERARCHICAL_SHOWN
    assert shown(run.transcript) == shown(turnfold.load(HIERARCHICAL_FRAMES))
    # The crew's own count agrees with the calls' usages, the coworkers' included.
    assert run.transcript.metadata["usage"] == {"input_tokens": 60, "output_tokens": 30}
    assert run.transcript.warnings == []


def test_a_react_model_s_thoughts_show_live_and_its_answer_once(runs: Any) -> None:
    from turnfold.formats.frameworks.crewai import stream_events

    run = turnfold.follow(stream_events(runs.react_crew()), display=False)
    list(run)
    rows = shown(run.transcript)
    assert rows[:4] == [
        ("UserMessage", "Texter", "Add 1 and 2 in text mode."),
        ("SystemNotice", "Texter", "Agent: Texter"),
        ("Thinking", "Texter", "I should add."),
        ("call", "Texter", "add", {"a": 1, "b": 2}, "success", "3"),
    ]
    assert rows[4] == ("Thinking", "Texter", "try explode.")
    assert rows[-2:] == [
        ("Thinking", "Texter", "I know it."),
        ("AssistantText", "Texter", "3, and explode failed."),
    ]
    assert [e.kind for e in run.transcript.entries if getattr(e, "usage", None)] == [
        "thinking",
        "thinking",
        "thinking",
    ]


def test_a_streaming_crew_followed_live_shows_the_model_s_words(runs: Any) -> None:
    from turnfold.formats.frameworks.crewai import stream_events

    run = turnfold.follow(stream_events(runs.crew_with_tools(stream=True)), display=False)
    list(run)
    assert shown(run.transcript) == shown(followed(frames_of(CHUNKS)))
    assert run.transcript.metadata["usage"] == {"input_tokens": 40, "output_tokens": 20}


# --- tasks run side by side (async_execution) --------------------------------------------------

SIDE_BY_SIDE_SHOWN = [
    ("UserMessage", "Alpha", "Add 1 and 2."),
    ("SystemNotice", "Alpha", "Agent: Alpha"),
    ("call", "Alpha", "add_slowly", {"a": 1, "b": 2}, "success", "3"),
    ("AssistantText", "Alpha", "alpha: 3"),
    ("UserMessage", "Beta", "Add 3 and 4."),
    ("SystemNotice", "Beta", "Agent: Beta"),
    ("call", "Beta", "add_slowly", {"a": 3, "b": 4}, "success", "7"),
    ("AssistantText", "Beta", "beta: 7"),
    ("UserMessage", "Joiner", "Say both sums."),
    ("SystemNotice", "Joiner", "Agent: Joiner"),
    ("AssistantText", "Joiner", "3 and 7"),
]


def outcomes_unknown(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``rows`` as a load of the crew's output shows them: it keeps no call's outcome."""
    return [(*row[:4], "unknown", row[5]) if row[0] == "call" else row for row in rows]


def test_A2_tasks_run_side_by_side_are_each_a_turn_with_their_calls() -> None:
    """The two tasks' frames interleave, the second's call starting before the first's
    ends: each task is a turn of its own, its call and its answer under its prompt, as the
    crew's output shows them."""
    frames = frames_of(SIDE_BY_SIDE_FRAMES)
    calls = [(f["type"], f["data"]["agent_role"]) for f in frames if f["type"].startswith("tool_")]
    assert calls == [
        ("tool_usage_started", "Alpha"),
        ("tool_usage_started", "Beta"),
        ("tool_usage_finished", "Alpha"),
        ("tool_usage_finished", "Beta"),
    ]
    loaded = turnfold.load(SIDE_BY_SIDE_FRAMES)
    assert shown(loaded) == SIDE_BY_SIDE_SHOWN
    assert shown(followed(frames)) == SIDE_BY_SIDE_SHOWN
    saved = turnfold.load(SIDE_BY_SIDE)
    assert shown(saved) == outcomes_unknown(SIDE_BY_SIDE_SHOWN)
    assert session_facts(loaded).turns == session_facts(saved).turns
    assert loaded.warnings == []
    # Each model call's usage once, on the entry its response made (spec U-1).
    assert [(i, o) for _, i, o in usages(loaded)] == [(10, 5)] * 5


def test_A2_a_task_run_side_by_side_shows_when_the_turn_before_it_ends() -> None:
    """A transcript only grows: the second task's turn, started while the first's is open,
    waits for the first's answer, then shows with what it did so far and grows in place.
    No entry shown ever moves."""
    frames = frames_of(SIDE_BY_SIDE_FRAMES)
    run = turnfold.follow(frames, format="crewai", display=False)
    views: list[list[str]] = []
    while_beta_calls: list[tuple[Any, ...]] = []
    for frame in run:
        views.append([e.id for e in run.transcript.entries])
        if frame["type"] == "tool_usage_started" and frame["data"]["agent_role"] == "Beta":
            while_beta_calls = shown(run.transcript)
    assert while_beta_calls == [
        ("UserMessage", "Alpha", "Add 1 and 2."),
        ("SystemNotice", "Alpha", "Agent: Alpha"),
        ("call", "Alpha", "add_slowly", {"a": 1, "b": 2}, "executing", None),
    ]
    final = [e.id for e in run.transcript.entries]
    assert all(view == final[: len(view)] for view in views)
    assert shown(run.transcript) == SIDE_BY_SIDE_SHOWN


def test_A2_a_task_side_by_side_whose_frames_end_early_is_shown_all_the_same() -> None:
    """The stream ends before the first task does: the second, waiting for its turn, is
    shown at the end all the same, its call's outcome as it was."""
    frames = frames_of(SIDE_BY_SIDE_FRAMES)
    cut = next(i for i, f in enumerate(frames) if f["type"] == "task_completed")
    transcript = followed(frames[:cut])
    assert shown(transcript) == SIDE_BY_SIDE_SHOWN[:8]


@pytest.mark.parametrize("log", [SIDE_BY_SIDE_LOG, SIDE_BY_SIDE_TEXT_LOG], ids=["json", "text"])
def test_A1_a_log_of_tasks_run_side_by_side_shows_each_answer_under_its_task(log: Path) -> None:
    """The log records the starts of the tasks run side by side (and of the task joining
    them) before any of their ends: each answer is shown in its own task's turn."""
    transcript = turnfold.load(log)
    assert transcript.metadata["source_format"] == "crewai"
    assert shown(transcript) == [row for row in SIDE_BY_SIDE_SHOWN if row[0] != "call"]
    assert transcript.warnings == []


def test_A1_a_text_log_of_the_same_crew_run_twice_shows_each_run_s_turns(
    tmp_path: Path,
) -> None:
    """``logs.txt`` is appended to run after run: the same tasks start again, each start a
    turn of its own, none of the first run's entries lost."""
    path = tmp_path / "logs.txt"
    path.write_text(SIDE_BY_SIDE_TEXT_LOG.read_text() * 2)
    logged = [row for row in SIDE_BY_SIDE_SHOWN if row[0] != "call"]
    transcript = turnfold.load(path)
    assert shown(transcript) == logged * 2
    assert transcript.warnings == []


def test_A1_a_log_that_never_saw_the_first_of_two_tasks_end_keeps_the_second_whole(
    tmp_path: Path,
) -> None:
    entries = json.loads(SIDE_BY_SIDE_LOG.read_text())
    statuses = [(e["status"], e["agent"]) for e in entries]
    del entries[statuses.index(("completed", "Alpha"))]  # the run died before Alpha ended
    path = tmp_path / "crew_log.json"
    path.write_text(json.dumps(entries))
    transcript = turnfold.load(path)
    assert shown(transcript) == [
        ("UserMessage", "Alpha", "Add 1 and 2."),
        ("SystemNotice", "Alpha", "Agent: Alpha"),
        *[row for row in SIDE_BY_SIDE_SHOWN[4:] if row[0] != "call"],
    ]
    assert [w.reason for w in transcript.warnings] == [
        "task 'Add 1 and 2.': the log records this task's start but not its end"
    ]


# --- an agent that reaches its iteration limit (max_iter) ---------------------------------------


def test_A1_an_agent_that_reached_max_iter_ends_its_task_with_a_notice() -> None:
    """With function calling, CrewAI 1.15 asks for the final answer at ``max_iter`` in a
    copy of the messages: they end with tool results the model never answered. The task's
    turn keeps its answer; the notice follows it."""
    transcript = turnfold.load(MAX_ITER)
    assert shown(transcript) == [
        ("UserMessage", "Looper", "Keep adding numbers."),
        ("SystemNotice", "Looper", "Agent: Looper"),
        ("call", "Looper", "add", {"a": 1, "b": 2}, "unknown", "3"),
        ("call", "Looper", "add", {"a": 3, "b": 4}, "unknown", "7"),
        ("AssistantText", "Looper", "Out of steps: 3 and 7 so far."),
        ("SystemNotice", "Looper", LIMIT_TOLD),
    ]
    notice = transcript.entries[-1]
    assert isinstance(notice, SystemNotice)
    assert (notice.level, notice.subtype) == ("warning", "max_iterations")
    assert transcript.warnings == []


def test_A1_a_tool_result_that_is_the_answer_is_no_iteration_limit(tmp_path: Path) -> None:
    """A ``result_as_answer`` tool ends a task with its result, after which the model says
    nothing either: no limit was reached."""
    saved = json.loads(MAX_ITER.read_text())
    task = saved["tasks_output"][0]
    task["raw"] = task["messages"][-1]["content"]
    path = tmp_path / "crew.json"
    path.write_text(json.dumps(saved))
    rows = shown(turnfold.load(path))
    assert rows[-1] == ("AssistantText", "Looper", "7")
    assert [row for row in rows if row[0] == "SystemNotice"] == [
        ("SystemNotice", "Looper", "Agent: Looper")
    ]


def test_A2_the_frames_of_an_agent_that_reached_max_iter_say_its_limit() -> None:
    """CrewAI's last call of the agent sends its demand for the final answer: the limit
    (the agent's ``max_iter``) is said after the answer that call wrote."""
    transcript = followed(frames_of(MAX_ITER_FRAMES))
    assert shown(transcript)[2:] == [
        ("call", "Looper", "add", {"a": 1, "b": 2}, "success", "3"),
        ("call", "Looper", "add", {"a": 3, "b": 4}, "success", "7"),
        ("AssistantText", "Looper", "Out of steps: 3 and 7 so far."),
        ("SystemNotice", "Looper", LIMIT_SAID.format(limit="max_iter = 2")),
    ]
    notice = transcript.entries[-1]
    assert isinstance(notice, SystemNotice)
    assert (notice.level, notice.subtype) == ("warning", "max_iterations")
    assert notice.meta == {"agent": "Looper", "max_iter": 2}
    loaded = turnfold.load(MAX_ITER_FRAMES)
    assert shown(loaded) == shown(transcript)
    assert loaded.accounting.counts["frame/llm_call_started"] == {"mapped": 3}
    assert loaded.accounting.unaccounted == []


def test_A2_the_limit_of_a_task_run_side_by_side_is_said_in_its_own_turn() -> None:
    """CrewAI's call for the final answer names no task (nor agent): it is told by the
    task its messages render, while the other task's call still runs."""
    frames = frames_of(ASYNC_MAX_ITER_FRAMES)
    forced = next(
        f for f in frames if f["type"] == "llm_call_started" and f["data"]["task_id"] is None
    )
    assert forced["data"]["agent_role"] is None
    transcript = followed(frames)
    assert shown(transcript)[:9] == [
        ("UserMessage", "Steady", "Add 3 and 4."),
        ("SystemNotice", "Steady", "Agent: Steady"),
        ("call", "Steady", "add_slowly", {"a": 3, "b": 4}, "success", "7"),
        ("AssistantText", "Steady", "7"),
        ("UserMessage", "Looper", "Keep adding."),
        ("SystemNotice", "Looper", "Agent: Looper"),
        ("call", "Looper", "add", {"a": 1, "b": 2}, "success", "3"),
        ("AssistantText", "Looper", "Out of steps: 3."),
        ("SystemNotice", "Looper", LIMIT_SAID.format(limit="max_iter = 1")),
    ]
    assert transcript.warnings == []


# --- a scan finds the text log by its name ------------------------------------------------------


def test_C1_a_scan_finds_a_crew_s_text_log_by_its_name(tmp_path: Path) -> None:
    """``output_log_file=True`` writes ``logs.txt`` where the crew ran: a scan reads it (and
    a log of another name, told by its first line: tests/test_crewai_more.py), and another
    program's ``logs.txt`` is skipped, not an error."""
    crew = tmp_path / "crew"
    crew.mkdir()
    log = crew / "logs.txt"
    shutil.copyfile(TEXT_LOG, log)
    shutil.copyfile(TEXT_LOG, crew / "crew_log.txt")  # output_log_file="crew_log"
    server = tmp_path / "server"
    server.mkdir()
    (server / "logs.txt").write_text("2026-12-06 10:00:00 INFO listening on :8080\n")
    corpus = turnfold.scan(tmp_path, workers=1, cache=False)
    rows = list(corpus)
    assert [(r["key"], r["format"], r["error"]) for r in rows] == [
        (str(crew / "crew_log.txt"), "crewai", None),
        (str(log), "crewai", None),
    ]
    assert rows[1]["title"] == "Add 1 and 2, then explode y."
    assert corpus.skipped == 1
    assert corpus[str(log)] == turnfold.load(log)


# --- live: tasks side by side, the iteration limit (where crewai is installed) -----------------


@pytest.fixture(scope="module")
def shapes(runs: Any) -> Any:
    from tests.formats import crewai_runs_shapes

    return crewai_runs_shapes


def test_A2_tasks_run_side_by_side_followed_live_are_each_a_turn(
    shapes: Any, tmp_path: Path
) -> None:
    from turnfold.formats.frameworks.crewai import stream_events

    session = stream_events(shapes.async_tools_crew())
    run = turnfold.follow(session, display=False)
    list(run)
    assert shown(run.transcript) == SIDE_BY_SIDE_SHOWN
    assert run.transcript.warnings == []
    # The crew's output shows the same turns (the calls' outcomes it does not keep).
    assert shown(turnfold.load(session.result)) == outcomes_unknown(SIDE_BY_SIDE_SHOWN)
    # And its logs, JSON and text, written by CrewAI.
    for name in ("crew_log.json", "crew_log.txt"):
        shapes.async_tools_crew(str(tmp_path / name)).kickoff()
        logged = [row for row in SIDE_BY_SIDE_SHOWN if row[0] != "call"]
        assert shown(turnfold.load(tmp_path / name)) == logged, name


@pytest.mark.parametrize("native", [True, False], ids=["function-calling", "react"])
def test_A2_an_agent_reaching_max_iter_followed_live_says_so_after_its_answer(
    shapes: Any, native: bool
) -> None:
    from turnfold.formats.frameworks.crewai import stream_events

    session = stream_events(shapes.max_iter_crew(native=native))
    run = turnfold.follow(session, display=False)
    list(run)
    assert shown(run.transcript)[-2:] == [
        ("AssistantText", "Looper", "Out of steps: 3 and 7 so far."),
        ("SystemNotice", "Looper", LIMIT_SAID.format(limit="max_iter = 2")),
    ]
    last = shown(turnfold.load(session.result))[-1]
    if native:
        assert last == ("SystemNotice", "Looper", LIMIT_TOLD)
    else:  # a ReAct model's messages end alike whether or not it reached the limit
        assert last == ("AssistantText", "Looper", "Out of steps: 3 and 7 so far.")


def test_A2_the_limit_of_a_task_side_by_side_followed_live_is_in_its_turn(shapes: Any) -> None:
    from turnfold.formats.frameworks.crewai import stream_events

    run = turnfold.follow(stream_events(shapes.async_max_iter_crew()), display=False)
    list(run)
    assert shown(run.transcript) == shown(turnfold.load(ASYNC_MAX_ITER_FRAMES))
