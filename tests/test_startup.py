"""Start-up (issue 19): ``import turnfold`` and a load import only what they need.

Every ``turnfold`` command and every worker process of a corpus scan pays for what the package
imports. Each test runs a fresh interpreter (this one has imported everything already) and reads
what it imported from both ``python -X importtime`` and ``sys.modules`` at exit, less what the
bare interpreter imports on its own (a ``.pth`` file of the environment is not turnfold's doing).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import turnfold
from tests.kernel_cells import kernel_cells
from turnfold.formats import FORMATS

SAMPLE = Path(turnfold.__file__).parent / "samples" / "claude-code-session.jsonl"
#: A session of plain prose and output: no Markdown syntax anywhere.
PLAIN = Path(__file__).parent / "fixtures" / "codex_rollout_v0.129_two-turns.jsonl"

#: What neither ``import turnfold`` nor loading a file needs: the notebook (IPython, the widgets,
#: traitlets and its config machinery, Jupyter's paths), the fast-model clients (asyncio and ssl,
#: the SDKs), the corpus (multiprocessing, Arrow).
NOT_NEEDED = (
    "IPython",
    "ipykernel",
    "anywidget",
    "ipywidgets",
    "traitlets",
    "traitlets.config",
    "jupyter_core",
    "asyncio",
    "ssl",
    "concurrent.futures",
    "multiprocessing",
    "anthropic",
    "openai",
    "pyarrow",
    # the agent frameworks whose run objects turnfold reads (spec A-3)
    "agents",
    "langchain_core",
    "langgraph",
    "pydantic_ai",
    "claude_agent_sdk",
    "smolagents",
    "google.adk",
    "autogen_agentchat",
    "autogen_core",
    "strands",
    "llama_index",
    "workflows",
    "dspy",
    "haystack",
    "litellm",
    "agent_framework",
    "agent_framework_orchestrations",
    "agno",
    "mlflow",  # MLflow's traces are read by the type's module name
)


def _run(code: str) -> str:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONSTARTUP", "PYTHONPROFILEIMPORTTIME")
    }
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout + done.stderr


def imported_by(code: str) -> set[str]:
    """The modules ``code`` imports in a fresh interpreter, beyond the interpreter's own."""

    def modules(code: str) -> set[str]:
        report = "import sys; print('\\n'.join('module: ' + m for m in sys.modules))"
        out = _run(f"{code}\n{report}")
        names = set()
        for line in out.splitlines():
            if line.startswith("module: "):
                names.add(line.removeprefix("module: "))
            elif line.startswith("import time:") and "|" in line:
                names.add(line.rsplit("|", 1)[1].strip())
        return names

    return modules(code) - modules("pass")


def _offending(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_NEEDED))


def test_import_turnfold_imports_nothing_but_the_package() -> None:
    modules = imported_by("import turnfold")
    assert _offending(modules) == []
    assert sorted(m for m in modules if m.startswith("turnfold")) == ["turnfold"]


def test_loading_a_claude_code_file_imports_no_notebook_corpus_or_client_module() -> None:
    modules = imported_by(f"import turnfold; assert turnfold.load({str(SAMPLE)!r}).entries")
    assert _offending(modules) == []
    # Auto-detection stops at the Claude Code format's conclusive evidence: of the formats'
    # modules, only those asked before it are imported; not the ones that read files
    # themselves, since the file opens with a record (JSON lines).
    readers = {turnfold.formats._MODULE_NAMES[name] for name in FORMATS}
    asked = {turnfold.formats._MODULE_NAMES[name] for name in ("turnfold", "claude-code")}
    assert modules & readers == asked
    assert not {m for m in modules if m.startswith(("turnfold.render", "turnfold.corpus"))}
    assert (
        not {"turnfold.widget", "turnfold.settings", "turnfold.summaries", "turnfold.process"}
        & modules
    )


def test_W6_rendering_a_page_imports_only_what_the_page_draws(tmp_path: Path) -> None:
    """``turnfold render`` builds its page from a snapshot of its options and draws it: no
    live settings (traitlets), no view-model schema (types only), no text renderer; and a page
    with no Markdown in it sanitizes nothing, logs nothing, and imports neither. The price
    table is imported by the first render of a model on a day only (turnfold.kept_prices), so
    each session is rendered once here first, as a user's every later render finds it."""
    from turnfold.cli import main
    from turnfold.prices import price_of

    def rendered(session: Path) -> set[str]:
        page = tmp_path / f"{session.stem}.html"
        argv = ["render", str(session), "-o", str(page)]
        # A price this test process found before (another test, another cache folder) is
        # remembered in memory and would not be kept in this run's folder.
        price_of.cache_clear()
        assert main(argv) == 0  # keeps the prices of its models, in this run's cache folder
        modules = imported_by(f"import turnfold.cli\nassert turnfold.cli.main({argv!r}) == 0")
        assert page.stat().st_size > 0
        return modules

    with_markdown, plain = rendered(SAMPLE), rendered(PLAIN)
    never = {"turnfold.live_settings", "turnfold.render.nodes", "turnfold.render.text", "difflib"}
    for modules in (with_markdown, plain):
        assert _offending(modules) == []
        assert not never & modules
    assert {"markdown", "nh3"} <= with_markdown  # what a page with Markdown does need
    assert not {"markdown", "nh3", "logging"} & plain


def test_a_named_format_imports_that_format_alone() -> None:
    code = f"import turnfold; assert turnfold.load({str(SAMPLE)!r}, format='claude-code').entries"
    modules = imported_by(code)
    assert _offending(modules) == []
    readers = {turnfold.formats._MODULE_NAMES[name] for name in FORMATS}
    assert modules & readers == {"turnfold.formats.claude_code"}


def test_the_registry_names_each_format_as_its_module_does() -> None:
    assert [module.NAME for module in turnfold.formats._modules()] == list(FORMATS)


def test_every_public_name_is_importable_and_listed() -> None:
    code = (
        "import turnfold\n"
        "turnfold.Corpus; turnfold.scan; turnfold.TranscriptWidget\n"
        "names = turnfold.__all__\n"
        "missing = [n for n in names if n not in dir(turnfold)]\n"
        "assert not missing, missing\n"
        "exec('from turnfold import ' + ', '.join(names))\n"
        "assert turnfold.corpus.summarize  # a submodule, as when the package imported everything\n"
        "from turnfold.summaries import usage, TranscriptLabeller\n"
        "assert callable(usage) and not hasattr(usage, '__path__')\n"
        "print('ok', len(names))"
    )
    assert f"ok {len(turnfold.__all__)}" in _run(code)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        turnfold.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        exec("from turnfold import no_such_name")


def test_W1_outside_ipython_register_display_imports_no_ipython() -> None:
    code = (
        "import sys\n"
        "from turnfold.display import register_display\n"
        "assert register_display() is False\n"
        "assert 'IPython' not in sys.modules\n"
        "print('ok')"
    )
    assert "ok" in _run(code)


def test_W1_in_a_kernel_a_transcript_still_shows_as_the_widget() -> None:
    """The kernel has imported IPython before ``import turnfold``, so the display registers."""
    (outputs,) = kernel_cells([f"import turnfold\nturnfold.load({str(SAMPLE)!r})"])
    results = [output for output in outputs if "text" not in output]
    assert results, outputs
    assert "application/vnd.jupyter.widget-view+json" in results[-1]
