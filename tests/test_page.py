"""The standalone page built in chunks, shared with a forked child (W-6, Q-1).

``render_page`` must give exactly the bytes of ``render_html(build_view_model(...))`` whether or
not a child shares the work. Forking only happens in a single-threaded process, and the pytest
process may hold threads left by other suites, so the tests that need a real fork run their
code in a fresh interpreter.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import turnfold
from turnfold.cli import expand_all
from turnfold.forking import can_fork, fork_imap, fork_map
from turnfold.render.html import render_html
from turnfold.render.page import render_page
from turnfold.render.viewmodel import build_view_model
from turnfold.settings import DisplaySettings

TESTS = Path(__file__).parent
SOURCES = [
    *sorted((TESTS / "fixtures").glob("*.json*")),
    TESTS.parent / "src" / "turnfold" / "samples" / "demo-session.jsonl",
]
needs_fork = pytest.mark.skipif(
    not hasattr(__import__("os"), "fork"), reason="fork() is POSIX-only"
)


def run_fresh(code: str) -> str:
    """``code`` in a new, single-threaded interpreter; its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
@pytest.mark.parametrize("fork", [False, True])
def test_W6_the_page_built_in_chunks_is_the_page_of_the_whole_view(path: Path, fork: bool) -> None:
    transcript = turnfold.load(path)
    for settings in (DisplaySettings(), DisplaySettings(transcript_display_mode="flat")):
        expected = render_html(build_view_model(transcript, settings), title="t")
        assert render_page(transcript, settings, title="t", fork=fork) == expected
    expanded = render_html(expand_all(build_view_model(transcript)), title="t")
    assert render_page(transcript, title="t", expand=True, fork=fork) == expanded
    whole = render_html(build_view_model(transcript, more_chars=None), title="t")
    assert render_page(transcript, title="t", more_chars=None, fork=fork) == whole


@needs_fork
def test_Q1_a_forked_child_takes_chunks_beside_this_process_and_the_page_is_the_same() -> None:
    out = run_fresh(
        f"""
        import os, time
        import turnfold
        from turnfold.forking import can_fork, fork_imap, fork_map
        from turnfold.render.page import render_page

        assert can_fork(), "a fresh interpreter on two cores can fork"

        def work(chunk):
            time.sleep(0.05)  # long enough that the child takes chunks however busy the cores
            return chunk, os.getpid()

        pids = fork_map(work, list(range(8)))
        assert [chunk for chunk, _ in pids] == list(range(8))
        by = {{pid for _, pid in pids}}
        assert os.getpid() in by and len(by) == 2, pids  # each took some, none twice
        t = turnfold.load({str(SOURCES[-1])!r})
        print(render_page(t, fork=True) == render_page(t, fork=False))
        """
    )
    assert out.strip() == "True"


@needs_fork
def test_Q1_a_child_that_gets_no_core_leaves_the_work_here() -> None:
    # On a busy machine the child may barely run: the queue leaves it only what it takes, and
    # this process does not wait for a share handed out in advance.
    out = run_fresh(
        """
        import os, time
        from turnfold.forking import fork_map

        parent = os.getpid()

        def work(chunk):
            if os.getpid() != parent:
                time.sleep(1)  # a child that gets its core late
            return chunk

        started = time.monotonic()
        print(fork_map(work, list(range(40))))
        print("waited" if time.monotonic() - started > 3 else "not waited")
        """
    )
    assert out.split("\n")[:2] == [str(list(range(40))), "not waited"]


@needs_fork
def test_Q1_a_child_that_fails_costs_time_not_output() -> None:
    out = run_fresh(
        """
        import os
        from turnfold.forking import fork_map

        parent = os.getpid()

        def work(chunk):
            if os.getpid() != parent:
                raise RuntimeError("the child breaks")
            return chunk * 10

        print(fork_map(work, [1, 2, 3, 4, 5]))
        """
    )
    assert out.strip() == "[10, 20, 30, 40, 50]"


@needs_fork
def test_Q1_an_error_here_stops_the_child_and_propagates() -> None:
    out = run_fresh(
        """
        import os, time
        from turnfold.forking import fork_map

        parent = os.getpid()

        def work(chunk):
            if os.getpid() == parent and chunk >= 2:  # the child holds one chunk at most
                raise ValueError("bad chunk")
            if os.getpid() != parent:
                time.sleep(30)  # would hold the test for 30 s if it were not stopped
            return chunk

        started = time.monotonic()
        try:
            fork_map(work, [1, 2, 3, 4])
        except ValueError as error:
            print(error)
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            print("no child left")
        print("stopped" if time.monotonic() - started < 20 else "waited")
        """
    )
    assert out.split("\n")[:3] == ["bad chunk", "no child left", "stopped"]


def test_Q1_no_fork_with_other_threads_and_the_work_is_done_here(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not can_fork()  # a lock held by the other thread would stay locked in a child
        with caplog.at_level(logging.WARNING):
            assert fork_map(lambda chunk: chunk + 1, [1, 2, 3]) == [2, 3, 4]
    finally:
        stop.set()
        other.join()
    assert not caplog.records


@needs_fork
def test_Q1_a_child_is_not_waited_for_and_each_call_reaps_the_last() -> None:
    out = run_fresh(
        """
        import os, time
        from turnfold.forking import fork_map

        for _ in range(5):
            assert fork_map(lambda chunk: bytes(100_000) + bytes([chunk]), list(range(8))) == [
                bytes(100_000) + bytes([chunk]) for chunk in range(8)
            ]
        time.sleep(0.5)  # the last child has left by now
        left = 0
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                left += 1
        except ChildProcessError:
            pass
        print(left)
        """
    )
    assert int(out) <= 1  # at most the last call's child, which the next call would reap


def test_Q1_without_a_fork_each_chunk_is_built_when_it_is_asked_for() -> None:
    built: list[int] = []

    def work(chunk: int) -> int:
        built.append(chunk)
        return chunk * 2

    results = fork_imap(work, [1, 2, 3], fork=False)
    assert built == []
    assert next(results) == 2  # a page writes each chunk as it is drawn
    assert built == [1]
    assert list(results) == [4, 6]
    assert built == [1, 2, 3]


def test_Q1_a_free_core_is_read_from_the_tasks_ready_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from turnfold import forking

    loadavg = tmp_path / "loadavg"
    monkeypatch.setattr(forking, "_LOADAVG", str(loadavg))
    monkeypatch.setattr(forking, "cores", lambda: 2)
    loadavg.write_text("0.50 0.40 0.30 1/200 4242\n")  # this process alone
    assert forking.free_core()
    loadavg.write_text("2.10 1.90 1.70 2/200 4242\n")  # another task on the other core
    assert not forking.free_core()
    monkeypatch.setattr(forking, "cores", lambda: 8)
    assert forking.free_core()


def test_Q1_a_long_page_forks_only_when_a_core_is_free(monkeypatch: pytest.MonkeyPatch) -> None:
    from turnfold.render import page

    asked: list[bool] = []

    def spy(func: Callable[[Any], bytes], chunks: Sequence[Any], *, fork: bool) -> list[bytes]:
        asked.append(fork)
        return [func(chunk) for chunk in chunks]

    monkeypatch.setattr(page, "fork_imap", spy)
    monkeypatch.setattr(page, "FORK_MIN_ENTRIES", 1)
    transcript = turnfold.load(SOURCES[-1])
    for free in (True, False):
        monkeypatch.setattr(page, "free_core", lambda free=free: free)
        render_page(transcript)
    render_page(transcript, fork=True)  # asked for: forks whenever it can
    assert asked == [True, False, True]


def test_Q1_nothing_to_share_means_no_fork() -> None:
    assert fork_map(str, []) == []
    assert fork_map(str, [7]) == ["7"]
    assert fork_map(str, [1, 2], fork=False) == ["1", "2"]


# --- a partner forked before the input is read (turnfold render of a large session) ------------


@needs_fork
def test_Q1_a_partner_reads_the_input_itself_and_shares_the_chunks() -> None:
    out = run_fresh(
        """
        import os, time
        from turnfold.forking import Partner

        parent = os.getpid()
        partner = Partner()
        chunks = list(range(12))  # read by each process for itself, after the fork

        def work(chunk):
            time.sleep(0.05)  # long enough that the child takes chunks however busy the cores
            return chunk, os.getpid()

        done = list(partner.imap(work, chunks, b"the same input"))
        assert os.getpid() == parent  # imap never returns in the child
        assert [chunk for chunk, _ in done] == chunks
        print(len({pid for _, pid in done}))
        """
    )
    assert out.strip() == "2"  # each took some, none twice


@needs_fork
def test_Q1_a_partner_that_read_another_input_leaves_its_share_here() -> None:
    """A file that grew between the two reads: nothing the child built is used."""
    out = run_fresh(
        """
        import os
        from turnfold.forking import Partner

        parent = os.getpid()
        partner = Partner()
        read = b"10 lines" if os.getpid() == parent else b"11 lines"
        done = list(partner.imap(lambda chunk: (chunk, os.getpid()), list(range(20)), read))
        print(sorted({pid == parent for _, pid in done}), [chunk for chunk, _ in done][:3])
        """
    )
    assert out.strip() == "[True] [0, 1, 2]"


@needs_fork
def test_Q1_a_partner_whose_work_is_not_done_is_stopped() -> None:
    out = run_fresh(
        """
        import os
        from turnfold.forking import Partner

        partner = Partner()
        partner.leave()  # in the child: it ends here
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            print("reaped")
        """
    )
    assert out.strip() == "reaped"


@needs_fork
def test_Q1_render_with_a_partner_writes_the_same_page(tmp_path: Path) -> None:
    page = tmp_path / "partner.html"
    out = run_fresh(
        f"""
        import io, os
        import turnfold
        from turnfold import cli
        from turnfold.render.page import write_page

        cli.PARTNER_MIN_BYTES = 1  # every file is large
        cli.free_core = lambda: True
        parent = os.getpid()
        assert cli.main(["render", {str(SOURCES[-1])!r}, "-o", {str(page)!r}]) == 0
        assert os.getpid() == parent
        t = turnfold.load({str(SOURCES[-1])!r})
        alone = io.BytesIO()
        options = cli.build_parser().parse_args(["render", {str(SOURCES[-1])!r}])
        write_page(alone, t, cli._settings(options), title=cli._title(t, options.file),
                   fork=False)
        print(alone.getvalue() == open({str(page)!r}, "rb").read())
        """
    )
    assert out.strip() == "True"


def test_Q1_what_two_reads_agree_on_differs_when_the_file_grew() -> None:
    from turnfold.model import ToolCall
    from turnfold.render.page import _read_alike
    from turnfold.render.viewmodel import plan_view

    def agreed(transcript: turnfold.Transcript) -> bytes:
        return _read_alike(transcript, plan_view(transcript, head=False))

    first, again = turnfold.load(SOURCES[-1]), turnfold.load(SOURCES[-1])
    assert agreed(first) == agreed(again)
    again.append(turnfold.model.UserMessage(id="late", text="one more line"))
    assert agreed(first) != agreed(again)
    settled = turnfold.load(SOURCES[-1])
    call = next(e for e in settled.entries if isinstance(e, ToolCall))
    settled.update(call, status="error" if call.status != "error" else "success")
    assert agreed(first) != agreed(settled)
