"""Samples of the Inspect AI logs the real ``inspect_ai`` wrote, read whole, for the tests of
what the reader makes of them (spec H-1, X-2; tests/test_inspect_roles.py,
tests/test_inspect_unread.py): a sample's first epoch, every record of it accounted for and no
warning, so a test that looks at one event also says nothing else was passed over."""

from __future__ import annotations

from pathlib import Path

import turnfold
from turnfold.model import Transcript

HARNESSES = Path(__file__).parent / "fixtures" / "harnesses"
#: ``inspect-stops/stops_recipe.py``'s log: the ``time``, ``cancel``, ``retry`` and
#: ``terminate`` samples.
STOPS = HARNESSES / "inspect-stops" / "stops_four-samples.eval"


def load_sample(path: Path, sample: str) -> Transcript:
    """Epoch 1 of ``sample`` in the log at ``path``: fully accounted for, without warnings."""
    transcript = turnfold.load(path, sample=sample, epoch=1)
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    assert transcript.warnings == []
    return transcript
