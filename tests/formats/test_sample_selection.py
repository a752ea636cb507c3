"""A source of many runs read with no ``sample=``, or one it does not hold (spec §10, L-4):
every database of sessions, the MLflow store and a file of named runs raise one error,
:class:`~turnfold.formats.errors.SampleSelectionError`, in one wording: what it holds (up to
ten ids), how to pick one (a call that runs as written) and that ``turnfold.scan(path)`` reads
them all. Crush, OpenCode, ADK, Agno and the Agents SDK raised a plain ``ValueError`` that
named no id, or titles instead, twenty of them; the MLflow store a format error; a Batch API
file of named runs said only that the name was not there.

The databases are the real tools' (``tests/formats/many_sessions.py`` says how each is had).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

import turnfold
from tests.formats.many_sessions import (
    ADK,
    AGENTS_SDK,
    AGNO,
    BATCH_OUTPUT,
    CRUSH,
    FIXTURES,
    LANGGRAPH,
    mlflow_of_two,
    opencode_of_two,
)
from turnfold.formats.agents import crush, opencode
from turnfold.formats.errors import SampleSelectionError
from turnfold.formats.frameworks import adk_db, agno_db, langgraph_checkpoints, openai_agents_db
from turnfold.formats.traces import mlflow

#: Each reader: how to have its database, what its error calls a session, ``sample=``'s
#: placeholder, and its module (whose ``sessions(path)`` lists what the database holds).
READERS: list[tuple[str, Callable[[Path], Path], str, str, object]] = [
    ("crush", lambda _: CRUSH, "Crush session", "<session id>", crush),
    ("opencode", opencode_of_two, "OpenCode session", "<session id>", opencode),
    ("adk", lambda _: ADK, "ADK session", "<session id>", adk_db),
    ("agno", lambda _: AGNO, "Agno session", "<session id>", agno_db),
    ("agents-sdk", lambda _: AGENTS_SDK, "Agents SDK session", "<session id>", openai_agents_db),
    ("langgraph", lambda _: LANGGRAPH, "LangGraph thread", "<thread id>", langgraph_checkpoints),
    ("mlflow", mlflow_of_two, "MLflow conversation", "<session or trace id>", mlflow),
]


def _how(ids: list[str], placeholder: str) -> str:
    shown = ", ".join(repr(i) for i in ids)
    return (f"pick one with sample={placeholder} (ids {shown}), as turnfold.load(path, "
            f"sample={ids[0]!r}), or read them all with turnfold.scan(path)")  # fmt: skip


@pytest.mark.parametrize(
    ("make", "noun", "placeholder", "module"),
    [reader[1:] for reader in READERS],
    ids=[reader[0] for reader in READERS],
)
def test_L4_a_database_of_several_sessions_names_them_and_how_to_pick_one(
    tmp_path: Path, make: Callable[[Path], Path], noun: str, placeholder: str, module: object
) -> None:
    path = make(tmp_path)
    ids = [session for session, _ in module.sessions(path)]  # type: ignore[attr-defined]
    assert len(ids) > 1
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(path)
    assert str(caught.value) == f"{path} holds {len(ids)} {noun}s: {_how(ids, placeholder)}"
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(path, sample="nope")
    assert str(caught.value) == (
        f"{path} holds no {noun} 'nope'; it holds {len(ids)}: {_how(ids, placeholder)}"
    )
    # The call the error shows runs as written.
    assert turnfold.load(path, sample=ids[0]).entries


def test_L4_an_agents_sdk_session_s_missing_branch_is_a_selection_error_too() -> None:
    session = next(iter(openai_agents_db.sessions(AGENTS_SDK)))[0]
    with pytest.raises(SampleSelectionError, match=r"has no branch 'nope'"):
        turnfold.load(AGENTS_SDK, sample=f"{session}/nope")


def test_L4_one_adk_id_of_two_users_names_both_keys(tmp_path: Path) -> None:
    """Two users' sessions of one id: the error names each by ``<app>/<user>/<id>``, the
    first as a call that runs."""
    path = tmp_path / "sessions.db"
    shutil.copyfile(ADK, path)
    one, two = (session for session, _ in adk_db.sessions(path))
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE sessions SET id = ?, user_id = 'v' WHERE id = ?", (two, one))
        db.execute("UPDATE events SET session_id = ?, user_id = 'v' WHERE session_id = ?",
                   (two, one))  # fmt: skip
    keys = [session for session, _ in adk_db.sessions(path)]
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(path, sample=two)
    assert str(caught.value) == (
        f"{path} holds 2 ADK sessions {two!r}: {_how(keys, '<app>/<user>/<id>')}"
    )
    assert turnfold.load(path, sample=keys[0]).entries


def test_L4_a_file_of_named_runs_lists_up_to_ten_of_its_names(tmp_path: Path) -> None:
    """A Batch API output file of twelve lines (the real file's two, repeated, each named
    anew): a name it lacks lists the first ten and how many it holds."""
    lines = [json.loads(line) for line in BATCH_OUTPUT.read_text("utf-8").splitlines()]
    names = [f"req-{n:02}" for n in range(12)]
    path = tmp_path / "batch_output.jsonl"
    path.write_text("".join(json.dumps({**lines[n % len(lines)], "custom_id": name}) + "\n"
                            for n, name in enumerate(names)), "utf-8")  # fmt: skip
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(path, sample="task-nope")
    said = str(caught.value)
    shown = ", ".join(repr(name) for name in names[:10])
    assert said == (
        f"{path} holds no run named 'task-nope'; it holds 12: pick one with sample=<its "
        f"custom_id> (ids {shown}, …), as turnfold.load(path, sample='req-00'), or read them "
        "all with turnfold.scan(path)"
    )
    assert turnfold.load(path, sample="req-00").entries
    assert [key.rpartition("#")[2] for key in turnfold.scan(path, workers=1, cache=False).keys] \
        == names  # fmt: skip


def test_L4_opencode_says_why_the_session_named_cannot_be_read(tmp_path: Path) -> None:
    """A ``storage/`` folder (OpenCode before 1.2) whose sub-agent's session file is cut off:
    naming that session says why it cannot be read, beside the session it holds."""
    storage = tmp_path / "storage"
    shutil.copytree(FIXTURES / "opencode" / "v1.1" / "work" / "storage", storage)
    files = {json.loads(f.read_text("utf-8")).get("parentID"): f
             for f in (storage / "session").rglob("ses_*.json")}  # fmt: skip
    lead, child = files[None].stem, next(f for parent, f in files.items() if parent)
    child.write_text(child.read_text("utf-8")[:40], "utf-8")
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(storage, sample=child.stem)
    said = str(caught.value)
    assert said.startswith(f"{storage} holds no OpenCode session {child.stem!r} (")
    assert str(child) in said  # the reason names the unreadable file
    assert said.endswith(f"; it holds 1: {_how([lead], '<session id>')}")


# --- sources of several runs that are no database --------------------------------------------

LLAMAINDEX_STORE = (
    FIXTURES
    / "frameworks"
    / "llamaindex"
    / "llama-index-core_v0.14.25_simple-chat-store_two-keys.json"
)
STRANDS_TEAM = (
    FIXTURES / "frameworks" / "strands" / "strands_v1.62.0_file-sessions" / "session_team"
)
OPENHANDS_OUTPUT = (
    FIXTURES
    / "harnesses"
    / "openhands"
    / "openhands_output-jsonl_hand-made_delegate-and-errors.jsonl"
)


def _named(said: str) -> list[str]:
    """The ids an error names, in its order."""
    listed = said.partition("(ids ")[2].partition(")")[0]
    return [name.strip().strip("'") for name in listed.split(",") if name.strip() != "…"]


def test_L4_a_llamaindex_store_s_missing_key_is_a_selection_error() -> None:
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(LLAMAINDEX_STORE, sample="carol")
    assert str(caught.value) == (
        f"{LLAMAINDEX_STORE} holds no key 'carol'; it holds 2: {_how(['alice', 'bob'], '<key>')}"
    )
    assert turnfold.load(LLAMAINDEX_STORE, sample="alice").entries


def test_L4_a_strands_session_s_missing_agent_is_a_selection_error() -> None:
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(STRANDS_TEAM, sample="nobody")
    said = str(caught.value)
    ids = _named(said)
    assert len(ids) > 1
    assert said == (
        f"{STRANDS_TEAM} holds no agent 'nobody'; it holds {len(ids)}: {_how(ids, '<agent id>')}"
    )
    assert turnfold.load(STRANDS_TEAM, sample=ids[0]).entries


def test_L4_an_openhands_output_s_missing_instance_is_a_selection_error() -> None:
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(OPENHANDS_OUTPUT, sample="nope")
    said = str(caught.value)
    ids = _named(said)
    assert ids[:2] == ["calc__calc-1", "calc__calc-2"]
    assert said == (
        f"{OPENHANDS_OUTPUT} holds no OpenHands instance 'nope'; it holds {len(ids)}: "
        f"{_how(ids, '<instance id>')}"
    )
    assert turnfold.load(OPENHANDS_OUTPUT, sample=ids[0]).entries


def _otlp_of(count: int) -> str:
    """An OTLP JSON file of ``count`` conversations, one ``chat`` span each (the shape of
    ``tests/formats/test_otlp.py``'s requests)."""
    from tests.formats.test_otlp import _request, _said, _span

    return _request(*(
        _span("chat m", f"{n + 1:016x}", {"gen_ai.operation.name": "chat",
              "gen_ai.conversation.id": f"c-{n:02}", "gen_ai.input.messages": _said("user", "hi")},
              trace=f"{n + 1:032x}", start=n + 1)
        for n in range(count)
    ))  # fmt: skip


def test_L4_an_otlp_file_of_several_conversations_is_a_selection_error() -> None:
    """Twelve conversations: the first ten named, not a format error (the file is a good one)."""
    text = _otlp_of(12)
    ids = [f"c-{n:02}" for n in range(12)]
    shown = ", ".join(repr(i) for i in ids[:10])
    how = (f"pick one with sample=<conversation id> (ids {shown}, …), as turnfold.load(path, "
           "sample='c-00'), or read them all with turnfold.scan(path)")  # fmt: skip
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(text)
    said = str(caught.value)
    assert said.endswith(f" holds 12 conversations: {how}")
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(text, sample="c-99")
    assert str(caught.value).endswith(f" holds no conversation 'c-99'; it holds 12: {how}")
    assert turnfold.load(text, sample="c-11").entries


def test_L4_a_place_past_a_file_of_runs_is_a_selection_error(tmp_path: Path) -> None:
    """A file of runs keyed by place: the range, never a list of every place."""
    path = tmp_path / "runs.jsonl"
    run = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}
    path.write_text("".join(json.dumps(run) + "\n" for _ in range(40)), "utf-8")
    with pytest.raises(SampleSelectionError) as caught:
        turnfold.load(path, sample=40)
    assert str(caught.value) == (
        f"{path} holds 40 runs: no sample=40 (they are 0 to 39); load one as "
        "turnfold.load(path, sample=0), or read them all with turnfold.scan(path)"
    )
    assert turnfold.load(path, sample=0).entries
