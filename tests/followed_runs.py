"""A run followed to its end, for the tests that a followed run shows what the load of what the
framework kept shows (spec A-2; tests/test_follow_*.py, tests/test_langgraph_tasks_stream.py,
tests/formats/test_langgraph_leftovers.py)."""

from __future__ import annotations

import contextlib
from typing import Any

import turnfold
from turnfold.model import Transcript, UserMessage


def followed(events: Any, *raised: type[BaseException], **options: Any) -> Transcript:
    """``turnfold.follow(events, **options)`` consumed to its end, or to one of ``raised`` (the
    run's own error, which the follow says): its transcript."""
    run = turnfold.follow(events, display=False, **options)
    with contextlib.suppress(*raised):
        for _ in run:
            pass
    return run.transcript


def user_prompts(transcript: Transcript) -> list[tuple[str, str | None]]:
    """Each of the user's messages: its text and its time."""
    return [(e.text, e.timestamp) for e in transcript.entries if isinstance(e, UserMessage)]
