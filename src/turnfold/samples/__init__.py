"""Sample transcripts bundled with turnfold, for the notebooks, the README and tests.

``demo-session.jsonl`` is a hand-written session in turnfold's own format: a failing test found,
fixed, verified by a command and a reviewer sub-agent, with fast-model labels and a memory write.
``claude-code-session.jsonl`` is a real Claude Code session (see ``SOURCES.md`` beside it).
"""

from __future__ import annotations

from importlib import resources

from turnfold.formats import load
from turnfold.model import Transcript


def _load(name: str) -> Transcript:
    with (resources.files("turnfold") / "samples" / name).open("rb") as stream:
        return load(stream)


def demo_session() -> Transcript:
    """The bundled demo session, loaded fresh on every call."""
    return _load("demo-session.jsonl")


def claude_code_session() -> Transcript:
    """A real Claude Code session (v1.0.108, MIT-licensed, see SOURCES.md), loaded fresh."""
    return _load("claude-code-session.jsonl")
