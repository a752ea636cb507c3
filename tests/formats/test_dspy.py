"""DSPy agents after the run and live (spec A-1, A-2, A-3, L-3, L-4; issue 22).

The runs are the real ``dspy`` 3.4.1 with ``DummyLM`` (``dspy_runs``): a ``ReAct`` that thinks,
calls ``add`` (succeeds) and ``explode`` (raises), finishes and answers with reasoning; a
``ReAct`` whose tool runs another ``ReAct`` and returns its ``Prediction``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.formats import dspy_runs  # sets litellm's local price map before dspy is imported
from tests.formats.counters_dspy import dspy as count_calls
from tests.formats.flat_reads import assert_read_alike
from tests.formats.loops import run_async
from turnfold.formats import TranscriptFormatError
from turnfold.formats.frameworks import adapter_of
from turnfold.formats.frameworks import dspy as reader
from turnfold.model import AssistantText, SystemNotice, Thinking, ToolCall, Transcript

dspy = pytest.importorskip("dspy")

SOLO = dspy_runs.FIXTURES / "dspy_v3.4.1_prediction-todict_solo.json"
NESTED = dspy_runs.FIXTURES / "dspy_v3.4.1_prediction-todict_nested.json"
KINDS = ["Thinking", "ToolCall", "Thinking", "ToolCall", "Thinking", "Thinking", "AssistantText"]


@pytest.fixture(scope="module")
def solo() -> tuple[Any, Any, Any]:
    return dspy_runs.run("solo")


@pytest.fixture(scope="module")
def nested() -> tuple[Any, Any, Any]:
    return dspy_runs.run("nested")


def calls_of(transcript: Transcript) -> list[tuple[Any, ...]]:
    return [(c.call_id, c.name, c.args, c.status) for c in transcript.tool_calls()]


def kinds(transcript: Transcript) -> list[str]:
    return [type(e).__name__ for e in transcript.entries]


def texts(transcript: Transcript) -> list[str | None]:
    return [getattr(e, "text", None) for e in transcript.entries]


# --- after the run -------------------------------------------------------------------------


def test_A1_load_of_the_prediction_shows_thoughts_calls_statuses_reasoning_and_answer(
    solo: tuple[Any, Any, Any],
) -> None:
    _, prediction, _ = solo
    assert type(prediction).__module__ == "dspy.primitives.prediction"
    transcript = turnfold.load(prediction)
    assert transcript.metadata == {"source_format": "dspy"}
    assert kinds(transcript) == KINDS
    assert texts(transcript)[::2] == ["need add", "now explode", "done", "3"]
    assert calls_of(transcript) == [
        ("step-0", "add", {"a": 1, "b": 2}, "success"),
        ("step-1", "explode", {"x": "y"}, "error"),
    ]  # finish ends the run: no call row
    add, explode = transcript.tool_calls()
    assert add.result is not None
    assert add.result.text == "3"
    assert explode.result is not None
    assert explode.result.text is not None
    assert explode.result.text.startswith("Execution error in explode: ")
    assert explode.result.text.endswith("ValueError: boom: y")
    reasoning, answer = transcript.entries[-2:]
    assert isinstance(reasoning, Thinking)
    assert reasoning.text == "1+2=3 and explode failed"
    assert isinstance(answer, AssistantText)
    assert answer.text == dspy_runs.ANSWER
    # L-3: the trajectory holds no usage, model or time.
    assert all(
        getattr(e, "usage", None) is None and e.timestamp is None for e in transcript.entries
    )
    assert transcript.warnings == []


@pytest.mark.parametrize("given", ["program", "lm", "history"])
def test_A1_given_the_program_or_its_lm_each_step_has_its_call_s_usage_model_and_time(
    solo: tuple[Any, Any, Any], given: str
) -> None:
    agent, prediction, lm = solo
    agent_ = {"program": agent, "lm": lm, "history": lm.history}[given]
    transcript = turnfold.load(prediction, agent=agent_)
    assert transcript.metadata == {"source_format": "dspy", "model": "dummy"}
    thoughts = [e for e in transcript.entries if isinstance(e, Thinking)]
    # BaseLM's local time without an offset, with this machine's (the one that ran it).
    local = [datetime.fromisoformat(h["timestamp"]).astimezone() for h in lm.history]
    assert [t.timestamp for t in thoughts] == [m.isoformat() for m in local]
    # Each ReAct step's response wrote a thought and a call: its usage sits on the thought.
    for thought in thoughts[:3]:
        assert thought.usage is not None
        assert (thought.usage.input_tokens, thought.usage.output_tokens) == (0, 0)
        assert thought.meta == {"model": "dummy"}
    answer = transcript.entries[-1]
    assert isinstance(answer, AssistantText)
    assert (answer.model, answer.usage is not None) == ("dummy", True)
    assert calls_of(transcript) == calls_of(turnfold.load(prediction))


def test_A1_an_lm_call_s_local_time_is_dated_in_its_time_zone(
    solo: tuple[Any, Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``BaseLM`` dates a call with ``datetime.now().isoformat()``: local time, no offset. Read
    as UTC, a run made at 09:00 in New York would show 09:00Z, five hours early."""
    import time

    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        _, prediction, lm = solo
        history = [{**h, "timestamp": "2026-01-15T09:00:00.250000"} for h in lm.history]
        transcript = turnfold.load(prediction, agent=history)
        facts = turnfold.session.session_facts(transcript)
        assert facts.started == datetime(2026, 1, 15, 14, 0, 0, 250000, tzinfo=timezone.utc)
        thought = next(e for e in transcript.entries if isinstance(e, Thinking))
        assert thought.timestamp == "2026-01-15T09:00:00.250000-05:00"
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_A1_history_usage_counts_and_cost_are_read_and_a_call_not_in_it_gets_none(
    solo: tuple[Any, Any, Any],
) -> None:
    _, prediction, lm = solo
    history = [dict(entry) for entry in lm.history]
    history[0]["usage"] = {
        "prompt_tokens": 120, "completion_tokens": 30,
        "prompt_tokens_details": {"cached_tokens": 100},
        "completion_tokens_details": {"reasoning_tokens": 7},
    }  # fmt: skip
    history[0]["cost"] = 0.25
    history[3]["cost"] = 0.5
    history[0]["response_model"] = "openai/gpt-4o-mini-2024"
    del history[1]  # explode's step: no call of it is known
    transcript = turnfold.load(prediction, agent=history)
    first, _, second = transcript.entries[:3]
    assert isinstance(first, Thinking)
    assert first.usage is not None
    assert (first.usage.input_tokens, first.usage.cache_read_tokens) == (120, 100)
    assert (first.usage.output_tokens, first.usage.reasoning_tokens) == (30, 7)
    assert first.meta == {"model": "openai/gpt-4o-mini-2024"}
    assert isinstance(second, Thinking)
    assert (second.usage, second.timestamp) == (None, None)
    assert transcript.metadata["cost_usd"] == 0.75


def test_A1_the_saved_json_loads_by_detection_and_the_counter_agrees(
    solo: tuple[Any, Any, Any], tmp_path: Path
) -> None:
    for path in (SOLO, NESTED):
        transcript = turnfold.load(path)
        assert transcript.metadata["source_format"] == "dspy"
        assert len(transcript.tool_calls(nested=True)) == count_calls(path)
        assert transcript.warnings == []
    _, prediction, _ = solo
    # toDict() of the object reads as the object does; the trajectory alone gives the steps.
    assert turnfold.load(prediction.toDict()) == turnfold.load(prediction)
    alone = tmp_path / "trajectory.json"
    alone.write_text(json.dumps(prediction.trajectory), encoding="utf-8")
    steps = turnfold.load(alone)
    assert kinds(steps) == KINDS[:5]
    assert calls_of(steps) == calls_of(turnfold.load(prediction))


def test_A1_a_tool_that_returns_another_program_s_prediction_nests_its_run(
    nested: tuple[Any, Any, Any],
) -> None:
    _, prediction, _ = nested
    for transcript in (turnfold.load(prediction), turnfold.load(NESTED)):
        (call,) = transcript.tool_calls()
        assert (call.name, call.status) == ("ask_helper", "success")
        assert call.result is not None
        assert call.result.text == "5"
        assert call.subagent is not None
        assert (call.subagent.name, call.subagent.task, call.subagent.tool_count) == (
            "ask_helper", "what is 2+3", 1,
        )  # fmt: skip
        child = call.subagent.transcript
        assert child is not None
        assert calls_of(child) == [("step-0", "add", {"a": 2, "b": 3}, "success")]
        assert texts(child)[-2:] == ["2+3=5", "5"]
        assert texts(transcript)[-1] == "5"


def test_A1_a_tool_that_is_a_program_is_a_sub_agent_whose_steps_are_missing() -> None:
    helper = dspy.ReAct("question -> answer", tools=[dspy_runs.add], max_iters=2)
    tool = dspy.Tool(helper, name="helper", desc="a helper", args={"question": {"type": "string"}})
    agent = dspy.ReAct("question -> answer", tools=[tool], max_iters=2)
    trajectory = {
        "thought_0": "ask", "tool_name_0": "helper", "tool_args_0": {"question": "2+3?"},
        "observation_0": "5", "thought_1": "ok", "tool_name_1": "finish", "tool_args_1": {},
        "observation_1": "Completed.",
    }  # fmt: skip
    prediction = dspy.Prediction(trajectory=trajectory, reasoning="r", answer="5")
    (call,) = turnfold.load(prediction, agent=agent).tool_calls()
    assert call.subagent is not None
    assert (call.subagent.name, call.subagent.steps_missing) == ("helper", True)
    assert turnfold.load(prediction).tool_calls()[0].subagent is None


def test_A1_codeact_steps_and_a_trajectory_without_finish() -> None:
    # CodeAct's trajectory keys (dspy/predict/code_act.py); CodeAct itself needs Deno to run.
    trajectory = {
        "generated_code_0": "print(1 + 2)", "code_output_0": "3\n",
        "generated_code_1": "1/0",
        "observation_1": "Failed to execute the generated code: ZeroDivisionError",
        "observation_2": "Failed to parse the generated code: no code block",
    }  # fmt: skip
    transcript = turnfold.load({"trajectory": trajectory, "answer": "3"})
    assert [(c.name, c.args, c.status) for c in transcript.tool_calls()] == [
        ("python", {"code": "print(1 + 2)"}, "success"),
        ("python", {"code": "1/0"}, "error"),
        ("python", None, "error"),
    ]
    react = {"thought_0": "t", "tool_name_0": "add", "tool_args_0": {}, "observation_0": 1}
    ended = turnfold.load({"trajectory": react, "answer": "1"})
    notice = ended.entries[-2]
    assert isinstance(notice, SystemNotice)
    assert notice.subtype == "no_finish"


def test_L4_a_trajectory_cut_to_fit_the_context_window_says_its_first_steps_are_gone() -> None:
    """``ReAct.truncate_trajectory`` drops a trajectory's oldest steps when the prompt is too
    long, in the dict the ``Prediction`` returns: the load says so before the first step it
    holds, and numbers the calls as the trajectory does."""
    long_agent, _, long_run = dspy_runs.long_run(3)
    whole = long_run()
    cut = dict(whole.trajectory)
    long_agent.truncate_trajectory(cut)
    transcript = turnfold.load(dspy.Prediction(trajectory=cut, reasoning="r", answer="done"))
    notice = transcript.entries[0]
    assert isinstance(notice, SystemNotice)
    assert (notice.level, notice.subtype) == ("warning", "truncated")
    assert notice.text.startswith("The trajectory starts at step 1: DSPy cut its first steps")
    assert calls_of(transcript) == [
        ("step-1", "add", {"a": 1, "b": 1}, "success"),
        ("step-2", "add", {"a": 2, "b": 1}, "success"),
    ]
    assert not any(isinstance(e, SystemNotice) for e in turnfold.load(whole).entries)


# --- L-4 ------------------------------------------------------------------------------------------


def test_L4_unknown_keys_warn_and_what_is_no_run_is_refused(solo: tuple[Any, Any, Any]) -> None:
    trajectory = {"thought_0": "t", "tool_name_0": "finish", "tool_args_0": {}, "x_0": 1}
    transcript = turnfold.load({"trajectory": trajectory, "answer": "a"}, format="dspy")
    assert texts(transcript) == ["t", "a"]
    assert [w.reason for w in transcript.warnings] == ["trajectory key 'x_0' not read"]
    _, prediction, _ = solo
    with pytest.raises(TypeError, match="agent= is the DSPy program"):
        turnfold.load(prediction, agent=42)
    with pytest.raises(TranscriptFormatError, match="no DSPy run"):
        turnfold.load(dspy.Example(question="q"))
    for no_run in ({"trajectory": "text"}, [{"thought_0": "t"}]):
        with pytest.raises(TranscriptFormatError):
            turnfold.load(no_run, format="dspy")


# --- issue 22: a trajectory as ReAct writes it, read at once ------------------------------------


def read_both(monkeypatch: pytest.MonkeyPatch, value: Any, **options: Any) -> tuple[Any, Any, bool]:
    """``value`` loaded as a user loads it, and loaded with ``_react_steps`` declining, so that
    every trajectory's keys are read one by one; and whether the first read took them at once."""
    original = reader._react_steps
    taken: list[bool] = []

    def spy(trajectory: Any) -> Any:
        steps = original(trajectory)
        taken.append(steps is not None)
        return steps

    with monkeypatch.context() as patched:
        patched.setattr(reader, "_react_steps", spy)
        read = turnfold.load(value, **options)
    with monkeypatch.context() as patched:
        patched.setattr(reader, "_react_steps", lambda trajectory: None)
        built = turnfold.load(value, **options)
    return read, built, bool(taken) and all(taken)


def test_I22_a_trajectory_as_react_writes_it_reads_at_once_as_key_by_key(
    monkeypatch: pytest.MonkeyPatch,
    solo: tuple[Any, Any, Any],
    nested: tuple[Any, Any, Any],
) -> None:
    agent, prediction, _ = solo
    long_agent, long_lm, long_run = dspy_runs.long_run(30)
    long = long_run()
    # ReAct cuts a trajectory's first step off when the prompt exceeds the context window.
    cut = dict(long.trajectory)
    long_agent.truncate_trajectory(cut)
    assert next(iter(cut)) == "thought_1"
    values: dict[str, tuple[Any, dict[str, Any]]] = {
        "solo": (prediction, {}),
        "solo, agent=": (prediction, {"agent": agent}),
        "nested": (nested[1], {}),  # the helper's trajectory too
        "saved": (SOLO, {}),
        "long, agent=": (long, {"agent": long_lm}),
        "cut": (dspy.Prediction(trajectory=cut, reasoning="r", answer="done"), {}),
    }
    for label, (value, options) in values.items():
        read, built, taken = read_both(monkeypatch, value, **options)
        assert taken, label
        assert_read_alike(read, built, label)
    read = turnfold.load(long, agent=long_lm)
    assert calls_of(read) == [(f"step-{n}", "add", {"a": n, "b": 1}, "success") for n in range(30)]
    assert [c.result.text for c in read.tool_calls() if c.result] == [str(n + 1) for n in range(30)]
    thoughts = [e for e in read.entries if isinstance(e, Thinking)]
    assert [t.text for t in thoughts[:30]] == [f"step {n}" for n in range(30)]
    # Each step's LM call found in the history (the finish step's too), usage on its thought.
    assert all(t.usage is not None and t.timestamp for t in thoughts[:31])
    shortened = turnfold.load(values["cut"][0])
    notice = shortened.entries[0]  # that the first step is gone, then the one ReAct kept first
    assert isinstance(notice, SystemNotice)
    assert notice.subtype == "truncated"
    assert texts(shortened)[1] == "step 1"
    assert calls_of(shortened)[0] == ("step-1", "add", {"a": 1, "b": 1}, "success")


def test_I22_a_trajectory_of_any_other_shape_is_read_key_by_key_as_its_steps_say() -> None:
    react = {
        "thought_0": "t0", "tool_name_0": "add", "tool_args_0": {"a": 1}, "observation_0": 2,
        "thought_1": "t1", "tool_name_1": "explode", "tool_args_1": {"x": "y"},
        "observation_1": "Execution error in explode: boom",
        "thought_2": "t2", "tool_name_2": "finish", "tool_args_2": {}, "observation_2": "ok",
    }  # fmt: skip
    assert reader._react_steps(react) is not None
    expected = turnfold.load({"trajectory": react, "answer": "a"})
    assert calls_of(expected) == [
        ("step-0", "add", {"a": 1}, "success"), ("step-1", "explode", {"x": "y"}, "error"),
    ]  # fmt: skip
    keys = list(react)
    others = {
        "steps in another order": {k: react[k] for k in keys[4:8] + keys[:4] + keys[8:]},
        "a step's keys in another order": {k: react[k] for k in [keys[3], *keys[:3], *keys[4:]]},
        "numbered from 5": {
            f"{k.rsplit('_', 1)[0]}_{int(k.rsplit('_', 1)[1]) + 5}": v for k, v in react.items()
        },
    }
    for label, trajectory in others.items():
        assert reader._react_steps(trajectory) is None or label == "numbered from 5", label
        read = turnfold.load({"trajectory": trajectory, "answer": "a"})
        if label == "numbered from 5":  # steps 0 to 4 cut off (truncate_trajectory): said so
            notice = read.entries[0]
            assert isinstance(notice, SystemNotice), label
            assert notice.subtype == "truncated", label
            assert calls_of(read) == [
                ("step-5", "add", {"a": 1}, "success"), ("step-6", "explode", {"x": "y"}, "error"),
            ]  # fmt: skip
            continue
        assert read == expected, label
    # What ReAct never writes is read key by key, whatever the fast read would make of it.
    for label, trajectory in {
        "a step without its observation": {k: v for k, v in react.items() if k != keys[3]},
        "a leading zero": {("thought_00" if k == "thought_0" else k): v for k, v in react.items()},
        "an unknown key": {**react, "x_3": 1},
        "a key that is no string": {**react, 3: "x"},
        "CodeAct's keys": {"generated_code_0": "1", "code_output_0": "1", "x": 1, "y": 2},
        "empty": {},
    }.items():
        assert reader._react_steps(trajectory) is None, label
    huge = "thought_" + "1" * 5000  # int() refuses it: the load raised ValueError
    for label, unknown in {"x_3": {"x_3": 1}, "a number of 5000 digits": {huge: "t"}}.items():
        trajectory = others["steps in another order"] | unknown
        partial = turnfold.load({"trajectory": trajectory, "answer": "a"}, format="dspy")
        (key,) = unknown
        assert [w.reason for w in partial.warnings] == [f"trajectory key {key!r} not read"], label
        assert calls_of(partial) == calls_of(expected), label


# --- live ----------------------------------------------------------------------------------


def test_A2_following_streamify_ends_as_load_of_the_prediction_with_its_statuses() -> None:
    agent, program, lm = dspy_runs.stream("solo")
    seen: list[tuple[str, str]] = []
    with dspy.context(lm=lm):
        followed = turnfold.follow(program(question=dspy_runs.QUESTION), display=False,
                                   agent=agent)  # fmt: skip
        followed.transcript.observe(
            lambda change: seen.append((change.entry.name, change.entry.status))
            if isinstance(change.entry, ToolCall) else None
        )  # fmt: skip
        events = list(followed)
    assert [type(e).__name__ for e in events] == ["StatusMessage"] * 4 + ["Prediction"]
    assert adapter_of(events[0]) is reader
    assert followed.transcript == turnfold.load(events[-1], agent=agent)
    assert ("explode", "executing") in seen
    assert ("explode", "error") in seen
    assert calls_of(followed.transcript)[1] == ("step-1", "explode", {"x": "y"}, "error")


def test_A2_async_follow_under_a_running_loop_nests_the_inner_program_at_the_end() -> None:
    _, program, lm = dspy_runs.stream("nested", sync=False)

    async def main() -> tuple[Any, list[Any]]:
        with dspy.context(lm=lm):
            followed = turnfold.follow(program(question="q"), display=False)
            return followed, [event async for event in followed]

    followed, events = run_async(main())
    assert followed.transcript == turnfold.load(events[-1])
    (call,) = followed.transcript.tool_calls()  # the helper's add was not shown at the top
    assert call.subagent is not None
    assert call.subagent.tool_count == 1


def test_A2_streamed_thoughts_grow_in_place_and_custom_status_messages_are_warned_once(
    solo: tuple[Any, Any, Any],
) -> None:
    from dspy.streaming import StatusMessage, StreamResponse

    _, prediction, _ = solo
    transcript = Transcript()
    follower = reader.Follower(transcript)
    for chunk, last in (("need ", False), ("add", True)):
        follower.feed(StreamResponse("react", "next_thought", chunk, last))
    follower.feed(StreamResponse("react", "next_tool_name", "add", True))
    follower.feed(StatusMessage("Calling tool add..."))
    assert [(type(e).__name__, getattr(e, "text", None)) for e in transcript.entries] == [
        ("Thinking", "need add"), ("ToolCall", None),
    ]  # fmt: skip
    follower.feed(
        StatusMessage("Tool calling finished! Querying the LLM with tool calling results...")
    )
    follower.feed(StatusMessage("my own progress"))
    follower.feed(StatusMessage("my own progress, again"))
    follower.feed(StatusMessage("Calling tool explode..."))
    follower.feed(prediction)
    follower.close()
    expected = turnfold.load(prediction)
    assert transcript.entries == expected.entries
    assert [w.reason for w in transcript.warnings] == [
        "status messages of a custom StatusMessageProvider not shown"
    ]


def test_A2_a_stream_that_ends_without_its_prediction_leaves_its_calls_unknown() -> None:
    from dspy.streaming import StatusMessage

    transcript = Transcript()
    follower = reader.Follower(transcript)
    follower.feed(StatusMessage("Calling tool add..."))
    follower.close()
    (call,) = transcript.tool_calls()
    assert call.status == "unknown"
    assert not any(isinstance(e, Thinking) and e.streaming for e in transcript.entries)


# --- A-3 ----------------------------------------------------------------------------------------


def test_A3_the_module_imports_without_importing_dspy() -> None:
    code = (
        "import sys, turnfold, turnfold.formats.frameworks.dspy as m\n"
        f"t = turnfold.load({str(SOLO)!r})\n"
        "print(t.metadata['source_format'], 'dspy' in sys.modules, 'litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["dspy", "False", "False"]
