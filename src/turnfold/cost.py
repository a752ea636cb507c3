"""Cost, estimated honestly (spec U-2): from a kept price table, or as the source recorded it.

Prices come from `genai-prices <https://github.com/pydantic/genai-prices>`_, a price table with
price history: each model's tokens are priced by provider, model and the session's own date,
cache reads and writes at their own rates. A model the table does not know gets no cost, and
then neither does the session: a total that leaves out a model is not the session's cost. A
cost the source recorded (``metadata["cost_usd"]``, H-6) wins and is marked as recorded.

genai-prices is imported on the first estimate, not with turnfold: it takes about half a
second, which a load never pays.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache, lru_cache

from turnfold.model import AssistantText, Entry, ToolCall, Transcript
from turnfold.usage import Tokens, add_into, count_tokens_by, tokens_spent

#: The provider each agent's own format talks to, when its records do not name one.
PROVIDERS: dict[str, str] = {
    "claude-code": "anthropic", "claude-stream-json": "anthropic", "claude-agent-sdk": "anthropic",
    "anthropic": "anthropic", "codex": "openai", "codex-exec-json": "openai", "openai": "openai",
    "openai-responses": "openai", "gemini": "google", "qwen": "alibaba",
}  # fmt: skip
#: The counts genai-prices prices (reasoning is part of output, and priced with it).
_PRICED = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


@dataclass(frozen=True)
class Cost:
    """A session's (or a turn's) cost in US dollars, and where it comes from."""

    usd: float
    recorded: bool
    """The source recorded it (else turnfold estimated it)."""
    source: str
    """Where the number comes from, for a tooltip: the price table and the date it priced."""


def tokens_by_model(
    entries: Iterable[Entry], default: str | None, *, _depth: int = 0
) -> dict[str | None, Tokens]:
    """``entries``' tokens (each response once, :mod:`turnfold.usage`) by the model that spent
    them, their calls' sub-agents included; ``default`` for a response that names none."""
    entries = list(entries)
    nested: dict[str | None, Tokens] = {}
    for entry in entries:
        child = _delegated(entry)
        if child is not None and _depth < 64:  # a transcript that holds itself: counted once
            named = child.metadata.get("model")
            found = tokens_by_model(
                child.entries, named if isinstance(named, str) else default, _depth=_depth + 1
            )
            for name, tokens in found.items():
                add_into(nested.setdefault(name, {}), tokens)

    def model_of(entry: Entry) -> str | None:
        model = entry.model if isinstance(entry, AssistantText) else None
        named = entry.meta.get("model")
        return model or (named if isinstance(named, str) else None) or default

    found = count_tokens_by(entries, model_of)
    for name, tokens in nested.items():
        add_into(found.setdefault(name, {}), tokens)
    return found


def _delegated(entry: Entry) -> Transcript | None:
    """The transcript of the sub-agent a call delegated to, when it is loaded."""
    if isinstance(entry, ToolCall) and entry.subagent is not None:
        return entry.subagent.transcript
    return None


def provider_of(transcript: Transcript) -> str | None:
    """The provider the session's models were called at, as recorded or by its agent."""
    provider = transcript.metadata.get("provider")
    if isinstance(provider, str) and provider:
        return provider
    fmt = transcript.metadata.get("source_format")
    return PROVIDERS.get(fmt) if isinstance(fmt, str) else None


def entries_cost(
    transcript: Transcript, entries: Iterable[Entry], when: datetime | None = None
) -> Cost | None:
    """The estimated cost of some of ``transcript``'s entries (a turn's)."""
    model = transcript.metadata.get("model")
    default = model if isinstance(model, str) else None
    return estimate(tokens_by_model(entries, default), provider=provider_of(transcript), when=when)


def estimate(
    tokens: Mapping[str | None, Mapping[str, int]],
    *,
    provider: str | None = None,
    when: datetime | None = None,
) -> Cost | None:
    """The price of ``tokens`` (by model) at ``when``'s prices; None when any model that spent
    tokens is unknown to the price table (or not named), or genai-prices is not installed."""
    total = 0.0
    priced_any = False
    for model, counts in tokens.items():
        if not any(counts.get(name) for name in _PRICED):
            continue
        if model is None:
            return None
        price = _price(model, provider, when, tuple(counts.get(name, 0) for name in _PRICED))
        if price is None:
            return None
        total += price
        priced_any = True
    if not priced_any:
        return None
    day = when.strftime("%Y-%m-%d") if when is not None else "today"
    return Cost(total, False, f"estimated with genai-prices {_version()}, prices of {day}")


@dataclass(frozen=True)
class Spend:
    """What some entries spent (a turn's): their tokens and their estimated cost."""

    tokens: Tokens
    """Each response once, the sub-agents their calls delegated to included (U-1)."""
    cost: Cost | None
    """The estimate of those tokens (U-2), None when they cannot be priced."""


def spend_of(
    transcript: Transcript, entries: Sequence[Entry], when: datetime | None = None
) -> Spend:
    """What ``entries`` of ``transcript`` spent, priced at ``when``: a turn's tokens and cost,
    as its header (``show_turn_usage``) and the corpus's ``turns()`` table both show them."""
    tokens = tokens_spent(entries)
    return Spend(tokens, entries_cost(transcript, entries, when) if tokens else None)


def session_cost(transcript: Transcript, when: datetime | None = None) -> Cost | None:
    """The session's cost: the one its source recorded, else an estimate of its tokens."""
    recorded = transcript.metadata.get("cost_usd")
    if isinstance(recorded, (int, float)) and not isinstance(recorded, bool):  # noqa: SIM102
        if math.isfinite(recorded) and recorded >= 0:
            return Cost(float(recorded), True, "recorded by the source")
    return entries_cost(transcript, transcript.entries, when)


#: The (model, provider) pairs the price table does not know, looked for once per process.
_UNKNOWN: set[tuple[str, str | None]] = set()


@lru_cache(maxsize=1024)
def _price(
    model: str, provider: str | None, when: datetime | None, counts: tuple[int, ...]
) -> float | None:
    try:
        import genai_prices
    except ImportError:  # pragma: no cover - a dependency; an install without it shows no cost
        return None
    usage = genai_prices.Usage(**dict(zip(_PRICED, counts, strict=True)))
    for candidate in (provider, None) if provider else (None,):
        if (model, candidate) in _UNKNOWN:
            continue
        try:
            found = genai_prices.calc_price(
                usage, model, provider_id=candidate, genai_request_timestamp=when
            )
        except LookupError:
            # Not this provider's model (a proxy, another vendor): by the model alone. The table
            # remembers the models it found, not the ones it did not, and looking for one it
            # does not know walks every model of every provider (a millisecond): remember it.
            _UNKNOWN.add((model, candidate))
            continue
        except Exception:  # the table could not price these counts: no cost, never a guess
            return None
        return float(found.total_price)
    return None


@cache
def _version() -> str:
    from importlib.metadata import version

    return version("genai-prices")


def format_usd(usd: float) -> str:
    """A cost as a header shows it: cents for most, more digits below a cent.

    >>> format_usd(0.2134), format_usd(0.00315), format_usd(12.5)
    ('0.21', '0.00315', '12.50')
    """
    return f"{usd:.2f}" if usd >= 0.01 or usd == 0 else f"{usd:.3g}"


__all__ = [
    "PROVIDERS",
    "Cost",
    "Spend",
    "entries_cost",
    "estimate",
    "format_usd",
    "provider_of",
    "session_cost",
    "spend_of",
    "tokens_by_model",
]
