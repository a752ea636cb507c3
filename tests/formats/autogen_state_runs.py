"""AutoGen AgentChat runs whose state is saved (``await agent.save_state()``,
``await team.save_state()``, dumped with ``json.dump`` as AutoGen's "Managing State" guide
does), offline on AutoGen's own ``ReplayChatCompletionClient`` (``autogen_runs.py``), for the
"autogen-state" tests and fixtures.

``agent``: ``calc`` runs two tasks: the first calls ``add`` (succeeds), then ``explode``
(raises: AutoGen records ``is_error=True``) and answers; the second answers at once. ``team``:
the ``Swarm`` of ``autogen_runs.team()`` (``triage`` calls ``add``, hands off to ``writer``,
which answers).

``python -m tests.formats.autogen_state_runs`` rewrites the files under
``tests/fixtures/frameworks/autogen/``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.formats.autogen_runs import (
    FIXTURES,
    TEAM_PROMPT,
    _calls,
    _client,
    _text,
    add,
    explode,
    in_thread,
    team,
)

PROMPTS = ("Add 1 and 2, then explode y.", "And now?")
ANSWERS = ("1+2=3; explode failed.", "Still 3.")


def agent() -> Any:
    from autogen_agentchat.agents import AssistantAgent

    client = _client([
        _calls(1, ("call_1", "add", '{"a": 1, "b": 2}'), thought="First add."),
        _calls(2, ("call_2", "explode", '{"x": "y"}')),
        _text(3, ANSWERS[0]),
        _text(4, ANSWERS[1]),
    ])  # fmt: skip
    return AssistantAgent("calc", model_client=client, tools=[add, explode],
                          system_message="You are terse.", max_tool_iterations=5)  # fmt: skip


async def _agent_run() -> tuple[list[Any], dict[str, Any]]:
    calc = agent()
    results = [await calc.run(task=prompt) for prompt in PROMPTS]
    return results, dict(await calc.save_state())


async def _team_run() -> tuple[Any, dict[str, Any]]:
    swarm = team()
    result = await swarm.run(task=TEAM_PROMPT)
    return result, dict(await swarm.save_state())


def agent_run() -> tuple[list[Any], dict[str, Any]]:
    """The agent's two ``TaskResult``\\s and its saved state."""
    return in_thread(_agent_run())


def team_run() -> tuple[Any, dict[str, Any]]:
    """The team's ``TaskResult`` and its saved state."""
    return in_thread(_team_run())


def main() -> None:
    from tests.formats.autogen_runs import version

    _, state = agent_run()
    path = FIXTURES / f"autogen_v{version()}_save-state_agent.json"
    path.write_text(json.dumps(state, indent=1) + "\n", encoding="utf-8")
    _, state = team_run()
    path = FIXTURES / f"autogen_v{version()}_save-state_swarm.json"
    path.write_text(json.dumps(state, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
