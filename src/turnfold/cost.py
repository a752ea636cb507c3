"""Cost, estimated honestly (spec U-2): from a kept price table, or as the source recorded it.

Prices come from `genai-prices <https://github.com/pydantic/genai-prices>`_, a price table with
price history: each model's tokens are priced by provider, model and the session's own date,
cache reads and writes at their own rates. A model the table does not know gets no cost, and
then neither does the session: a total that leaves out a model is not the session's cost. A
cost the source recorded (``metadata["cost_usd"]``, H-6) wins and is marked as recorded.

A recorded cost covers what the session's tokens cover (U-1): its sub-agents' too. Most
sources' totals hold them (the Claude CLI's ``total_cost_usd``, the OpenHands SDK's ``stats``);
a reader whose source records the session's own cost alone says so
(``metadata["cost_includes_subagents"] = False``, the Cline CLI's ``run_result``), and each
sub-agent's cost is added: the one its source recorded, else an estimate, which makes the sum
one (:func:`session_cost`).

An estimate prices the tokens the header counts (U-1): where the source records the session's
own total (``metadata["usage"]``, which wins over its responses' sum), the responses are priced
within it (:func:`within_session_total`), the part they leave out by the model that spent it:
each model's, where the reader records the total's split (``metadata["usage_by_model"]``:
model → counts), else the session's one model; with several models and no split, no estimate.

Where there is no cost, the decision says why (:class:`NoCost`: the first thing it could not
price), and wherever tokens are shown with no cost, the same decision says why
(:func:`no_cost_said`): the session's header and a turn's (U-3), a corpus row and a turn row
(``no_cost``, C-2, C-3), a comparison of two corpora (B-3). Without genai-prices installed, no
model has a price, and the reason says that and how to install it, not that the table knows no
price for the model (it might). Tokens a delegated agent spent with no model recorded are said
to be the sub-agent's (:data:`SUBAGENT_MODEL`), in the turn that delegated as in the session.

genai-prices is imported on the first estimate, not with turnfold: it takes about half a
second, which a load never pays.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal
from enum import Enum
from importlib.util import find_spec
from typing import Final, Literal, cast, get_args

from turnfold.i18n import DEFAULT_LOCALE, translate
from turnfold.model import AssistantText, Entry, SubAgent, ToolCall, Transcript
from turnfold.prices import COUNTS, Counts, price_of, table_version
from turnfold.usage import (
    Tokens,
    add_into,
    counts_of,
    has_subagent_tokens,
    output_not_recorded,
    recorded_subagent_tokens,
    responses,
    total_of,
    unattributed_subagent_tokens,
)

#: The provider each agent's own format talks to, when its records do not name one.
PROVIDERS: dict[str, str] = {
    "claude-code": "anthropic", "claude-stream-json": "anthropic", "claude-agent-sdk": "anthropic",
    "anthropic": "anthropic", "codex": "openai", "codex-exec-json": "openai", "openai": "openai",
    "openai-responses": "openai", "gemini": "google", "gemini-stream-json": "google",
    "qwen": "alibaba",
}  # fmt: skip


@dataclass(frozen=True)
class Cost:
    """A session's (or a turn's) cost in US dollars, and where it comes from."""

    usd: float
    recorded: bool
    """The source recorded it (else turnfold estimated it)."""
    table: str | None = None
    """The version of the price table that estimated it (None when the source recorded it)."""
    priced_on: date | None = None
    """The day whose prices the estimate used; None: today's (the session records no date)."""

    @property
    def source(self) -> str:
        """Where the number comes from, in English: :meth:`source_in` says it in a locale."""
        return self.source_in(DEFAULT_LOCALE)

    def source_in(self, locale: str) -> str:
        """Where the number comes from, for a tooltip in ``locale``: the price table and the
        day it priced. Built here from its parts, so a page in Chinese says it in Chinese."""
        if self.recorded:
            return translate("cost.recorded", locale)
        if self.priced_on is None:
            return translate("cost.estimated_today", locale, table=self.table)
        return translate("cost.estimated", locale, table=self.table, day=str(self.priced_on))


#: Why tokens get no cost (:class:`NoCost`), each said by ``cost.none.<reason>`` in a locale.
Reason = Literal[
    "unknown_model", "unnamed_model", "unsplit_total", "output_not_recorded", "counts_refused",
    "subagent_unpriced", "subagents_too_deep", "nothing_priced", "no_price_source",
]  # fmt: skip
#: How to install the price table (``no_price_source``): genai-prices is one of turnfold's own
#: dependencies (pyproject.toml), not an extra, so an environment without it lacks that package
#: alone, as a ``pip install --no-deps`` or a pruned image leaves it.
PRICE_TABLE_INSTALL = "pip install genai-prices"
#: What stands for the models in a reason's text, when :meth:`NoCost.read` finds its shape.
_MODELS_AT = "\x00"


@dataclass(frozen=True)
class NoCost:
    """Why some tokens have no cost (U-2): the first thing the estimate could not price, which
    a header that shows the tokens says (U-3), and a corpus row holds (``no_cost``, C-2),
    rather than leave the cost out unexplained."""

    reason: Reason
    models: tuple[str, ...] = ()
    """The model the price table does not know (``unknown_model``); the models among which a
    recorded total is not split (``unsplit_total``)."""

    def reason_in(self, locale: str) -> str:
        """The reason alone in a few words, in ``locale``: ``no price for gemini-3-pro``."""
        return translate(f"cost.none.{self.reason}", locale, models=", ".join(self.models),
                         install=PRICE_TABLE_INSTALL)  # fmt: skip

    def text_in(self, locale: str) -> str:
        """The reason as a header's line says it, in ``locale``: ``no cost: …``."""
        return translate("cost.none", locale, reason=self.reason_in(locale))

    def title_in(self, locale: str) -> str:
        """The reason in full, for the header's tooltip, in ``locale``."""
        return translate(f"cost.none.{self.reason}_title", locale,
                         models=", ".join(self.models), install=PRICE_TABLE_INSTALL)  # fmt: skip

    @property
    def said(self) -> str:
        """The reason as a corpus row holds it (``no_cost``): in English, as a row's other
        words are (its error, its outcome), so a table's reader filters and groups by one text
        in every locale; :meth:`read` reads it back."""
        return self.reason_in(DEFAULT_LOCALE)

    @classmethod
    def read(cls, said: str) -> NoCost | None:
        """The reason a corpus row holds (:attr:`said`), read back, so that a line of rows in
        another language (a comparison's totals) says it in its own; None for a text that is
        no reason's (a row some other version of turnfold wrote).

        >>> NoCost.read(NoCost("unknown_model", ("gemini-3-pro",)).said)
        NoCost(reason='unknown_model', models=('gemini-3-pro',))
        >>> NoCost.read("no such reason") is None
        True
        """
        for reason in get_args(Reason):
            shape = translate(f"cost.none.{reason}", DEFAULT_LOCALE, models=_MODELS_AT,
                              install=PRICE_TABLE_INSTALL)  # fmt: skip
            before, at, after = shape.partition(_MODELS_AT)
            if not at and said == shape:
                return cls(reason)
            inside = said[len(before) : len(said) - len(after)]
            if at and inside and said == f"{before}{inside}{after}":
                # The models were joined by ", ": split by it, they join to the same text.
                return cls(reason, tuple(inside.split(", ")))
        return None


def no_cost_said(tokens: Mapping[str, int], why: NoCost | None) -> NoCost | None:
    """Why ``tokens`` have no cost, where it is said: ``why`` where they count input or output,
    as a header shows them (U-3) and a corpus row counts them; else None, for no tokens are
    shown and there is no missing cost to explain. One rule for the session's header, a turn's,
    a corpus row and a turn row."""
    return why if total_of(tokens) else None


class _Unnamed(Enum):
    """A spender no record names, where whose it is still matters to the reader."""

    SUBAGENT_MODEL = "subagent_model"


#: What spent a delegated agent's tokens where no record names its model (an agent used as a
#: tool runs out of sight; its transcript names none): the sub-agent's model, not the session's.
#: No estimate prices it, and the reason says whose model it is (``subagent_unpriced``) in a
#: turn's header as in the session's, rather than "model not recorded" of the turn's own.
SUBAGENT_MODEL: Final = _Unnamed.SUBAGENT_MODEL
#: What spent a response's tokens, as far as the records tell: its model; None where no record
#: names one (:data:`SUBAGENT_MODEL` where they are a sub-agent's); the models among which a
#: recorded total is not split (which of them spent it is not known), which no estimate prices
#: either, but says why (:class:`NoCost`).
Spender = str | frozenset[str] | Literal[_Unnamed.SUBAGENT_MODEL] | None
#: Responses to price: each its :data:`Spender` and token counts.
Priced = list[tuple[Spender, Tokens]]


def responses_by_model(entries: Iterable[Entry], default: str | None) -> Priced:
    """Every response among ``entries`` once (:func:`turnfold.usage.responses`) with the model
    that wrote it, the responses of their calls' sub-agents included; ``default`` for a
    response that names no model."""
    delegated, own = responses_apart(entries, default)
    return delegated + own


def responses_apart(
    entries: Iterable[Entry], default: str | None
) -> tuple[Priced, list[tuple[str | None, Tokens]]]:
    """:func:`responses_by_model`'s responses in two lists: those of the calls' sub-agents, and
    the entries' own. A session's header counts its own tokens and prices both, from one pass
    over its responses. A sub-agent whose source records its tokens as a whole is priced
    within that total (:func:`within_recorded`), as its tokens are counted (U-1). A sub-agent's
    tokens no record names a model for are :data:`SUBAGENT_MODEL`'s.

    Every level is priced, however deep: walked with a stack, not by recursion, each
    sub-agent's own responses after its sub-agents'. A sub-agent whose transcript is already
    on the way down (one that runs itself, or one it is nested in) is passed over, as
    :func:`turnfold.usage.subagent_tokens` passes it over, so a turn's tokens and the responses
    it is priced on agree."""
    entries = list(entries)
    found: Priced = []
    on_path: set[int] = set()
    todo = [_Delegated(None, None, None, default, iter(entries))]
    while todo:
        level = todo[-1]
        entry = next(level.pending, None)
        if entry is None:
            todo.pop()
            if level.agent is not None and level.transcript is not None:
                on_path.discard(id(level.transcript))
                own = _own_responses(level.transcript.entries, level.default)
                found += _as_delegated(level.agent, level.spender, own)
            continue
        agent = entry.subagent if isinstance(entry, ToolCall) else None
        if agent is None:
            continue
        child = agent.transcript
        if child is not None and id(child) in on_path:
            continue
        spender = subagent_model(agent)
        if child is None:
            found += _as_delegated(agent, spender, [])
            continue
        # A response that names no model is the agent's model's, else its caller's.
        model = spender if isinstance(spender, str) else None
        named = child.metadata.get("model")
        mine = model or (named if isinstance(named, str) and named else None) or level.default
        on_path.add(id(child))
        todo.append(_Delegated(child, agent, spender, mine, iter(child.entries)))
    return found, _own_responses(entries, default)


@dataclass
class _Delegated:
    """One level of :func:`responses_apart`'s walk: a sub-agent's transcript (None for the
    entries it was given), the agent and what spent its tokens, the model of its responses
    that name none, and its entries still to read."""

    transcript: Transcript | None
    agent: SubAgent | None
    spender: Spender
    default: str | None
    pending: Iterator[Entry]


def _own_responses(
    entries: Iterable[Entry], default: str | None
) -> list[tuple[str | None, Tokens]]:
    """Each response among ``entries`` with the model that wrote it, ``default`` where its
    record names none."""

    def model_of(entry: Entry) -> str | None:
        return _named_model(entry) or default

    return responses(entries, model_of)


def _as_delegated(
    agent: SubAgent, spender: Spender, own: Sequence[tuple[str | None, Tokens]]
) -> Priced:
    """A sub-agent's own responses ``own`` as its caller prices them."""
    # What no record names a model for here is the sub-agent's, and said to be (its caller's
    # default named none either): never read as the session's own responses naming none.
    delegated: Priced = [(SUBAGENT_MODEL if by is None else by, c) for by, c in own]
    recorded = recorded_subagent_tokens(agent)
    if recorded is not None:
        spent_by = SUBAGENT_MODEL if spender is None else spender
        delegated = within_recorded(recorded, delegated, spent_by)
    return delegated


def _named_model(entry: Entry) -> str | None:
    """The model that wrote ``entry``, as its record names it (a call or reasoning that carries
    its response's usage keeps it in ``meta``)."""
    model = entry.model if isinstance(entry, AssistantText) else None
    named = entry.meta.get("model")
    return model or (named if isinstance(named, str) else None)


def subagent_model(agent: SubAgent) -> Spender:
    """The model the source says a delegated agent used: the one its transcript's responses
    name, else the one its transcript names. None where it names none (an agent used as a tool
    runs out of sight), the models where it names several (which of them spent the tokens its
    responses do not record is not known): what is priced by it then gets no cost, never its
    caller's model's."""
    child = agent.transcript
    if child is None:
        return None
    models = {model for entry in child.entries if (model := _named_model(entry))}
    if models:
        return models.pop() if len(models) == 1 else frozenset(models)
    named = child.metadata.get("model")
    return named if isinstance(named, str) and named else None


def within_recorded(
    recorded: Tokens,
    found: Sequence[tuple[Spender, Tokens]],
    model: Spender,
    *,
    session: bool = False,
) -> Priced:
    """Responses ``found``, priced within the total their source records for them, which wins
    over them: a delegated agent's (:func:`turnfold.usage.recorded_subagent_tokens`), or a
    session's own (``session``, :func:`within_session_total`). Each response as recorded (on
    its own, so it keeps its price tier, :mod:`turnfold.prices`), and what the total counts
    beyond them (the output an agent's stream left out: Claude Code's headless streams and the
    Claude Agent SDK; the input a session records only in its total: VS Code Copilot) as spent
    by ``model``. Where the responses count more than the total, the total alone. Either way
    their counts add up to the total: the tokens its call counts are the tokens priced, none
    twice, none left out.

    A session's total is priced, never counted, and so differs in three ways: only the counts a
    price is put on are taken from it (:data:`~turnfold.prices.COUNTS`); what it counts beyond
    the responses is spread over them (:func:`_shares`), as a request is priced by its own size
    and a session's input priced as one request's would pay a long-context tier (Claude Sonnet
    4.5's, Gemini 2.5 Pro's, above 200k) its requests never reached; and a response that
    records no output keeps none where the rest has none, as no record holds it then.

    >>> total = {"input_tokens": 20, "output_tokens": 5}
    >>> for part in within_recorded(total, [("m", {"input_tokens": 20})], "m"):
    ...     print(part)
    ('m', {'input_tokens': 20, 'output_tokens': 0})
    ('m', {'input_tokens': 0, 'output_tokens': 5})
    """
    total = {name: count for name, count in recorded.items() if not session or name in COUNTS}
    rest = {name: count - sum(c.get(name, 0) for _, c in found) for name, count in total.items()}
    requests = (len(found) or 1) if session else 1
    if any(count < 0 for count in rest.values()):  # the responses count more: the total alone
        return [(model, share) for share in _shares(total, requests)]
    # A count the total records and a response does not is in the rest: 0 in the response, so
    # its output is not read as not recorded (:func:`~turnfold.usage.output_not_recorded`).
    unrecorded = dict.fromkeys(total, 0)
    if session and not rest.get("output_tokens"):
        unrecorded.pop("output_tokens", None)
    parts: Priced = [(named, {**unrecorded, **counts}) for named, counts in found]
    if any(rest.values()):
        parts += [(model, share) for share in _shares(rest, requests)]
    return parts


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
    found = responses_by_model(entries, default_model(transcript))
    return estimate(found, provider=provider_of(transcript), when=when)


def default_model(transcript: Transcript) -> str | None:
    """The model a response that names none was written by: the session's, when it names one."""
    model = transcript.metadata.get("model")
    return model if isinstance(model, str) else None


def estimate(
    responses: Iterable[tuple[Spender, Mapping[str, int]]],
    *,
    provider: str | None = None,
    when: datetime | None = None,
) -> Cost | None:
    """The price of model ``responses`` (each its model and token counts), each priced on its
    own (:mod:`turnfold.prices`) at ``when``'s day's prices; None where
    :func:`estimate_or_why` says why there is none."""
    estimated = estimate_or_why(responses, provider=provider, when=when)
    return estimated if isinstance(estimated, Cost) else None


def estimate_or_why(
    responses: Iterable[tuple[Spender, Mapping[str, int]]],
    *,
    provider: str | None = None,
    when: datetime | None = None,
) -> Cost | NoCost:
    """:func:`estimate`'s price, else why there is none (:class:`NoCost`): a model that spent
    tokens is unknown to the price table (or genai-prices is not installed), not named (a
    sub-agent's, :data:`SUBAGENT_MODEL`, said to be a sub-agent's where no other reason is),
    or one of several a recorded total is not split among; a response's output count is not
    recorded (:func:`~turnfold.usage.output_not_recorded`: its input's price alone would read
    as its cost); the table refuses a response's counts; or no response counts anything
    priced."""
    day = _day(when)
    total = 0.0
    priced_any = unnamed_subagent = False
    for model, counts in responses:
        values = tuple(counts.get(name, 0) for name in COUNTS)
        if not any(values):
            continue
        if model is SUBAGENT_MODEL:
            # Said only where nothing else is: where the session's own model is not recorded
            # either, "model not recorded" says both, and a sub-agent's alone would mislead.
            unnamed_subagent = True
            continue
        if model is None:
            return NoCost("unnamed_model")
        if isinstance(model, frozenset):
            return NoCost("unsplit_total", tuple(sorted(model)))
        if output_not_recorded(counts):
            return NoCost("output_not_recorded")
        price = price_of(model, provider, day)
        if price is None:
            if not price_table_installed():  # no model has a price: the install is the reason
                return NoCost("no_price_source")
            return NoCost("unknown_model", (model,))
        try:
            total += price(cast(Counts, values))
        except Exception:  # the table could not price these counts: no cost, never a guess
            return NoCost("counts_refused")
        priced_any = True
    if unnamed_subagent:
        return NoCost("subagent_unpriced")
    if not priced_any:
        return NoCost("nothing_priced")
    return Cost(total, False, table_version(), day)


def price_table_installed() -> bool:
    """Whether genai-prices can be imported, looked up without importing it (a fifth of a
    second, :mod:`turnfold.prices`): where it cannot, :func:`~turnfold.prices.price_of` finds
    no price for any model, and saying the table knows no price for one would be wrong."""
    try:
        return find_spec("genai_prices") is not None
    except (ImportError, ValueError):  # a module of that name without a spec: not the table
        return False


def _day(when: datetime | None) -> date | None:
    if when is None:
        return None
    return (when.astimezone(timezone.utc) if when.tzinfo is not None else when).date()


@dataclass(frozen=True)
class Spend:
    """What some entries spent (a turn's): their tokens and their estimated cost."""

    tokens: Tokens
    """Each response once, the sub-agents their calls delegated to included (U-1)."""
    cost: Cost | None
    """The estimate of those tokens (U-2), None when they cannot be priced."""
    no_cost: NoCost | None = None
    """Why ``cost`` is None, where the tokens count input or output (:func:`no_cost_said`)."""


def spend_of(
    transcript: Transcript, entries: Sequence[Entry], when: datetime | None = None
) -> Spend:
    """What ``entries`` of ``transcript`` spent, priced at ``when``: a turn's tokens and cost,
    as its header (``show_turn_usage``) and the corpus's ``turns()`` table both show them.

    The responses are found once and both counted and priced: their counts added up are
    :func:`turnfold.usage.tokens_spent` (each response once, the sub-agents' included), which
    finding them twice, once to count and once to price, cost a corpus scan a tenth of its
    turn rows."""
    found = responses_by_model(entries, default_model(transcript))
    tokens: Tokens = {}
    for _, counts in found:
        add_into(tokens, counts)
    if not tokens:
        return Spend(tokens, None)
    estimated = estimate_or_why(found, provider=provider_of(transcript), when=when)
    if isinstance(estimated, Cost):
        return Spend(tokens, estimated)
    return Spend(tokens, None, no_cost_said(tokens, estimated))


def session_cost(
    transcript: Transcript, when: datetime | None = None, *, found: Priced | None = None
) -> Cost | None:
    """The session's cost: the one its source recorded, with its sub-agents' where that one
    leaves them out (:func:`with_subagents`), else an estimate of its tokens (``found``: its
    responses, when the caller has found them already); None where
    :func:`session_cost_or_why` says why there is none."""
    cost = session_cost_or_why(transcript, when, found=found)
    return cost if isinstance(cost, Cost) else None


def session_cost_or_why(
    transcript: Transcript, when: datetime | None = None, *, found: Priced | None = None
) -> Cost | NoCost:
    """:func:`session_cost`, else why there is none (:class:`NoCost`), for the header to say."""
    recorded = recorded_cost(transcript)
    if recorded is not None:
        return with_subagents(transcript, recorded, when)
    if found is None:
        found = session_responses(transcript)
    return estimate_or_why(found, provider=provider_of(transcript), when=when)


def session_responses(transcript: Transcript) -> Priced:
    """What a session's estimate prices: its sub-agents' responses
    (:func:`responses_apart`), and its own within the total its source recorded
    (:func:`within_session_total`)."""
    delegated, own = responses_apart(transcript.entries, default_model(transcript))
    return delegated + within_session_total(transcript, own)


def within_session_total(transcript: Transcript, own: list[tuple[str | None, Tokens]]) -> Priced:
    """The session's own responses ``own``, priced within the total its source recorded for
    them (``metadata["usage"]``), which the header counts (U-1): a VS Code Copilot session
    records each message's output alone, its input only in the shutdown's total. Where the
    total and the responses agree on every count a price is put on, the responses as they are
    (Codex). Else each model's responses within its part of the total
    (``metadata["usage_by_model"]``, when its parts add up to the total), or all of them
    within the whole as the session's one model's (:func:`within_recorded`); the responses of
    several models with no split leave a part no model is known to have spent, which no
    estimate prices (U-2), and which says so (:data:`Spender`)."""
    if transcript.metadata.get("usage_lower_bound") is True:
        return list(own)  # a total that leaves some responses' output out prices none of it
    recorded = transcript.metadata.get("usage")
    total = counts_of(recorded) if isinstance(recorded, Mapping) else {}
    summed: Tokens = {}
    for _, counts in own:
        add_into(summed, counts)
    if all(total.get(name, 0) == summed.get(name, 0) for name in COUNTS if name in total):
        return list(own)
    split = _usage_by_model(transcript, total)
    if split is not None:
        parts: Priced = []
        for model, counts in split.items():
            parts += within_recorded(counts, [r for r in own if r[0] == model], model, session=True)
        return parts
    models = {model for model, _ in own} or _named_models(transcript)
    named = frozenset(model for model in models if model is not None)
    # One model; else the several, unless a response names none (then no model is known).
    spender: Spender = models.pop() if len(models) == 1 else named if None not in models else None
    return within_recorded(total, own, spender, session=True)


def _usage_by_model(transcript: Transcript, total: Tokens) -> dict[str, Tokens] | None:
    """The split of the session's recorded ``total`` by model, as its reader records it; None
    for none, or for one whose parts do not add up to the total (which of them to believe is
    not known)."""
    recorded = transcript.metadata.get("usage_by_model")
    if not isinstance(recorded, Mapping) or not recorded:
        return None
    split = {str(model): counts_of(c) for model, c in recorded.items() if isinstance(c, Mapping)}
    summed: Tokens = {}
    for counts in split.values():
        add_into(summed, counts)
    if any(summed.get(name, 0) != total.get(name, 0) for name in COUNTS):
        return None
    return split


def _named_models(transcript: Transcript) -> set[str | None]:
    """The models the session names where no response records usage (a total alone)."""
    named: set[str | None] = {model for e in transcript.entries if (model := _named_model(e))}
    return named or {default_model(transcript)}


def _shares(tokens: Tokens, requests: int) -> list[Tokens]:
    """``tokens`` spread evenly over ``requests``, each count's parts within their whole in
    every share (the table refuses more cached than input tokens), the shares adding up to
    ``tokens``.

    >>> for share in _shares({"input_tokens": 5, "cache_read_tokens": 3, "output_tokens": 1}, 2):
    ...     print(share)
    {'input_tokens': 3, 'output_tokens': 1, 'cache_read_tokens': 2}
    {'input_tokens': 2, 'output_tokens': 0, 'cache_read_tokens': 1}
    """
    read, written = tokens.get("cache_read_tokens", 0), tokens.get("cache_write_tokens", 0)
    hour = tokens.get("cache_write_1h_tokens", 0)
    fresh, briefly = tokens.get("input_tokens", 0) - read - written, written - hour
    if requests == 1 or fresh < 0 or briefly < 0:
        return [dict(tokens)]  # one request: counts the table refuses, it says so
    parts = {"fresh": fresh, "read": read, "briefly": briefly, "hour": hour,
             "output": tokens.get("output_tokens", 0)}  # fmt: skip
    shares = []
    for i in range(requests):
        each = {name: count // requests + (i < count % requests) for name, count in parts.items()}
        whole = {
            "input_tokens": each["fresh"] + each["read"] + each["briefly"] + each["hour"],
            "output_tokens": each["output"],
            "cache_read_tokens": each["read"],
            "cache_write_tokens": each["briefly"] + each["hour"],
            "cache_write_1h_tokens": each["hour"],
        }
        shares.append({name: count for name, count in whole.items() if name in tokens})
    return shares


def recorded_cost(transcript: Transcript) -> float | None:
    """The cost ``transcript``'s source recorded (``metadata["cost_usd"]``), None for none or
    for one that is no cost (negative, not finite)."""
    recorded = transcript.metadata.get("cost_usd")
    if isinstance(recorded, (int, float)) and not isinstance(recorded, bool):  # noqa: SIM102
        if math.isfinite(recorded) and recorded >= 0:
            return float(recorded)
    return None


def with_subagents(
    transcript: Transcript, own: float, when: datetime | None = None, *, _depth: int = 0
) -> Cost | NoCost:
    """A recorded cost ``own`` that covers the tokens the session's header counts (U-1): as
    recorded, unless the reader says it is the session's own alone
    (``metadata["cost_includes_subagents"] = False``); then each sub-agent's is added, the
    cost its source recorded for it (its own sub-agents' by the same rule), else an estimate
    of its tokens (which makes the sum an estimate, ``≈``). Where a sub-agent's cost is
    neither (a model no price table knows, tokens recorded under no call), why
    (:class:`NoCost`): a cost that leaves a sub-agent out is not the session's (U-2)."""
    if transcript.metadata.get("cost_includes_subagents") is not False:
        return Cost(own, True)
    if unattributed_subagent_tokens(transcript):
        return NoCost("subagent_unpriced")
    # Read by recursion, some three frames a level: a chain of recorded costs deeper than
    # this is no cost but says why ("sub-agents nested too deep"), as its tokens still count.
    if _depth > 64:
        return NoCost("subagents_too_deep")
    total, recorded = own, True
    for call in transcript.entries:
        if not (isinstance(call, ToolCall) and call.subagent and has_subagent_tokens(call)):
            continue
        child = call.subagent.transcript
        child_cost = recorded_cost(child) if child is not None else None
        if child is not None and child_cost is not None:
            part = with_subagents(child, child_cost, when, _depth=_depth + 1)
        else:
            # The sub-agent's responses, not the call's own (it carries its response's usage).
            spent, _ = responses_apart([call], default_model(transcript))
            if not any(any(counts.values()) for _, counts in spent):
                continue  # a sub-agent that spent nothing costs nothing
            part = estimate_or_why(spent, provider=provider_of(transcript), when=when)
        if isinstance(part, NoCost):
            return part
        total += part.usd
        recorded = recorded and part.recorded
    if recorded:
        return Cost(total, True)
    return Cost(total, False, table_version(), _day(when))


def format_usd(usd: float) -> str:
    """A cost as a header shows it: cents for most, more digits below a cent.

    >>> format_usd(0.2134), format_usd(0.00315), format_usd(12.5), format_usd(0.0000368)
    ('0.21', '0.00315', '12.50', '0.0000368')
    """
    if usd >= 0.01 or usd == 0:
        return f"{usd:.2f}"
    # Three significant digits, written out: ``.3g`` turns to ``3.68e-05`` below 0.0001.
    return format(Decimal(f"{usd:.3g}"), "f")


__all__ = [
    "PRICE_TABLE_INSTALL",
    "PROVIDERS",
    "SUBAGENT_MODEL",
    "Cost",
    "NoCost",
    "Priced",
    "Reason",
    "Spend",
    "Spender",
    "default_model",
    "entries_cost",
    "estimate",
    "estimate_or_why",
    "format_usd",
    "no_cost_said",
    "price_table_installed",
    "provider_of",
    "recorded_cost",
    "responses_apart",
    "responses_by_model",
    "session_cost",
    "session_cost_or_why",
    "session_responses",
    "spend_of",
    "subagent_model",
    "with_subagents",
    "within_recorded",
    "within_session_total",
]
