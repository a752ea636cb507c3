"""Inspect logs of coding agents run through Inspect's agent bridge (spec H-1, L-1, C-2):
the context the agent injects into its requests is no user prompt.

Fixtures (tests/fixtures/harnesses/inspect-bridged/):

- ``bridged_codex-claude-code-plain.eval``: written by the real ``inspect_ai`` 0.3.285 and
  its real agent bridge on ``mockllm`` (``bridged_recipe.py``): requests in Codex's and
  Claude Code's shapes sent through the ``openai`` and ``anthropic`` clients, and a plain
  eval whose user writes the same tags;
- ``codex-bridged_hand-made_real-log-shape.json``: a hand-made sample in the shape of a real
  log of Codex run by ``inspect_swe``'s ``codex_cli()`` (Inspect 0.3.239): system messages,
  ``<environment_context>`` as a user message of its own (an ``attachment://``), the prompt,
  the events ``sample_init`` and the model calls;
- ``inspect-swe-claude-code_slash-command.eval`` and ``inspect-swe-codex-cli_shell-command.eval``:
  written by the real ``inspect_ai`` 0.3.285 and its agent bridge (``inspect_swe_recipe.py``),
  each run by a solver Inspect records under ``inspect_swe``'s name for its agent: Claude Code
  2.1.332 running the sample's ``/review notes.txt`` as its slash command (the command's line
  and its expanded prompt, text blocks of one message); Codex after a shell command the user
  ran (``<user_shell_command>``), and Codex with base instructions the eval replaced.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import turnfold
from turnfold.corpus.discover import Item
from turnfold.corpus.summarize import log_items, summarize
from turnfold.formats.harnesses.inspect_bridged import (
    CLAUDE_CODE,
    CODEX,
    agent_of_solver,
    agent_of_system_prompt,
    read_user_message,
)
from turnfold.model import AssistantText, SystemNotice, ToolCall, Transcript, UserMessage

FIXTURES = Path(__file__).parents[1] / "fixtures" / "harnesses" / "inspect-bridged"
BRIDGED = FIXTURES / "bridged_codex-claude-code-plain.eval"
HAND_MADE = FIXTURES / "codex-bridged_hand-made_real-log-shape.json"
HAND_MADE_PROMPT = "Write a small TypeScript tool that checks NMEA sentence checksums."
SLASH_COMMAND = FIXTURES / "inspect-swe-claude-code_slash-command.eval"
SHELL_COMMAND = FIXTURES / "inspect-swe-codex-cli_shell-command.eval"


def prompts(transcript: Transcript) -> list[str]:
    return [e.text for e in transcript.entries if isinstance(e, UserMessage)]


def sample(name: str) -> Transcript:
    return turnfold.load(BRIDGED, sample=name, epoch=1)


def test_H1_codex_environment_and_agents_md_are_no_prompt_but_kept_with_it() -> None:
    transcript = sample("codex")
    assert prompts(transcript) == ["List the files in /root."]
    [prompt] = [e for e in transcript.entries if isinstance(e, UserMessage)]
    context = prompt.meta["injected_context"]
    assert [c.split("\n", 1)[0] for c in context] == [
        "# AGENTS.md instructions for /root",
        "<environment_context>",
    ]
    assert "<cwd>/root</cwd>" in context[1]
    # The rest of the run reads as before: the call Codex ran and its output, then the answer.
    [call] = transcript.tool_calls()
    assert (call.name, call.status) == ("exec_command", "success")
    assert call.result is not None
    assert "notes.txt" in (call.result.text or "")
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_H1_claude_code_system_reminders_are_no_prompt_nor_text_of_it() -> None:
    transcript = sample("claude_code")
    assert prompts(transcript) == ["Count the lines of notes.txt."]
    [prompt] = [e for e in transcript.entries if isinstance(e, UserMessage)]
    [context] = prompt.meta["injected_context"]
    assert context.startswith("<system-reminder>\nAs you answer the user's questions")
    # The reminder sent beside the tool result came with no prompt: left out, as Claude Code's
    # own reader leaves it out, and said so in the accounting.
    shown = json.dumps(transcript.dump())
    assert "TodoWrite tool hasn't been used" not in shown
    assert not [e for e in transcript.entries if isinstance(e, SystemNotice)]
    assert transcript.accounting is not None
    assert transcript.accounting.counts["injected context"] == {"ignored": 1}
    assert transcript.accounting.unaccounted == []
    [call] = transcript.tool_calls()
    assert (call.name, call.status, call.result.text if call.result else None) == (
        "Bash",
        "success",
        "3 notes.txt",
    )


def test_H1_a_plain_eval_whose_user_writes_the_tags_keeps_them() -> None:
    transcript = sample("plain")
    assert prompts(transcript) == [
        "<environment_context>\n  <cwd>/srv</cwd>\n</environment_context>",
        "<system-reminder>\nkeep this\n</system-reminder>\nWhat do these two tags mean?",
    ]
    assert all("injected_context" not in e.meta for e in transcript.entries)


def test_C2_a_bridged_agents_title_is_its_prompt() -> None:
    rows = [summarize(item) for item in log_items(Item(key=str(BRIDGED), path=str(BRIDGED)))]
    titles = {row["sample"]: row["title"] for row in rows if row["error"] is None}
    assert titles == {
        "codex/1": "List the files in /root.",
        "claude_code/1": "Count the lines of notes.txt.",
        "plain/1": "<environment_context> <cwd>/srv</cwd> </environment_context>",
    }


def test_H1_a_real_codex_log_shows_the_prompt_once_with_its_environment() -> None:
    """The real log's shape (hand-made): ``sample_init`` gives the prompt, and Codex's first
    request relays it again after its ``<environment_context>`` message, with new ids."""
    transcript = turnfold.load(HAND_MADE)
    assert prompts(transcript) == [HAND_MADE_PROMPT]
    [prompt] = [e for e in transcript.entries if isinstance(e, UserMessage)]
    [context] = prompt.meta["injected_context"]
    assert context.startswith("<environment_context>")
    assert "<cwd>/root</cwd>" in context
    assert transcript.metadata["system"].startswith("You are Codex, a coding agent")
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_C2_a_real_codex_log_read_from_its_messages_is_titled_by_its_prompt(
    tmp_path: Path,
) -> None:
    """Without events the sample's messages are read: their first user message is Codex's
    environment, which made the title XML."""
    log = json.loads(HAND_MADE.read_text(encoding="utf-8"))
    log["samples"][0]["events"] = []
    path = tmp_path / "messages-only.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    transcript = turnfold.load(path)
    assert prompts(transcript) == [HAND_MADE_PROMPT]
    assert transcript.entries[0].meta["injected_context"][0].startswith("<environment_context>")
    assert summarize(Item(key=str(path), path=str(path)))["title"] == HAND_MADE_PROMPT


@pytest.mark.parametrize(
    ("system", "agent"),
    [
        # Codex's base instructions, several models' (codex-rs prompt files).
        ("You are a coding agent running in the Codex CLI, a terminal-based coding assistant.",
         CODEX),
        ("You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI.",
         CODEX),
        ("You are Codex, a coding agent based on GPT-5. You and the user share the same "
         "workspace and collaborate to achieve the user's goals.\n\n# Personality", CODEX),
        # Claude Code's identity block, its Agent SDK form and a sub-agent's.
        ("You are Claude Code, Anthropic's official CLI for Claude.", CLAUDE_CODE),
        ("You are Claude Code, Anthropic's official CLI for Claude, running within the Claude "
         "Agent SDK.", CLAUDE_CODE),
        ("You are an agent for Claude Code, Anthropic's official CLI for Claude.", CLAUDE_CODE),
        # Claude Code 2.1.332 run with --print and no --append-system-prompt (inspect_swe's).
        ("You are a Claude agent, built on Anthropic's Claude Agent SDK.", CLAUDE_CODE),
        # Not an agent's: a plain eval's prompt, a Codex named past the first line, the
        # billing header alone.
        ("You are a helpful assistant.", None),
        ("Answer briefly.\nYou may mention Codex.", None),
        ("x-anthropic-billing-header: cc_version=2.1.0.a1b; cc_entrypoint=sdk-cli;", None),
    ],
)  # fmt: skip
def test_H1_the_agent_is_told_by_its_system_prompt(system: str, agent: str | None) -> None:
    assert agent_of_system_prompt(system) == agent


def test_H1_a_claude_code_slash_command_shows_as_the_command_its_expansion_as_context() -> None:
    """The sample's ``/review notes.txt``, which Claude Code ran as its slash command: the
    command's line and its expanded prompt come as text blocks of one message."""
    transcript = turnfold.load(SLASH_COMMAND, sample="command", epoch=1)
    [prompt] = [e for e in transcript.entries if isinstance(e, UserMessage)]
    assert (prompt.command, prompt.text) == ("/review", "notes.txt")
    reminder, expanded = prompt.meta["injected_context"]
    assert reminder.startswith("<system-reminder>\nAs you answer the user's questions")
    assert expanded == "Review notes.txt for typos. Count its lines first, then list each typo."
    assert "<command-" not in json.dumps([e.text for e in transcript.entries if hasattr(e, "text")])
    [call] = transcript.tool_calls()
    assert (call.name, call.status) == ("Bash", "success")
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_F14_a_codex_user_shell_command_shows_as_the_users_own_call() -> None:
    """``!cat notes.txt`` between two prompts: Codex's ``<user_shell_command>`` record is the
    user-initiated ``shell`` call the Codex reader shows, not prompt text."""
    transcript = turnfold.load(SHELL_COMMAND, sample="shell", epoch=1)
    assert prompts(transcript) == [
        "List the files in /root.",
        "Is every word in notes.txt spelled right?",
    ]
    shell = next(e for e in transcript.entries if isinstance(e, ToolCall) and e.user_initiated)
    assert (shell.name, shell.description, shell.status) == ("shell", "cat notes.txt", "success")
    assert shell.result is not None
    assert shell.result.text == "buy milk"
    assert (shell.duration_ms, shell.meta["exit_code"]) == (10.0, 0)
    assert shell.call_id.startswith("user_shell@")
    # The call comes where the user ran it: after the first answer, before the next prompt.
    at = transcript.entries.index(shell)
    before, after = transcript.entries[at - 1], transcript.entries[at + 1]
    assert isinstance(before, AssistantText)
    assert before.text == "There is one file: notes.txt."
    assert isinstance(after, UserMessage)
    assert after.text == "Is every word in notes.txt spelled right?"
    assert "<user_shell_command>" not in json.dumps(prompts(transcript))
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []


def test_H1_the_solver_names_the_agent_whose_system_prompt_does_not() -> None:
    """Base instructions the eval replaced name no agent; the solver Inspect records,
    ``inspect_swe/codex_cli``, does: Codex's context is still no prompt."""
    transcript = turnfold.load(SHELL_COMMAND, sample="own_instructions", epoch=1)
    assert agent_of_system_prompt(transcript.metadata["system"]) is None
    assert prompts(transcript) == ["List the files in /root by the house rules."]
    [prompt] = [e for e in transcript.entries if isinstance(e, UserMessage)]
    assert [c.split("\n", 1)[0] for c in prompt.meta["injected_context"]] == [
        "# AGENTS.md instructions for /root",
        "<environment_context>",
    ]


@pytest.mark.parametrize(
    ("header", "sample", "agent"),
    [
        ({"plan": {"steps": [{"solver": "inspect_swe/claude_code"}]}}, {}, CLAUDE_CODE),
        ({"eval": {"solver": "inspect_swe/codex_cli"}}, {}, CODEX),
        # inspect_swe's interactive agents, @agent(name="Claude Code") in its package.
        ({"plan": {"steps": [{"solver": "inspect_swe/Claude Code"}]}}, {}, CLAUDE_CODE),
        # A sample without its log's header: the solver span names it.
        ({}, {"events": [{"event": "span_begin", "type": "solver",
                          "name": "inspect_swe/codex_cli"}]}, CODEX),
        # Not surely one agent: another solver, or both agents.
        ({"plan": {"steps": [{"solver": "react"}]}}, {}, None),
        ({"plan": {"steps": [{"solver": "inspect_swe/claude_code"},
                             {"solver": "inspect_swe/codex_cli"}]}}, {}, None),
    ],
)  # fmt: skip
def test_H1_the_agent_is_told_by_its_solver(
    header: dict[str, object], sample: dict[str, object], agent: str | None
) -> None:
    assert agent_of_solver(header, sample) == agent


def test_H1_a_prompt_after_a_local_commands_output_is_no_expansion() -> None:
    """Claude Code's blocks read one by one: only the text right after a slash command's
    line is its expanded prompt; after a local command's output (the lines the Claude Code
    reader reads for ``/model``) the user's words are a prompt of their own."""
    read = read_user_message(
        CLAUDE_CODE,
        [
            "<command-name>/model</command-name>\n<command-message>model</command-message>\n"
            "<command-args></command-args>\n",
            "<local-command-stdout>Set model to opus</local-command-stdout>\n",
            "Now fix the failing test.",
        ],
        None,
    )
    assert [(type(e).__name__, e.text) for e in read.shown] == [
        ("UserMessage", ""),
        ("SystemNotice", "Set model to opus"),
        ("UserMessage", "Now fix the failing test."),
    ]
    assert read.injected == []
