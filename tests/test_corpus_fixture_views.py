"""C-2/C-3 on every fixture: a corpus row, its ``turns()`` rows and its ``tool_calls()`` rows
say what the item's view says.

``test_corpus.py`` checks the counts on a small tree; here every fixture folder under
``tests/fixtures`` is scanned as a user would scan it (``turnfold.scan(folder)``: what the walk
skips is skipped, an eval log's samples and a dataset's rows are rows), and each row that could
be read is compared with the view the widget builds of its transcript: the turn nodes, the tool
rows, the sub-agent lines, the session header (U-3), the outcome badge (H-6), the turn headers
(with ``show_turn_usage``) and the timeline's bars (U-4). The expected side is always read off
the view, never written down here, so the check holds while the readers change.

Known differences, each with its reason, are in :func:`_row_vs_view` (``score``) and
:func:`_tool_rows_vs_view` (``error`` of a cancelled call).
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.test_corpus import _tools, _widget_counts
from turnfold.corpus import Corpus
from turnfold.corpus.summarize import TITLE_LIMIT, TOKEN_COLUMNS, _first_line
from turnfold.cost import format_usd
from turnfold.i18n import catalog, plural, translate
from turnfold.render.content import escape
from turnfold.render.viewmodel import OUTCOMES, _score_text, build_view_model, compact_count
from turnfold.session import AGENT_NAMES, session_facts
from turnfold.settings import DisplaySettings
from turnfold.tools import display_name, format_duration
from turnfold.usage import records_tokens_per_turn, total_of

FIXTURES = Path(__file__).parent / "fixtures"
#: Fixtures that lie at the top of ``tests/fixtures``, scanned together as one group.
LOOSE = "(top-level files)"
#: Every fixture folder, less the fixtures' licence texts (no transcript is there to read).
GROUPS = [*sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name != "LICENSES"),
          LOOSE]  # fmt: skip
LOCALE = "en"
#: The view a row is compared with: every call on its own row (F-14: memory operations too,
#: which the default view shows only as badges, F-11), and each turn's tokens and cost on its
#: header (U-3). Counts are read off the default view (``_widget_counts``) as well.
DETAILED = DisplaySettings(full_detail=True, show_turn_usage=True, locale=LOCALE)
_TAG = re.compile(r"<[^>]+>")
#: A count the source does not record reads "not recorded" (U-1), as the row's is null.
_COUNT = r"([\d,]+|not recorded)"
_TOKENS_TITLE = re.compile(
    rf"input {_COUNT}, output {_COUNT}, cache read {_COUNT}, cache write {_COUNT}"
)
_NESTED = re.compile(r" · (\d+) sub-agents?(?: · |$)")
#: How the view words a call that answered while what it ran went on (the row says unknown).
_STILL_RUNNING = {
    translate("status.still_running", LOCALE),
    translate("status.still_running_at_turn_end", LOCALE),
}


def _scan(group: str) -> Corpus:
    """The group's corpus, as ``scan`` reads it. A folder whose walk finds nothing (aider's
    histories, found by the name ``.aider.chat.history.md`` the fixtures do not bear) is
    scanned file by file, as ``scan(path)`` reads a file it is named."""
    if group == LOOSE:
        loose = sorted(p for p in FIXTURES.iterdir() if p.is_file() and p.suffix != ".md")
        return turnfold.scan(loose, cache=False, workers=1)
    folder = FIXTURES / group
    corpus = turnfold.scan(folder, cache=False, workers=1)
    if len(corpus):
        return corpus
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return turnfold.scan(files, cache=False, workers=1)


def _plain(fragment: str) -> str:
    """The text of an HTML fragment the view holds."""
    return html.unescape(_TAG.sub("", fragment))


def _turn_nodes(nodes: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [node for node in nodes if node["kind"] == "turn"]


def _turn_tools(turn: Mapping[str, Any]) -> list[dict[str, Any]]:
    return _tools(turn["process"]["children"]) if turn["process"] else []


def _memory_badged(children: Iterable[Mapping[str, Any]]) -> int:
    """The calls a turn's process shows as memory badges alone (F-11: ``Recalled 2
    memories, Wrote 1 memory``), not as rows: ``_widget_counts`` counts rows only."""
    count = 0
    for node in children:
        if node["kind"] == "group":
            count += _memory_badged(node["children"])
        elif node["kind"] == "batch" and node["memory"]:
            count += sum(int(n) for n in re.findall(r"\d+", node["memory"]))
    return count


def _view_subagents(nodes: Iterable[Mapping[str, Any]]) -> int:
    """The sub-agent runs the view accounts for: each agent call's row (its F-7 line once it
    finished), the calls of the sub-agent transcripts opened under them, and the ``K
    sub-agents`` a line states for a sub-agent whose transcript is not there to open."""
    count = 0
    for turn in _turn_nodes(nodes):
        for tool in _turn_tools(turn):
            sub = tool["subagent"]
            if sub is None and tool["category"] != "agent":
                continue
            if sub is not None and _runs_several(sub):
                count += _view_subagents(sub["nodes"])  # the agents one call ran: them alone
                continue
            if sub is not None and tool["category"] != "agent" and not sub["line"]:
                # The calls a call ran that is no agent's (a code-mode cell's commands: no
                # F-7 line): only the agents among them.
                count += _view_subagents(sub["nodes"])
                continue
            count += 1
            if sub is not None and sub["nodes"]:
                count += _view_subagents(sub["nodes"])
            elif sub is not None and sub["line"]:
                nested = _NESTED.search(_plain(sub["line"]))
                count += int(nested.group(1)) if nested else 0
    return count


def _runs_several(sub: Mapping[str, Any]) -> bool:
    """Whether a call's sub-agent is the agents it ran at once: its line names no agent
    (``✔ a, b, c · 3 sub-agents``, where a named run says ``✔ name: task``), and its nodes are
    only calls that each open onto an agent of their own, no prompt, no answer."""
    nodes = sub["nodes"]
    turns = _turn_nodes(nodes)
    tools = [tool for turn in turns for tool in _turn_tools(turn)]
    named = ": " in _plain(sub["line"] or "").split(" · ")[0]
    return (
        not named
        and bool(tools)
        and len(turns) == len(nodes)
        and all(turn["answer"] is None and not turn["outside"] for turn in turns)
        and all(tool["subagent"] is not None for tool in tools)
    )


#: The notes of a prompt not recorded: the plain one and a reader's own, which says why.
_NOT_RECORDED = [
    f'<div class="tf-note">{escape(translate(key, "en"))}</div>'
    for key in catalog("en")
    if key == "user.prompt_not_recorded" or key.startswith("user.prompt_not_recorded.")
]


def _title(nodes: Iterable[Mapping[str, Any]]) -> str | None:
    """The first prompt the view shows (its command and text), on one line, cut at 120."""
    for node in nodes:
        if node["kind"] != "user":
            continue
        command = html.unescape(node["command"]) if node.get("command") else None
        # A prompt the source does not record is no title: the view says so in a note.
        shown = node["html"]
        for note in _NOT_RECORDED:
            shown = shown.replace(note, "")
        text = _plain(shown + node.get("more_html", "")).strip()
        said = " ".join(part for part in (command, text) if part)
        if said:
            line = " ".join(said.split())
            return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1].rstrip() + "…"
    return None


def _row_vs_view(row: Mapping[str, Any], transcript: turnfold.Transcript) -> list[str]:
    """What of ``row`` differs from the view of its transcript."""
    problems: list[str] = []

    def same(name: str, value: Any, shown: Any) -> None:
        if value != shown:
            problems.append(f"{name}: row {value!r}, view {shown!r}")

    # The counts as the widget shows them by default; its memory badges stand for calls too.
    plain = build_view_model(transcript, DisplaySettings(locale=LOCALE))
    shown = _widget_counts(transcript)
    shown["tool_calls"] += sum(
        _memory_badged(turn["process"]["children"])
        for turn in _turn_nodes(plain["nodes"])
        if turn["process"]
    )
    for name, count in shown.items():
        same(name, row[name], count)
    same("subagents", row["subagents"], _view_subagents(plain["nodes"]))
    same("warnings", row["warnings"], len(plain["notice"]["items"]) if plain["notice"] else 0)
    same("title", row["title"], _title(plain["nodes"]))

    # The session header (U-3): each part as the row would make it.
    parts = {part["name"]: part for part in plain["session"]["parts"]} if plain["session"] else {}
    text = {name: part["text"] for name, part in parts.items()}
    turns = plural("session.turns", row["turns"], LOCALE) if row["turns"] else None
    same("header turns", turns, text.get("turns"))
    tools = None
    if row["tool_calls"]:
        tools = plural("session.tools", row["tool_calls"], LOCALE)
        if row["failed_tools"]:
            tools = translate("session.failed", LOCALE, tools=tools, count=row["failed_tools"])
    same("header tools", tools, text.get("tools"))
    # The agent: the id the source records (named as the header names it), else the header's
    # name as an id ("Gemini CLI": "gemini-cli").
    agent, named = row["agent"], text.get("agent")
    if agent != ("-".join(named.lower().split()) if named else None) and (
        agent is None or AGENT_NAMES.get(agent, agent) != named
    ):
        problems.append(f"agent: row {agent!r}, view {named!r}")
    model = parts.get("model")
    same("model", row["model"], (model["title"] or model["text"]).split(", ")[0] if model else None)
    tokens = [row[name] or 0 for name in TOKEN_COLUMNS]
    if "tokens" in parts:
        spent = _TOKENS_TITLE.match(parts["tokens"]["title"])
        assert spent is not None, parts["tokens"]
        recorded = [0 if n == "not recorded" else int(n.replace(",", "")) for n in spent.groups()]
        same("tokens", tokens, recorded)
    else:
        same("tokens (no header part)", tokens, [0] * len(TOKEN_COLUMNS))
    cost = row["cost_usd"]
    same("cost", None if cost is None else format_usd(cost),
         text["cost"].removeprefix("≈ ").removeprefix("$") if "cost" in text else None)  # fmt: skip
    # Why there is none (U-2): the row's reason is the header's, in the row's English.
    no_cost = row["no_cost"]
    same("no_cost", None if no_cost is None else translate("cost.none", LOCALE, reason=no_cost),
         text.get("no_cost"))  # fmt: skip
    started = row["started"].strftime("%Y-%m-%d %H:%M:%S") if row["started"] else None
    title = parts["started"]["title"] if "started" in parts else None
    if (started is None) != (title is None) or (started and title and started not in title):
        problems.append(f"started: row {row['started']!r}, view {title!r}")
    duration = row["duration_s"]
    same("duration", format_duration(duration * 1000, hide_trailing_zeros=True)
         if duration else None, text.get("duration"))  # fmt: skip
    facts = session_facts(transcript)  # the header's span, to the microsecond
    same("started/ended/duration_s", (row["started"], row["ended"], duration),
         (facts.started, facts.ended, facts.duration_s))  # fmt: skip

    # The outcome badge (H-6).
    badge = plain["outcome"]
    outcome = row["outcome"]
    if outcome is None:
        if badge is not None and badge["status"] != "other":  # "other": a score alone
            problems.append(f"outcome: row None, view {badge!r}")
    else:  # an outcome of no standard name is named as written, status "other"
        known = outcome in OUTCOMES
        if (
            badge is None
            or badge["status"] != (outcome if known else "other")
            or (not known and outcome not in badge["text"])
        ):
            problems.append(f"outcome: row {outcome!r}, view {badge!r}")
    recorded = transcript.metadata.get("score")
    if row["score"] is not None:
        if badge is None or _score_text(row["score"]) not in badge["text"]:
            problems.append(f"score: row {row['score']!r}, view {badge!r}")
    elif _score_text(recorded):
        # Known difference: ``score`` is a number column (C-2). A grade (Inspect's "C") or
        # several scorers at once (``{"match": 1, "includes": 1}``) is no one number: the row
        # leaves it null rather than pick one, and the badge names each scorer.
        numbers = [v for v in (recorded.values() if isinstance(recorded, Mapping) else [recorded])
                   if isinstance(v, (int, float)) and not isinstance(v, bool)]  # fmt: skip
        if len(numbers) == 1 and (not isinstance(recorded, Mapping) or len(recorded) == 1):
            problems.append(f"score: row None, view {badge and badge['text']!r}")
    return problems


def _turn_rows_vs_view(
    rows: list[dict[str, Any]], view: Mapping[str, Any], *, per_turn: bool
) -> list[str]:
    """What of ``corpus.turns()``'s rows of one item differs from its turns' headers;
    ``per_turn``: whether its source records tokens per turn (else a row has none, and its
    header says they are not recorded per turn)."""
    turns = _turn_nodes(view["nodes"])
    if [row["turn"] for row in rows] != list(range(1, len(turns) + 1)):
        return [f"turns(): rows {[row['turn'] for row in rows]}, view {len(turns)} turns"]
    problems = []
    for row, turn in zip(rows, turns, strict=True):
        header, n = turn["header"], row["turn"]
        duration = row["duration_s"]
        took = format_duration(duration * 1000, hide_trailing_zeros=True) if duration else None
        count = row["tool_calls"]
        tokens = total_of({name: row[name] for name in TOKEN_COLUMNS if row[name] is not None})
        usage = None if per_turn else translate("session.tokens_not_per_turn", LOCALE)
        if tokens:
            usage = translate("session.tokens", LOCALE, tokens=compact_count(tokens))
            if row["cost_usd"] is not None:
                usage += f" · ≈ ${format_usd(row['cost_usd'])}"
            elif row["no_cost"] is not None:  # why not, as the header says it (U-2)
                usage += f" · {translate('cost.none', LOCALE, reason=row['no_cost'])}"
        expected = {
            "status": (row["status"], turn["status"]),
            "duration": (took, header["duration"]),
            "tools": (plural("header.tools", count, LOCALE) if count else None, header["count"]),
            "tool rows": (count, len(_turn_tools(turn))),
            "usage": (usage, header.get("usage")),
        }
        problems += [f"turn {n} {name}: row {value!r}, view {shown!r}"
                     for name, (value, shown) in expected.items() if value != shown]  # fmt: skip
    return problems


def _tool_rows_vs_view(rows: list[dict[str, Any]], view: Mapping[str, Any]) -> list[str]:
    """What of ``corpus.tool_calls()``'s rows of one item differs from its tool rows (the
    detailed view: every call on its row, in the order it was called) and the timeline's bars
    (a call's duration: the bar's label)."""
    shown = [(n, tool) for n, turn in enumerate(_turn_nodes(view["nodes"]), 1)
             for tool in _turn_tools(turn)]  # fmt: skip
    if len(rows) != len(shown):
        return [f"tool_calls(): {len(rows)} rows, view {len(shown)} tool rows"]
    timeline = view["timeline"] or {}
    bars = {bar["key"]: bar for turn in timeline.get("turns", []) for bar in turn.get("bars", [])}
    problems = []
    for row, (turn, tool) in zip(rows, shown, strict=True):
        call = f"turn {row['turn']} {row['call_id']!r}"
        description = html.unescape(tool["description"]) if tool["description"] else None
        result = tool["result"]
        error = None
        # Known difference: ``error`` is the first line of an *errored* call's result. A
        # cancelled call is a failure too (failed_tools counts it), but what it keeps is the
        # output it printed before it was stopped (F-10), not why it failed: no ``error``.
        if tool["status"] == "error" and result is not None:
            rest = _plain(result.get("more_html", ""))
            error = _first_line(result["text"] + rest)
        expected = {
            "turn": (row["turn"], turn),
            "call_id": (row["call_id"], html.unescape(tool["call_id"])),
            "name": (display_name(row["name"]), html.unescape(tool["name"])),
            "category": (row["category"], tool["category"]),
            "status": (row["status"], tool["status"]),
            "description": (row["description"], description),
            "error": (row["error"], error),
        }
        bar = bars.get(tool["key"])
        if bar is not None:  # the timeline's label of the call: name, duration, status
            label = display_name(row["name"]) + (f" {description}" if description else "")
            parts = [label]
            if row["duration_ms"]:
                parts.append(format_duration(row["duration_ms"], hide_trailing_zeros=True))
            if row["status"] != "success":  # "Outcome not recorded" of a call of no result
                silent = row["status"] == "unknown" and tool["result"] is None
                said = translate(f"status.{row['status']}" + silent * "_no_result", LOCALE)
                if tool["status_text"] in _STILL_RUNNING:
                    said = tool["status_text"]  # an unknown outcome worded from the call's meta
                parts.append(said)
            expected["duration (bar)"] = (" · ".join(parts), bar["label"])
        problems += [f"{call} {name}: row {value!r}, view {shown_value!r}"
                     for name, (value, shown_value) in expected.items()
                     if value != shown_value]  # fmt: skip
    return problems


@pytest.mark.parametrize("group", GROUPS)
def test_C2_C3_every_fixtures_rows_say_what_its_view_says(group: str) -> None:
    corpus = _scan(group)
    tool_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    turn_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for call in corpus.tool_calls().to_pylist():
        tool_rows[call["key"]].append(call)
    for turn in corpus.turns().to_pylist():
        turn_rows[turn["key"]].append(turn)
    problems: list[str] = []
    checked = 0
    for row in corpus:
        if row["error"] is not None:
            continue  # an unreadable item (C-7): no view to compare with
        transcript = corpus[row["key"]]
        detailed = build_view_model(transcript, DETAILED)
        per_turn = records_tokens_per_turn(transcript)
        found = (
            _row_vs_view(row, transcript)
            + _turn_rows_vs_view(turn_rows.pop(row["key"], []), detailed, per_turn=per_turn)
            + _tool_rows_vs_view(tool_rows.pop(row["key"], []), detailed)
        )
        name = row["key"].removeprefix(f"{FIXTURES}/")
        problems += [f"{name}: {problem}" for problem in found]
        checked += 1
    problems += [f"{key}: tool_calls() rows of no readable row" for key in tool_rows]
    problems += [f"{key}: turns() rows of no readable row" for key in turn_rows]
    assert not problems, "\n".join(problems)
    assert checked, f"{group}: no fixture was read"


def test_C2_an_aider_historys_warnings_are_counted_once_in_its_row() -> None:
    """A scan reads an aider history from the file it opened (``read_source``), and its
    warnings were handed over twice: by the reader and by the load (``settle_load``). The row
    counted 2 warnings where the view's notice lists 1 (``load(path)`` reads it right)."""
    path = FIXTURES / "aider" / "aider_handmade_cache-whole-dry-run.md"
    expected = [w.reason for w in turnfold.load(path).warnings]
    assert expected == ["a SEARCH block without its REPLACE end: shown as text"]
    with path.open("rb") as stream:
        assert [w.reason for w in turnfold.load(stream, format="aider").warnings] == expected
    (row,) = turnfold.scan([path], cache=False, workers=1)
    assert row["warnings"] == len(expected)
