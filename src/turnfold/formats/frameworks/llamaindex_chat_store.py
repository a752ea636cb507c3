"""LlamaIndex's ``SimpleChatStore`` as ``chat_store.persist(persist_path="chat_store.json")``
writes it (issue 22): the chat histories a ``ChatMemoryBuffer`` (or any memory on the store)
kept, one conversation per key (a user, a session), read through
:mod:`~turnfold.formats.frameworks.llamaindex`'s ``ChatMessage`` rules.

The file (``llama_index/core/storage/chat_store/simple_chat_store.py``) is the store's
``model_dump_json()``: ``{"store": {key: [ChatMessage dumps]}, "class_name":
"SimpleChatStore"}``, each message ``{"role", "additional_kwargs", "blocks"}`` (older
releases: ``content``). ``sample=`` names the key; without it, the first key's conversation is
read and a warning names the others. A key's value that is no list of messages is a warning, and
so is each message of it the llamaindex reader cannot read; the rest is read. The store holds
the messages only: no time, model or usage unless a message's ``additional_kwargs`` has it.

Detection: a document whose ``class_name`` is ``SimpleChatStore`` and whose ``store`` is an
object.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import TranscriptFormatError, unselected
from turnfold.formats.frameworks import llamaindex
from turnfold.formats.source import Source
from turnfold.model import Transcript

NAME = "llamaindex-chat-store"
#: A store holds one conversation per key: ``sample=`` names one.
HAS_SAMPLES = True
CLASS_NAME = "SimpleChatStore"

RECORDS = Records(
    mapped={
        **llamaindex.RECORDS.mapped,
        "store": "the conversation of the key sample= names (the first, by default): its "
        'messages in order, the key as metadata["session_id"]',
        "class_name": "the store's class, SimpleChatStore",
    },
    ignored={
        **llamaindex.RECORDS.ignored,
        "store/other key": "the store's other conversations: load(path, sample=key) reads each",
    },
)


def _store(document: Any) -> Mapping[str, Any] | None:
    if not isinstance(document, Mapping) or document.get("class_name") != CLASS_NAME:
        return None
    store = document.get("store")
    return store if isinstance(store, Mapping) else None


def detect(source: Source) -> Evidence:
    """A persisted ``SimpleChatStore``."""
    document = source.document if source.is_document else None
    if _store(document) is None:
        return Evidence.none('no SimpleChatStore ("class_name" and "store")')
    return Evidence(share=1.0, marks=2)


def keys(document: Any) -> list[str]:
    """The store's keys, in the file's order (one conversation each)."""
    store = _store(document)
    return [str(key) for key in store] if store is not None else []


def _chosen(source: Source, store: Mapping[str, Any], sample: Any) -> str:
    if sample is None:
        if not store:
            raise TranscriptFormatError(source.name, [NAME], 1, "a SimpleChatStore of no key")
        if len(store) > 1:  # the first is shown, and the others said: none is dropped silently
            listed = ", ".join(repr(key) for key in list(store)[1:21])
            source.warn(f"{len(store) - 1} other conversation(s) of this SimpleChatStore, "
                        f"not shown: load(path, sample=<key>) reads each ({listed})")  # fmt: skip
        return str(next(iter(store)))
    if str(sample) not in store:
        raise unselected(source.name, [str(key) for key in store], sample, "key", "<key>")
    return str(sample)


def read(source: Source, *, sample: Any = None, epoch: int | None = None) -> Transcript:
    """The conversation of the key ``sample`` names (by default the store's first)."""
    if epoch is not None:
        raise ValueError(f"{source.name} is a SimpleChatStore: its conversations have no epochs")
    document = source.document if source.is_document else None
    store = _store(document)
    if store is None or not isinstance(document, Mapping):
        raise TranscriptFormatError(source.name, [NAME], 1, "no SimpleChatStore document")
    key = _chosen(source, store, sample)
    transcript = Transcript(metadata={"source_format": NAME, "session_id": key})
    builder = llamaindex.LlamaBuilder(transcript, source.name)
    for name in document:
        if name not in ("store", "class_name"):
            source.ignored("other key")
    source.mapped("class_name")
    source.mapped("store")
    for other in store:
        if other != key:
            source.ignored("store/other key")
    messages = store[key]
    if isinstance(messages, list):
        llamaindex._read_messages(source, builder, messages)
    else:
        source.warn(f"key {key!r}: not a list of messages", 1, record_type="store")
    builder.finish()
    return transcript


def read_each(source: Source) -> Iterator[tuple[str | None, Transcript]]:
    """Every conversation of the store, the file read once, as its key (None when it holds one,
    which ``load(path)`` reads) and the transcript ``load(path, sample=key)`` gives: the rows a
    scan makes of it (``path#<key>``), as of an eval log's samples. Each gets its own copy of
    what reading the file found (its warnings, its accounting)."""
    from turnfold.formats import settle_load

    document = source.document if source.is_document else None
    store = _store(document)
    chosen = list(store) if store else [None]  # no key: read() says why
    module = sys.modules[__name__]
    warnings, accounting = list(source.warnings), source.accounting.copy()
    for key in chosen:
        source.warnings[:] = warnings
        source.accounting = accounting.copy()
        transcript = read(source, sample=key)
        yield (str(key) if len(chosen) > 1 else None), settle_load(transcript, source, module)
