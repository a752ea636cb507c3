"""One-hour cache writes in the readers of frameworks that record them (spec U-1, U-2).

Anthropic prices a write to its one-hour cache above a five-minute one
(``Usage.cache_write_1h_tokens``, :mod:`turnfold.prices`). Besides the Anthropic readers,
these sources record which writes were which, each in its own words:

* LangChain: langchain-anthropic's ``usage_metadata.input_token_details``
  (``ephemeral_1h_input_tokens``; it then sets ``cache_creation`` to 0, so the writes were read
  as none at all);
* pydantic-ai: ``RequestUsage.cache_write_1h_tokens`` (and Anthropic's count in ``details``);
* litellm (mini-swe-agent's and OpenHands' model responses):
  ``prompt_tokens_details.cache_creation_token_details``;
* Strands on Bedrock: Converse's ``usage.cacheDetails`` (``[{ttl: "1h", inputTokens}]``).

Each test runs the framework itself (or reads what it wrote) against a scripted Anthropic (or
Bedrock) model and checks the session's cost against genai-prices' own price of the same
counts, and that the five-minute price it was given before is not it.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.cost import entries_cost
from turnfold.model import Transcript
from turnfold.session import session_facts
from turnfold.usage import USAGE_KINDS, count_tokens

FIXTURES = Path(__file__).parent / "fixtures"
LANGCHAIN = (
    FIXTURES / "frameworks" / "langchain"
    / "langchain-anthropic_v1.7.10_messages-to-dict_one-hour-cache.json"
)  # fmt: skip
MODEL = "claude-sonnet-4-5-20250929"
#: The scripted responses' Anthropic usage: uncached input, cache reads, five-minute and
#: one-hour cache writes, output (as in the LangChain fixture's recipe).
USAGES = [(12, 0, 0, 2048, 40), (20, 2048, 100, 200, 30)]


def _counts(fresh: int, read: int, five: int, hour: int, out: int) -> dict[str, int]:
    """A response's counts in genai-prices' names (cached input within the input)."""
    return {"input_tokens": fresh + read + five + hour, "output_tokens": out,
            "cache_read_tokens": read, "cache_write_tokens": five + hour,
            "cache_write_1h_tokens": hour}  # fmt: skip


def _table_price(
    usages: list[tuple[int, int, int, int, int]], model: str, provider: str, *, one_hour: bool
) -> float:
    """genai-prices' own price of the responses, today's (the sources here record no date);
    ``one_hour=False``: as if every write were a five-minute one."""
    import genai_prices

    total = 0.0
    for usage in usages:
        counts = _counts(*usage)
        if not one_hour:
            counts["cache_write_1h_tokens"] = 0
        price = genai_prices.calc_price(genai_prices.Usage(**counts), model, provider_id=provider)
        total += float(price.total_price)
    return total


def _check_cost(
    transcript: Transcript,
    usages: list[tuple[int, int, int, int, int]],
    model: str = MODEL,
    provider: str = "anthropic",
    *,
    recorded: bool = False,
) -> None:
    """Each response's counts as recorded, the one-hour part among its writes, and the
    session's cost genai-prices' price of them (which the five-minute rate is not). A run
    that ``recorded`` its own cost shows that one (spec U-2): its turns' estimate is checked."""
    carried = [e.usage for e in transcript.entries if isinstance(e, USAGE_KINDS) and e.usage]
    assert [u.cache_write_1h_tokens for u in carried] == [u[3] for u in usages]
    assert [u.cache_write_tokens for u in carried] == [u[2] + u[3] for u in usages]
    tokens = count_tokens(transcript.entries)
    assert tokens["cache_write_1h_tokens"] == sum(u[3] for u in usages)
    cost = session_facts(transcript).cost
    assert cost is not None
    assert cost.recorded is recorded
    if recorded:
        cost = entries_cost(transcript, transcript.entries)
        assert cost is not None
    assert cost.usd == pytest.approx(_table_price(usages, model, provider, one_hour=True))
    assert cost.usd > _table_price(usages, model, provider, one_hour=False) * 1.01


# --- a scripted Anthropic Messages server --------------------------------------------------


def _message(index: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    fresh, read, five, hour, out = USAGES[index]
    return {
        "id": f"msg_tf_1h_{index + 1}", "type": "message", "role": "assistant", "model": MODEL,
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": fresh, "output_tokens": out, "cache_read_input_tokens": read,
                  "cache_creation_input_tokens": five + hour,
                  "cache_creation": {"ephemeral_5m_input_tokens": five,
                                     "ephemeral_1h_input_tokens": hour}},
    }  # fmt: skip


def _sse(message: dict[str, Any]) -> bytes:
    """The message as the Messages API streams it: ``message_start`` carries the input counts
    and ``cache_creation``, ``message_delta`` the output count."""
    start = dict(message, content=[], stop_reason=None)
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events += [
                {"type": "content_block_start", "index": index,
                 "content_block": {"type": "text", "text": ""}},
                {"type": "content_block_delta", "index": index,
                 "delta": {"type": "text_delta", "text": block["text"]}},
            ]  # fmt: skip
        else:
            events += [
                {"type": "content_block_start", "index": index,
                 "content_block": dict(block, input={})},
                {"type": "content_block_delta", "index": index,
                 "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
            ]  # fmt: skip
        events.append({"type": "content_block_stop", "index": index})
    events += [
        {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                                            "stop_sequence": None},
         "usage": {"output_tokens": message["usage"]["output_tokens"]}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


#: The ``index``-th response, of its content and stop reason (:func:`_message`'s shape).
Message = Callable[[int, list[dict[str, Any]], str], dict[str, Any]]


@contextmanager
def _messages_server(
    replies: list[tuple[list[dict[str, Any]], str]], message: Message = _message
) -> Iterator[str]:
    """A loopback Messages API answering ``replies`` (content, stop reason) in turn, each as
    ``message`` makes it (the usage of :data:`USAGES`, by default), streamed when the request
    asks for a stream."""
    answered = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            index = answered[0]
            answered[0] += 1
            reply = message(index, *replies[index])
            streamed = bool(body.get("stream"))
            data = _sse(reply) if streamed else json.dumps(reply).encode()
            self.send_response(200)
            kind = "text/event-stream" if streamed else "application/json"
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def _texts(*texts: str) -> list[tuple[list[dict[str, Any]], str]]:
    return [([{"type": "text", "text": text}], "end_turn") for text in texts]


# --- LangChain -----------------------------------------------------------------------------


def test_U2_langchain_anthropic_one_hour_writes_are_priced_and_its_zeroed_writes_counted() -> None:
    """The fixture is the real ChatAnthropic's (its recipe beside it): ``cache_creation`` is 0
    in both responses' details, the writes are in their TTL parts."""
    saved = json.loads(LANGCHAIN.read_text(encoding="utf-8"))
    details = [
        m["data"]["usage_metadata"]["input_token_details"] for m in saved if m["type"] == "ai"
    ]
    assert [d["cache_creation"] for d in details] == [0, 0]
    assert [d["ephemeral_1h_input_tokens"] for d in details] == [2048, 200]
    _check_cost(turnfold.load(LANGCHAIN), USAGES)


def test_U2_langchain_usage_without_the_split_reads_as_before() -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    answer = AIMessage(
        "ok", response_metadata={"model_name": MODEL},
        usage_metadata={"input_tokens": 1300, "output_tokens": 5, "total_tokens": 1305,
                        "input_token_details": {"cache_read": 1000, "cache_creation": 200}},
    )  # fmt: skip
    transcript = turnfold.load([HumanMessage("hi"), answer])
    assert count_tokens(transcript.entries) == {
        "input_tokens": 1300, "output_tokens": 5, "cache_read_tokens": 1000,
        "cache_write_tokens": 200,
    }  # fmt: skip


# --- pydantic-ai ---------------------------------------------------------------------------


def _pydantic_ai_run(url: str) -> Any:
    from anthropic import AsyncAnthropic
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    client = AsyncAnthropic(base_url=url, api_key="sk-ant-fake", max_retries=0)
    model = AnthropicModel(MODEL, provider=AnthropicProvider(anthropic_client=client))
    agent = Agent(model)
    first = agent.run_sync("TF-PAI-1H: summarise the notes.")
    return agent.run_sync("TF-PAI-1H: and the questions?", message_history=first.all_messages())


def test_U2_pydantic_ai_request_usage_one_hour_writes_are_priced() -> None:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    with _messages_server(_texts("TF-PAI-1H-ANSWER-1", "TF-PAI-1H-ANSWER-2")) as url:
        result = _pydantic_ai_run(url)
    recorded = [
        m.usage.cache_write_1h_tokens for m in result.all_messages() if m.kind == "response"
    ]
    assert recorded == [2048, 200]  # pydantic-ai's own field
    _check_cost(turnfold.load(result), USAGES)  # the run's objects
    saved = ModelMessagesTypeAdapter.dump_json(result.all_messages()).decode()
    _check_cost(turnfold.load(saved), USAGES)  # its messages as saved


def test_U2_pydantic_ai_details_alone_give_the_one_hour_writes() -> None:
    """A saved run of a release whose ``RequestUsage`` has no one-hour field: Anthropic's count
    in ``details`` (which pydantic-ai keeps there as well) still gives them."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    with _messages_server(_texts("TF-PAI-1H-ANSWER-1", "TF-PAI-1H-ANSWER-2")) as url:
        result = _pydantic_ai_run(url)
    saved = json.loads(ModelMessagesTypeAdapter.dump_json(result.all_messages()))
    for message in saved:
        if message["kind"] == "response":
            assert message["usage"]["details"]["ephemeral_1h_input_tokens"] > 0
            del message["usage"]["cache_write_1h_tokens"]
    _check_cost(turnfold.load(json.dumps(saved)), USAGES)


# --- litellm (mini-swe-agent) --------------------------------------------------------------


def test_U2_litellm_one_hour_writes_of_a_mini_swe_agent_run_are_priced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mini-swe-agent's own LitellmModel on an Anthropic model (litellm translating the
    scripted Messages API): the trajectory keeps litellm's usage, its one-hour part in
    ``prompt_tokens_details.cache_creation_token_details``; and litellm's cost, which the
    session shows as recorded."""
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm's own prices, offline
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.litellm_model import LitellmModel

    submit = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    replies: list[tuple[list[dict[str, Any]], str]] = [
        ([{"type": "text", "text": "Look first."},
          {"type": "tool_use", "id": "toolu_tf_1", "name": "bash", "input": {"command": "ls"}}],
         "tool_use"),
        ([{"type": "text", "text": "Done."},
          {"type": "tool_use", "id": "toolu_tf_2", "name": "bash", "input": {"command": submit}}],
         "tool_use"),
    ]  # fmt: skip
    out = tmp_path / "run.traj.json"
    with _messages_server(replies) as url:
        model = LitellmModel(
            model_name=f"anthropic/{MODEL}", model_kwargs={"api_base": url, "api_key": "sk-fake"},
            cost_tracking="ignore_errors",
        )  # fmt: skip
        env = LocalEnvironment(cwd=str(tmp_path), env={"PAGER": "cat"})
        agent = DefaultAgent(
            model, env, system_template="You are a helpful assistant.",
            instance_template="Please look: {{task}}", output_path=out,
        )  # fmt: skip
        agent.run("list the files")
    trajectory = json.loads(out.read_text())
    responses = [
        m["extra"]["response"] for m in trajectory["messages"] if "response" in m.get("extra", {})
    ]
    split = [r["usage"]["prompt_tokens_details"]["cache_creation_token_details"] for r in responses]
    assert [s["ephemeral_1h_input_tokens"] for s in split] == [2048, 200]
    _check_cost(turnfold.load(out), USAGES, recorded=True)


# --- Strands on Bedrock --------------------------------------------------------------------


BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


def test_U2_strands_bedrock_cache_details_one_hour_writes_are_priced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Strands' own BedrockModel, its boto3 client answered by botocore's Stubber (each
    response checked against the Converse service model): Strands keeps Converse's ``usage``,
    ``cacheDetails`` with it, as the message's ``metadata.usage``."""
    from botocore.stub import Stubber  # type: ignore[import-untyped]
    from strands import Agent
    from strands.models.bedrock import BedrockModel

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "fake")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake")
    model = BedrockModel(model_id=BEDROCK_MODEL, region_name="us-east-1", streaming=False)
    stubber = Stubber(model.client)
    for index, (fresh, read, five, hour, out) in enumerate(USAGES):
        details = [{"ttl": ttl, "inputTokens": n} for ttl, n in (("1h", hour), ("5m", five)) if n]
        stubber.add_response("converse", {
            "output": {"message": {"role": "assistant",
                                   "content": [{"text": f"TF-STRANDS-1H-ANSWER-{index + 1}"}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": fresh, "outputTokens": out,
                      "totalTokens": fresh + read + five + hour + out,
                      "cacheReadInputTokens": read, "cacheWriteInputTokens": five + hour,
                      "cacheDetails": details},
            "metrics": {"latencyMs": 10},
        })  # fmt: skip
    agent = Agent(model=model, callback_handler=None)
    with stubber:
        agent("TF-STRANDS-1H: summarise the notes.")
        agent("TF-STRANDS-1H: and the questions?")
    stubber.assert_no_pending_responses()
    kept: list[Any] = [m["metadata"]["usage"] for m in agent.messages if "metadata" in m]
    assert [usage["cacheDetails"] for usage in kept] == [
        [{"ttl": "1h", "inputTokens": 2048}],
        [{"ttl": "1h", "inputTokens": 200}, {"ttl": "5m", "inputTokens": 100}],
    ]
    _check_cost(turnfold.load(agent), USAGES, BEDROCK_MODEL, "aws")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
