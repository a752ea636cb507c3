"""A session header's tokens and cost with sub-agents (spec U-1, U-2, U-3), on real fixtures.

Tokens: each source's recorded session total says whether it holds its sub-agents'; the header
counts the session's own and its sub-agents' once each, so it equals the source's whole-run
figure where the source has one (Agents SDK ``context.usage``, Inspect's sample
``model_usage``, the Claude CLI's ``modelUsage``), and own plus sub-agents' where the source
records them apart (OpenHands SDK ``stats`` by usage id, Google ADK's model spans, Cline's
``done`` events). The expected figures are read from the fixtures' own records here.

Cost: a recorded cost covers what the header's tokens cover. The Cline CLI's ``run_result``
cost is the lead's alone, its sub-agent's is on the sub-agent's ``done``: the header adds it.

Prices from genai-prices' table: Claude Sonnet 4.6 at $3 input, $15 output, $0.30 cache read
and $3.75 cache write per million tokens (the CLI's own ``model.info.pricing`` says the same).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.model import AssistantText, ToolCall, Transcript
from turnfold.session import session_facts

FIXTURES = Path(__file__).parent / "fixtures"
OPENHANDS = (FIXTURES / "harnesses" / "openhands-sdk" / "conversations"
             / "2e6c222a6c254b28bab45a8281ad9b15")  # fmt: skip
ADK_TRACE = FIXTURES / "traces" / "otlp" / "google-adk_calc-agent_no-content.jsonl"
CLINE_JSON = FIXTURES / "cline" / "cline-cli-3.0.65_json" / "work.jsonl"
CLINE_TEAM = (FIXTURES / "cline" / "cline-cli-3.0.65_team-session" / "1796443893972_gleub"
              / "1796443893972_gleub.messages.json")  # fmt: skip
AGENTS = FIXTURES / "frameworks" / "openai-agents"
CLAUDE_SDK = (FIXTURES / "frameworks" / "claude-agent-sdk"
              / "claude-agent-sdk_v0.2.189_asdict_cli-subagent.json")  # fmt: skip
CLAUDE_STREAM = (FIXTURES / "agents" / "claude-stream-json"
                 / "claude-code_v2.1.337_stream-json_background-agent-report.jsonl")  # fmt: skip
CODEX_SPAWN = (FIXTURES / "agents" / "codex-exec-json"
               / "codex_v0.171.0_exec-json_spawn-agent.jsonl")  # fmt: skip
INSPECT = FIXTURES / "harnesses" / "inspect" / "react_four-samples_one-epoch.json"


def load(path: Path) -> Transcript:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return turnfold.load(path)


def pair(tokens: Mapping[str, Any]) -> tuple[Any, Any]:
    return tokens.get("input_tokens"), tokens.get("output_tokens")


def json_lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def delegated(transcript: Transcript) -> list[ToolCall]:
    return [c for c in transcript.tool_calls() if c.subagent is not None]


# --- tokens: the header against each source's own figures -----------------------------------


def test_U1_openhands_sdk_header_is_every_usage_id_of_stats_once() -> None:
    """``stats.usage_to_metrics`` keeps the agent's, the condenser's and the ``task:`` sub-agent's
    usage apart: the session's own is the agent's and the condenser's (22,900 in), the
    sub-agent's (2,100 in) is not in it though the condenser's happens to be the same size, so
    the header (25,000) counts no token twice."""
    state = json.loads((OPENHANDS / "base_state.json").read_text(encoding="utf-8"))
    uses = state["stats"]["usage_to_metrics"]
    spent = {use: m["accumulated_token_usage"] for use, m in uses.items()}
    assert set(spent) == {"agent", "condenser", "task:task_00000001"}
    ids = {use: {u["response_id"] for u in m["token_usages"]} for use, m in uses.items()}
    assert not ids["condenser"] & ids["task:task_00000001"]  # two calls each, not the same
    transcript = load(OPENHANDS / "base_state.json")
    facts = session_facts(transcript)
    whole = (sum(u["prompt_tokens"] for u in spent.values()),
             sum(u["completion_tokens"] for u in spent.values()))  # fmt: skip
    assert pair(facts.tokens) == whole == (25_000, 420)
    task = spent["task:task_00000001"]
    assert pair(facts.subagent_tokens) == (task["prompt_tokens"], task["completion_tokens"])
    agent, condenser = spent["agent"], spent["condenser"]
    own = (agent["prompt_tokens"] + condenser["prompt_tokens"],
           agent["completion_tokens"] + condenser["completion_tokens"])  # fmt: skip
    assert pair(transcript.metadata["usage"]) == own == (22_900, 379)


def _adk_model_spans() -> list[tuple[str, int, int]]:
    found = []
    for record in json_lines(ADK_TRACE):
        for resource in record["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    attrs = {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}
                    if "gen_ai.usage.input_tokens" in attrs:
                        assert attrs["gen_ai.operation.name"] == "generate_content"
                        found.append((attrs["gen_ai.agent.name"],
                                      int(attrs["gen_ai.usage.input_tokens"]),
                                      int(attrs["gen_ai.usage.output_tokens"])))  # fmt: skip
    return found


def test_U1_adk_trace_header_is_every_model_span_once() -> None:
    """Google ADK's own tracer writes usage on ``generate_content`` spans only (its
    ``invoke_agent``/``invoke_workflow`` spans record none): the ``calc`` agent's four calls
    (50 in, 10 out) are the session's own, the ``AgentTool`` ``helper``'s one (11 in, 1 out)
    its sub-agent's, and the header, 61 and 11, is every call's once."""
    spans = _adk_model_spans()
    transcript = load(ADK_TRACE)
    facts = session_facts(transcript)
    assert pair(facts.tokens) == (sum(s[1] for s in spans), sum(s[2] for s in spans)) == (61, 11)
    helper = [(i, o) for agent, i, o in spans if agent == "helper"]
    assert pair(facts.subagent_tokens) == (sum(i for i, _ in helper), sum(o for _, o in helper))
    calc = [(i, o) for agent, i, o in spans if agent == "calc"]
    own = (sum(i for i, _ in calc), sum(o for _, o in calc))
    assert pair(transcript.metadata["usage"]) == own == (50, 10)


def _cline_done_usages() -> list[dict[str, Any]]:
    return [r["event"]["usage"] for r in json_lines(CLINE_JSON)
            if r.get("type") == "agent_event" and r["event"].get("type") == "done"]  # fmt: skip


def _cline_run_result() -> dict[str, Any]:
    (result,) = [r for r in json_lines(CLINE_JSON) if r.get("type") == "run_result"]
    return result


def test_U1_cline_cli_header_is_the_lead_s_total_and_the_sub_agent_s() -> None:
    """The CLI's ``run_result`` ``usage`` (and its ``aggregateUsage``, the same figures) is the
    lead's own; the sub-agent's is on its own ``done``: the header is both, once each."""
    result = _cline_run_result()
    assert result["aggregateUsage"] == result["usage"]
    sub, lead = _cline_done_usages()
    assert lead == result["usage"]
    facts = session_facts(load(CLINE_JSON))
    assert pair(facts.subagent_tokens) == (sub["inputTokens"], sub["outputTokens"])
    assert pair(facts.tokens) == (lead["inputTokens"] + sub["inputTokens"],
                                  lead["outputTokens"] + sub["outputTokens"])  # fmt: skip


AGENTS_STATES = ["openai-agents_v0.24.0_run-state_handoff.json",
                 "openai-agents_v0.24.0_run-state_handoff-chain.json"]  # fmt: skip


@pytest.mark.parametrize("name", AGENTS_STATES)
def test_U1_agents_sdk_header_is_the_run_context_usage(name: str) -> None:
    """``RunState.context.usage`` counts every request of the run, handoffs and agents used as
    tools included: the header's tokens are it, neither more nor less."""
    state = json.loads((AGENTS / name).read_text(encoding="utf-8"))
    usage = state["context"]["usage"]
    facts = session_facts(load(AGENTS / name))
    assert facts.subagent_tokens
    assert pair(facts.tokens) == (usage["input_tokens"], usage["output_tokens"])


@pytest.mark.parametrize("path", [CLAUDE_SDK, CLAUDE_STREAM], ids=lambda p: p.name)
def test_U1_claude_header_is_the_result_s_model_usage(path: Path) -> None:
    """The CLI's ``result``: ``usage`` the session's own responses, ``modelUsage`` the run's
    every request, sub-agents' included: the header is ``modelUsage``."""
    if path.suffix == ".jsonl":
        (result,) = [r for r in json_lines(path) if r.get("type") == "result"]
        model_usage = result["modelUsage"]
    else:
        model_usage = load(path).metadata["model_usage"]
    facts = session_facts(load(path))
    assert facts.subagent_tokens
    whole = (sum(m["inputTokens"] + m["cacheReadInputTokens"] + m["cacheCreationInputTokens"]
                 for m in model_usage.values()),
             sum(m["outputTokens"] for m in model_usage.values()))  # fmt: skip
    assert pair(facts.tokens) == whole


def test_U1_inspect_handoff_sample_header_is_its_model_usage() -> None:
    """An Inspect sample's ``model_usage`` counts every model call of the sample, a handoff's
    (``transfer_to_researcher``) and an ``as_tool`` agent's (``critic``) included."""
    log = json.loads(INSPECT.read_text(encoding="utf-8"))
    (sample,) = [s for s in log["samples"] if s["id"] == "solve"]
    corpus = turnfold.scan([INSPECT], workers=1, cache=False)
    (key,) = [k for k in corpus.to_pandas()["key"] if "#solve/" in k]
    transcript = corpus[key]
    assert {c.name for c in delegated(transcript)} == {"transfer_to_researcher", "critic"}
    facts = session_facts(transcript)
    assert facts.subagent_tokens
    (usage,) = sample["model_usage"].values()
    assert pair(facts.tokens) == (usage["input_tokens"], usage["output_tokens"])


def test_U1_codex_thread_total_leaves_spawned_agents_out_and_is_not_the_run_s() -> None:
    """Codex's ``turn.completed`` usage is the thread's ``total_token_usage`` (a spawned agent's
    own thread not in it): kept apart as the session so far, never as the header's tokens."""
    (done,) = [r for r in json_lines(CODEX_SPAWN) if r.get("type") == "turn.completed"]
    transcript = load(CODEX_SPAWN)
    assert delegated(transcript)
    facts = session_facts(transcript)
    assert facts.tokens == {}
    assert pair(facts.session_usage) == (done["usage"]["input_tokens"],
                                         done["usage"]["output_tokens"])  # fmt: skip


# --- cost: a recorded cost covers what the header's tokens cover -----------------------------

SONNET = {"input": 3 / 1e6, "output": 15 / 1e6, "cache_read": 0.3 / 1e6, "cache_write": 3.75 / 1e6}


def _by_hand(usage: Mapping[str, int]) -> float:
    read, written = usage["cacheReadTokens"], usage["cacheWriteTokens"]
    fresh = usage["inputTokens"] - read - written
    return (fresh * SONNET["input"] + usage["outputTokens"] * SONNET["output"]
            + read * SONNET["cache_read"] + written * SONNET["cache_write"])  # fmt: skip


def test_U2_cline_cli_cost_adds_the_sub_agent_s_recorded_cost() -> None:
    """The lead's ``totalCost`` (0.2194545) and the sub-agent's (0.108987), both recorded: the
    header's cost is their sum, marked recorded, as the corpus row has it."""
    sub, lead = _cline_done_usages()
    assert _by_hand(lead) == pytest.approx(lead["totalCost"])  # the lead's own tokens alone
    assert _by_hand(sub) == pytest.approx(sub["totalCost"])
    transcript = load(CLINE_JSON)
    assert transcript.metadata["cost_usd"] == lead["totalCost"]
    facts = session_facts(transcript)
    assert facts.cost is not None
    assert facts.cost.recorded
    assert facts.cost.usd == pytest.approx(lead["totalCost"] + sub["totalCost"])
    row = turnfold.scan([CLINE_JSON], workers=1, cache=False).to_pandas().iloc[0]
    assert row["cost_usd"] == pytest.approx(lead["totalCost"] + sub["totalCost"])


def test_U2_a_sub_agent_with_no_recorded_cost_is_estimated_and_the_sum_marked_so() -> None:
    sub, lead = _cline_done_usages()
    transcript = load(CLINE_JSON)
    ((call,),) = [delegated(transcript)]
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    del call.subagent.transcript.metadata["cost_usd"]
    facts = session_facts(transcript)
    assert facts.cost is not None
    assert not facts.cost.recorded  # shown as ≈, an estimate in part
    assert facts.cost.usd == pytest.approx(lead["totalCost"] + _by_hand(sub))


def test_U2_a_sub_agent_neither_recorded_nor_priced_leaves_no_cost() -> None:
    """Without the sub-agent's cost and with a model no price table knows, the lead's recorded
    cost alone would not be the cost of the tokens the header shows: none is shown."""
    transcript = load(CLINE_JSON)
    ((call,),) = [delegated(transcript)]
    assert call.subagent is not None
    assert call.subagent.transcript is not None
    del call.subagent.transcript.metadata["cost_usd"]
    transcript.metadata["model"] = "scripted-model-no-table-knows"
    for entry in [*transcript.entries, *call.subagent.transcript.entries]:
        if isinstance(entry, AssistantText) and entry.model:
            entry.model = "scripted-model-no-table-knows"
    assert session_facts(transcript).cost is None


@pytest.mark.parametrize("path", [CLAUDE_SDK, CLINE_TEAM], ids=lambda p: p.name)
def test_U2_a_recorded_cost_that_holds_its_sub_agents_is_shown_as_recorded(path: Path) -> None:
    """The Claude CLI's ``total_cost_usd`` prices ``modelUsage`` (sub-agents' included); Cline's
    messages files are summed with their sub-agents' by the reader: nothing is added again."""
    transcript = load(path)
    facts = session_facts(transcript)
    assert delegated(transcript)
    assert facts.cost is not None
    assert facts.cost.recorded
    assert facts.cost.usd == transcript.metadata["cost_usd"]
