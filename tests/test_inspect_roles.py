"""Inspect AI: a model role's call is a side call, never the user's turn (spec H-1, P-1); labels
by the call's key where a source repeats call ids (S-1, S-6); a crashed call's error (H-1, L-3).

On logs the real ``inspect_ai`` 0.3.285 wrote: ``inspect-stops``' ``retry`` sample (a critic role
asked before the answer; a tool that crashed on the first attempt, whose kept events reuse the
call id ``retry-flaky``), ``inspect-roles/roles_mockllm.eval`` (``roles_recipe.py``: a sample per
way a solver calls another model) and the ``react`` log's ``crash`` sample (a tool that raised).
"""

from __future__ import annotations

import pytest
from inspect_ai.log import read_eval_log_sample

import turnfold
from tests.inspect_samples import HARNESSES, STOPS, load_sample
from turnfold.batches import label_for, labels_by_call
from turnfold.model import (
    AssistantText,
    SystemNotice,
    ToolCall,
    ToolResult,
    ToolUseSummary,
    Transcript,
    UserMessage,
)
from turnfold.process import ProjectionPlanner, Turn, project
from turnfold.session import session_facts
from turnfold.summaries.scheduler import TranscriptLabeller
from turnfold.usage import USAGE_KINDS

ROLES = HARNESSES / "inspect-roles" / "roles_mockllm.eval"
REACT = HARNESSES / "inspect" / "react_four-samples_two-epochs.eval"


def _prompts(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, UserMessage)]


def _side_calls(transcript: Transcript) -> list[ToolCall]:
    return [c for c in transcript.tool_calls() if c.meta.get("side_call")]


def _turns(transcript: Transcript) -> list[Turn]:
    return [item for item in project(transcript) if isinstance(item, Turn)]


# --- 1. a model role's call ------------------------------------------------------------------


def test_H1_the_critic_s_question_is_no_prompt_of_the_retried_attempt() -> None:
    """The solver asks the ``critic`` role (``ModelEvent.role``) before the eval's model answers:
    the attempt that ran last is one turn, its prompt the sample's; the critic's question and
    answer are a side call in it."""
    transcript = load_sample(STOPS, "retry")
    assert _prompts(transcript) == ["retry: crash once.", "retry: crash once."]  # an attempt each
    [critic] = _side_calls(transcript)
    assert (critic.name, critic.status, critic.description) == (
        "critic model",
        "success",
        "Is 42 right?",
    )
    assert critic.result is not None
    assert critic.result.text == "Looks right."
    assert critic.args == {"model": "mockllm/critic", "role": "critic", "input": "Is 42 right?"}
    assert critic.subagent is not None
    assert critic.subagent.name == "critic"
    assert not critic.subagent.is_run  # a model's call, not an agent's run (C-2)
    child = critic.subagent.transcript
    assert child is not None
    assert _prompts(child) == ["Is 42 right?"]
    [said] = [e for e in child.entries if isinstance(e, AssistantText)]
    assert (said.text, said.model) == ("Looks right.", "mockllm/critic")
    assert said.usage is not None
    assert said.usage.output_tokens == 20
    # Each attempt reads as its prompt and one turn; the critic is a step of the last one.
    shown = project(transcript)
    assert [type(item).__name__ for item in shown] == [
        "SystemNotice", "UserMessage", "Turn", "SystemNotice", "UserMessage", "Turn",
    ]  # fmt: skip
    last = shown[-1]
    assert isinstance(last, Turn)
    assert last.answer is not None
    assert last.answer.text == "42"
    assert critic.id in repr(last.process)


def test_U1_the_critic_s_tokens_are_counted_once() -> None:
    """Inspect's ``model_usage`` holds the critic's tokens beside the eval model's: the session's
    total is still that total (the critic's response counted in the side call, once)."""
    sample = read_eval_log_sample(str(STOPS), id="retry", epoch=1)
    usage = list(sample.model_usage.values())
    tokens = session_facts(load_sample(STOPS, "retry")).tokens
    assert tokens["output_tokens"] == sum(u.output_tokens for u in usage)


#: Each sample of ``roles_mockllm.eval``: its prompts (the user's messages the conversation
#: shows) and its side calls (name, status, description).
EXPECTED = {
    "critic": (
        ["critic: what is the answer?"],
        [("critic model", "success", "Critic: is 42 the answer to everything?")],
    ),
    "grader": (
        ["grader: what is the answer?"],
        [("grader model", "success", "Grade the work so far, in one word.")],
    ),
    "other": (
        ["other: what is the answer?"],
        [("mockllm/other", "success", "Other: summarize the task.")],
    ),
    # The drafter's answer was appended to the conversation: a step of it, no side call.
    "joined": (["joined: what is the answer?", "Check the draft with lookup."], []),
    # The conversation runs on the actor role's model: its calls are the conversation's.
    "actor": (["actor: what is the answer?"], []),
    "failing": (
        ["failing: what is the answer?"],
        [("critic model", "error", "Please fail: is 42 right?")],
    ),
}


@pytest.mark.parametrize("sample", list(EXPECTED))
def test_H1_a_call_of_another_model_is_a_side_call_never_a_prompt(sample: str) -> None:
    transcript = load_sample(ROLES, sample)
    prompts, side = EXPECTED[sample]
    assert _prompts(transcript) == prompts
    assert [(c.name, c.status, c.description) for c in _side_calls(transcript)] == side
    lookups = [c for c in transcript.tool_calls() if c.name == "lookup"]
    assert [c.status for c in lookups] == ["success"]
    answer = _turns(transcript)[-1].answer
    assert answer is not None
    assert answer.text == "42"


def test_H1_a_side_call_keeps_its_system_message_and_the_history_it_was_given_apart() -> None:
    critic = load_sample(ROLES, "critic")
    assert "system" not in critic.metadata  # the sample had none; the critic's is its own
    [call] = _side_calls(critic)
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    assert call.subagent.transcript.metadata["system"] == "You are a strict critic."
    # The grader was given the conversation so far: shown once, in the conversation.
    grader = load_sample(ROLES, "grader")
    [call] = _side_calls(grader)
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    assert _prompts(call.subagent.transcript) == ["Grade the work so far, in one word."]
    texts = [e.text for e in grader.entries if isinstance(e, AssistantText)]
    assert texts == ["Looking grader up.", "42"]  # the grader's answer is under its call


def test_H1_a_side_call_that_failed_says_why_and_the_run_went_on() -> None:
    transcript = load_sample(ROLES, "failing")
    [call] = _side_calls(transcript)
    assert call.status == "error"
    assert call.result is not None
    assert call.result.text == "RuntimeError('the critic is unavailable')"
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    [went_on] = [e for e in call.subagent.transcript.entries if isinstance(e, SystemNotice)]
    assert went_on.subtype == "model_error"
    assert _turns(transcript)[-1].header.status == "completed"


def test_U1_every_sample_s_tokens_are_inspect_s_model_usage() -> None:
    for sample in EXPECTED:
        record = read_eval_log_sample(str(ROLES), id=sample, epoch=1)
        usage = list(record.model_usage.values())
        tokens = session_facts(load_sample(ROLES, sample)).tokens
        assert tokens["output_tokens"] == sum(u.output_tokens for u in usage), sample


def test_X2_a_side_call_s_response_keeps_its_usage_under_its_call() -> None:
    transcript = load_sample(ROLES, "other")
    [call] = _side_calls(transcript)
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    counted = [e for e in call.subagent.transcript.entries if isinstance(e, USAGE_KINDS)]
    assert [e.usage.output_tokens for e in counted if e.usage is not None] == [10]
    own = [e for e in transcript.entries if isinstance(e, USAGE_KINDS) and e.usage is not None]
    assert {e.model for e in own if isinstance(e, AssistantText)} == {"mockllm/model"}


# --- 2. labels by the call's key -------------------------------------------------------------


def _two_calls_of_one_id() -> Transcript:
    """Two turns, each a call of the id ``x`` and a label after it, as a labeller writes them."""
    return Transcript(
        [
            UserMessage(text="first"),
            ToolCall(call_id="x", name="Read", status="success", result=ToolResult(text="a")),
            ToolUseSummary(label="Read alpha", call_ids=["x"]),
            AssistantText(text="one"),
            UserMessage(text="second"),
            ToolCall(call_id="x", name="Read", status="success", result=ToolResult(text="b")),
            ToolUseSummary(label="Read beta", call_ids=["x"]),
            AssistantText(text="two"),
        ]
    )


def _labels_shown(transcript: Transcript) -> list[str]:
    shown = []
    for turn in _turns(transcript):
        said = repr(turn.process)
        shown.append(",".join(w for w in ("Read alpha", "Read beta") if w in said))
    return shown


def test_S6_two_calls_of_one_id_keep_their_own_labels() -> None:
    transcript = _two_calls_of_one_id()
    first, second = transcript.tool_calls()
    labels = labels_by_call(transcript.entries)
    assert [label_for([c], labels) for c in (first, second)] == [
        transcript.entries[2],
        transcript.entries[6],
    ]
    assert _labels_shown(transcript) == ["Read alpha", "Read beta"]


def test_S6_labels_read_again_from_a_dump_attach_as_they_did() -> None:
    """The labels are kept in the transcript (turnfold's own format): read again, each still
    labels its own call."""
    again = turnfold.load(_two_calls_of_one_id().dump())
    assert _labels_shown(again) == ["Read alpha", "Read beta"]


def test_S6_a_label_appended_later_leaves_an_earlier_call_of_its_id_alone() -> None:
    """The planner (what the widget re-plans as entries arrive, Q-3) keys labels alike."""
    whole = _two_calls_of_one_id()
    growing = Transcript(whole.entries[:4])
    planner = ProjectionPlanner(growing)
    planner.plan(None)
    for entry in whole.entries[4:]:
        growing.append(entry)
    items, _ = planner.plan(None, changed=[e.id for e in whole.entries[4:]])
    turns = [p for p in (item.project() for item in items) if isinstance(p, Turn)]
    assert ["Read alpha" in repr(t.process) for t in turns] == [True, False]
    assert ["Read beta" in repr(t.process) for t in turns] == [False, True]


def test_S2_S6_a_retried_sample_s_label_goes_to_the_attempt_that_succeeded() -> None:
    """Inspect's retried attempts reuse the call id ``retry-flaky``: labelling the loaded sample
    labels the call that succeeded (S-2: the crashed one has nothing to label), and only it."""
    transcript = load_sample(STOPS, "retry")
    labeller = TranscriptLabeller(transcript, lambda request: "Ran flaky")
    try:
        labeller.label_existing()
        assert labeller.wait(10)
    finally:
        labeller.close()
    failed, succeeded = [c for c in transcript.tool_calls() if c.name == "flaky"]
    labels = labels_by_call(transcript.entries)
    assert label_for([failed], labels) is None
    found = label_for([succeeded], labels)
    assert found is not None
    assert found.label == "Ran flaky"
    assert ["Ran flaky" in repr(t.process) for t in _turns(transcript)] == [False, True]


# --- 3. the call whose exception ended the run -----------------------------------------------


def test_H1_a_crashed_call_of_a_failed_attempt_returns_the_attempt_s_error() -> None:
    """Inspect records no error on a call whose exception ended the attempt (``failed``, an
    empty result): the attempt's error (``error_retries[].message``, then its traceback) is."""
    transcript = load_sample(STOPS, "retry")
    failed = next(c for c in transcript.tool_calls() if c.name == "flaky")
    assert failed.status == "error"
    assert failed.result is not None
    assert failed.result.text is not None
    said, _, traceback = failed.result.text.partition("\n\n")
    assert said == "RuntimeError('the first attempt crashed')"
    assert traceback.rstrip().endswith("RuntimeError: the first attempt crashed")
    [retry] = read_eval_log_sample(str(STOPS), id="retry", epoch=1).error_retries or []
    assert traceback == retry.traceback


def test_H1_a_call_that_crashed_the_sample_returns_the_sample_s_error() -> None:
    transcript = turnfold.load(REACT, sample="crash", epoch=2)
    [call] = transcript.tool_calls()
    assert (call.name, call.status) == ("read_file", "error")
    assert call.result is not None
    assert call.result.text is not None
    assert call.result.text.startswith(
        "RuntimeError('the disk is on fire (reading /srv/data.txt)')"
    )


def test_H1_an_approver_s_termination_keeps_its_own_reason() -> None:
    """A call an approver terminated is ``failed`` with no error too: its reason stays the
    approver's, not an error of the run (that sample ran on)."""
    transcript = load_sample(STOPS, "terminate")
    [bash] = [c for c in transcript.tool_calls() if c.name == "bash"]
    assert bash.result is not None
    assert bash.result.text == (
        "The approver (gatekeeper) decided to terminate: shutting the host down is not allowed"
    )
