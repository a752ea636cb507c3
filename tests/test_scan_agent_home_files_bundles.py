"""A scan of a home passes over the agents' own files that their bundles write beside no
session, unopened and uncounted (C-1, C-7), and still reads every session there.

``corpus.skipped`` counts what might have been a session and could not be read; these are the
tools' bookkeeping. Each is placed where its tool puts it, written as it writes it:

- Claude Code, ``~/.claude``: plan mode's ``plans/<slug>.md`` and a sub-agent's
  ``plans/<slug>-agent-<id>.md`` (the ``claude`` binary 2.1.332 of tests/agents:
  ``Re(qh(), `${o}-agent-${e}.md`)``); pasted text ``paste-cache/<hash>.txt`` (16 hex digits of
  the text's SHA-256, 2.1.332); pasted images ``image-cache/<session>/<id>.png`` (``w96`` of
  ``cli.js``, ``@anthropic-ai/claude-code`` 2.1.56: ``join(configDir, "image-cache",
  sessionId, `${id}.${mediaType.split("/")[1]}`)``); the user's sub-agent definitions
  ``agents/<name>.md`` (Markdown with a YAML front matter, read at any depth);
- Claude Code 2.1.332, ``~/.claude``, as its binary writes them: a task list's
  ``tasks/<list>/<n>.json`` (``JSON.stringify({id, ...task}, null, 2)``), a team's
  ``teams/<team>/config.json`` and ``inboxes/<agent>.json``, a background job's
  ``jobs/pins.json`` and ``jobs/<job>/state.json``, ``adopt.json``, ``order``, ``stateOrder``,
  ``group``, ``recap.trigger`` and ``tmp/pasted-<digest>.png``;
  ``usage-data/facets/<session>.json``, ``session-meta/<session>.json`` and
  ``report-<time>.html``; ``telemetry/1p_failed_events.<session>.<id>.json``,
  ``telemetry/runs/<id>.json``, ``traces/<id>.json``,
  ``startup-perf/<id>.txt``, ``mcp-discovery-cache/<key>.json``, ``mcp-needs-auth-cache.json``,
  ``state/mcp-discover-verdicts.json``, ``cache/changelog.md`` and the npm install of itself in
  ``local/`` (``local/package.json``: ``{"name": "claude-local", "version": "0.0.1",
  "private": true}``, its ``node_modules/``);
- Qwen Code 0.24.4, ``~/.qwen``: plan mode's ``plans/<session>.md`` and an agent's
  ``plans/<session>-<agent>.md`` (``Storage.getPlanFilePath``, ``createPerAgentConfig``);
- Codex CLI 0.171.0, ``~/.codex/cache/``: the apps directory's cache
  ``codex_app_directory/<sha1>.json`` (openai/codex ``codex-rs/connectors/src/
  directory_cache.rs``: ``to_vec_pretty`` of ``{schema_version: 1, expires_at_unix_ms,
  connectors}``), the plugins' catalogue ``remote_plugin_catalog/<fnv-1a>.json``
  (``catalog_cache.rs``) and a pet's picture ``tui-pets/v1/assets/<file>.webp``; an installed
  plugin's bundle ``~/.codex/plugins/cache/<marketplace>/<plugin>/<version>/`` (its
  ``.codex-plugin/plugin.json``, skills and scripts, copied whole: ``PLUGINS_CACHE_DIR``,
  ``codex-rs/core-plugins/src/store.rs``);
- Gemini CLI 0.61.0, ``~/.gemini/tmp/<project>/<session>/``: ``plans/`` (Markdown of the names
  the model gives) and ``tracker/<id>.json`` (``TrackerService.saveTask``:
  ``JSON.stringify(task, null, 2)`` of ``TrackerTaskSchema``);
- Kilo Code's CLI 7.7.9, ``~/.local/share/kilo``: what a run wrote
  (tests/fixtures/opencode/kilo/home-files), and, as its binary writes them,
  ``telemetry-profile.json`` (``{token: sha256, email, fetchedAt}``), ``session-export.db``
  (``CREATE TABLE session_export_sequence (session_id TEXT PRIMARY KEY, next INTEGER NOT
  NULL)``), ``session-export-workspace.json`` (``{sessions, snapshots}``),
  ``retention/state.json`` (``{at, scanned, deleted, skippedActive, failed, durationMs}``),
  ``plans/<created>-<slug>.md``, and checkouts of code, not entered
  (``discover.CHECKOUTS``): a git worktree of the user's project,
  ``worktree/<project id>/<name>/`` (``Worktree.makeWorktreeInfo``), and a clone of the
  ``repo_clone`` tool, ``repos/github.com/<owner>/<repo>/`` (``Path.repos``);
- the older Kimi CLI 1.52.0, ``~/.kimi``: what a run wrote (tests/fixtures/kimi/legacy/
  home-files), and, as ``kimi_cli`` writes them, ``user-history/<md5>.jsonl``
  (``{"content"}`` per prompt, ``ui/shell/prompt.py``), ``plans/<hero>-<hero>-<hero>.md``
  (``tools/plan/heroes.py``), ``telemetry/failed_<12 hex>.jsonl`` (``telemetry/
  transport.py``), ``prompt-cache/images/<8 letters>.png`` (``ui/shell/placeholders.py``),
  ``device_id`` (``uuid4().hex``), ``kimi_code_tips.json``, ``latest_version.txt``,
  ``skipped_version.txt`` (``ui/shell/update.py``) and ``bin/rg``.

The sessions are real files of tests/fixtures: Claude Code 2.1.337's with its sub-agent's
transcript ``<session>/subagents/agent-<id>.jsonl`` (which ``agents/`` must not hide), a Codex
rollout, Gemini CLI 0.61's, Qwen Code 0.24.4's, Kilo Code's database and the Kimi CLI's session
folder.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from turnfold import scan
from turnfold.corpus.discover import discover

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude-code" / "v2.1.337_real_background-agent-folder"
CLAUDE_SESSION = "33733733-2222-4444-8888-777777777777"
CODEX = FIXTURES / "codex_rollout_v0.129_two-turns.jsonl"
GEMINI = FIXTURES / "gemini" / "gemini-cli_v0.61_three-turns-two-resumes.jsonl"
GEMINI_SESSION = "e004f15a-a6bf-4936-9841-21e2ce04b434"
KILO = FIXTURES / "opencode" / "kilo" / "work" / "kilo.db"
KILO_HOME = FIXTURES / "opencode" / "kilo" / "home-files"
KILO_SESSION = "ses_dafb71117ffeP1JdOLbYrCqSUf"  # a session of the run of KILO_HOME
KIMI = FIXTURES / "kimi" / "legacy" / "work" / "ea564de4-19b4-46fa-bb90-96824cb99092"
KIMI_HOME = FIXTURES / "kimi" / "legacy" / "home-files"
QWEN = FIXTURES / "qwen" / "qwen-code_v0.24.4_api-error.jsonl"
QWEN_SESSION = "e004f15a-a6bf-4936-9841-21e2ce04b434"  # the session id inside it
#: The smallest PNG and WebP headers: the tools write the pictures' bytes as they are.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88"

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_agent_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' folders are the test's: a developer's variables would move them."""
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "XDG_DATA_HOME",
                     "KIMI_SHARE_DIR", "KIMI_CODE_HOME", "CRUSH_GLOBAL_DATA"):  # fmt: skip
        monkeypatch.delenv(variable, raising=False)


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _sessions(home: Path) -> None:
    """One real session of each agent, where the agent keeps it."""
    shutil.copytree(CLAUDE, home / ".claude" / "projects" / "-work")
    codex = home / ".codex" / "sessions" / "2026" / "12" / "06" / f"rollout-{CODEX.name}"
    gemini = home / ".gemini" / "tmp" / "shop" / "chats" / "session-2026-12-05T18-37-e004f15a.jsonl"
    qwen = home / ".qwen" / "projects" / "-work" / "chats" / f"{QWEN_SESSION}.jsonl"
    for source, target in ((CODEX, codex), (GEMINI, gemini), (QWEN, qwen),
                           (KILO, home / ".local" / "share" / "kilo" / "kilo.db")):  # fmt: skip
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    workdir = hashlib.md5(b"/work").hexdigest()  # the Kimi CLI's folder of a work folder's
    shutil.copytree(KIMI, home / ".kimi" / "sessions" / workdir / KIMI.name)


def _claude_files(claude: Path) -> list[Path]:
    pasted = "line one of a long paste\nline two\n"
    slug = "glowing-sparking-lake"
    return [
        _write(claude / "plans" / f"{slug}.md", "# Plan\n\n1. Read cart.py\n2. Fix the total\n"),
        _write(claude / "plans" / f"{slug}-agent-a61a790209f52daea.md", "# Sub-agent plan\n"),
        _write(claude / "paste-cache" / f"{hashlib.sha256(pasted.encode()).hexdigest()[:16]}.txt",
               pasted),
        _write(claude / "image-cache" / CLAUDE_SESSION / "1.png", PNG),
        _write(claude / "agents" / "code-reviewer.md",
               "---\nname: code-reviewer\ndescription: Reviews a change.\ntools: Read, Grep\n"
               "---\n\nYou review code.\n"),
        _write(claude / "agents" / "team" / "tester.md",
               "---\nname: tester\ndescription: Runs the tests.\n---\n\nYou run tests.\n"),
    ]  # fmt: skip


def _claude_bundle_files(claude: Path) -> list[Path]:
    """Claude Code 2.1.332's task lists, teams, background jobs, ``/insights`` data, telemetry,
    caches and its own npm install, each as its binary writes it."""
    task = {"id": "1", "subject": "Fix the total", "description": "cart.py adds tax twice",
            "activeForm": "Fixing the total", "status": "in_progress", "blocks": [],
            "blockedBy": []}  # fmt: skip
    team = {"name": "shop", "leadAgentId": "team-lead@shop",
            "members": [{"agentId": "tester@shop", "name": "tester"}]}  # fmt: skip
    inbox = [{"from": "team-lead", "text": "Run the tests.",
              "timestamp": "2026-12-07T08:22:51.341Z", "read": False}]  # fmt: skip
    job = {"short": "a1b2c3d4", "state": "running", "sessionId": CLAUDE_SESSION}
    facets = {"session_id": CLAUDE_SESSION, "outcome": "fully_achieved"}
    local = {"name": "claude-local", "version": "0.0.1", "private": True}
    return [
        _write(claude / "tasks" / CLAUDE_SESSION / "1.json", json.dumps(task, indent=2)),
        _write(claude / "teams" / "shop" / "config.json", json.dumps(team, indent=2)),
        _write(claude / "teams" / "shop" / "inboxes" / "tester.json", json.dumps(inbox, indent=2)),
        _write(claude / "jobs" / "pins.json", "[]"),
        _write(claude / "jobs" / "a1b2c3d4" / "state.json", json.dumps(job, indent=2)),
        _write(claude / "jobs" / "a1b2c3d4" / "adopt.json", "{}"),
        _write(claude / "jobs" / "a1b2c3d4" / "order", "3"),
        _write(claude / "jobs" / "a1b2c3d4" / "stateOrder", "3"),
        _write(claude / "jobs" / "a1b2c3d4" / "group", "shop"),
        _write(claude / "jobs" / "a1b2c3d4" / "recap.trigger", ""),
        _write(claude / "jobs" / "a1b2c3d4" / "tmp" / "pasted-0123456789ab.png", PNG),
        _write(claude / "usage-data" / "facets" / f"{CLAUDE_SESSION}.json", json.dumps(facets)),
        _write(claude / "usage-data" / "session-meta" / f"{CLAUDE_SESSION}.json",
               json.dumps({"session_id": CLAUDE_SESSION, "duration_minutes": 3})),
        _write(claude / "usage-data" / "report-2026-12-07.html", "<!doctype html><p>Report"),
        _write(claude / "telemetry" / f"1p_failed_events.{CLAUDE_SESSION}.5f0c.json", "[]"),
        _write(claude / "telemetry" / "runs" / "5f0c.json", "{}"),
        _write(claude / "traces" / "5f0c.json", "{}"),
        _write(claude / "startup-perf" / "5f0c.txt", "startup 120ms\n"),
        _write(claude / "mcp-discovery-cache" / "0123456789abcdef.json", "{}"),
        _write(claude / "mcp-needs-auth-cache.json", "{}"),
        _write(claude / "state" / "mcp-discover-verdicts.json", "{}"),
        _write(claude / "cache" / "changelog.md", "# Changelog\n"),
        _write(claude / "local" / "package.json", json.dumps(local, indent=2)),
        _write(claude / "local" / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json",
               json.dumps({"name": "@anthropic-ai/claude-code", "version": "2.1.332"})),
    ]  # fmt: skip


def _qwen_files(qwen: Path) -> list[Path]:
    return [
        _write(qwen / "plans" / f"{QWEN_SESSION}.md", "# Plan\n\n1. Run the check\n"),
        _write(qwen / "plans" / f"{QWEN_SESSION}-agent-1.md", "# The agent's plan\n"),
    ]


def _codex_plugin_files(codex: Path) -> list[Path]:
    """An installed plugin's bundle, as Codex copies it (its manifest, a skill, a script)."""
    bundle = codex / "plugins" / "cache" / "openai-curated" / "github" / "1.2.0"
    manifest = {"name": "github", "version": "1.2.0", "description": "GitHub tools"}
    return [
        _write(bundle / ".codex-plugin" / "plugin.json", json.dumps(manifest, indent=2)),
        _write(bundle / "skills" / "review" / "SKILL.md", "---\nname: review\n---\nReview.\n"),
        _write(bundle / "scripts" / "events.jsonl", '{"event": "installed"}\n'),
    ]


def _codex_files(cache: Path) -> list[Path]:
    directory = {"schema_version": 1, "expires_at_unix_ms": 1796643301736, "connectors": []}
    catalog = {"schema_version": 1, "fetched_at": "2026-12-07T08:22:51.341Z", "plugins": []}
    key = hashlib.sha1(b'{"chatgpt_base_url":"https://chatgpt.com/backend-api"}').hexdigest()
    return [
        _write(cache / "codex_app_directory" / f"{key}.json", json.dumps(directory, indent=2)),
        _write(cache / "remote_plugin_catalog" / "5c1f0e9a7b3d2a41.json",
               json.dumps(catalog, indent=2)),
        _write(cache / "tui-pets" / "v1" / "assets" / "codex-spritesheet-v4.webp", WEBP),
    ]  # fmt: skip


def _gemini_files(project: Path) -> list[Path]:
    task = {"title": "Fix the total", "description": "cart.py adds tax twice", "type": "task",
            "status": "open", "dependencies": [], "id": "a1b2c3"}  # fmt: skip
    session = project / GEMINI_SESSION
    return [
        _write(session / "plans" / "fix-total.md", "# Fix the total\n"),
        _write(session / "plans" / "later" / "step-2.md", "# Step 2\n"),
        _write(session / "tracker" / "a1b2c3.json", json.dumps(task, indent=2)),
        _write(project / "tracker" / "d4e5f6.json", json.dumps({**task, "id": "d4e5f6"}, indent=2)),
    ]  # fmt: skip


def _kilo_files(kilo: Path) -> list[Path]:
    """Kilo Code's own files: the run's, and those its binary writes elsewhere."""
    ran = KILO_HOME / ".local" / "share" / "kilo"
    shutil.copytree(ran, kilo, dirs_exist_ok=True)
    export = kilo / "session-export.db"
    db = sqlite3.connect(export)
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute(
            "CREATE TABLE IF NOT EXISTS session_export_sequence "
            "(session_id TEXT PRIMARY KEY, next INTEGER NOT NULL)"
        )
        db.execute("INSERT INTO session_export_sequence VALUES (?, 4)", (KILO_SESSION,))
        db.commit()
    finally:
        db.close()
    profile = {"token": hashlib.sha256(b"kilo-token").hexdigest(), "email": "me@example.com",
               "fetchedAt": 1796643301736}  # fmt: skip
    retention = {"at": 1796643301736, "scanned": 2, "deleted": 0, "skippedActive": 1,
                 "failed": 0, "durationMs": 12}  # fmt: skip
    # Checkouts of code, whatever they hold: here a project's sources, its packages and a
    # transcript it keeps among its test data (the user's copy is where the project is).
    worktree = kilo / "worktree" / "9f1c2d3e4b5a69788796a5b4c3d2e1f00f1e2d3c" / "brave-otter"
    clone = kilo / "repos" / "github.com" / "acme" / "widgets"
    return [
        *(path for path in sorted(kilo.rglob("*")) if path.is_file() and path.name != "kilo.db"),
        _write(kilo / "telemetry-profile.json", json.dumps(profile, separators=(",", ":"))),
        _write(kilo / "session-export-workspace.json", '{"sessions":{},"snapshots":{}}'),
        _write(kilo / "retention" / "state.json", json.dumps(retention, indent=2)),
        _write(kilo / "plans" / "1796643301736-gentle-river.md", "# Plan\n"),
        _write(worktree / "cart.py", "def total(items):\n    return sum(items)\n"),
        _write(worktree / "package.json", '{"name": "shop"}'),
        _write(worktree / "node_modules" / "left-pad" / "package.json", '{"name": "left-pad"}'),
        _write(worktree / "tests" / "data" / "rollout.jsonl", CODEX.read_text("utf-8")),
        _write(clone / "README.md", "# widgets\n"),
        _write(clone / "src" / "index.ts", "export const widget = 1;\n"),
        _write(clone / "package.json", '{"name": "widgets"}'),
    ]


def _kimi_files(kimi: Path) -> list[Path]:
    """The Kimi CLI's own files: the run's, and those its source writes elsewhere."""
    shutil.copytree(KIMI_HOME / ".kimi", kimi, dirs_exist_ok=True)
    prompts = [{"content": "What does cart.py do?"}, {"content": "Fix the total."}]
    event = {"event": "kimi_session_start", "properties": {}, "context": {}}
    workdir = hashlib.md5(b"/work").hexdigest()
    return [
        kimi / "kimi.json",
        kimi / "logs" / "kimi.log",
        _write(kimi / "user-history" / f"{workdir}.jsonl",
               "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in prompts)),
        _write(kimi / "plans" / "iron-man-groot-thor.md", "# Plan\n"),
        _write(kimi / "telemetry" / "failed_0123456789ab.jsonl",
               json.dumps(event, separators=(",", ":")) + "\n"),
        _write(kimi / "prompt-cache" / "images" / "aBcDeFgH.png", PNG),
        _write(kimi / "device_id", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"),
        _write(kimi / "kimi_code_tips.json", '{"enabled": false, "message": {"en": "Bye"}}'),
        _write(kimi / "latest_version.txt", "1.52.0"),
        _write(kimi / "skipped_version.txt", "1.51.0"),
        _write(kimi / "bin" / "rg", b"\x7fELF"),
    ]  # fmt: skip


def _own_files(home: Path) -> list[Path]:
    return [
        *_claude_files(home / ".claude"),
        *_claude_bundle_files(home / ".claude"),
        *_qwen_files(home / ".qwen"),
        *_codex_files(home / ".codex" / "cache"),
        *_codex_plugin_files(home / ".codex"),
        *_gemini_files(home / ".gemini" / "tmp" / "shop"),
        *_kilo_files(home / ".local" / "share" / "kilo"),
        *_kimi_files(home / ".kimi"),
    ]


def test_C7_a_home_scan_reads_every_session_and_none_of_the_agents_bundle_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "me"
    _sessions(home)
    monkeypatch.setenv("HOME", str(home))
    before = scan(home, workers=1, cache=False)
    assert (before.skipped, len(before.keys)) == (0, 6)
    items_before = [item.path for item in discover(home, None).items]
    own = _own_files(home)

    # Discovery opens no file; a worker opens each item: the files not among the items are
    # never opened, and none is counted.
    found = discover(home, None)
    items = [item.path for item in found.items]
    assert (items, found.skipped) == (items_before, 0)
    assert not set(map(str, own)) & set(items)
    subagent = (home / ".claude" / "projects" / "-work" / CLAUDE_SESSION / "subagents"
                / "agent-a61a790209f52daea.jsonl")  # fmt: skip
    assert str(subagent) in items  # a sub-agent's transcript, not a definition of ``agents/``
    after = scan(home, workers=1, cache=False)
    assert (after.keys, after.skipped) == (before.keys, 0)
    assert all(row["error"] is None for row in after.rows)

    # A file the user names is read, never dropped: a row (its error says why) or a skip.
    for path in own:
        named = scan(path, workers=1, cache=False)
        assert len(named) + named.skipped == 1, path


def test_C7_kilo_s_data_folder_walked_whole_passes_its_files_over_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With its database elsewhere (``$KILO_DB``, an absolute path) or not made yet, nothing in
    Kilo Code's data folder says to walk only its sessions' folders: each file of it is met."""
    home = tmp_path / "me"
    own = _kilo_files(home / ".local" / "share" / "kilo")
    monkeypatch.setenv("HOME", str(home))
    found = discover(home, None)
    assert (found.items, found.skipped) == ([], 0)
    assert any("session_diff" in str(path) for path in own)  # a folder the walk now enters


def test_C7_claude_code_s_pasted_images_in_the_temp_folder_are_passed_over(
    tmp_path: Path,
) -> None:
    """Claude Code 2.1.332 keeps a session's pasted images in the temp folder beside its tasks'
    output: ``claude-<uid>/<project>/<session>/images/<n>.<ext>`` (``join(ZC(), B(), "images")``,
    ``${e.id}.${ext}``); a file there of another name is no image of its and is read."""
    temp = tmp_path / "tmp"
    images = temp / "claude-1000" / "-tmp-hF-work" / CLAUDE_SESSION / "images"
    own = [_write(images / "1.png", PNG), _write(images / "2.jpeg", b"\xff\xd8\xff\xe0")]
    stray = _write(images / "notes.json", '{"kept": true}')
    session = temp / "kept-session.jsonl"
    shutil.copyfile(GEMINI, session)
    found = discover(temp, None)
    assert sorted(item.path for item in found.items) == sorted([str(stray), str(session)])
    assert found.skipped == 0
    assert not {str(path) for path in own} & {item.path for item in found.items}


def test_C1_the_same_names_outside_the_agents_folders_are_read_as_any_file(
    tmp_path: Path,
) -> None:
    """Only an agent's folder makes them its own: a project's ``agents/``, ``cache/``,
    ``plans/``, ``tracker/`` or a folder of a project called ``kilo`` holding a session has it
    read (a rollout named so there is a row), not passed over; its ``worktree/`` and ``repos/``
    are entered, not being Kilo Code's data folder's (in no data home)."""
    project = tmp_path / "project"
    placed = [
        project / "agents" / "run.jsonl",
        project / "cache" / "rollout.jsonl",
        project / "tmp" / "x" / "y" / "plans" / "rollout.jsonl",
        project / "kilo" / "log" / "rollout.jsonl",
        project / "kilo" / "worktree" / "rollout.jsonl",
        project / "kilo" / "repos" / "acme" / "rollout.jsonl",
        project / ".kimi" / "user-history" / "rollout.json",
    ]
    for path in placed:
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CODEX, path)
    corpus = scan(project, workers=1, cache=False)
    rows = corpus.to_pandas()
    assert sorted(rows["path"]) == sorted(map(str, placed))
    assert set(rows["format"]) == {"codex"}
    assert rows["error"].isna().all()


def test_C1_a_background_job_s_copy_of_its_session_is_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code 2.1.332 copies the transcript a background job is forked from into
    ``jobs/<job>/parent-transcript.jsonl`` (its transcript store's copy, the fork point appended):
    a transcript, which a scan reads, beside the job's own files it passes over."""
    home = tmp_path / "me"
    claude = home / ".claude"
    _claude_bundle_files(claude)
    copy = claude / "jobs" / "a1b2c3d4" / "parent-transcript.jsonl"
    shutil.copyfile(CLAUDE / f"{CLAUDE_SESSION}.jsonl", copy)
    monkeypatch.setenv("HOME", str(home))
    found = discover(home, None)
    assert ([item.path for item in found.items], found.skipped) == ([str(copy)], 0)
    corpus = scan(home, workers=1, cache=False)
    assert [(row["format"], row["error"]) for row in corpus.rows] == [("claude-code", None)]


@pytest.mark.parametrize("moved", [False, True])
def test_C7_checkouts_of_code_in_kilo_s_data_folder_are_not_entered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moved: bool
) -> None:
    """Kilo Code's ``worktree/`` and ``repos/`` hold whole checkouts (a project's packages
    among them): a walk of its data folder (``~/.local/share/kilo``, or ``kilo`` of
    ``$XDG_DATA_HOME``) passes each folder over whole, asking nothing of the files in it, and
    lists none as skipped."""
    # The module, which the package's ``discover`` (its function) hides.
    discovery = sys.modules["turnfold.corpus.discover"]
    home = tmp_path / "me"
    home.mkdir()
    kilo = (tmp_path / "data" if moved else home / ".local" / "share") / "kilo"
    if moved:
        monkeypatch.setenv("XDG_DATA_HOME", str(kilo.parent))
    own = _kilo_files(kilo)
    asked: list[Path] = []
    real = discovery.is_credentials

    def asking(path: Path, keepers: object) -> bool:
        asked.append(path)
        return real(path, keepers)  # type: ignore[arg-type]

    monkeypatch.setattr(discovery, "is_credentials", asking)
    monkeypatch.setenv("HOME", str(home))
    found = discover(home, None)
    assert (found.items, found.skipped) == ([], 0)
    checkouts = (kilo / "worktree", kilo / "repos")
    inside = [path for path in own if any(map(path.is_relative_to, checkouts))]
    assert len(inside) == 7
    assert not [path for path in asked if any(map(path.is_relative_to, checkouts))]


@pytest.mark.parametrize("moved", [False, True])
def test_C7_checkouts_of_code_in_opencode_s_data_folder_are_not_entered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moved: bool
) -> None:
    """OpenCode 1.18.33 keeps the same checkouts as Kilo Code in its data folder (``opencode``
    binary: ``repos: join(data, "repos")``, ``RepositoryCache``; ``join(Path.data, "worktree",
    project.id)``). With its database elsewhere (``$OPENCODE_DB``) the data folder is walked,
    and the checkouts were walked with it: a transcript kept among a project's test data was a
    row of the user's runs."""
    home = tmp_path / "me"
    home.mkdir()
    opencode = (tmp_path / "data" if moved else home / ".local" / "share") / "opencode"
    if moved:
        monkeypatch.setenv("XDG_DATA_HOME", str(opencode.parent))
    worktree = opencode / "worktree" / "9f1c2d3e4b5a69788796a5b4c3d2e1f00f1e2d3c" / "brave-otter"
    clone = opencode / "repos" / "github.com" / "acme" / "widgets"
    inside = [
        _write(worktree / "tests" / "data" / "rollout.jsonl", CODEX.read_text("utf-8")),
        _write(worktree / "package.json", '{"name": "shop"}'),
        _write(clone / "fixtures" / "session.jsonl", CODEX.read_text("utf-8")),
        _write(clone / "README.md", "# widgets\n"),
    ]
    # A session file left right in the data folder is still read.
    kept = opencode / "rollout-kept.jsonl"
    shutil.copyfile(CODEX, kept)
    monkeypatch.setenv("HOME", str(home))
    found = discover(home, None)
    assert ([item.path for item in found.items], found.skipped) == ([str(kept)], 0)
    assert all(path.is_file() for path in inside)
