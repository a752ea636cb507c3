"""smolagents runs (spec A-1, A-2, A-3, L-1, L-3, L-4, X-2; issue 22).

The runs come from the real smolagents on a scripted ``Model`` subclass (no network), built
by ``tests/formats/smolagents_runs.py``, which also wrote the fixtures under
``tests/fixtures/frameworks/smolagents/`` (``python tests/formats/smolagents_runs.py``).
The counts the transcripts are checked against are read from smolagents' own types
(:func:`count_calls`), not from the loader.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats import smolagents_runs as runs
from tests.formats.counters_smolagents import smolagents as count_saved
from tests.formats.structured_answers import answer_of
from turnfold.formats import TranscriptFormatError, which_format
from turnfold.formats.frameworks.smolagents import Follower
from turnfold.formats.source import open_source
from turnfold.model import AssistantText, SystemNotice, Thinking, ToolCall, Transcript, UserMessage
from turnfold.session import session_facts
from turnfold.usage import counts_of

pytest.importorskip("smolagents")

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks" / "smolagents"
FULL_STEPS = FIXTURES / "smolagents_v1.26.0_full-steps_managed-agent.json"
HELPER_STEPS = FIXTURES / "smolagents_v1.26.0_succinct-steps_helper.json"
CODE_RESULT = FIXTURES / "smolagents_v1.26.0_run-result_code-agent.json"


# --- independent views of the framework's objects ------------------------------------------


def count_calls(agent: Any) -> int:
    """The calls an agent's memory records, read from smolagents' own step types: an
    ``ActionStep``'s ``tool_calls``, else (a failed step) its ``model_output_message``'s,
    a ``ToolCallingAgent``'s ``final_answer`` call excepted; its managed agents' too."""
    from smolagents.memory import ActionStep

    count = 0
    for step in agent.memory.steps:
        if not isinstance(step, ActionStep):
            continue
        if step.tool_calls:
            names = [c.name for c in step.tool_calls]
        elif step.model_output_message is not None and step.model_output_message.tool_calls:
            names = [c.function.name for c in step.model_output_message.tool_calls]
        else:
            names = []
        count += sum(1 for n in names if n != "final_answer" or step.code_action is not None)
    return count + sum(count_calls(child) for child in agent.managed_agents.values())


def all_calls(transcript: Transcript) -> list[ToolCall]:
    """Every call, those of sub-agents (handoffs, agents as tools) included, depth first."""
    return transcript.tool_calls(nested=True)


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    """What A-2 compares: each call's id, name, arguments, status and result text."""
    return [
        (c.call_id, c.name, c.args, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def answers_of(transcript: Transcript) -> list[str]:
    return [
        e.text
        for e in transcript.entries
        if isinstance(e, AssistantText) and e.meta.get("final_answer")
    ]


def _format_of(value: Any) -> str | None:
    source, _ = open_source(value)
    return which_format(source)


@pytest.fixture(scope="module")
def agent() -> Any:
    return runs.run()


# --- after the run (A-1) ------------------------------------------------------------------


def test_A1_the_agent_reads_as_task_plan_thoughts_calls_sub_agent_and_answer(agent: Any) -> None:
    transcript = turnfold.load(agent)
    assert transcript.warnings == []
    assert transcript.metadata["source_format"] == "smolagents"
    assert transcript.metadata["model"] == "scripted-1"
    assert transcript.metadata["agent_class"] == "ToolCallingAgent"
    assert "helper" in transcript.metadata["system"]  # the system prompt lists the team
    kinds = [type(e).__name__ for e in transcript.entries]
    assert kinds == [
        "UserMessage",
        "Thinking",  # the plan
        "Thinking", "ToolCall",  # "Let me add first." and add
        "ToolCall",  # explode
        "Thinking", "ToolCall", "ToolCall",  # two adds in one step
        "ToolCall",  # the managed agent
        "AssistantText",  # final_answer
    ]  # fmt: skip
    user = transcript.entries[0]
    assert isinstance(user, UserMessage)
    assert user.text == runs.TASK
    plan = transcript.entries[1]
    assert isinstance(plan, Thinking)
    assert "1. add 1 and 2" in plan.text
    assert calls_of(transcript) == [
        ("call_1", "add", {"a": 1, "b": 2}, "success", "3"),
        (
            "call_2",
            "explode",
            {"x": "y"},
            "error",
            "Error executing tool 'explode' with arguments {'x': 'y'}: ValueError: boom: y\n"
            "Please try again or use another tool",
        ),
        ("call_3a", "add", {"a": 2, "b": 2}, "success", "4"),
        ("call_3b", "add", {"a": 3, "b": 3}, "success", "6"),
        ("call_4", "helper", {"task": "add 5 and 6"}, "success",
         "Here is the final answer from your managed agent 'helper':\n11"),
    ]  # fmt: skip
    assert [c.batch_id for c in transcript.tool_calls()] == [
        "step-1", "step-2", "step-3", "step-3", "step-4"
    ]  # fmt: skip
    assert "final_answer" not in [c.name for c in transcript.tool_calls()]
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == runs.ANSWER
    assert answer.model == "scripted-1"


def test_A1_timestamps_and_usage_are_the_steps_own(agent: Any) -> None:
    from datetime import datetime, timezone

    from smolagents.memory import ActionStep

    transcript = turnfold.load(agent)
    steps = [s for s in agent.memory.steps if isinstance(s, ActionStep)]
    first = datetime.fromtimestamp(steps[0].timing.start_time, tz=timezone.utc).isoformat()
    add = transcript.tool_calls()[0]
    assert add.timestamp == first
    assert add.meta["step"] == 1
    assert add.meta["step_duration_ms"] == pytest.approx(steps[0].timing.duration * 1000)
    assert add.duration_ms is None
    assert add.started_at is None
    thought = transcript.entries[2]
    assert isinstance(thought, Thinking)
    assert counts_of(thought.usage) == {
        "input_tokens": 10,
        "output_tokens": 5,
    }
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (10, 9)
    assert transcript.entries[0].timestamp is None  # a TaskStep records no time


def test_A1_the_final_answer_is_dated_when_its_step_ends() -> None:
    """The answer exists once the last step's ``final_answer`` call returned: dated at that
    step's ``end_time``, the run lasts until then (the last step's model response included),
    not until the last step began."""
    from datetime import datetime, timezone

    steps = json.loads(FULL_STEPS.read_text())
    last = steps[-1]["timing"]
    transcript = turnfold.load(FULL_STEPS)
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == runs.ANSWER
    ended = datetime.fromtimestamp(last["end_time"], tz=timezone.utc)
    assert answer.timestamp == ended.isoformat()
    facts = turnfold.session.session_facts(transcript)
    assert facts.ended == ended
    first = datetime.fromtimestamp(steps[1]["timing"]["start_time"], tz=timezone.utc)
    assert facts.duration_s == pytest.approx((ended - first).total_seconds())
    # Every other entry keeps its step's start (the first call: step 1's).
    step_1 = datetime.fromtimestamp(steps[2]["timing"]["start_time"], tz=timezone.utc)
    assert transcript.tool_calls()[0].timestamp == step_1.isoformat()


def test_L1_the_managed_agent_s_own_steps_nest_under_its_call(agent: Any) -> None:
    transcript = turnfold.load(agent)
    call = transcript.tool_calls()[-1]
    sub = call.subagent
    assert sub is not None
    assert sub.name == "helper"
    assert not sub.steps_missing
    assert sub.task == "add 5 and 6"
    assert sub.transcript is not None
    assert calls_of(sub.transcript) == [("h_1", "add", {"a": 5, "b": 6}, "success", "11")]
    assert answers_of(sub.transcript) == ["11"]
    assert sub.tool_count == 1
    assert sub.output_tokens == 3 + 2
    helper_steps = agent.managed_agents["helper"].memory.steps
    span = (helper_steps[-1].timing.end_time - helper_steps[1].timing.start_time) * 1000
    assert sub.duration_ms == pytest.approx(span)
    assert len(all_calls(transcript)) == count_calls(agent) == 6


def test_A1_every_object_shape_and_the_saved_json_read_the_same_calls(
    agent: Any, tmp_path: Path
) -> None:
    expected = calls_of(turnfold.load(agent))
    saved = tmp_path / "steps.json"
    saved.write_text(json.dumps(agent.memory.get_full_steps()), encoding="utf-8")
    shapes = {
        "memory": agent.memory,
        "steps": agent.memory.steps,
        "dicts": [s.dict() for s in agent.memory.steps],
        "succinct": agent.memory.get_succinct_steps(),
        "json text": json.dumps(agent.memory.get_full_steps()),
        "file": saved,
    }
    for name, shape in shapes.items():
        transcript = turnfold.load(shape)
        assert transcript.warnings == [], name
        assert calls_of(transcript) == expected, name
        assert answers_of(transcript) == [runs.ANSWER], name
        # Without the agent, its managed agent's steps are not at hand: the row says so.
        sub = transcript.tool_calls()[-1].subagent
        assert sub is not None, name
        assert (sub.name, sub.steps_missing) == ("helper", True), name
    assert _format_of(saved) == "smolagents"
    assert _format_of(json.dumps(agent.memory.get_succinct_steps())) == "smolagents"
    assert (
        turnfold.load(agent.memory).metadata["system"] == agent.memory.system_prompt.system_prompt
    )


def test_A1_nothing_the_user_passed_is_modified(agent: Any) -> None:
    before = [s.dict() for s in agent.memory.steps]
    turnfold.load(agent)
    turnfold.load(agent.memory.steps)
    assert [s.dict() for s in agent.memory.steps] == before
    assert agent.memory.steps[3].tool_calls is None  # the failed step, as smolagents left it


def test_L3_a_failed_step_s_call_is_found_in_its_message_and_is_an_error(agent: Any) -> None:
    from smolagents.utils import AgentToolExecutionError

    failed = agent.memory.steps[3]
    assert isinstance(failed.error, AgentToolExecutionError)
    assert failed.tool_calls is None  # smolagents' own record: the call is only in the message
    assert failed.model_output_message.tool_calls[0].id == "call_2"
    call = {c.call_id: c for c in turnfold.load(agent.memory.steps).tool_calls()}["call_2"]
    assert call.status == "error"
    assert call.result is not None
    assert "boom: y" in (call.result.text or "")


def test_A1_a_code_agent_s_code_is_a_python_call_with_its_observation() -> None:
    from turnfold.tools import tool_category

    agent = runs.run_code()
    transcript = turnfold.load(agent)
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [
        ("python", "success"),
        ("python", "error"),
        ("python", "success"),
    ]
    assert all(tool_category(c.name) == "command" for c in calls)
    assert calls[0].args == "print(add(a=1, b=2))"
    assert calls[0].description == "print(add(a=1, b=2))"
    assert calls[0].meta["tool_name"] == "python_interpreter"
    assert calls[0].result is not None
    assert "3" in (calls[0].result.text or "")
    assert calls[1].result is not None
    assert "boom: y" in (calls[1].result.text or "")
    thoughts = [e.text for e in transcript.entries if isinstance(e, Thinking)]
    assert thoughts == ["I add in code.", "now the failing tool.", "done."]  # code cut out
    assert answers_of(transcript) == [runs.CODE_ANSWER]
    assert len(all_calls(transcript)) == count_calls(agent)
    # Live, a code action has no ToolOutput: its ActionStep settles it.
    live = runs.make_code_agent()
    followed = turnfold.follow(live.run(runs.CODE_TASK, stream=True), display=False)
    for _ in followed:
        pass
    assert calls_of(followed.transcript) == calls_of(turnfold.load(live))
    assert answers_of(followed.transcript) == [runs.CODE_ANSWER]


@pytest.mark.parametrize(
    ("replies", "options", "shown"),
    [
        # use_structured_outputs_internally: the model output is the JSON of thought and code
        ([json.dumps({"thought": "I add.", "code": "x = add(a=1, b=2)\nprint(x)"})],
         {"use_structured_outputs_internally": True}, ["I add."]),
        # no code block (a parsing error): smolagents appends the closing tag it stops on
        (["Thought: I forgot the code.", "<code>\nprint(add(a=1, b=2))\n</code>"], {},
         ["I forgot the code."]),
        (["Thought: no fence.", "```python\nprint(add(a=1, b=2))\n```"],
         {"code_block_tags": "markdown"}, ["no fence."]),
        # two code blocks, which smolagents runs as one code action
        (["Thought: two blocks.\n<code>\nx = add(a=1, b=2)\n</code>\nthen\n<code>\nprint(x)\n"
          "</code>"], {}, ["two blocks."]),
    ],
    ids=["structured-outputs", "no-code-block", "no-markdown-block", "two-code-blocks"],
)  # fmt: skip
def test_A1_a_code_agent_s_thought_is_the_model_s_text_without_its_code(
    replies: list[str], options: dict[str, Any], shown: list[str]
) -> None:
    """The thought a ``CodeAgent`` step shows is what the model wrote before its code: not
    the JSON of a structured output, not the closing tag smolagents adds to a text that has
    no code block, not the code of a second block (the call shows it)."""
    from smolagents import CodeAgent

    add, _ = runs._tools()
    scripted = [runs._message(text) for text in replies]
    scripted.append(runs._message(json.dumps({"thought": "", "code": "final_answer('3')"})
                    if options.get("use_structured_outputs_internally")
                    else "<code>\nfinal_answer('3')\n</code>"
                    if options.get("code_block_tags") != "markdown"
                    else "```python\nfinal_answer('3')\n```"))  # fmt: skip
    agent = CodeAgent(
        tools=[add], logger=runs._quiet(), model=runs._model_class()(scripted), **options
    )
    agent.run("add")
    saved = json.loads(json.dumps([step.dict() for step in agent.memory.steps], default=str))
    for transcript in (turnfold.load(agent), turnfold.load(saved, format="smolagents")):
        assert [e.text for e in transcript.entries if isinstance(e, Thinking)] == shown
        assert answers_of(transcript) == ["3"]


# --- a CodeAgent's managed agents (L-1) -------------------------------------------------------


@pytest.fixture(scope="module")
def code_manager() -> Any:
    agent = runs.make_code_manager()
    agent.run(runs.CODE_MANAGER_TASK)
    return agent


def managed_outline(transcript: Transcript) -> list[tuple[Any, ...]]:
    """Each call's id and name, and its sub-agent's name, task, ``steps_missing`` and calls."""
    return [
        (c.call_id, c.name, None if c.subagent is None else (
            c.subagent.name, c.subagent.task, c.subagent.steps_missing,
            None if c.subagent.transcript is None else calls_of(c.subagent.transcript)))
        for c in transcript.tool_calls()
    ]  # fmt: skip


#: The code manager's helper runs, as its scripted model answers them: step 1's, then step
#: 2's two (the memory keeps the last), each with its calls.
STEP_1_HELPER = [("h_1", "add", {"a": 5, "b": 6}, "success", "11")]
STEP_2_HELPER = [("h_4", "add", {"a": 7, "b": 8}, "success", "15")]
CODE_MANAGER_LOADED = [
    ("call_1", "python", ("helper", "add 5 and 6", True, None)),  # its run is not kept
    ("call_2", "python", ("helper", "add 7 and 8", False, STEP_2_HELPER)),
    ("call_2-scribe", "scribe", ("scribe", "note 15", False, [])),
    ("call_3", "python", None),
]


def test_L1_a_managed_agent_a_code_agent_s_code_called_nests_under_that_step_s_python_call(
    code_manager: Any,
) -> None:
    from smolagents.memory import ActionStep

    # smolagents' own record: the helper's memory holds step 2's second run, in step 2's time.
    steps = [s for s in code_manager.memory.steps if isinstance(s, ActionStep)]
    helper = code_manager.managed_agents["helper"]
    kept = [s for s in helper.memory.steps if isinstance(s, ActionStep)]
    assert steps[1].timing.start_time <= kept[0].timing.start_time
    assert kept[-1].timing.end_time <= steps[1].timing.end_time
    assert "add 7 and 8" in helper.memory.steps[0].task

    transcript = turnfold.load(code_manager)
    assert transcript.warnings == []
    assert managed_outline(transcript) == CODE_MANAGER_LOADED
    calls = {c.call_id: c for c in transcript.tool_calls()}
    sub = calls["call_2"].subagent
    assert sub is not None
    assert sub.transcript is not None
    assert calls_of(sub.transcript) == calls_of(turnfold.load(helper))
    assert answers_of(sub.transcript) == ["15"]
    assert sub.duration_ms == pytest.approx(
        (kept[-1].timing.end_time - kept[0].timing.start_time) * 1000
    )
    # The scribe ran from the same code: a call of its own after the python call, made by it.
    scribe = calls["call_2-scribe"]
    assert (scribe.status, scribe.result.text if scribe.result else None) == ("success", "noted")
    assert (scribe.meta["called_by"], scribe.batch_id) == ("call_2", calls["call_2"].batch_id)
    nested = [c for c in all_calls(transcript) if "called_by" not in c.meta]
    assert len(nested) == count_calls(code_manager)
    # Given the agent, its steps read the same; without it, a python call whose logs hold a
    # managed agent's report ran one, whose steps are not at hand.
    assert managed_outline(turnfold.load(code_manager.memory.steps, agent=code_manager)) == (
        CODE_MANAGER_LOADED
    )
    assert managed_outline(turnfold.load(code_manager.memory.steps)) == [
        ("call_1", "python", ("helper", None, True, None)),
        ("call_2", "python", ("helper", None, True, None)),
        ("call_3", "python", None),
    ]
    with pytest.raises(TypeError, match="agent= is the smolagents agent"):
        turnfold.load(code_manager.memory.steps, agent=object())


def test_L1_a_managed_agent_s_run_outside_the_steps_is_not_nested() -> None:
    """The memory keeps the managed agent's last run, wherever it ran: run on its own after
    its manager, its times are in no step of the manager's, so no call holds it, which a
    warning says."""
    agent = runs.make_code_manager()
    agent.run(runs.CODE_MANAGER_TASK)
    scribe = agent.managed_agents["scribe"]
    scribe.model.replies.append(runs._message(None, ("final_answer", {"answer": "again"}, "s_2")))
    scribe.run("On your own.")
    transcript = turnfold.load(agent)
    assert [w.reason for w in transcript.warnings] == [
        "scribe's kept run ran outside the steps: not shown"
    ]
    assert managed_outline(transcript) == [
        row for row in CODE_MANAGER_LOADED if row[0] != "call_2-scribe"
    ]
    steps = steps_accounted(transcript)
    assert steps["warned"] == len(scribe.memory.steps)
    assert sum(steps.values()) == count_steps(agent)


def count_steps(agent: Any) -> int:
    """The steps of an agent's memory and of its managed agents' (the runs they kept)."""
    return len(agent.memory.steps) + sum(map(count_steps, agent.managed_agents.values()))


def steps_accounted(transcript: Transcript) -> dict[str, int]:
    """How many steps a load accounted for, by disposition."""
    from turnfold.formats.frameworks.smolagents import STEP_TYPES

    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    found: dict[str, int] = {}
    for kind in STEP_TYPES:
        for disposition, count in transcript.accounting.counts.get(kind, {}).items():
            found[disposition] = found.get(disposition, 0) + count
    return found


def test_X2_a_managed_agent_s_run_no_call_shows_is_accounted_for_as_warned(
    code_manager: Any,
) -> None:
    """Every kept run a load does not show (no call of it among the steps given; its call
    holding another's run) is counted, step by step, as warned about, beside the warning."""
    from turnfold.formats.frameworks.smolagents import plain

    shown = turnfold.load(code_manager)
    assert steps_accounted(shown) == {"mapped": count_steps(code_manager)}
    first = turnfold.load(code_manager.memory.steps[:2], agent=code_manager)
    assert [w.reason for w in first.warnings] == [
        "helper's kept run ran outside the steps: not shown",
        "scribe's kept run ran outside the steps: not shown",
    ]
    assert steps_accounted(first) == {"mapped": 2, "warned": count_steps(code_manager) - 4}
    document = plain(code_manager)
    for run in (document, *document["managed_agents"].values()):
        for step in run["steps"]:
            if isinstance(step, dict) and "timing" in step:
                step["timing"] = {}
    scribe = len(code_manager.managed_agents["scribe"].memory.steps)
    untimed = turnfold.load(document, format="smolagents")
    assert [w.reason for w in untimed.warnings] == [
        "scribe's run is not shown: its call holds another's"
    ]
    assert steps_accounted(untimed) == {
        "mapped": count_steps(code_manager) - scribe,
        "warned": scribe,
    }
    document["steps"] = document["steps"][:2]
    uncalled = turnfold.load(document, format="smolagents")
    assert [w.reason for w in uncalled.warnings] == [
        "scribe's kept run: no call in these steps could have made it"
    ]
    assert steps_accounted(uncalled) == {
        "mapped": count_steps(code_manager) - 2 - scribe,
        "warned": scribe,
    }


def test_L1_without_recorded_times_the_last_call_that_could_have_run_it_holds_it_with_a_warning(
    code_manager: Any,
) -> None:
    """Saved steps without times: the task its code wrote tells which call ran the kept run;
    when no task tells, the last call that could have is a guess, said; the code of one call
    that ran two managed agents shows one, and says the other is not shown."""
    from turnfold.formats.frameworks.smolagents import plain

    def untimed(document: Any) -> Any:
        for step in document["steps"]:
            if isinstance(step, dict) and "timing" in step:
                step["timing"] = {}
        for child in document.get("managed_agents", {}).values():
            untimed(child)
        return document

    told = turnfold.load(untimed(plain(code_manager)), format="smolagents")
    assert managed_outline(told)[:2] == CODE_MANAGER_LOADED[:2]
    assert [w.reason for w in told.warnings] == [
        "scribe's run is not shown: its call holds another's"
    ]
    document = untimed(plain(code_manager))
    document["managed_agents"]["helper"]["steps"][0]["task"] = "A task no code wrote."
    guessed = turnfold.load(document, format="smolagents")
    assert [row[2][:3] if row[2] else None for row in managed_outline(guessed)] == [
        ("helper", "add 5 and 6", True),
        ("helper", None, False),  # the last that could have
        None,
    ]
    assert guessed.warnings[0].reason == (
        "helper's memory keeps one run: nothing recorded tells which of 2 calls made it; "
        "it is shown under the last"
    )


def test_L1_code_too_deeply_nested_to_parse_calls_no_managed_agent(code_manager: Any) -> None:
    """Python's parser gives up on deeply nested code with MemoryError (or RecursionError):
    such code ran nothing, as code that does not parse, and the load goes on."""
    from turnfold.formats.frameworks.smolagents import plain

    document = plain(code_manager)
    deep = "-" * 200_000 + "helper('x')"
    document["steps"][2]["tool_calls"][0]["function"]["arguments"] = deep
    transcript = turnfold.load(document, format="smolagents")
    assert [row[:2] for row in managed_outline(transcript)][:2] == [
        ("call_1", "python"),
        ("call_2", "python"),
    ]


def test_A1_several_calls_of_a_step_pair_with_its_observation_lines_or_share_it() -> None:
    def step(observations: str) -> dict[str, Any]:
        calls = [
            {"id": i, "type": "function", "function": {"name": "look", "arguments": {"q": i}}}
            for i in ("a", "b")
        ]
        return {
            "step_number": 1,
            "timing": {"start_time": 1.7e9, "end_time": 1.7e9 + 1, "duration": 1},
            "tool_calls": calls,
            "error": None,
            "observations": observations,
            "is_final_answer": False,
        }

    paired = turnfold.load([{"task": "t"}, step("A\nB")])
    assert [c.result.text for c in paired.tool_calls() if c.result] == ["A", "B"]
    shared = turnfold.load([{"task": "t"}, step("line 1\nline 2\nB")])
    first, second = shared.tool_calls()
    assert first.result is not None
    assert first.result.text == "line 1\nline 2\nB"
    assert second.result is None
    assert second.status == "success"
    assert first.meta["shared_observations"] == second.meta["shared_observations"] == "a"


def test_L3_an_error_that_names_one_of_several_calls_fails_that_one_alone() -> None:
    calls = [
        {"id": i, "type": "function", "function": {"name": name, "arguments": {}}}
        for i, name in (("a", "add"), ("b", "explode"))
    ]
    record = {
        "step_number": 1,
        "timing": {"start_time": 1.7e9, "end_time": 1.7e9 + 1},
        "tool_calls": [],
        "error": {"type": "AgentToolExecutionError", "message": "Error executing tool 'explode'"},
        "model_output_message": {"role": "assistant", "content": None, "tool_calls": calls},
        "observations": None,
    }
    transcript = turnfold.load([record])
    assert [(c.call_id, c.status) for c in transcript.tool_calls()] == [
        ("a", "unknown"),  # ran or not: the failed step keeps no output of it
        ("b", "error"),
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [({"a": 1, "b": [2]}, '```json\n{\n  "a": 1,\n  "b": [\n    2\n  ]\n}\n```'),
     ([1, 2], "```json\n[\n  1,\n  2\n]\n```"), (42, "42"), ("  text  ", "text")],
    ids=["dict", "list", "number", "text"],
)  # fmt: skip
def test_A1_a_final_answer_that_is_not_text_is_its_json_as_a_code_agent_s(
    value: Any, shown: str
) -> None:
    """A ToolCallingAgent's ``final_answer`` of a dict, a list or a number: its observation is
    the value's ``str()`` (``{'a': 1}``); it is shown as JSON (a dict's or a list's in a fenced
    block), as a CodeAgent's answer (its ``action_output``) is, loaded from the agent or its
    saved steps, and followed live. Text is its observation (stripped by smolagents)."""
    from smolagents import ToolCallingAgent

    def make() -> Any:
        reply = runs._message(None, ("final_answer", {"answer": value}, "c1"))
        return ToolCallingAgent(tools=[], logger=runs._quiet(), model=runs._model_class()([reply]))

    agent = make()
    agent.run("answer")
    assert answers_of(turnfold.load(agent)) == [shown]
    saved = json.loads(json.dumps([step.dict() for step in agent.memory.steps], default=str))
    assert answers_of(turnfold.load(saved, format="smolagents")) == [shown]
    followed = turnfold.follow(make().run("answer", stream=True), display=False)
    for _ in followed:
        pass
    assert answers_of(followed.transcript) == [shown]


def test_A1_a_run_that_hits_max_steps_says_so_and_shows_the_forced_answer() -> None:
    from smolagents import ToolCallingAgent

    add, _ = runs._tools()
    model = runs._model_class()(
        [runs._message(None, ("add", {"a": 1, "b": 1}, "c1")), runs._message("Forced: 2")]
    )
    agent = ToolCallingAgent(tools=[add], max_steps=1, logger=runs._quiet(), model=model)
    events = list(turnfold.follow(agent.run("add", stream=True), display=False))
    loaded = turnfold.load(agent)
    notices = [e for e in loaded.entries if isinstance(e, SystemNotice)]
    assert [(n.level, n.subtype) for n in notices] == [("warning", "max_steps")]
    assert answers_of(loaded) == ["Forced: 2"]
    followed = Transcript()
    follower = Follower(followed)
    for event in events:
        follower.feed(event)
    follower.close()
    assert calls_of(followed) == calls_of(loaded)
    assert answers_of(followed) == ["Forced: 2"]
    assert [n.subtype for n in followed.entries if isinstance(n, SystemNotice)] == ["max_steps"]


@pytest.mark.parametrize("agent_class", ["ToolCallingAgent", "CodeAgent"])
def test_A1_an_answer_a_final_answer_check_refused_is_shown_refused_with_its_usage(
    agent_class: str,
) -> None:
    """A ``final_answer_checks`` function that refuses an answer fails the step with an
    ``AgentError`` after its calls ran: the refused answer (a ToolCallingAgent's, as live
    shows it before the check) or the code that gave it (a CodeAgent's, with its output) is
    shown with the step's usage, then the error; the run's answer is the one accepted."""
    import smolagents

    def check(answer: Any, memory: Any, agent: Any = None) -> bool:
        return answer != "bad"

    def make() -> Any:
        if agent_class == "ToolCallingAgent":
            replies = [
                runs._message(None, ("final_answer", {"answer": "bad"}, "c1")),
                runs._message(None, ("final_answer", {"answer": "good"}, "c2")),
            ]
        else:
            replies = [
                runs._message("<code>\nfinal_answer('bad')\n</code>"),
                runs._message("<code>\nfinal_answer('good')\n</code>"),
            ]
        cls = getattr(smolagents, agent_class)
        model = runs._model_class()(replies)
        return cls(tools=[], logger=runs._quiet(), final_answer_checks=[check], model=model)

    agent = make()
    agent.run("answer")
    loaded = turnfold.load(agent)
    assert session_facts(loaded).tokens == {"input_tokens": 20, "output_tokens": 10}
    (notice,) = [e for e in loaded.entries if isinstance(e, SystemNotice)]
    assert notice.text.startswith("AgentError: Check check failed")
    texts = [e for e in loaded.entries if isinstance(e, AssistantText)]
    if agent_class == "ToolCallingAgent":
        assert [(e.text, "refused" in e.meta) for e in texts] == [("bad", True), ("good", False)]
    else:
        assert [(c.status, c.result and c.result.text) for c in loaded.tool_calls()] == [
            ("success", "Execution logs:\nLast output from code snippet:\nbad"),
            ("success", "Execution logs:\nLast output from code snippet:\ngood"),
        ]
        assert [e.text for e in texts] == ["good"]
    live = make()
    followed = turnfold.follow(live.run("answer", stream=True), display=False)
    for _ in followed:
        pass
    assert calls_of(followed.transcript) == calls_of(loaded)
    shown = [e for e in followed.transcript.entries if isinstance(e, AssistantText)]
    assert [(e.text, e.meta.get("refused")) for e in shown] == [
        (e.text, e.meta.get("refused")) for e in texts
    ]


def test_A2_a_followed_run_that_hits_max_steps_counts_its_forced_answer_as_a_load_does() -> None:
    """At ``max_steps`` smolagents writes the forced answer's step (its time and usage) to
    memory but yields the previous step again in its place: given the agent, the follower
    reads that step from memory, so the followed run's answer, usage and span are a load's."""
    from smolagents import ToolCallingAgent

    add, _ = runs._tools()
    model = runs._model_class()(
        [runs._message(None, ("add", {"a": 1, "b": 1}, "c1")), runs._message("Forced: 2", tokens=3)]
    )
    agent = ToolCallingAgent(tools=[add], max_steps=1, logger=runs._quiet(), model=model)
    followed = turnfold.follow(agent.run("add", stream=True), display=False, agent=agent)
    for _ in followed:
        pass
    loaded = turnfold.load(agent)
    (answer,) = [e for e in followed.transcript.entries if isinstance(e, AssistantText)]
    assert answer.text == "Forced: 2"
    assert answer.usage is not None
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (10, 3)
    assert session_facts(followed.transcript).tokens == session_facts(loaded).tokens
    assert [e.timestamp for e in followed.transcript.entries] == [e.timestamp for e in loaded]
    notices = [e for e in followed.transcript.entries if isinstance(e, SystemNotice)]
    assert [(n.level, n.subtype) for n in notices] == [("warning", "max_steps")]


# --- the saved fixtures ---------------------------------------------------------------------


@pytest.mark.parametrize("path", [FULL_STEPS, HELPER_STEPS, CODE_RESULT], ids=lambda p: p.name)
def test_A1_the_saved_steps_load_from_a_file_by_detection(path: Path) -> None:
    assert _format_of(path) == "smolagents"
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert len(all_calls(transcript)) == count_saved(path)
    assert answers_of(transcript)


def test_A1_the_saved_run_matches_a_fresh_run(agent: Any) -> None:
    saved = turnfold.load(FULL_STEPS)
    fresh = turnfold.load(agent.memory.steps)
    assert calls_of(saved) == calls_of(fresh)
    assert answers_of(saved) == answers_of(fresh)
    assert [c.status for c in saved.tool_calls()].count("error") == 1
    result = turnfold.load(CODE_RESULT)
    assert result.metadata["state"] == "success"
    assert result.metadata["final_output"] == runs.CODE_ANSWER


# --- live (A-2) -----------------------------------------------------------------------------


def _passed_on(events: Any) -> Any:
    """``events`` passed on by a generator of the test's own: the run's events alone, which
    lead to no agent (``turnfold.follow(agent.run(task, stream=True))`` reads the agent off
    the generator ``run`` returns)."""
    yield from events


@pytest.mark.parametrize("stream_outputs", [False, True], ids=["steps", "deltas"])
def test_A2_following_the_stream_gives_the_calls_statuses_and_answer_of_a_load(
    stream_outputs: bool,
) -> None:
    follows: list[Any] = []

    def wrap(events: Any) -> Any:
        follows.append(turnfold.follow(_passed_on(events), display=False))
        return follows[0]

    agent, events = runs.run_stream(wrap, stream_outputs=stream_outputs)
    kinds = {type(e).__name__ for e in events}
    assert {"ToolCall", "ToolOutput", "ActionStep", "PlanningStep", "FinalAnswerStep"} <= kinds
    assert ("ChatMessageStreamDelta" in kinds) is stream_outputs
    followed = follows[0].transcript
    assert followed.warnings == []
    loaded = turnfold.load(agent)
    assert calls_of(followed) == calls_of(loaded)
    assert answers_of(followed) == answers_of(loaded) == [runs.ANSWER]
    assert calls_of(followed) == calls_of(turnfold.load(agent.memory.steps))
    # The stream does not carry the managed agent's steps: its row says so.
    sub = followed.tool_calls()[-1].subagent
    assert sub is not None
    assert sub.name == "helper"
    assert sub.steps_missing
    thoughts = {e.text for e in followed.entries if isinstance(e, Thinking)}
    assert thoughts == {e.text for e in loaded.entries if isinstance(e, Thinking)}
    assert not any(e.streaming for e in followed.entries if isinstance(e, Thinking))


@pytest.mark.parametrize("stream_outputs", [False, True], ids=["steps", "deltas"])
def test_A2_followed_with_the_agent_the_task_and_the_agent_s_model_are_shown(
    stream_outputs: bool,
) -> None:
    """``run`` writes the task to the agent's memory before the stream starts, and the stream
    never carries it: given the agent, the followed run shows it, and the agent's model and
    system prompt, as a load of the agent does."""
    agent = runs.make_agent(stream_outputs=stream_outputs)
    followed = turnfold.follow(agent.run(runs.TASK, stream=True), display=False, agent=agent)
    for _ in followed:
        pass
    loaded = turnfold.load(agent)
    task = followed.transcript.entries[0]
    assert isinstance(task, UserMessage)
    assert task.text == runs.TASK
    assert [e.text for e in followed.transcript.entries if isinstance(e, UserMessage)] == [
        runs.TASK
    ]
    answer = followed.transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert (answer.text, answer.model) == (runs.ANSWER, "scripted-1")
    for key in ("model", "agent_class", "system"):
        assert followed.transcript.metadata[key] == loaded.metadata[key]
    assert calls_of(followed.transcript) == calls_of(loaded)
    if stream_outputs:  # text streamed in order: the whole run as a load shows it
        assert [type(e).__name__ for e in followed.transcript.entries] == [
            type(e).__name__ for e in loaded.entries
        ]


def test_A2_followed_with_the_agent_each_step_s_managed_run_nests_when_the_step_ends() -> None:
    """Given the agent, the ``ActionStep`` that ends a step finds the run the step's code made
    in the managed agent's memory: step 1's run, which the memory no longer holds after the
    run, nests too; without it, the calls whose logs hold a report ran a managed agent."""
    agent = runs.make_code_manager()
    followed = turnfold.follow(
        agent.run(runs.CODE_MANAGER_TASK, stream=True), display=False, agent=agent
    )
    at_step_end = []
    for event in followed:
        if type(event).__name__ == "ActionStep" and event.step_number == 1:
            at_step_end = managed_outline(followed.transcript)
    assert at_step_end == [("call_1", "python", ("helper", "add 5 and 6", False, STEP_1_HELPER))]
    transcript = followed.transcript
    assert transcript.warnings == []
    assert managed_outline(transcript) == [at_step_end[0], *CODE_MANAGER_LOADED[1:]]
    assert calls_of(transcript) == calls_of(turnfold.load(agent))

    bare = runs.make_code_manager()
    alone = turnfold.follow(
        _passed_on(bare.run(runs.CODE_MANAGER_TASK, stream=True)), display=False
    )
    for _ in alone:
        pass
    assert [row[2] for row in managed_outline(alone.transcript)] == [
        ("helper", None, True, None), ("helper", None, True, None), None
    ]  # fmt: skip

    # A ToolCallingAgent's call of its managed agent's name alike.
    caller = runs.make_agent()
    with_agent = turnfold.follow(caller.run(runs.TASK, stream=True), display=False, agent=caller)
    for _ in with_agent:
        pass
    sub = with_agent.transcript.tool_calls()[-1].subagent
    assert sub is not None
    assert (sub.name, sub.task, sub.steps_missing) == ("helper", "add 5 and 6", False)
    assert sub.transcript is not None
    assert calls_of(sub.transcript) == [("h_1", "add", {"a": 5, "b": 6}, "success", "11")]


def test_A2_a_call_shows_executing_until_its_output_or_its_failed_step() -> None:
    _, events = runs.run_stream()
    transcript = Transcript()
    follower = Follower(transcript)
    seen: list[tuple[str, str]] = []
    changes: list[str] = []
    transcript.observe(lambda change: changes.append(change.action))
    for event in events:
        follower.feed(event)
        kind = type(event).__name__
        if kind == "ToolCall" and event.name != "final_answer":
            seen.append((event.id, transcript.tool_calls()[-1].status))
        if kind == "ToolOutput" and not event.is_final_answer:
            call = next(c for c in transcript.tool_calls() if c.call_id == event.id)
            seen.append((event.id, call.status))
        if kind == "ActionStep" and event.error is not None:
            call = next(c for c in transcript.tool_calls() if c.call_id == "call_2")
            seen.append(("call_2 at its step", call.status))
    follower.close()
    assert seen[:4] == [
        ("call_1", "executing"),
        ("call_1", "success"),
        ("call_2", "executing"),  # explode: no ToolOutput comes, its ActionStep has the error
        ("call_2 at its step", "error"),
    ]
    assert "append" in changes
    assert "update" in changes


def test_A2_events_of_other_kinds_are_passed_on_and_said() -> None:
    transcript = Transcript()
    follower = Follower(transcript)
    follower.feed(object())
    follower.close()
    assert [w.reason for w in transcript.warnings] == ["event of type object not read"]


# --- bad input (L-4) ------------------------------------------------------------------------


def test_L4_smolagents_objects_that_are_not_steps_give_a_format_error(agent: Any) -> None:
    from smolagents.models import ChatMessage

    messages = agent.memory.steps[1].model_input_messages  # ChatMessages, not steps
    with pytest.raises(TranscriptFormatError) as caught:
        turnfold.load(messages)
    assert "<object>" in str(caught.value)
    assert "ChatMessage is not a smolagents step" in str(caught.value)
    with pytest.raises(TranscriptFormatError):
        turnfold.load(ChatMessage(role="user", content="hi"))


def test_L4_an_agent_that_has_not_run_says_so() -> None:
    with pytest.raises(TranscriptFormatError, match="memory is empty"):
        turnfold.load(runs.make_agent())


def test_A1_a_run_result_reads_its_steps_output_and_state() -> None:
    agent = runs.make_code_agent()
    result = agent.run(runs.CODE_TASK, return_full_result=True)
    transcript = turnfold.load(result)
    assert transcript.warnings == []
    assert calls_of(transcript) == calls_of(turnfold.load(agent))
    assert transcript.metadata["final_output"] == runs.CODE_ANSWER
    assert transcript.metadata["state"] == "success"
    assert transcript.metadata["usage"] == {"input_tokens": 30, "output_tokens": 14}


def test_L4_a_list_of_steps_with_a_stranger_keeps_the_steps_and_warns(agent: Any) -> None:
    from smolagents.models import ChatMessage

    mixed = [*agent.memory.steps, ChatMessage(role="user", content="x")]
    transcript = turnfold.load(mixed)
    assert calls_of(transcript) == calls_of(turnfold.load(agent.memory.steps))
    assert [w.reason for w in transcript.warnings] == [
        "smolagents.models.ChatMessage is not a smolagents step; skipped"
    ]


def test_L4_a_malformed_saved_file_names_itself_or_warns(tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.json"
    truncated.write_text(FULL_STEPS.read_text(encoding="utf-8")[:5000], encoding="utf-8")
    with pytest.raises(TranscriptFormatError) as caught:
        turnfold.load(truncated)
    assert str(truncated) in str(caught.value)
    odd = tmp_path / "odd.json"
    steps = json.loads(FULL_STEPS.read_text(encoding="utf-8"))
    steps[2]["tool_calls"] = [{"function": "not a call"}, *steps[2]["tool_calls"]]
    steps[2]["timing"]["start_time"] = "yesterday"
    steps.insert(2, {"unexpected": True})
    odd.write_text(json.dumps(steps), encoding="utf-8")
    transcript = turnfold.load(odd)
    reasons = [w.reason for w in transcript.warnings]
    assert any("unreadable tool call" in r for r in reasons)
    assert any("not a smolagents step" in r for r in reasons)
    assert len(transcript.tool_calls()) == len(turnfold.load(FULL_STEPS).tool_calls())
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


# --- cost and size ----------------------------------------------------------------------


def test_A3_the_module_imports_without_importing_smolagents() -> None:
    code = (
        "import sys, turnfold.formats.frameworks.smolagents as m; "
        "assert 'smolagents' not in sys.modules, 'imported'; print(m.NAME)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "smolagents"


def test_A2_a_long_run_follows_and_loads_with_every_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Prints the cost of following and of loading (the bars are the benchmarks', not
    asserted here); ``TURNFOLD_SMOLAGENTS_STEPS=500`` for the issue's run length (the
    framework's own ``step.dict()`` is quadratic in it: about 40 s at 500 steps)."""
    steps = int(os.environ.get("TURNFOLD_SMOLAGENTS_STEPS", "100"))
    figures = runs.measure(steps)
    assert figures["calls_followed"] == figures["calls_loaded"] == steps
    assert figures["steps_dicts"] == steps + 2  # the task, the calls, the answer
    with capsys.disabled():
        print("\n" + runs.report(figures, steps))


def test_A1_steps_of_smolagents_before_1_19_are_read() -> None:
    """smolagents 1.8 to 1.18 named an action step's number ``step`` and, before 1.17, kept
    ``start_time`` / ``end_time`` / ``duration`` on the step instead of ``timing``: a real
    1.12.0 run (a scripted model; ``get_succinct_steps()`` saved with ``default=str``, as
    its users did, so ``model_output_message`` is its repr) reads like a current one."""
    path = FIXTURES / "smolagents_v1.12.0_succinct-steps_tool-error.json"
    assert _format_of(path) == "smolagents"
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    calls = transcript.tool_calls()
    assert [(c.name, c.status) for c in calls] == [("add", "success"), ("explode", "error")]
    assert calls[0].result is not None
    assert calls[0].result.text == "5"
    assert calls[1].result is not None
    assert "boom: testing" in calls[1].result.text
    assert all(c.timestamp is not None for c in calls)
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert answer.text == "5"
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    old_plan = {"model_input_messages": [], "model_output_message": None, "plan": "1. add"}
    planned = turnfold.load([{"task": "Add.", "task_images": None}, old_plan])
    assert [type(e).__name__ for e in planned.entries] == ["UserMessage", "Thinking"]


def test_P2_a_final_answer_of_a_dict_is_drawn_as_data_not_as_prose() -> None:
    """Shown as prose, Markdown read the answer's ``*x*`` and ``__init__`` as emphasis and
    folded its lines: a dict (or list) is a fenced JSON block, drawn as it is."""
    from smolagents import ToolCallingAgent

    value = {"name": "*x* and __init__", "ids": [1, 2]}
    reply = runs._message(None, ("final_answer", {"answer": value}, "c1"))
    agent = ToolCallingAgent(tools=[], logger=runs._quiet(), model=runs._model_class()([reply]))
    agent.run("answer")
    answer, shown = answer_of(turnfold.load(agent))
    assert answer.meta.get("final_answer") is True
    assert json.loads(shown) == value
    assert shown.strip() == json.dumps(value, indent=2)  # its lines kept, nothing emphasised
