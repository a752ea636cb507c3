"""The truth check: a loaded transcript against the scripted server's record of the run.

Nothing here asks the loader what happened. The calls are the ones the server issued, in the
order it issued them; a result is what the agent sent back to the model; a status follows from
that result by one rule per agent (:meth:`~tests.agents.clis.Agent.failed`: the wire's error
flag, else a non-zero exit code in the text), whatever status field the agent wrote itself. Only
where the result never says (OpenCode sends a command's output without its exit code) does the
rule read the agent's own record of the outcome, raw from its file.

Tokens are the server's too: every response carried counts of its own, and the counts loaded
(each response once, where it belongs) and the totals a session's header and its corpus row show
must be the server's, summed under :mod:`turnfold.usage`'s convention. Each run's stdout stream
is held to the same, for the counts it records (:class:`~tests.agents.clis.StreamTokens`): a
count it does not record must load as not recorded, never as a number.

Each finding names the check it belongs to (:data:`CHECKS`), so that a test can ask for one
check and the drift report can group them.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import turnfold
from tests.agents.clis import StreamTokens, StreamWritten
from tests.agents.play import Play
from tests.agents.script import Failure
from tests.agents.server import EXTRA_TEXT, Exchange, Issued
from tests.agents.wire import FAILURE_TOKEN
from turnfold import (
    AbortMarker,
    AssistantError,
    AssistantText,
    CompactionBoundary,
    SystemNotice,
    Thinking,
    ToolCall,
    Transcript,
    UserMessage,
)
from turnfold.corpus.discover import Item
from turnfold.corpus.summarize import TOKEN_COLUMNS, summarize
from turnfold.session import SessionTally, session_facts
from turnfold.usage import Tokens, add_into, counts_of, responses

#: The checks, in the order the report shows them.
CHECKS: dict[str, str] = {
    "load": "every session file loads",
    "calls": "the same tool calls in order, with their names, arguments and ids",
    "results": "each result holds what the agent sent back to the model",
    "statuses": "each status follows from the result the agent sent",
    "subagent": "the sub-agent's steps nested under the call that started it",
    "resume": "every prompt of a resumed session in one transcript",
    "texts": "the model's texts and thinking, as the server sent them",
    "tokens": "each response's token counts once, as the server sent them; the totals their sums",
    "stream": "the tokens of each run's stdout stream, as far as it records them: each response's"
    " counts once; the run's and the session's totals the server's sums",
    "failures": "each API error the agent recorded shown once, as a notice or an error; none"
    " shown that it did not record; the retried request's answer once, none invented",
    "extra": "no entry that the run did not produce",
    "accounting": "every record accounted for, none of an unknown type",
}

#: Tokens the scenarios print; every one the agent sent in a result must survive the load.
TOKEN = re.compile(r"TF-[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")


@dataclass(frozen=True)
class Finding:
    """One way the transcript differs from the truth."""

    check: str
    message: str

    def __str__(self) -> str:
        return f"[{self.check}] {self.message}"


def load(path: Path) -> Transcript:
    return turnfold.load(path)


def check(play: Play) -> list[Finding]:
    """Every finding of ``play``; empty when the loaded transcript is the truth."""
    findings: list[Finding] = []
    transcripts: list[tuple[Path, Transcript]] = []
    for path in play.files:
        try:
            transcripts.append((path, load(path)))
        except Exception as exc:
            findings.append(Finding("load", f"{path.name}: {exc!r}"))
    if not transcripts:
        return findings
    main = _main_transcript(play, transcripts, findings)
    record = play.record
    threads = [p.marker for p in play.scenario.prompts]
    issued = [i for t in threads for i in record.calls(t)]
    findings += _check_calls(play, main, issued, "calls", "")
    sub = play.scenario.subagent
    if sub is not None and record.calls(sub.marker):
        findings += _check_subagent(play, main, issued, record.calls(sub.marker))
    findings += _check_texts(play, main, threads)
    findings += _check_failures(play, main, threads)
    main_path = next(p for p, t in transcripts if t is main)
    findings += _check_tokens(play, main_path, main)
    findings += _check_streams(play)
    for _, transcript in transcripts:  # the main one, and any stub beside it (_main_transcript)
        findings += _check_extra(play, transcript, issued)
    for path, transcript in transcripts:
        for name, each in _with_subagents(path.name, transcript):
            findings += _check_accounting(play, name, each)
    return findings


def _main_transcript(
    play: Play, transcripts: list[tuple[Path, Transcript]], findings: list[Finding]
) -> Transcript:
    """The transcript holding the first prompt; every other prompt must be in it too.

    Gemini CLI names a session file by the minute it starts; a resume in a later minute first
    writes a stub of its own (the header and the ``<session_context>`` briefing) and then goes on
    in the session's file. A stub holds no conversation: only notices, which the "extra" check
    holds to what the agent sent, as in the main file. A second file with anything else is a
    finding.
    """
    prompts = [p.text for p in play.scenario.prompts]
    holding = [t for _, t in transcripts if _prompts(t) and _prompts(t)[0] == prompts[0]]
    main = holding[0] if holding else transcripts[0][1]
    talking = [(p, t) for p, t in transcripts if not _only_notices(t)]
    if len(talking) > 1:
        names = ", ".join(p.name for p, _ in talking)
        findings.append(Finding("resume", f"{len(talking)} session files, not one: {names}"))
    seen = _prompts(main)
    if seen != prompts:
        findings.append(Finding("resume", f"prompts {seen!r}, not {prompts!r}"))
    return main


def _only_notices(transcript: Transcript) -> bool:
    return all(isinstance(e, SystemNotice) for e in transcript.entries)


def _prompts(transcript: Transcript) -> list[str]:
    return [e.text.strip() for e in transcript.entries if isinstance(e, UserMessage)]


def _expected_status(play: Play, issued: Issued) -> tuple[str, ...]:
    """The statuses the truth allows: from the result the agent sent; a call no result ever
    came back for is cancelled (or still pending) when the run was interrupted, and a success
    when it ended its conversation (Gemini's ``complete_task``)."""
    result = play.record.results.get(issued.concrete.call_id)
    if result is not None:
        return ("error",) if play.agent.failed(result, play.home) else ("success",)
    if issued.call.outcome == "cancelled":
        return ("cancelled", "pending")
    return ("success",) if issued.call.outcome == "ok" else ("error",)


def _pair(loaded: list[ToolCall], issued: list[Issued]) -> list[tuple[ToolCall | None, Issued]]:
    """Loaded calls matched to issued ones: by id where the loader kept the ids, else in order."""
    by_id = {c.call_id: c for c in loaded}
    if all(i.concrete.call_id in by_id for i in issued):
        return [(by_id[i.concrete.call_id], i) for i in issued]
    padded: list[ToolCall | None] = list(loaded) + [None] * max(0, len(issued) - len(loaded))
    return list(zip(padded, issued, strict=False))


def _sent_name(call: ToolCall) -> str:
    """The name the model called a tool by: a call the loader names for what it does (Codex's
    ``exec_command`` of an ``apply_patch`` heredoc: an edit) keeps it as ``called_as``."""
    called_as = call.meta.get("called_as")
    return called_as if isinstance(called_as, str) else call.name


def _check_calls(
    play: Play, transcript: Transcript, issued: list[Issued], where: str, prefix: str
) -> list[Finding]:
    """Calls, results and statuses of one conversation (``where`` names the check of the call
    list itself, so that a sub-agent's calls report under ``subagent``)."""
    findings = []
    loaded = transcript.tool_calls()
    names = [_sent_name(c) for c in loaded]
    wanted = [i.concrete.name for i in issued]
    if names != wanted:
        findings.append(Finding(where, f"{prefix}calls {names}, not {wanted}"))
    raw = _raw_text(play)
    for call, truth in _pair(loaded, issued):
        label = f"{prefix}{truth.concrete.name} {truth.concrete.call_id} ({truth.call.action})"
        if call is None:
            findings.append(Finding(where, f"{label}: missing"))
            continue
        same = _same_args(call.args, truth.concrete.args)
        if _sent_name(call) != truth.concrete.name or not same:
            findings.append(
                Finding(
                    where,
                    f"{label}: loaded as {call.name} {call.args!r}, sent {truth.concrete.args!r}",
                )
            )
        if call.call_id != truth.concrete.call_id and f'"{truth.concrete.call_id}"' in raw:
            findings.append(
                Finding(where, f"{label}: id {call.call_id!r}, though the file keeps the id")
            )
        findings += _check_result(play, call, truth, label, prefix)
    return findings


def _same_args(loaded: Any, sent: dict[str, Any]) -> bool:
    """Every argument the server sent, with its value. The agent may record defaults it filled
    in itself (Claude Code's ``replace_all: false``): those are in its file, not the loader's."""
    return isinstance(loaded, dict) and all(loaded.get(k) == v for k, v in sent.items())


def _check_result(
    play: Play, call: ToolCall, truth: Issued, label: str, prefix: str
) -> list[Finding]:
    findings = []
    sent = play.record.results.get(truth.concrete.call_id)
    loaded = call.result.text if call.result is not None else None
    if sent is not None:
        if loaded is None:
            findings.append(Finding("results", f"{label}: no result loaded"))
        else:
            returned = play.agent.returned(sent)
            lost = sorted(set(TOKEN.findall(returned)) - set(TOKEN.findall(loaded)))
            if lost:
                shown = ", ".join(lost[:5]) + (
                    f" and {len(lost) - 5} more" if len(lost) > 5 else ""
                )
                findings.append(Finding("results", f"{label}: result lost {shown}"))
    expected = _expected_status(play, truth)
    if call.status not in expected:
        why = "no result came back" if sent is None else f"the agent sent {sent.text[:120]!r}"
        findings.append(
            Finding("statuses", f"{label}: status {call.status!r}, not {expected[0]!r} ({why})")
        )
    return findings


def _check_subagent(
    play: Play, main: Transcript, issued: list[Issued], child: list[Issued]
) -> list[Finding]:
    spawns = [i for i in issued if i.call.action == "spawn"]
    pairs = {t.concrete.call_id: c for c, t in _pair(main.tool_calls(), issued)}
    spawn = pairs.get(spawns[0].concrete.call_id) if spawns else None
    if spawn is None:
        return [Finding("subagent", "no spawn call loaded")]
    agent = spawn.subagent
    if agent is None or agent.transcript is None:
        return [Finding("subagent", f"{spawn.name} {spawn.call_id}: no sub-agent transcript")]
    findings = _check_calls(play, agent.transcript, child, "subagent", "sub-agent ")
    sub = play.scenario.subagent
    task, marker = (sub.text, sub.marker) if sub is not None else ("", "")
    prompts = _prompts(agent.transcript)
    if prompts and prompts != [task]:
        findings.append(Finding("subagent", f"sub-agent prompts {prompts!r}, not [{task!r}]"))
    texts = [r.text for r in play.record.replies(marker) if r.text]
    shown = _texts(agent.transcript)
    missing = [t for t in texts if t not in shown and t != EXTRA_TEXT]
    if missing:
        findings.append(Finding("subagent", f"sub-agent texts missing: {missing!r}"))
    return findings


def _texts(transcript: Transcript) -> list[str]:
    return [e.text.strip() for e in transcript.entries if isinstance(e, AssistantText)]


def _check_texts(play: Play, main: Transcript, threads: list[str]) -> list[Finding]:
    findings = []
    sent = [r for t in threads for r in play.record.replies(t)]
    texts = [r.text for r in sent if r.text]
    shown = _texts(main)
    if _dedupe(shown) != _dedupe(texts):
        findings.append(Finding("texts", f"texts {shown!r}, not {texts!r}"))
    thinking = [r.thinking for r in sent if r.thinking]
    thought = [e.text.strip() for e in main.entries if isinstance(e, Thinking)]
    if thought != thinking:
        findings.append(Finding("texts", f"thinking {thought!r}, not {thinking!r}"))
    return findings


def _failure_text(entry: object) -> str | None:
    """The text of an entry that reports a failure: an error, or a warning or error notice."""
    if isinstance(entry, AssistantError):
        return entry.message
    if isinstance(entry, SystemNotice) and entry.level in ("warning", "error"):
        return entry.text
    return None


def _check_failures(play: Play, main: Transcript, threads: list[str]) -> list[Finding]:
    """The API errors the server answered with (:data:`~tests.agents.script.Failure`), as the
    agent's expectation (``records_failures``) says it writes them: each kind it records shown
    once (a fatal one as an error, a retried one once, however often it was retried), each it
    does not in neither its files nor the load; the retried step's answer loaded once (its text
    and calls), and no entry carrying token counts for a request that got none."""
    findings: list[Finding] = []
    failed = play.record.failures(threads)
    scripted = {t.failure for p in play.scenario.prompts for t in p.turns if t.failure}
    if not failed:
        if scripted:
            findings.append(Finding("failures", f"the server sent no API error ({scripted})"))
        return findings
    recorded = play.agent.records_failures or frozenset()
    # A SQLite session (OpenCode's) may hold its last writes in the write-ahead log still.
    wal = [Path(f"{p}-wal") for p in play.all_files if Path(f"{p}-wal").is_file()]
    raw = "\n".join([_raw_text(play), *(w.read_text(errors="replace") for w in wal)])
    sent: dict[Failure, int] = {}
    for exchange in failed:
        if exchange.reply.error is not None:
            sent[exchange.reply.error] = sent.get(exchange.reply.error, 0) + 1
    for kind, times in sent.items():
        token = FAILURE_TOKEN[kind]
        shown = [e for e in main.entries if token in (_failure_text(e) or "")]
        what = f"the {kind} error ({times} request(s))"
        if kind not in recorded:
            if token in raw:
                findings.append(
                    Finding("failures", f"{what}: in the session file, though not expected")
                )
            if shown:
                findings.append(Finding("failures", f"{what}: shown, though never written"))
            continue
        if token not in raw:
            findings.append(Finding("failures", f"{what}: not in the session file as expected"))
        elif not shown:
            findings.append(Finding("failures", f"{what}: written, not shown"))
        elif len(shown) > 1:
            findings.append(Finding("failures", f"{what}: shown {len(shown)} times"))
        elif kind == "fatal" and isinstance(shown[0], SystemNotice) and shown[0].level != "error":
            findings.append(Finding("failures", f"{what}: shown as a {shown[0].level} notice"))
        findings += [
            Finding("failures", f"{what}: {e.kind} {e.id} carries token counts")
            for e in shown
            if getattr(e, "usage", None) is not None
        ]
    findings += _check_retried(play, main, {(e.thread, e.step) for e in failed})
    return findings


def _check_retried(
    play: Play, main: Transcript, failed_steps: set[tuple[str | None, int | None]]
) -> list[Finding]:
    """The answer a retried step finally got, loaded once: its text, and each of its calls."""
    findings = []
    texts = _texts(main)
    calls = [c.call_id for c in main.tool_calls()]
    for exchange in play.record.conversation(t for t, _ in failed_steps if t is not None):
        if (exchange.thread, exchange.step) not in failed_steps:
            continue
        reply = exchange.reply
        if reply.text and texts.count(reply.text) != 1:
            findings.append(
                Finding("failures", f"{reply.text!r} shown {texts.count(reply.text)} times")
            )
        for call in reply.calls:
            if calls.count(call.call_id) > 1:
                findings.append(Finding("failures", f"call {call.call_id} shown twice"))
    return findings


def _dedupe(items: Iterable[str]) -> list[str]:
    """Consecutive repeats removed (a retried request gets the same text twice)."""
    out: list[str] = []
    for item in items:
        if not out or out[-1] != item:
            out.append(item)
    return out


def _check_extra(play: Play, main: Transcript, issued: list[Issued]) -> list[Finding]:
    findings = []
    prompts = {p.text for p in play.scenario.prompts}
    # The API errors the server sent are the "failures" check's.
    failed = {FAILURE_TOKEN[e.reply.error] for e in play.record.exchanges if e.reply.error}
    for entry in main.entries:
        if any(token in (_failure_text(entry) or "") for token in failed):
            continue
        what = f"{entry.kind} {entry.id}"
        if isinstance(entry, UserMessage) and entry.text.strip() not in prompts:
            findings.append(
                Finding("extra", f"{what}: a user prompt no one typed: {entry.text[:100]!r}")
            )
        elif isinstance(entry, CompactionBoundary):
            findings.append(Finding("extra", f"{what}: a compaction that never happened"))
        elif isinstance(entry, AbortMarker) and not play.scenario.interrupt:
            findings.append(Finding("extra", f"{what}: an abort in a run nobody interrupted"))
        elif entry.kind in ("error", "system", "pending_action"):
            text = getattr(entry, "text", "") or getattr(entry, "message", "")
            if entry.kind == "system" and _sent_to_model(play, text):
                continue  # context the agent injected itself, shown as a notice: it was there
            findings.append(Finding("extra", f"{what}: {text[:100]!r}"))
    ids = {i.concrete.call_id for i in issued}
    loaded_ids = {c.call_id for c in main.tool_calls()}
    if ids <= loaded_ids and loaded_ids - ids:
        findings.append(Finding("extra", f"calls nobody issued: {sorted(loaded_ids - ids)}"))
    return findings


def _sent_to_model(play: Play, text: str) -> bool:
    """Whether the agent sent ``text`` to the model as user-side content (its start, at least:
    a loader may shorten a notice)."""
    head = text.strip()[:200]
    return bool(head) and any(head in sent for sent in play.record.user_texts)


def records_catalogue(loader: str) -> set[str] | None:
    """The record types the loader knows (``turnfold.formats.<loader>.RECORDS``), if declared."""
    module = importlib.import_module(f"turnfold.formats.{loader}")
    records: Any = getattr(module, "RECORDS", None)
    if records is None:
        return None
    if hasattr(records, "known"):
        return set(records.known())
    return set(records)


def _with_subagents(name: str, transcript: Transcript) -> Iterable[tuple[str, Transcript]]:
    """A transcript and, depth first, those of its sub-agents (loaded from their own files)."""
    yield name, transcript
    for call in transcript.tool_calls():
        if call.subagent is not None and call.subagent.transcript is not None:
            yield from _with_subagents(
                f"{name} > {call.name} {call.call_id}", call.subagent.transcript
            )


def _check_accounting(play: Play, name: str, transcript: Transcript) -> list[Finding]:
    """Nothing lost, never silently: every record mapped or ignored by design (issue 11).

    Only once the loader declares its catalogue (``RECORDS``) is its accounting complete; before
    that every record would read as unaccounted, which says nothing about this run."""
    findings = [Finding("accounting", f"{name}: warning: {w.reason}") for w in transcript.warnings]
    accounting = getattr(transcript, "accounting", None)
    if accounting is None or records_catalogue(play.agent.loader) is None:
        return findings
    unaccounted = sorted({name for _, name in accounting.unaccounted})
    if unaccounted:
        findings.append(Finding("accounting", f"{name}: records not accounted for: {unaccounted}"))
    warned = sorted(accounting.types("warned")) if hasattr(accounting, "types") else []
    if warned:
        findings.append(Finding("accounting", f"{name}: record types warned about: {warned}"))
    return findings


def _raw_text(play: Play) -> str:
    return "\n".join(p.read_text(errors="replace") for p in play.all_files)


def _check_tokens(play: Play, path: Path, main: Transcript) -> list[Finding]:
    """Each response's counts loaded once, where its conversation is (the sub-agent's in the
    transcript nested under the call that started it), and nothing else; the session's header
    (a load's and a live widget's), its corpus row and the sub-agent's line show the sums of
    what the server sent."""
    record = play.record
    own = record.conversation(p.marker for p in play.scenario.prompts)
    sub = play.scenario.subagent
    child = record.conversation([sub.marker]) if sub is not None else []
    findings: list[Finding] = []
    loaded: dict[int, str] = {}  # each response's number, and where it was counted
    recorded = play.agent.session_counts
    for name, transcript in _with_subagents("session", main):
        sent = own if transcript is main else child
        findings += _check_responses(play, name, transcript, sent, loaded, recorded)
    findings += [
        Finding("tokens", f"response {e.number} ({e.thread} step {e.step}): not counted")
        for e in own + child
        if e.number not in loaded
    ]
    expected_child = _only(_sum(child), recorded)
    shown = _totals_shown(main, path, _only(_sum(own + child), recorded), expected_child)
    findings += _mismatches(play, shown, "tokens")
    findings += _check_subagent_line(main, expected_child.get("output_tokens"))
    return findings


def _totals_shown(
    main: Transcript, path: Path, expected: Tokens, expected_child: Tokens
) -> dict[str, tuple[Tokens, Tokens]]:
    """Each place a load of ``path`` shows the session's totals (the header, a live one, the
    sub-agent part, the corpus row), with what it should show."""
    facts = session_facts(main)
    row = summarize(Item(key=path.name, path=str(path)))
    return {
        "the header's totals": (facts.tokens, expected),
        "a live header's totals": (SessionTally(main).facts().tokens, expected),
        "the header's sub-agent part": (facts.subagent_tokens, expected_child),
        "the corpus row": (
            {k: row[k] for k in TOKEN_COLUMNS if row[k] is not None},
            {k: v for k, v in expected.items() if k in TOKEN_COLUMNS},
        ),
    }


def _mismatches(
    play: Play, shown: dict[str, tuple[Tokens, Tokens]], check: str, name: str = ""
) -> list[Finding]:
    """A finding for each place whose counts are not the sum the server sent."""
    prefix = f"{name}: " if name else ""
    return [
        Finding(check, f"{prefix}{what}: {_seen(play, counted)}, not the server's {sent_sum}")
        for what, (counted, sent_sum) in shown.items()
        if _seen(play, counted) != sent_sum
    ]


def _check_responses(
    play: Play,
    name: str,
    transcript: Transcript,
    sent: list[Exchange],
    loaded: dict[int, str],
    recorded: frozenset[str] | None = None,
    check: str = "tokens",
) -> list[Finding]:
    """The responses ``transcript`` counts (:func:`turnfold.usage.responses`: each once, by
    its response id): each one of ``sent``, with its counts (those ``recorded``, where the
    source records only some), and not counted elsewhere too (``loaded`` gathers where each
    was found, over the nested transcripts)."""
    findings = []
    by_count = {v: e for e in play.record.exchanges for v in _counts(e).values()}
    wanted = {e.number for e in sent}
    for entry, counts in responses(transcript.entries, lambda e: e):
        seen = _seen(play, counts)
        where = f"{name}: {entry.kind} {entry.id}"
        # Every count of every response is a number of its own (SentUsage.numbered): any one
        # names the response; a count that names none was never sent.
        exchange = next((by_count[v] for v in seen.values() if v in by_count), None)
        if exchange is None:
            findings.append(Finding(check, f"{where}: {seen}, no response the server sent"))
            continue
        n = exchange.number
        if n in loaded:
            findings.append(Finding(check, f"{where}: response {n} counted again ({loaded[n]})"))
            continue
        loaded[n] = where
        expected = _only(_counts(exchange), recorded)
        if n not in wanted:
            what = "beside the conversation" if exchange.side else f"of {exchange.thread}"
            findings.append(Finding(check, f"{where}: response {n}, {what}, counted here"))
        elif seen != expected:
            told = "sent" if recorded is None else "the source records"
            findings.append(Finding(check, f"{where}: response {n} as {seen}, {told} {expected}"))
    return findings


def _check_streams(play: Play) -> list[Finding]:
    """The tokens of each run's stdout stream, as the agent's stream records them
    (:class:`~tests.agents.clis.StreamTokens`): each response's recorded counts once, in its own
    conversation (the sub-agent's where the stream shows them); the header (a load's and a live
    one's), the corpus row and the sub-agent part the sums of what the server sent that the
    stream records; the session's total so far the sum over this run and the ones before it. A
    run cut short (an exit code not 0) may end before its totals: they are checked if there.
    A run stopped may end before it wrote a response, or its total: what the stream holds
    (:meth:`~tests.agents.clis.Agent.stream_wrote`, read from the file) is what its load must
    show. A stream turnfold does not read is not checked."""
    findings: list[Finding] = []
    stream = play.agent.stream
    if stream is None:
        return findings
    for index, (path, run) in enumerate(zip(play.streams, play.runs, strict=True)):
        name = f"stdout of run {index + 1}"
        try:
            transcript = load(path)
        except Exception as exc:
            findings.append(Finding("stream", f"{name}: {exc!r}"))
            continue
        ended = run.returncode == 0
        written = play.agent.stream_wrote(path.read_text(errors="replace"))
        findings += _check_stream(
            play, stream, name, path, transcript, index, ended=ended, written=written
        )
    return findings


def _check_stream(
    play: Play,
    stream: StreamTokens,
    name: str,
    path: Path,
    main: Transcript,
    index: int,
    *,
    ended: bool,
    written: StreamWritten,
) -> list[Finding]:
    record = play.record
    markers = [p.marker for p in play.scenario.prompts]
    own = record.conversation([markers[index]])
    # The responses the stream wrote: a stop may land before the CLI wrote the one it read.
    held = own if written.counts is None else [e for e in own if written.counts & _values(e)]
    child = _children(play, markers[index : index + 1])
    findings: list[Finding] = []
    loaded: dict[int, str] = {}
    for where, transcript in _with_subagents(name, main):
        if transcript is not main:
            findings += _check_responses(
                play, where, transcript, child, loaded, stream.subagent, "stream"
            )
        elif stream.responses:
            findings += _check_responses(
                play, where, transcript, own, loaded, stream.responses, "stream"
            )
    if stream.responses:
        findings += [
            Finding("stream", f"{name}: response {e.number} (step {e.step}): not counted")
            for e in held
            if e.number not in loaded
        ]
    # The sub-agent's responses the stream shows: it may leave some out.
    sub_part = _only(_sum([e for e in child if e.number in loaded]), stream.subagent)
    if written.total is None:
        totalled = bool(stream.run_total) and (ended or "usage" in main.metadata)
    else:  # the file says: a run that exited 0 may still have ended before its total
        totalled = bool(stream.run_total) and written.total
    if totalled:
        counted = own + child if stream.run_total_subagents else own
        expected = _only(_sum(counted), stream.run_total)
    else:
        expected = _only(_sum(held), stream.responses)
    # The header adds the sub-agent's counts the stream shows, unless the run's total holds
    # them already: added again, a doubled total would pass.
    if not (totalled and stream.run_total_subagents):
        add_into(expected, sub_part)
    shown = _totals_shown(main, path, expected, sub_part)
    session = main.metadata.get("session_usage")
    if stream.session_total and (ended or session is not None):
        so_far = record.conversation(markers[: index + 1])
        if stream.session_total_subagents:
            so_far += _children(play, markers[: index + 1])
        total = counts_of(session) if isinstance(session, Mapping) else {}
        shown["the session's total so far"] = (
            _only(total, stream.session_total),
            _only(_sum(so_far), stream.session_total),
        )
    findings += _mismatches(play, shown, "stream", name)
    output = _sum(child).get("output_tokens")
    findings += [
        Finding("stream", f"{name}: {f.message}") for f in _check_subagent_line(main, output)
    ]
    return findings


def _children(play: Play, markers: list[str]) -> list[Exchange]:
    """The sub-agent's responses, if a call of the conversations ``markers`` started it."""
    sub = play.scenario.subagent
    spawned = any(i.call.action == "spawn" for m in markers for i in play.record.calls(m))
    return play.record.conversation([sub.marker]) if sub is not None and spawned else []


def _only(counts: Tokens, names: frozenset[str] | None) -> Tokens:
    """``counts`` but those not among ``names`` (None: all of them)."""
    return dict(counts) if names is None else {k: v for k, v in counts.items() if k in names}


def _check_subagent_line(main: Transcript, output: int | None) -> list[Finding]:
    """The tokens a sub-agent's line shows (spec F-7, ``SubAgent.output_tokens``), where the
    loader has them, are what its responses wrote."""
    findings = []
    for call in main.tool_calls():
        shown = call.subagent.output_tokens if call.subagent is not None else None
        if shown is not None and shown != output:
            findings.append(
                Finding(
                    "tokens",
                    f"{call.name} {call.call_id}: the sub-agent's line shows {shown} output"
                    f" tokens, its responses wrote {output}",
                )
            )
    return findings


def _counts(exchange: Exchange) -> Tokens:
    """The counts ``exchange``'s response carried, in turnfold's names."""
    usage = exchange.reply.usage
    return usage.counts() if usage is not None else {}


def _values(exchange: Exchange) -> set[int]:
    """The numbers ``exchange``'s counts are (each names it: SentUsage.numbered)."""
    return set(_counts(exchange).values())


def _sum(exchanges: list[Exchange]) -> Tokens:
    total: Tokens = {}
    for exchange in exchanges:
        add_into(total, _counts(exchange))
    return total


def _seen(play: Play, counts: Tokens) -> Tokens:
    """Loaded counts, less a zero in a count the wire API has no field for: the agent wrote
    that there were none (Codex 0.171 writes ``cache_write_input_tokens: 0`` for the Responses
    API), which counts nothing the server did not send."""
    return {k: v for k, v in counts.items() if v or k in play.agent.wire.COUNTS}
