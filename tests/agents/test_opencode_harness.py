"""The OpenCode agent's own harness rules, on the database its 1.18.33 wrote (no CLI needed)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.agents.clis.opencode import OpenCode
from tests.agents.scenarios import LONG_OUTPUT, LONG_OUTPUT_LAST, WORK
from tests.agents.script import Prompt
from tests.agents.wire import SeenResult

OPENCODE = OpenCode()
#: The ``work`` scenario as OpenCode 1.18.33 wrote it (tests/fixtures/opencode).
DATABASE = Path(__file__).parents[1] / "fixtures" / "opencode" / "work" / "opencode.db"


def test_a_command_fails_by_the_exit_code_its_part_records(tmp_path: Path) -> None:
    # The result the model got of `echo TF-FAIL-OUT; ls /tf-missing; exit 3` holds the output
    # only: the exit code is in the tool part's metadata.
    found = OPENCODE.database(tmp_path)
    found.parent.mkdir(parents=True)
    shutil.copyfile(DATABASE, found)
    output = "TF-FAIL-OUT\nls: cannot access '/tf-missing': No such file or directory\n"
    assert OPENCODE.failed(SeenResult("call_tffirst_2_0", output), tmp_path)
    assert not OPENCODE.failed(SeenResult("call_tffirst_1_0", "TF-OK-23\n"), tmp_path)
    assert not OPENCODE.failed(SeenResult("call_tffirst_0_0", "<path>notes.txt</path>"), tmp_path)
    # No database, or no part of that call: only the text can say.
    assert not OPENCODE.failed(SeenResult("call_tffirst_2_0", output), tmp_path / "elsewhere")
    assert OPENCODE.failed(SeenResult("call_other", "exit code 2"), tmp_path)


def test_the_long_output_is_checked_by_its_last_line() -> None:
    calls = [c for p in OPENCODE.adapt(WORK).prompts for t in p.turns for c in t.calls]
    long_output = [c for c in calls if c.params == LONG_OUTPUT.params]
    assert [c.token for c in long_output] == [LONG_OUTPUT_LAST]
    # Every other call as any agent's adapt leaves it, and the scenario itself, unchanged.
    kept = super(OpenCode, OPENCODE).adapt(WORK)
    others = [c for p in kept.prompts for t in p.turns for c in t.calls if c != LONG_OUTPUT]
    assert [c for c in calls if c.params != LONG_OUTPUT.params] == others
    assert LONG_OUTPUT in [c for p in WORK.prompts for t in p.turns for c in t.calls]


def test_the_prompt_is_given_a_word_an_argument(tmp_path: Path) -> None:
    # `run` puts an argument holding a space in double quotes before joining them.
    prompt = Prompt("TF-X", "TF-X: look at -v this", ())
    argv = OPENCODE.command(tmp_path / "opencode", prompt, 1, "ses_1")
    assert argv[argv.index("--") + 1 :] == ["TF-X:", "look", "at", "-v", "this"]
    assert argv[argv.index("--session") + 1] == "ses_1"
