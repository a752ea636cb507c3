"""Placeholder: the qwen loader is being written (issue 3)."""

from __future__ import annotations

from turnfold.formats.source import Source
from turnfold.model import Transcript

NAME = "qwen"


def detect(source: Source) -> bool:
    return False


def read(source: Source) -> Transcript:
    raise NotImplementedError("qwen")
