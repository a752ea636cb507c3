"""A scan of the system temp folder passes over what the agents write there beside no session
(C-1, C-7): Gemini CLI's crash reports and Claude Code's background tasks' output, unopened and
uncounted; a file of theirs the user names is still read.

The files are written here as the tools write them (no run of either made one on purpose: a
report needs a failed API call, a task a background command):

- Gemini CLI 0.61.0, ``reportError`` (``packages/core/src/utils/errorReporting.ts``, in
  tests/agents/node_modules/@google/gemini-cli/bundle): ``path.join(os.tmpdir(),
  `gemini-client-error-${type}-${timestamp}.json`)``, the timestamp ``new Date().toISOString()``
  with ``:`` and ``.`` made ``-``, the content ``JSON.stringify({error: {message, stack},
  context}, null, 2)``, the context the request's contents (``Turn.run-sendMessageStream``:
  the turn's request);
- Claude Code 2.1.332 (its binary in tests/agents/node_modules/@anthropic-ai/claude-code):
  ``join(tmpdir, `claude-${process.getuid()}`, <the working folder, sanitized>, <session id>,
  "tasks", `${taskId}.output`)``, a task's output as the command printed it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from turnfold import scan
from turnfold.corpus.discover import discover

FIXTURES = Path(__file__).parent / "fixtures"
#: A real session among them, which the scan reads.
SESSION = FIXTURES / "gemini" / "gemini-cli_v0.61_three-turns-two-resumes.jsonl"
REPORT = "gemini-client-error-Turn.run-sendMessageStream-2026-12-07T08-22-51-341Z.json"
TASK_OUTPUT = "claude-1000/-tmp-hF-work/5a4a7738-049f-47df-9ed5-2cc2ece6d699/tasks/b7k2m9x4q.output"

pytestmark = pytest.mark.usefixtures("cache_dir")


def _temp_folder(temp: Path) -> Path:
    """A temp folder holding a Gemini CLI crash report, a Claude Code task's output and a
    session."""
    report = {
        "error": {
            "message": "exception TypeError: fetch failed sending request",
            "stack": "TypeError: fetch failed\n    at node:internal/deps/undici/undici:13510:13",
        },
        "context": [
            {"role": "user", "parts": [{"text": "TF-CKPT: read the notes."}]},
            {"role": "model", "parts": [{"functionCall": {"name": "read_file",
                                                          "args": {"file_path": "notes.txt"}}}]},
        ],
    }  # fmt: skip
    temp.mkdir(parents=True)
    (temp / REPORT).write_text(json.dumps(report, indent=2), encoding="utf-8")
    output = temp / TASK_OUTPUT
    output.parent.mkdir(parents=True)
    output.write_text("total 8\n-rw-r--r-- 1 me me 12 Dec  7 08:22 notes.txt\n", encoding="utf-8")
    shutil.copyfile(SESSION, temp / "kept-session.jsonl")
    return temp


def test_C7_a_temp_folder_scan_reads_the_session_and_none_of_the_agents_files(
    tmp_path: Path,
) -> None:
    temp = _temp_folder(tmp_path / "tmp")
    found = discover(temp, None)
    assert [item.path for item in found.items] == [str(temp / "kept-session.jsonl")]
    assert found.skipped == 0  # passed over by name, not counted as files that might be sessions
    corpus = scan(temp, workers=1, cache=False)
    rows = corpus.to_pandas()
    assert list(rows["path"]) == [str(temp / "kept-session.jsonl")]
    assert (corpus.skipped, rows["error"].isna().all()) == (0, True)


def test_C7_the_rule_is_the_names_so_a_temp_folder_of_any_name_is_covered(tmp_path: Path) -> None:
    """macOS's ``/var/folders/…/T``, Windows' ``Temp``: the temp folder's own name says nothing,
    the files' names do; a ``.output`` outside Claude Code's ``claude-<uid>/…/tasks/`` is no
    task's and is counted as before."""
    temp = _temp_folder(tmp_path / "var" / "folders" / "x1" / "abc" / "T")
    stray = temp / "build" / "tasks" / "make.output"
    stray.parent.mkdir(parents=True)
    stray.write_text("ok\n", encoding="utf-8")
    found = discover(temp, None)
    assert [item.path for item in found.items] == [str(temp / "kept-session.jsonl")]
    assert found.skipped == 1  # the stray .output: a file no reader takes, counted


def test_C7_a_report_or_task_output_the_user_names_is_still_read(tmp_path: Path) -> None:
    temp = _temp_folder(tmp_path / "tmp")
    named = [temp / REPORT, temp / TASK_OUTPUT]
    assert [item.path for item in discover(named, None).items] == list(map(str, named))
    corpus = scan(temp / REPORT, workers=1, cache=False)
    rows = corpus.to_pandas()
    assert list(rows["path"]) == [str(temp / REPORT)]
    assert rows["error"].isna().all()  # the contents the failed request held, read
    assert list(rows["format"]) == ["gemini-api"]
