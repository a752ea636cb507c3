"""A scan of a home passes over the copies the agents' interrupted atomic writes leave in their
folders, never opening one and counting none as skipped (C-1, C-7), and a copy of a credential
file is a credential: named to a scan it is said, named to a load refused, unopened (L-4).

Each agent writes a file whole by writing a copy beside it and renaming it over the file; a
write cut short (the process killed, the disk full) leaves the copy, holding what the file
holds. Each copy here is named and placed as its tool names and places it, its contents the
file's (values made up):

- Kimi Code 2.1.0 (``dist/main.mjs`` of ``@moonshot-ai/kimi-code``, tests/agents):
  ``writeConfigFile``'s ``atomicWrite`` of ``config.toml``, ``${filePath}.tmp.${process.pid}.
  ${randomBytes(4).toString("hex")}``; ``GuiStoreService.writeAll``'s ``gui.toml`` copy, named
  alike; ``writePrivateFile``'s ``server.token`` copy, ``${filePath}.tmp.${randomBytes(8)
  .toString("hex")}``; ``writeInstalled``'s ``plugins/installed.json.tmp``;
- Claude Code 2.1.332 (its ``claude`` binary, tests/agents): its atomic write's copy,
  ``<file>.tmp.${process.pid}.${randomBytes(6).toString("hex")}``, of ``settings.json`` and of
  a plan, ``plans/<slug>.md``; the home's ``.claude.json`` alike;
- Gemini CLI 0.61.0 (``bundle/`` of ``@google/gemini-cli``): a session file's copy,
  ``${this.conversationFile}.tmp-${process.pid}`` (the session itself is read), and
  ``trustedFolders.json``'s, ``${path}.tmp.${crypto.randomUUID()}``;
- Qwen Code 0.24.4 (``chunks/`` of ``@qwen-code/qwen-code``): ``cacheQwenCredentials``' copy of
  ``oauth_creds.json``, ``${filePath}.tmp.${process.pid}.${randomUUID()}``;
- Codex CLI (openai/codex ``codex-rs/core/src/config/edit.rs``): ``write_atomically``'s copy
  of ``config.toml``, Rust ``tempfile``'s ``NamedTempFile::new_in``: ``.tmp`` and six random
  letters or digits, naming no file (hidden: a walk never meets it, a load of it is refused);
- OpenCode 1.18.33 (the ``opencode`` binary of tests/agents) and Kilo Code, in their data
  folders (``Global.Path.data``: ``opencode`` and ``kilo`` right in ``$XDG_DATA_HOME``, else
  ``~/.local/share``): a copy named as OpenCode's atomic JSON write names its own
  (``${file}.${process.pid}.${crypto.randomUUID()}.tmp``) and a log; the same in a project's
  folder called ``opencode`` or ``kilo`` are a project's files, counted as any;
- OpenCode 1.18.33, in its cache folder (``Global.Path.cache``: ``opencode`` right in
  ``$XDG_CACHE_HOME``, else ``~/.cache``): a remote skill's update cut short leaves the new
  version in ``skills/<skill>.tmp-<uuid>/`` and the old one moved aside in
  ``skills/<skill>.old-<uuid>/`` (``Discovery.pull``, anomalyco/opencode
  ``packages/opencode/src/skill/discovery.ts``; ``skills/<hash>/<skill>.tmp-<uuid>/`` of its
  newer ``SkillDiscovery``, both in the binary): the skill's ``SKILL.md`` and files as the
  index lists them, and its ``.opencode-version``.

The sessions are real files of tests/fixtures: a Codex rollout, a Gemini CLI 0.61 session, a
Claude Code 2.1.56 session and a Kimi Code 2.1.0 session folder.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.credential_homes import refused_unopened, said_unopened, scan_here, touched
from turnfold.corpus.discover import AGENT_FILES, discover
from turnfold.formats.credentials import is_temporary_folder, keeper_of, replaced_names

FIXTURES = Path(__file__).parent / "fixtures"
CODEX = FIXTURES / "codex_rollout_v0.129_two-turns.jsonl"
GEMINI = FIXTURES / "gemini" / "gemini-cli_v0.61_three-turns-two-resumes.jsonl"
CLAUDE = FIXTURES / "claude-code" / "v2.1.56_real_prompt-taken-mid-turn.jsonl"
KIMI = FIXTURES / "kimi" / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
KEY = "sk-not-a-real-key"
GEMINI_CHAT = ".gemini/tmp/shop/chats/session-2026-12-05T18-37-e004f15a.jsonl"
OPENCODE_LOG = FIXTURES / "opencode/home-files/.local/share/opencode/log/opencode.log"
#: ``crypto.randomUUID()``'s, as OpenCode names its copies and its skills' update folders.
UUID = "0b7e1c9a-4c1d-4f5e-9a2b-3c4d5e6f7a8b"
#: Each credential's copy, by its place in the home: what it holds and whose it is.
SECRET_COPIES: dict[str, tuple[str, str]] = {
    ".kimi-code/config.toml.tmp.48213.9f3c2a71": (
        f'default_model = "kimi-for-coding"\n\n[providers.moonshot]\ntype = "kimi"\n'
        f'api_key = "{KEY}"\n', "kimi"),
    ".kimi-code/gui.toml.tmp.48213.0b1c2d3e": (
        '"kimi-web.server-credential" = "{\\"version\\":1,\\"credential\\":\\"'
        f'{KEY}\\",\\"expiresAt\\":1796643301736}}"\n', "kimi"),
    ".kimi-code/server.token.tmp.5e6f7a8b9c0d1e2f": (KEY, "kimi"),
    ".claude/settings.json.tmp.48213.a1b2c3d4e5f6": (
        json.dumps({"env": {"ANTHROPIC_API_KEY": KEY}}, indent=2), "claude-code"),
    ".qwen/oauth_creds.json.tmp.48213.8c1d0e2f-1111-4222-8333-944455556666": (
        json.dumps({"access_token": KEY, "refresh_token": KEY, "token_type": "Bearer",
                    "resource_url": "portal.qwen.ai", "expiry_date": 1796643301736},
                   indent=2), "qwen"),
    ".codex/.tmpQx7Lb2": (
        f'[mcp_servers.notes]\nurl = "https://notes.example.invalid/mcp"\n'
        f'bearer_token = "{KEY}"\n', "codex"),
}  # fmt: skip
#: Copies of the agents' own files, none a credential: passed over in a walk, read when named.
OWN_COPIES: dict[str, str] = {
    ".kimi-code/plugins/installed.json.tmp": json.dumps({"plugins": []}, indent=2),
    ".claude/plans/glowing-sparking-lake.md.tmp.48213.0a1b2c3d4e5f": "# Plan\n\n1. Fix it\n",
    ".gemini/trustedFolders.json.tmp.0b7e1c9a-4c1d-4f5e-9a2b-3c4d5e6f7a8b": json.dumps(
        {"/work": "TRUST_FOLDER"}, indent=2),
}  # fmt: skip

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_agent_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' folders are the test's: a developer's variables would move them."""
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME",
                     "KIMI_CODE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):  # fmt: skip
        monkeypatch.delenv(variable, raising=False)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _home(root: Path) -> tuple[Path, list[str]]:
    """A home with one real session of each agent where it keeps it, and those sessions."""
    home = root / "me"
    placed = {
        home / ".codex" / "sessions" / "2026" / "12" / "06" / f"rollout-{CODEX.name}": CODEX,
        home / GEMINI_CHAT: GEMINI,
        home / ".claude" / "projects" / "-work" / CLAUDE.name: CLAUDE,
    }
    for target, source in placed.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    kimi = home / ".kimi-code" / "sessions" / "wd_work_e94ed5f3a266" / KIMI.name
    shutil.copytree(KIMI, kimi)
    sessions = [*map(str, placed), str(kimi / "agents" / "main" / "wire.jsonl")]
    return home, sorted(sessions)


def _copies(home: Path) -> None:
    for place, (text, _) in SECRET_COPIES.items():
        _write(home / place, text)
    for place, text in OWN_COPIES.items():
        _write(home / place, text)
    # The copy of a session Gemini CLI was writing: the session is read, its copy not.
    shutil.copyfile(home / GEMINI_CHAT, home / f"{GEMINI_CHAT}.tmp-48213")


@pytest.mark.parametrize(
    ("copy", "replaced"),
    [
        ("config.toml.tmp.48213.9f3c2a71", "config.toml"),  # Kimi Code's atomicWrite
        ("kimi-code.json.48213.k2j3h4g5f6.tmp", "kimi-code.json"),  # its credentials' write
        ("installed.json.tmp", "installed.json"),  # its writeInstalled
        ("workspaces.json.tmp-48213-3", "workspaces.json"),  # its minidb's write
        ("settings.json.tmp.48213.a1b2c3d4e5f6", "settings.json"),  # Claude Code's
        ("history.jsonl.tmp.deadbeef", "history.jsonl"),  # its YO(): 4 random bytes' hex
        ("session-1.jsonl.tmp-48213", "session-1.jsonl"),  # Gemini CLI's session file
        ("trustedFolders.json.tmp.0b7e1c9a-4c1d-4f5e-9a2b-3c4d5e6f7a8b", "trustedFolders.json"),
        ("trust.json.48213.tmp", "trust.json"),  # Qwen Code's atomicWrite
        (".auth.json.48213.1796643301736.8f3a.tmp", "auth.json"),  # a hidden copy
    ],
)
def test_C7_an_atomic_write_s_copy_names_the_file_it_replaces(copy: str, replaced: str) -> None:
    assert replaced in replaced_names(copy)


@pytest.mark.parametrize(
    "name", ["rollout.jsonl", "x.tmp.jsonl", "x.tmp-1.jsonl", "notes.tmp.json.gz", ".tmp", "tmp"]
)
def test_C1_no_session_file_s_name_is_taken_for_a_copy(name: str) -> None:
    """The words after ``.tmp`` are random (a number, hex): an extension is none, so a session
    named ``….tmp.jsonl`` is still a session."""
    assert replaced_names(name) == ()


def test_C7_a_home_scan_passes_the_copies_over_unopened_and_reads_every_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    home, sessions = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    before = scan_here(home)
    assert (sorted(before.keys), before.skipped) == (sessions, 0)
    _copies(home)
    found = discover(home, None)
    assert (sorted(item.path for item in found.items), found.skipped) == (sessions, 0)
    opened.clear()
    after = scan_here(home)
    assert (sorted(after.keys), after.skipped) == (sessions, 0)
    assert all(row["error"] is None for row in after.rows)
    places = [*SECRET_COPIES, *OWN_COPIES, f"{GEMINI_CHAT}.tmp-48213"]
    assert touched(opened, places) == []


def test_L4_a_credential_s_copy_named_is_said_or_refused_unopened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    home, _ = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    _copies(home)
    # The home's own config, hidden, met by no walk: named, it is Claude Code's as the file is.
    dot_claude = _write(home / ".claude.json.tmp.48213.a1b2c3d4e5f6",
                        json.dumps({"primaryApiKey": KEY}))  # fmt: skip
    opened.clear()
    for place, (_, keeper) in {**SECRET_COPIES, dot_claude.name: ("", "claude-code")}.items():
        path = home / place
        assert keeper_of(path) == keeper, place
        said_unopened(path, keeper)
        refused_unopened(path, keeper, KEY)
    assert touched(opened, [*SECRET_COPIES, dot_claude.name]) == []


def test_C7_a_copy_of_an_agent_s_own_file_named_is_read_as_any(tmp_path: Path) -> None:
    """A file the user names is never dropped: each is read, a row or a skipped file."""
    home, _ = _home(tmp_path)
    _copies(home)
    for place in [*OWN_COPIES, f"{GEMINI_CHAT}.tmp-48213"]:
        corpus = scan_here(home / place)
        assert len(corpus) + corpus.skipped == 1, place
        assert keeper_of(home / place) is None, place


def test_C7_copies_outside_the_agents_folders_are_counted_as_any_file(tmp_path: Path) -> None:
    """Only an agent's folder makes a copy its own: a project's is a file no reader takes,
    counted, never opened (no session's suffix), and never a credential."""
    project = tmp_path / "project"
    stray = [
        _write(project / "config.toml.tmp.48213.9f3c2a71", 'name = "shop"\n'),
        _write(project / "build" / "out.bin.tmp-3", "partial"),
    ]
    found = discover(project, None)
    assert (found.items, found.skipped) == ([], len(stray))
    nameless = _write(project / ".tmpQx7Lb2", 'name = "shop"\n')  # a copy in no agent's folder
    assert [keeper_of(path) for path in (*stray, nameless)] == [None, None, None]


def _opencode_like(folder: Path) -> list[Path]:
    """What OpenCode (or Kilo Code) leaves in its data folder ``folder``: a copy of its atomic
    JSON write and its log, as a run of tests/agents wrote it (tests/fixtures/opencode/
    home-files); no session: those are in its database, not made here."""
    log = folder / "log" / OPENCODE_LOG.name
    log.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(OPENCODE_LOG, log)
    return [_write(folder / f"kv.json.48213.{UUID}.tmp", json.dumps({"theme": "opencode"})), log]


def test_C7_opencode_s_and_kilo_s_files_are_theirs_only_in_their_data_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    """OpenCode's data folder is ``opencode`` right in ``~/.local/share``, Kilo Code's ``kilo``
    right in ``$XDG_DATA_HOME``: their copies and logs are passed over there, unopened and
    uncounted. A project's folders of those names are the user's: the same files there are
    counted as any, and a session in a folder named as a skill's update is a row."""
    home, sessions = _home(tmp_path)
    data = tmp_path / "data"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    own = [*_opencode_like(home / ".local" / "share" / "opencode"),
           *_opencode_like(data / "kilo")]  # fmt: skip
    work = home / "work"
    stray = [*_opencode_like(work / "opencode"), *_opencode_like(work / "kilo")]
    kept = work / "opencode" / "skills" / f"review.tmp-{UUID}" / "rollout.jsonl"
    kept.parent.mkdir(parents=True)
    shutil.copyfile(CODEX, kept)
    found = discover(home, None)
    assert sorted(item.path for item in found.items) == sorted([*sessions, str(kept)])
    assert found.skipped == len(stray)
    opened.clear()
    corpus = scan_here(home)
    assert (len(corpus), corpus.skipped) == (len(sessions) + 1, len(stray))
    assert touched(opened, [str(path.relative_to(tmp_path)) for path in own]) == []
    # Named, each is read, never dropped: a row (its error says why) or a skipped file.
    for path in own:
        named = scan_here(path)
        assert len(named) + named.skipped == 1, path


@pytest.mark.parametrize("moved", [False, True])
def test_C7_opencode_s_unfinished_skill_updates_are_passed_over_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moved: bool
) -> None:
    """The folders a skill's update leaves in OpenCode's cache folder (``~/.cache/opencode``,
    or ``opencode`` of ``$XDG_CACHE_HOME``) are its own, every file of them: a walk does not
    enter them. The skill's folder itself is no copy: its ``SKILL.md`` is counted as any."""
    discovery = sys.modules["turnfold.corpus.discover"]  # the package's ``discover`` hides it
    home = tmp_path / "me"
    cache = (tmp_path / "cache" if moved else home / ".cache") / "opencode"
    if moved:
        monkeypatch.setenv("XDG_CACHE_HOME", str(cache.parent))
    monkeypatch.setenv("HOME", str(home))
    skill = "---\nname: review\ndescription: Reviews a change.\n---\n\nReview it.\n"
    updates = [
        cache / "skills" / f"review.tmp-{UUID}",
        cache / "skills" / "7d1c2b3a4e5f6a7b" / f"review.tmp-{UUID}",  # its newer discovery
        cache / "skills" / f"review.old-{UUID}",
    ]
    own = [
        path
        for folder in updates
        for path in (
            _write(folder / "SKILL.md", skill),
            _write(folder / "references" / "checklist.json", json.dumps({"steps": ["read"]})),
            _write(folder / ".opencode-version", "1.2.0"),
        )
    ]
    current = _write(cache / "skills" / "review" / "SKILL.md", skill)
    asked: list[Path] = []
    real = discovery.is_credentials

    def asking(path: Path, keepers: object) -> bool:
        asked.append(path)
        return real(path, keepers)  # type: ignore[arg-type]

    monkeypatch.setattr(discovery, "is_credentials", asking)
    found = discover(cache, None)
    assert (found.items, found.skipped) == ([], 1)
    assert not [path for path in asked if any(map(path.is_relative_to, updates))]
    assert current.is_file()
    for folder in updates:
        assert any(keeper.covers(folder) for keeper in AGENT_FILES), folder
    # Named, each is read, never dropped (the hidden version file too, named).
    for path in own:
        named = scan_here(path)
        assert len(named) + named.skipped == 1, path


def test_C1_a_folder_of_a_project_named_like_a_copy_holds_sessions_read_as_any(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a whole ``crypto.randomUUID()`` after ``.tmp-`` or ``.old-`` names a folder moved
    whole: Kimi Code's folder of a project called ``site.tmp-2`` (``wd_<slug>_<hash>``,
    ``encodeWorkDirKey``) and Gemini CLI's of a project called ``app.tmp-1`` (its short name)
    hold sessions, each a row."""
    home, sessions = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    kimi = home / ".kimi-code" / "sessions" / "wd_site.tmp-2_4f1e2d3c4b5a" / KIMI.name
    shutil.copytree(KIMI, kimi)
    gemini = home / ".gemini" / "tmp" / "app.tmp-1" / "chats" / Path(GEMINI_CHAT).name
    gemini.parent.mkdir(parents=True)
    shutil.copyfile(GEMINI, gemini)
    more = [str(kimi / "agents" / "main" / "wire.jsonl"), str(gemini)]
    found = discover(home, None)
    assert (sorted(item.path for item in found.items), found.skipped) == (
        sorted([*sessions, *more]), 0)  # fmt: skip


@pytest.mark.parametrize(
    ("name", "moved_whole"),
    [
        (f"review.tmp-{UUID}", True),
        (f"review.old-{UUID}", True),
        (f"my.skill.tmp-{UUID}", True),
        (f"review.tmp-{UUID.upper()}", False),  # crypto.randomUUID() is lowercase
        ("review.tmp-48213", False),
        (f"review.tmp-{UUID}_4f1e2d3c4b5a", False),
        (f".tmp-{UUID}", False),  # no folder's name before it
        ("wd_site.tmp-2_4f1e2d3c4b5a", False),
        ("review", False),
    ],
)
def test_C7_a_folder_moved_whole_is_told_by_its_whole_name(name: str, moved_whole: bool) -> None:
    assert is_temporary_folder(name) is moved_whole
