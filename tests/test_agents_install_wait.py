"""CI starts the tests while npm still installs the coding agents' CLIs: a test that runs one
waits for the install's exit status (``tests/agents/install.py``), instead of finding the CLI
missing and skipping."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.agents import install


def test_the_pinned_clis_are_waited_for_until_the_install_writes_its_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status = tmp_path / "status"
    monkeypatch.setenv(install.INSTALLING, str(status))
    monkeypatch.delenv("TURNFOLD_AGENTS_BIN", raising=False)
    writer = threading.Timer(1.5, status.write_text, args=("0\n",))
    writer.start()
    try:
        assert install.bin_dir() == install.PINNED_BIN.resolve()
        assert status.exists()  # returned only once the status was written
    finally:
        writer.cancel()


def test_a_failed_install_fails_the_tests_that_need_it_instead_of_skipping_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    status = tmp_path / "status"
    status.write_text("1\n")
    monkeypatch.setenv(install.INSTALLING, str(status))
    monkeypatch.delenv("TURNFOLD_AGENTS_BIN", raising=False)
    with pytest.raises(RuntimeError, match=r"failed \(npm's exit status 1\)"):
        install.missing_cli("claude")


def test_another_install_named_by_its_variable_is_not_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(install.INSTALLING, str(tmp_path / "never-written"))
    monkeypatch.setenv("TURNFOLD_AGENTS_BIN", str(tmp_path))
    assert install.bin_dir() == tmp_path.resolve()
