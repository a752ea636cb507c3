"""The repository promises of the foundation: layout, bundled sample, config defaults, CI."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import turnfold
from turnfold.samples import demo_session

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_layout_of_the_design_card() -> None:
    top = ("pyproject.toml", "src", "js", "notebooks", "tests", "jupyter-config", "benchmarks")
    for name in top:
        assert (ROOT / name).exists(), name
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert project["build-system"]["build-backend"] == "hatchling.build"
    assert project["project"]["requires-python"] == ">=3.10"


def test_T5_shipped_jupyter_config_holds_the_normalized_defaults() -> None:
    path = ROOT / "jupyter-config" / "turnfold" / "settings.json"
    shipped = json.loads(path.read_text("utf-8"))
    defaults = turnfold.normalize_settings(None)
    assert shipped == {k: v for k, v in defaults.items() if k in shipped}
    assert turnfold.normalize_settings(shipped) == defaults


def test_bundled_sample_loads_and_round_trips() -> None:
    transcript = demo_session()
    assert not transcript.warnings
    assert len(transcript.tool_calls()) == 8
    assert turnfold.load(transcript.dump()) == transcript


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    commands = re.findall(r"```bash\n(.+?)\n```", readme)
    setup = [c for c in commands if "install" in c or ".ci/run" in c]
    assert len(setup) == 2, "the README keeps exactly two set-up commands"
    test_command = "python -m pytest -n auto --dist loadfile"
    assert test_command in commands
    assert re.search(rf"^{re.escape(test_command)}$", ci, flags=re.M)


def test_the_bundled_real_claude_code_session_is_the_fixture_byte_for_byte() -> None:
    from turnfold.samples import claude_code_session

    bundled = ROOT / "src" / "turnfold" / "samples" / "claude-code-session.jsonl"
    fixture = ROOT / "tests" / "fixtures" / "claude-code_v1.0.108_inline-sidechains.jsonl"
    assert bundled.read_bytes() == fixture.read_bytes()  # attribution in samples/SOURCES.md
    transcript = claude_code_session()
    assert transcript.metadata["source_format"] == "claude-code"
    assert any(call.subagent for call in transcript.tool_calls())
