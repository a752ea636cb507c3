"""The two cases every home of credential files is put through, one file at a time (spec C-7,
L-4): named alone to a scan, it is said to be its tool's and never opened; named to a load, it
is refused unopened. tests/test_credentials_agents.py, test_credentials_more.py,
test_credentials_copilot_cline.py and test_credentials_cursor_continue.py each make their own
home and files (:mod:`tests.credential_homes`) and take both tests from :func:`each_one_named`:

    (
        test_C7_one_named_to_scan_is_said_and_never_opened,
        test_L4_one_named_to_load_is_refused_unopened,
    ) = each_one_named(SECRETS, TOKEN, lambda root, monkeypatch: _home(root, monkeypatch, True))

Both watch what the scan or the load opens (conftest's ``opened``) and which databases they
connect to (``connected``: SQLite opens its files unseen by ``opened``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from tests.credential_homes import Maker, refused_unopened, said_unopened, touched

#: What makes a home under the folder it is given, with every credential file in it; the test's
#: ``monkeypatch`` for the variables that home sets (``$HOME``, a tool's moved folder).
HomeMaker = Callable[[Path, pytest.MonkeyPatch], Path]
#: A test of one file, taking the place of the file and the fixtures it asks for.
NamedTest = Callable[[str, Path, pytest.MonkeyPatch, list[str], list[str]], None]


def each_one_named(
    secrets: Mapping[str, tuple[Maker, str]], token: str, home: HomeMaker
) -> tuple[NamedTest, NamedTest]:
    """The scan's test and the load's, each run once a file of ``secrets`` (its place under
    the home, with its maker and whose it is); no error or warning may hold ``token``."""

    def case(check: Callable[[Path, str], None]) -> NamedTest:
        @pytest.mark.parametrize("place", list(secrets))
        def test(
            place: str,
            tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch,
            opened: list[str],
            connected: list[str],
        ) -> None:
            made = home(tmp_path, monkeypatch)
            opened.clear()  # what made the home is no part of the test
            connected.clear()
            check(made / place, secrets[place][1])
            assert touched(opened, secrets) == touched(connected, secrets) == []

        return test

    return case(said_unopened), case(lambda path, keeper: refused_unopened(path, keeper, token))
