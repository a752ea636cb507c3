"""A scan of a home opens none of the files Kimi Code and the older Kimi CLI keep keys and
tokens in, counts none as skipped, and reads their sessions (spec C-1, C-7, L-4).

Each file is placed and shaped as its tool writes it, its values made up:

- Kimi Code 2.1.0 (``dist/main.mjs`` of ``@moonshot-ai/kimi-code``), ``~/.kimi-code``: its
  settings ``config.toml`` (a provider's ``api_key``, written snake_case), the MCP servers'
  ``mcp.json`` (``{"mcpServers": {name: {url, headers}}}``, a project's ``.kimi-code/mcp.json``
  too), its local server's ``server.token``, a login's ``credentials/<name>.json``, an MCP
  server's OAuth tokens ``credentials/mcp/<name>-<24 hex>`` (``mcpOAuthStoreKey``: the
  ``credentials/mcp`` scope of its document store, a JSON document named by the key), and the
  migration's ``config.migrated-from-kimi-cli.toml`` and ``mcp.migrated-from-kimi-cli.json``;
- the Kimi CLI 1.52.0 (``kimi-cli``, PyPI), ``~/.kimi``: ``config.toml`` (``save_config``:
  ``tomlkit.dumps`` of the settings, ``kimi_cli/config.py``), the ``config.json.bak`` its
  migration from ``config.json`` leaves, ``mcp.json`` (``cli/mcp.py``), a login's
  ``credentials/<name>.json`` (``auth/oauth.py``), an MCP server's OAuth tokens under
  ``mcp-oauth/`` (``mcp_oauth.py``: a ``FileTreeStore``, a folder per collection and a JSON
  file per key), and a plugin, ``plugins/<name>/``, whose config file ``inject_config`` writes
  the provider's ``api_key`` into (``plugin/__init__.py``).

The sessions are real: Kimi Code 2.1.0's and the Kimi CLI 1.52.0's of tests/fixtures/kimi.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.credential_homes import (
    plant,
    refused_unopened,
    said_unopened,
    scan_here,
    scans_of_homes,
    touched,
    written,
)

FIXTURES = Path(__file__).parent / "fixtures" / "kimi"
KIMI_CODE = FIXTURES / "work" / "session_60f3c294-da52-4c40-857c-c0696d973df5"
KIMI_CLI = FIXTURES / "legacy" / "work" / "ea564de4-19b4-46fa-bb90-96824cb99092"
KEY = "sk-not-a-real-key"
TOKENS = {"access_token": "not-a-real-token", "refresh_token": "not-a-real-refresh",
          "expires_at": 1796643301.7, "scope": "kimi-code", "token_type": "Bearer"}  # fmt: skip
MCP = {"mcpServers": {"notes": {"url": "https://notes.example.invalid/mcp",
                                "headers": {"Authorization": f"Bearer {KEY}"}}}}  # fmt: skip
KIMI_CODE_CONFIG = f"""default_model = "kimi-for-coding"

[providers.moonshot]
type = "kimi"
base_url = "https://api.moonshot.ai/v1"
api_key = "{KEY}"
"""
KIMI_CLI_CONFIG = f"""default_model = "kimi-k2"

[models.kimi-k2]
provider = "moonshot"
model = "kimi-k2-turbo-preview"
max_context_size = 262144

[providers.moonshot]
type = "kimi"
base_url = "https://api.moonshot.cn/v1"
api_key = "{KEY}"
"""
KIMI_CLI_JSON = {"default_model": "kimi-k2",
                 "providers": {"moonshot": {"type": "kimi", "base_url": "https://api.moonshot.cn/v1",
                                            "api_key": KEY}}}  # fmt: skip
#: Each credential file by its place in the home, what it holds, and whose it is.
SECRETS: dict[str, tuple[str, str]] = {
    ".kimi-code/config.toml": (KIMI_CODE_CONFIG, "kimi"),
    ".kimi-code/mcp.json": (json.dumps(MCP, indent=2), "kimi"),
    ".kimi-code/server.token": ("not-a-real-server-token", "kimi"),
    ".kimi-code/credentials/kimi-code.json": (json.dumps(TOKENS), "kimi"),
    ".kimi-code/credentials/mcp/notes-0123456789abcdef01234567": (
        json.dumps({"tokens": TOKENS, "clientInformation": {"client_id": "kimi"}}), "kimi"),
    ".kimi-code/config.migrated-from-kimi-cli.toml": (KIMI_CLI_CONFIG, "kimi"),
    ".kimi-code/mcp.migrated-from-kimi-cli.json": (json.dumps(MCP, indent=2), "kimi"),
    "work/.kimi-code/mcp.json": (json.dumps(MCP, indent=2), "kimi"),
    ".kimi/config.toml": (KIMI_CLI_CONFIG, "kimi-cli"),
    ".kimi/config.json.bak": (json.dumps(KIMI_CLI_JSON, ensure_ascii=False, indent=2), "kimi-cli"),
    ".kimi/mcp.json": (json.dumps(MCP, indent=2, ensure_ascii=False), "kimi-cli"),
    ".kimi/credentials/kimi-code.json": (json.dumps(TOKENS), "kimi-cli"),
    ".kimi/mcp-oauth/mcp-oauth-token/https-notes-example-invalid-mcp.json": (
        json.dumps({"value": TOKENS, "created_at": "2026-12-07T08:22:51Z"}), "kimi-cli"),
    ".kimi/plugins/search/plugin.json": (
        json.dumps({"name": "search", "version": "1.0.0", "config_file": "config/settings.json",
                    "inject": {"auth.apiKey": "api_key"}}, ensure_ascii=False, indent=2),
        "kimi-cli"),
    ".kimi/plugins/search/config/settings.json": (
        json.dumps({"auth": {"apiKey": KEY}}, ensure_ascii=False, indent=2), "kimi-cli"),
}  # fmt: skip

pytestmark = pytest.mark.usefixtures("cache_dir")


@pytest.fixture(autouse=True)
def own_agent_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agents' folders are the test's: a developer's variables would move them."""
    for variable in ("KIMI_CODE_HOME", "KIMI_SHARE_DIR", "XDG_DATA_HOME"):
        monkeypatch.delenv(variable, raising=False)


def _home(root: Path, secrets: bool) -> Path:
    """``root/me`` with a Kimi Code and a Kimi CLI session, and the secrets if asked."""
    home = root / "me"
    code = home / ".kimi-code" / "sessions" / "wd_work_e94ed5f3a266" / KIMI_CODE.name
    workdir = hashlib.md5(b"/work").hexdigest()  # the CLI's folder of a work folder's
    shutil.copytree(KIMI_CODE, code)
    shutil.copytree(KIMI_CLI, home / ".kimi" / "sessions" / workdir / KIMI_CLI.name)
    if secrets:
        plant(home, {place: written(text) for place, (text, _) in SECRETS.items()})
    return home


def test_C1_a_home_scan_opens_none_of_the_kimi_tools_secrets_and_reads_their_sessions(
    tmp_path: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "full" / "me"))
    plain, full, home = scans_of_homes(_home, tmp_path, opened)
    assert touched(opened, SECRETS) == []
    assert (plain.skipped, full.skipped) == (0, 0)
    assert sorted(key.replace(str(home), "~") for key in full.keys) == sorted(
        key.replace(str(tmp_path / "plain" / "me"), "~") for key in plain.keys
    )
    assert sorted(row["format"] for row in full.rows) == ["kimi", "kimi-cli"]
    assert all(row["error"] is None for row in full.rows)


def test_C1_each_named_alone_is_said_and_refused_unopened(
    tmp_path: Path, opened: list[str]
) -> None:
    """Named to a scan or a load, each is whose it is, never opened (L-4)."""
    home = _home(tmp_path, secrets=True)
    opened.clear()
    for place, (_, keeper) in SECRETS.items():
        said_unopened(home / place, keeper)
        refused_unopened(home / place, keeper, KEY)
    assert touched(opened, SECRETS) == []


def test_C1_the_kimi_cli_s_moved_folder_and_its_config_json_are_passed_over_too(
    tmp_path: Path, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$KIMI_SHARE_DIR`` moves ``~/.kimi`` under any name, and a CLI before the move to TOML
    kept its settings in ``config.json`` (``_migrate_json_config_to_toml`` reads it)."""
    home, moved = tmp_path / "me", tmp_path / "kimi-data"
    shutil.copytree(KIMI_CLI, moved / "sessions" / "7a1c" / KIMI_CLI.name)
    places = {"config.json": json.dumps(KIMI_CLI_JSON), "mcp.json": json.dumps(MCP),
              "plugins/search/config/settings.json":
                  json.dumps({"auth": {"apiKey": KEY}})}  # fmt: skip
    plant(moved, {place: written(text) for place, text in places.items()})
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KIMI_SHARE_DIR", str(moved))
    opened.clear()
    corpus = scan_here(home)
    assert ([row["format"] for row in corpus.rows], corpus.skipped) == (["kimi-cli"], 0)
    assert touched(opened, [f"kimi-data/{place}" for place in places]) == []


def test_C7_the_same_names_in_a_project_are_read_as_any_file(tmp_path: Path) -> None:
    """Only the Kimi tools' folders make them secrets: a project's ``config.json``,
    ``plugins/`` or ``credentials/`` is read (here no transcript: an error row, C-7)."""
    project = tmp_path / "project"
    places = ["config.json", "plugins/search/config/settings.json", "credentials/mcp/notes.json"]
    plant(project, {place: written(json.dumps({"key": "value"})) for place in places})
    corpus = scan_here(project)
    assert len(corpus.keys) + corpus.skipped == len(places)
