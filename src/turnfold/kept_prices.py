"""Models' prices kept between processes, so a cost needs no import of the table (U-2, Q-1).

genai-prices' import takes a fifth of a second (pydantic models of the whole table, and the HTTP
client of its updater): every ``turnfold render``, ``show`` and first view in a notebook of a
session with a cost paid it, for one or two models' prices. What :mod:`turnfold.prices` asks the
table about a model is a few numbers (the provider it was found at, where its tiers start, one
line per stretch between them), so they are kept in :data:`FILE_NAME` in turnfold's
cache directory (:func:`turnfold.caches.cache_dir`) under a stamp of the installed table (its
data module's path, size and modification time): another version of genai-prices, or an
update in place, finds the file's prices stale and starts it anew. The lines are floats that
JSON carries exactly, so a kept price prices every response as the table's line did.

A price is kept with the span of days it holds for (:data:`Span`): the table changes a model's
price only on the start dates it lists, so a price found for one day prices every day until the
next, and a model with a single price has one span, every day. A session of another day, or of
today, is then priced without the table. A model whose price also depends on the time of day
(off-peak prices) is priced at midnight of a session's day, as the table would on that day, and
its price now is never kept. Nothing is kept or read in a process whose table was replaced at
run time (genai-prices' ``UpdatePrices`` sets a custom snapshot). A cache that cannot be read or
written is no error: the prices then come from the table.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import date, datetime, timezone
from importlib.util import find_spec
from pathlib import Path
from threading import get_ident
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging

from turnfold.atomic import write_whole
from turnfold.caches import cache_dir

__all__ = ["FILE_NAME", "MISSING", "Kept", "Line", "PriceBook", "Span", "price_book", "utc_today"]

#: JSON, but not named ``.json``: the corpus scanner reads such files as candidate sessions, and
#: the cache folder may lie inside a folder it scans.
FILE_NAME = "kept-prices"
#: One stretch's price of a response: a base and a price per input, output, cache-read and
#: cache-write token, and what a one-hour cache write adds (:class:`turnfold.prices.Price`).
Line = tuple[float, float, float, float, float, float]
#: A model's kept price: the provider the table found it at (None: by the model alone), where
#: its tiers start, and the line of each stretch (None: priced by the table itself).
Kept = tuple[str | None, list[int], list[Line | None]]
#: The days a price holds for: from the first (None: from the table's first) up to the second,
#: not included (None: on, until the table changes).
Span = tuple[date | None, date | None]
#: What :meth:`PriceBook.get` answers for a price it does not keep.
MISSING: Any = object()
#: The layout of the file's prices, part of its stamp: a file of another layout starts anew
#: (``spans``: lines without the one-hour cache writes' price, which read as free).
_LAYOUT = "spans-1h"


class PriceBook:
    """The kept prices of one installed price table (its ``stamp``)."""

    def __init__(self, path: Path, stamp: str) -> None:
        self.path = path
        self.stamp = stamp
        self._file = self._read()

    def _read(self) -> dict[str, Any]:
        """The file's content if it was written for this table; empty otherwise."""
        try:
            found = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            _logger().debug("kept prices unreadable (%s); the table prices", error)
            return {}
        if not isinstance(found, dict) or found.get("stamp") != self.stamp:
            return {}
        return found

    @property
    def empty(self) -> bool:
        """Whether no price is kept for this table yet (a first scan's workers import it)."""
        return not self._file.get("prices")

    @property
    def version(self) -> str | None:
        """The table's version, as it was when a price was kept."""
        version = self._file.get("version")
        return version if isinstance(version, str) else None

    def get(self, model: str, provider: str | None, day: date | None) -> Kept | None:
        """The kept price of ``model`` on ``day`` (None: now), None when the table has none,
        else :data:`MISSING`."""
        prices = self._file.get("prices")
        entry = prices.get(_key(model, provider)) if isinstance(prices, dict) else None
        if not isinstance(entry, dict):
            return MISSING  # type: ignore[no-any-return]  # nothing kept for this model yet
        if day is None and entry.get("timed") is not False:
            return MISSING  # type: ignore[no-any-return]  # its price now depends on the time
        on = (day or utc_today()).isoformat()  # ISO dates sort as the days they name
        try:
            for first, end, kept in entry["spans"]:
                if (first is None or first <= on) and (end is None or on < end):
                    if kept is None:
                        return None
                    found, starts, lines = kept
                    return found, [int(s) for s in starts], [_line(line) for line in lines]
        except (KeyError, TypeError, ValueError):  # a file edited by hand: the table prices
            pass
        return MISSING  # type: ignore[no-any-return]

    def keep(
        self,
        model: str,
        provider: str | None,
        span: Span,
        timed: bool,
        kept: Kept | None,
        version: str,
    ) -> None:
        """Keep ``model``'s price (None: the table has none) for the days of ``span``, for the
        next process; ``timed``: its price also depends on the time of day."""
        latest = self._read()  # what another process kept meanwhile stays
        prices: dict[str, Any] = latest["prices"] if isinstance(latest.get("prices"), dict) else {}
        days = list(_days(span))
        entry = prices.get(_key(model, provider))
        earlier = entry.get("spans") if isinstance(entry, dict) else None
        # This span's earlier price goes, as do a hand-edited file's lines that are no span.
        spans = [s for s in earlier if isinstance(s, list) and s[:2] != days] if isinstance(
            earlier, list
        ) else []  # fmt: skip
        spans.append([*days, list(kept) if kept is not None else None])
        prices[_key(model, provider)] = {"timed": timed, "spans": spans}
        self._file = {"stamp": self.stamp, "version": version, "prices": prices}
        # A writer's own part file (process and thread): two writers never share one.
        part = self.path.with_name(f"{self.path.name}.{os.getpid()}.{get_ident()}.tmp")
        content = json.dumps(self._file).encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_whole(self.path, lambda stream: stream.write(content), part)
        except OSError as error:
            _logger().debug("prices not kept (%s)", error)


#: The books this process opened, by file and stamp: a file is read once per process.
_BOOKS: dict[tuple[Path, str], PriceBook] = {}


def price_book() -> PriceBook | None:
    """The kept prices of the installed table; None without genai-prices, or when this
    process replaced its table."""
    snapshot = sys.modules.get("genai_prices.data_snapshot")
    if snapshot is not None and getattr(snapshot, "_custom_snapshot", None) is not None:
        return None
    stamp = _table_stamp()
    if stamp is None:
        return None
    path = cache_dir() / FILE_NAME
    book = _BOOKS.get((path, stamp))
    if book is None:
        book = _BOOKS[path, stamp] = PriceBook(path, stamp)
    return book


def _table_stamp() -> str | None:
    """Where genai-prices' table is installed, its size and its time, after the layout of the
    kept prices; found without importing it (a top-level package's spec is only looked up)."""
    try:
        spec = find_spec("genai_prices")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        data = Path(folder, "data.py")
        try:
            stat = data.stat()
        except OSError:
            continue
        return f"{_LAYOUT}:{data}:{stat.st_size}:{stat.st_mtime_ns}"
    return None


def _logger() -> logging.Logger:
    """This module's logger, imported only when there is something to say: ``import logging``
    takes milliseconds that a render whose prices are kept need not pay (issue 19)."""
    import logging

    return logging.getLogger(__name__)


def _key(model: str, provider: str | None) -> str:
    return json.dumps([model, provider])


def _days(span: Span) -> tuple[str | None, str | None]:
    first, end = span
    return (first.isoformat() if first else None, end.isoformat() if end else None)


def utc_today() -> date:
    """Today in UTC, the day the table dates a request by."""
    return datetime.now(timezone.utc).date()


def _line(line: Any) -> Line | None:
    if line is None:
        return None
    base, per_in, per_out, per_read, per_write, per_hour = map(float, line)  # else ValueError
    return base, per_in, per_out, per_read, per_write, per_hour
