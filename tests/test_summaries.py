"""Tool-use summary labels without a network (spec S-1 … S-8): the pure parts, callable models,
the switches, persistence. The live HTTP paths are in ``test_summaries_live.py``."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import sys
import threading
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import turnfold
from turnfold.model import AssistantText, ToolCall, ToolResult, ToolUseSummary, Transcript
from turnfold.recording import Recorder
from turnfold.settings import DisplaySettings
from turnfold.summaries import (
    ENV_VARIABLE,
    PURPOSE,
    SYSTEM_PROMPT,
    AnthropicModel,
    CallableModel,
    Completion,
    MissingExtraError,
    OpenAIModel,
    SummaryRequest,
    TranscriptLabeller,
    UsageTracker,
    build_request,
    clean_summary,
    env_override,
    label_batches,
    redact_secrets,
    redact_value,
    resolve_model,
    summaries_enabled,
    truncate_json,
)
from turnfold.summaries.prompt import intent_before

SETTINGS = DisplaySettings()
NO_ENV: dict[str, str] = {}


def clock() -> str:
    return "2026-01-01T00:00:00Z"


def call(
    name: str = "Read",
    args: Any = None,
    result: str | None = "ok",
    status: str = "success",
    **kw: Any,
) -> ToolCall:
    return ToolCall(
        call_id=kw.pop("call_id", f"c-{name}-{status}"),
        name=name,
        args=args if args is not None else {"file_path": "a.ts"},
        status=status,  # type: ignore[arg-type]
        result=ToolResult(text=result) if result is not None else None,
        **kw,
    )


# --- S-4: truncate_json --------------------------------------------------------------------------


class Opaque:
    pass


_CYCLE: list[Any] = []
_CYCLE.append(_CYCLE)


@pytest.mark.parametrize(
    ("value", "max_len", "expected"),
    [
        pytest.param({"a": 1, "b": [1, 2]}, 300, '{"a":1,"b":[1,2]}', id="compact-separators"),
        pytest.param({"path": "日本/ü.txt"}, 300, '{"path":"日本/ü.txt"}', id="non-ascii-kept"),
        pytest.param('a\nb\t"c"', 300, '"a\\nb\\t\\"c\\""', id="escapes"),
        pytest.param(None, 300, "null", id="none"),
        pytest.param((1, (2, 3)), 300, "[1,[2,3]]", id="tuples-as-arrays"),
        pytest.param(True, 300, "true", id="bool"),
        pytest.param("x" * 298, 300, '"' + "x" * 298 + '"', id="exactly-300-kept"),
        pytest.param("x" * 299, 300, '"' + "x" * 296 + "...", id="301-cut-to-297-plus-dots"),
        pytest.param("x" * 10_000, 300, '"' + "x" * 296 + "...", id="long-string-leaf"),
        pytest.param(
            {"file_path": "a.ts", "content": "y" * 1000, "mode": "w"},
            300,
            ('{"file_path":"a.ts","content":"' + "y" * 1000)[:297] + "...",
            id="leaf-inside-object",
        ),
        pytest.param(["é" * 400], 300, ('["' + "é" * 400)[:297] + "...", id="non-ascii-counted"),
        pytest.param("abcdefghij", 10, '"abcdef...', id="small-max-len"),
        pytest.param({1, 2}, 300, "[unable to serialize]", id="set"),
        pytest.param(b"bytes", 300, "[unable to serialize]", id="bytes"),
        pytest.param(Opaque(), 300, "[unable to serialize]", id="object"),
        pytest.param({"k": Opaque()}, 300, "[unable to serialize]", id="nested-object"),
        pytest.param(_CYCLE, 300, "[unable to serialize]", id="cycle"),
    ],
)
def test_S4_truncate_json(value: Any, max_len: int, expected: str) -> None:
    assert truncate_json(value, max_len) == expected
    assert len(truncate_json(value, max_len)) <= max_len


def _naive(value: Any, max_len: int) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= max_len else text[: max_len - 3] + "..."


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=400),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(value=_JSON, max_len=st.integers(min_value=3, max_value=320))
def test_S4_cutting_string_leaves_first_never_changes_the_result(value: Any, max_len: int) -> None:
    assert truncate_json(value, max_len) == _naive(value, max_len)


def test_S4_truncate_json_rejects_a_max_len_below_3() -> None:
    with pytest.raises(ValueError, match="at least 3"):
        truncate_json("x", 2)


def test_S4_truncate_json_is_public_api() -> None:
    from turnfold.summaries import clean_summary as cs
    from turnfold.summaries import truncate_json as tj

    assert getattr(turnfold, "truncate_json", tj) is tj
    assert getattr(turnfold, "clean_summary", cs) is cs


# --- S-5: clean_summary --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Read config.json", "Read config.json"),
        ("  Read config.json  ", "Read config.json"),
        # first line only
        ("Ran failing tests\nBecause the suite was red.", "Ran failing tests"),
        ("\n\nRead a.ts\r\nmore", "Read a.ts"),
        # one leading bullet
        ("- Read a.ts", "Read a.ts"),
        ("* Read a.ts", "Read a.ts"),
        ("• Read a.ts", "Read a.ts"),
        ("- - Read a.ts", "- Read a.ts"),
        ("-Read a.ts", "-Read a.ts"),
        # markdown emphasis
        ("**Read a.ts**", "Read a.ts"),
        ("__Read a.ts__", "Read a.ts"),
        ("_Read a.ts_", "Read a.ts"),
        ("Fixed **NPE** in UserService", "Fixed NPE in UserService"),
        ("Edited my_var_name", "Edited my_var_name"),
        ("Read __init__.py", "Read __init__.py"),
        ("Globbed **/*.ts", "Globbed **/*.ts"),
        # surrounding quotes: ASCII, curly, CJK corner brackets
        ('"Read a.ts"', "Read a.ts"),
        ("'Read a.ts'", "Read a.ts"),
        ("“Read a.ts”", "Read a.ts"),
        ("‘Read a.ts’", "Read a.ts"),
        ("「读取配置文件」", "读取配置文件"),
        ("『读取配置文件』", "读取配置文件"),
        ("Read 'a.ts'", "Read 'a.ts'"),
        # prefixes, ASCII or full-width colon
        ("Label: Read a.ts", "Read a.ts"),
        ("Summary: Read a.ts", "Read a.ts"),
        ("Result: Read a.ts", "Read a.ts"),
        ("Output: Read a.ts", "Read a.ts"),
        ("label：读取配置", "读取配置"),
        ("Summary：Fixed NPE", "Fixed NPE"),
        # everything at once
        ('- **Label: "Searched in auth/"**', "Searched in auth/"),
        ('"Label: Read a.ts"', "Read a.ts"),
        ("• 「Label：读取配置」", "读取配置"),
        # rejections
        ("API error: 529 overloaded", ""),
        ("api error", ""),
        ("Error: rate limited", ""),
        ("ERROR: x", ""),
        ("I can't summarize that", ""),
        ("I can’t summarize that", ""),
        ("I cannot see the output", ""),
        ("i CANNOT", ""),
        ("Unable to determine", ""),
        ("Failed to parse", ""),
        ("Sorry, I need more context", ""),
        ("Request failed with status 500", ""),
        ("我无法总结", ""),
        ("我不能回答", ""),
        ("抱歉，出错了", ""),
        ("无法生成摘要", ""),
        ("- Error: x", ""),
        ('"Sorry, no"', ""),
        ("Label: I cannot", ""),
        # not rejections: the words alone are not an error
        ("API errors fixed", "API errors fixed"),
        ("Errors fixed in parser", "Errors fixed in parser"),
        ("Failed tests rerun", "Failed tests rerun"),
        ("Fixed error handling", "Fixed error handling"),
        # empty
        ("", ""),
        ("   \n  ", ""),
        ("**  **", ""),
        ("Label:", ""),
    ],
)
def test_S5_clean_summary(raw: str, expected: str) -> None:
    assert clean_summary(raw) == expected


def test_S5_clean_summary_cuts_to_100_characters() -> None:
    assert clean_summary("x" * 150) == "x" * 100
    assert clean_summary("读" * 150) == "读" * 100
    assert clean_summary('"' + "y" * 120 + '"') == "y" * 100


def test_S5_clean_summary_of_a_non_string_is_empty() -> None:
    assert clean_summary(None) == ""
    assert clean_summary(42) == ""


# --- S-2, S-3: the switches ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", False),
        ("false", False),
        ("1", True),
        ("true", True),
        ("False", None),
        ("TRUE", None),
        (" 0", None),
        ("1 ", None),
        ("no", None),
        ("off", None),
        ("yes", None),
        ("", None),
        (None, None),
    ],
)
def test_S3_env_override_matches_exactly(value: str | None, expected: bool | None) -> None:
    environ = {} if value is None else {ENV_VARIABLE: value}
    assert env_override(environ) is expected


@pytest.mark.parametrize(
    ("setting", "env", "model", "expected"),
    [
        (True, None, "m", True),
        (False, None, "m", False),
        (True, "0", "m", False),
        (True, "false", "m", False),
        (False, "1", "m", True),
        (False, "true", "m", True),
        (False, "yes", "m", False),  # anything else defers to the setting
        (True, "FALSE", "m", True),
        (True, "1", None, False),  # S-3: no fast model, whatever the switch says
        (True, None, None, False),
    ],
)
def test_S2_S3_summaries_enabled(
    setting: bool, env: str | None, model: str | None, expected: bool
) -> None:
    environ = {} if env is None else {ENV_VARIABLE: env}
    settings_ = DisplaySettings(emit_tool_use_summaries=setting)
    assert summaries_enabled(settings_, fast_model=model, environ=environ) is expected
    assert (
        summaries_enabled({"emitToolUseSummaries": setting}, fast_model=model, environ=environ)
        is expected
    )


def test_S3_the_switch_is_read_when_each_batch_closes() -> None:
    environ: dict[str, str] = {ENV_VARIABLE: "0"}
    sent: list[SummaryRequest] = []

    def model(request: SummaryRequest) -> str:
        sent.append(request)
        return "Read a.ts"

    with TranscriptLabeller(Transcript(), model, settings=SETTINGS, environ=environ) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        rec.end_batch()
        assert labeller.wait(2)
        assert sent == []
        environ[ENV_VARIABLE] = "true"
        rec.finish_tool(rec.start_tool("Read", {"file_path": "b.ts"}), "b")
        rec.end_batch()
        assert labeller.wait(2)
    assert len(sent) == 1
    assert "b.ts" in sent[0].prompt


def test_S2_the_setting_off_means_no_request() -> None:
    sent: list[SummaryRequest] = []
    off = DisplaySettings(emit_tool_use_summaries=False, fast_model=lambda r: sent.append(r))
    with TranscriptLabeller(Transcript(), settings=off, environ=NO_ENV) as labeller:
        assert not labeller.enabled
        rec = Recorder(labeller=labeller)
        rec.finish_tool(rec.start_tool("Read"), "a")
        rec.end_batch()
        assert labeller.wait(2)
    assert sent == []


def test_S2_no_fast_model_means_nothing_happens() -> None:
    with TranscriptLabeller(
        Transcript(), settings=SETTINGS, environ={ENV_VARIABLE: "1"}
    ) as labeller:
        assert labeller.model is None
        assert not labeller.enabled
        rec = Recorder(labeller=labeller)
        rec.finish_tool(rec.start_tool("Read"), "a")
        rec.end_batch()
        assert labeller.wait(2)
        assert [e.kind for e in rec.transcript] == ["tool_call"]


# --- S-4: the request ----------------------------------------------------------------------------


def test_S4_only_successful_tools_are_sent() -> None:
    calls = [
        call("Read", {"file_path": "ok.ts"}, "fine", call_id="1"),
        call("Read", {"file_path": "err.ts"}, "ENOENT", status="error", call_id="2"),
        call("Bash", {"command": "make"}, "partial", status="cancelled", call_id="3"),
        call("Grep", {"pattern": "x"}, None, status="unknown", call_id="4"),
        call("LS", {"path": "."}, "a b", call_id="5"),
    ]
    request = build_request(calls)
    assert request is not None
    assert [tool.name for tool in request.tools] == ["Read", "LS"]
    assert request.call_ids == ("1", "2", "3", "4", "5")  # the label covers the whole batch
    assert "err.ts" not in request.prompt
    assert "ENOENT" not in request.prompt
    assert build_request([calls[1], calls[2], calls[3]]) is None


def test_S4_fields_are_cut_to_300_and_the_intent_to_200_characters() -> None:
    args = {"file_path": "big.txt", "content": "c" * 1000}
    output = "o" * 1000
    intent = "i" * 199 + "JX" + "z" * 300
    request = build_request([call("Write", args, output)], intent)
    assert request is not None
    (tool,) = request.tools
    assert tool.input == truncate_json(args, 300)
    assert len(tool.input) == 300
    assert tool.input.endswith("...")
    assert tool.output == '"' + "o" * 296 + "..."
    assert request.intent == "i" * 199 + "J"
    assert request.prompt == (
        f"Intent (from the assistant's last message): {'i' * 199}J\n\n"
        "Tools completed:\n\n"
        f"Tool: Write\nInput: {tool.input}\nOutput: {tool.output}\n\n"
        "Label:"
    )
    assert request.messages == [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": request.prompt},
    ]


def test_S4_no_intent_no_prefix() -> None:
    request = build_request([call()], None)
    assert request is not None
    assert request.prompt.startswith("Tools completed:\n\n")
    assert build_request([call()], "   ").prompt.startswith("Tools completed:")  # type: ignore[union-attr]


def test_S4_the_output_sent_is_the_text_else_the_structured_result() -> None:
    structured = ToolCall(
        call_id="s", name="Todo", status="success", result=ToolResult(structured={"done": 2})
    )
    request = build_request([structured, call("Read", result=None, call_id="n")])
    assert request is not None
    assert [tool.output for tool in request.tools] == ['{"done":2}', "null"]


def test_S4_the_system_prompt_says_what_the_spec_asks() -> None:
    text = SYSTEM_PROMPT.lower()
    for phrase in ("past-tense", "30 characters", "git commit subject", "not a sentence",
                   "distinctive noun", "articles", "connectors"):  # fmt: skip
        assert phrase in text


def test_S4_intent_is_the_assistants_last_text_before_the_batch_in_its_turn() -> None:
    rec = Recorder(clock=clock)
    rec.assistant("An earlier turn's answer.")
    rec.user("Next question")
    first = rec.start_tool("Read")
    assert intent_before(rec.transcript.entries, first) is None  # stops at the user message
    rec.end_batch()
    rec.assistant("Now let me search.")
    rec.assistant("   ")
    second = rec.start_tool("Grep", {"pattern": "x"})
    rec.assistant("Found it.")  # after the batch: not its intent
    assert intent_before(rec.transcript.entries, second) == "Now let me search."


# --- S-8: redaction ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("OPENAI_API_KEY sk-proj-" + "a1B2" * 10, "sk-proj-" + "a1B2" * 10),
        ("key sk-" + "Z" * 40, "sk-" + "Z" * 40),
        ("anthropic sk-ant-api03-" + "q" * 60, "sk-ant-api03-" + "q" * 60),
        ("google AIza" + "S" * 35, "AIza" + "S" * 35),
        ("github ghp_" + "h" * 36, "ghp_" + "h" * 36),
        ("github github_pat_" + "1" * 60, "github_pat_" + "1" * 60),
        ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
        ("slack xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
        ("Authorization: Bearer abc.def-ghi_jkl012345", "abc.def-ghi_jkl012345"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
        ("-----BEGIN PRIVATE KEY-----\nMIIBVgIBADAN\n-----END PRIVATE KEY-----", "MIIBVgIBADAN"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk (cut", "b3BlbnNzaC1rZXk"),
        ("redis://:p%40ss@cache:6379/0", "p%40ss"),
        ("https://admin:hunter2@example.com/x", "hunter2"),
        ("DB_PASSWORD=correct-horse", "correct-horse"),
        ('{"client_secret": "abcd1234"}', "abcd1234"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijk", "eyJhbGciOiJIUzI1NiJ9"),
    ],
)
def test_S8_redact_secrets(text: str, secret: str) -> None:
    redacted = redact_secrets(text)
    assert secret not in redacted
    assert "[REDACTED]" in redacted


@pytest.mark.parametrize(
    "text",
    [
        "Read src/auth/session.ts",
        "https://example.com:8080/path",
        "the bearer of news",
        "sk-short",
        "PWD=/home/me",
        "Errors: 0, tokens used: 1200",
    ],
)
def test_S8_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_secrets(text) == text


def test_S8_redact_value_blanks_keys_named_like_secrets_and_copies() -> None:
    value = {"user": "ana", "password": "x", "headers": {"Authorization": "tok"}, "n": [1, "ok"]}
    assert redact_value(value) == {
        "user": "ana",
        "password": "[REDACTED]",
        "headers": {"Authorization": "[REDACTED]"},
        "n": [1, "ok"],
    }
    assert value["password"] == "x"  # never modified in place


def test_S8_a_secret_straddling_the_cut_is_not_half_sent() -> None:
    key = "sk-proj-" + "K" * 40
    request = build_request(
        [call("Bash", {"command": "x" * 280 + " " + key})], "y" * 190 + " " + key
    )
    assert request is not None
    assert "sk-proj-" not in request.prompt
    assert "KKKK" not in request.prompt
    unredacted = build_request([call("Bash", {"command": key})], redact=False)
    assert unredacted is not None
    assert key in unredacted.prompt


# --- S-7: models ---------------------------------------------------------------------------------


def test_S7_a_callable_gets_the_request_and_may_report_tokens() -> None:
    seen: list[SummaryRequest] = []

    def model(request: SummaryRequest) -> Completion:
        seen.append(request)
        return Completion("Read a.ts", input_tokens=40, output_tokens=3)

    usage = UsageTracker()
    with TranscriptLabeller(
        Transcript(), model, settings=SETTINGS, environ=NO_ENV, usage=usage
    ) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.user("Go")
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        rec.end_batch()
        assert labeller.wait(2)
    assert seen[0].system == SYSTEM_PROMPT
    assert seen[0].tools[0].name == "Read"
    counter = usage.get(PURPOSE)
    assert (counter.calls, counter.input_tokens, counter.output_tokens) == (1, 40, 3)


def test_S7_an_async_callable_runs_off_the_notebook_loop() -> None:
    async def model(request: SummaryRequest) -> str:
        await asyncio.sleep(0.01)
        return "Searched in auth/"

    async def agent() -> list[str]:
        # Inside a running loop, as in a notebook cell.
        with TranscriptLabeller(Transcript(), model, settings=SETTINGS, environ=NO_ENV) as lab:
            rec = Recorder(labeller=lab, clock=clock)
            rec.finish_tool(rec.start_tool("Grep", {"pattern": "auth"}), "auth/x.py")
            rec.end_batch()
            for _ in range(200):
                if not lab.pending:
                    break
                await asyncio.sleep(0.01)
            return [e.label for e in rec.transcript if isinstance(e, ToolUseSummary)]

    # A thread of its own: the test process may already run a loop (Playwright's sync API does).
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        assert pool.submit(asyncio.run, agent()).result(timeout=10) == ["Searched in auth/"]


def test_S6_a_callable_that_hangs_is_given_up_after_the_timeout() -> None:
    release = threading.Event()

    def model(request: SummaryRequest) -> str:
        release.wait(5)
        return "Read a.ts"

    usage = UsageTracker()
    try:
        with TranscriptLabeller(
            Transcript(), model, settings=SETTINGS, environ=NO_ENV, timeout=0.2, usage=usage
        ) as labeller:
            rec = Recorder(labeller=labeller, clock=clock)
            rec.finish_tool(rec.start_tool("Read"), "a")
            started = time.monotonic()
            rec.end_batch()
            assert labeller.wait(2)
            assert time.monotonic() - started < 1
    finally:
        release.set()
    assert usage.get(PURPOSE).failures == 1
    assert not any(isinstance(e, ToolUseSummary) for e in rec.transcript)


def test_S6_a_callable_that_raises_is_swallowed() -> None:
    def model(request: SummaryRequest) -> str:
        raise RuntimeError("no quota")

    with TranscriptLabeller(Transcript(), model, settings=SETTINGS, environ=NO_ENV) as labeller:
        rec = Recorder(labeller=labeller, clock=clock)
        rec.finish_tool(rec.start_tool("Read"), "a")
        rec.end_batch()
        assert labeller.wait(2)
        rec.finish_tool(rec.start_tool("Read"), "b")  # the agent goes on as if nothing happened
    assert labeller.usage.get(PURPOSE).failures == 1


@pytest.mark.parametrize(
    ("spec", "environ", "kind", "name"),
    [
        ("gpt-4o-mini", {"OPENAI_API_KEY": "k"}, OpenAIModel, "gpt-4o-mini"),
        (
            "llama3.2:1b",
            {"TURNFOLD_FAST_MODEL_BASE_URL": "http://localhost:11434/v1"},
            OpenAIModel,
            "llama3.2:1b",
        ),
        ("openai:qwen2.5:0.5b", {"OPENAI_API_KEY": "k"}, OpenAIModel, "qwen2.5:0.5b"),
        ("claude-haiku-4-5", {"ANTHROPIC_API_KEY": "k"}, AnthropicModel, "claude-haiku-4-5"),
        ("anthropic:my-proxy-model", {"ANTHROPIC_API_KEY": "k"}, AnthropicModel, "my-proxy-model"),
        (
            "qwen-turbo",
            {"TURNFOLD_FAST_MODEL_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "k"},
            AnthropicModel,
            "qwen-turbo",
        ),
        ({"model": "claude-x", "provider": "openai", "api_key": "k"}, {}, OpenAIModel, "claude-x"),
    ],
)
def test_S7_resolve_model(spec: Any, environ: dict[str, str], kind: type, name: str) -> None:
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    model = resolve_model(spec, environ=environ)
    assert isinstance(model, kind)
    assert model.model == name  # type: ignore[union-attr]


def test_S7_resolve_model_errors_are_clear() -> None:
    assert resolve_model(None) is None
    assert resolve_model("  ") is None
    assert isinstance(resolve_model(lambda request: "x"), CallableModel)
    with pytest.raises(ValueError, match="no API key"):
        resolve_model("gpt-4o-mini", environ={})
    with pytest.raises(ValueError, match="unknown fast_model options"):
        resolve_model({"model": "m", "api_key": "k", "temprature": 0}, environ={})
    with pytest.raises(ValueError, match="needs a 'model'"):
        resolve_model({"api_key": "k"}, environ={})
    with pytest.raises(ValueError, match="unknown fast model provider"):
        resolve_model({"model": "m", "provider": "bedrock", "api_key": "k"}, environ={})
    with pytest.raises(TypeError):
        resolve_model(42)


@pytest.mark.parametrize(("spec", "extra"), [("gpt-4o-mini", "openai"), ("claude-3", "anthropic")])
def test_S7_a_missing_sdk_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, spec: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, extra, None)  # import now fails, as when not installed
    with pytest.raises(MissingExtraError, match=rf"pip install 'turnfold\[{extra}\]'"):
        resolve_model(spec, environ={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})


def test_S7_the_sdks_are_imported_only_when_used() -> None:
    import subprocess

    code = (
        "import sys, turnfold, turnfold.summaries, turnfold.widget;"
        "print(sorted(m for m in ('openai', 'anthropic') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


# --- S-1: once per batch, persistence, opt-in labelling ------------------------------------------


def test_S1_a_batch_is_labelled_once() -> None:
    sent: list[SummaryRequest] = []

    def model(request: SummaryRequest) -> str:
        sent.append(request)
        return "Read a.ts"

    transcript = Transcript()
    with TranscriptLabeller(transcript, model, settings=SETTINGS, environ=NO_ENV) as labeller:
        rec = Recorder(transcript, labeller=labeller, clock=clock)
        labeller.attach(rec)  # attached twice: still one request per batch
        rec.finish_tool(rec.start_tool("Read"), "a")
        rec.end_batch()
        rec.end_batch()
        assert labeller.wait(2)
        assert labeller.label_existing() == []  # already labelled
        transcript_settings = DisplaySettings(transcript_display_mode="flat")
        from turnfold.render.viewmodel import build_view_model

        build_view_model(transcript, transcript_settings)  # changing display settings...
        assert labeller.wait(2)
    assert len(sent) == 1  # ...never calls the model again


def test_S1_labels_round_trip_through_dump_and_load() -> None:
    rec = Recorder(clock=clock)
    rec.user("Go")
    read = rec.start_tool("Read", {"file_path": "a.ts"}, call_id="toolu_1")
    rec.finish_tool(read, "a")
    rec.assistant("Done.")
    rec.transcript.append(
        ToolUseSummary(label="Read a.ts", call_ids=["toolu_1"], timestamp=clock())
    )
    for layout in ("jsonl", "json"):
        loaded = turnfold.load(rec.transcript.dump(layout=layout))  # type: ignore[arg-type]
        assert loaded == rec.transcript
        (label,) = [e for e in loaded if isinstance(e, ToolUseSummary)]
        assert (label.label, label.call_ids) == ("Read a.ts", ["toolu_1"])


def test_S1_label_batches_is_opt_in_and_skips_what_it_should() -> None:
    rec = Recorder(clock=clock)
    rec.user("One")
    rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
    rec.end_batch()
    rec.finish_tool(rec.start_tool("Read", {"file_path": "bad.ts"}), "x", status="error")
    rec.end_batch()  # nothing succeeded
    rec.finish_tool(rec.start_tool("Read", {"file_path": "b.ts"}), "b")
    rec.label([rec.transcript.tool_calls()[-1]], "Read b.ts")  # already labelled
    rec.user("Two")
    rec.finish_tool(rec.start_tool("Read", {"file_path": "c.ts"}), "c")
    rec.abort()  # this batch was interrupted
    sent: list[str] = []

    def model(request: SummaryRequest) -> str:
        sent.append(request.tools[0].input)
        return "Read " + json.loads(request.tools[0].input)["file_path"]

    loaded = turnfold.load(rec.transcript.dump())
    added = label_batches(loaded, model, settings=SETTINGS, environ=NO_ENV)
    assert [s.label for s in added] == ["Read a.ts"]
    assert sent == ['{"file_path":"a.ts"}']
    off = label_batches(loaded, model, settings=SETTINGS, environ={ENV_VARIABLE: "0"})
    assert off == []


def test_S6_batch_closed_works_without_a_recorder() -> None:
    transcript = Transcript()
    read = transcript.append(call("Read", call_id="r1"))
    with TranscriptLabeller(
        transcript, lambda request: "Read a.ts", settings=SETTINGS, environ=NO_ENV
    ) as labeller:
        future = labeller.batch_closed([read])  # type: ignore[list-item]
        assert future is not None
        summary = future.result(timeout=2)
        assert summary is not None
        assert summary.call_ids == ["r1"]
        foreign = call("Read", call_id="elsewhere")
        assert labeller.batch_closed([foreign]) is None  # not this transcript's call


def test_S6_closing_drops_labels_in_flight() -> None:
    release = threading.Event()

    def model(request: SummaryRequest) -> str:
        release.wait(2)
        return "Read a.ts"

    labeller = TranscriptLabeller(Transcript(), model, settings=SETTINGS, environ=NO_ENV)
    rec = Recorder(labeller=labeller, clock=clock)
    rec.finish_tool(rec.start_tool("Read"), "a")
    rec.end_batch()
    labeller.close()
    release.set()
    assert labeller.wait(3)
    assert not any(isinstance(e, ToolUseSummary) for e in rec.transcript)
    rec.finish_tool(rec.start_tool("Read"), "b")
    rec.end_batch()  # detached: nothing happens
    assert labeller.pending == 0


def test_L5_recorder_batch_hooks() -> None:
    rec = Recorder(clock=clock)
    closed: list[list[str]] = []
    aborted: list[bool] = []
    stop = rec.on_batch_closed(lambda calls: closed.append([c.call_id for c in calls]))
    rec.on_abort(lambda: aborted.append(True))
    rec.start_tool("Read", call_id="a")
    rec.start_tool("Grep", call_id="b")
    rec.assistant("Next.")  # closes [a, b]
    rec.assistant("Again.")  # nothing open: no call
    rec.start_tool("Bash", call_id="c")
    rec.end_batch()
    rec.start_tool("Read", call_id="d")
    rec.thinking("hmm")
    rec.start_tool("Read", call_id="e")
    rec.user("more")
    rec.start_tool("Read", call_id="f")
    rec.fail("API error")
    rec.start_tool("Read", call_id="g")
    rec.abort()  # an aborted batch is not reported closed
    assert closed == [["a", "b"], ["c"], ["d"], ["e"], ["f"]]
    assert aborted == [True]
    stop()
    rec.start_tool("Read", call_id="h")
    rec.end_batch()
    assert len(closed) == 5


def test_L5_a_failing_hook_never_breaks_the_agent() -> None:
    rec = Recorder(clock=clock)

    def broken(calls: list[ToolCall]) -> None:
        raise RuntimeError("bug in a hook")

    rec.on_batch_closed(broken)
    rec.start_tool("Read")
    rec.assistant("Still fine.")
    assert [e.kind for e in rec.transcript] == ["tool_call", "assistant"]


def test_L5_recorder_with_a_labeller_extends_its_transcript() -> None:
    transcript = Transcript([AssistantText(text="earlier")])
    with TranscriptLabeller(transcript, lambda r: "x", settings=SETTINGS, environ=NO_ENV) as lab:
        assert Recorder(labeller=lab).transcript is transcript
        other = Transcript()
        assert Recorder(other, labeller=lab).transcript is other


def test_S2_an_abort_landing_just_before_the_label_drops_it() -> None:
    """The label is checked and appended under the transcript's lock (no window in between)."""
    from turnfold.model import AbortMarker

    transcript = Transcript()
    state = {"abort": True}

    def stamp() -> str:
        # Runs after the model answered, as the label is made: the last moment an abort from
        # another thread could land before the label does.
        if state.pop("abort", False):
            transcript.append(AbortMarker(reason="stopped"))
        return "2026-01-01T00:00:00Z"

    with TranscriptLabeller(
        transcript, lambda request: "Read a.ts", settings=SETTINGS, environ=NO_ENV, clock=stamp
    ) as labeller:
        rec = Recorder(transcript, labeller=labeller, clock=clock)
        rec.user("Go")
        rec.finish_tool(rec.start_tool("Read", {"file_path": "a.ts"}), "a")
        rec.end_batch()
        assert labeller.wait(2)
    assert [type(e).__name__ for e in transcript.entries][-1] == "AbortMarker"
    assert not any(isinstance(e, ToolUseSummary) for e in transcript.entries)
