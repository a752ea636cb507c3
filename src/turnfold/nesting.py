"""How deep sub-agents nest under their calls (spec F-7): one bound for every reader and the view.

A sub-agent's transcript nests under the call that ran it, its own sub-agents under theirs, and
the view builds each level inside its parent's by recursion, ten to sixteen frames a level (a
widget's the most): a widget of a chain 65 deep reached Python's default limit of 1,000. So
:data:`MAX_DEPTH` levels nest, and no more, wherever a transcript comes from:

- a reader that nests sub-agents' sessions or journals reads down to that level and names each
  one deeper in a warning (:func:`too_deep`), saying where it loads on its own;
- the view draws any transcript (one built through the public model, a reader's that nests
  deeper) down to that level; a call there shows its sub-agent's line and result, not its
  steps, and one warning in the view's notice counts what is not shown (:func:`cut_warning`).

>>> from turnfold.model import SubAgent, ToolCall, Transcript
>>> top = inner = Transcript()
>>> for _ in range(MAX_DEPTH + 3):
...     child = Transcript()
...     _ = inner.append(ToolCall(call_id="t", name="Task", subagent=SubAgent(transcript=child)))
...     inner = child
>>> print(cut_warning([cut_under(top.entries, top)]))
(t): sub-agents nest 34 deep, past the 32 that nest under their calls: 2 sub-agents deeper \
(2 entries) are not shown; the call at level 32 that runs one shows its line and result
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from turnfold.model import Entry, LoadWarning, ToolCall, Transcript, printable

#: How many sub-agents deep a transcript's sub-agents nest under their calls: the top-level
#: transcript is level 0, the sub-agents its calls run level 1, and the calls of a level-32
#: sub-agent run none nested. 32 levels take a widget's recursion to some 550 frames of Python's
#: default limit of 1,000: the rest is the notebook's own stack (a kernel, a cell, a display
#: hook). The tests build views of chains 2,000 deep under a lowered limit to keep it so.
MAX_DEPTH = 32


def too_deep(what: str, depth: int, instead: str) -> str:
    """What a reader's warning says of a sub-agent it does not nest: ``what`` names it, ``depth``
    is the level it would nest at, ``instead`` says how to load it on its own (or, where it
    cannot be, what of it is left unread).

    >>> too_deep("sub-agent session s2 of session s1", 33, "sample='s2' loads it")
    "sub-agent session s2 of session s1 is 33 sub-agents deep, past the 32 that nest under \
their calls: not shown here; sample='s2' loads it"
    """
    return (f"{what} is {depth} sub-agents deep, past the {MAX_DEPTH} that nest under their "
            f"calls: not shown here; {instead}")  # fmt: skip


def runs(entries: Iterable[Entry]) -> list[tuple[ToolCall, Transcript]]:
    """Each call among ``entries`` that runs a sub-agent with steps, and that sub-agent's
    transcript."""
    # One comprehension: a view's notice asks it of every entry of a turn planned anew.
    return [
        (entry, child)
        for entry in entries
        if isinstance(entry, ToolCall)
        and entry.subagent is not None
        and (child := entry.subagent.transcript)  # an empty one nests nothing, as the view draws
    ]


@dataclass(frozen=True)
class Cut:
    """What a view leaves out of the sub-agents some calls of a top-level transcript run (a
    turn's), and which it draws: it holds counts, ids and the transcripts the turn holds
    anyway, so a view may keep it as long as the turn."""

    calls: int = 0
    """The calls at level :data:`MAX_DEPTH` whose sub-agent's steps are not drawn."""
    first: str | None = None
    """The source's id of the first of them."""
    agents: int = 0
    """The sub-agents no level drawn shows, each once."""
    entries: int = 0
    """Their entries."""
    deepest: int = 0
    """The level the deepest of them nests at."""
    drawn: tuple[tuple[str, Transcript], ...] = field(default=(), compare=False)
    """Each sub-agent the view draws (levels 1 to :data:`MAX_DEPTH`), once, in reading order,
    with whose it is (:func:`whose`): the notice lists their load warnings
    (:func:`subagent_warnings`). The transcripts, not their warnings: a live sub-agent's
    reader may warn of a line that adds no entry, which plans no turn anew."""


def cut_under(entries: Iterable[Entry], top: Transcript) -> Cut:
    """What the view of the top-level transcript ``top`` leaves out under the calls among
    ``entries`` (its own: level 0).

    Walked without recursion, each transcript once per level it is drawn at (two calls running
    one transcript draw it twice; one that runs itself is drawn down to the bound), what no
    level shows counted once, at the shallowest level it nests.
    """
    drawn = {id(top)}
    shown: list[tuple[str, Transcript]] = []  # the drawn ones, each once, for their warnings
    visited: set[tuple[int, int]] = set()
    cut: list[tuple[ToolCall, Transcript]] = []
    todo = [(call, child, 1) for call, child in reversed(runs(entries))]  # popped in order
    shown += _stepless(entries, drawn)
    while todo:
        call, current, level = todo.pop()
        if (id(current), level) in visited:
            continue
        visited.add((id(current), level))
        if id(current) not in drawn:  # the top itself (a call that runs it) warns as the top
            drawn.add(id(current))
            shown.append((whose(call), current))
        found = runs(current.entries)
        if level == MAX_DEPTH:
            cut += found
        else:
            todo += [(inner, child, level + 1) for inner, child in reversed(found)]
            shown += _stepless(current.entries, drawn)
    if not cut:
        return Cut(drawn=tuple(shown))
    agents = total = deepest = 0
    hidden: set[int] = set()
    queue = deque((child, MAX_DEPTH + 1) for _, child in cut)
    while queue:
        current, level = queue.popleft()
        if id(current) in drawn or id(current) in hidden:
            continue
        hidden.add(id(current))
        agents, total, deepest = agents + 1, total + len(current.entries), level
        queue.extend((child, level + 1) for _, child in runs(current.entries))
    calls = len({id(call) for call, _ in cut})
    return Cut(calls, cut[0][0].call_id or None, agents, total, deepest, tuple(shown))


def notice_warnings(
    transcript: Transcript, cuts: Sequence[Cut]
) -> tuple[list[LoadWarning], list[tuple[str, list[LoadWarning]]], int]:
    """What the notice of a view of ``transcript`` (its turns' ``cuts``) holds: the view's own
    warnings (what it leaves out of sub-agents nested too deep, :func:`cut_warning`, first, then
    the top-level transcript's), each drawn sub-agent's with whose they are
    (:func:`subagent_warnings`), and how many it counts, listed or not. The view's notice and
    :func:`warning_total` both count by it, so a corpus row says the number its view does."""
    cut = cut_warning(cuts)
    own = transcript.warnings if cut is None else [cut, *transcript.warnings]
    nested = subagent_warnings(cuts, own)
    if not own and not nested:
        return own, nested, 0
    # Only here: a transcript with warnings was loaded, so the loaders are imported already
    # (one cut by the view alone pays for the import).
    from turnfold.formats.source import warning_count  # what counts a list past its listed

    count = warning_count(own) + sum(warning_count(warnings) for _, warnings in nested)
    return own, nested, count


def warning_total(transcript: Transcript) -> int:
    """How many warnings the notice of a view of ``transcript`` counts, listed or not
    (:func:`notice_warnings`). A corpus row counts this, the number its view says
    (``Transcript.warnings`` holds the top-level transcript's own)."""
    return notice_warnings(transcript, [cut_under(transcript.entries, transcript)])[2]


def _stepless(entries: Iterable[Entry], drawn: set[int]) -> list[tuple[str, Transcript]]:
    """The sub-agents the calls among ``entries`` run whose transcripts hold no entry, not
    yet in ``drawn`` (and now in it), with whose they are: none nests (:func:`runs`), but its
    call's line is drawn, and a sub-agent file whose every line is bad leaves just that and
    its warnings."""
    found = [
        (entry, child)
        for entry in entries
        if isinstance(entry, ToolCall)
        and entry.subagent is not None
        and (child := entry.subagent.transcript) is not None
        and not child
        and id(child) not in drawn
    ]
    drawn.update(id(child) for _, child in found)
    return [(whose(call), child) for call, child in found]


#: How much of each name or id :func:`whose` keeps: they are the source's (X-1), one line.
_NAMED = 80


def whose(call: ToolCall) -> str:
    """Whose a sub-agent is, as its warnings say it: its name and agent id where the source
    records them, then the id of the call that ran it in brackets (the source's, else the
    entry's own, which a call in a transcript always has).

    >>> from turnfold.model import SubAgent
    >>> whose(ToolCall(call_id="toolu_1", subagent=SubAgent(name="Explore", agent_id="a1")))
    'Explore a1 (toolu_1)'
    """
    agent = call.subagent
    names = [] if agent is None else [agent.name, agent.agent_id]
    said = [name[:_NAMED] for name in dict.fromkeys(names) if name and name.strip()]
    called = call.call_id or call.id
    if called:
        said.append(f"({called[:_NAMED]})")
    # Read on a terminal too (the text outline's notice): an escape in a name is shown.
    return printable(" ".join(said))


def subagent_warnings(
    cuts: Iterable[Cut], own: Sequence[LoadWarning]
) -> list[tuple[str, list[LoadWarning]]]:
    """The load warnings of the sub-agents a view draws (each turn's :class:`Cut`, in reading
    order), each sub-agent's once, with whose they are: what its reader warned of (a bad line
    of its own file or steps) lands in its own transcript's ``warnings``, which the notice of
    the top-level transcript, ``own`` its warnings, lists after them.

    Some readers also join a sub-agent's warnings to its caller's list (the same objects, or
    equal ones once a dump is loaded again): a sub-agent any of whose warnings ``own`` or one
    listed before holds, listed or counted past the listed ones (:func:`_held`), was reported
    there, so none of its are listed or counted again.
    """
    seen = _held(own)
    done: set[int] = set()
    found: list[tuple[str, list[LoadWarning]]] = []
    for cut in cuts:
        for who, transcript in cut.drawn:
            warnings = transcript.warnings
            if not warnings or id(transcript) in done:
                continue
            done.add(id(transcript))
            reported = any(_problem(warning) in seen for warning in warnings)
            # Reported or listed now, all it holds is: its own sub-agents' joined to it too.
            seen |= _held(warnings)
            if not reported:
                found.append((who, list(warnings)))
    return found


def _held(warnings: Sequence[LoadWarning]) -> set[tuple[object, ...]]:
    """The problems (:func:`_problem`) ``warnings`` lists and those joined to its count from
    other lists (``UnlistedWarnings.joined``): a sub-agent's warnings joined to a list already
    full are only counted in it, and would be counted again as the sub-agent's own."""
    held: set[tuple[object, ...]] = set()
    walked: set[int] = set()
    todo = list(warnings)
    while todo:  # down the chain of counts (each holds the one it replaced), with no stack
        warning = todo.pop()
        if id(warning) not in walked:
            walked.add(id(warning))
            held.add(_problem(warning))
            # By attribute: the loaders' module is imported only with a load.
            todo += getattr(warning, "joined", ())
    return held


def _problem(warning: LoadWarning) -> tuple[object, ...]:
    """What tells one problem from another: the same reason at the same place of the same
    file is one problem, whichever object says it. A reader's copy is the same object; a dump
    loaded again makes the copy an equal one (it counted twice before)."""
    count = getattr(warning, "count", None)
    return (type(warning), warning.reason, warning.line, warning.source, warning.record, count)


def copies_counted(transcript: Transcript) -> dict[int, list[LoadWarning]]:
    """What :func:`subagent_warnings` reads of the counts of warnings (``UnlistedWarnings``)
    the lists of ``transcript`` and of its sub-agents hold, for a dump to write with each count
    (keyed by its id): one warning of each sub-agent's list that the count holds through the
    chain it joined (:func:`_held`), and no more.

    The chain is objects of the load, one count or warning for each list joined: a load of
    many parts may join thousands, and a dump loaded again would hold none of them, so that a
    sub-agent's copies counted in a full list were counted again as its own. One warning of a
    sub-agent's list is enough to know it by (the notice asks whether any is held), and its
    list is written whole in the dump anyway: a count writes at most one more warning for
    each sub-agent, however long its chain, in the order the sub-agents nest.
    """
    nested: dict[int, Transcript] = {}  # each sub-agent's transcript once, in reading order
    for call in transcript.tool_calls(nested=True):
        child = call.subagent.transcript if call.subagent is not None else None
        if child is not None and child.warnings and child is not transcript:
            nested.setdefault(id(child), child)
    # Where each problem of a sub-agent's list is: which list, and its place in it.
    lists = list(nested.values())
    places: dict[tuple[object, ...], list[tuple[int, int, LoadWarning]]] = {}
    for index, child in enumerate(lists):
        for place, warning in enumerate(child.warnings):
            places.setdefault(_problem(warning), []).append((index, place, warning))
    copies: dict[int, list[LoadWarning]] = {}
    if not places:
        return copies
    for owner, current in enumerate((transcript, *lists), -1):
        for count in current.warnings:
            joined = getattr(count, "joined", ())
            if joined and id(count) not in copies:
                # Not its own list's: that is written beside it, and the notice asks of a
                # sub-agent before it reads its list (a dump's list read again is joined
                # through a new count, which holds the one read: the list's own problems).
                copies[id(count)] = _one_of_each(_held(joined), places, owner)
    return {key: found for key, found in copies.items() if found}


def _one_of_each(
    held: set[tuple[object, ...]],
    places: dict[tuple[object, ...], list[tuple[int, int, LoadWarning]]],
    owner: int,
) -> list[LoadWarning]:
    """The first warning of each sub-agent's list (``places``, :func:`copies_counted`) but the
    ``owner``'s that ``held`` holds, unless one already taken says the same: the lists it is
    found in are known by it as well."""
    matched: dict[int, list[tuple[int, LoadWarning]]] = {}
    for problem in held.intersection(places):
        for index, place, warning in places[problem]:
            if index != owner:
                matched.setdefault(index, []).append((place, warning))
    taken: list[LoadWarning] = []
    said: set[tuple[object, ...]] = set()
    for index in sorted(matched):  # the order of the lists, not of a set: a dump is the same
        found = sorted(matched[index], key=lambda placed: placed[0])
        if not any(_problem(warning) in said for _, warning in found):
            taken.append(found[0][1])
            said.add(_problem(found[0][1]))
    return taken


def cut_warning(cuts: Iterable[Cut]) -> LoadWarning | None:
    """The warning a view shows when its sub-agents nest deeper than :data:`MAX_DEPTH`, from
    what it leaves out under each turn (:func:`cut_under`, in reading order): how deep they go,
    how many sub-agents and entries are not shown, and the calls where the nesting stops (the
    first one's id as the record). None when nothing is cut.

    The view summarises what is deeper rather than drawing it flat at the last level: drawn
    there, the turns of many agents would follow each other in one fold with nothing to say
    whose they are, and each key names the chain of calls above it (P-10), so a file thousands
    of levels deep would make a view of gigabytes. The call at the last level still shows its
    sub-agent's line and the result it handed back, what its caller read.
    """
    found = [cut for cut in cuts if cut.calls]
    if not found:
        return None
    calls = sum(cut.calls for cut in found)
    agents = sum(cut.agents for cut in found)
    entries = sum(cut.entries for cut in found)
    deepest = max(cut.deepest for cut in found)
    at_bound = f"at level {MAX_DEPTH} that {'runs' if calls == 1 else 'run'}"
    shown = f"{'the call' if calls == 1 else f'the {calls:,} calls'} {at_bound}"
    if not agents:  # every call cut runs a transcript drawn above it: one that holds itself
        reason = (
            f"sub-agents nest in a circle (a transcript runs itself, or one it is nested "
            f"in): drawn down to level {MAX_DEPTH}, the last that nests under its call; "
            f"{shown} it again {'shows' if calls == 1 else 'show'} its line and result"
        )
    else:
        reason = (
            f"sub-agents nest {deepest:,} deep, past the {MAX_DEPTH} that nest under their "
            f"calls: {_counted(agents, 'sub-agent')} deeper "
            f"({_counted(entries, 'entry', 'entries')}) {'is' if agents == 1 else 'are'} "
            f"not shown; {shown} one {'shows its' if calls == 1 else 'show their'} line "
            "and result"
        )
    return LoadWarning(reason=reason, record=found[0].first)


def _counted(count: int, one: str, other: str | None = None) -> str:
    """``count`` things, named in the singular or the plural."""
    return f"{count:,} {one if count == 1 else other or one + 's'}"


__all__ = [
    "MAX_DEPTH",
    "Cut",
    "copies_counted",
    "cut_under",
    "cut_warning",
    "notice_warnings",
    "runs",
    "subagent_warnings",
    "too_deep",
    "warning_total",
    "whose",
]
