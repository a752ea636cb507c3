"""What a reader sees of a transcript's turns, for loaders that choose what is the answer."""

from __future__ import annotations

from turnfold.model import Transcript
from turnfold.render.text import html_to_text
from turnfold.render.viewmodel import build_view_model


def turns_shown(transcript: Transcript) -> list[tuple[list[str], str | None]]:
    """Each turn's texts inside its process (progress notes), and its answer."""
    shown = []
    for node in build_view_model(transcript)["nodes"]:
        if node["kind"] == "turn":
            inside = node["process"]["children"] if node["process"] else []
            answer = node["answer"]
            shown.append((
                [html_to_text(c["html"]) for c in inside if c["kind"] == "progress"],
                html_to_text(answer["html"]) if answer else None,
            ))  # fmt: skip
    return shown
