"""Tool categories and the one-line summary of a tool batch (spec F-1 … F-7).

>>> build_tool_summary([{"name": "Read", "description": "a.ts"},
...                     {"name": "Bash", "description": "npm test"},
...                     {"name": "Grep", "description": "TODO"}])
'Searched TODO, read a.ts, ran npm test'
>>> format_duration(123_000)
'2m 3s'
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Literal, TypeAlias, get_args

from turnfold import codec
from turnfold.i18n import plural, translate
from turnfold.model import MemoryOperation, ToolCall

ToolCategory: TypeAlias = Literal[
    "read", "edit", "write", "search", "list", "command", "agent", "other"
]
CATEGORIES: tuple[ToolCategory, ...] = get_args(ToolCategory)
#: Information-gathering tools; their batches collapse to one summary row (spec F-10).
COLLAPSIBLE: frozenset[ToolCategory] = frozenset({"read", "search", "list"})
#: Buckets appear in this order whatever the call order (spec F-4 rule 2).
CATEGORY_ORDER: tuple[ToolCategory, ...] = (
    "search", "read", "list", "command", "edit", "write", "agent", "other"
)  # fmt: skip
DESCRIPTION_INLINE_LIMIT = 3
DESCRIPTION_PREVIEW_COUNT = 2


@dataclass(frozen=True)
class Verbs:
    """The verbs put before a concrete description. English literals in every locale (F-2)."""

    past: str
    active: str


VERBS: dict[ToolCategory, Verbs] = {
    "read": Verbs("Read", "Reading"),
    "edit": Verbs("Edited", "Editing"),
    "write": Verbs("Wrote", "Writing"),
    "search": Verbs("Searched", "Searching"),
    "list": Verbs("Listed", "Listing"),
    "command": Verbs("Ran", "Running"),
    "agent": Verbs("Ran", "Running"),
    "other": Verbs("Used", "Using"),
}

# Exact, case-sensitive tool names (spec F-1). The first block is the seed's table; the rest are
# the names the supported transcript formats use. docs/tool-categories.md documents this table and
# tests/test_tools.py keeps the two in step.
BUILTIN_TOOL_CATEGORIES: dict[str, ToolCategory] = {
    # Seed (Qwen Code display names), including legacy names.
    "ReadFile": "read",
    "Read File": "read",
    "Read File(s)": "read",
    "ReadManyFiles": "read",
    "Edit": "edit",
    "NotebookEdit": "edit",
    "WriteFile": "write",
    "Grep": "search",
    "Glob": "search",
    "SearchFiles": "search",
    "FindFiles": "search",
    "ListFiles": "list",
    "Read Directory": "list",
    "ReadFolder": "list",
    "Shell": "command",
    "Shell Command": "command",
    "Agent": "agent",
    "Workflow": "agent",
    "SendMessage": "agent",
    "Task": "agent",
    "TodoWrite": "other",
    # Claude Code.
    "Read": "read",
    "NotebookRead": "read",
    "Write": "write",
    "MultiEdit": "edit",
    "LS": "list",
    "Bash": "command",
    "BashOutput": "command",
    # Codex CLI.
    "shell": "command",
    "shell_command": "command",
    "exec_command": "command",
    "write_stdin": "command",  # polls (or types into) a process exec_command left running
    "exec": "command",  # code mode: one JavaScript cell that runs commands, MCP tools, patches
    "exec wait": "command",  # code mode's wait on a yielded exec cell (the Codex loader's name)
    "local_shell": "command",
    "local_shell_call": "command",
    "container.exec": "command",
    "apply_patch": "edit",
    "view_image": "read",
    "view": "read",  # GitHub Copilot CLI: a file's lines, or a folder's entries
    "spawn_agent": "agent",
    "team_run_task": "agent",  # Cline 4: a teammate's run, nested as a sub-agent
    # Gemini CLI and Qwen Code internal names.
    "read_file": "read",
    "read_many_files": "read",
    "write_file": "write",
    "edit": "edit",
    "replace": "edit",
    "glob": "search",
    "grep": "search",
    "grep_search": "search",
    "search_file_content": "search",
    "list_directory": "list",
    "ls": "list",
    "run_shell_command": "command",
    "task": "agent",
    "agent": "agent",
    "delegate_to_agent": "agent",
    "invoke_agent": "agent",  # Gemini CLI's sub-agent tool; also GenAI traces' agent spans
    "codebase_investigator": "agent",
    # SWE-agent, mini-swe-agent and OpenHands (an editor command is named with its subcommand).
    "bash": "command",
    "open": "read",
    "goto": "read",
    "scroll_up": "read",
    "scroll_down": "read",
    "filemap": "read",
    "find_file": "search",
    "search_dir": "search",
    "search_file": "search",
    "insert": "edit",
    "create": "write",
    "str_replace_editor view": "read",
    "str_replace_editor create": "write",
    "str_replace_editor str_replace": "edit",
    "str_replace_editor insert": "edit",
    "str_replace_editor undo_edit": "edit",
    "execute_bash": "command",
    # OpenHands V1 (Software Agent SDK) tools.
    "terminal": "command",
    "file_editor view": "read",
    "file_editor create": "write",
    "file_editor str_replace": "edit",
    "file_editor insert": "edit",
    "file_editor undo_edit": "edit",
    "planning_file_editor view": "read",
    "planning_file_editor create": "write",
    "planning_file_editor str_replace": "edit",
    "planning_file_editor insert": "edit",
    "planning_file_editor undo_edit": "edit",
    "start_child_conversation": "agent",
    "inspect_image_with_vision": "read",
    "execute_ipython_cell": "command",
    "run": "command",
    "run_ipython": "command",
    "read": "read",
    "write": "write",
    "edit_file": "edit",
    "browse": "read",
    "web_read": "read",
    "browser": "other",
    "browse_interactive": "other",
    "delegate": "agent",
    # Inspect AI's standard tools (bash is above); think and web_search stay "other".
    "python": "command",
    "bash_session": "command",
    "text_editor": "edit",
    # Cline and Roo Code (read_file is above; apply_diff, insert_content, search_and_replace: Roo).
    "list_files": "list",
    "list_code_definition_names": "list",
    "search_files": "search",
    "execute_command": "command",
    "write_to_file": "write",
    "replace_in_file": "edit",
    "apply_diff": "edit",
    "insert_content": "edit",
    "search_and_replace": "edit",
    "browser_action": "other",
    "use_mcp_tool": "other",
    "new_task": "agent",
    # Cline 4 (the Cline SDK's DefaultToolNames; apply_patch and spawn_agent are above).
    "read_files": "read",
    "search_codebase": "search",
    "run_commands": "command",
    "editor": "edit",
    # Continue: the cn CLI (Read, Write, Edit, MultiEdit, Bash are above) and the extensions'
    # BuiltInToolNames (core/tools/builtIn.ts; read_file, ls are above).
    "List": "list",
    "Search": "search",
    "read_file_range": "read",
    "read_currently_open_file": "read",
    "edit_existing_file": "edit",
    "single_find_and_replace": "edit",
    "multi_edit": "edit",
    "create_new_file": "write",
    "run_terminal_command": "command",
    "file_glob_search": "search",
    "view_subdirectory": "list",
    "Subagent": "agent",  # the cn CLI's: description, prompt, subagent_name
    # Kimi Code and the Kimi CLI (ReadFile, WriteFile, Glob, Grep, Shell, Agent are above).
    "StrReplaceFile": "edit",
    "ReadMediaFile": "read",
}

#: Tools that read or write the agent's memory (spec F-11), by exact name.
BUILTIN_MEMORY_TOOLS: dict[str, MemoryOperation] = {
    "save_memory": "write",  # Gemini CLI, Qwen Code
}

_registered: dict[str, ToolCategory] = {}
_registered_patterns: dict[str, ToolCategory] = {}
_registered_memory: dict[str, MemoryOperation] = {}


def register_tool(
    name: str, category: ToolCategory, *, memory: MemoryOperation | None = None
) -> None:
    """Teach turnfold a tool name, for example an MCP tool.

    ``name`` is matched exactly, or as a shell-style pattern when it contains ``*``, ``?`` or
    ``[``. Registered names take precedence over the built-in table. ``memory`` marks the tool
    as a read or write of the agent's memory.

    >>> register_tool("mcp__github__get_*", "read")
    >>> tool_category("mcp__github__get_file")
    'read'
    >>> unregister_tool("mcp__github__get_*")
    """
    if category not in CATEGORIES:
        raise ValueError(f"unknown tool category {category!r}; expected one of {CATEGORIES}")
    if any(ch in name for ch in "*?["):
        _registered_patterns[name] = category
    else:
        _registered[name] = category
    if memory is not None:
        _registered_memory[name] = memory


def unregister_tool(name: str) -> None:
    """Forget a name or pattern given to :func:`register_tool` (built-in names stay)."""
    _registered.pop(name, None)
    _registered_patterns.pop(name, None)
    _registered_memory.pop(name, None)


def status_text(call: ToolCall, locale: str | None = "en") -> str:
    """A call's outcome in words (L-1, L-3). One of unknown outcome that has no result either
    is not said to have finished: nothing recorded that it ran (a list of messages that ends
    on a call, a run cut off before it).

    >>> status_text(ToolCall(status="unknown")), status_text(ToolCall(status="error"))
    ('Outcome not recorded', 'Failed')

    A call that answered while what it ran went on (``meta["still_running"]``: a poll of a
    background process, a code cell that yielded) has no outcome yet and says so, and says
    when the turn ended with it still running (``meta["running_at_turn_end"]``).
    """
    if call.status == "unknown" and call.meta.get("still_running") is True:
        if call.meta.get("running_at_turn_end") is True:
            return translate("status.still_running_at_turn_end", locale)
        return translate("status.still_running", locale)
    if call.status == "unknown" and call.result is None:
        return translate("status.unknown_no_result", locale)
    return translate(f"status.{call.status}", locale)


def display_name(name: str | None) -> str:
    """A tool's name as every view shows it: an MCP tool ``mcp__server__tool`` reads
    ``server · tool`` (issue 21.12), each further ``__`` level (a Codex app connector) one more
    ``·``; other names are shown as they are. Categories and registrations keep the full name.

    >>> display_name("mcp__Claude_Browser__javascript_tool"), display_name("Bash")
    ('Claude_Browser · javascript_tool', 'Bash')
    >>> display_name("mcp__codex_apps__github__fetch_pr")
    'codex_apps · github · fetch_pr'
    """
    if name and name.startswith("mcp__"):
        parts = name[len("mcp__") :].split("__")
        if len(parts) > 1 and all(parts):
            return " · ".join(parts)
    return name or ""


def tool_category(name: str | None) -> ToolCategory:
    """The category of a tool name; anything unknown is ``"other"``."""
    if not name:
        return "other"
    category = _registered.get(name) or BUILTIN_TOOL_CATEGORIES.get(name)
    if category:
        return category
    for pattern, pattern_category in _registered_patterns.items():
        if fnmatch.fnmatchcase(name, pattern):
            return pattern_category
    return "other"


def is_collapsible_tool(name: str | None) -> bool:
    """Whether a tool gathers information (read, search, list) and so folds into a summary."""
    return tool_category(name) in COLLAPSIBLE


def memory_operation(tool: ToolCall | Mapping[str, Any]) -> MemoryOperation | None:
    """``"read"`` or ``"write"`` when ``tool`` touches the agent's memory, else None.

    A loader's explicit ``memory`` field wins; otherwise the name decides.
    """
    explicit = _field(tool, "memory")
    if explicit in ("read", "write"):
        return explicit  # type: ignore[no-any-return]
    name = _field(tool, "name")
    if not isinstance(name, str):
        return None
    if name in _registered_memory:
        return _registered_memory[name]
    for pattern, operation in _registered_memory.items():
        if fnmatch.fnmatchcase(name, pattern):
            return operation
    return BUILTIN_MEMORY_TOOLS.get(name)


# --- F-3: safe descriptions -------------------------------------------------------------------

# Order matters: whole sequences first, then whatever ESC is left with the one character after it.
_ANSI = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC, ended by BEL (or ST)
    r"|\x1b[()]."  # charset designation ESC ( X / ESC ) X
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI with its parameters (digits, ';' and the rest of ECMA-48)
    r"|\x1b.",  # any other ESC + one character
    re.DOTALL,
)
# C0 controls, DEL, and C1 controls (8-bit forms of the same escapes).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean_text(raw: str) -> str:
    """Strip ANSI escape sequences and turn every control character into a space."""
    if raw.isprintable():  # no ESC, no control: most names and descriptions, in one C pass
        return raw
    return _CONTROL.sub(" ", _ANSI.sub("", raw))


def safe_description(raw: Any) -> str | None:
    """A tool description fit for a summary, or None (spec F-3).

    >>> safe_description("\\x1b[1mREADME.md\\x1b[0m")
    'README.md'
    >>> safe_description('{"file_path": "a.ts"}') is None   # the args blob an errored tool shows
    True
    >>> safe_description("[id].tsx")
    '[id].tsx'
    """
    if not isinstance(raw, str) or not raw:
        return None
    text = clean_text(raw).strip()
    if not text:
        return None
    if text[0] in "{[":
        try:
            parsed = codec.loads(text)  # a value too deep to read is refused, not raised
        except ValueError:
            return text
        if isinstance(parsed, (dict, list)):
            return None
    return text


# --- F-4, F-5: the one-line summary -------------------------------------------------------------


def _field(tool: Any, key: str) -> Any:
    if isinstance(tool, ToolCall):  # most often, and quicker to ask than the ABC below
        return getattr(tool, key, None)
    if isinstance(tool, Mapping):
        return tool.get(key)
    return getattr(tool, key, None)


def _count_phrase(category: ToolCategory, count: int, active: bool, locale: str) -> str:
    tense = "active" if active else "past"
    return plural(f"count.{category}.{tense}", count, locale)


def _bucket_part(
    category: ToolCategory, descriptions: list[str | None], active: bool, locale: str
) -> str:
    verb = VERBS[category].active if active else VERBS[category].past
    n = len(descriptions)
    if n <= DESCRIPTION_INLINE_LIMIT:
        shown = descriptions
        more = ""
    else:
        shown = descriptions[:DESCRIPTION_PREVIEW_COUNT]
        more = ", " + plural("summary.more", n - DESCRIPTION_PREVIEW_COUNT, locale)
    if all(shown):
        return f"{verb} {', '.join(d for d in shown if d)}{more}"
    return _count_phrase(category, n, active, locale)


def build_tool_summary(
    tools: Iterable[ToolCall | Mapping[str, Any]], active: bool = False, locale: str = "en"
) -> str:
    """One human sentence for a batch of tools (spec F-4).

    ``tools`` are :class:`~turnfold.model.ToolCall` objects or mappings with ``name`` and
    ``description``. ``active`` picks the progressive verbs; the caller adds the ``…`` (F-5).
    """
    buckets: dict[ToolCategory, list[str | None]] = {}
    for tool in tools:
        category = tool_category(_field(tool, "name"))
        buckets.setdefault(category, []).append(safe_description(_field(tool, "description")))
    parts = [
        _bucket_part(category, buckets[category], active, locale)
        for category in CATEGORY_ORDER
        if category in buckets
    ]
    # Only the first character of later parts is lowered: "Read a.ts, ran npm test".
    return ", ".join(parts[:1] + [part[:1].lower() + part[1:] for part in parts[1:]])


# --- F-6: formatting helpers ----------------------------------------------------------------------


#: Past this, a duration (ms) or a count is shown whole, without Decimal's rounding, whose 28
#: digits it would overflow: no run lasts 31,000 years or holds 10^15 tokens.
_LARGE = 1e15


def _round_half_up(value: Decimal, places: str = "1") -> Decimal:
    return value.quantize(Decimal(places), rounding=ROUND_HALF_UP)


def format_duration(ms: float, hide_trailing_zeros: bool = False) -> str:
    """A compact duration: ``500ms``, ``12.3s``, ``2m 3s``, ``25h 1m 1s`` (spec F-6).

    >>> format_duration(5000), format_duration(5000, hide_trailing_zeros=True)
    ('5.0s', '5s')
    """
    if not ms or ms != ms or ms <= 0:  # zero, NaN or negative
        return "0s"
    if ms >= _LARGE:  # a broken record's duration (or infinity): past what Decimal rounds
        return f"{int(ms // 3_600_000)}h" if ms != math.inf else "∞"
    exact = Decimal(ms)
    whole_ms = _round_half_up(exact)
    if whole_ms == 0:  # recorded, and shorter than a millisecond: not "0ms", as if it were none
        return "<1ms"
    if whole_ms < 1000:
        return f"{whole_ms}ms"
    tenths = _round_half_up(exact / 1000, "0.1")
    if tenths < 60:
        text = f"{tenths:.1f}"
        if hide_trailing_zeros and text.endswith(".0"):
            text = text[:-2]
        return f"{text}s"
    total = max(int(exact // 1000), 60)  # 59.95 s rounds to 60.0 s and reads as 1m
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = [f"{v}{unit}" for v, unit in ((hours, "h"), (minutes, "m"), (seconds, "s")) if v]
    return " ".join(parts)


def format_token_count(n: float) -> str:
    """``999``, ``2.4k``, ``15k`` (spec F-6)."""
    if n != n or n == -math.inf:  # NaN from a broken record: no count to show
        return "?"
    if n >= _LARGE:
        return f"{int(n // 1000)}k" if n != math.inf else "∞"
    exact = Decimal(n)
    if exact < 1000:
        return str(_round_half_up(exact))
    if exact < 10_000:
        return f"{_round_half_up(exact / 1000, '0.1'):.1f}k"
    return f"{int(exact // 1000)}k"


# --- F-7: the sub-agent line ------------------------------------------------------------------

_SUBAGENT_GLYPHS = {"success": "✔", "error": "✖", "cancelled": "✖"}


def format_subagent_line(call: ToolCall, locale: str = "en") -> str:
    """The one-line account of a finished sub-agent call (spec F-7).

    ``✔ researcher: investigate import order · 5 tools · 12s · 2.4k tokens``. A call whose outcome
    is unknown or still running gets a neutral ``•`` glyph: it is neither a success nor a failure.
    """
    agent = call.subagent
    name = clean_text(agent.name).strip() if agent and agent.name else ""
    task_source = (agent.task if agent else None) or call.description
    task = clean_text(task_source).strip() if task_source else ""
    glyph = _SUBAGENT_GLYPHS.get(call.status, "•")
    head = f"{name}: {task}" if name and task else name or task or display_name(call.name)
    parts = [f"{glyph} {head}"]
    if agent and agent.steps_missing and agent.transcript is None:
        # A count of steps that open onto nothing would mislead (issue 21.14).
        parts.append(translate("subagent.not_recorded", locale))
    elif agent and agent.tool_count is not None:
        parts.append(plural("subagent.tools", agent.tool_count, locale))
    nested = _nested_subagents(call)
    if nested:
        parts.append(plural("subagent.subagents", nested, locale))
    duration = agent.duration_ms if agent and agent.duration_ms is not None else None
    if duration is None:
        duration = call.recorded_duration_ms
    if duration is not None:
        parts.append(format_duration(duration, hide_trailing_zeros=True))
    if agent and agent.output_tokens:
        parts.append(
            translate("subagent.tokens", locale, tokens=format_token_count(agent.output_tokens))
        )
    if call.status in ("error", "cancelled") and agent and agent.reason:
        parts.append(clean_text(agent.reason).strip())
    return " · ".join(parts)


def _nested_subagents(call: ToolCall) -> int:
    """Sub-agents this sub-agent spawned: the recorded count, else counted in its transcript."""
    agent = call.subagent
    if agent is None:
        return 0
    if agent.subagent_count is not None:
        return agent.subagent_count
    if agent.transcript is None:
        return 0
    return sum(1 for c in agent.transcript.tool_calls() if tool_category(c.name) == "agent")
