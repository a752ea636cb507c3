"""Six gaps a user met between ``load``, ``scan`` and the session browser (spec C-1, C-2, C-7,
B-1, W-4, L-4, A-1).

The sources are real where the tools exist: the Google ADK session is the committed
``session.model_dump_json()`` of the real google-adk 2.13.0 and its agent tree is made with
the real ``LlmAgent`` and ``AgentTool`` (tests/formats/adk_runs.py made both); the eval log is
the real ``inspect_ai`` 0.3.285's; OpenCode's, Kilo Code's and ``crush server``'s databases are
the ones those tools wrote (tests/fixtures/SOURCES.md). Codex's ``auth.json`` is shaped as its
``docs/authentication.md`` shows it, its values made up. The tables of runs are written here
with pyarrow, as a training loop writes them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import turnfold
from tests.table_runs import trajectory
from turnfold import scan
from turnfold.browser import SessionBrowser
from turnfold.formats import FORMATS, AgentRefused, _module
from turnfold.formats.credentials import (
    LIKELY_DEEP_FOLDERS,
    LIKELY_FOLDERS,
    LIKELY_NAMES,
    READERS,
    named_like,
)
from turnfold.formats.errors import TranscriptFormatError
from turnfold.model import ToolCall, Transcript
from turnfold.render.site import INDEX, build_site

FIXTURES = Path(__file__).parent / "fixtures"
ADK_SESSION = FIXTURES / "frameworks" / "adk" / "adk_v2.13.0_session_subagents.json"
EVAL_LOG = FIXTURES / "harnesses" / "inspect" / "mockllm_two-epochs.eval"
FOUR_SAMPLES = FIXTURES / "harnesses" / "inspect" / "react_four-samples_two-epochs.eval"
ROLLOUT = FIXTURES / "codex_rollout_schema-coverage.jsonl"
OPENCODE = FIXTURES / "opencode" / "work" / "opencode.db"
KILO = FIXTURES / "opencode" / "kilo" / "work" / "kilo.db"
CRUSH_SERVER = FIXTURES / "crush" / "cisco-auto" / "crush.db"
#: Codex's ``auth.json`` of a ChatGPT login (its ``docs/authentication.md``), values made up.
CODEX_AUTH = {
    "OPENAI_API_KEY": None,
    "tokens": {"id_token": "x.y.z", "access_token": "x.y.z", "refresh_token": "rt_not_real"},
    "last_refresh": "2025-10-17T18:45:04Z",
}


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURNFOLD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("CRUSH_GLOBAL_DATA", raising=False)


def _rows(count: int) -> list[dict[str, Any]]:
    return [{"task_id": f"t{i}", "reward": i / 10, "messages": trajectory(i)}
            for i in range(count)]  # fmt: skip


def _write(kind: str, table: pa.Table, path: Path) -> Path:
    if kind == "parquet":
        pq.write_table(table, path)
    else:  # an Arrow IPC file (Feather v2), as datasets and pyarrow write one
        feather.write_feather(table, path)
    return path


# --- 1. a table file of one row needs no sample= ------------------------------------------------


@pytest.mark.parametrize(("kind", "name"), [("parquet", "run.parquet"), ("arrow", "run.arrow")])
def test_C1_a_table_file_of_one_row_loads_that_row_without_sample(
    tmp_path: Path, kind: str, name: str
) -> None:
    table = pa.Table.from_pylist(_rows(1))
    path = _write(kind, table, tmp_path / name)
    loaded = turnfold.load(path)
    assert loaded == turnfold.load(path, sample=0) == turnfold.load(table)
    assert loaded == scan(path, workers=1, cache=False)[f"{path}#0"]
    assert loaded.metadata["task_id"] == "t0"  # its other columns, as the row's metadata
    # One of several rows still names none: the error says how to pick one.
    several = _write(kind, pa.Table.from_pylist(_rows(2)), tmp_path / f"two-{name}")
    with pytest.raises(TranscriptFormatError, match=r"turnfold\.load\(path, sample=n\)"):
        turnfold.load(several)


def test_C1_a_file_of_one_run_in_json_lines_loads_it(tmp_path: Path) -> None:
    """The JSON-lines file of runs of one record already read (a one-line file is a document):
    kept so, beside the tables."""
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(_rows(1)[0]) + "\n")
    assert turnfold.load(path) == turnfold.load(_rows(1)[0])


# --- 2. agent= is honoured by a table's row, or refused naming it --------------------------------


def _adk_root_agent() -> Any:
    """The real ADK agent tree of the committed session (tests/formats/adk_runs.py): ``calc``
    with the ``researcher`` agent as a tool (``AgentTool``), whose steps the session lacks."""
    pytest.importorskip("google.adk")
    from google.adk.agents import LlmAgent
    from google.adk.tools.agent_tool import AgentTool

    researcher = LlmAgent(name="researcher", description="Explains things.", model="unused")
    return LlmAgent(name="calc", model="unused", tools=[AgentTool(agent=researcher)])


def _agent_calls(transcript: Transcript) -> list[tuple[str | None, str | None, bool]]:
    return [(e.call_id, e.subagent.name, e.subagent.steps_missing) for e in transcript.entries
            if isinstance(e, ToolCall) and e.subagent is not None]  # fmt: skip


@pytest.mark.parametrize("kind", ["parquet", "arrow", "in memory"])
def test_A1_a_table_row_of_an_adk_session_reads_agent(tmp_path: Path, kind: str) -> None:
    agent = _adk_root_agent()
    session = ADK_SESSION.read_text()
    table = pa.table({"messages": [session], "task_id": ["refund-1"]})
    source: Any = table if kind == "in memory" else _write(kind, table, tmp_path / f"r.{kind}")
    without = turnfold.load(source)
    given = turnfold.load(source, agent=agent)
    assert ("call_4", "researcher", True) not in _agent_calls(without)
    assert ("call_4", "researcher", True) in _agent_calls(given)
    # As the session itself reads with its agent: agent= was not ignored.
    assert _agent_calls(given) == _agent_calls(turnfold.load(ADK_SESSION, agent=agent))
    assert given.metadata["task_id"] == "refund-1"


@pytest.mark.parametrize("kind", ["parquet", "in memory", "json lines"])
def test_L4_agent_for_a_row_of_a_format_that_says_what_ran_is_refused_naming_the_row(
    tmp_path: Path, kind: str
) -> None:
    table = pa.Table.from_pylist(_rows(2))
    if kind == "json lines":
        source: Any = tmp_path / "runs.jsonl"
        source.write_text("".join(json.dumps(row) + "\n" for row in _rows(2)))
        where = rf"{re.escape(str(source))}, line 2"
    elif kind == "parquet":
        source = _write("parquet", table, tmp_path / "runs.parquet")
        where = rf"{re.escape(str(source))}, row 1"
    else:
        source, where = table, r"<table>, row 1"
    with pytest.raises(AgentRefused, match=rf"^{where} is read as openai, whose run says"):
        turnfold.load(source, sample=1, agent=object())


# --- 3. corpus[key] of an error row raises what its error column says ------------------------


def test_C7_an_error_row_s_key_raises_its_error_word_for_word(tmp_path: Path) -> None:
    """A folder holding a file of runs with a line cut off and a record no format reads: each
    row's ``error`` is the one message ``corpus[key]`` and ``load(path, sample=n)`` raise, naming
    the file and the line (before, the row said ``line 2: invalid JSON`` and the load
    ``…not a transcript (#1: invalid JSON…)``; the row said ``(no known…)`` and the load
    ``(run #2: no known…)``)."""
    folder = tmp_path / "runs"
    folder.mkdir()
    path = folder / "train.jsonl"
    lines = [json.dumps(row) for row in _rows(4)]
    lines[1] = lines[1][:40]  # cut off
    lines[2] = json.dumps({"task_id": "t2", "messages": [{"speaker": "nobody"}]})
    path.write_text("\n".join(lines) + "\n")
    shutil.copyfile(ROLLOUT, folder / "rollout.jsonl")  # a session beside it
    corpus = scan(folder, workers=1, cache=False)
    errors = {row["key"]: row["error"] for row in corpus if row["error"] is not None}
    assert sorted(errors) == [f"{path}#1", f"{path}#2"]
    for place in (1, 2):
        error = errors[f"{path}#{place}"]
        assert error.startswith(f"{path}, line {place + 1}: not a transcript (")
        for key, sample in ((f"{path}#{place}", None), (None, place)):
            with pytest.raises(TranscriptFormatError) as caught:
                corpus[key] if key is not None else turnfold.load(path, sample=sample)
            assert str(caught.value) == error
    assert corpus[f"{path}#3"] == turnfold.load(path, sample=3)


def test_C7_a_table_file_s_error_row_raises_its_error_word_for_word(tmp_path: Path) -> None:
    folder = tmp_path / "table"
    folder.mkdir()
    cells = [json.dumps(trajectory(0)), "{not json", json.dumps([{"foo": 1}])]
    path = folder / "runs.parquet"
    pq.write_table(pa.table({"messages": cells}), path)
    corpus = scan(folder, workers=1, cache=False)
    for row in corpus:
        if row["error"] is None:
            continue
        with pytest.raises(TranscriptFormatError) as caught:
            corpus[row["key"]]
        assert str(caught.value) == row["error"]


# --- 4. the saved notebook's table has the live table's Sample column ---------------------------


def _heads(html: str) -> list[str]:
    return re.findall(r'<th scope="col"[^>]*>([^<]*)</th>', html)


def test_W4_a_saved_browser_shows_the_sample_column_the_live_table_shows() -> None:
    """An eval log's rows share one file and one prompt: the table tells its samples and epochs
    apart by ``sample`` (``1/2``), in the live browser, in the ``text/html`` a saved notebook
    keeps of it, and in a Corpus's own HTML, in one column order."""
    corpus = scan(EVAL_LOG, workers=1, cache=False)
    assert len(corpus) == 4
    browser = SessionBrowser(corpus)
    try:
        live = [head["label"] for head in browser._page["columns"]]
        data, _ = browser._repr_mimebundle_() or ({}, {})
    finally:
        browser.close()
    saved = data["text/html"]
    assert live[:2] == ["Title", "Sample"]
    assert _heads(saved) == live == _heads(corpus._repr_html_())
    for sample in ("1/1", "2/1", "1/2", "2/2"):
        assert f'<td><span class="tf-runs-clip">{sample}</span></td>' in saved
    # Rows each of a file of their own need no such column.
    single = scan([ROLLOUT], workers=1, cache=False)
    alone = SessionBrowser(single)
    try:
        assert "Sample" not in [head["label"] for head in alone._page["columns"]]
    finally:
        alone.close()


def test_B2_the_site_s_index_shows_the_sample_column_the_session_browser_shows(
    tmp_path: Path,
) -> None:
    """An eval log of four samples over two epochs beside a session: the static site's index
    had the default columns alone, where the browser tells the log's rows apart by sample."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copyfile(FOUR_SAMPLES, runs / FOUR_SAMPLES.name)
    shutil.copyfile(ROLLOUT, runs / ROLLOUT.name)
    corpus = scan(runs, workers=1, cache=False)
    assert len(corpus) == 9
    browser = SessionBrowser(corpus)
    try:
        live = [head["label"] for head in browser._page["columns"]]
    finally:
        browser.close()
    assert live[:2] == ["Title", "Sample"]
    build_site(runs, tmp_path / "site", workers=1, progress=False)
    index = (tmp_path / "site" / INDEX).read_text(encoding="utf-8")
    assert _heads(index) == live
    samples = sorted(str(row["sample"]) for row in corpus if row["sample"] is not None)
    assert len(samples) == 8
    for sample in samples:
        assert f'<td title="{sample}"><span class="tf-runs-clip">{sample}</span></td>' in index
    # A site of runs each of a file of its own has no Sample column, as the browser has none.
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copyfile(ROLLOUT, alone / ROLLOUT.name)
    build_site(alone, tmp_path / "site-alone", workers=1, progress=False)
    heads = _heads((tmp_path / "site-alone" / INDEX).read_text(encoding="utf-8"))
    assert heads[0] == "Title"
    assert "Sample" not in heads


# --- 5. $XDG_DATA_HOME: where OpenCode, Kilo Code and Crush write when it is set ---------------


def _place(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


@pytest.mark.parametrize("where", ["outside the home", "hidden in the home", "in the home"])
def test_C1_a_scan_of_the_home_walks_the_agents_folders_of_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    home = tmp_path / "me"
    home.mkdir()
    data = {"outside the home": tmp_path / "data", "hidden in the home": home / ".xdg" / "data",
            "in the home": home / "data"}[where]  # fmt: skip
    databases = [
        _place(OPENCODE, data / "opencode" / "opencode.db"),
        _place(KILO, data / "kilo" / "kilo.db"),
        _place(CRUSH_SERVER, data / "crush" / ".crush" / "crush.db"),  # crush server's workspace
    ]
    # Other programs' data there is no agent's: neither rows nor skipped files.
    _place(ROLLOUT, data / "some-app" / "history.jsonl")
    (data / "notes.json").write_text("{}")
    wanted = [key for db in databases for key in scan([db], workers=1, cache=False).keys]
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    corpus = scan(Path.home(), workers=1, cache=False)
    assert sorted(corpus.keys) == sorted(wanted)
    assert corpus.skipped == 0
    assert {row["agent"] for row in corpus} >= {"opencode", "kilo-code", "crush"}
    # A scan of another folder is not widened by it.
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    assert len(scan(elsewhere, workers=1, cache=False)) == 0


def test_C1_the_default_data_folder_is_still_walked_with_xdg_data_home_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sessions written before ``$XDG_DATA_HOME`` was set stay where they were written."""
    home = tmp_path / "me"
    old = _place(OPENCODE, home / ".local" / "share" / "opencode" / "opencode.db")
    new = _place(KILO, tmp_path / "data" / "kilo" / "kilo.db")
    wanted = [key for db in (old, new) for key in scan([db], workers=1, cache=False).keys]
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert sorted(scan(home, workers=1, cache=False).keys) == sorted(wanted)


@pytest.mark.parametrize(
    "where",
    ["outside the home", "hidden in the home", "in the home's data folder", "in the home"],
)
def test_C1_a_scan_of_the_home_walks_crush_s_own_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """``$CRUSH_GLOBAL_DATA`` is Crush's data folder itself (its ``crush.json``, and
    ``crush server``'s workspace ``.crush/crush.db``), checked before ``$XDG_DATA_HOME``
    (charmbracelet/crush internal/config/load.go, ``GlobalConfigData``): a scan of the home
    walks it as it walks Crush's folder of ``$XDG_DATA_HOME``, each session once."""
    home = tmp_path / "me"
    home.mkdir()
    data = {"outside the home": tmp_path / "crush-data",
            "hidden in the home": home / ".crush-global",
            "in the home's data folder": home / ".local" / "share" / "crush-work",
            "in the home": home / "crush-data"}[where]  # fmt: skip
    server = _place(CRUSH_SERVER, data / ".crush" / "crush.db")
    # Written before it was set: where Crush wrote then, still walked.
    old = _place(OPENCODE, home / ".local" / "share" / "opencode" / "opencode.db")
    before = scan([old], workers=1, cache=False).keys
    wanted = scan([server], workers=1, cache=False).keys + before
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CRUSH_GLOBAL_DATA", str(data))
    corpus = scan(Path.home(), workers=1, cache=False)
    assert sorted(corpus.keys) == sorted(wanted)
    assert "crush" in {row["agent"] for row in corpus}
    # Set with $XDG_DATA_HOME, both are walked; a relative value names no folder a scan can
    # know (it is the folder Crush ran in's), and a scan of another folder is not widened.
    xdg = _place(KILO, tmp_path / "xdg" / "kilo" / "kilo.db")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    both = scan(Path.home(), workers=1, cache=False).keys
    assert sorted(both) == sorted(wanted + scan([xdg], workers=1, cache=False).keys)
    monkeypatch.delenv("XDG_DATA_HOME")
    if where != "in the home":
        monkeypatch.setenv("CRUSH_GLOBAL_DATA", os.path.relpath(data))
        assert scan(Path.home(), workers=1, cache=False).keys == before
    elsewhere = tmp_path / "project"
    elsewhere.mkdir()
    monkeypatch.setenv("CRUSH_GLOBAL_DATA", str(data))
    assert len(scan(elsewhere, workers=1, cache=False)) == 0


# --- 6. a credential file named directly says why it is not read, unopened ---------------------


def _home_with_auth(root: Path) -> Path:
    home = root / "me"
    _place(ROLLOUT, home / ".codex" / "sessions" / "rollout-2025-01-01T00-00-00.jsonl")
    (home / ".codex" / "auth.json").write_text(json.dumps(CODEX_AUTH))
    return home


def test_C7_a_credential_file_named_to_scan_is_said_and_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    home = _home_with_auth(tmp_path)
    opened.clear()  # its writing, here
    monkeypatch.setenv("HOME", str(home))
    said = r"auth\.json: codex's credentials \(keys, tokens\), never opened"
    with pytest.warns(UserWarning, match=rf"^{re.escape(str(home))}/\.codex/{said}$"):
        corpus = scan("~/.codex/auth.json", workers=1, cache=False)
    assert (len(corpus), corpus.skipped) == (0, 0)
    session = next((home / ".codex" / "sessions").iterdir())
    with pytest.warns(UserWarning, match=said):
        both = scan([session, home / ".codex" / "auth.json"], workers=1, cache=False)
    assert both.keys == [str(session)]
    # A walk passes it over in silence, as before: the user did not name it.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert scan(home, workers=1, cache=False).keys == [str(session)]
    assert not [path for path in opened if path.endswith("auth.json")]


def test_L4_a_credential_file_named_to_load_is_refused_unopened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    home = _home_with_auth(tmp_path)
    opened.clear()  # its writing, here
    monkeypatch.setenv("HOME", str(home))
    for named in ("~/.codex/auth.json", home / ".codex" / "auth.json"):
        with pytest.raises(TranscriptFormatError, match=r"auth\.json: not a transcript \(codex's "
                           r"credentials \(keys, tokens\), never opened\)"):  # fmt: skip
            turnfold.load(named)
    assert not [path for path in opened if path.endswith("auth.json")]
    assert "rt_not_real" not in "".join(opened)
    # A file of that name that is no agent's credentials is read as any file is.
    elsewhere = tmp_path / "project" / "auth.json"
    _place(ROLLOUT, elsewhere)
    assert turnfold.load(elsewhere).entries


def test_C7_the_credentials_load_tells_by_name_are_every_reader_s() -> None:
    """``load()`` imports no reader to tell a file of another name is no credentials: the names
    it goes by are kept equal to what the readers declare, and the readers to those that do."""
    declaring = sorted(
        module.__name__ for name in FORMATS if hasattr(module := _module(name), "CREDENTIALS")
    )
    assert sorted(READERS) == declaring
    from turnfold.formats.credentials import keepers

    test = named_like([keeper for _, keeper in keepers()])
    for name in LIKELY_NAMES:
        assert test(f"/x/{name}")
    for folder in LIKELY_FOLDERS - LIKELY_DEEP_FOLDERS:  # the deep ones: test_credentials_leftovers
        assert test(f"/x/{folder}/any.json")
    declared = {p.rsplit("/", 1)[-1] for _, k in keepers() for p in k.files if "*" not in p}
    anywhere = [t.split("/") for _, k in keepers() for t in k.anywhere]  # a path in any folder
    declared |= {t[-1] for t in anywhere if "*" not in t[-1]}
    declared |= {name for _, k in keepers() for name in k.homes}  # right in the home
    folders = {p.split("/")[-2] for _, k in keepers() for p in k.files if "*" in p}
    folders |= {t[-2] for t in anywhere if "*" in t[-1]}
    assert (declared, folders) == (set(LIKELY_NAMES), set(LIKELY_FOLDERS))
