"""A scan of a home passes over more of the agents' own files, unopened and uncounted (C-1,
C-7), opens none that holds a secret (L-4), and reads every session, a copy of one's messages
the agent keeps among its files included.

Each file is placed and shaped as its tool writes it (values made up):

- Kimi Code 2.1.0 (``dist/main.mjs`` of ``@moonshot-ai/kimi-code``, tests/agents): the terminal
  UI's ``tui.toml`` (``renderTuiConfig`` of ``DEFAULT_TUI_CONFIG``); a skill,
  ``skills/<name>/SKILL.md``; the local server's ``server/lock`` (``{pid, host, port}``),
  ``server/instances/<ulid>.json`` (``encode``: ``{server_id, pid, host, port, started_at,
  heartbeat_at}``), ``server/rc.json`` (``encodeLock``: ``{pid, nonce, local_origin, device_id,
  url, started_at}``) and ``server/events/<session>.jsonl`` (``SessionEventJournal``: a
  ``journal_header`` line, then ``{kind: "event", seq, envelope}``, ``buildEnvelope``'s
  ``{type, seq, session_id, timestamp, payload, epoch}``); a message's media offloaded,
  ``blobs/<sha256>``; a file handed to it, ``files/f_<uuid>``, and their list
  ``file/index.json`` (``FileServiceImpl``); and the desktop GUI's local storage, ``gui.toml``
  (``GuiStoreService.writeAll``: TOML of strings), holding the web UI's
  ``kimi-web.server-credential`` (``{version, credential, expiresAt}``, ``dist-web``): a
  credential;
- Claude Code 2.1.332 (its ``claude`` binary, tests/agents): ``plugins/``
  (``installed_plugins.json``, a marketplace's clone, an installed bundle in ``cache/``, a
  plugin's ``data/`` and ``store/``); a file claude.ai handed a session,
  ``uploads/<session>/<name>``; a sub-agent's memory ``agent-memory/<agent type>/MEMORY.md``
  and ``agent-memory-local/…``; a prompt dump,
  ``dump-prompts/<session>.jsonl``, a request's body a line (the public build's writer is
  empty: the body is the Messages request the dump is handed); and ``shares/<name>.zip``,
  which 2.1.332 writes none of but deletes among its old files (any ``*.zip`` there, its
  clean-up's test), here an empty zip. Its Remote Control fork seed,
  ``remote-control/fork-seeds/<session>.json`` (``{version: 1, parentSessionId, createdAt,
  messages}``, the messages of transcript entries), holds a session's messages: not passed
  over;
- Codex CLI 0.171.0: a plugin's data, ``plugins/data/<plugin>-<marketplace>/``
  (``LocalPluginDataStore``, openai/codex ``codex-rs/core-plugins/src/data_store.rs``).

The sessions are real files of tests/fixtures: a Claude Code 2.1.56 session, a Codex rollout
and a Kimi Code 2.1.0 session folder.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.credential_homes import refused_unopened, said_unopened, scan_here, touched
from turnfold.corpus.discover import AGENT_FILES, discover
from turnfold.formats.credentials import keeper_of

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude-code" / "v2.1.56_real_prompt-taken-mid-turn.jsonl"
CLAUDE_SESSION = "3f1c2b8e-1d2a-4c55-9a51-6c0f8f0b7a10"
CODEX = FIXTURES / "codex_rollout_v0.129_two-turns.jsonl"
KIMI = FIXTURES / "kimi" / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
KEY = "not-a-real-server-credential"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
#: ``renderTuiConfig(DEFAULT_TUI_CONFIG)``, as Kimi Code 2.1.0 writes ``tui.toml``.
TUI_TOML = """# ~/.kimi-code/tui.toml
# Client preferences for kimi-code.
# Agent/runtime settings stay in ~/.kimi-code/config.toml.

theme = "auto" # "auto" | "dark" | "light" | custom theme name
tui_mode = "regular" # "regular" | "fullscreen" ("fullscreen" is experimental)
render_latex = true # false keeps LaTeX math in assistant messages as raw source
disable_paste_burst = false # true disables non-bracketed paste-burst fallback
cache_expiry_hint = true # false disables the "cache expired" dialog on resume / idle submit
disable_feedback_survey = false # true hides the occasional session rating prompt

[editor]
command = "" # Empty uses $VISUAL / $EDITOR

[notifications]
enabled = true # true | false
notification_condition = "unfocused" # "unfocused" | "always"

[upgrade]
auto_install = true # true | false

# [markdown]
# Draw mermaid code blocks as diagrams in the terminal; "off" keeps highlighted source.
# mermaid = "final" # "final" | "off"

# [status_line]
# Pick and order the built-in footer slots: mode, goal, model, tasks, cwd, git, tips
# items = ["mode","goal","model","tasks","cwd","git","tips"]
# Or render your own: a command whose first stdout line replaces footer line 1.
# It receives a JSON snapshot (model, cwd, git, usage, mode) on stdin.
# command = "~/.kimi-code/statusline.sh"
"""
GUI_TOML = (
    '"kimi-web.server-credential" = "{\\"version\\":1,\\"credential\\":\\"'
    f'{KEY}\\",\\"expiresAt\\":1797248101736}}"\n"kimi-locale" = "en"\n'
)

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_agent_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' folders are the test's: a developer's variables would move them."""
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "KIMI_CODE_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(variable, raising=False)


def _write(path: Path, body: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(body, bytes):
        path.write_bytes(body)
    else:
        path.write_text(body, encoding="utf-8")
    return path


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def _home(root: Path) -> tuple[Path, list[str]]:
    """A home with a real session of Claude Code, Codex and Kimi Code, and those sessions."""
    home = root / "me"
    claude = home / ".claude" / "projects" / "-work" / f"{CLAUDE_SESSION}.jsonl"
    codex = home / ".codex" / "sessions" / "2026" / "12" / "06" / f"rollout-{CODEX.name}"
    for source, target in ((CLAUDE, claude), (CODEX, codex)):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    kimi = home / ".kimi-code" / "sessions" / "wd_work_e94ed5f3a266" / KIMI.name
    shutil.copytree(KIMI, kimi)
    return home, sorted(map(str, (claude, codex, kimi / "agents" / "main" / "wire.jsonl")))


def _kimi_files(kimi: Path) -> list[Path]:
    session = KIMI.name
    event = {"type": "turn.started", "time": 1796643301736, "agentId": "main"}
    envelope = {"type": "turn.started", "seq": 1, "session_id": session,
                "timestamp": "2026-12-07T08:15:01.736Z", "payload": event,
                "epoch": "ep_01KBZ6Q0W5J3V8N2R4T6Y8A0C2"}  # fmt: skip
    journal = [
        {"kind": "journal_header", "version": 1, "epoch": "ep_01KBZ6Q0W5J3V8N2R4T6Y8A0C2",
         "created_at": 1796643301736},
        {"kind": "event", "seq": 1, "envelope": envelope},
    ]  # fmt: skip
    instance = {"server_id": "01KBZ6Q0W5J3V8N2R4T6Y8A0C2", "pid": 48213, "host": "127.0.0.1",
                "port": 58627, "started_at": 1796643301736,
                "heartbeat_at": 1796643316736}  # fmt: skip
    rc = {"pid": 48213, "nonce": "9f3c2a71b0e4d5c6", "local_origin": "http://127.0.0.1:58627",
          "device_id": "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
          "url": "https://www.kimi.com/code/devices/0f1e2d3c4b5a69788796a5b4c3d2e1f0/"
                 "?rc=1&from=kimi_code_cli",
          "started_at": 1796643301736}  # fmt: skip
    meta = {"id": "f_7d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d", "name": "notes.txt",
            "media_type": "text/plain", "size": 12,
            "created_at": "2026-12-07T08:15:01.736Z"}  # fmt: skip
    return [
        _write(kimi / "tui.toml", TUI_TOML),
        _write(kimi / "skills" / "release-notes" / "SKILL.md",
               "---\nname: release-notes\ndescription: Drafts release notes.\n---\n\nDraft.\n"),
        _write(kimi / "server" / "lock", _compact({"pid": 48213, "host": "127.0.0.1",
                                                   "port": 58627})),
        _write(kimi / "server" / "instances" / "01KBZ6Q0W5J3V8N2R4T6Y8A0C2.json",
               _compact(instance)),
        _write(kimi / "server" / "rc.json", _compact(rc)),
        _write(kimi / "server" / "events" / f"{session}.jsonl",
               "".join(_compact(line) + "\n" for line in journal)),
        _write(kimi / "blobs" / hashlib.sha256(PNG).hexdigest(), PNG),
        _write(kimi / "files" / meta["id"], "line one\nok\n"),
        _write(kimi / "file" / "index.json", _compact({"files": [meta]})),
    ]  # fmt: skip


def _claude_files(claude: Path) -> list[Path]:
    request = {"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": True,
               "system": [{"type": "text", "text": "You are Claude Code."}],
               "messages": [{"role": "user",
                             "content": [{"type": "text", "text": "Hi"}]}]}  # fmt: skip
    installed = {"version": 2, "plugins": {"review@acme-tools": [{
        "scope": "user", "installPath": str(claude / "plugins" / "cache" / "acme-tools" /
                                            "review" / "1.2.0"),
        "version": "1.2.0", "installedAt": "2026-12-07T08:15:01.736Z"}]}}  # fmt: skip
    bundle = claude / "plugins" / "cache" / "acme-tools" / "review" / "1.2.0"
    shares = claude / "shares" / "5c1f0e9a-7b3d-4a41-9c2e-8d7f6a5b4c3d.zip"
    shares.parent.mkdir(parents=True)
    zipfile.ZipFile(shares, "w").close()
    return [
        _write(claude / "plugins" / "installed_plugins.json", json.dumps(installed, indent=2)),
        _write(claude / "plugins" / "marketplaces" / "acme-tools" / ".claude-plugin" /
               "marketplace.json", json.dumps({"name": "acme-tools", "plugins": []}, indent=2)),
        _write(bundle / ".claude-plugin" / "plugin.json", json.dumps({"name": "review"})),
        _write(bundle / "hooks" / "events.jsonl", '{"event": "installed"}\n'),
        _write(claude / "plugins" / "data" / "review-acme-tools" / "state.json", "{}"),
        _write(claude / "plugins" / "store" / "review_acme-tools-b049b47b3618.json", "{}"),
        _write(claude / "uploads" / CLAUDE_SESSION / "notes.txt", "line one\nok\n"),
        _write(claude / "agent-memory" / "code-reviewer" / "MEMORY.md", "# Memory\n"),
        _write(claude / "agent-memory-local" / "code-reviewer" / "MEMORY.md", "# Local\n"),
        _write(claude / "dump-prompts" / f"{CLAUDE_SESSION}.jsonl", _compact(request) + "\n"),
        shares,
    ]  # fmt: skip


def _codex_files(codex: Path) -> list[Path]:
    data = codex / "plugins" / "data" / "github-openai-curated"
    return [_write(data / "state.json", "{}"), _write(data / "runs.jsonl", '{"run": 1}\n')]


def test_C7_a_home_scan_passes_the_new_own_files_over_and_reads_every_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    home, sessions = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    before = scan_here(home)
    assert (sorted(before.keys), before.skipped) == (sessions, 0)
    own = [*_kimi_files(home / ".kimi-code"), *_claude_files(home / ".claude"),
           *_codex_files(home / ".codex")]  # fmt: skip
    gui = _write(home / ".kimi-code" / "gui.toml", GUI_TOML)
    found = discover(home, None)
    assert (sorted(item.path for item in found.items), found.skipped) == (sessions, 0)
    opened.clear()
    after = scan_here(home)
    assert (sorted(after.keys), after.skipped) == (sessions, 0)
    assert all(row["error"] is None for row in after.rows)
    places = [str(path.relative_to(home)) for path in (*own, gui)]
    assert touched(opened, places) == []
    # Named, each is read, never dropped: a row (its error says why) or a skipped file.
    for path in own:
        corpus = scan_here(path)
        assert len(corpus) + corpus.skipped == 1, path


def test_C7_the_folders_are_passed_over_whole() -> None:
    """A folder of them is not entered (a plugin's bundle, a marketplace's clone, a skill's
    scripts): every file under it is the agent's own at any depth."""
    covered = [
        ".kimi-code/blobs", ".kimi-code/store", ".kimi-code/server", ".kimi-code/skills",
        ".kimi-code/files", ".claude/plugins", ".claude/uploads", ".claude/agent-memory",
        ".claude/agent-memory-local", ".codex/plugins/data",
    ]  # fmt: skip
    for folder in covered:
        assert any(keeper.covers(Path("/home/me", folder)) for keeper in AGENT_FILES), folder
    for folder in ("project/skills", "project/server", ".claude/remote-control", ".codex/data"):
        assert not any(keeper.covers(Path("/home/me", folder)) for keeper in AGENT_FILES), folder


def test_L4_kimi_code_s_gui_store_is_a_credential_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    home, _ = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    gui = _write(home / ".kimi-code" / "gui.toml", GUI_TOML)
    opened.clear()
    assert keeper_of(gui) == "kimi"
    said_unopened(gui, "kimi")
    refused_unopened(gui, "kimi", KEY)
    assert touched(opened, [".kimi-code/gui.toml"]) == []
    # A project's gui.toml is nobody's: read as any file (no transcript: skipped).
    elsewhere = _write(tmp_path / "project" / "gui.toml", 'theme = "dark"\n')
    assert keeper_of(elsewhere) is None


def test_C1_claude_code_s_fork_seed_holds_a_session_s_messages_and_is_not_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Remote Control keeps the messages a fork starts from, whose session may be a cloud
    one's: a copy of a session, never hidden; the scan opens it as any file."""
    home, sessions = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    lines = CLAUDE.read_text(encoding="utf-8").splitlines()
    entries = [entry for entry in map(json.loads, lines)
               if entry.get("type") in ("user", "assistant") and "uuid" in entry]  # fmt: skip
    seed = {"version": 1, "parentSessionId": "session_01HZX3Q4R5S6T7V8W9XAYBZC",
            "createdAt": "2026-12-07T08:15:01.736Z", "messages": entries}  # fmt: skip
    path = _write(home / ".claude" / "remote-control" / "fork-seeds" /
                  "session_01HZX3Q4R5S6T7V8W9XAYBZC.json", _compact(seed))  # fmt: skip
    found = discover(home, None)
    assert sorted(item.path for item in found.items) == sorted([*sessions, str(path)])
