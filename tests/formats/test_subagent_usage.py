"""Sub-agents' tokens counted once, as sub-agents' (spec U-1): the Claude Agent SDK's sub-agent
(its stream holds no output count of its own), an Agents SDK agent used as a tool and a
pydantic-ai agent delegated to with ``usage=ctx.usage`` (both run out of sight)."""

import warnings
from pathlib import Path
from typing import Any

import turnfold
from turnfold.model import AssistantText, SubAgent, ToolCall, Transcript, Usage, UserMessage
from turnfold.render.viewmodel import session_header
from turnfold.session import session_facts
from turnfold.usage import transcript_tokens

FIXTURES = Path(__file__).parents[1] / "fixtures" / "frameworks"
CLI_SUBAGENT = FIXTURES / "claude-agent-sdk" / "claude-agent-sdk_v0.2.189_asdict_cli-subagent.json"
CLI_PARTIAL = (
    FIXTURES / "claude-agent-sdk" / "claude-agent-sdk_v0.2.189_asdict_cli-partial-messages.json"
)
AGENTS_STATE = FIXTURES / "openai-agents" / "openai-agents_v0.24.0_run-state_handoff.json"


def _pair(tokens: dict[str, int]) -> tuple[int | None, int | None]:
    return tokens.get("input_tokens"), tokens.get("output_tokens")


def test_U1_a_claude_sdk_run_totals_are_the_result_s_and_the_sub_agent_spent_the_rest() -> None:
    """The real CLI's run: the result's ``usage`` counts the session's own responses (50 in,
    25 out, over two results), its ``modelUsage`` the whole run (70 in, 35 out): the
    sub-agent's two responses spent 20 in and 10 out, though its messages carry only the
    placeholder output count."""
    for path in (CLI_SUBAGENT, CLI_PARTIAL):
        transcript = turnfold.load(path)
        (call,) = [c for c in transcript.tool_calls() if c.subagent is not None]
        agent = call.subagent
        assert agent is not None
        assert agent.usage is not None
        assert (agent.usage.input_tokens, agent.usage.output_tokens) == (20, 10)
        assert agent.output_tokens == 10
        facts = session_facts(transcript)
        assert _pair(facts.tokens) == (70, 35)  # modelUsage's, not more, not less
        assert _pair(facts.subagent_tokens) == (20, 10)
        assert _pair(transcript_tokens(transcript).own) == (50, 25)
        row = turnfold.scan([path]).to_pandas().iloc[0]
        assert (row["input_tokens"], row["output_tokens"]) == (70, 35)
        assert "subagent_usage" not in transcript.metadata  # one sub-agent: under its call


def test_U1_claude_sdk_sub_agents_that_share_the_rest_keep_it_under_no_call() -> None:
    """Two sub-agents: which one wrote what is not recorded, so each keeps only the input its
    messages record and the rest of the run's total (their output) is the sub-agents' as one
    total."""
    from turnfold.formats.frameworks import claude_agent_sdk

    def agent(call_id: str) -> ToolCall:
        child = Transcript([UserMessage(text="look"), AssistantText(text="done",
                            usage=Usage(input_tokens=10))])  # fmt: skip
        call = ToolCall(call_id=call_id, name="Agent", status="success")
        call.subagent = SubAgent(name="general-purpose", transcript=child)
        return call

    transcript = Transcript(
        [agent("toolu_1"), agent("toolu_2"), AssistantText(text="ok")],
        metadata={
            "usage": {"input_tokens": 50, "output_tokens": 25},
            "model_usage": {"claude-opus-5-5": {"inputTokens": 70, "outputTokens": 35,
                            "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0}},
        },
    )  # fmt: skip
    claude_agent_sdk.subagent_usage(transcript)
    assert [c.subagent.usage for c in transcript.tool_calls() if c.subagent] == [None, None]
    assert transcript.metadata["subagent_usage"] == {"output_tokens": 10}
    facts = session_facts(transcript)
    assert _pair(facts.tokens) == (70, 35)
    assert _pair(facts.subagent_tokens) == (20, 10)


def test_U1_an_agent_used_as_a_tool_spends_its_own_tokens_not_the_top_level_s() -> None:
    """``as_tool()`` runs ``researcher`` on the parent's usage (60 in, 6 out), in none of the
    run's ``raw_responses``: its tokens are its call's, and the top level's own are its
    responses' alone (10+20+30, and the writer's answer on top, 50)."""
    transcript = turnfold.load(AGENTS_STATE)
    (research,) = [c for c in transcript.tool_calls() if c.name == "research"]
    assert research.subagent is not None
    assert research.subagent.usage is not None
    usage = research.subagent.usage
    assert (usage.input_tokens, usage.output_tokens) == (60, 6)
    assert research.subagent.output_tokens == 6
    own = transcript.metadata["usage"]
    assert (own["input_tokens"], own["output_tokens"]) == (110, 11)
    facts = session_facts(transcript)
    assert _pair(facts.tokens) == (210, 21)  # the run's context.usage
    assert _pair(facts.subagent_tokens) == (100, 10)  # writer 40 + researcher 60


def _delegating_run() -> Any:
    """A real pydantic-ai run on its TestModel: a tool runs ``joker`` with ``usage=ctx.usage``
    (pydantic-ai reads the tool's annotations at run time: no postponed annotations here)."""
    from pydantic_ai import Agent, RunContext
    from pydantic_ai.models.test import TestModel

    joker = Agent(TestModel(custom_output_text="A joke."), name="joker")
    parent = Agent(TestModel(), name="parent")

    @parent.tool
    async def tell_joke(ctx: RunContext[None], topic: str) -> str:
        result = await joker.run(f"A joke about {topic}", usage=ctx.usage)
        return result.output

    return parent.run_sync("Tell me a joke.")


def test_U1_a_pydantic_ai_delegate_s_tokens_are_sub_agent_tokens_under_no_call() -> None:
    result = _delegating_run()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = result.usage() if callable(result.usage) else result.usage
    responses = [m for m in result.all_messages() if m.kind == "response"]
    own_in = sum(m.usage.input_tokens for m in responses)
    own_out = sum(m.usage.output_tokens for m in responses)
    assert run.requests == len(responses) + 1  # the delegate's request, in no history
    transcript = turnfold.load(result)
    assert transcript.metadata["subagent_usage"] == {
        "input_tokens": run.input_tokens - own_in, "output_tokens": run.output_tokens - own_out,
    }  # fmt: skip
    assert _pair(transcript.metadata["usage"]) == (own_in, own_out)
    facts = session_facts(transcript)
    assert _pair(facts.tokens) == (run.input_tokens, run.output_tokens)
    assert _pair(facts.subagent_tokens) == (run.input_tokens - own_in, run.output_tokens - own_out)
    header = session_header(transcript, "en")
    assert header is not None
    (tokens,) = [p for p in header["parts"] if p["name"] == "tokens"]
    assert "incl. sub-agents" in tokens["text"]


def test_U1_a_count_not_recorded_reads_so_in_the_header_never_as_0() -> None:
    transcript = Transcript([AssistantText(text="hi", usage=Usage(input_tokens=1200))])
    header = session_header(transcript, "en")
    assert header is not None
    (tokens,) = [p for p in header["parts"] if p["name"] == "tokens"]
    assert tokens["title"].startswith("input 1,200, output not recorded")
    assert "cache read not recorded" in tokens["title"]


def test_U1_claude_totals_holding_requests_no_message_records_leave_output_unknown() -> None:
    """``claude -p``'s own requests (a title, a command check) are in ``modelUsage`` too: where
    the input counts beyond the session's own are not the sub-agent's messages', the output
    difference is not the sub-agent's either, and stays not recorded."""
    from turnfold.formats.frameworks import claude_agent_sdk

    child = Transcript([UserMessage(text="look"), AssistantText(text="done",
                        usage=Usage(input_tokens=10))])  # fmt: skip
    call = ToolCall(call_id="toolu_1", name="Agent", status="success")
    call.subagent = SubAgent(name="general-purpose", transcript=child)
    transcript = Transcript(
        [call, AssistantText(text="ok")],
        metadata={
            "usage": {"input_tokens": 50, "output_tokens": 25},
            "model_usage": {"claude-opus-5-5": {"inputTokens": 90, "outputTokens": 35,
                            "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0}},
        },
    )  # fmt: skip
    claude_agent_sdk.subagent_usage(transcript)
    (agent,) = [c.subagent for c in transcript.tool_calls() if c.subagent]
    assert agent.usage is None
    assert agent.output_tokens is None
    assert "subagent_usage" not in transcript.metadata
