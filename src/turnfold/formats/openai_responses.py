"""Placeholder: the openai-responses loader is being written (issue 3)."""

from __future__ import annotations

from turnfold.formats.source import Source
from turnfold.model import Transcript

NAME = "openai-responses"


def detect(source: Source) -> bool:
    return False


def read(source: Source) -> Transcript:
    raise NotImplementedError("openai-responses")
