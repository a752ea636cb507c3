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
  ``backups/``;
- its CLI's data files (``src/utils/paths.ts`` there): the shell's prompt history
  ``user-history/<md5 of the work folder>.jsonl`` (``appendInputHistory``: ``{"content"}`` a
  line); the updater's ``updates/latest.json`` (``writeUpdateCache``: ``{source, checkedAt,
  latest, manifest}``), ``install.json`` (``writeUpdateInstallState``: ``{active,
  lastFailure, lastSuccess}``), ``install.lock`` (``createLockFile``: ``{version, pid,
  startedAt}``) and its ``install.lock.takeover`` (``publishTakeoverMarker``:
  ``<pid>.<ms>.<hex>``), ``rollout.log`` (``appendRolloutDecisionLog``: a JSON line per
  decision) and ``plugin-notices.json`` (``{version: 1, notified}``), each JSON document
  written ``JSON.stringify(value, null, 2)`` and a newline (``writeJsonFile``); the survey's
  ``feedback-survey-state.json`` (``{version: 1, last_shown_time}``) and
  ``recommended-effort-state.json`` (``{<model>: {version, applied_at}}``);
- unsent telemetry ``telemetry/failed_<12 hex>.jsonl`` (``AsyncTransport.saveToDisk``: a
  ``{event_id, device_id, session_id, event, timestamp, properties}`` a line); a rotated log
  ``logs/kimi-code.log.1`` (``rotate()``: ``<path>.<n>``); the global search's index
  ``search-index/`` (a MiniDb: ``db.lock``, ``{pid, ts, token}``, ``db.wal``,
  ``db.textindexes.json``);
- what ``kimi migrate`` writes: a Kimi CLI plan copied to ``plans/<hero>.md``
  (``migratePlansStep``), ``migration-report.json`` (``writeReport``),
  ``migration-errors.log`` (``writeMigrationErrorsLog``: ``===== migration run @ <time>
  =====`` and ``no failures.``) and ``tui.migrated-from-kimi-cli.toml`` (``siblingTuiToml``).

The session is a real Kimi Code 2.1.0 session folder of tests/fixtures; the Codex rollout one of
tests/fixtures too.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.credential_homes import scan_here, touched
from turnfold.corpus.discover import AGENT_FILES, discover

FIXTURES = Path(__file__).parent / "fixtures"
KIMI = FIXTURES / "kimi" / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
CODEX = FIXTURES / "codex_rollout_v0.129_two-turns.jsonl"
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


def _json(value: object) -> str:
    """As Kimi Code's ``writeJsonFile`` writes a document."""
    return json.dumps(value, indent=2) + "\n"


def _lines(*values: object) -> str:
    """As its ``appendJsonlLine`` and ``saveToDisk`` write records, one compact line each."""
    return "".join(json.dumps(value, separators=(",", ":")) + "\n" for value in values)


def _data_files(kimi: Path) -> list[Path]:
    """Kimi Code's CLI data files, each as ``dist/main.mjs`` writes it."""
    # Its name: the MD5 of the work folder, as ``getInputHistoryFile`` names it.
    history = hashlib.md5(b"/home/me/work").hexdigest()
    manifest = {"version": "2.2.0", "publishedAt": "2026-12-06T10:00:00.000Z",
                "rollout": [{"percent": 10, "delaySeconds": 0},
                            {"percent": 100, "delaySeconds": 86400}]}  # fmt: skip
    decision = {"ts": "2026-12-07T08:15:01.736Z", "phase": "background-refresh",
                "reason": "not-newer", "current": "2.1.0", "latest": "2.1.0", "target": None,
                "manifestPresent": True, "publishedAt": "2026-12-06T10:00:00.000Z",
                "bucket": None, "delaySeconds": None, "eligibleAt": None}  # fmt: skip
    event = {"event_id": "5d1c0e9a7b3d4a419c2e8d7f6a5b4c3d",
             "device_id": "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "session_id": KIMI.name,
             "event": "first_launch", "timestamp": 1796643301.736, "properties": {}}  # fmt: skip
    report = {"scope": "all", "sessionsAttempted": 1, "sessionsMigrated": 1,
              "sessionsFailed": [], "sessionsConflicts": []}  # fmt: skip
    index = kimi / "search-index"
    wiping = kimi / "search-index.wiping-48213-6f1d2c3b-4a5e-4f60-8b7c-9d0e1f2a3b4c"
    return [
        _write(kimi / "user-history" / f"{history}.jsonl",
               _lines({"content": "fix the failing test"}, {"content": "now run it"})),
        _write(kimi / "updates" / "latest.json", _json({
            "source": "cdn", "checkedAt": "2026-12-07T08:15:01.736Z", "latest": "2.1.0",
            "manifest": manifest})),
        _write(kimi / "updates" / "install.json", _json({
            "active": None, "lastFailure": None, "lastSuccess": {
                "version": "2.1.0", "installedAt": "2026-12-06T10:05:00.000Z",
                "notifiedAt": None}})),
        _write(kimi / "updates" / "install.lock", _json({
            "version": "2.2.0", "pid": 48213, "startedAt": "2026-12-07T08:15:01.736Z"})),
        _write(kimi / "updates" / "install.lock.takeover", "48213.1796643301736.9f3c2a71b0e4"),
        _write(kimi / "updates" / "rollout.log", _lines(decision)),
        _write(kimi / "updates" / "plugin-notices.json",
               _json({"version": 1, "notified": {PLUGIN: "1.3.0"}})),
        _write(kimi / "feedback-survey-state.json",
               _json({"version": 1, "last_shown_time": 1796643301736})),
        _write(kimi / "recommended-effort-state.json", _json({
            "kimi-for-coding": {"version": 2, "applied_at": "2026-12-07T08:15:01.736Z"}})),
        _write(kimi / "telemetry" / "failed_9f3c2a71b0e4.jsonl", _lines(event)),
        _write(kimi / "logs" / "kimi-code.log.1", "2026-12-07T08:21:23.407Z INFO  minidb "
               "query-store opening  dir=/home/me/.kimi-code/cache/query-store shardCount=16\n"),
        _write(index / "db.lock", json.dumps({"pid": 48213, "ts": 1796643301736,
                                              "token": "9f3c2a71b0e4d5c6"})),
        _write(index / "db.wal", b"\x01\x00\x00\x00" + b'{"text": "fix the failing test"}'),
        _write(index / "db.textindexes.json", json.dumps([
            {"name": "text", "fields": ["text"], "tokenizer": "default"},
            {"name": "tri", "fields": ["text"], "tokenizer": "ngram"}])),
        # A wipe renames the index first (``${dir}.wiping-${pid}-${uuid}``), then removes it:
        # left by a process that ended between the two.
        _write(wiping / "db.wal", b"\x01\x00\x00\x00" + b'{"text": "fix the failing test"}'),
        _write(wiping / "db.lock", json.dumps({"pid": 48213, "ts": 1796643301736,
                                               "token": "9f3c2a71b0e4d5c6"})),
        _write(kimi / "plans" / "bold-ember-falcon.md", "# Plan\n\n1. Fix it\n"),
        _write(kimi / "migration-report.json", json.dumps(report, indent=2)),
        _write(kimi / "migration-errors.log",
               "===== migration run @ 2026-12-07T08:15:01.736Z =====\nno failures.\n"),
        _write(kimi / "tui.migrated-from-kimi-cli.toml",
               'theme = "dark"\n\n[editor]\ncommand = "vim"\n'),
    ]  # fmt: skip


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
        *_data_files(kimi),
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
    for folder in ("plugins", "bin", "backups/kimi-webbridge-skills", "search-index"):
        path = Path("/home/me/.kimi-code", folder)
        assert any(keeper.covers(path) for keeper in AGENT_FILES), folder
    for folder in (".kimi-code/backups", ".kimi-code/themes", "project/plugins", "project/bin",
                   ".kimi-code/updates", ".kimi-code/user-history", ".kimi-code/telemetry",
                   "project/search-index"):  # fmt: skip
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


def test_C1_a_session_kept_among_kimi_code_s_update_files_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``updates/`` is passed over by the names Kimi Code writes there, never whole: a session
    the user keeps there is a row, as a file of its own in ``telemetry/`` not so named is."""
    home, kimi, session = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    _own_files(kimi)
    kept = [kimi / "updates" / "kept-rollout.jsonl", kimi / "telemetry" / "rollout.jsonl"]
    for path in kept:
        shutil.copyfile(CODEX, path)
    corpus = scan_here(home)
    assert (sorted(corpus.keys), corpus.skipped) == (sorted([session, *map(str, kept)]), 0)
    assert all(row["error"] is None for row in corpus.rows)
