"""A sub-agent's one-hour cache writes in Claude Code's stream-json and the Claude Agent SDK
(spec U-1, U-2).

The CLI streams no output count of a sub-agent's own: its usage is the run's ``modelUsage``
less the session's ``usage``, trusted where the input counts left are the sub-agent's
messages' (``claude_stream.subagent_usage``). ``modelUsage`` also gives the part of the cache
writes kept for an hour (``cacheCreationEphemeral1hInputTokens``), which Anthropic prices above
a five-minute write: the sub-agent's usage carries it, and its price is genai-prices' price of
its counts.

The real runs record no cache writes at all (their scripted model sent none, every
``cacheCreationEphemeral1hInputTokens`` 0). Each test therefore edits a real run's numbers, as
its docstring says: each of the sub-agent's messages gets ``cache_creation_input_tokens``
3000, of them 2000 written for an hour (``cache_creation.ephemeral_1h_input_tokens``) and 1000
for five minutes, and every ``result``'s ``modelUsage`` counts them too, as the CLI adds a
request's counts to it. The runs: ``claude -p`` 2.1.337 with a background agent
(``background_agent_stopped_recipe.txt``), whose sub-agent made one request, and the Claude
Agent SDK 0.2.189 (CLI 2.1.332, tests/formats/claude_agent_sdk_runs.py), whose sub-agent made
two.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.cost import estimate
from turnfold.model import SubAgent, Transcript, Usage
from turnfold.session import session_facts
from turnfold.usage import counts_of

FIXTURES = Path(__file__).parents[1] / "fixtures"
STREAM = (
    FIXTURES / "agents" / "claude-stream-json"
    / "claude-code_v2.1.337_stream-json_background-agent-stopped.jsonl"
)  # fmt: skip
SDK = (
    FIXTURES
    / "frameworks"
    / "claude-agent-sdk"
    / "claude-agent-sdk_v0.2.189_asdict_cli-subagent.json"
)
MODEL = "claude-opus-5-5"
FIVE, HOUR = 1000, 2000


def _written(usage: dict[str, Any]) -> None:
    """A sub-agent message's usage, with the cache writes of the module's docstring."""
    usage["cache_creation_input_tokens"] = FIVE + HOUR
    usage["cache_creation"] = {"ephemeral_5m_input_tokens": FIVE, "ephemeral_1h_input_tokens": HOUR}


#: How an edited ``modelUsage`` counts the writes: as the CLI does (``split``), without a
#: one-hour part at all (``unsplit``: no ``cacheCreationEphemeral1h…`` nor ``…5m…``, as before
#: the CLI counted them), or every write as a five-minute one (``five-minute``).
SPLITS = ("split", "unsplit", "five-minute")


def _totalled(model_usage: dict[str, Any], requests: int, split: str) -> None:
    """A ``modelUsage`` that counts ``requests`` such writes more, as ``split`` says."""
    (counts,) = model_usage.values()
    counts["cacheCreationInputTokens"] += requests * (FIVE + HOUR)
    if split == "split":
        counts["cacheCreationEphemeral5mInputTokens"] += requests * FIVE
        counts["cacheCreationEphemeral1hInputTokens"] += requests * HOUR
    elif split == "five-minute":
        counts["cacheCreationEphemeral5mInputTokens"] += requests * (FIVE + HOUR)
    else:
        del counts["cacheCreationEphemeral1hInputTokens"]
        del counts["cacheCreationEphemeral5mInputTokens"]


def _stream(tmp_path: Path, split: str = "split") -> tuple[Path, int]:
    """The ``claude -p`` stream, edited; the number of sub-agent requests."""
    events = [json.loads(line) for line in STREAM.read_text(encoding="utf-8").splitlines()]
    sub = {
        e["message"]["id"] for e in events if e["type"] == "assistant" and e["parent_tool_use_id"]
    }
    for event in events:
        if event["type"] == "assistant" and event["message"]["id"] in sub:
            _written(event["message"]["usage"])
        elif event["type"] == "result":
            _totalled(event["modelUsage"], len(sub), split)
    path = tmp_path / "stream.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path, len(sub)


def _sdk(tmp_path: Path, split: str = "split") -> tuple[Path, int]:
    """The SDK's saved messages, edited as :func:`_stream` edits the stream."""
    messages = json.loads(SDK.read_text(encoding="utf-8"))
    sub = {m["message_id"] for m in messages if m.get("message_id") and m["parent_tool_use_id"]}
    for message in messages:
        if message.get("message_id") in sub:
            _written(message["usage"])
        elif message.get("subtype") == "success":
            _totalled(message["model_usage"], len(sub), split)
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path, len(sub)


RUNS: dict[str, Callable[..., tuple[Path, int]]] = {"claude-p": _stream, "sdk": _sdk}


def _agent(transcript: Transcript) -> SubAgent:
    (agent,) = [c.subagent for c in transcript.tool_calls() if c.subagent is not None]
    return agent


def _price(usage: Usage, *, hour: bool) -> float:
    """genai-prices' own price of the sub-agent's counts (``hour=False``: as if every write
    were a five-minute one)."""
    import genai_prices

    counts = counts_of(usage)
    if not hour:
        counts["cache_write_1h_tokens"] = 0
    price = genai_prices.calc_price(genai_prices.Usage(**counts), MODEL, provider_id="anthropic")
    return float(price.total_price)


@pytest.mark.parametrize("run", RUNS)
def test_U1_a_sub_agent_s_usage_carries_its_one_hour_cache_writes(run: str, tmp_path: Path) -> None:
    """The sub-agent's requests' one-hour writes (2000 each) are in its usage, within its
    cache writes (3000 each), and in the session's sub-agent tokens."""
    path, requests = RUNS[run](tmp_path)
    transcript = turnfold.load(path)
    assert transcript.warnings == []
    usage = _agent(transcript).usage
    assert usage is not None
    assert (usage.cache_write_tokens, usage.cache_write_1h_tokens) == (
        requests * (FIVE + HOUR), requests * HOUR,
    )  # fmt: skip
    assert (usage.input_tokens, usage.output_tokens) == (
        requests * (10 + FIVE + HOUR),
        requests * 5,
    )
    facts = session_facts(transcript)
    assert facts.subagent_tokens["cache_write_1h_tokens"] == requests * HOUR
    assert facts.tokens["cache_write_1h_tokens"] == requests * HOUR


@pytest.mark.parametrize("run", RUNS)
def test_U2_a_sub_agent_s_cost_is_genai_prices_price_of_its_one_hour_writes(
    run: str, tmp_path: Path
) -> None:
    """Priced as turnfold prices a response, the sub-agent's usage costs what genai-prices
    says its counts cost, one-hour writes at their rate: more than the five-minute price."""
    path, _ = RUNS[run](tmp_path)
    usage = _agent(turnfold.load(path)).usage
    assert usage is not None
    cost = estimate([(MODEL, counts_of(usage))], provider="anthropic")
    assert cost is not None
    assert cost.usd == pytest.approx(_price(usage, hour=True))
    assert cost.usd > _price(usage, hour=False) * 1.01


@pytest.mark.parametrize("run", RUNS)
def test_U1_totals_without_a_one_hour_part_leave_the_messages_own(run: str, tmp_path: Path) -> None:
    """A ``modelUsage`` that gives no one-hour part (no ``cacheCreationEphemeral1h…`` nor
    ``…5m…``, as before the CLI counted them) still gives the output; the one-hour writes are
    the sub-agent's messages' own."""
    path, requests = RUNS[run](tmp_path, "unsplit")
    usage = _agent(turnfold.load(path)).usage
    assert usage is not None
    assert (usage.cache_write_1h_tokens, usage.output_tokens) == (requests * HOUR, requests * 5)


@pytest.mark.parametrize("run", RUNS)
def test_U1_totals_that_disagree_with_the_messages_one_hour_writes_are_not_trusted(
    run: str, tmp_path: Path
) -> None:
    """A ``modelUsage`` that counts the sub-agent's writes all as five-minute ones, where its
    messages say 2000 of each 3000 were kept for an hour: the totals and the messages disagree,
    so which tokens are the sub-agent's is not known, and no usage is made up for it."""
    path, _ = RUNS[run](tmp_path, "five-minute")
    agent = _agent(turnfold.load(path))
    assert (agent.usage, agent.output_tokens) == (None, None)
