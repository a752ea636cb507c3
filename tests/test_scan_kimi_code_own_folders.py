"""A scan of a home passes over Kimi Code's own folders of no session, unopened and uncounted,
and still reads every session, one kept in ``backups/`` included (C-1, C-7).

Kimi Code 2.1.0 (``dist/main.mjs`` of ``@moonshot-ai/kimi-code``, tests/agents) writes in
``~/.kimi-code`` (``$KIMI_CODE_HOME``), each placed and shaped here as it writes it (values made
up):

- ``plugins/``: the list of installed plugins ``installed.json`` (``writeInstalled``:
  ``JSON.stringify({version: 1, plugins}, null, 2)``, each ``{id, root, source, enabled,
  installedAt, updatedAt, originalSource, capabilities, github}``) and the copy of each plugin's
  folder ``managed/<id>/`` (``copyPluginToManagedRoot``), its manifest
  ``.kimi-plugin/plugin.json`` and whatever files the plugin has;
- ``bin/``: the tools it fetches (``getBinDir``), ``rg`` and ``fd``, and ``fd``'s archive in
  ``fd_extract_<pid>_<ms>_<random>/`` while it unpacks it (``downloadFd``);
- ``themes/<name>.json``: the user's colour themes (``CustomThemeSchema``: ``{name, base,
  colors}``), which it reads (``getCustomThemesDir``);
- ``backups/kimi-webbridge-skills/migration-<random>/<label>/``: the skills its web bridge set
  aside (``migrateStandaloneSkills``: ``skills/kimi-webbridge`` of ``~/.kimi-code``, label
  ``kimi-code``, and of ``~/.agents``, label ``agents``), the one thing it writes in
  ``backups/``.

The session is a real Kimi Code 2.1.0 session folder of tests/fixtures.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.credential_homes import scan_here, touched
from turnfold.corpus.discover import AGENT_FILES, discover

FIXTURES = Path(__file__).parent / "fixtures"
KIMI = FIXTURES / "kimi" / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
PLUGIN = "acme-review"
#: Bytes an executable starts with: a fetched tool is no text.
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_agent_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kimi Code's folder is the test's: a developer's variable would move it."""
    monkeypatch.delenv("KIMI_CODE_HOME", raising=False)


def _write(path: Path, body: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(body, bytes):
        path.write_bytes(body)
    else:
        path.write_text(body, encoding="utf-8")
    return path


def _home(root: Path) -> tuple[Path, Path, str]:
    """A home with a real Kimi Code session: the home, its ``~/.kimi-code`` and the session's
    item (its lead agent's journal)."""
    home = root / "me"
    kimi = home / ".kimi-code"
    session = kimi / "sessions" / "wd_work_e94ed5f3a266" / KIMI.name
    shutil.copytree(KIMI, session)
    return home, kimi, str(session / "agents" / "main" / "wire.jsonl")


def _own_files(kimi: Path) -> list[Path]:
    managed = kimi / "plugins" / "managed" / PLUGIN
    installed = {"version": 1, "plugins": [{
        "id": PLUGIN, "root": str(managed), "source": "local-path", "enabled": True,
        "installedAt": "2026-12-07T08:15:01.736Z", "updatedAt": "2026-12-07T08:15:01.736Z",
        "originalSource": "/home/me/src/acme-review", "capabilities": ["skills"],
    }]}  # fmt: skip
    manifest = {"name": PLUGIN, "version": "1.2.0", "description": "Reviews a change.",
                "mcpServers": {"review": {"command": "node", "args": ["server.mjs"]}}}  # fmt: skip
    extract = kimi / "bin" / "fd_extract_48213_1796643301736_k3j9x2ab"
    theme = {"name": "harbour", "displayName": "Harbour", "base": "dark",
             "colors": {"primary": "#3b82f6", "muted": "#64748b"}}  # fmt: skip
    migration = kimi / "backups" / "kimi-webbridge-skills" / "migration-Qx81Zp"
    skill = "---\nname: kimi-webbridge\ndescription: Drives the browser.\n---\n\nUse it.\n"
    return [
        _write(kimi / "plugins" / "installed.json", json.dumps(installed, indent=2)),
        _write(managed / ".kimi-plugin" / "plugin.json", json.dumps(manifest, indent=2)),
        _write(managed / "server.mjs", "export {};\n"),
        _write(managed / "skills" / "review" / "SKILL.md", "---\nname: review\n---\n"),
        _write(managed / "fixtures" / "events.jsonl", '{"event": "reviewed"}\n'),
        _write(kimi / "bin" / "rg", ELF),
        _write(kimi / "bin" / "fd", ELF),
        _write(extract / "fd-v10.4.2-x86_64-unknown-linux-musl.tar.gz", b"\x1f\x8b\x08\x00"),
        _write(extract / "fd-v10.4.2-x86_64-unknown-linux-musl" / "CHANGELOG.md", "# 10.4.2\n"),
        _write(kimi / "themes" / "harbour.json", json.dumps(theme, indent=2)),
        _write(migration / "kimi-code" / "SKILL.md", skill),
        _write(migration / "agents" / "SKILL.md", skill),
        _write(migration / "agents" / "scripts" / "state.json", "{}"),
    ]


def test_C7_kimi_code_s_own_folders_are_passed_over_unopened_and_uncounted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    home, kimi, session = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    before = scan_here(home)
    assert (before.keys, before.skipped) == ([session], 0)
    own = _own_files(kimi)
    found = discover(home, None)
    assert ([item.path for item in found.items], found.skipped) == ([session], 0)
    opened.clear()
    after = scan_here(home)
    assert (after.keys, after.skipped) == ([session], 0)
    assert after.rows[0]["error"] is None
    assert touched(opened, [str(path.relative_to(home)) for path in own]) == []
    # Named, each is read, never dropped: a row (its error says why) or a skipped file.
    for path in own:
        corpus = scan_here(path)
        assert len(corpus) + corpus.skipped == 1, path


def test_C7_the_folders_are_not_entered_but_backups_is() -> None:
    """``plugins/`` and ``bin/`` hold nothing but Kimi Code's own at any depth, so a walk does
    not enter them; ``backups/`` is entered, only its web bridge's skills passed over."""
    for folder in ("plugins", "bin", "backups/kimi-webbridge-skills"):
        path = Path("/home/me/.kimi-code", folder)
        assert any(keeper.covers(path) for keeper in AGENT_FILES), folder
    for folder in (".kimi-code/backups", ".kimi-code/themes", "project/plugins", "project/bin"):
        path = Path("/home/me", folder)
        assert not any(keeper.covers(path) for keeper in AGENT_FILES), folder


def test_C1_a_session_kept_in_backups_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kimi Code writes no session in ``backups/``; one the user keeps there (a copy of a
    session's folder) is a session like any, a row."""
    home, kimi, session = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    _own_files(kimi)
    kept = kimi / "backups" / "2026-12-07" / KIMI.name
    shutil.copytree(KIMI, kept)
    corpus = scan_here(home)
    copy = str(kept / "agents" / "main" / "wire.jsonl")
    assert (sorted(corpus.keys), corpus.skipped) == (sorted([session, copy]), 0)
    rows = {row["key"]: row for row in corpus.rows}
    assert rows[copy]["error"] is None
    assert rows[copy]["tool_calls"] == rows[session]["tool_calls"]
