"""The scenarios played on every pinned agent (Claude Code, Codex, Qwen Code, Gemini CLI, Cline,
OpenCode, GitHub Copilot CLI, Continue), and every truth check of :mod:`tests.agents.truth` on
what each wrote.

One test per (agent, scenario, check), so that a loader bug fails exactly the check it breaks.
The known loader bugs are strict xfails: each names its bug, and the fix that lands turns it into
a failure here, which is the reminder to delete its entry from :data:`LOADER_BUGS`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

from tests.agents.clis import AGENTS, Agent
from tests.agents.install import missing_cli
from tests.agents.netns import unavailable
from tests.agents.play import Play
from tests.agents.scenarios import SCENARIOS
from tests.agents.truth import CHECKS, Finding, check

pytestmark = pytest.mark.agents

#: (agent, scenario, check) → the loader bug that makes the check fail today.
LOADER_BUGS: dict[tuple[str, str, str], str] = {}

_FINDINGS: dict[tuple[str, str], list[Finding]] = {}


def _cases() -> Iterator[object]:
    for agent in AGENTS.values():
        for scenario in SCENARIOS.values():
            if not agent.plays(scenario):
                continue
            for name in CHECKS:
                if name in _not_played(agent):
                    continue
                reason = LOADER_BUGS.get((agent.name, scenario.name, name))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                yield pytest.param(
                    agent.name,
                    scenario.name,
                    name,
                    marks=marks,
                    id=f"{agent.name}-{scenario.name}-{name}",
                )


def _not_played(agent: Agent) -> set[str]:
    """The checks an agent gives nothing to: a resume it cannot make, a stream turnfold does
    not read."""
    skipped = set()
    if not agent.resumable:
        skipped.add("resume")
    if agent.stream is None:
        skipped.add("stream")
    return skipped


def _played(plays: dict[tuple[str, str], Play], agent: str, scenario: str) -> Play:
    played = plays[agent, scenario]
    if played.problems():
        pytest.skip(f"the play itself failed (see test_play[{agent}-{scenario}])")
    return played


@pytest.mark.parametrize(
    ("agent", "scenario"),
    [
        pytest.param(a.name, s.name, id=f"{a.name}-{s.name}")
        for a in AGENTS.values()
        for s in SCENARIOS.values()
        if a.plays(s)
    ],
)
def test_play(plays: dict[tuple[str, str], Play], agent: str, scenario: str) -> None:
    """The CLI ran the whole script, offline, and wrote a session: else nothing below means much."""
    played = plays[agent, scenario]
    assert not played.problems(), "\n".join(played.problems())
    if played.retried:
        warnings.warn(
            f"{agent} {scenario}: first play failed, second passed: " + "; ".join(played.retried),
            stacklevel=1,
        )


@pytest.mark.parametrize(("agent", "scenario", "name"), list(_cases()))
def test_truth(plays: dict[tuple[str, str], Play], agent: str, scenario: str, name: str) -> None:
    """One truth check of one scenario on one agent (see :data:`tests.agents.truth.CHECKS`)."""
    played = _played(plays, agent, scenario)
    if (agent, scenario) not in _FINDINGS:
        _FINDINGS[agent, scenario] = check(played)
    found = [str(f) for f in _FINDINGS[agent, scenario] if f.check == name]
    assert not found, f"{CHECKS[name]}:\n" + "\n".join(found)


def test_loopback_only(plays: dict[tuple[str, str], Play]) -> None:
    """Every CLI ran in a network namespace with only 127.0.0.1 in it."""
    reason = unavailable()
    if reason is not None:
        pytest.skip(
            f"no loopback-only namespace here ({reason}); the CLIs ran with only their"
            " own offline settings"
        )
    ran = list(plays.values())
    if not ran:
        pytest.skip("no agent ran")
    assert all(p.isolated for p in ran)
    assert all(run.argv[0] == "nsenter" for p in ran for run in p.runs)


def test_some_agent_installed() -> None:
    """A reminder where none of the CLIs is installed (a developer's checkout): all skip."""
    missing = [missing_cli(name) for name in AGENTS]
    if all(missing):
        pytest.skip("; ".join(m for m in missing if m))
