"""Coding agents Inspect ran through its agent bridge: what the agent sent its model besides
the user's prompt (spec H-1; L-1: a user message is what the user asked).

``inspect_swe``'s ``codex_cli()`` and ``claude_code()`` run the real agents; Inspect's (sandbox)
agent bridge (``inspect_ai/agent/_bridge``) takes each request the agent makes of its model
(OpenAI's Responses API for Codex, Anthropic's Messages API for Claude Code), turns it into
Inspect messages and makes the call, so the sample's model events hold the agent's own requests
and its ``messages`` the last of them. Codex's instructions and developer messages, and each of
Claude Code's system blocks, become system messages; the context the agent puts in user
messages stays there, where Inspect shows it as if the user had typed it:

- Codex: ``<environment_context>``, ``# AGENTS.md instructions`` / ``<user_instructions>`` and
  its other ``<snake_case>`` fragments, each a user message (or part) of its own before the
  prompt (as in its rollout: :func:`turnfold.formats.codex.is_injected_context`);
- Claude Code: ``<system-reminder>`` text blocks beside the prompt or a tool result, and the
  ``<command-…>``, ``<local-command-…>`` and other wrappers its reader reads as commands and
  notices (:mod:`turnfold.formats.claude_code`).

These are read as the agent's own reader reads them, with its own functions, and only where
the conversation is surely the agent's: the sample's solver is one of ``inspect_swe``'s agents
(:func:`agent_of_solver`, the name Inspect records for it), else its system prompt is the
agent's (:func:`agent_of_system_prompt`). A plain eval whose user writes such a tag keeps it as
written. What the agent injected is no prompt: it is kept in the ``injected_context`` meta of
the prompt it came with (:class:`AgentUserMessage`), and what came with none is left out as its
reader leaves it out. What the user did besides a prompt is shown as the agent's reader shows
it: a Claude Code slash command with its expanded prompt as the context it injected, a Codex
``<user_shell_command>`` as the user-initiated call it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from turnfold.model import Entry, UserMessage

CODEX = "codex"
CLAUDE_CODE = "claude_code"

#: How far into a system message the agent's identity is looked for: its opening sentence.
_OPENING = 300
#: Claude Code's identity sentences, in the main agent's prompt ("You are Claude Code,
#: Anthropic's official CLI for Claude.", "…, running within the Claude Agent SDK.") and in its
#: sub-agents' ("You are an agent for Claude Code, Anthropic's official CLI for Claude."); run
#: with ``--print`` and no ``--append-system-prompt``, as ``inspect_swe``'s ``claude_code()``
#: runs it when the sample has no system message, 2.1.332 says "You are a Claude agent, built
#: on Anthropic's Claude Agent SDK." (its identity block, chosen by ``isNonInteractive`` and
#: ``hasAppendSystemPrompt`` in the ``claude`` binary).
_CLAUDE_CODE_IDENTITIES = (
    "Anthropic's official CLI for Claude",
    "built on Anthropic's Claude Agent SDK",
)
#: ``inspect_swe``'s agents by the name Inspect records for the solver that ran them: the
#: registry name ``@agent`` gives each, ``inspect_swe/<name>`` (``registry_name`` in
#: ``inspect_ai/_util/registry.py``), whatever display name the eval gave it. ``claude_code``
#: and ``codex_cli`` run the agents' CLIs; ``interactive_claude_code`` and
#: ``interactive_codex_cli`` (``@agent(name="Claude Code")``, ``@agent(name="Codex CLI")``) run
#: them through their ACP adapters; all behind the sandbox agent bridge (inspect_swe's
#: ``_claude_code/claude_code.py``, ``_codex_cli/codex_cli.py``, ``acp/_agents/``).
_SOLVERS = {
    "inspect_swe/claude_code": CLAUDE_CODE,
    "inspect_swe/Claude Code": CLAUDE_CODE,
    "inspect_swe/codex_cli": CODEX,
    "inspect_swe/Codex CLI": CODEX,
}


def agent_of_solver(header: Mapping[str, Any], sample: Mapping[str, Any]) -> str | None:
    """The bridged coding agent the sample's solver is, or None: the surer sign, as an eval
    may replace the agent's system prompt.

    Inspect records the solver by its registry name in the log's plan (``plan.steps[].solver``),
    in ``eval.solver`` when the eval was given one, and as the name of the sample's ``solver``
    span (``span(name=…, type="solver")``, when the plan runs). A run whose solvers name no
    such agent, or both, is left to the system prompt.

    >>> agent_of_solver({"plan": {"steps": [{"solver": "inspect_swe/codex_cli"}]}}, {})
    'codex'
    >>> agent_of_solver({"eval": {"solver": "react"}}, {}) is None
    True
    """
    names: list[Any] = []
    plan = header.get("plan")
    steps = plan.get("steps") if isinstance(plan, Mapping) else None
    for step in steps if isinstance(steps, list) else []:
        names.append(step.get("solver") if isinstance(step, Mapping) else None)
    spec = header.get("eval")
    names.append((spec if isinstance(spec, Mapping) else header).get("solver"))
    events = sample.get("events")
    for event in events if isinstance(events, list) else []:
        solver = isinstance(event, Mapping) and event.get("type") == "solver"
        if solver and event.get("event") == "span_begin":
            names.append(event.get("name"))
    agents = {_SOLVERS[name] for name in names if isinstance(name, str) and name in _SOLVERS}
    return agents.pop() if len(agents) == 1 else None


def agent_of_system_prompt(text: str) -> str | None:
    """The bridged coding agent whose system prompt ``text`` is, or None.

    Codex's base instructions name it in their first line, whichever model's they are ("You are
    a coding agent running in the Codex CLI, …", "You are Codex, a coding agent based on
    GPT-5."); Claude Code's system blocks (one system message each) include its identity block.

    >>> agent_of_system_prompt("You are Codex, a coding agent based on GPT-5.\\n\\n# Personality")
    'codex'
    >>> agent_of_system_prompt("You are Claude Code, Anthropic's official CLI for Claude.")
    'claude_code'
    >>> agent_of_system_prompt("You are a helpful assistant.") is None
    True
    """
    opening = text.lstrip()[:_OPENING]
    if any(identity in opening for identity in _CLAUDE_CODE_IDENTITIES):
        return CLAUDE_CODE
    first_line = opening.split("\n", 1)[0]
    if first_line.startswith("You are") and "Codex" in first_line:
        return CODEX
    return None


@dataclass
class AgentUserMessage:
    """What one user message of a bridged agent's request is: what it shows (the prompt, a
    slash command, notices; nothing when all of it was context) and the context blocks the
    agent injected in it, verbatim."""

    shown: list[Entry] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)


def read_user_message(
    agent: str, texts: list[str], timestamp: str | None, message_id: str | None = None
) -> AgentUserMessage:
    """The user message of ``agent`` whose text parts are ``texts``, read as its reader reads it
    (``message_id``, the message's own id, names the calls it shows).

    >>> read = read_user_message(CODEX, ["<environment_context>\\n</environment_context>"], None)
    >>> read.shown, read.injected
    ([], ['<environment_context>\\n</environment_context>'])
    """
    if agent == CLAUDE_CODE:
        return _claude_code_message(texts, timestamp)
    return _codex_message(texts, timestamp, message_id)


def _codex_message(
    texts: list[str], timestamp: str | None, message_id: str | None
) -> AgentUserMessage:
    """A Codex user message: its parts that are context Codex injected apart, a
    ``<user_shell_command>`` the user-initiated call the Codex reader shows for it, the rest its
    prompt (joined as the Codex reader's ``prompt_of`` joins them)."""
    from turnfold.formats.codex import is_injected_context, user_shell_call, user_shell_command

    read = AgentUserMessage()
    kept: list[str] = []

    def prompt() -> None:
        text = "\n".join(t for t in kept if t)
        if text.strip():
            read.shown.append(UserMessage(text=text, timestamp=timestamp))
        kept.clear()

    shells = 0
    for text in texts:
        shell = user_shell_command(text)
        if shell is not None:
            prompt()  # what came before it, in order
            # The call's id: the message's (Codex writes each shell command as a message of its
            # own), numbered past the first; the Codex reader numbers by the rollout's line.
            call_id = f"user_shell@{message_id}" if message_id else ""
            call_id += f".{shells + 1}" if shells and call_id else ""
            read.shown.append(user_shell_call(*shell, call_id, timestamp, None))
            shells += 1
        elif is_injected_context(text):
            read.injected.append(text)
        else:
            kept.append(text)
    prompt()
    return read


def _claude_code_message(texts: list[str], timestamp: str | None) -> AgentUserMessage:
    """A Claude Code user message: each text block read as the Claude Code reader reads a
    line's text (:func:`~turnfold.formats.claude_code.user_text_entries`).

    Claude Code sends the lines it wrote in a row as one message, each line's text a block of
    its own (merging them, it ends the earlier block with a newline: ``Yws`` in the 2.1.332
    binary). So a slash command's line (``<command-message>``, ``<command-name>``,
    ``<command-args>``) comes with the line after it, the command's expanded prompt, which the
    reader leaves out (``isMeta``): here it is context the command injected, kept with the
    command. Prompt blocks in a row are one prompt, joined as the reader joins a line's blocks.
    """
    from turnfold.formats.claude_code import user_text_entries

    read = AgentUserMessage()
    prompt: list[str] = []

    def flush() -> None:
        if prompt:
            read.shown.append(UserMessage(text="\n\n".join(prompt), timestamp=timestamp))
            prompt.clear()

    expanding = False  # a slash command was read: its expanded prompt comes next
    for text in texts:
        if not text.strip():
            continue
        line = user_text_entries(text, timestamp)
        if line.kind == "prompt" and expanding:
            read.injected.append(text)  # the command's expanded prompt, as sent
        elif line.kind == "prompt":
            read.injected.extend(line.injected)  # reminders in the prompt's own block
            prompt.extend(e.text.strip() for e in line.shown if isinstance(e, UserMessage))
        elif line.kind == "context":
            read.injected.extend(line.injected)
        else:
            flush()
            read.shown.extend(line.shown)
        # Context between a command and its expansion leaves it next.
        expanding = line.kind == "command" or (expanding and line.kind == "context")
    flush()
    return read
