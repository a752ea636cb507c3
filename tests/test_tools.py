"""Tool categories, safe descriptions, the one-line summary and the formatters (spec F-1 … F-7)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import turnfold
from turnfold.model import SubAgent, ToolCall, Transcript
from turnfold.tools import (
    BUILTIN_TOOL_CATEGORIES,
    CATEGORIES,
    CATEGORY_ORDER,
    COLLAPSIBLE,
    build_tool_summary,
    format_duration,
    format_subagent_line,
    format_token_count,
    is_collapsible_tool,
    memory_operation,
    register_tool,
    safe_description,
    tool_category,
    unregister_tool,
)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "tool-categories.md"


def tool(name: str, description: str | None = None, status: str = "success") -> dict[str, object]:
    return {"name": name, "description": description, "status": status}


# --- F-1 ----------------------------------------------------------------------------------------

SEED_TABLE = [
    ("ReadFile", "read"),
    ("Read File", "read"),
    ("Read File(s)", "read"),
    ("Edit", "edit"),
    ("NotebookEdit", "edit"),
    ("WriteFile", "write"),
    ("Grep", "search"),
    ("Glob", "search"),
    ("ListFiles", "list"),
    ("Read Directory", "list"),
    ("Shell", "command"),
    ("Shell Command", "command"),
    ("Agent", "agent"),
    ("Workflow", "agent"),
    ("SendMessage", "agent"),
    ("SearchFiles", "search"),
    ("FindFiles", "search"),
    ("ReadFolder", "list"),
    ("Task", "agent"),
    ("TodoWrite", "other"),
]

FORMAT_TABLE = [
    # Claude Code
    ("Read", "read"),
    ("Write", "write"),
    ("MultiEdit", "edit"),
    ("LS", "list"),
    ("Bash", "command"),
    ("WebFetch", "other"),
    # Codex CLI
    ("shell", "command"),
    ("shell_command", "command"),
    ("exec_command", "command"),
    ("apply_patch", "edit"),
    ("update_plan", "other"),
    # Gemini CLI / Qwen Code
    ("read_file", "read"),
    ("read_many_files", "read"),
    ("run_shell_command", "command"),
    ("grep_search", "search"),
    ("search_file_content", "search"),
    ("glob", "search"),
    ("list_directory", "list"),
    ("write_file", "write"),
    ("replace", "edit"),
    ("write_todos", "other"),
    ("save_memory", "other"),
]


@pytest.mark.parametrize(("name", "category"), SEED_TABLE + FORMAT_TABLE)
def test_F1_tool_category_table(name: str, category: str) -> None:
    assert tool_category(name) == category
    assert is_collapsible_tool(name) is (category in {"read", "search", "list"})


@pytest.mark.parametrize(
    "name", ["readfile", "READFILE", "grep", "bash", "Readfile", " Read", "Read ", "", None]
)
def test_F1_matching_is_exact_and_case_sensitive(name: str | None) -> None:
    # "grep" is Gemini's internal name and "bash" the shell tool of SWE-agent and mini-swe-agent;
    # they map on their own, the others match nothing.
    expected = {"grep": "search", "bash": "command"}.get(name or "", "other")
    assert tool_category(name) == expected


def test_F1_collapsible_set_and_categories() -> None:
    assert frozenset({"read", "search", "list"}) == COLLAPSIBLE
    assert set(CATEGORIES) == set(CATEGORY_ORDER)
    assert len(CATEGORIES) == 8


def test_F1_register_exact_name_and_pattern() -> None:
    assert tool_category("mcp__github__get_file") == "other"
    register_tool("mcp__github__get_file", "read")
    register_tool("mcp__fs__list_*", "list")
    try:
        assert tool_category("mcp__github__get_file") == "read"
        assert is_collapsible_tool("mcp__fs__list_dirs")
        assert tool_category("mcp__fs__write") == "other"
    finally:
        unregister_tool("mcp__github__get_file")
        unregister_tool("mcp__fs__list_*")
    assert tool_category("mcp__github__get_file") == "other"
    assert tool_category("mcp__fs__list_dirs") == "other"


def test_F1_registration_overrides_builtin_and_unregister_restores_it() -> None:
    register_tool("Bash", "other")
    try:
        assert tool_category("Bash") == "other"
    finally:
        unregister_tool("Bash")
    assert tool_category("Bash") == "command"


def test_F1_register_rejects_unknown_category() -> None:
    with pytest.raises(ValueError, match="unknown tool category"):
        register_tool("x", "fly")  # type: ignore[arg-type]


def test_F1_documented_table_matches_code() -> None:
    rows = re.findall(r"^\| `([^`]+)` \| (\w+) \|", DOCS.read_text("utf-8"), flags=re.M)
    assert dict(rows) == BUILTIN_TOOL_CATEGORIES
    assert len(rows) == len(BUILTIN_TOOL_CATEGORIES)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (ToolCall(name="save_memory"), "write"),
        (ToolCall(name="Read"), None),
        (ToolCall(name="Read", memory="read"), "read"),
        ({"name": "save_memory"}, "write"),
        ({"name": None}, None),
    ],
)
def test_F11_memory_operation(call: ToolCall | dict[str, object], expected: str | None) -> None:
    assert memory_operation(call) == expected


# --- F-3 ----------------------------------------------------------------------------------------

SAFE_DESCRIPTION_CASES = [
    (None, None),
    ("", None),
    ("   ", None),
    (42, None),
    ("a.ts", "a.ts"),
    ("  a.ts  ", "a.ts"),
    ("[id].tsx", "[id].tsx"),
    ("{draft}.md", "{draft}.md"),
    ("[1, 2", "[1, 2"),
    ("{not json", "{not json"),
    ('{"file_path": "a.ts"}', None),
    ('  {"command": ["ls"]}  ', None),
    ("[]", None),
    ("{}", None),
    ('["a", "b"]', None),
    ("[1] and more", "[1] and more"),
    ('"quoted"', '"quoted"'),
    ("\x1b[31mred\x1b[0m", "red"),
    ("\x1b[1;32;40mbold\x1b[m", "bold"),
    ("\x1b]0;title\x07name", "name"),
    ("\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("\x1b(Bascii\x1b)0", "ascii"),
    ("\x1bMreverse", "reverse"),
    ("\x1b[?25lhidden", "hidden"),
    ("a\tb\nc", "a b c"),
    ("a\x00b\x7fc", "a b c"),
    ("tail\x1b", "tail"),
    ("\x1b[31m\x1b[0m", None),
    ("\x1b[31m{}\x1b[0m", None),
    ("读取 配置.json", "读取 配置.json"),
    ("\u200bzero-width stays", "\u200bzero-width stays"),
]


@pytest.mark.parametrize(("raw", "expected"), SAFE_DESCRIPTION_CASES)
def test_F3_safe_description(raw: object, expected: str | None) -> None:
    assert safe_description(raw) == expected


@given(st.one_of(st.none(), st.text(), st.text(alphabet=st.characters(max_codepoint=0x9F))))
def test_F3_safe_description_properties(raw: str | None) -> None:
    cleaned = safe_description(raw)
    if cleaned is None:
        return
    assert cleaned
    assert "\x1b" not in cleaned
    assert not any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in cleaned)
    assert cleaned == cleaned.strip()
    assert safe_description(cleaned) == cleaned


@given(
    st.lists(
        st.one_of(
            st.text(),
            st.sampled_from(["\x1b[", "\x1b]", "\x07", "\x1b(", "\x1b", "{", "[", "]", "}"]),
        ),
        max_size=12,
    ).map("".join)
)
def test_F3_safe_description_never_raises_on_escape_soup(raw: str) -> None:
    cleaned = safe_description(raw)
    assert cleaned is None or ("\x1b" not in cleaned and safe_description(cleaned) == cleaned)


# --- F-2, F-4, F-5 ------------------------------------------------------------------------------

SUMMARY_CASES = [
    ("empty", [], False, ""),
    ("one with description", [tool("Read", "a.ts")], False, "Read a.ts"),
    ("one without description", [tool("Read")], False, "Read 1 file"),
    ("one with JSON blob", [tool("Read", '{"file_path":"a.ts"}')], False, "Read 1 file"),
    ("two", [tool("Read", "a.ts"), tool("Read", "b.ts")], False, "Read a.ts, b.ts"),
    (
        "three",
        [tool("Read", "a.ts"), tool("Read", "b.ts"), tool("Read", "c.ts")],
        False,
        "Read a.ts, b.ts, c.ts",
    ),
    (
        "three, one missing",
        [tool("Read", "a.ts"), tool("Read"), tool("Read", "c.ts")],
        False,
        "Read 3 files",
    ),
    (
        "four",
        [tool("Read", f"{c}.ts") for c in "abcd"],
        False,
        "Read a.ts, b.ts, ... and 2 more",
    ),
    (
        "five, later ones unchecked",
        [
            tool("Read", "a.ts"),
            tool("Read", "b.ts"),
            tool("Read"),
            tool("Read", "{}"),
            tool("Read"),
        ],
        False,
        "Read a.ts, b.ts, ... and 3 more",
    ),
    (
        "four, second missing",
        [tool("Read", "a.ts"), tool("Read"), tool("Read", "c.ts"), tool("Read", "d.ts")],
        False,
        "Read 4 files",
    ),
    (
        "mixed in call order edit, command, read",
        [tool("Edit", "b.ts"), tool("Bash", "npm test"), tool("Read", "a.ts")],
        False,
        "Read a.ts, ran npm test, edited b.ts",
    ),
    (
        "search before list",
        [tool("LS", "/src"), tool("Grep", "pattern")],
        False,
        "Searched pattern, listed /src",
    ),
    ("other", [tool("mystery", "something")], False, "Used something"),
    (
        "all eight categories",
        [
            tool("mystery"),
            tool("Task"),
            tool("Write"),
            tool("Edit"),
            tool("Bash"),
            tool("LS"),
            tool("Read"),
            tool("Grep"),
        ],
        False,
        "Searched 1 pattern, read 1 file, listed 1 directory, ran 1 command, edited 1 file, "
        "wrote 1 file, ran 1 agent, used 1 tool",
    ),
    (
        "plural count phrases",
        [tool("Grep"), tool("Grep"), tool("LS"), tool("LS"), tool("Bash"), tool("Bash")],
        False,
        "Searched 2 patterns, listed 2 directories, ran 2 commands",
    ),
    (
        "agents and others",
        [tool("Task"), tool("Task"), tool("x"), tool("y")],
        False,
        "Ran 2 agents, used 2 tools",
    ),
    ("active one", [tool("Read", "a.ts", "executing")], True, "Reading a.ts"),
    ("active count", [tool("Read"), tool("Read")], True, "Reading 2 files"),
    (
        "active mixed",
        [tool("Bash", "make"), tool("Read", "a.ts"), tool("Task")],
        True,
        "Reading a.ts, running make, running 1 agent",
    ),
    (
        "active every category",
        [tool("Edit"), tool("Write"), tool("Grep"), tool("LS"), tool("x")],
        True,
        "Searching 1 pattern, listing 1 directory, editing 1 file, writing 1 file, using 1 tool",
    ),
    (
        "only the first character is lowered",
        [tool("Read", "a.ts"), tool("Bash", "NPM TEST")],
        False,
        "Read a.ts, ran NPM TEST",
    ),
    (
        "CJK descriptions",
        [tool("Read", "说明.md"), tool("Bash", "运行测试")],
        False,
        "Read 说明.md, ran 运行测试",
    ),
    (
        "ANSI in descriptions is cleaned",
        [tool("Bash", "\x1b[32mnpm test\x1b[0m")],
        False,
        "Ran npm test",
    ),
]


@pytest.mark.parametrize(
    ("tools", "active", "expected"),
    [case[1:] for case in SUMMARY_CASES],
    ids=[case[0] for case in SUMMARY_CASES],
)
def test_F4_build_tool_summary(tools: list[dict[str, object]], active: bool, expected: str) -> None:
    assert build_tool_summary(tools, active=active) == expected


def test_F4_accepts_model_objects_and_mappings_alike() -> None:
    calls = [ToolCall(name="Read", description="a.ts"), ToolCall(name="Bash", description="ls")]
    mappings = [{"name": "Read", "description": "a.ts"}, {"name": "Bash", "description": "ls"}]
    assert build_tool_summary(calls) == build_tool_summary(mappings) == "Read a.ts, ran ls"


def test_F4_accepts_any_iterable_and_does_not_modify_input() -> None:
    tools = [tool("Read", "a.ts"), tool("Read", "b.ts")]
    snapshot = [dict(t) for t in tools]
    assert build_tool_summary(iter(tools)) == "Read a.ts, b.ts"
    assert tools == snapshot


def test_F5_summary_has_no_ellipsis_of_its_own() -> None:
    assert not build_tool_summary([tool("Read", "a.ts", "executing")], active=True).endswith("…")


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Read", "Grep", "LS", "Bash", "Edit", "Write", "Task", "x"]),
            st.one_of(st.none(), st.sampled_from(["a.ts", "npm test", '{"a":1}', "  ", "b"])),
        ),
        max_size=9,
    ),
    st.permutations(CATEGORY_ORDER),
)
def test_F4_bucket_order_ignores_call_order(
    pairs: list[tuple[str, str | None]], order: list[str]
) -> None:
    tools = [tool(name, desc) for name, desc in pairs]
    # Any reordering that keeps the call order inside each category gives the same sentence.
    regrouped = sorted(tools, key=lambda t: order.index(tool_category(str(t["name"]))))
    summary = build_tool_summary(tools)
    assert build_tool_summary(regrouped) == summary
    assert (summary == "") == (not tools)
    present = {tool_category(str(t["name"])) for t in tools}
    assert len(summary.split(", ")) >= len(present)


@pytest.mark.parametrize(
    ("tools", "active", "expected"),
    [
        ([tool("Read"), tool("Read"), tool("Read")], False, "读取了 3 个文件"),
        ([tool("Read")], False, "读取了 1 个文件"),
        ([tool("Read"), tool("Bash")], True, "正在读取 1 个文件, 正在运行 1 条命令"),
        ([tool("Read", "a.ts"), tool("Bash")], False, "Read a.ts, 运行了 1 条命令"),
        ([tool("Grep"), tool("LS"), tool("Edit"), tool("Write")], False,
         "搜索了 1 个模式, 列出了 1 个目录, 编辑了 1 个文件, 写入了 1 个文件"),
        ([tool("Task"), tool("x")], False, "运行了 1 个代理, 使用了 1 个工具"),
    ],
)  # fmt: skip
def test_F2_chinese_phrases_and_english_verbs(
    tools: list[dict[str, object]], active: bool, expected: str
) -> None:
    assert build_tool_summary(tools, active=active, locale="zh") == expected


@pytest.mark.parametrize("locale", ["zh", "zh-CN", "zh_Hans", "ZH"])
def test_F2_locale_tags_resolve(locale: str) -> None:
    assert build_tool_summary([tool("Read")], locale=locale) == "读取了 1 个文件"


@pytest.mark.parametrize("locale", ["en", "en-US", "fr", "", "xx-YY"])
def test_F2_unknown_locales_fall_back_to_english(locale: str) -> None:
    assert build_tool_summary([tool("Read")], locale=locale) == "Read 1 file"


# --- F-6 ----------------------------------------------------------------------------------------

DURATIONS = [
    (0, False, "0s"),
    (-5, False, "0s"),
    (0.37, False, "<1ms"),
    (1, False, "1ms"),
    (500, False, "500ms"),
    (999, False, "999ms"),
    (1000, False, "1.0s"),
    (1000, True, "1s"),
    (5000, False, "5.0s"),
    (5000, True, "5s"),
    (12_300, False, "12.3s"),
    (12_300, True, "12.3s"),
    (12_250, False, "12.3s"),
    (59_900, False, "59.9s"),
    (59_950, False, "1m"),
    (59_999, False, "1m"),
    (60_000, False, "1m"),
    (61_000, False, "1m 1s"),
    (123_000, False, "2m 3s"),
    (123_999, False, "2m 3s"),
    (3_600_000, False, "1h"),
    (3_660_000, False, "1h 1m"),
    (3_601_000, False, "1h 1s"),
    (90_061_000, False, "25h 1m 1s"),
    # A broken record's duration: shown, past what Decimal's 28 digits round (it raised).
    (3.6e18, False, "1000000000000h"),
    (float("inf"), False, "∞"),
    (float("nan"), False, "0s"),
]


@pytest.mark.parametrize(("ms", "hide", "expected"), DURATIONS)
def test_F6_format_duration(ms: float, hide: bool, expected: str) -> None:
    assert format_duration(ms, hide_trailing_zeros=hide) == expected


TOKENS = [
    (0, "0"),
    (1, "1"),
    (999, "999"),
    (1000, "1.0k"),
    (2400, "2.4k"),
    (2450, "2.5k"),
    (9999, "10.0k"),
    (10_000, "10k"),
    (15_000, "15k"),
    (15_999, "15k"),
    (123_456, "123k"),
    (1_234_567, "1234k"),
    (10**30, "1000000000000000000000000000k"),
    (float("inf"), "∞"),
    (float("nan"), "?"),
]


@pytest.mark.parametrize(("n", "expected"), TOKENS)
def test_F6_format_token_count(n: int, expected: str) -> None:
    assert format_token_count(n) == expected


# --- F-7 ----------------------------------------------------------------------------------------


def subagent_call(status: str = "success", **agent: object) -> ToolCall:
    return ToolCall(name="Task", status=status, subagent=SubAgent(**agent))  # type: ignore[arg-type]


SUBAGENT_LINES = [
    (
        subagent_call(
            name="researcher",
            task="investigate import order",
            tool_count=5,
            duration_ms=12_000,
            output_tokens=2400,
        ),
        "✔ researcher: investigate import order · 5 tools · 12s · 2.4k tokens",
    ),
    (subagent_call(task="look around", tool_count=1), "✔ look around · 1 tool"),
    (subagent_call(name="planner", task="plan"), "✔ planner: plan"),
    (
        subagent_call("error", name="fixer", task="fix it", tool_count=3, reason="timed out"),
        "✖ fixer: fix it · 3 tools · timed out",
    ),
    (
        subagent_call("cancelled", task="t", reason="stopped by user"),
        "✖ t · stopped by user",
    ),
    (subagent_call(task="t", reason="ignored on success"), "✔ t"),
    (subagent_call(task="t", output_tokens=0, tool_count=0), "✔ t · 0 tools"),
    (subagent_call(task="t", subagent_count=2, duration_ms=61_500), "✔ t · 2 sub-agents · 1m 1s"),
    (subagent_call(task="t", subagent_count=1), "✔ t · 1 sub-agent"),
    (
        subagent_call(
            task="t",
            transcript=Transcript([ToolCall(name="Agent"), ToolCall(name="Read")]),
        ),
        "✔ t · 1 sub-agent",
    ),
    (subagent_call("unknown", task="t"), "• t"),
    (subagent_call(task="\x1b[31mred\x1b[0m task"), "✔ red task"),
    (
        ToolCall(
            name="Task",
            status="success",
            description="from the description",
            started_at="2026-01-01T00:00:00Z",
            ended_at="2026-01-01T00:00:05.500Z",
        ),
        "✔ from the description · 5.5s",
    ),
]


@pytest.mark.parametrize(("call", "expected"), SUBAGENT_LINES)
def test_F7_subagent_line(call: ToolCall, expected: str) -> None:
    assert format_subagent_line(call) == expected


def test_F7_subagent_line_in_chinese() -> None:
    call = subagent_call(name="r", task="t", tool_count=5, subagent_count=2, output_tokens=15_000)
    assert (
        format_subagent_line(call, locale="zh") == "✔ r: t · 5 个工具 · 2 个子代理 · 15k 个 token"
    )


def test_public_api_names() -> None:
    for name in (
        "load",
        "Transcript",
        "ToolCall",
        "tool_category",
        "is_collapsible_tool",
        "safe_description",
        "build_tool_summary",
        "format_duration",
        "format_token_count",
        "DisplaySettings",
        "normalize_settings",
        "register_tool",
    ):
        assert hasattr(turnfold, name), name
