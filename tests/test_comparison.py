"""Two runs compared (spec B-3), the pure half: which turns correspond, what differs, and which
samples of two corpora changed (``turnfold.comparison``).

The alignment is checked on hand-made sequences of prompts, one row per thing a reader expects
of it; the facts and differences on hand-made transcripts; the join on hand-made corpus rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from turnfold.comparison import (
    SIMILARITY_BUDGET,
    Pair,
    align,
    block_facts,
    compare_rows,
    compare_transcripts,
    row_change,
    side_of,
    totals,
)
from turnfold.model import (
    AssistantText,
    ToolCall,
    ToolResult,
    ToolStatus,
    Transcript,
    Usage,
    UserMessage,
)

# --- the alignment -------------------------------------------------------------------------------

Expected = list[tuple[int | None, int | None]]
Prompts = list[str | None]  # None: a prompt the source does not record

ALIGNMENTS: list[tuple[str, Prompts, Prompts, Expected]] = [
    ("identical runs pair turn by turn",
     ["plan", "build", "test"], ["plan", "build", "test"], [(0, 0), (1, 1), (2, 2)]),
    ("a prompt inserted in B is a gap in A",
     ["plan", "test"], ["plan", "lint", "test"], [(0, 0), (None, 1), (1, 2)]),
    ("a prompt dropped from B is a gap in B",
     ["plan", "lint", "test"], ["plan", "test"], [(0, 0), (1, None), (2, 1)]),
    ("an edited prompt still pairs with its original",
     ["fix the login bug", "write tests"], ["fix the login bug in auth.py", "write tests"],
     [(0, 0), (1, 1)]),
    # A pair is a prompt and its turns (B-3): what stands at one place between two matches is
    # that place's prompt, however worded; it was two gaps, one on each side.
    ("a prompt replaced by another at its place pairs with it",
     ["plan", "deploy to staging", "test"], ["plan", "write the changelog", "test"],
     [(0, 0), (1, 1), (2, 2)]),
    ("a run continued with 'go on' pairs with one continued with 'continue'",
     ["fix the failing parser test", "go on", "go on"],
     ["fix the failing parser test", "continue", "continue"], [(0, 0), (1, 1), (2, 2)]),
    ("one task worded by two agents' harnesses, then a retry on one side",
     ["Task: make tests/test_parser.py pass", "that did not work, try again"],
     ["<task>Fix the parser so that its tests pass</task>"], [(0, 0), (1, None)]),
    ("what is left over after the pairs by place is a gap",
     ["plan", "go on", "test"], ["plan", "continue", "lint it", "test"],
     [(0, 0), (1, 1), (None, 2), (2, 3)]),
    ("a prompt not recorded pairs with the prompt at its place",
     ["fix the bug", "now add a test"], [None, None], [(0, 0), (1, 1)]),
    ("prompts not recorded on both sides pair in order, the extra one a gap",
     [None, None, None], [None, None], [(0, 0), (1, 1), (2, None)]),
    ("a prompt not recorded beside recorded ones takes the place between them",
     ["plan", "build", "test"], ["plan", None, "test"], [(0, 0), (1, 1), (2, 2)]),
    ("a prompt not recorded is no anchor: the equal prompts around it still are",
     ["start", "write docs", "finish"], [None, "start", "finish"],
     [(None, 0), (0, 1), (1, None), (2, 2)]),
    ("case and spacing do not make another prompt",
     ["Fix  the\nbug"], ["fix the bug"], [(0, 0)]),
    ("repeated prompts pair in order, the extra one is a gap",
     ["continue", "continue", "continue"], ["continue", "continue"],
     [(0, 0), (1, 1), (2, None)]),
    ("two swapped prompts: one stays paired, the other is a gap on each side",
     ["write docs", "fix the bug"], ["fix the bug", "write docs"],
     [(0, None), (1, 0), (None, 1)]),
    ("an edited prompt beside an inserted one",
     ["start", "refactor the parser module", "finish"],
     ["start", "add logging", "refactor the parser module now", "finish"],
     [(0, 0), (None, 1), (1, 2), (2, 3)]),
    ("an edited prompt in Chinese pairs by its characters",
     ["修复登录错误", "写测试"], ["修复登录页面的错误", "写测试"], [(0, 0), (1, 1)]),
    ("a session that starts without a prompt pairs its opening turns",
     ["", "go on"], ["", "go on"], [(0, 0), (1, 1)]),
    ("nothing on one side: every turn of the other is a gap",
     [], ["plan", "test"], [(None, 0), (None, 1)]),
    ("nothing on either side", [], [], []),
]  # fmt: skip


@pytest.mark.parametrize(
    ("a", "b", "expected"), [case[1:] for case in ALIGNMENTS], ids=[case[0] for case in ALIGNMENTS]
)
def test_B3_turns_align_by_their_prompts(a: Prompts, b: Prompts, expected: Expected) -> None:
    pairs = align(a, b)
    assert [(p.a, p.b) for p in pairs] == expected
    assert align(a, b) == pairs  # deterministic


def test_B3_an_equal_prompt_pairs_at_full_similarity_an_edited_one_below_it() -> None:
    pairs = align(["plan", "fix the login bug"], ["plan", "fix the login bug in auth.py"])
    assert pairs[0] == Pair(0, 0, 1.0)
    assert 0.5 <= pairs[1].similarity < 1.0


def test_B3_a_long_stretch_of_edited_prompts_still_pairs_each_with_its_own() -> None:
    # Every prompt edited: no equal prompt to anchor on, and more pairs than the budget, so each
    # prompt is compared with those near its own place only.
    count = 400
    assert count * count > SIMILARITY_BUDGET
    a = [f"task {n}: update module{n} and its tests" for n in range(count)]
    b = [f"task {n}: update module{n} and its tests, carefully" for n in range(count)]
    b.insert(100, "an unrelated question")
    expected = [(n, n if n < 100 else n + 1) for n in range(count)]
    expected.insert(100, (None, 100))
    assert [(p.a, p.b) for p in align(a, b)] == expected


# --- what a pair says --------------------------------------------------------------------------


@dataclass
class Turn:
    """A hand-made turn: the prompt, the calls made (name, status), the answer, its tokens."""

    prompt: str
    calls: list[tuple[str, ToolStatus]] = field(default_factory=list)
    answer: str | None = "Done."
    tokens: int = 100
    seconds: int = 10


def run(*turns: Turn) -> Transcript:
    transcript = Transcript()
    clock = 0
    for n, turn in enumerate(turns):
        transcript.append(UserMessage(text=turn.prompt, timestamp=_stamp(clock)))
        for m, (name, status) in enumerate(turn.calls):
            transcript.append(
                ToolCall(call_id=f"c{n}-{m}", name=name, status=status,
                         result=ToolResult(text="out"), timestamp=_stamp(clock + 1))
            )  # fmt: skip
        usage = Usage(input_tokens=turn.tokens - 10, output_tokens=10, response_id=f"r{n}")
        transcript.append(
            AssistantText(text=turn.answer or "", usage=usage,
                          timestamp=_stamp(clock + turn.seconds))
        )  # fmt: skip
        clock += 100
    return transcript


def _stamp(seconds: int) -> str:
    return f"2026-01-02T10:{seconds // 60:02d}:{seconds % 60:02d}Z"


def _compare(a: Transcript, b: Transcript) -> Any:
    return compare_transcripts(side_of(a), side_of(b))


def test_B3_a_pair_counts_what_its_turn_headers_count() -> None:
    a = run(Turn("fix it", [("Read", "success"), ("Read", "success"), ("Bash", "error")],
                 tokens=1200, seconds=12))  # fmt: skip
    facts = block_facts(a, side_of(a).blocks[0])
    assert facts.tools == (("Read", 2), ("Bash", 1))
    assert (facts.tool_calls, facts.failed_tools) == (3, 1)
    assert facts.tokens == 1200
    assert facts.duration_ms == 12_000
    assert (facts.status, facts.answer) == ("completed", "Done.")


DIFFERENCES: list[tuple[str, Turn, Turn, tuple[str, ...]]] = [
    ("the same work and answer: no difference, whatever tokens and time say",
     Turn("fix it", [("Read", "success")], tokens=900, seconds=5),
     Turn("fix it", [("Read", "success")], tokens=400, seconds=50), ()),
    ("other tools", Turn("fix it", [("Read", "success")]),
     Turn("fix it", [("Read", "success"), ("Bash", "success")]), ("tools",)),
    ("a tool that failed", Turn("fix it", [("Bash", "success")]),
     Turn("fix it", [("Bash", "error")]), ("failed",)),
    ("another answer", Turn("fix it", answer="Fixed."), Turn("fix it", answer="Could not."),
     ("answer",)),
    ("an edited prompt", Turn("fix the login bug"), Turn("fix the login bug in auth.py"),
     ("prompt",)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [case[1:] for case in DIFFERENCES],
    ids=[case[0] for case in DIFFERENCES],
)
def test_B3_a_pair_differs_by_what_the_runs_did(
    a: Turn, b: Turn, expected: tuple[str, ...]
) -> None:
    [pair] = _compare(run(a), run(b)).pairs
    assert pair.differences == expected
    assert pair.status == ("differs" if expected else "same")


def test_B3_the_first_difference_is_the_first_pair_that_differs_or_stands_alone() -> None:
    a = run(Turn("plan"), Turn("build", [("Bash", "success")]), Turn("test"))
    b = run(Turn("plan"), Turn("build", [("Bash", "error")]), Turn("test"))
    comparison = _compare(a, b)
    assert [p.status for p in comparison.pairs] == ["same", "differs", "same"]
    assert comparison.first_difference == 1
    assert _compare(a, run(Turn("plan"))).pairs[1].status == "only-a"
    assert _compare(a, a).first_difference is None


# --- two corpora ----------------------------------------------------------------------------------


def row(
    sample: str, outcome: str | None, score: float | None = None, **more: Any
) -> dict[str, Any]:
    return {"key": f"log#{sample}", "path": None, "sample": sample, "format": None,
            "outcome": outcome, "score": score, **more}  # fmt: skip


CHANGES: list[tuple[str, dict[str, Any], dict[str, Any], str | None]] = [
    ("a pass that fails is a regression", row("1/1", "pass", 1.0), row("1/1", "fail", 0.0),
     "regressed"),
    ("a failure that passes is an improvement", row("1/1", "fail"), row("1/1", "pass"),
     "improved"),
    ("a lower score with the same outcome is a regression", row("1/1", "fail", 0.6),
     row("1/1", "fail", 0.2), "regressed"),
    ("a higher score is an improvement", row("1/1", None, 0.2), row("1/1", None, 0.9),
     "improved"),
    ("one failure for another is a change", row("1/1", "fail"), row("1/1", "error"), "changed"),
    ("the same outcome and score is no change", row("1/1", "pass", 1.0), row("1/1", "pass", 1.0),
     None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("a", "b", "expected"), [case[1:] for case in CHANGES], ids=[case[0] for case in CHANGES]
)
def test_B3_a_sample_changed_by_its_outcome_then_its_score(
    a: dict[str, Any], b: dict[str, Any], expected: str | None
) -> None:
    assert row_change(a, b) == expected


def test_B3_the_changed_samples_are_listed_regressions_first_with_both_totals() -> None:
    a = [row("1/1", "pass", cost_usd=0.5, duration_s=10.0), row("2/1", "fail"),
         row("3/1", "pass"), row("4/1", "pass"), row("5/1", "pass")]  # fmt: skip
    b = [row("4/1", "fail"), row("3/1", "pass"), row("2/1", "pass"), row("1/1", "fail"),
         row("6/1", "pass", cost_usd=0.25)]  # fmt: skip
    found = compare_rows(a, b)
    assert [(p.key, p.change) for p in found.changed] == [
        ("1/1", "regressed"), ("4/1", "regressed"), ("2/1", "improved"),
    ]  # fmt: skip
    assert (found.same, found.only_a, found.only_b) == (1, ["5/1"], ["6/1"])
    assert found.totals_a.pass_rate == 4 / 5
    assert (found.totals_a.cost_usd, found.totals_a.duration_s) == (0.5, 10.0)
    assert (found.totals_b.cost_usd, found.totals_b.duration_s) == (0.25, None)


def test_B3_a_key_function_joins_what_the_default_would_not() -> None:
    a = [row("q1", "pass", title="What is 2 + 2?")]
    b = [row("question-1", "fail", title="What is 2 + 2?")]
    assert compare_rows(a, b).changed == []  # the samples are named apart
    [pair] = compare_rows(a, b, key=lambda r: r["title"]).changed
    assert (pair.key, pair.change) == ("What is 2 + 2?", "regressed")
    # A column's name joins by that column (a dataset's id, say), as pandas' merge(on=) does;
    # it failed with "'str' object is not callable".
    assert compare_rows(a, b, key="title").changed == [pair]
    with pytest.raises(ValueError, match=r"key='id'\): no such column; the rows have .*title"):
        compare_rows(a, b, key="id")
    with pytest.raises(TypeError, match="a function of a row or a column's name, not 5"):
        compare_rows(a, b, key=5)  # type: ignore[arg-type]


def test_B3_two_rows_of_one_corpus_with_one_key_are_refused_not_paired_at_random() -> None:
    a = [row("1/1", "pass"), {**row("1/1", "fail"), "key": "other#1/1"}]
    with pytest.raises(ValueError, match="same key '1/1'"):
        compare_rows(a, [row("1/1", "pass")])


def test_B3_an_item_that_could_not_be_read_is_counted_not_compared() -> None:
    broken = {**row("1/1", None), "error": "truncated zip"}
    found = compare_rows([broken, row("2/1", "pass")], [row("1/1", "pass"), row("2/1", "pass")])
    assert (found.changed, found.same, found.only_b) == ([], 1, ["1/1"])
    assert (found.totals_a.items, found.totals_a.judged) == (2, 1)


def test_B3_totals_of_nothing_say_nothing() -> None:
    empty = totals([])
    assert (empty.items, empty.pass_rate, empty.cost_usd, empty.duration_s) == (0, None, None, None)
