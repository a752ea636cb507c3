"""Two runs side by side: which turns correspond, and what changed between them (spec B-3).

Pure, like the projection it reads: no widget, no display. :mod:`turnfold.render.compare_view`
draws what this module finds, and ``turnfold.compare`` (:mod:`turnfold.compare_widget`) shows it.

**Two transcripts.** Each side is cut into *blocks* (:func:`blocks_of`): a user's prompt and
everything until the next prompt. Blocks are aligned by their prompts (:func:`align`) with a
sequence alignment that tolerates prompts inserted, dropped and edited:

1. prompts that are equal once case and whitespace are ignored are matched first, the way a diff
   matches lines (patience diff): the equal head and tail, then, as anchors, the prompts that
   occur once on each side, in order; then the same again between the anchors;
2. between anchors, what is left is matched by similarity (the Jaccard index of the prompts'
   words, a CJK character counting as a word) where it reaches :data:`MATCH_THRESHOLD`: of the
   chains of such matches in order, the one with the greatest total similarity;
3. what is left between two matches is paired by its place, as a side-by-side diff pairs the
   lines of a changed hunk: a pair is a prompt and the turns that answered it (B-3), so the
   same task worded otherwise (two agents' prompts, a retry, "go on" against "continue") stays
   one pair, whose header says the prompt differs; the rest of the longer side has no
   counterpart: a gap on the other side.

A prompt the source does not record (:func:`~turnfold.formats.common.prompt_not_recorded`)
has no words to match: it equals no prompt, not even another unrecorded one, and is paired by
its place alone. So is the prompt of a turn the transcript holds no prompt for at all (a run of
OpenCode's ``run --format json`` or Cline's ``--json``, which print the run, not what asked for
it): no prompt recorded is not an empty prompt, nor another one. Paired by its place, it has
a prompt slot to pair; a block with no prompt whose turns hold only errors (a run that failed
before any turn began) has none (:attr:`Block.prompt_slot`): it is paired with nothing, first
(:func:`align_blocks`), and the other run's first prompt has no counterpart; two such blocks,
one on each side, are one pair.

A block with neither a prompt nor a turn (a run that is only a notice: a login that failed, a
session that never began) is no turn at all: it is not aligned with the other run's prompts,
whose first it would otherwise be paired with as "another prompt", but shown on its side as the
notice it is, a pair of its own (:attr:`AlignedPair.notices`) that the summary counts apart.

Step 2 compares every pair of a stretch of up to :data:`SIMILARITY_BUDGET` pairs; in a longer
stretch (two unrelated runs of thousands of prompts) each prompt is compared with those near the
same relative position on the other side only, so an alignment never costs more than about that
many comparisons. The result is deterministic.

Each aligned pair's differences come from the facts of its two blocks (:func:`block_facts`),
read with the definitions the turn headers, the session header and the corpus rows use
(:func:`~turnfold.process.segment_header`, :func:`~turnfold.process.recorded_duration_ms`,
:func:`~turnfold.process.segment_answer`, :func:`~turnfold.usage.tokens_spent`). Two runs of
different agents (H-6's ``agent``) name their tools apart (Claude Code's ``Read``, Codex's
``exec_command``, Gemini CLI's ``read_file``): their calls are compared by category (F-1), the
names kept beside each count. A turn's tokens are a turn's only where the source records them
per response (:func:`~turnfold.usage.records_tokens_per_turn`); else a pair says they are not
recorded per turn.

**Two corpora** (:func:`compare_rows`): rows are joined by a key (by default an eval sample's
task, id and epoch, else the row's sample or file name); the pairs whose outcome or score
changed are listed, regressions first, with each side's totals, then the samples only one corpus
holds (:class:`LoneRow`), whose run is shown on its side alone.

What is compared comes from :func:`open_run`, the one part that reads files: a transcript, or
a corpus for a folder or an eval log of several samples.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeAlias

from turnfold.model import (
    FAILED_STATUSES,
    AssistantError,
    Entry,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.process import (
    PlannedItem,
    Segment,
    TurnStatus,
    plan_projection,
    recorded_duration_ms,
    segment_answer,
    segment_header,
)
from turnfold.session import agent_name
from turnfold.settings import DisplaySettings, SettingsSnapshot
from turnfold.tools import ToolCategory, display_name, tool_category
from turnfold.usage import Tokens, add_into, records_tokens_per_turn, tokens_spent, total_of

if TYPE_CHECKING:
    from turnfold.corpus import Corpus

#: Two different prompts are the same prompt edited when their similarity reaches this.
MATCH_THRESHOLD = 0.5
#: Characters of a prompt its similarity is read from (a pasted file is not compared whole).
SIMILARITY_CHARS = 2_000
#: Prompt comparisons one stretch of unmatched prompts may cost (see the module docstring).
SIMILARITY_BUDGET = 60_000

# --- prompts ------------------------------------------------------------------------------------

#: Scripts written without spaces between words: each character is a word of its own.
_WIDE = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORDS = re.compile(f"[{_WIDE}]|[^\\W_{_WIDE}]+")


def normal_prompt(text: str) -> str:
    """``text`` with case and runs of whitespace ignored: two prompts equal so are one prompt.

    >>> normal_prompt("  Fix the\\n  bug ")
    'fix the bug'
    """
    return " ".join(text.split()).casefold()


def prompt_words(text: str) -> frozenset[str]:
    """The words a prompt's similarity is read from (its first :data:`SIMILARITY_CHARS`).

    >>> sorted(prompt_words("Fix the bug in foo.py")), sorted(prompt_words("修复错误"))
    (['bug', 'fix', 'foo', 'in', 'py', 'the'], ['修', '复', '误', '错'])
    """
    return frozenset(_WORDS.findall(text[:SIMILARITY_CHARS].casefold()))


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """The Jaccard index of two prompts' words: 1.0 for the same words, 0.0 for none shared.

    >>> similarity(prompt_words("Fix the bug in foo.py"), prompt_words("Fix the bug in bar.py"))
    0.7142857142857143
    """
    if not a and not b:
        return 1.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


# --- alignment ----------------------------------------------------------------------------------


class Pair(NamedTuple):
    """One row of an alignment: the index of a prompt on each side, None for a gap, and how
    similar the two prompts are (1.0 equal, at least :data:`MATCH_THRESHOLD` for a prompt
    edited, less for two prompts paired by their place; 0.0 for a gap or a prompt not
    recorded)."""

    a: int | None
    b: int | None
    similarity: float


_Stretch: TypeAlias = tuple[int, int, int, int]  # a[i0:i1] against b[j0:j1]


def align(a: Sequence[str | None], b: Sequence[str | None]) -> list[Pair]:
    """The alignment of two sequences of prompts, in reading order (see the module docstring);
    None is a prompt the source does not record.

    Where a stretch leaves prompts of both sides unmatched, they pair by their place, and the
    rest of the longer side are gaps.

    >>> for pair in align(["plan", "build", "test"], ["plan", "build it", "lint", "test"]):
    ...     print(pair)
    Pair(a=0, b=0, similarity=1.0)
    Pair(a=1, b=1, similarity=0.5)
    Pair(a=None, b=2, similarity=0.0)
    Pair(a=2, b=3, similarity=1.0)
    >>> [(p.a, p.b) for p in align(["fix the bug", "go on"], [None, "continue", "and test"])]
    [(0, 0), (1, 1), (None, 2)]
    """
    return _Aligner(a, b).run()


def _keys(prompts: Sequence[str | None]) -> list[Hashable]:
    """The prompts as compared for equality; a prompt not recorded is a key of its own, equal
    to no other."""
    return [normal_prompt(text) if text is not None else object() for text in prompts]


class _Aligner:
    def __init__(self, a: Sequence[str | None], b: Sequence[str | None]) -> None:
        self.texts = (a, b)
        self.keys = (_keys(a), _keys(b))
        self._words: tuple[dict[int, frozenset[str]], dict[int, frozenset[str]]] = ({}, {})

    def run(self) -> list[Pair]:
        out: list[Pair] = []
        # Work in reading order: a stretch still to align is replaced by its parts, in place.
        stack: list[_Stretch | Pair] = [(0, len(self.keys[0]), 0, len(self.keys[1]))]
        while stack:
            work = stack.pop()
            if isinstance(work, Pair):
                out.append(work)
            else:
                stack.extend(reversed(self._split(*work)))
        return out

    def _split(self, i0: int, i1: int, j0: int, j1: int) -> list[_Stretch | Pair]:
        """A stretch as its equal head, what lies between, and its equal tail."""
        ka, kb = self.keys
        head: list[_Stretch | Pair] = []
        while i0 < i1 and j0 < j1 and ka[i0] == kb[j0]:
            head.append(Pair(i0, j0, 1.0))
            i0, j0 = i0 + 1, j0 + 1
        tail: list[_Stretch | Pair] = []
        while i0 < i1 and j0 < j1 and ka[i1 - 1] == kb[j1 - 1]:
            i1, j1 = i1 - 1, j1 - 1
            tail.append(Pair(i1, j1, 1.0))
        tail.reverse()
        if i0 == i1 or j0 == j1:
            return [*head, *self._by_place(i0, i1, j0, j1), *tail]
        anchors = _increasing(_common_once(ka, i0, i1, kb, j0, j1))
        if not anchors:
            return [*head, *self._by_similarity(i0, i1, j0, j1), *tail]
        middle: list[_Stretch | Pair] = []
        for i, j in anchors:
            middle += [(i0, i, j0, j), Pair(i, j, 1.0)]
            i0, j0 = i + 1, j + 1
        return [*head, *middle, (i0, i1, j0, j1), *tail]

    def words(self, side: int, index: int) -> frozenset[str] | None:
        """A prompt's words; None for one not recorded."""
        text = self.texts[side][index]
        if text is None:
            return None
        cache = self._words[side]
        found = cache.get(index)
        if found is None:
            found = cache[index] = prompt_words(text)
        return found

    def similarity(self, i: int, j: int) -> float:
        """How similar prompt ``i`` of ``a`` and ``j`` of ``b`` are; 0.0 if one is not recorded."""
        words_a, words_b = self.words(0, i), self.words(1, j)
        return similarity(words_a, words_b) if words_a is not None and words_b is not None else 0.0

    def _by_place(self, i0: int, i1: int, j0: int, j1: int) -> list[_Stretch | Pair]:
        """Prompts no match paired: in order, by their place; those left over are gaps."""
        count = min(i1 - i0, j1 - j0)
        placed: list[_Stretch | Pair] = [
            Pair(i0 + n, j0 + n, self.similarity(i0 + n, j0 + n)) for n in range(count)
        ]
        return placed + _unmatched(i0 + count, i1, j0 + count, j1)

    def _by_similarity(self, i0: int, i1: int, j0: int, j1: int) -> list[_Stretch | Pair]:
        """A stretch with no equal prompt to anchor on, matched by similarity."""
        n, m = i1 - i0, j1 - j0
        # Beyond the budget, each prompt meets those near its relative position only.
        reach = m if n * m <= SIMILARITY_BUDGET else max(1, SIMILARITY_BUDGET // (2 * n))
        candidates: list[tuple[int, int, float]] = []
        for i in range(i0, i1):
            centre = j0 + (i - i0) * m // n
            if self.words(0, i) is None:
                continue  # not recorded: paired by its place only
            for j in range(max(j0, centre - reach), min(j1, centre + reach + 1)):
                score = self.similarity(i, j)
                if score >= MATCH_THRESHOLD:
                    candidates.append((i, j, score))
        out: list[_Stretch | Pair] = []
        for i, j, score in _heaviest_chain(candidates, j0, j1):
            out += [*self._by_place(i0, i, j0, j), Pair(i, j, score)]
            i0, j0 = i + 1, j + 1
        return [*out, *self._by_place(i0, i1, j0, j1)]


def _unmatched(i0: int, i1: int, j0: int, j1: int) -> list[_Stretch | Pair]:
    """Prompts with no counterpart: those of ``a``, then those of ``b``."""
    alone: list[_Stretch | Pair] = [Pair(i, None, 0.0) for i in range(i0, i1)]
    return alone + [Pair(None, j, 0.0) for j in range(j0, j1)]


def _once(keys: list[Hashable], start: int, stop: int) -> dict[Hashable, int]:
    """The keys that occur once in ``keys[start:stop]``, with their index, in order."""
    seen: dict[Hashable, int] = {}
    repeated: set[Hashable] = set()
    for index in range(start, stop):
        key = keys[index]
        if key in seen:
            repeated.add(key)
        else:
            seen[key] = index
    return {key: index for key, index in seen.items() if key not in repeated}


def _common_once(
    ka: list[Hashable], i0: int, i1: int, kb: list[Hashable], j0: int, j1: int
) -> list[tuple[int, int]]:
    """Where each prompt that occurs once on both sides is, in ``a``'s order."""
    in_b = _once(kb, j0, j1)
    return [(i, in_b[key]) for key, i in _once(ka, i0, i1).items() if key in in_b]


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``pairs`` (ordered by their first number) whose second numbers
    increase too: the anchors of a patience diff, found by patience sorting."""
    tails: list[int] = []  # tails[k]: the least second number ending a run of k + 1
    ends: list[int] = []  # the index in ``pairs`` of that end
    back = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        k = bisect_left(tails, j)
        if k:
            back[index] = ends[k - 1]
        if k == len(tails):
            tails.append(j)
            ends.append(index)
        else:
            tails[k], ends[k] = j, index
    run: list[tuple[int, int]] = []
    index = ends[-1] if ends else -1
    while index >= 0:
        run.append(pairs[index])
        index = back[index]
    return run[::-1]


def _heaviest_chain(
    candidates: list[tuple[int, int, float]], j0: int, j1: int
) -> list[tuple[int, int, float]]:
    """Of the chains of ``candidates`` (ordered by ``i``) increasing in both ``i`` and ``j``,
    the one of greatest total similarity; the earliest such chain on a tie.

    A Fenwick tree over ``j`` holds the best chain ending at or before each column, so the
    search costs ``len(candidates) * log(j1 - j0)``. The candidates of one ``i`` are all scored
    before any is added: two prompts of ``a`` never share a counterpart.
    """
    size = j1 - j0
    tree_score = [0.0] * (size + 1)
    tree_end = [-1] * (size + 1)
    score = [0.0] * len(candidates)
    back = [-1] * len(candidates)
    best, best_end = 0.0, -1
    start = 0
    while start < len(candidates):
        stop = start
        while stop < len(candidates) and candidates[stop][0] == candidates[start][0]:
            stop += 1
        for index in range(start, stop):
            _, j, similar = candidates[index]
            found, end = 0.0, -1
            column = j - j0  # the best chain ending in a column before j
            while column > 0:
                if tree_score[column] > found:
                    found, end = tree_score[column], tree_end[column]
                column -= column & -column
            score[index], back[index] = found + similar, end
        for index in range(start, stop):
            column = candidates[index][1] - j0 + 1
            while column <= size:
                if score[index] > tree_score[column]:
                    tree_score[column], tree_end[column] = score[index], index
                column += column & -column
            if score[index] > best:
                best, best_end = score[index], index
        start = stop
    chain: list[tuple[int, int, float]] = []
    while best_end >= 0:
        chain.append(candidates[best_end])
        best_end = back[best_end]
    return chain[::-1]


# --- blocks and their facts ---------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """A user's prompt and what followed it until the next prompt (its turns, notices and
    compaction dividers): the unit two runs are aligned by. The first block of a session that
    starts without a prompt has none."""

    prompt: UserMessage | None
    items: tuple[PlannedItem, ...]

    @property
    def text(self) -> str:
        """The prompt as it is compared: a slash command and its text."""
        if self.prompt is None:
            return ""
        return " ".join(part for part in (self.prompt.command, self.prompt.text) if part)

    @property
    def recorded_text(self) -> str | None:
        """:attr:`text`; None for a prompt the source does not record (which is not an empty
        prompt), and for a block that holds no prompt at all: its turn's prompt is not in the
        transcript either."""
        if self.prompt is None or self.prompt.meta.get("prompt_not_recorded") is True:
            return None
        return self.text

    @property
    def segments(self) -> list[Segment]:
        return [item.segment for item in self.items if item.segment is not None]

    @property
    def prompt_slot(self) -> bool:
        """Whether this block has a prompt to be paired by: a prompt, recorded or not, or a
        turn that answered one the transcript does not hold (a run that prints the run, not
        its prompt). A block with no prompt whose turns hold only errors (a run that failed
        before any turn began) has none: nothing in it answered a prompt."""
        if self.prompt is not None:
            return True
        entries = [entry for segment in self.segments for entry in segment.entries]
        return not all(isinstance(entry, AssistantError) for entry in entries)

    @property
    def notices_only(self) -> bool:
        """Whether this block has neither a prompt nor a turn: only notices (a run that failed
        to log in, one that never began), which no prompt of another run pairs with."""
        return self.prompt is None and not self.segments


def blocks_of(items: Iterable[PlannedItem]) -> list[Block]:
    """The planned items of a projection (:func:`~turnfold.process.plan_projection`) cut at
    each prompt.

    What comes before the first prompt without being a turn (a notice such as the context a
    Gemini CLI session opens with) belongs to the first prompt's block: on its own it would be
    a "turn" that did nothing, aligned with, or missing from, the other run, and perhaps the
    first difference that opens in place of a real one.
    """
    blocks: list[Block] = []
    prompt: UserMessage | None = None
    current: list[PlannedItem] = []
    for item in items:
        if isinstance(item.entry, UserMessage):
            opening = prompt is None and all(before.segment is None for before in current)
            if current and not opening:
                blocks.append(Block(prompt, tuple(current)))
                current = []
            prompt = item.entry
        current.append(item)
    if current:
        blocks.append(Block(prompt, tuple(current)))
    return blocks


#: P-7's priority: a block of several turns has the status of the one that matters most.
_STATUS_ORDER: tuple[TurnStatus, ...] = ("failed", "stopped", "running", "completed")
#: The locale the turn headers are read in: a status and a count do not depend on it.
_LOCALE = "en"


@dataclass(frozen=True)
class BlockFacts:
    """What a block's turns did, as their headers and the corpus's turn rows count it."""

    prompt: str | None
    """None for a prompt the source does not record."""
    status: TurnStatus | None
    """None when no turn answered the prompt."""
    tools: tuple[tuple[str, int], ...]
    """Calls by tool name (as the rows show it), in the order each was first called."""
    tool_calls: int
    failed_tools: int
    tokens: int | None
    """Input plus output tokens of its responses, its sub-agents' included (U-1); None when
    none is recorded, or when the source does not record them per turn (below)."""
    duration_ms: float | None
    answer: str | None
    """The answer of its last turn (P-2)."""
    kinds: tuple[tuple[ToolCategory, int, tuple[str, ...]], ...] = ()
    """Calls by category (F-1), each with the names of its tools, in the order each category
    was first called: what two agents' calls are compared by."""
    tokens_per_turn: bool = True
    """False where the source records tokens for the session only
    (:func:`~turnfold.usage.records_tokens_per_turn`)."""


def block_facts(
    transcript: Transcript, block: Block, *, tokens_per_turn: bool | None = None
) -> BlockFacts:
    """The facts of ``block``, one of ``transcript``'s; ``tokens_per_turn`` is
    :func:`~turnfold.usage.records_tokens_per_turn` of ``transcript`` when the caller knows it
    already."""
    if tokens_per_turn is None:
        tokens_per_turn = records_tokens_per_turn(transcript)
    statuses: list[TurnStatus] = []
    tools: dict[str, int] = {}
    kinds: dict[ToolCategory, tuple[int, dict[str, None]]] = {}
    calls = failed = 0
    tokens: Tokens = {}
    duration: float | None = None
    answer: str | None = None
    for item in block.items:
        segment, context = item.segment, item.context
        if segment is None or context is None:
            continue
        header = segment_header(segment, context.running, _LOCALE)
        statuses.append(header.status)
        calls += header.tool_count
        for entry in segment.entries:
            if isinstance(entry, ToolCall):
                name = display_name(entry.name)
                tools[name] = tools.get(name, 0) + 1
                kind = tool_category(entry.name)
                count, names = kinds.get(kind, (0, {}))
                names[name] = None
                kinds[kind] = (count + 1, names)
                failed += entry.status in FAILED_STATUSES
        everything: list[Entry] = ([segment.user] if segment.user else []) + segment.entries
        add_into(tokens, tokens_spent(everything))
        recorded = None if header.status == "running" else recorded_duration_ms(segment)
        if recorded is not None:
            duration = (duration or 0.0) + recorded
        said = segment_answer(segment)
        answer = said.text if said is not None else None
    return BlockFacts(
        prompt=block.recorded_text,
        status=min(statuses, key=_STATUS_ORDER.index) if statuses else None,
        tools=tuple(tools.items()),
        tool_calls=calls,
        failed_tools=failed,
        tokens=total_of(tokens) if tokens_per_turn else None,
        duration_ms=duration,
        answer=answer,
        kinds=tuple((kind, count, tuple(names)) for kind, (count, names) in kinds.items()),
        tokens_per_turn=tokens_per_turn,
    )


#: What makes two aligned blocks differ. Tokens and time differ between any two runs, so they
#: are shown, never counted as a difference.
DIFFERENCES = ("prompt", "status", "tools", "failed", "answer")


def differences(a: BlockFacts, b: BlockFacts, *, by_kind: bool = False) -> tuple[str, ...]:
    """The names (of :data:`DIFFERENCES`) of what differs between two aligned blocks; with
    ``by_kind`` (two agents), their tools by category. A prompt not recorded is no difference:
    nothing says it was another.

    >>> same = BlockFacts("fix it", "completed", (("Read", 2),), 2, 0, 900, 1200.0, "Fixed.",
    ...                   (("read", 2, ("Read",)),))
    >>> from dataclasses import replace
    >>> differences(same, replace(same, tools=(("Read", 1), ("Bash", 1)), tokens=500))
    ('tools',)
    >>> other = replace(same, tools=(("read_file", 2),), kinds=(("read", 2, ("read_file",)),))
    >>> differences(same, other), differences(same, other, by_kind=True)
    (('tools',), ())
    """
    found = {
        "prompt": a.prompt is not None
        and b.prompt is not None
        and a.prompt.strip() != b.prompt.strip(),
        "status": a.status != b.status,
        "tools": _kind_counts(a) != _kind_counts(b) if by_kind else dict(a.tools) != dict(b.tools),
        "failed": a.failed_tools != b.failed_tools,
        "answer": (a.answer or "").strip() != (b.answer or "").strip(),
    }
    return tuple(name for name in DIFFERENCES if found[name])


def _kind_counts(facts: BlockFacts) -> dict[str, int]:
    return {kind: count for kind, count, _ in facts.kinds}


def two_agents(a: Transcript, b: Transcript) -> bool:
    """Whether ``a`` and ``b`` are runs of two different agents, whose tools are compared by
    category: the agents their session headers name (H-6's ``agent``, else the agent that
    writes the run's format: a Claude Code session file records no ``agent``, yet is one)."""
    agent_a, agent_b = agent_name(a.metadata), agent_name(b.metadata)
    return bool(agent_a and agent_b and agent_a != agent_b)


# --- two transcripts ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """One of the two runs: its transcript, its planned projection and its blocks."""

    transcript: Transcript
    items: list[PlannedItem]
    blocks: list[Block]
    key_prefix: str = ""
    """What every key of its view starts with: the planned items' keys carry it, and the
    nodes its view adds must too."""


def side_of(
    transcript: Transcript,
    settings: DisplaySettings | SettingsSnapshot | None = None,
    *,
    key_prefix: str = "",
) -> Side:
    """``transcript`` planned and cut into blocks; ``key_prefix`` keeps the keys of its view
    apart from the other side's (two runs of one harness share entry ids)."""
    items = plan_projection(transcript, settings, key_prefix=key_prefix)
    return Side(transcript, items, blocks_of(items), key_prefix)


PairStatus: TypeAlias = Literal["same", "differs", "only-a", "only-b", "notices-a", "notices-b"]


@dataclass(frozen=True)
class AlignedPair:
    """One row of a comparison: a block of each side (None: a gap) and what differs."""

    a: int | None
    b: int | None
    similarity: float
    facts_a: BlockFacts | None
    facts_b: BlockFacts | None
    differences: tuple[str, ...]
    notices: bool = False
    """A block of notices only, on its side (:attr:`Block.notices_only`): no turn, so nothing
    to pair with; the other side is a gap."""

    @property
    def status(self) -> PairStatus:
        if self.notices:
            return "notices-a" if self.b is None else "notices-b"
        if self.b is None:
            return "only-a"
        if self.a is None:
            return "only-b"
        return "differs" if self.differences else "same"


@dataclass(frozen=True)
class TranscriptComparison:
    """Two runs aligned block by block (B-3)."""

    a: Side
    b: Side
    pairs: list[AlignedPair]
    by_kind: bool = False
    """Whether the pairs' tools are compared by category (:func:`two_agents`)."""

    @property
    def first_difference(self) -> int | None:
        """The index of the first pair of turns that differs or has no counterpart (a block of
        notices has no turn to open)."""
        return next(
            (n for n, pair in enumerate(self.pairs) if not pair.notices and pair.status != "same"),
            None,
        )


def align_blocks(a: Sequence[Block], b: Sequence[Block]) -> list[Pair]:
    """:func:`align` of two sides' blocks of turns by their prompts, save a first block with
    no prompt slot (:attr:`Block.prompt_slot`: a run that failed before any turn): paired by
    its place it would stand for the other run's first prompt, so it is paired with nothing,
    first, unless the other run's first block has no prompt slot either (two runs that failed
    alike, side by side)."""
    lead = [bool(blocks) and not blocks[0].prompt_slot for blocks in (a, b)]
    out: list[Pair] = []
    if all(lead):
        out.append(Pair(0, 0, 0.0))
    else:
        out += [Pair(0, None, 0.0)] if lead[0] else []
        out += [Pair(None, 0, 0.0)] if lead[1] else []
    skip_a, skip_b = int(lead[0]), int(lead[1])
    prompts_a = [block.recorded_text for block in a[skip_a:]]
    prompts_b = [block.recorded_text for block in b[skip_b:]]
    for pair in align(prompts_a, prompts_b):
        at_a = pair.a + skip_a if pair.a is not None else None
        at_b = pair.b + skip_b if pair.b is not None else None
        out.append(Pair(at_a, at_b, pair.similarity))
    return out


def compare_transcripts(a: Side, b: Side, *, by_kind: bool | None = None) -> TranscriptComparison:
    """The two sides aligned by prompt, each pair with the facts of its blocks; their tools
    compared by category with ``by_kind``, by default when they are two agents' runs.

    A block of notices only is aligned with nothing: it is a pair of its own, first (it is its
    side's only block: a run with a prompt or a turn has its notices in that block)."""
    if by_kind is None:
        by_kind = two_agents(a.transcript, b.transcript)
    per_turn = [records_tokens_per_turn(side.transcript) for side in (a, b)]
    pairs: list[AlignedPair] = []
    turns: list[list[int]] = []  # each side's blocks that are turns, aligned by their prompts
    for at, side in enumerate((a, b)):
        turns.append([n for n, block in enumerate(side.blocks) if not block.notices_only])
        for n, block in enumerate(side.blocks):
            if block.notices_only:
                facts = block_facts(side.transcript, block, tokens_per_turn=per_turn[at])
                mine, theirs = (n, facts), (None, None)
                (at_a, facts_a), (at_b, facts_b) = (mine, theirs) if at == 0 else (theirs, mine)
                pairs.append(AlignedPair(at_a, at_b, 0.0, facts_a, facts_b, (), notices=True))
    blocks = [[side.blocks[n] for n in kept] for side, kept in zip((a, b), turns, strict=True)]
    for pair in align_blocks(*blocks):
        at_a = turns[0][pair.a] if pair.a is not None else None
        at_b = turns[1][pair.b] if pair.b is not None else None
        facts_a = facts_b = None
        if at_a is not None:
            facts_a = block_facts(a.transcript, a.blocks[at_a], tokens_per_turn=per_turn[0])
        if at_b is not None:
            facts_b = block_facts(b.transcript, b.blocks[at_b], tokens_per_turn=per_turn[1])
        found = differences(facts_a, facts_b, by_kind=by_kind) if facts_a and facts_b else ()
        pairs.append(AlignedPair(at_a, at_b, pair.similarity, facts_a, facts_b, found))
    return TranscriptComparison(a, b, pairs, by_kind)


# --- two corpora --------------------------------------------------------------------------------

Row = Mapping[str, Any]
Change: TypeAlias = Literal["regressed", "improved", "changed"]
#: The order changes are listed in: what got worse first.
CHANGES: tuple[Change, ...] = ("regressed", "improved", "changed")


@dataclass(frozen=True)
class RowPair:
    """The rows of one sample in both corpora, and how its outcome or score changed."""

    key: str
    """The join key, as text."""
    a: Row
    b: Row
    change: Change


@dataclass(frozen=True)
class LoneRow:
    """The row of a sample only one corpus holds: its run opens on its side alone (B-3)."""

    key: str
    """The join key, as text."""
    side: Literal["a", "b"]
    """The corpus that holds it."""
    row: Row


@dataclass(frozen=True)
class Totals:
    """One corpus in sum: how many items, how many have an outcome and passed, cost, time."""

    items: int
    judged: int
    passed: int
    cost_usd: float | None
    """The sum of the costs recorded or estimated; None when no item has one."""
    duration_s: float | None
    priced: int
    """How many items ``cost_usd`` sums: fewer than ``items`` when some have no cost (a model
    the price table does not know, an unreadable item), which a total must say (U-2)."""
    no_cost: tuple[str, ...] = ()
    """Why items whose tokens are known have no cost, each reason once in the corpus's order,
    as their rows say it (``no_cost``, :attr:`turnfold.cost.NoCost.said`)."""

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.judged if self.judged else None


@dataclass(frozen=True)
class CorpusComparison:
    """Two corpora joined item by item (B-3)."""

    changed: list[RowPair]
    """The pairs whose outcome or score changed, regressions first, then improvements, then
    other changes; each kind in the order of the first corpus."""
    same: int
    """Pairs whose outcome and score are the same."""
    alone: list[LoneRow]
    """The samples only one corpus holds: the first corpus's, then the second's, each in its
    corpus's order."""
    totals_a: Totals
    totals_b: Totals

    @property
    def only_a(self) -> list[str]:
        """The keys of the samples only the first corpus holds."""
        return [lone.key for lone in self.alone if lone.side == "a"]

    @property
    def only_b(self) -> list[str]:
        """The keys of the samples only the second corpus holds."""
        return [lone.key for lone in self.alone if lone.side == "b"]


JoinKey = Callable[[Row], Hashable]


def compare_rows(
    rows_a: Sequence[Row], rows_b: Sequence[Row], key: JoinKey | str | None = None
) -> CorpusComparison:
    """Rows of two corpora (C-2) joined by ``key`` (default: :class:`SampleKey`): a function of
    a row, or the name of a column (one of the row's metadata columns, say a dataset's ``id``).

    A row whose item could not be read (its ``error`` is set, C-7) has no run to compare: it
    counts in its corpus's totals only. A key shared by two rows of one corpus cannot say which
    pairs with which: that raises ``ValueError``, naming the key, rather than pairing at random.
    """
    join = _column_key(key, [*rows_a, *rows_b]) if isinstance(key, str) else key or SampleKey()
    if not callable(join):
        raise TypeError(f"compare(key=) takes a function of a row or a column's name, not {key!r}")
    by_key_b = _by_key(rows_b, join, "b")
    seen: set[Hashable] = set()
    kinds: dict[Change, list[RowPair]] = {change: [] for change in CHANGES}
    same = 0
    alone: list[LoneRow] = []
    for key_value, row_a in _by_key(rows_a, join, "a").items():
        seen.add(key_value)
        row_b = by_key_b.get(key_value)
        if row_b is None:
            alone.append(LoneRow(_key_text(key_value), "a", row_a))
            continue
        change = row_change(row_a, row_b)
        if change is None:
            same += 1
        else:
            kinds[change].append(RowPair(_key_text(key_value), row_a, row_b, change))
    alone += [LoneRow(_key_text(k), "b", row) for k, row in by_key_b.items() if k not in seen]
    changed = [pair for change in CHANGES for pair in kinds[change]]
    return CorpusComparison(changed, same, alone, totals(rows_a), totals(rows_b))


def _column_key(name: str, rows: Sequence[Row]) -> JoinKey:
    """The join by the column ``name``, which every row must have."""
    missing = next((row for row in rows if name not in row), None)
    if missing is not None:
        columns = ", ".join(sorted(missing))
        raise ValueError(f"compare(key={name!r}): no such column; the rows have {columns}")
    return lambda row: row[name]


def _by_key(rows: Sequence[Row], key: JoinKey, side: str) -> dict[Hashable, Row]:
    found: dict[Hashable, Row] = {}
    for row in rows:
        if row.get("error") is not None:
            continue
        value = key(row)
        if value in found:
            raise ValueError(
                f"two rows of corpus {side.upper()} join by the same key {_key_text(value)!r} "
                f"({found[value]['key']} and {row['key']}): pass compare(..., key=) a function "
                "of a row that tells them apart"
            )
        found[value] = row
    return found


def _key_text(value: Hashable) -> str:
    if isinstance(value, tuple):
        return " · ".join(str(part) for part in value if part is not None)
    return str(value)


class SampleKey:
    """The default join of two corpora: an eval log's sample by its task, id and epoch (the
    row's ``sample`` names id and epoch; the task is read from the log's header, once per
    log); any other item by its ``sample``, else by its file's name."""

    def __init__(self) -> None:
        self._tasks: dict[str, str | None] = {}

    def __call__(self, row: Row) -> Hashable:
        sample, path = row.get("sample"), row.get("path")
        if sample is None:
            return PurePath(str(path or row["key"])).name
        task = self._task(path) if path and row.get("format") == "inspect" else None
        return (task, str(sample))

    def _task(self, path: str) -> str | None:
        if path not in self._tasks:
            from turnfold.formats.harnesses.inspect_log import task_of

            try:
                self._tasks[path] = task_of(path)
            except Exception:  # an unreadable log: its rows carry their error (C-7)
                self._tasks[path] = None
        return self._tasks[path]


#: Outcomes by how good they are (H-6): a pass is better than anything else.
_OUTCOME_RANK = {"pass": 1, "fail": 0, "error": 0, "incomplete": 0}


def row_change(a: Row, b: Row) -> Change | None:
    """How the second run of a sample did against the first: None when outcome and score
    are the same; a worse outcome, else a lower score, is a regression.

    >>> row_change({"outcome": "pass", "score": 1.0}, {"outcome": "fail", "score": 0.0})
    'regressed'
    >>> row_change({"outcome": "fail", "score": 0.2}, {"outcome": "fail", "score": 0.6})
    'improved'
    >>> row_change({"outcome": "fail"}, {"outcome": "error"})
    'changed'
    """
    outcome_a, outcome_b = a.get("outcome"), b.get("outcome")
    score_a, score_b = _number(a.get("score")), _number(b.get("score"))
    if outcome_a == outcome_b and score_a == score_b:
        return None
    rank_a, rank_b = _OUTCOME_RANK.get(str(outcome_a)), _OUTCOME_RANK.get(str(outcome_b))
    if rank_a is not None and rank_b is not None and rank_a != rank_b:
        return "regressed" if rank_b < rank_a else "improved"
    if score_a is not None and score_b is not None and score_a != score_b:
        return "regressed" if score_b < score_a else "improved"
    return "changed"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None  # NaN is no score
    return float(value)


def totals(rows: Sequence[Row]) -> Totals:
    """A corpus's rows in sum: items, judged and passed, cost and time where recorded."""
    judged = sum(1 for row in rows if row.get("outcome") is not None)
    passed = sum(1 for row in rows if row.get("outcome") == "pass")
    costs = [c for c in (_number(row.get("cost_usd")) for row in rows) if c is not None]
    times = [t for t in (_number(row.get("duration_s")) for row in rows) if t is not None]
    # A row's reason only where it has no cost: a row of a hand-made table may hold both.
    reasons = (row.get("no_cost") for row in rows if _number(row.get("cost_usd")) is None)
    return Totals(
        items=len(rows),
        judged=judged,
        passed=passed,
        cost_usd=sum(costs) if costs else None,
        duration_s=sum(times) if times else None,
        priced=len(costs),
        no_cost=tuple(dict.fromkeys(r for r in reasons if isinstance(r, str) and r)),
    )


# --- opening runs -------------------------------------------------------------------------------

Run: TypeAlias = "Transcript | Corpus"


def open_run(source: Any) -> Run:
    """A run as a comparison takes it: a transcript or a corpus as it is; a folder, or an eval
    log of several samples, scanned (:func:`turnfold.scan`); anything else loaded
    (:func:`turnfold.load`)."""
    from turnfold.corpus import Corpus, scan
    from turnfold.formats import load

    if isinstance(source, (Transcript, Corpus)):
        return source
    if isinstance(source, (str, os.PathLike)) and _is_runs(Path(source)):
        return scan(source)
    return load(source)


def _is_runs(path: Path) -> bool:
    from turnfold.formats.harnesses import inspect_log

    try:
        if path.is_dir():
            return True
        return inspect_log.detect_path(path) is not None and len(inspect_log.samples(path)) > 1
    except (OSError, ValueError):  # not a path at all (JSON text), or not a log: load says why
        return False


__all__ = [
    "CHANGES",
    "DIFFERENCES",
    "MATCH_THRESHOLD",
    "SIMILARITY_BUDGET",
    "SIMILARITY_CHARS",
    "AlignedPair",
    "Block",
    "BlockFacts",
    "Change",
    "CorpusComparison",
    "LoneRow",
    "Pair",
    "PairStatus",
    "RowPair",
    "Run",
    "SampleKey",
    "Side",
    "Totals",
    "TranscriptComparison",
    "align",
    "block_facts",
    "blocks_of",
    "compare_rows",
    "compare_transcripts",
    "differences",
    "normal_prompt",
    "open_run",
    "prompt_words",
    "row_change",
    "side_of",
    "similarity",
    "totals",
    "two_agents",
]
