"""Search across runs (C-6) in files that keep several runs under their own ids: a database of
sessions (a LangGraph checkpointer's threads, OpenCode's sessions) and a file of several
conversations (an OTLP file's, a LlamaIndex chat store's). Each hit is keyed as the scan keys
its row (``path#<id>``), so ``corpus[hit.key]`` opens the run the hit is in.

They were searched as a file of numbered runs (``path#0``…), which none of them is: a search
found nothing in them, not even a row's own title.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from turnfold.corpus import Corpus, scan

FIXTURES = Path(__file__).parent / "fixtures"
#: Written by the real langgraph 1.2.24 ``SqliteSaver`` (tests/fixtures/SOURCES.md).
LANGCHAIN = FIXTURES / "frameworks" / "langchain"
CHECKPOINTS = LANGCHAIN / "langgraph_v1.2.24_sqlitesaver_checkpoints.sqlite"
#: Written by the real OpenCode CLI (tests/fixtures/opencode/opencode_recipe.py).
OPENCODE = FIXTURES / "opencode" / "work" / "opencode.db"
#: Persisted by the real llama-index-core 0.14.25 ``SimpleChatStore``: two keys.
LLAMAINDEX = FIXTURES / "frameworks" / "llamaindex"
CHAT_STORE = LLAMAINDEX / "llama-index-core_v0.14.25_simple-chat-store_two-keys.json"
#: Two OTLP files of one conversation each, written by real exporters (SOURCES.md).
OTLP = FIXTURES / "traces" / "otlp"
OTLP_FILES = ("genai_openai_weather-agent.jsonl", "genai_util-genai_workflow_failed.jsonl")


pytestmark = pytest.mark.usefixtures("cache_dir")


def _titles_found(corpus: Corpus) -> dict[str, set[str]]:
    """For each row with a title, the keys a search of its title's first words hits."""
    found: dict[str, set[str]] = {}
    for row in corpus.rows:
        assert row["error"] is None, row
        if row["title"]:
            query = " ".join(row["title"].split()[:3])
            found[row["key"]] = {hit.key for hit in corpus.search(query)}
    return found


def _assert_each_row_finds_itself(corpus: Corpus) -> None:
    found = _titles_found(corpus)
    assert len(found) >= 2, found
    for key, keys in found.items():
        assert key in keys, (key, keys)
        assert keys <= {row["key"] for row in corpus.rows}, keys
        assert corpus[key].entries  # the hit's key opens its run


def test_C6_search_finds_each_thread_of_a_langgraph_checkpointer_by_its_key(
    tmp_path: Path,
) -> None:
    db = tmp_path / "checkpoints.sqlite"
    shutil.copyfile(CHECKPOINTS, db)
    corpus = scan(tmp_path / "checkpoints.sqlite", workers=1)
    _assert_each_row_finds_itself(corpus)
    hits = corpus.search("exploding tool")
    assert {hit.key for hit in hits} == {f"{db}#tool-error"}
    assert hits[0].snippet == "Add 1 and 2, then try the exploding tool."


def test_C6_search_finds_a_session_of_an_opencode_database(tmp_path: Path) -> None:
    data = tmp_path / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    shutil.copyfile(OPENCODE, data / "opencode.db")
    corpus = scan(data, workers=1)
    (row,) = [row for row in corpus.rows if row["title"]][:1]
    assert row["sample"] is not None  # a session of the database, keyed path#ses_…
    hits = corpus.search(" ".join(row["title"].split()[:2]))
    assert row["key"] in {hit.key for hit in hits}


def test_C6_search_finds_each_key_of_a_llamaindex_chat_store(tmp_path: Path) -> None:
    store = tmp_path / "chat_store.json"
    shutil.copyfile(CHAT_STORE, store)
    corpus = scan(store, workers=1)
    assert len(corpus) == 2
    assert all(row["sample"] for row in corpus.rows)
    _assert_each_row_finds_itself(corpus)


def test_C6_search_finds_each_conversation_of_an_otlp_file_of_several(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    traces.write_bytes(b"".join((OTLP / name).read_bytes() for name in OTLP_FILES))
    corpus = scan(traces, workers=1)
    assert len(corpus) == 2
    assert all(row["sample"] for row in corpus.rows)
    _assert_each_row_finds_itself(corpus)
    (weather,) = [row["key"] for row in corpus.rows if row["title"].startswith("TF-WEATHER")]
    assert {hit.key for hit in corpus.search("TF-WEATHER")} == {weather}
    assert corpus.search("TF-", limit=1)[0].key == corpus.to_pandas()["key"][0]
