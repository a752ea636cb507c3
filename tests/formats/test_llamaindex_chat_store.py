"""LlamaIndex's ``SimpleChatStore`` persisted to JSON (``llamaindex-chat-store``): one
conversation a key, picked by ``sample=``, read by the llamaindex reader's ``ChatMessage``
rules.

The committed store was persisted by the real llama-index-core 0.14.25
(``tests/fixtures/frameworks/llamaindex/llamaindex_chat_store_recipe.py``, with
``MockFunctionCallingLLM``): ``alice`` two turns (``add`` succeeds, ``explode`` raises),
``bob`` one. LlamaIndex's own ``SimpleChatStore.from_persist_path`` reads it back, to load the
same messages as objects.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

import turnfold
from tests.formats.counters_llamaindex import llamaindex_chat_store as count_calls
from turnfold.model import AssistantText, ToolCall, Transcript, UserMessage

STORE = (
    Path(__file__).parents[1]
    / "fixtures/frameworks/llamaindex/llama-index-core_v0.14.25_simple-chat-store_two-keys.json"
)


def shown(transcript: Transcript) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for entry in transcript.entries:
        if isinstance(entry, ToolCall):
            result = entry.result.text if entry.result is not None else None
            rows.append(("call", entry.call_id, entry.name, entry.args, entry.status, result))
        else:
            rows.append((type(entry).__name__, getattr(entry, "text", None)))
    return rows


def test_a_key_loads_as_the_store_s_own_messages() -> None:
    from llama_index.core.storage.chat_store import SimpleChatStore

    store = SimpleChatStore.from_persist_path(str(STORE))
    for key in ("alice", "bob"):
        from_file = turnfold.load(STORE, sample=key)
        assert shown(from_file) == shown(turnfold.load(store.get_messages(key)))
        assert from_file.metadata["source_format"] == "llamaindex-chat-store"
        assert from_file.metadata["session_id"] == key


def test_alice_s_two_turns_and_her_calls() -> None:
    transcript = turnfold.load(STORE, sample="alice")
    assert [e.text for e in transcript.entries if isinstance(e, UserMessage)] == [
        "add 1 and 2, then explode y",
        "and now?",
    ]
    calls = [(c.call_id, c.name, c.args, c.result and c.result.text)
             for c in transcript.tool_calls()]  # fmt: skip
    assert calls == [("call_1", "add", {"a": 1, "b": 2}, "3"),
                     ("call_2", "explode", {"x": "y"}, "boom: y")]  # fmt: skip
    texts = [e.text for e in transcript.entries if isinstance(e, AssistantText)]
    assert texts == ["1+2=3; explode failed.", "Still 3."]
    assert transcript.warnings == []


def test_without_sample_the_first_key_and_a_warning_naming_the_others() -> None:
    transcript = turnfold.load(STORE)
    assert transcript.metadata["session_id"] == "alice"
    assert any("'bob'" in w.reason and "sample=" in w.reason for w in transcript.warnings)
    assert len(transcript.tool_calls()) == count_calls(STORE)
    assert transcript.accounting is not None
    assert transcript.accounting.counts["store/other key"] == {"ignored": 1}


def test_an_unknown_key_names_the_keys() -> None:
    with pytest.raises(ValueError, match="'alice', 'bob'"):
        turnfold.load(STORE, sample="carol")


def test_the_store_is_told_by_its_content() -> None:
    text = STORE.read_text(encoding="utf-8")
    assert turnfold.load(text, sample="bob").entries[-1].text == "Hello, Bob."  # type: ignore[union-attr]


def test_a_damaged_message_is_a_warning_and_the_rest_is_read(tmp_path: Path) -> None:
    document = json.loads(STORE.read_text(encoding="utf-8"))
    document["store"]["alice"][5] = "not a message"  # the first turn's answer
    path = tmp_path / "chat_store.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    transcript = turnfold.load(path, sample="alice")
    assert transcript.warnings
    assert [c.name for c in transcript.tool_calls()] == ["add", "explode"]
    assert [e.text for e in transcript.entries if isinstance(e, AssistantText)] == ["Still 3."]


def test_C1_a_scan_is_a_row_per_key_each_as_its_load(tmp_path: Path) -> None:
    """A store of several conversations is a row for each (``path#<key>``), read from the file
    once, each counted as ``load(path, sample=key)`` shows it; a store of one is one row keyed by
    its path."""
    from turnfold.corpus import scan

    corpus = scan(STORE, workers=1, cache=False)
    rows = {row["key"]: row for row in corpus}
    assert list(rows) == [f"{STORE}#alice", f"{STORE}#bob"]
    for key in ("alice", "bob"):
        loaded = turnfold.load(STORE, sample=key)
        row = rows[f"{STORE}#{key}"]
        assert (row["sample"], row["format"], row["error"]) == (key, "llamaindex-chat-store", None)
        assert row["tool_calls"] == len(loaded.tool_calls())
        assert row["warnings"] == len(loaded.warnings)
        assert corpus[f"{STORE}#{key}"] == loaded
    document = json.loads(STORE.read_text())
    single = tmp_path / "one.json"
    single.write_text(json.dumps({**document, "store": {"alice": document["store"]["alice"]}}))
    (row,) = scan(single, workers=1, cache=False)
    assert (row["key"], row["sample"]) == (str(single), None)
