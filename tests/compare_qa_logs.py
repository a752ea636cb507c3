"""The two eval logs of ``tests/fixtures/compare-qa``, two versions of one task made with the
real ``inspect_ai`` (``qa_recipe.py``): ``s6`` only in v1, ``s7`` only in v2. For the tests of
two logs compared (spec B-3; tests/test_compare_one_log.py,
tests/test_compare_one_log_open.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import turnfold
from turnfold.compare_widget import CompareWidget
from turnfold.comparison import Run, open_run
from turnfold.settings import DisplaySettings

COMPARE_QA = Path(__file__).parent / "fixtures" / "compare-qa"
V1, V2 = COMPARE_QA / "qa_v1.eval", COMPARE_QA / "qa_v2.eval"
#: What the comparisons call the two logs.
NAMES = ("v1", "v2")


def opened() -> tuple[Run, Run]:
    """The two logs as a comparison opens them (their samples scanned)."""
    return open_run(V1), open_run(V2)


def compared(widgets: list[Any], locale: str | None = None) -> CompareWidget:
    """The widget comparing the two logs, in ``locale`` (None: the layered default settings),
    added to ``widgets`` (conftest's) to be closed after the test."""
    settings = None if locale is None else DisplaySettings(locale=locale)
    widget = turnfold.compare(V1, V2, names=NAMES, settings=settings)
    widgets.append(widget)
    return widget
