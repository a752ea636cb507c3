"""What the frameworks' tests check of a run whose result is structured output (spec P-2):
the turn's answer, as the view model shows it."""

from __future__ import annotations

import html
import re
from typing import Any

from turnfold.model import AssistantText, Transcript
from turnfold.render.viewmodel import build_view_model


def answer_of(transcript: Transcript) -> tuple[AssistantText, str]:
    """The last turn's answer: its entry (the transcript's last) and the text the view model
    draws of it (its HTML without the markup: a code block's highlighting spans)."""
    turns = [node for node in build_view_model(transcript)["nodes"] if node["kind"] == "turn"]
    node: Any = turns[-1]["answer"]
    assert node is not None, "the turn has no answer"
    entry = transcript.entries[-1]
    assert isinstance(entry, AssistantText)
    assert node["key"].endswith(entry.id)
    return entry, html.unescape(re.sub(r"<[^>]+>", "", node["html"]))


def structured_answers(transcript: Transcript) -> list[AssistantText]:
    """The answers a reader made of a run's structured output."""
    return [
        e
        for e in transcript.entries
        if isinstance(e, AssistantText) and e.meta.get("structured_output")
    ]
