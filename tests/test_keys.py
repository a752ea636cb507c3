"""The key grammar: every key reads back into the parts it was built from (P-10, issue 14)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from turnfold import keys
from turnfold.model import SubAgent, ToolCall, ToolResult, Transcript, UserMessage
from turnfold.render.viewmodel import build_view_model, iter_nodes
from turnfold.settings import DisplaySettings

#: Entry ids as the loaders keep them: anything without the separator (uuids, ``toolu_…``,
#: ``call_…``, ``e12``, ids with colons and ``~2`` suffixes among them).
IDS = st.text(st.characters(blacklist_characters="/", blacklist_categories=("Cs",)), min_size=1)
PREFIXES = st.lists(IDS, max_size=3).map(lambda ids: "".join(keys.child_prefix(i) for i in ids))
BUILDERS = {
    "entry": keys.entry,
    "turn": keys.turn,
    "batch": keys.batch,
    "command": keys.command,
    "summary": keys.summary,
}


@given(kind=st.sampled_from(sorted(BUILDERS)), entry_id=IDS, prefix=PREFIXES)
def test_a_key_reads_back_into_its_parts(kind: str, entry_id: str, prefix: str) -> None:
    key = BUILDERS[kind](entry_id, prefix)
    parts = keys.parse(key)
    assert parts.prefix == prefix == keys.prefix_of(key)
    assert parts.text() == key
    if not any(entry_id.startswith(mark) for mark, _ in keys._MARKS):
        # An id that itself starts with a kind's word ("turn:…") reads as that kind; no
        # loader writes such ids, and the key still reads back to the same text.
        assert (parts.kind, parts.id) == (kind, entry_id)


@given(entry_id=IDS, prefix=PREFIXES, tail=st.booleans())
def test_batch_tails_groups_and_processes_read_back(entry_id: str, prefix: str, tail: bool) -> None:
    batch = keys.batch(entry_id, prefix, tail=tail)
    group = keys.group(batch)
    parts = keys.parse(group)
    assert (parts.kind, parts.prefix, parts.member) == ("group", prefix, keys.parse(batch))
    assert keys.prefix_of(group) == prefix
    assert parts.text() == group
    process = keys.process(entry_id, prefix)
    assert keys.parse(process).prefix == prefix
    assert keys.parse(process).text() == process


@given(path=st.lists(IDS, min_size=1, max_size=4))
def test_the_call_path_of_a_nested_key_names_each_spawning_call(path: list[str]) -> None:
    prefix = ""
    for call_id in path[:-1]:
        prefix = keys.child_prefix(keys.entry(call_id, prefix))
    assert keys.call_path(keys.entry(path[-1], prefix)) == path


def test_keys_of_a_built_view_parse_and_are_unique() -> None:
    child = Transcript([
        UserMessage(text="look"),
        ToolCall(call_id="c2", name="Read", args={"file_path": "a.py"}, status="success",
                 result=ToolResult(text="x")),
    ])  # fmt: skip
    transcript = Transcript([
        UserMessage(text="go"),
        ToolCall(call_id="c1", name="Task", status="success", subagent=SubAgent(transcript=child),
                 result=ToolResult(text="done")),
    ])  # fmt: skip
    for mode in ("flat", "command-first", "fully-folded"):
        view = build_view_model(transcript, DisplaySettings(transcript_display_mode=mode))
        found = [node["key"] for node in iter_nodes(view)]
        assert len(found) == len(set(found))
        for key in found:
            assert keys.parse(key).text() == key
        nested = [k for k in found if keys.prefix_of(k)]
        assert nested
        assert all(keys.prefix_of(k).startswith(transcript.entries[1].id) for k in nested)
