"""The rest of what readers write themselves, said in the view's language: GitHub Copilot's
notices (a model or mode change, a custom agent, a skill, a failed compaction or hook), the
few other readers' notices, stops and errors still written in English, ADK's list of names, a
stop's reason in a corpus search (C-6) and a worded result's "show all" (F-12).

The English every entry stores, and an English view shows, is what it was before. Copilot's
events are shaped as ``tests/formats/test_copilot.py`` shapes them, their ``data`` as
``SessionEvent`` in github/copilot-sdk's ``nodejs/src/generated/session-events.ts`` (generated
from the CLI's ``session-events.schema.json``) types each; the other transcripts are real
fixtures (``tests/fixtures/SOURCES.md``).
"""

from __future__ import annotations

import contextlib
import html
import json
import re
import shutil
import sqlite3
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import turnfold
from tests.adk_raised_calls import raised_among
from tests.localized_views import plain_text, quiet_load, view_nodes, widget_in
from tests.test_zh_more import RESULTS, _shown_results, _worded_call
from turnfold.formats.harnesses.archive import ArchiveError, read_member
from turnfold.model import (
    AbortMarker,
    AssistantError,
    Entry,
    SystemNotice,
    ToolCall,
    Transcript,
)

FIXTURES = Path(__file__).parent / "fixtures"
COPILOT = FIXTURES / "copilot/session-state/5522b163-29bf-4e3e-82c6-062172639e01/events.jsonl"


def _shown(transcript: Transcript, locale: str) -> dict[str, str]:
    """Each notice, stop and error as a view in ``locale`` shows it, by its entry's key."""
    return {
        str(node["key"]): html.unescape(str(node["html"]))
        for node in view_nodes(transcript, locale)
        if node.get("kind") in ("system", "abort", "error")
    }


def _said(entry: Entry) -> str | None:
    if isinstance(entry, SystemNotice):
        return entry.text
    if isinstance(entry, AbortMarker):
        return entry.reason
    if isinstance(entry, AssistantError):
        return entry.message
    return None


def _entries(transcript: Transcript) -> Iterator[Entry]:
    """Every entry, a sub-agent's too."""
    for entry in transcript:
        yield entry
        if isinstance(entry, ToolCall) and entry.subagent and entry.subagent.transcript:
            yield from _entries(entry.subagent.transcript)


# --- GitHub Copilot's notices ------------------------------------------------------------------


def _copilot(kind: str, data: dict[str, Any]) -> Transcript:
    """The real session's start, permissions and prompt, then one event of ``kind``."""
    lines = COPILOT.read_text(encoding="utf-8").splitlines()[:3]
    event = {"type": kind, "data": data, "id": "tf-event", "parentId": None,
             "timestamp": "2026-12-05T13:26:44.000Z"}  # fmt: skip
    return quiet_load("\n".join([*lines, json.dumps(event)]).encode(), format="copilot")


#: (event type, its data, the key, the stored English (as before), the same in Chinese).
COPILOT_SAID = [
    ("session.model_change", {"previousModel": "fake-model", "newModel": "gpt-5.2"},
     "reader.model_changed", "Model changed from fake-model to gpt-5.2",
     "模型已从 fake-model 切换为 gpt-5.2"),
    ("session.mode_changed", {"previousMode": "interactive", "newMode": "plan"},
     "reader.mode.changed", "Mode changed from interactive to plan",
     "模式已从 interactive 切换为 plan"),
    # previousMode is required by the schema; the reader still says a lone new mode.
    ("session.mode_changed", {"newMode": "autopilot"}, "reader.mode", "Mode: autopilot",
     "模式：autopilot"),
    ("subagent.selected", {"agentName": "reviewer", "agentDisplayName": "Code Reviewer",
                           "tools": None},
     "reader.custom_agent_selected", "Custom agent selected: Code Reviewer",
     "已选择自定义代理：Code Reviewer"),
    ("subagent.deselected", {}, "reader.default_agent", "Back to the default agent",
     "已回到默认代理"),
    ("skill.invoked", {"name": "pdf-forms", "path": "/skills/pdf-forms/SKILL.md",
                       "content": "Fill PDF forms."},
     "reader.skill_invoked", "Skill invoked: pdf-forms", "已调用技能：pdf-forms"),
    ("session.compaction_complete", {"success": False, "error": "TF-COMPACT: too few tokens"},
     "reader.compaction_failed.said", "Compaction failed: TF-COMPACT: too few tokens",
     "压缩失败：TF-COMPACT: too few tokens"),
    ("session.compaction_complete", {"success": False}, "reader.compaction_failed",
     "Compaction failed.", "压缩失败。"),
    ("session.task_complete", {"success": True}, "reader.task_complete", "Task complete.",
     "任务已完成。"),
    ("hook.end", {"hookInvocationId": "h1", "hookType": "preToolUse", "success": False,
                  "error": {"message": "TF-HOOK: denied"}},
     "reader.hook_type_failed.said", "preToolUse failed: TF-HOOK: denied",
     "preToolUse 失败：TF-HOOK: denied"),
    ("hook.end", {"hookInvocationId": "h1", "hookType": "sessionStart", "success": False},
     "reader.hook_type_failed", "sessionStart failed", "sessionStart 失败"),
    ("hook.end", {"hookInvocationId": "h1", "hookType": "", "success": False},
     "reader.hook_type_failed.unnamed", "hook failed", "钩子失败"),
    ("session.error", {"errorType": "query"}, "reader.error", "error", "错误"),
]  # fmt: skip
COPILOT_IDS = ["model", "mode", "mode-alone", "agent", "default-agent", "skill",
               "compaction-said", "compaction", "task-complete", "hook-said", "hook",
               "hook-unnamed", "error"]  # fmt: skip


def _copilot_entry(transcript: Transcript) -> Entry:
    (entry,) = [e for e in transcript if isinstance(e, SystemNotice | AssistantError)]
    return entry


@pytest.mark.parametrize(("kind", "data", "key", "english", "chinese"), COPILOT_SAID,
                         ids=COPILOT_IDS)  # fmt: skip
def test_copilot_s_notices_are_chinese_in_a_chinese_view(
    kind: str, data: dict[str, Any], key: str, english: str, chinese: str
) -> None:
    transcript = _copilot(kind, data)
    entry = _copilot_entry(transcript)
    assert _said(entry) == english  # the stored English, as before
    wording = getattr(entry, "wording", None)
    assert wording is not None
    assert wording.key == key
    assert _shown(transcript, "zh")[entry.id] == chinese
    assert _shown(transcript, "en")[entry.id] == english


def test_copilot_s_own_words_in_a_notice_stay_as_written() -> None:
    """A task's summary, a warning's message: the source's text, no wording, alike in both."""
    said = "TF-SUMMARY: the greeting now says hello."
    transcript = _copilot("session.task_complete", {"summary": said, "success": True})
    entry = _copilot_entry(transcript)
    assert (_said(entry), getattr(entry, "wording", None)) == (said, None)
    assert _shown(transcript, "zh")[entry.id] == said


# --- other readers' words, from real fixtures -------------------------------------------------

#: (fixture, the reader's English as stored and shown in English, the same in Chinese).
OTHERS = [
    (
        "claude-code_v2.1.x_schema-coverage.jsonl",
        "Model fallback: claude-fable-5 → claude-opus-4-8",
        "模型回退：claude-fable-5 → claude-opus-4-8",
    ),
    (
        "cursor/3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13/3f0c9a52-8d41-4e7b-b1a6-0c2e5f7d9a13.jsonl",
        "Cursor transcripts do not record tool results: the outcome of every call is unknown.",
        "Cursor 的记录不含工具结果：每次调用的结果均未知。",
    ),
    (
        "kimi/legacy/interrupt/86b9e2c1-62dd-4394-9416-54a1ba079a2b/context.jsonl",
        "stopped before the model saw the tool results",
        "在模型看到工具结果之前已停止",
    ),
]


@pytest.mark.parametrize(("name", "english", "chinese"), OTHERS, ids=["claude", "cursor", "kimi"])
def test_other_readers_words_are_chinese_in_a_chinese_view(
    name: str, english: str, chinese: str
) -> None:
    transcript = quiet_load(FIXTURES / name)
    entry = next(e for e in transcript if _said(e) == english)  # a sub-agent's may say it too
    assert getattr(entry, "wording", None) is not None
    assert _shown(transcript, "zh")[entry.id] == chinese
    assert _shown(transcript, "en")[entry.id] == english
    assert chinese in plain_text(transcript, "zh")
    assert english not in plain_text(transcript, "zh")


def _strings(value: Any, out: list[str]) -> None:
    """Every string a JSON value holds (a string of JSON too: an argument, a log line)."""
    if isinstance(value, str):
        out.append(value)
        if value[:1] in "[{":
            with contextlib.suppress(ValueError):
                _strings(json.loads(value), out)
    elif isinstance(value, dict):
        for key, item in value.items():
            out.append(str(key))
            _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)
    elif value is not None:
        out.append(str(value))


def _database_text(path: Path) -> list[str]:
    """Every value of every table of a SQLite database, opened so that nothing is written
    (``immutable``): its JSON is in cells, where the file's bytes hold it split and escaped."""
    out: list[str] = []
    with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True)) as db:
        tables = [
            name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                out += [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
                        for v in row if v is not None]  # fmt: skip
    return out


def _file_text(path: Path) -> str:
    """A file's text and the strings its JSON holds, read as a reader reads it (a line of JSON
    at a time, a zip's members, Zstandard ones too, a database's cells)."""
    out: list[str] = []
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                try:
                    data = read_member(archive, info, name=str(path), limit=1 << 28)
                except ArchiveError:  # a compression no reader reads
                    continue
                out.append(data.decode("utf-8", "replace"))
    elif path.read_bytes()[:16] == b"SQLite format 3\x00":
        out += _database_text(path)
    else:
        out.append(path.read_bytes().decode("utf-8", "replace"))
    for text in list(out):
        try:
            _strings(json.loads(text), out)
        except ValueError:
            for line in text.splitlines():
                with contextlib.suppress(ValueError):
                    _strings(json.loads(line), out)
    return "\n".join(out)


def _source_text(path: Path) -> str:
    """What the source wrote for ``path``: its files and those beside it (a session's
    folder: Cline's ui_messages.json, Claude Code's sub-agent files)."""
    if path.parent == FIXTURES:
        return _file_text(path)
    return "\n".join(_file_text(p) for p in sorted(path.parent.rglob("*")) if p.is_file())


def _fixtures() -> list[Path]:
    return [
        p
        for p in sorted(FIXTURES.rglob("*"))
        if p.is_file() and "LICENSES" not in p.parts and p.name not in ("SOURCES.md", "README.md")
    ]


def _runs(path: Path) -> list[tuple[str, Transcript]]:
    """The runs a fixture holds, each with its name: the one it loads as, or, when it loads
    only with ``sample=`` (an eval log of many samples, a file or a table of runs, a database
    of sessions), each run a scan finds in it, loaded by its key (``load(path, sample=…)``);
    none for a folder's part, a licence, a recipe. A run whose row says why it cannot be read
    (a Batch API embeddings request: no conversation) is left out."""
    name = str(path.relative_to(FIXTURES))
    try:
        return [(name, quiet_load(path))]
    except Exception:
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        corpus = turnfold.scan(path, cache=False, workers=1)
        return [
            (f"{name}#{row['sample']}", corpus[row["key"]])
            for row in corpus
            if row["sample"] is not None and row["error"] is None
        ]


def test_every_notice_stop_and_error_without_a_wording_is_the_source_s_text() -> None:
    """A reader that writes a notice, a stop or an error in its own English without a
    wording fails here: every such entry of every run of every fixture (each sample of one
    that loads only with ``sample=``) is the source's text, each of its pieces (lines; what
    a reader joins with ": ") found in the source."""
    loaded, sampled, unworded, theirs = 0, 0, 0, []
    for path in _fixtures():
        runs = _runs(path)
        loaded += len(runs) == 1 and "#" not in runs[0][0]
        sampled += sum("#" in name for name, _ in runs)
        source: str | None = None
        for name, transcript in runs:
            for entry in _entries(transcript):
                said = _said(entry)
                if not said or getattr(entry, "wording", None) is not None:
                    continue
                unworded += 1
                source = _source_text(path) if source is None else source
                pieces = [p.strip() for p in re.split(r"\n|: ", said) if p.strip()]
                missing = [p for p in pieces if p not in source]
                if missing:
                    theirs.append((name, type(entry).__name__, said))
    assert loaded > 400
    assert sampled > 100  # the samples of eval logs, the runs of datasets, databases' sessions
    assert unworded > 100  # the check reads the source's own notices too
    assert theirs == []


# --- ADK's list of names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "english", "chinese"),
    [
        (["a", "b", "c"], "a, b or c raised", "a、b 或 c 抛出了"),
        ([None, "a", "b"], "a, b or a tool raised", "a、b 或某个工具抛出了"),
        (["a", "b"], "a or b raised", "a 或 b 抛出了"),
    ],
)
def test_adk_s_names_are_listed_as_the_view_s_language_lists_them(
    names: list[str | None], english: str, chinese: str
) -> None:
    """The real ADK run in which ``explode`` raised, its model's one call made several (as
    test_i18n_notices varies it)."""
    transcript = quiet_load(raised_among(names))
    (error,) = [e for e in transcript if isinstance(e, AssistantError)]
    assert error.message == f"The run ended: {english} ValueError: boom: z"
    assert _shown(transcript, "zh")[error.id] == f"运行已结束：{chinese} ValueError: boom: z"
    assert _shown(transcript, "en")[error.id] == error.message


# --- a stop's reason in a corpus search ---------------------------------------------------------


def test_C6_a_corpus_search_finds_a_stop_s_reason_in_either_language(tmp_path: Path) -> None:
    """A reader's stop (Copilot's ``user_abort``, worded) and a source's own stop reason
    (Inspect's message limit, as the log says it)."""
    shutil.copytree(FIXTURES / "copilot/interrupt-user-abort", tmp_path / "copilot")
    inspect = FIXTURES / "harnesses/inspect/react_four-samples_one-epoch.json"
    shutil.copy(inspect, tmp_path / inspect.name)
    corpus = turnfold.scan(tmp_path, cache=False, workers=1)
    for query, snippet in (
        ("Stopped by the user", "Stopped by the user"),
        ("已被用户停止", "已被用户停止"),
        ("Message limit reached", "Message limit reached. count: 6; limit: 6"),
    ):
        hits = corpus.search(query)
        assert hits, query
        entries = {hit.entry_id: corpus[hit.key].get(hit.entry_id) for hit in hits}
        assert all(isinstance(e, AbortMarker) for e in entries.values()), query
        assert any(snippet in hit.snippet for hit in hits), query


# --- "show all" of a worded result --------------------------------------------------------------


@pytest.mark.parametrize(("locale", "shown"), [("zh", RESULTS[0][2]), ("en", RESULTS[0][1])])
def test_F12_show_all_of_a_result_the_reader_wrote_is_in_the_view_s_language(
    locale: str, shown: str
) -> None:
    """The whole output the widget sends when asked (``output``) says what its row says."""
    make, english, _ = RESULTS[0]
    transcript = make()
    call = _worded_call(transcript, english)
    with widget_in(transcript, locale) as widget:
        assert "".join(widget.output_parts(call.id)) == shown


# --- a failed step's or call's result the reader writes ----------------------------------------

OTLP_CODE = FIXTURES / "traces/otlp/openinference-smolagents_code-llm-spans.jsonl"
OPENHANDS_ERROR = (
    FIXTURES / "harnesses/openhands-sdk/conversations/2e6c222a6c254b28bab45a8281ad9b15/events"
    / "event-00018-0643f711-3bfe-4391-bd1d-0dd28542b21a.json"
)  # fmt: skip


def _unexplained_step(observed: bool) -> bytes:
    """The real CodeAgent trace, its first failed step (``Step 2``, whose code raised) left
    ``ERROR`` with no status message and no exception event, as a tracer that sets no
    description writes it; without ``output.value`` too when not ``observed``."""
    lines = []
    for line in OTLP_CODE.read_text(encoding="utf-8").splitlines():
        request = json.loads(line)
        spans = [
            span
            for resource in request["resourceSpans"]
            for scope in resource["scopeSpans"]
            for span in scope["spans"]
        ]
        step = next(s for s in spans if s["name"] == "Step 2")
        assert step["status"]["code"] == "STATUS_CODE_ERROR"
        step["status"], step["events"] = {"code": "STATUS_CODE_ERROR"}, []
        if not observed:
            step["attributes"] = [a for a in step["attributes"] if a["key"] != "output.value"]
        lines.append(json.dumps(request))
    return "\n".join(lines).encode()


#: What the step printed (its ``output.value``), as it is in both languages.
PRINTED = "Execution logs:\ntrying\n\n"


@pytest.mark.parametrize(
    ("observed", "english", "chinese"),
    [
        (True, f"{PRINTED}The step failed.", f"{PRINTED}该步骤失败。"),
        (False, "The step failed.", "该步骤失败。"),
    ],
    ids=["observations", "bare"],
)
@pytest.mark.parametrize("locale", ["zh", "en"])
def test_otlp_s_failed_step_without_a_message_is_said_in_the_view_s_language(
    locale: str, observed: bool, english: str, chinese: str
) -> None:
    """A CodeAgent step that failed and says nothing of why: its ``python`` call's result is
    what the step printed, then the reader's "The step failed."; the printed part as it is."""
    transcript = quiet_load(_unexplained_step(observed), format="otlp")
    call = _worded_call(transcript, english)
    assert (call.name, call.status) == ("python", "error")
    assert _shown_results(transcript, locale)[call.id] == (chinese if locale == "zh" else english)


@pytest.mark.parametrize("locale", ["zh", "en"])
def test_openhands_sdk_s_error_of_a_call_without_its_text_is_said_in_the_view_s_language(
    locale: str, tmp_path: Path
) -> None:
    """The real conversation's ``AgentErrorEvent`` (the unknown tool's) with an empty
    ``error`` (the SDK's field is a plain ``str``): its call's result is the reader's "error"."""
    conversation = tmp_path / OPENHANDS_ERROR.parents[1].name
    shutil.copytree(OPENHANDS_ERROR.parents[1], conversation)
    event = json.loads(OPENHANDS_ERROR.read_text(encoding="utf-8"))
    event["error"] = ""
    (conversation / "events" / OPENHANDS_ERROR.name).write_text(json.dumps(event), "utf-8")
    transcript = quiet_load(conversation)
    call = _worded_call(transcript, "error")
    assert (call.name, call.status) == ("no_such_tool", "error")
    assert _shown_results(transcript, locale)[call.id] == ("错误" if locale == "zh" else "error")
