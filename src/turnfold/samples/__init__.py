"""A sample transcript bundled with turnfold, for the demo notebook, the README and tests.

``demo-session.jsonl`` is a hand-written session in turnfold's own format: a failing test found,
fixed, verified by a command and a reviewer sub-agent, with fast-model labels and a memory write.
"""

from __future__ import annotations

from importlib import resources

from turnfold.formats import load
from turnfold.model import Transcript


def demo_session() -> Transcript:
    """The bundled demo session, loaded fresh on every call."""
    with (resources.files("turnfold") / "samples" / "demo-session.jsonl").open(
        encoding="utf-8"
    ) as stream:
        return load(stream)
