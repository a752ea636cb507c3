"""Fixtures of the real-agent tests: the installed CLIs, the loopback namespace, and each
scenario played once per agent (every check of it reads the same play)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.clis import AGENTS
from tests.agents.install import bin_dir, missing_cli
from tests.agents.netns import LoopbackNamespace, loopback_namespace
from tests.agents.play import Play, play_again
from tests.agents.scenarios import SCENARIOS


@pytest.fixture(scope="session")
def namespace() -> Iterator[LoopbackNamespace | None]:
    """The loopback-only network namespace every CLI runs in; None where the machine cannot
    make one (then only the agents' own settings keep them offline)."""
    with loopback_namespace() as made:
        yield made


@pytest.fixture(scope="session")
def plays(namespace: LoopbackNamespace | None) -> Iterator[dict[tuple[str, str], Play]]:
    """Scenario plays by (agent, scenario), made on first use and kept for the session."""
    root = Path(tempfile.mkdtemp(prefix="turnfold-agents-"))
    cache: dict[tuple[str, str], Play] = _PlayCache(root, namespace)
    yield cache
    if not os.environ.get("TURNFOLD_AGENTS_KEEP"):
        shutil.rmtree(root, ignore_errors=True)


class _PlayCache(dict[tuple[str, str], Play]):
    def __init__(self, root: Path, namespace: LoopbackNamespace | None) -> None:
        super().__init__()
        self.root, self.namespace = root, namespace

    def __missing__(self, key: tuple[str, str]) -> Play:
        agent, scenario = key
        reason = missing_cli(agent)
        if reason is not None:
            pytest.skip(reason)
        made = play_again(
            AGENTS[agent],
            SCENARIOS[scenario],
            bin_dir(),
            self.root / f"{agent}-{scenario}",
            self.namespace,
        )
        self[key] = made
        return made
