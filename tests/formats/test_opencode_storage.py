"""OpenCode before 1.2: its sessions as JSON files under ``~/.local/share/opencode/storage/``
(``session/<projectID>/<ses>.json``, ``message/<ses>/<msg>.json``, ``part/<msg>/<prt>.json``),
on the tree OpenCode 1.1.65 wrote playing the ``work`` scenario of ``tests/agents``
(``fixtures/opencode/v1.1/opencode_v1_recipe.py``). ``truth.txt`` beside it is what the scripted
server issued and saw."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import turnfold
from turnfold.formats import TranscriptFormatError
from turnfold.formats.agents import opencode
from turnfold.model import AssistantText, Thinking, Transcript, UserMessage

HERE = Path(__file__).parents[1] / "fixtures" / "opencode"
LEGACY = HERE / "v1.1" / "work"
STORAGE = LEGACY / "storage"
LEAD = "ses_db984376cffe4173dEEMgi271X"
SUB = "ses_db9843492ffeAn3SMnhtNqHEM5"
#: The lead's calls, in order, and the status each must load with (as the database's).
LEAD_CALLS = [
    ("read", "success"),
    ("grep", "success"),
    ("glob", "success"),
    ("bash", "success"),
    ("bash", "error"),  # echo TF-FAIL-OUT; ...; exit 3: completed, metadata.exit 3
    ("edit", "success"),
    ("write", "success"),
    ("bash", "success"),  # seq 6000 lines: 1.1 kept the head and saved the rest
    ("task", "success"),
    ("bash", "success"),  # the resumed second prompt's
]


def truth() -> dict:
    return json.loads((LEGACY / "truth.txt").read_text())


def sent(thread: str) -> list[tuple[int, ...]]:
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens")
    return [
        tuple(r["usage"][k] for k in keys)
        for r in truth()["responses"]
        if r["thread"] in thread.split("|") and not r["side"]
    ]


def usages(transcript: Transcript) -> list[tuple[int | None, ...]]:
    return [
        (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.reasoning_tokens)
        for e in transcript.entries
        if (u := getattr(e, "usage", None)) is not None
    ]


def session_file(root: Path, session: str) -> Path:
    [found] = root.glob(f"session/*/{session}.json")
    return found


def _copy(tmp_path: Path) -> Path:
    """The fixture's storage/ in an OpenCode data folder of its own."""
    storage = tmp_path / "opencode" / "storage"
    shutil.copytree(STORAGE, storage)
    return storage


# --- reading ------------------------------------------------------------------------------------


def test_the_lead_s_calls_outcomes_and_results_are_the_truth_s() -> None:
    transcript = turnfold.load(session_file(STORAGE, LEAD))
    assert transcript.warnings == []
    assert transcript.accounting is not None
    assert transcript.accounting.unaccounted == []
    loaded = transcript.tool_calls()
    assert [(c.name, c.status) for c in loaded] == LEAD_CALLS
    issued = [i for i in truth()["issued"] if i["thread"] != "TF-SUBTASK"]
    assert [c.call_id for c in loaded] == [i["call_id"] for i in issued]
    for call, given in zip(loaded, issued, strict=True):
        assert (call.status == "error") == (given["outcome"] == "fail")
        assert call.result is not None
        assert (call.result.text or "").startswith(given["result"][:200])
        assert call.started_at
        assert call.ended_at
        assert call.duration_ms is not None
    assert loaded[4].meta["exit_code"] == 3
    assert "TF-LINE-1\n" in (loaded[7].result.text or "")  # type: ignore[union-attr]
    meta = transcript.metadata
    assert (meta["source_format"], meta["session_id"], meta["version"]) == (
        "opencode", LEAD, "1.1.65")  # fmt: skip
    assert meta["model_provider"] == "scripted"


def test_the_prompts_thinking_and_texts() -> None:
    transcript = turnfold.load(session_file(STORAGE, LEAD))
    prompts = [e.text.strip('"') for e in transcript.entries if isinstance(e, UserMessage)]
    assert [p[:9] for p in prompts] == ["TF-FIRST:", "TF-SECOND"]
    thinking = [e.text for e in transcript.entries if isinstance(e, Thinking)]
    assert thinking == ["TF-THINK: read, search and list at once."]
    texts = [e for e in transcript.entries if isinstance(e, AssistantText)]
    assert [t.text[:9] for t in texts] == ["TF-FIX: e", "TF-DONE-1", "TF-DONE-2"]


def test_each_step_s_usage_is_the_response_s_as_sent() -> None:
    transcript = turnfold.load(session_file(STORAGE, LEAD))
    assert usages(transcript) == sent("TF-FIRST|TF-SECOND")


def test_the_task_call_nests_its_sub_agent_s_session() -> None:
    task = turnfold.load(session_file(STORAGE, LEAD)).tool_calls()[8]
    assert task.subagent is not None
    assert task.subagent.agent_id == SUB
    assert not task.subagent.steps_missing
    assert task.subagent.transcript is not None
    nested = task.subagent.transcript
    assert [(c.name, c.status, c.result.text) for c in nested.tool_calls() if c.result] == [
        ("bash", "success", "TF-SUB-OK\n")
    ]
    assert usages(nested) == sent("TF-SUBTASK")
    assert nested.metadata["parent_session_id"] == LEAD


@pytest.mark.parametrize("kind", ["session", "message", "part"])
def test_any_file_of_a_session_reads_that_session(kind: str) -> None:
    [message] = sorted((STORAGE / "message" / SUB).glob("msg_*.json"))[:1]
    named = {
        "session": session_file(STORAGE, SUB),
        "message": message,
        "part": sorted((STORAGE / "part" / message.stem).glob("prt_*.json"))[0],
    }[kind]
    assert opencode.legacy_kind(named) == kind
    transcript = turnfold.load(named)
    assert transcript.metadata["session_id"] == SUB
    assert [c.name for c in transcript.tool_calls()] == ["bash"]
    assert turnfold.load(named, format="opencode").tool_calls() == transcript.tool_calls()


def test_the_storage_folder_reads_as_the_database_does(tmp_path: Path) -> None:
    lead = turnfold.load(session_file(STORAGE, LEAD))
    # One top-level session (the sub-agent's nests in it): no sample= needed.
    assert turnfold.load(STORAGE).tool_calls() == lead.tool_calls()
    assert (
        turnfold.load(LEGACY, sample=LEAD).tool_calls() == lead.tool_calls()
    )  # the folder holding it
    assert [c.name for c in turnfold.load(STORAGE, sample=SUB).tool_calls()] == ["bash"]
    with pytest.raises(ValueError, match="no OpenCode session 'ses_nope'"):
        turnfold.load(STORAGE, sample="ses_nope")
    with pytest.raises(ValueError, match=f"is a file of OpenCode session {LEAD}, not {SUB}"):
        turnfold.load(session_file(STORAGE, LEAD), sample=SUB)
    storage = _copy(tmp_path)
    other = storage / "session" / "global" / "ses_other.json"
    other.write_text(json.dumps({"id": "ses_other", "projectID": "global", "directory": "/",
                                 "title": "other", "time": {"created": 1}}))  # fmt: skip
    with pytest.raises(ValueError, match=r"holds 2 OpenCode sessions.*ses_other"):
        turnfold.load(storage)


def test_a_broken_part_file_is_warned_of_naming_the_file_and_the_rest_is_read(
    tmp_path: Path,
) -> None:
    storage = _copy(tmp_path)
    [broken] = [p for p in storage.glob("part/*/*.json") if "TF-THINK" in p.read_text()]
    broken.write_text(broken.read_text()[:40])
    transcript = turnfold.load(session_file(storage, LEAD))
    [warning] = transcript.warnings
    assert str(broken) in warning.reason
    assert "unreadable JSON" in warning.reason
    assert not any(isinstance(e, Thinking) for e in transcript.entries)
    assert [(c.name, c.status) for c in transcript.tool_calls()] == LEAD_CALLS
    assert transcript.accounting is not None
    assert transcript.accounting.counts["part"] == {"warned": 1}


def test_a_sub_agent_s_broken_session_file_is_warned_of_and_its_steps_missing(
    tmp_path: Path,
) -> None:
    storage = _copy(tmp_path)
    session_file(storage, SUB).write_text("{")
    transcript = turnfold.load(session_file(storage, LEAD))
    assert [w.reason for w in transcript.warnings if SUB in w.reason]
    task = transcript.tool_calls()[8]
    assert task.subagent is not None
    assert task.subagent.steps_missing
    assert [(c.name, c.status) for c in transcript.tool_calls()] == LEAD_CALLS


def test_only_the_files_of_the_session_read_are_opened(tmp_path: Path) -> None:
    """A storage/ of thousands of sessions: loading one opens its own files alone (and its
    sub-agent's); another session's broken files are never read, so never warned of."""
    storage = _copy(tmp_path)
    (storage / "message" / "ses_other").mkdir()
    (storage / "message" / "ses_other" / "msg_1.json").write_text("{")
    (storage / "part" / "msg_1").mkdir()
    (storage / "part" / "msg_1" / "prt_1.json").write_text("{")
    (storage / "session" / "global" / "ses_other.json").write_text("{")
    transcript = turnfold.load(session_file(storage, LEAD))
    assert transcript.warnings == []
    assert [(c.name, c.status) for c in transcript.tool_calls()] == LEAD_CALLS


def test_a_storage_document_away_from_its_folder_is_a_clear_error(tmp_path: Path) -> None:
    alone = tmp_path / "ses.json"
    shutil.copyfile(session_file(STORAGE, LEAD), alone)
    with pytest.raises(TranscriptFormatError, match="read in its storage/ folder"):
        turnfold.load(alone)
    with pytest.raises(TranscriptFormatError, match="read in its storage/ folder"):
        turnfold.load(session_file(STORAGE, LEAD).read_text())


# --- a scan -------------------------------------------------------------------------------------


def test_a_scan_of_the_data_folder_is_a_row_per_top_level_session(tmp_path: Path) -> None:
    storage = _copy(tmp_path)
    data = storage.parent
    # Beside storage/, what holds no session: the undo points' git objects, logs, outputs.
    (data / "snapshot" / "global" / "objects").mkdir(parents=True)
    (data / "snapshot" / "global" / "objects" / "a.json").write_text("{}")
    (data / "log").mkdir()
    (data / "log" / "2026.log").write_text("INFO\n")
    (storage / "project").mkdir()
    (storage / "project" / "global.json").write_text('{"id": "global"}')
    corpus = turnfold.scan(data, cache=False, workers=1)
    key = str(session_file(storage, LEAD))
    # Messages and parts are read with their session, the sub-agent's session in its lead's
    # row: one row, and nothing skipped.
    assert corpus.keys == [key]
    assert (corpus.errors, corpus.describe().endswith("0 skipped")) == (0, True)
    frame = corpus.to_pandas().set_index("key")
    assert (frame.loc[key, "tool_calls"], frame.loc[key, "subagents"]) == (10, 1)
    assert frame.loc[key, "format"] == "opencode"
    assert corpus[key].tool_calls() == turnfold.load(session_file(STORAGE, LEAD)).tool_calls()
    assert turnfold.scan(storage, cache=False, workers=1).keys == [key]
    # Named, the format reads no message, part or sub-agent's file as a session of its own.
    named = turnfold.scan(data, format="opencode", cache=False, workers=1)
    assert (named.keys, named.describe().endswith("0 skipped")) == ([key], True)


def test_a_scan_reads_no_session_twice_when_the_database_is_beside(tmp_path: Path) -> None:
    """1.2 copied the files into opencode.db and left them: the database's rows alone."""
    storage = _copy(tmp_path)
    database = storage.parent / opencode.DATABASE
    shutil.copyfile(HERE / "work" / "opencode.db", database)
    corpus = turnfold.scan(storage.parent, cache=False, workers=1)
    assert corpus.keys
    assert all(k.startswith(f"{database}#") for k in corpus.keys)
    assert corpus.describe().endswith("0 skipped")


def test_a_change_to_a_message_or_part_file_is_a_change_to_its_lead_s_row() -> None:
    """A sub-agent's part file belongs to the top-level session's file, whose row holds it."""
    from turnfold.corpus.discover import is_session_bookkeeping, session_of

    lead = session_file(STORAGE, LEAD)
    sub_part = next((STORAGE / "part").glob("*/*.json"))
    for path in (sub_part, next((STORAGE / "message" / SUB).glob("*.json"))):
        assert is_session_bookkeeping(path)
        pattern = session_of(path, None, [])
        assert pattern is not None
        assert Path(pattern) == lead.parent / lead.name  # no wildcard in these names


# --- Kilo Code's CLI: OpenCode's database as kilo.db --------------------------------------------

KILO = HERE / "kilo" / "work"


def test_kilo_s_database_reads_as_opencode_s_against_its_truth() -> None:
    """Kilo Code 7.7.9 (a fork of OpenCode) played the same scenario into ``kilo.db``."""
    database = KILO / opencode.KILO_DATABASE
    assert opencode.detect_path(database) is not None
    transcript = turnfold.load(database)
    assert transcript.warnings == []
    assert transcript.metadata["version"] == "7.7.9"
    loaded = transcript.tool_calls()
    assert [(c.name, c.status) for c in loaded] == LEAD_CALLS
    given = json.loads((KILO / "truth.txt").read_text())
    lead = [i for i in given["issued"] if i["thread"] != "TF-SUBTASK"]
    assert [c.call_id for c in loaded] == [i["call_id"] for i in lead]
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens")
    responses = [r for r in given["responses"] if not r["side"]]
    own = [tuple(r["usage"][k] for k in keys) for r in responses if r["thread"] != "TF-SUBTASK"]
    assert usages(transcript) == own
    task = loaded[8].subagent
    assert task is not None
    assert task.transcript is not None
    assert [c.name for c in task.transcript.tool_calls()] == ["bash"]


def test_kilo_s_sessions_name_their_agent(tmp_path: Path) -> None:
    """A session of Kilo Code's database is Kilo Code's, not OpenCode's: by the file's name, or
    (a copy of another name) by the tables Kilo adds to OpenCode's (``kilo_board``…)."""
    database = KILO / opencode.KILO_DATABASE
    assert turnfold.load(database).metadata["agent"] == "kilo-code"
    copy = tmp_path / "sessions.db"
    shutil.copyfile(database, copy)
    assert turnfold.load(copy).metadata["agent"] == "kilo-code"
    row = turnfold.scan([copy], cache=False).to_pandas().iloc[0]
    assert (row["format"], row["agent"]) == ("opencode", "kilo-code")
    # OpenCode's own database names no agent: the format's is OpenCode.
    assert "agent" not in turnfold.load(HERE / "work" / opencode.DATABASE).metadata


def test_a_scan_finds_kilo_s_database_by_its_name(tmp_path: Path) -> None:
    data = tmp_path / "kilo"
    data.mkdir()
    shutil.copyfile(KILO / opencode.KILO_DATABASE, data / opencode.KILO_DATABASE)
    shutil.copytree(STORAGE, data / "storage")  # beside the database: not read again
    corpus = turnfold.scan(tmp_path, cache=False, workers=1)
    lead = turnfold.load(KILO / opencode.KILO_DATABASE).metadata["session_id"]
    assert corpus.keys == [f"{data / opencode.KILO_DATABASE}#{lead}"]
