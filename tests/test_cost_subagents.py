"""A sub-agent's cost (spec U-1, U-2): where its source records its tokens as a whole
(``SubAgent.usage``, a transcript's recorded total), a turn's and a session's estimate price
those tokens, the ones the header counts, each response once; a sub-agent of no known model
leaves the estimate not made, never made without it.

Expected costs are computed by hand from genai-prices' table (0.2.3): Claude Opus 5.5 at $4
input and $20 output per million tokens; Claude Sonnet 4 at $3 input, $15 output, $0.30 cache
read and $3.75 cache write."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path

import pytest

import turnfold
from turnfold.cost import responses_by_model, spend_of
from turnfold.model import AssistantText, Entry, SubAgent, ToolCall, Transcript, Usage, UserMessage
from turnfold.process import plan_projection
from turnfold.render.viewmodel import build_view_model
from turnfold.session import session_facts
from turnfold.settings import DisplaySettings
from turnfold.usage import add_into, records_tokens_per_turn, tokens_spent

FIXTURES = Path(__file__).parent / "fixtures"
SDK = FIXTURES / "frameworks" / "claude-agent-sdk"
#: The real Claude Agent SDK run with partial messages: its own responses record their output,
#: its sub-agent's only their input; ``modelUsage`` less ``usage`` gives the sub-agent's
#: output (claude_agent_sdk.subagent_usage).
PARTIAL = SDK / "claude-agent-sdk_v0.2.189_asdict_cli-partial-messages.json"
OPUS_IN, OPUS_OUT = 4 / 1e6, 20 / 1e6  # claude-opus-5-5, US dollars a token


def load(path: Path) -> Transcript:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return turnfold.load(path)


def turns(transcript: Transcript) -> list[list[Entry]]:
    found: list[list[Entry]] = []
    for item in plan_projection(transcript):
        if item.segment is not None:
            segment = item.segment
            found.append(([segment.user] if segment.user else []) + segment.entries)
    return found


def test_U2_a_claude_sdk_sub_agent_s_turn_is_priced_on_its_recorded_usage() -> None:
    transcript = load(PARTIAL)
    assert records_tokens_per_turn(transcript)
    first, second = turns(transcript)
    (call,) = [e for e in first if isinstance(e, ToolCall) and e.subagent is not None]
    assert call.subagent is not None
    assert call.subagent.usage is not None
    spent = spend_of(transcript, first)
    # The tokens priced are the tokens the turn counts: the sub-agent's output (10) included.
    assert spent.tokens == tokens_spent(first)
    assert (spent.tokens["input_tokens"], spent.tokens["output_tokens"]) == (60, 30)
    # By hand: the session's own 40 in and 20 out, the sub-agent's recorded 20 in and 10 out.
    assert spent.cost is not None
    assert spent.cost.usd == pytest.approx(40 * OPUS_IN + 20 * OPUS_OUT + 20 * OPUS_IN
                                           + 10 * OPUS_OUT)  # fmt: skip
    later = spend_of(transcript, second).cost
    assert later is not None
    assert later.usd == pytest.approx(10 * OPUS_IN + 5 * OPUS_OUT)
    # As the turn's header shows it (show_turn_usage) and the corpus's turns() table has it.
    view = build_view_model(transcript, DisplaySettings(show_turn_usage=True))
    shown = [node["header"]["usage"] for node in view["nodes"] if node["kind"] == "turn"]
    assert shown == ["90 tokens · ≈ $0.00084", "15 tokens · ≈ $0.00014"]
    rows = turnfold.scan([PARTIAL], workers=1, cache=False).turns().to_pylist()
    assert [row["cost_usd"] for row in rows] == pytest.approx([0.00084, 0.00014])


def test_U2_a_claude_sdk_session_estimate_is_the_cost_the_cli_recorded() -> None:
    """Without the recorded cost, the estimate prices the tokens the header shows (70 in, 35
    out): the CLI's own ``modelUsage`` cost of the run, $0.00098."""
    transcript = load(PARTIAL)
    recorded = transcript.metadata["model_usage"]["claude-opus-5-5"]["costUSD"]
    assert transcript.metadata.pop("cost_usd") == pytest.approx(recorded)
    facts = session_facts(transcript)
    priced: dict[str, int] = {}
    for _, counts in responses_by_model(transcript.entries, "claude-opus-5-5"):
        add_into(priced, counts)
    assert priced == facts.tokens
    assert facts.cost is not None
    assert not facts.cost.recorded
    assert facts.cost.usd == pytest.approx(70 * OPUS_IN + 35 * OPUS_OUT)
    assert facts.cost.usd == pytest.approx(recorded)


@pytest.mark.parametrize(
    "path",
    [
        PARTIAL,
        FIXTURES / "frameworks" / "openai-agents" / "openai-agents_v0.24.0_run-state_handoff.json",
        FIXTURES / "cline" / "cline-cli-2.18.0_json" / "subagents.jsonl",
        FIXTURES / "claude-code_v1.0.108_inline-sidechains.jsonl",
        FIXTURES / "claude-code" / "v2.1_progress-subagent.jsonl",
    ],
    ids=lambda p: p.name,
)
def test_U1_a_turn_prices_the_tokens_it_counts_sub_agents_included(path: Path) -> None:
    """Real sessions with sub-agents: a turn's priced responses add up to its tokens, the
    sub-agents' recorded usage (Agents SDK ``as_tool``, Cline's ``subagent_usage``) included;
    a sub-agent whose source names no model leaves the turn's cost not estimated."""
    transcript = load(path)
    assert records_tokens_per_turn(transcript)
    delegated = 0
    for entries in turns(transcript):
        spent = spend_of(transcript, entries)
        assert spent.tokens == tokens_spent(entries)
        agents = [e.subagent for e in entries if isinstance(e, ToolCall) and e.subagent]
        delegated += len(agents)
        if any(agent.transcript is None and agent.usage for agent in agents):
            assert spent.cost is None
    assert delegated


def test_U2_a_sidechain_session_is_priced_per_sub_agent_response_by_hand() -> None:
    """Claude Code's inline sidechains record every sub-agent response: they are priced one by
    one, the session's estimate the same Claude Sonnet 4 rates over the header's tokens."""
    transcript = load(FIXTURES / "claude-code_v1.0.108_inline-sidechains.jsonl")
    facts = session_facts(transcript)
    assert facts.subagent_tokens
    assert facts.cost is not None
    tokens = facts.tokens
    fresh = tokens["input_tokens"] - tokens["cache_read_tokens"] - tokens["cache_write_tokens"]
    by_hand = (fresh * 3 + tokens["output_tokens"] * 15 + tokens["cache_read_tokens"] * 0.3
               + tokens["cache_write_tokens"] * 3.75) / 1e6  # fmt: skip
    assert facts.cost.usd == pytest.approx(by_hand)


def _delegating(agent: SubAgent) -> Transcript:
    call = ToolCall(call_id="toolu_1", name="Agent", status="success", subagent=agent)
    own = AssistantText(text="done", model="claude-opus-5-5",
                        usage=Usage(input_tokens=40, output_tokens=20))  # fmt: skip
    return Transcript([UserMessage(text="go"), call, own],
                      metadata={"source_format": "claude-agent-sdk"})  # fmt: skip


def _child(*models: str | None) -> Transcript:
    return Transcript([AssistantText(text="x", model=m, usage=Usage(input_tokens=10))
                       for m in models])  # fmt: skip


def test_U2_a_sub_agent_usage_of_no_model_leaves_the_cost_not_estimated() -> None:
    """Its tokens are counted, so a cost without them would not be the turn's (U-2)."""
    ran_out_of_sight = _delegating(SubAgent(usage=Usage(input_tokens=20, output_tokens=10)))
    spent = spend_of(ran_out_of_sight, ran_out_of_sight.entries)
    assert (spent.tokens["input_tokens"], spent.tokens["output_tokens"]) == (60, 30)
    assert spent.cost is None
    # Two models named, and which wrote the output the responses do not record is not known.
    agent = SubAgent(transcript=_child("claude-opus-5-5", "claude-haiku-4-5"),
                     usage=Usage(input_tokens=20, output_tokens=10))  # fmt: skip
    assert spend_of(_delegating(agent), _delegating(agent).entries).cost is None


def test_U2_a_sub_agent_s_model_is_the_one_its_transcript_names() -> None:
    usage = Usage(input_tokens=20, output_tokens=10)
    named = Transcript(list(_child(None, None).entries), metadata={"model": "claude-opus-5-5"})
    for child in (_child("claude-opus-5-5", None), named):
        transcript = _delegating(SubAgent(transcript=copy.deepcopy(child), usage=usage))
        cost = spend_of(transcript, transcript.entries).cost
        assert cost is not None
        assert cost.usd == pytest.approx(60 * OPUS_IN + 30 * OPUS_OUT)


def test_U1_a_total_below_its_responses_counts_is_priced_alone() -> None:
    """The recorded total wins in the header, so it is what is priced, never added to the
    responses it disagrees with."""
    agent = SubAgent(transcript=_child("claude-opus-5-5", "claude-opus-5-5"),
                     usage=Usage(input_tokens=15, output_tokens=10))  # fmt: skip
    transcript = _delegating(agent)
    spent = spend_of(transcript, transcript.entries)
    assert spent.tokens == tokens_spent(transcript.entries)
    assert spent.cost is not None
    assert spent.cost.usd == pytest.approx(55 * OPUS_IN + 30 * OPUS_OUT)
