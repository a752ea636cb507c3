"""OpenCode's storage before 1.2 with files no name leads to (spec L-4, C-1, C-7): parts whose
message's file is missing, a session's leftovers, and a lead session renamed.

Before 1.2, ``SessionRevert.cleanup`` (``packages/opencode/src/session/revert.ts``) deletes the
files of the messages after a revert's point, once the session goes on, and leaves their parts;
``Session.remove`` (``src/session/index.ts``) deletes a session's sub-agents, then each message's
parts, then the message, then the session's file, so an OpenCode stopped half-way leaves parts
with no message's file, and messages and parts with no session's file. Each part still names its
message and its session (``messageID``, ``sessionID``): one whose session is there is read with
it, where its message's id places it, and said; the rest no session reads, which a scan says.
They were passed over unsaid: a load showed the session without them, a scan counted them as
read.

A sub-agent's ``parentID`` and its lead's ``task`` call name the lead and the sub-agent by the
ids their files held when OpenCode wrote them. A lead whose file was renamed since was no lead
of its sub-agent by name: the sub-agent was a row of its own beside the lead's row, which nested
it too. The trees are the real one OpenCode 1.1.65 wrote (``fixtures/opencode/v1.1``, as
``test_opencode_storage.py`` reads it) with files deleted or renamed as those events leave them.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import turnfold
from tests.formats.opencode_storage import LEAD, STORAGE, SUB, copy_storage, session_file
from turnfold.formats import TranscriptFormatError
from turnfold.formats.agents import opencode
from turnfold.model import Transcript, UserMessage

pytestmark = pytest.mark.usefixtures("cache_dir")

#: The lead's message whose step ran ``echo TF-FAIL-OUT; …; exit 3`` (its 5th call), the
#: second prompt's message (the last three are its turn's), and the sub-agent's message whose
#: step ran its command.
FAILING_STEP = "msg_2467bcaf60010ihad7ohQiWWKZ"
SECOND_PROMPT = "msg_2467bd09d001rMigd7eUxFHOkP"
SUB_STEP = "msg_2467bcb90001USPbCPNpE6m8ef"


def _calls(transcript: Transcript) -> list[tuple[str, str, str, str | None]]:
    return [
        (c.call_id, c.name, c.status, c.result.text if c.result else None)
        for c in transcript.tool_calls()
    ]


def _prompts(transcript: Transcript) -> list[str]:
    return [e.text[:9] for e in transcript.entries if isinstance(e, UserMessage)]


def _usages(transcript: Transcript) -> list[tuple[int | None, int | None]]:
    return [
        (u.input_tokens, u.output_tokens)
        for e in transcript.entries
        if (u := getattr(e, "usage", None)) is not None
    ]


def _leftovers(storage: Path) -> list[Path]:
    """What a deleted session leaves when OpenCode stops half-way: a message and its part with
    no session's file, and a part with no message's file that names a session not there."""
    made = []
    for path, document in (
        (storage / "message" / "ses_gone" / "msg_gone.json",
         {"id": "msg_gone", "sessionID": "ses_gone", "role": "user", "time": {"created": 1}}),
        (storage / "part" / "msg_gone" / "prt_gone.json",
         {"id": "prt_gone", "sessionID": "ses_gone", "messageID": "msg_gone", "type": "text",
          "text": "TF-GONE"}),
        (storage / "part" / "msg_lost" / "prt_lost.json",
         {"id": "prt_lost", "sessionID": "ses_lost", "messageID": "msg_lost", "type": "text",
          "text": "TF-LOST"}),
    ):  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2))
        made.append(path)
    return made


def _scan(folder: Path) -> tuple[turnfold.Corpus, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        corpus = turnfold.scan(folder, workers=1)
    return corpus, [str(w.message) for w in caught]


# --- parts whose message's file is missing ------------------------------------------------------


def test_L4_parts_whose_message_file_is_missing_are_read_in_their_place_and_said(
    tmp_path: Path,
) -> None:
    original = turnfold.load(session_file(STORAGE, LEAD))
    storage = copy_storage(tmp_path)
    # A message deleted half-way (its parts left), and a revert to the second prompt: the
    # files of its message and those after it deleted, their parts left.
    gone = [FAILING_STEP] + [m.stem for m in (storage / "message" / LEAD).glob("*.json")
                             if m.stem >= SECOND_PROMPT]  # fmt: skip
    for message in gone:
        (storage / "message" / LEAD / f"{message}.json").unlink()
    transcript = turnfold.load(session_file(storage, LEAD))
    # The failing command's call and the second prompt's turn, where their ids place them.
    assert _calls(transcript) == _calls(original)
    assert _calls(transcript)[4][2] == "error"
    assert _prompts(transcript) == _prompts(original) == ["TF-FIRST:", "TF-SECOND"]
    assert _usages(transcript) == _usages(original)
    assert transcript.entries[-1].text.startswith("TF-DONE-2")
    [warning] = transcript.warnings
    parts = sorted(p for m in gone for p in (storage / "part" / m).glob("*.json"))
    assert warning.reason.startswith(
        f"{len(parts)} part file(s) of session {LEAD} lie in storage/part/"
    )
    assert f"(first: {parts[0]})" in warning.reason
    assert "as 3 assistant and 1 user message(s)" in warning.reason
    assert "may be steps undone" in warning.reason
    # Read from the folder too, and accounted as what they are: no message record was read.
    assert turnfold.load(storage).entries == transcript.entries
    assert transcript.accounting is not None
    assert original.accounting is not None
    assert transcript.accounting.unaccounted == []
    for kind, missing in (("message/assistant", 3), ("message/user", 1)):
        before = original.accounting.counts[kind]["mapped"]
        assert transcript.accounting.counts[kind] == {"mapped": before - missing}, kind
    assert transcript.accounting.counts["part/tool"] == original.accounting.counts["part/tool"]


def test_L4_a_sub_agent_s_parts_whose_message_file_is_missing_are_read_in_its_session(
    tmp_path: Path,
) -> None:
    storage = copy_storage(tmp_path)
    (storage / "message" / SUB / f"{SUB_STEP}.json").unlink()
    transcript = turnfold.load(session_file(storage, LEAD))
    task = transcript.tool_calls()[8].subagent
    assert task is not None
    assert task.transcript is not None
    assert [(c.name, c.status) for c in task.transcript.tool_calls()] == [("bash", "success")]
    [warning] = transcript.warnings
    assert f"of session {SUB} lie in storage/part/" in warning.reason
    # Loading the sub-agent's own session says it as well.
    [own] = turnfold.load(session_file(storage, SUB)).warnings
    assert own.reason == warning.reason


def test_L4_parts_lost_after_a_first_load_are_found_by_the_next(tmp_path: Path) -> None:
    """Where the parts without a message lie is learned once per storage/ folder and kept while
    its folders are unchanged: a message deleted since is seen."""
    storage = copy_storage(tmp_path)
    assert turnfold.load(storage).warnings == []
    (storage / "message" / LEAD / f"{FAILING_STEP}.json").unlink()
    [warning] = turnfold.load(storage).warnings
    assert warning.reason.startswith("3 part file(s)")
    extra = storage / "part" / FAILING_STEP / "prt_zzzz.json"
    extra.write_text(json.dumps({"id": "prt_zzzz", "sessionID": LEAD, "type": "text",
                                 "messageID": FAILING_STEP, "text": "TF-LATE"}))  # fmt: skip
    [warning] = turnfold.load(storage).warnings
    assert warning.reason.startswith("4 part file(s)")


# --- files no session reads ---------------------------------------------------------------------


def test_C7_a_scan_says_the_files_no_session_reads_and_shows_those_it_can(
    tmp_path: Path,
) -> None:
    storage = copy_storage(tmp_path)
    (storage / "message" / LEAD / f"{FAILING_STEP}.json").unlink()
    leftovers = _leftovers(storage)
    corpus, said = _scan(storage.parent)
    [row] = corpus.rows
    assert (row["key"], row["error"]) == (str(session_file(storage, LEAD)), None)
    assert (row["tool_calls"], row["failed_tools"], row["warnings"]) == (10, 1, 1)
    assert corpus.describe().endswith("0 skipped")
    [warning] = [w for w in said if "no session there reads" in w]
    assert warning.startswith("3 file(s) of OpenCode's storage/ that no session there reads")
    assert f"(first: {leftovers[0]})" in warning
    # Said again by a scan that reads nothing (C-4): the index keeps what each file is.
    again, said = _scan(storage.parent)
    assert again.keys == corpus.keys
    assert [w for w in said if "no session there reads" in w] == [warning]
    # Each, loaded alone, is an error naming the file and why.
    for path in leftovers:
        with pytest.raises(TranscriptFormatError, match="no session reads it") as raised:
            turnfold.load(path)
        assert str(path) in str(raised.value)


def test_C7_a_storage_with_nothing_left_behind_says_nothing(tmp_path: Path) -> None:
    storage = copy_storage(tmp_path)
    corpus, said = _scan(storage.parent)
    assert len(corpus) == 1
    assert not [w for w in said if "no session there reads" in w]


# --- a sub-agent and its lead -------------------------------------------------------------------


def test_C1_a_renamed_lead_s_sub_agent_is_nested_and_no_row_of_its_own(tmp_path: Path) -> None:
    original = turnfold.load(session_file(STORAGE, LEAD))
    storage = copy_storage(tmp_path)
    # The lead renamed (its title, as OpenCode rewrites it), then its file and its sub-agent's.
    lead = session_file(storage, LEAD)
    lead.write_text(json.dumps({**json.loads(lead.read_text()), "title": "TF-RENAMED"}))
    corpus, _ = _scan(storage.parent)
    assert corpus.keys == [str(lead)]
    renamed = lead.rename(session_file(storage, "ses_lead_renamed"))
    sub = session_file(storage, SUB).rename(session_file(storage, "ses_sub_renamed"))
    corpus, _ = _scan(storage.parent)
    assert corpus.keys == [str(renamed)]
    [row] = corpus.rows
    assert (row["tool_calls"], row["subagents"], row["error"]) == (10, 1, None)
    transcript = corpus[row["key"]]
    task = transcript.tool_calls()[8].subagent
    assert task is not None
    assert task.transcript is not None
    assert not task.steps_missing
    assert _calls(task.transcript) == _calls(original.tool_calls()[8].subagent.transcript)
    # The folder holds one session of its own: read with no sample=.
    assert turnfold.load(storage).entries == transcript.entries
    # A file of the sub-agent's is its lead's row's (a change to it reads that row again).
    from turnfold.corpus.discover import session_of

    message = next((storage / "message" / SUB).glob("*.json"))
    for path in (sub, message):
        assert session_of(path, None, []) == str(renamed)


def test_C1_a_sub_agent_whose_lead_is_gone_is_a_row_of_its_own(tmp_path: Path) -> None:
    storage = copy_storage(tmp_path)
    session_file(storage, LEAD).unlink()
    messages = sorted((storage / "message" / LEAD).glob("*.json"))
    left = len(messages) + sum(len(list((storage / "part" / m.stem).glob("*.json")))
                               for m in messages)  # fmt: skip
    corpus, said = _scan(storage.parent)
    assert corpus.keys == [str(session_file(storage, SUB))]
    assert corpus.rows[0]["tool_calls"] == 1
    # The lead's messages and parts are its leftovers: said, not shown.
    [warning] = [w for w in said if "no session there reads" in w]
    assert warning.startswith(f"{left} file(s) of OpenCode's storage/")
    assert f"(first: {messages[0]})" in warning
    assert [c.name for c in turnfold.load(storage).tool_calls()] == ["bash"]
    assert opencode.legacy_session_file(session_file(storage, SUB)) == session_file(storage, SUB)


def test_C1_a_sub_agent_naming_itself_as_lead_is_a_row_of_its_own_shown_once(
    tmp_path: Path,
) -> None:
    """Hostile ids: a sub-agent whose parentID names itself names no lead (as the database's
    listing reads ``parent_id = id``): a row of its own, never dropped, and not nested under
    the lead's call too, which says where it is. Leads going round a circle of several are
    test_opencode_leads.py's."""
    storage = copy_storage(tmp_path)
    sub = session_file(storage, SUB)
    sub.write_text(json.dumps({**json.loads(sub.read_text()), "parentID": SUB}))
    corpus, _ = _scan(storage.parent)
    assert sorted(corpus.keys) == sorted([str(session_file(storage, LEAD)), str(sub)])
    lead = turnfold.load(session_file(storage, LEAD))
    [task] = [c for c in lead.tool_calls() if c.name == "task"]
    assert task.subagent is not None
    assert task.subagent.steps_missing
    assert [w.reason for w in lead.warnings] == [
        f"session {SUB}, the sub-agent a task call names, is a session of its own (its parentID "
        "leads to no session here): shown there, not under the call"
    ]
    assert [c.name for c in turnfold.load(sub).tool_calls()] == ["bash"]
