"""Which inputs of a scan are items, and how each one is named (spec C-1).

Discovery only lists candidates and their ``stat``: it opens no session file, so a rescan that
finds every candidate in the cache (:mod:`turnfold.corpus.index`) reads no session file at all
(C-4); it reads the small ``state.json`` of a dataset ``datasets`` saved, which names its shards.
Whether a candidate is a session, an eval log of many items (one per sample and epoch, keyed
``path#id/epoch``), an archive of OpenHands sessions (keyed ``path#<session>``), a sub-agent's
file that belongs to its parent, a file that is part of another file's session (a Gemini CLI
resume's stub), or something no loader recognises is decided by the worker that reads it
(:func:`turnfold.corpus.summarize.examine`).
"""

from __future__ import annotations

import fnmatch
import glob as globbing
import itertools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import TYPE_CHECKING, Any

from turnfold.caches import INDEX_NAME
from turnfold.corpus.runs import Span
from turnfold.formats import gemini, tables
from turnfold.formats.agents import cline, copilot, crush, kimi, kimi_cli, opencode
from turnfold.formats.compressed import candidate_names
from turnfold.formats.credentials import (
    Credentials,
    covered_like,
    is_credentials,
    keeper_of,
    keepers,
    named_like,
    never_opened,
)
from turnfold.formats.frameworks import (
    adk_db,
    agno_db,
    crewai,
    langgraph_checkpoints,
    openai_agents_db,
    strands_session,
)
from turnfold.formats.harnesses import atif, openhands, openhands_sdk
from turnfold.formats.harnesses.inspect_log import Samples
from turnfold.formats.source import expanded, json_object_file
from turnfold.formats.tables import ARROW_SUFFIXES, TABLE_SUFFIXES, Rows
from turnfold.formats.tables import PARQUET_SUFFIXES as PARQUET_SUFFIXES
from turnfold.formats.traces import mlflow
from turnfold.userwarn import warn_at_caller

if TYPE_CHECKING:
    import pyarrow as pa

#: Files worth opening: every loader reads JSON lines or one JSON document, compressed or not
#: (``rollouts.jsonl.gz``), or an Inspect ``.eval`` zip (one item per sample and epoch, listed
#: by the worker that opens it: H-1). Anything else in a walked folder is counted as skipped
#: without being opened (C-7).
CANDIDATE_SUFFIXES = (*candidate_names((".jsonl", ".json", ".ndjson", ".traj")), ".eval")
#: Archives that may hold OpenHands sessions (a session folder kept as a ``.tar.gz``, the agent
#: server's trajectory ``.zip``): each is a candidate, one row per session in it, told by the
#: worker from a few of its members' names; an archive of anything else is skipped unread.
ARCHIVE_SUFFIXES = (*candidate_names((".tar",)), ".tgz", ".zip")
#: The databases of sessions of a fixed name (OpenCode's ``opencode.db``, Crush's ``crush.db``,
#: MLflow's ``mlflow.db``): each module has ``NAME``, ``DATABASE`` (the file's name),
#: ``detect_path`` and ``sessions(path)`` (the top-level sessions' ids and titles). A scan makes
#: one item per session of each, listed by the worker that opens the database.
NAMED_DATABASES = (opencode, crush, mlflow)
#: Databases of sessions of no fixed name (any file its user names: Agno's ``SqliteDb``,
#: LangGraph's ``SqliteSaver``, the Agents SDK's ``SQLiteSession``, ADK's
#: ``DatabaseSessionService``), each told by its tables' columns, with ``NAME``,
#: ``detect_path`` and ``sessions(path)``: every file of :data:`DATABASE_SUFFIXES` in a
#: walked folder is a candidate, which the worker that opens it (read only, its header first)
#: finds one of these, or skipped; the index keeps that verdict, so an unchanged one is not
#: opened again.
NAMELESS_DATABASES = (agno_db, langgraph_checkpoints, openai_agents_db, adk_db)
DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
#: What SQLite keeps beside a database while it is written (``<name>-wal``, its write-ahead
#: log; ``-shm``, that log's index; ``-journal``, its rollback journal): parts of the
#: database, read with it, so neither items nor skipped files.
DATABASE_PARTS = ("-wal", "-shm", "-journal")
SESSION_DATABASES = (*NAMED_DATABASES, *NAMELESS_DATABASES)
#: Text files a format tells by their first line, whatever their name: CrewAI's text log
#: (``output_log_file=True`` writes ``logs.txt`` where the crew ran, a name not ending in
#: ``.json`` ``<name>.txt``, ``FileHandler``). Each is a candidate, unopened here: the worker
#: looks at its first bytes (:func:`turnfold.formats.frameworks.crewai.detect_path`), another
#: program's is skipped, not an error row (C-7), and the index keeps that verdict, so an
#: unchanged one is not opened again (C-4).
TEXT_SUFFIXES = (".txt",)
#: Files worth opening by their name alone, hidden or not: aider's chat history (Markdown, in
#: the folder aider ran in; its ``--chat-history-file`` default, ``aider/args.py``) and the
#: databases of sessions.
CANDIDATE_NAMES = frozenset({
    ".aider.chat.history.md", *(m.DATABASE for m in NAMED_DATABASES), opencode.KILO_DATABASE,
})  # fmt: skip
#: Hidden folders the agents keep their sessions in, walked like any other (a project's
#: ``.gemini/tmp``, a home folder's ``.claude/projects``, ``.codex/sessions``…); other hidden
#: folders (``.git``, ``.venv``, caches) are not.
AGENT_FOLDERS = frozenset({
    ".claude", ".codex", ".gemini", ".qwen", ".cline", ".openhands", ".cursor", ".aider",
    ".copilot", ".crush", ".continue", ".kimi-code", ".kimi",
})  # fmt: skip
#: A home folder's data folder (the XDG default of ``$XDG_DATA_HOME``), and the agents' folders
#: in it a walk enters: OpenCode's ``opencode/`` (``opencode.db``, ``storage/`` before 1.2),
#: Kilo Code's ``kilo/`` (``kilo.db``) and Crush's ``crush/`` (``crush server`` works in it:
#: its ``.crush/crush.db``, charmbracelet/crush ``GlobalWorkspaceDir``). Nothing else of
#: ``.local`` is walked or counted: it holds every installed program's and application's
#: files, no agent's sessions.
DATA_HOME = (".local", "share")
DATA_FOLDERS = frozenset({"opencode", "kilo", "crush"})
#: Where each of those three writes instead when it is set: OpenCode's and Kilo Code's
#: ``Global.Path.data`` is xdg-basedir's ``xdgData`` (``$XDG_DATA_HOME``, else
#: ``~/.local/share``) joined with ``opencode`` or ``kilo``; Crush's ``GlobalConfigData`` and
#: ``GlobalWorkspaceDir`` are under ``$XDG_DATA_HOME/crush`` (charmbracelet/crush
#: ``internal/config/load.go``). A scan of the home walks its agents' folders there too.
XDG_DATA_HOME = "XDG_DATA_HOME"
#: OpenCode's and Kilo Code's data folders, as keepers of no file yet (:data:`AGENT_FILES`
#: names their files): a folder ``opencode`` or ``kilo`` only right in a data home, where
#: ``Global.Path.data`` puts it, since a project's folder may have either name. Files in a
#: project's ``opencode/`` named as OpenCode's own are read as any.
OPENCODE_DATA_FOLDER, KILO_DATA_FOLDER = (
    Credentials(folders=frozenset({name}), files=frozenset(),
                parents=frozenset({"/".join(DATA_HOME)}),
                parent_variables=frozenset({XDG_DATA_HOME}))
    for name in ("opencode", "kilo")
)  # fmt: skip
#: OpenCode's cache folder: ``Global.Path.cache`` is ``$XDG_CACHE_HOME`` (else ``~/.cache``)
#: joined with ``opencode`` (the ``opencode`` binary 1.18.33 of tests/agents), where it keeps
#: remote skills (``skills/<skill>/``), updating each by a move of the whole folder.
OPENCODE_CACHE_FOLDER = Credentials(folders=frozenset({"opencode"}), files=frozenset(),
                                    parents=frozenset({".cache"}),
                                    parent_variables=frozenset({"XDG_CACHE_HOME"}))  # fmt: skip
#: Crush's own data folder when it is set, checked before ``$XDG_DATA_HOME``: the folder
#: itself, not a parent (``GlobalConfigData`` is ``$CRUSH_GLOBAL_DATA/crush.json``, and
#: ``crush server``'s workspace, ``GlobalWorkspaceDir``, its folder: charmbracelet/crush
#: ``internal/config/load.go``). A scan of the home walks it too, as it walks Crush's folder
#: of ``$XDG_DATA_HOME``.
CRUSH_GLOBAL_DATA = "CRUSH_GLOBAL_DATA"
#: Claude Code's folder when it is set, ``~/.claude`` moved whole, its ``projects/`` with it
#: (``CLAUDE_CONFIG_DIR || ~/.claude``, the ``claude`` binary of @anthropic-ai/claude-code): a
#: scan of the home walks it too, as it walks ``~/.claude``.
CLAUDE_CONFIG_DIR = "CLAUDE_CONFIG_DIR"
#: Every variable that moves an agent's folder of sessions out of the home folder's own, with
#: the folder under the one it names that is the agent's (``""``: that folder itself). A scan
#: of the home walks each one set to an absolute path that a walk of the home does not meet
#: (:func:`_data_folders_elsewhere`); the tool's credentials there are named by its reader's
#: ``CREDENTIALS`` (its ``variables``, or the folder's name), so none is opened. Each as the
#: tool reads it:
#:
#: - ``$CODEX_HOME``: ``~/.codex`` under any name, ``sessions/`` in it (``find_codex_home``,
#:   openai/codex);
#: - ``$QWEN_HOME``: ``~/.qwen`` (``Storage.getGlobalQwenDir``), and ``$QWEN_RUNTIME_DIR``,
#:   where the sessions go instead when it is set (``Storage.getRuntimeBaseDir``:
#:   ``projects/<project>/chats/``; no credentials there), ``@qwen-code/qwen-code`` 0.24.4;
#: - ``$GEMINI_CLI_HOME``: the home folder as Gemini CLI sees it (``homedir()``,
#:   ``@google/gemini-cli`` 0.61.0), of which only ``.gemini`` is Gemini CLI's;
#: - ``$CONTINUE_GLOBAL_DIR``: ``~/.continue`` (``getContinueGlobalPath``, continuedev/continue
#:   ``core/util/paths.ts``), ``sessions/`` in it;
#: - ``$OPENHANDS_PERSISTENCE_DIR``: the OpenHands CLI's ``~/.openhands``
#:   (``get_persistence_dir``, OpenHands-CLI ``openhands_cli/locations.py``), ``conversations/``;
#: - ``$KIMI_CODE_HOME``: ``~/.kimi-code`` (``defaultKimiHome``, ``@moonshot-ai/kimi-code``
#:   2.1.0), and ``$KIMI_SHARE_DIR``: the Kimi CLI's ``~/.kimi`` (``resolveLegacySourceHome``
#:   there, as kimi-cli wrote it), ``sessions/`` in each;
#: - ``$COPILOT_HOME``: ``~/.copilot`` (``@github/copilot`` 1.0.102), ``session-state/``;
#: - ``$CLINE_DIR``: ``~/.cline``, of which only ``data/`` holds sessions (its ``sessions/``,
#:   a 2.x CLI's ``tasks/``), ``$CLINE_DATA_DIR``: that ``data/`` folder, and
#:   ``$CLINE_SESSION_DATA_DIR``: its ``sessions/`` (``resolveClineDir``,
#:   ``resolveClineDataDir``, ``resolveSessionDataDir`` of ``@cline/shared``, cline/cline
#:   ``sdk/packages/shared/src/storage/paths.ts``);
#: - ``$CLAUDE_CONFIG_DIR`` and ``$CRUSH_GLOBAL_DATA``, above.
#:
#: OpenCode's and Kilo Code's folder moves only with ``$XDG_DATA_HOME`` (:data:`XDG_DATA_HOME`).
MOVED_HOMES: tuple[tuple[str, str], ...] = (
    (CLAUDE_CONFIG_DIR, ""), ("CODEX_HOME", ""), ("QWEN_HOME", ""), ("QWEN_RUNTIME_DIR", ""),
    ("GEMINI_CLI_HOME", ".gemini"), ("CONTINUE_GLOBAL_DIR", ""),
    ("OPENHANDS_PERSISTENCE_DIR", ""), ("KIMI_CODE_HOME", ""), ("KIMI_SHARE_DIR", ""),
    ("COPILOT_HOME", ""), ("CLINE_DIR", "data"), ("CLINE_DATA_DIR", ""),
    ("CLINE_SESSION_DATA_DIR", ""), (CRUSH_GLOBAL_DATA, ""),
)  # fmt: skip
#: The files the agents keep their keys and tokens in, in the folders a walk enters, each
#: named by its reader (:class:`~turnfold.formats.credentials.Credentials`): passed over by
#: name, never opened, and not counted as skipped files.
CREDENTIALS = tuple(keeper for _, keeper in keepers())
#: The agents' own files in their folders that hold no session, named as credentials are (the
#: same patterns): a walk passes them over by name, never opening them, and counts none as a
#: skipped file (C-7): ``corpus.skipped`` counts what might have been a session and could not
#: be read, not the tool's bookkeeping, as a Copilot session folder's ``workspace.yaml`` is not.
#: A folder all of whose files are an agent's own or its credentials (a pattern ending in
#: ``/**``: ``cache/**``, a plugin's bundle of ``plugins/cache/**``) is not entered at all
#: (:func:`_passed_over_folder`). The copy an interrupted atomic write leaves beside the file it
#: was to replace (``config.toml.tmp.<pid>.<hex>``: each agent's names,
#: :func:`~turnfold.formats.credentials.replaced_names`) is the agent's own anywhere in its
#: folder (``temporaries``), whatever file it replaces, as is every file of a folder an atomic
#: move of a whole folder leaves there (OpenCode's ``<skill>.tmp-<uuid>/``, not entered), and
#: a credential where the file it replaces is one
#: (:class:`~turnfold.formats.credentials.Credentials`): never opened either way.
#: The prompt histories hold every prompt the user typed. A file the user names (a path, a
#: pattern's match) is read as any other. Each as the pinned CLI of tests/agents wrote it in a
#: run of its scenarios there (interactive too, for Gemini CLI's and Qwen Code's checkpoints),
#: or as its bundle writes it where the name says so:
#:
#: - GitHub Copilot CLI 1.0.102, ``~/.copilot`` (``$COPILOT_HOME``): the prompt history
#:   ``command-history-state.json`` (``command-history-state`` before 1.0, both in the XDG
#:   migration's list of ``cli-main.js``), its session index ``session-store.db`` (each turn's
#:   prompt and reply again), the open and sidebar sessions' lists, its logs and lock files
#:   (each as the real CLI wrote them, tests/fixtures/copilot/home-files);
#: - Claude Code and Codex CLI, ``~/.claude`` and ``~/.codex`` (``$CLAUDE_CONFIG_DIR``,
#:   ``$CODEX_HOME``): the prompt history ``history.jsonl`` (in the ``claude`` binary 2.1.332 and
#:   the ``codex`` binary 0.171.0 of tests/agents; Claude Code lists it among its own
#:   sensitive files);
#: - Claude Code 2.1.332, ``~/.claude``: its debug log ``debug/<session>.txt``
#:   (``defaultLogPath``); the todo lists ``todos/<session>-agent-<id>.json`` older versions
#:   wrote (2.1.332 writes none, and clears the folder among its own: ``todos``, ``statsig``,
#:   ``logs``); a session's long tool results ``projects/<project>/<session>/tool-results/
#:   <id>.txt`` (or ``.json``: ``tool-results`` beside the session's folder of sub-agents); a
#:   the running sessions' ``sessions/<pid>.json``; the backups of edited files
#:   ``file-history/<session>/<hash>@v<n>``, the shell's ``shell-snapshots/`` and the hooks'
#:   ``session-env/<session>/`` (its own folders ``shell-snapshots``, ``session-env``,
#:   ``file-history``); ``stats-cache.json``; the auto memory ``projects/<project>/memory/*.md``
#:   (``MEMORY.md`` and the notes it indexes); ``plugins/`` (``$CLAUDE_CODE_PLUGIN_CACHE_DIR``
#:   aside): the plugins' ``installed_plugins.json``, the marketplaces' clones
#:   ``marketplaces/``, the installed bundles ``cache/``, each plugin's ``data/`` and its store
#:   ``store/<plugin>-<hash>.json`` (``$.store``, ``usage-rows-queued``); a plugin's secrets are
#:   not there but in the credentials' store (``pluginSecrets``); the whole folder;
#: - Claude Code, ``~/.claude``, as its bundle writes them: plan mode's plans
#:   ``plans/<slug>.md`` and a sub-agent's ``plans/<slug>-agent-<id>.md`` (``Re(qh(),
#:   `${o}.md`)``, the ``claude`` binary 2.1.332); pasted text ``paste-cache/<hash>.txt``
#:   (16 hex digits of its SHA-256: ``paste-cache``, 2.1.332); pasted images
#:   ``image-cache/<session>/<id>.<png|jpeg…>`` (``w96``, ``cli.js`` 2.1.56; 2.1.332 writes
#:   none there, only clears the folder, keeping them in the temp folder below); the user's
#:   sub-agent definitions ``agents/**/*.md`` (``/agents`` writes ``agents/<name>.md``; they
#:   are read at any depth, ``rg --files --glob *.md``), the whole folder, which is Claude
#:   Code's: not the sub-agents' transcripts,
#:   ``projects/<project>/<session>/subagents/agent-<id>.jsonl``, read as ever;
#: - Claude Code 2.1.332, ``~/.claude``, as its binary writes them (most named so by its
#:   clean-up of old files too): the task lists ``tasks/<list>/<id>.json`` (``join(configDir,
#:   "tasks", listId)``, ``${taskId}.json``); an agent team's ``teams/<team>/config.json`` and
#:   its members' inboxes ``teams/<team>/inboxes/<agent>.json`` (``[TeammateMailbox]``); the
#:   background jobs' ``jobs/pins.json`` and, in ``jobs/<job>/``, ``state.json``,
#:   ``adopt.json``, ``order``, ``stateOrder``, ``group``, ``recap.trigger`` and ``tmp/``
#:   (its pasted images, and what the background session writes there), but not
#:   ``parent-transcript.jsonl``, the copy of the session a job was forked from, which is a
#:   transcript and read as any; ``/insights``' ``usage-data/`` (``facets/<session>.json``,
#:   ``session-meta/<session>.json``, ``report-<…>.html``); unsent telemetry
#:   ``telemetry/*.json`` and ``telemetry/runs/*.json``; ``traces/*.json``,
#:   ``startup-perf/*.txt`` and ``*.json``; ``mcp-discovery-cache/<key>.json``,
#:   ``mcp-needs-auth-cache.json`` and ``state/*.json``; ``cache/`` (``changelog.md``,
#:   ``model-capabilities.json``…); and ``local/``, the npm install of itself it keeps there
#:   (``package.json``, ``node_modules/``…);
#: - Claude Code 2.1.332, ``~/.claude`` (and a project's ``.claude``), as its binary names
#:   them: ``shares/*.zip``, which its clean-up deletes with their ``.zip.tmp.<…>`` copies
#:   after ``cleanupPeriodDays`` (no code of 2.1.332 writes one; turnfold reads no Claude Code
#:   session out of a zip); the files claude.ai hands a session, ``uploads/<session>/…``
#:   (``join(configDir, "uploads")``: the user's own attachments, copied); the requests'
#:   bodies a build with prompt dumps on writes, ``dump-prompts/<session or agent>.jsonl``
#:   (its ``apiDump`` channel; the public build's writer is empty), the requests of a session
#:   whose transcript is in ``projects/``, no headers, so no key; and the sub-agents' memory,
#:   ``agent-memory/<agent type>/`` (``user`` scope, ``~/.claude``; ``project`` scope, a
#:   project's ``.claude``) and ``agent-memory-local/<agent type>/`` (``local`` scope),
#:   Markdown notes as ``projects/<project>/memory/`` holds. Not ``remote-control/``: its
#:   ``fork-seeds/<session>.json`` (``{version, parentSessionId, createdAt, messages}``, the
#:   messages a Remote Control fork starts from, which the fork's own ``.jsonl`` never holds,
#:   maybe a cloud session's) is a session, read as Claude Code's
#:   (:data:`turnfold.formats.claude_code.FORK_SEED`);
#: - Codex CLI 0.171.0, ``~/.codex``: ``installation_id``; its databases ``state_5.sqlite``
#:   (the threads' index), ``logs_2.sqlite``, ``goals_1.sqlite``, ``queue_1.sqlite``,
#:   ``memories_1.sqlite``, ``memories_v2_1.sqlite`` and ``thread_history_1.sqlite`` (the
#:   rollouts' items again), named so in the binary; ``tmp/`` (its helpers' links to itself,
#:   ``tmp/arg0-linux/codex-arg0<random>/apply_patch``…); ``shell_snapshots/``;
#:   ``log/codex-tui.log``, ``version.json`` and ``models_cache.json``;
#: - Codex CLI 0.171.0, ``~/.codex``, as the binary writes them: ``cache/``, its caches'
#:   folder (named so in the binary), of JSON documents named by a hash of their key
#:   (``cache/codex_app_directory``, ``cache/codex_apps_tools``, ``cache/codex_apps_server_info``:
#:   ``<sha1>.json``, openai/codex ``codex-rs/connectors/src/directory_cache.rs``,
#:   ``connector_runtime/persistence.rs``; ``cache/remote_plugin_catalog/<fnv-1a>.json``), and
#:   the pets' pictures ``cache/tui-pets/v1/assets/*.webp`` (``PET_PACK_DIR``): the whole folder;
#:   and the installed plugins' bundles ``plugins/cache/<marketplace>/<plugin>/<version>/``
#:   (``PLUGINS_CACHE_DIR``, ``plugins/cache`` in the binary; openai/codex
#:   ``codex-rs/core-plugins/src/store.rs``), copies of the plugins' own files; and the
#:   plugins' own data, ``plugins/data/<plugin>-<marketplace>/`` (``PLUGINS_DATA_DIR``,
#:   ``plugins/data`` in the binary; ``codex-rs/core-plugins/src/data_store.rs``: the folder
#:   each plugin's hooks may write in);
#: - Gemini CLI 0.61.0 and Qwen Code 0.24.4, ``~/.gemini`` and ``~/.qwen`` (``$QWEN_HOME``,
#:   ``$QWEN_RUNTIME_DIR``): the prompt log ``tmp/<project>/logs.json`` (``Logger``'s
#:   ``logs.json`` in ``getProjectTempDir()``); the shell mode's history
#:   ``tmp/<project>/shell_history`` (``getHistoryFilePath``); the ``/restore`` checkpoints
#:   ``tmp/<project>/checkpoints/<time>-<file>-<tool>.json`` written before each edit the user
#:   approves (``getProjectTempCheckpointsDir``): each the session up to that call again, which
#:   a load of one reads (:mod:`turnfold.formats.gemini_checkpoint`), a scan not;
#: - Gemini CLI 0.61.0, ``~/.gemini``: its list of projects ``projects.json``
#:   (``ProjectRegistry``) and of trusted folders ``trustedFolders.json``
#:   (``getTrustedFoldersPath``); ``installation_id`` (``getInstallationIdPath``); the UI's
#:   ``state.json`` (``PersistentState``); long tool outputs ``tmp/<project>/tool-outputs/
#:   session-<id>/<tool>__<call>.txt`` (``TOOL_OUTPUTS_DIR``); ``tmp/bin/`` (``getGlobalBinDir``,
#:   the ripgrep it fetches); as its bundle writes them, a session's plans
#:   ``tmp/<project>/<session>/plans/`` (``getProjectTempPlansDir``: Markdown files of the names
#:   the model gives, under it at any depth) and its task tracker's tasks
#:   ``tmp/<project>/<session>/tracker/<6 hex digits>.json`` (``getProjectTempTrackerDir``,
#:   ``TrackerService.saveTask``), each in ``tmp/<project>/`` itself when the storage has no
#:   session; its ``tasks/`` (``getProjectTempTasksDir``) is named but written by nothing, so
#:   no name of it is passed over;
#: - Qwen Code 0.24.4, ``~/.qwen``: ``output-language.md`` (``LLM_OUTPUT_LANGUAGE_RULE_FILENAME``),
#:   ``usage_record.jsonl``, ``tip_history.json``, ``extensions/extension-enablement.json``,
#:   ``extension-store/state.json`` and its ``lock``; a long tool output kept whole,
#:   ``tmp/<project>/<tool>_<call>.output``; a running session's
#:   ``projects/<project>/chats/<session>.runtime.json`` (``getRuntimeStatusPath``); the auto
#:   memory, ``memories/*.md`` and ``projects/<project>/memory/*.md`` with the project's
#:   ``meta.json``, ``extract-cursor.json`` and ``consolidation.lock``; the backups of edited
#:   files ``file-history/<session>/<hash>@v<n>`` (``FILE_HISTORY_DIR``); as its bundle writes
#:   them, plan mode's plans ``plans/<session>.md`` and an agent's ``plans/<session>-<agent>.md``
#:   (``Storage.getPlanFilePath``, ``createPerAgentConfig``: ``getPlansDir()`` is ``plans`` of
#:   the folder unless ``plansDirectory`` puts them in the project);
#: - Cline CLI 3.0.65 (``@cline/core`` 0.0.86), ``~/.cline/data`` (``$CLINE_DIR``,
#:   ``$CLINE_DATA_DIR``): its database of sessions' processes and schedules ``db/sessions.db``
#:   (no message: the messages are the session files'), of teams ``db/teams.db``,
#:   ``cache/feature-flags.json``, ``settings/global-settings.json`` and ``logs/``
#:   (``cline.log``, ``hooks.jsonl``, ``connectors/``);
#: - OpenCode 1.18.33, its data folder ``opencode`` (``Global.Path.data``): ``log/*.log``,
#:   ``tool-output/tool_<id>`` (long outputs kept whole) and ``snapshot/`` (the git objects of
#:   its undo points); and, in its cache folder ``opencode`` (``Global.Path.cache``:
#:   ``$XDG_CACHE_HOME``, else ``~/.cache``, joined with ``opencode``), the folders a remote
#:   skill's update leaves when cut short, ``skills/<skill>.tmp-<uuid>/`` (the new version)
#:   and ``skills/<skill>.old-<uuid>/`` (the old one moved aside: ``Discovery.pull``,
#:   anomalyco/opencode ``packages/opencode/src/skill/discovery.ts``), by the rule of every
#:   agent's folder below (``temporaries``). Only where OpenCode puts those folders
#:   (:data:`OPENCODE_DATA_FOLDER`, :data:`OPENCODE_CACHE_FOLDER`): a project's folder may be
#:   called ``opencode``;
#: - Continue CLI 1.5.47, ``~/.continue`` (``$CONTINUE_GLOBAL_DIR``): ``permissions.yaml``,
#:   ``logs/cn.log`` and the sessions' index ``sessions/sessions.json``;
#: - Kimi Code 2.1.0, ``~/.kimi-code`` (``$KIMI_CODE_HOME``): ``device_id``,
#:   ``session_index.jsonl``, ``workspaces.json``, ``cache/`` (its query store),
#:   ``file-history/<workspace>`` (the retention list of its backups) and ``logs/*.log``; as
#:   its ``dist/main.mjs`` writes them, the terminal UI's preferences ``tui.toml``
#:   (``getTuiConfigPath``, ``renderTuiConfig``: theme, editor, notifications), the user's
#:   skills ``skills/<skill>/`` (``SKILL.md`` and its files, the ``kimi-webbridge`` plugin's
#:   among them), the local server's ``server/`` (the ``lock`` of ``kimi server``, the running
#:   servers' ``instances/<id>.json``, Remote Control's ``rc.json``: pids, ports, the relay's
#:   link, and ``events/<session>.jsonl``, the events it sent its web clients, a copy of what
#:   the session's journals hold), and the folders of the app's stores, ``blobs/`` (the
#:   media of messages offloaded by hash, ``AgentBlobServiceImpl``) and ``store/``
#:   (``BootstrapService.storeDir``, which nothing of 2.1.0 writes but its clients are told
#:   of), and the files handed to it, ``files/f_<uuid>`` with their list ``file/index.json``
#:   (``FileServiceImpl``'s scopes ``files`` and ``file``); not ``imported/``, the sessions its
#:   viewer imports, read as any; and, as ``dist/main.mjs`` writes them, the installed plugins,
#:   ``plugins/`` (their list ``installed.json``, ``writeInstalled``, and the copy of each
#:   plugin's folder ``managed/<id>/``, ``copyPluginToManagedRoot``), the tools it fetches,
#:   ``bin/`` (``getBinDir``: ``rg``, ``fd`` and ``fd``'s ``fd_extract_<pid>_…/`` while it
#:   unpacks, ``downloadFd``), the user's colour themes ``themes/<name>.json`` (read by
#:   ``getCustomThemesDir``, written by no code of it), and the skills its web bridge set aside,
#:   ``backups/kimi-webbridge-skills/migration-<random>/<label>/`` (``migrateStandaloneSkills``,
#:   moving ``skills/kimi-webbridge`` of ``~/.kimi-code`` and of ``~/.agents``): the one thing it
#:   writes in ``backups/``, so anything else there (no session is written there) is read as any;
#:   and, as ``dist/main.mjs`` writes them (``src/utils/paths.ts`` there), the shell's prompt
#:   history ``user-history/<md5 of the work folder>.jsonl`` (``{"content"}`` per prompt,
#:   ``getInputHistoryFile``, ``appendInputHistory``; ``kimi migrate`` copies the Kimi CLI's
#:   there too), the updater's ``updates/`` (``latest.json``, ``install.json``,
#:   ``install.lock`` and its ``install.lock.takeover``, ``rollout.log``,
#:   ``plugin-notices.json``: ``getUpdateStateFile``…), the survey's and the recommended
#:   effort's states ``feedback-survey-state.json`` and ``recommended-effort-state.json``,
#:   unsent telemetry ``telemetry/failed_<12 hex>.jsonl`` (``AsyncTransport.saveToDisk``), the
#:   rotated logs ``logs/<name>.log.<n>`` (``rotate()``), the global search's index
#:   ``search-index/`` (a MiniDb of the sessions' text, ``GlobalSearchService.indexDir``) and
#:   what a wipe of it leaves if its process ends between its two steps (the folder renamed
#:   ``search-index.wiping-<pid>-<uuid>``, then removed), and
#:   what ``kimi migrate`` writes: the Kimi CLI's plans copied to ``plans/<hero>.md``
#:   (``migratePlansStep``), ``migration-report.json``, ``migration-errors.log`` and
#:   ``tui.migrated-from-kimi-cli.toml`` (``writeReport``, ``writeMigrationErrorsLog``,
#:   ``siblingTuiToml``);
#: - the older Kimi CLI 1.52.0 (``kimi-cli``, PyPI), ``~/.kimi`` (``$KIMI_SHARE_DIR``): its list
#:   of work folders ``kimi.json`` and its log ``logs/kimi.log`` (rotated ``kimi.<time>.log``),
#:   as a run wrote them (tests/fixtures/kimi/legacy/home-files); as its source writes them,
#:   the shell's prompt history ``user-history/<md5 of the work folder>.jsonl`` (every prompt,
#:   ``ui/shell/prompt.py``), plan mode's ``plans/<hero>.md`` (always ``~/.kimi/plans``,
#:   ``tools/plan/heroes.py``), unsent telemetry ``telemetry/failed_<12 hex>.jsonl``, pasted
#:   images ``prompt-cache/images/<id>.png``, ``device_id``, ``kimi_code_tips.json``,
#:   ``latest_version.txt``, ``skipped_version.txt`` and ``bin/rg``; not ``imported_sessions/``,
#:   whose files are sessions;
#: - Kilo Code's CLI 7.7.9 (``@kilocode/cli``, a fork of OpenCode), its data folder ``kilo``: as
#:   a run wrote them (tests/fixtures/opencode/kilo/home-files), ``telemetry-id``,
#:   ``log/*.log``, ``tool-output/tool_<id>``, ``storage/migration`` and
#:   ``storage/session_diff/<session>.json`` (the files' diffs, no message); as its binary
#:   writes them, ``telemetry-profile.json``, the session export's ``session-export.db`` (one
#:   table, ``session_export_sequence``: a counter per session) and
#:   ``session-export-workspace.json``, ``retention/state.json``, ``snapshot/`` (as OpenCode's),
#:   background commands' logs ``log/background-process/<scope>/<id>.log`` and plan mode's
#:   ``plans/<time>-<slug>.md`` (a project with no git). Each by its exact name, and only in
#:   Kilo Code's data folder itself (:data:`KILO_DATA_FOLDER`), as a folder of any project may be
#:   called ``kilo`` (its checkouts of code: :data:`CHECKOUTS`). They matter where the
#:   folder is walked whole: its database elsewhere (``$KILO_DB``) or not made yet
#:   (:func:`turnfold.formats.agents.opencode.walked_folders`);
#: - in the system's temp folder (Node's ``os.tmpdir()``: ``$TMPDIR``, ``$TMP``, ``$TEMP`` or
#:   ``/tmp``; ``/var/folders/…/T`` on macOS, ``%TEMP%`` on Windows), which has no fixed name to
#:   anchor on: Gemini CLI 0.61.0's crash reports ``gemini-client-error-<context>-<time>.json``
#:   (``reportError``, ``packages/core/src/utils/errorReporting.ts``: the error and the request's
#:   contents, right in the temp folder), passed over by that name alone, which no other tool
#:   writes; Claude Code 2.1.332's background tasks' output
#:   ``claude-<uid>/<project>/<session>/tasks/<task>.output`` (``$CLAUDE_CODE_TMPDIR`` or the
#:   temp folder, then ``claude-${process.getuid()}``, the sanitized working folder, the
#:   session's id, ``tasks/`` and ``${taskId}.output``, in its binary), by those last names;
#:   and its pasted images ``claude-<uid>/<project>/<session>/images/<n>.<ext>`` (``images``
#:   under the same folder of the session: ``${e.id}.${ext}``, its clean-up's
#:   ``/^(\d+)\.[a-z]+$/``), by those.
#: Each agent's folder holds the copies its atomic writes leave too (``temporaries``), whatever
#: file they were to replace, and the folders its atomic moves of a whole folder leave
#: (OpenCode's ``<skill>.tmp-<uuid>/``: :func:`~turnfold.formats.credentials.is_temporary_folder`):
#: its own, as the folder's other files are.
AGENT_FILES = tuple(replace(keeper, temporaries=True) for keeper in (
    Credentials(
        folders=frozenset({".copilot"}),
        files=frozenset({
            "command-history-state.json", "command-history-state", "session-store.db",
            "open-sessions-state.json", "sidebar-sessions-state/*.json", "logs/*.log",
            "settings.json.lock", "config.json.trusted-folders.lock",
        }),
        variables=frozenset({"COPILOT_HOME"}),
    ),
    Credentials(
        folders=frozenset({".claude"}),
        files=frozenset({
            "history.jsonl", "debug/*.txt", "todos/*.json", "projects/*/*/tool-results/*",
            "plugins/**", "sessions/*.json", "file-history/**", "shell-snapshots/*",
            "session-env/**", "stats-cache.json", "projects/*/memory/*.md",
            "plans/*.md", "paste-cache/*.txt", "image-cache/*/*", "agents/**", "tasks/*/*.json",
            "teams/*/config.json", "teams/*/inboxes/*.json", "jobs/pins.json", "jobs/*/state.json",
            "jobs/*/adopt.json",
            "jobs/*/order", "jobs/*/stateOrder", "jobs/*/group", "jobs/*/recap.trigger",
            "jobs/*/tmp/**", "usage-data/**", "telemetry/*.json", "telemetry/runs/*.json",
            "traces/*.json", "startup-perf/*.txt", "startup-perf/*.json",
            "mcp-discovery-cache/*.json", "mcp-needs-auth-cache.json", "state/*.json",
            "cache/**", "local/**", "shares/*.zip", "uploads/**", "dump-prompts/*.jsonl",
            "agent-memory/**", "agent-memory-local/**",
        }),
        variables=frozenset({"CLAUDE_CONFIG_DIR"}),
    ),
    Credentials(
        folders=frozenset({".codex"}),
        files=frozenset({
            "history.jsonl", "installation_id", "state_5.sqlite", "logs_2.sqlite",
            "goals_1.sqlite", "queue_1.sqlite", "memories_1.sqlite", "memories_v2_1.sqlite",
            "thread_history_1.sqlite", "tmp/**", "shell_snapshots/*", "log/codex-tui.log",
            "version.json", "models_cache.json", "cache/**", "plugins/cache/**",
            "plugins/data/**",
        }),
        variables=frozenset({"CODEX_HOME"}),
    ),
    Credentials(
        folders=frozenset({".gemini"}),
        files=frozenset({
            "tmp/*/logs.json", "tmp/*/shell_history", "tmp/*/checkpoints/*.json",
            "projects.json", "trustedFolders.json", "installation_id", "state.json",
            "tmp/*/tool-outputs/**", "tmp/bin/*", "tmp/*/*/plans/**", "tmp/*/plans/**",
            "tmp/*/*/tracker/*.json", "tmp/*/tracker/*.json",
        }),
    ),
    Credentials(
        folders=frozenset({".qwen"}),
        files=frozenset({
            "tmp/*/logs.json", "tmp/*/shell_history", "tmp/*/checkpoints/*.json",
            "tmp/*/*.output", "output-language.md", "usage_record.jsonl", "tip_history.json",
            "extensions/extension-enablement.json", "extension-store/state.json",
            "extension-store/lock", "projects/*/chats/*.runtime.json", "memories/*.md",
            "projects/*/memory/*.md", "projects/*/meta.json", "projects/*/extract-cursor.json",
            "projects/*/consolidation.lock", "file-history/**", "plans/*.md",
        }),
        variables=frozenset({"QWEN_HOME", "QWEN_RUNTIME_DIR"}),
    ),
    Credentials(
        folders=frozenset({".cline"}),
        files=frozenset({
            f"{inner}{name}"
            for inner in ("data/", "")
            for name in (
                "db/sessions.db", "db/teams.db", "cache/feature-flags.json",
                "settings/global-settings.json", "logs/**",
            )
        }),
        variables=frozenset({"CLINE_DIR", "CLINE_DATA_DIR"}),
    ),
    replace(OPENCODE_DATA_FOLDER, files=frozenset({"log/*.log", "tool-output/*", "snapshot/**"})),
    OPENCODE_CACHE_FOLDER,
    Credentials(folders=frozenset({".continue"}),
                files=frozenset({"permissions.yaml", "logs/cn.log", "sessions/sessions.json"}),
                variables=frozenset({"CONTINUE_GLOBAL_DIR"})),
    Credentials(
        folders=frozenset({".kimi-code"}),
        files=frozenset({
            "device_id", "session_index.jsonl", "workspaces.json", "cache/**",
            "file-history/*", "logs/*.log", "tui.toml", "blobs/**", "store/**", "server/**",
            "skills/**", "files/**", "file/index.json", "plugins/**", "bin/**", "themes/*.json",
            "backups/kimi-webbridge-skills/**", "user-history/*.jsonl", "updates/latest.json",
            "updates/install.json", "updates/install.lock", "updates/install.lock.takeover",
            "updates/rollout.log", "updates/plugin-notices.json", "feedback-survey-state.json",
            "recommended-effort-state.json", "telemetry/failed_*.jsonl", "logs/*.log.[0-9]*",
            "search-index/**", "search-index.wiping-*/**", "plans/*.md", "migration-report.json",
            "migration-errors.log", "tui.migrated-from-kimi-cli.toml",
        }),
        variables=frozenset({"KIMI_CODE_HOME"}),
    ),
    Credentials(
        folders=frozenset({".kimi"}),
        files=frozenset({
            "kimi.json", "logs/*.log", "user-history/*.jsonl", "plans/*.md",
            "telemetry/failed_*.jsonl", "prompt-cache/images/*", "device_id",
            "kimi_code_tips.json", "latest_version.txt", "skipped_version.txt", "bin/*",
        }),
        variables=frozenset({"KIMI_SHARE_DIR"}),
    ),
    replace(
        KILO_DATA_FOLDER,
        files=frozenset({
            "telemetry-id", "telemetry-profile.json", "session-export.db",
            "session-export-workspace.json", "retention/state.json", "log/*.log",
            "log/background-process/*/*.log", "tool-output/tool_*", "snapshot/**",
            "storage/migration", "storage/session_diff/*.json", "plans/*.md",
        }),
    ),
    Credentials(folders=frozenset(), files=frozenset(),
                anywhere=frozenset({"gemini-client-error-*.json",
                                    "claude-*/*/*/tasks/*.output",
                                    "claude-*/*/*/images/[0-9]*"})),
))  # fmt: skip
_HIDDEN_WALKED = AGENT_FOLDERS | {DATA_HOME[0]}
#: Kilo Code's and OpenCode's folders of checkouts of code in their data folders
#: (``Global.Path.data``; the ``kilo`` binary of ``@kilocode/cli-linux-x64`` 7.7.9, the
#: ``opencode`` binary of ``opencode-ai`` 1.18.33): the git worktrees they make of the user's
#: project, ``worktree/<project id>/<name>/`` (``Worktree.makeWorktreeInfo``:
#: ``join(Path.data, "worktree", project.id)``), and the clones of repositories, Kilo's
#: ``repo_clone`` tool's and OpenCode's ``RepositoryCache``, ``repos/<host>/<owner>/<repo>/``
#: (``Path.repos``). A walk does not enter them: copies of code kept where their project is,
#: any file of which may be anything (its packages, its test data), none of them the agent's
#: sessions, which are in its database (found apart when it is elsewhere: ``$OPENCODE_DB``,
#: ``$KILO_DB``). Only in the data folder itself, ``kilo`` or ``opencode`` right in a data home
#: (:data:`KILO_DATA_FOLDER`, :data:`OPENCODE_DATA_FOLDER`): a project's folder may have either
#: name and hold a ``repos/`` of its own.
CHECKOUTS = frozenset({"worktree", "repos"})
_CHECKOUT_HOLDERS = {"kilo": KILO_DATA_FOLDER, "opencode": OPENCODE_DATA_FOLDER}


@dataclass(frozen=True)
class Item:
    """One thing a scan summarises: a session file, a row of a table, or a Transcript.

    Items are small and picklable (a path, or the messages of one trajectory), so they cross
    to worker processes and Dask workers cheaply; the transcript is built where the item is read.
    """

    key: str
    path: str | None = None
    sample: str | None = None
    format: str | None = None
    #: A trajectory's messages (a row of a table), when the item is not a file.
    messages: Any = None
    #: A Transcript handed to scan() as it is.
    transcript: Any = None
    size: int | None = None
    mtime_ns: int | None = None
    #: The inode's change time: a file rewritten to its old size with its modification time
    #: set back (``cp -p``, ``rsync -t``) keeps both, never this (C-4).
    ctime_ns: int | None = None
    #: ``format`` was read off the table's first trajectory, not given: a row it does not fit
    #: is detected on its own.
    format_guessed: bool = False
    #: The file grew since the scan's index saw it (a live agent's, spec C-4): it is read on
    #: from ``checkpoint`` (a pickled :class:`~turnfold.formats.resume.Checkpoint`), or whole
    #: and checkpointed for the next scan when there is none yet.
    grew: bool = False
    checkpoint: bytes | None = None
    #: A part of a large file, read by a worker of its own: of a file of runs or an eval
    #: output, its bytes (a file of runs' part keys its rows from ``#0``, and the scan
    #: renumbers them after the parts before it); of a Parquet file, its rows; of an eval
    #: log, its samples.
    part: Span | Rows | Samples | None = None
    #: The column of a Parquet file's trajectories: each of its rows is a run
    #: (``prompt+completion``, ``chosen+rejected``: a run split over columns, their names
    #: joined by ``+``, :func:`~turnfold.formats.tables.read_columns`).
    column: str | None = None

    def asked(self) -> str:
        """What a scan asked of the file, which the index's entry for it must match: its format
        (none: detected), and the column of a Parquet file's trajectories."""
        return (self.format or "") + (f"#{self.column}" if self.column is not None else "")


@dataclass
class Found:
    """The candidates of a source, and how many files were passed over unopened."""

    items: list[Item]
    skipped: int = 0
    #: The table files among those passed over (the shards of a dataset of trajectories:
    #: Parquet files, Arrow files, the shards of a dataset ``datasets`` saved).
    tables: list[str] = field(default_factory=list)
    #: Every file met so far (normalised): one named twice, or met again in a folder or by a
    #: glob (``runs/**`` matches the folders and their files), is one item, not two rows of
    #: one key.
    seen: set[str] = field(default_factory=set)
    #: The first test of whether a file may be credentials, asked of every file met: made
    #: when the scan starts, from the environment then (the variables that name one file).
    named_like_credentials: Callable[[str], bool] = field(
        default_factory=lambda: named_like(CREDENTIALS), repr=False, compare=False
    )
    #: The same test of whether a file may be an agent's own (:data:`AGENT_FILES`).
    named_like_agent_file: Callable[[str], bool] = field(
        default_factory=lambda: named_like(AGENT_FILES), repr=False, compare=False
    )
    #: The first test, by its name, of whether a folder holds nothing but an agent's own files
    #: or credentials (:func:`_passed_over_folder`).
    named_like_passed_over: Callable[[str], bool] = field(
        default_factory=lambda: covered_like((*CREDENTIALS, *AGENT_FILES)),
        repr=False,
        compare=False,
    )

    @property
    def parquet(self) -> list[str]:
        """:attr:`tables`, by the name it had when they were all Parquet files."""
        return self.tables

    def first_time(self, path: str) -> bool:
        """Whether ``path`` is met for the first time (and remember it)."""
        where = os.path.normpath(path)
        if where in self.seen:
            return False
        self.seen.add(where)
        return True


def file_item(path: str, format: str | None) -> Item | None:
    """The item of the file at ``path``; None for anything that is not a regular file."""
    try:
        stat = os.stat(path)
    except OSError:
        # Vanished between listing and stat, or unreadable: an error row says so (C-7).
        return Item(key=path, path=path, format=format)
    if not S_ISREG(stat.st_mode):
        # A named pipe, a socket or a device: reading one could wait for a writer forever, or
        # never end, and its size and time say nothing of what it holds.
        return None
    return Item(key=path, path=path, format=format, size=stat.st_size, mtime_ns=stat.st_mtime_ns,
                ctime_ns=stat.st_ctime_ns)  # fmt: skip


def _add_file(path: str, format: str | None, found: Found) -> None:
    if not found.first_time(path) or _no_item(path, found):
        return
    if path.endswith(TABLE_SUFFIXES):
        found.skipped += 1
        found.tables.append(path)
        return
    if not path.isascii() and not _is_text(path):
        # A name that is not UTF-8 (Python holds its bytes as lone surrogates) cannot be a key
        # of the index or of an Arrow table: the file is passed over, by name (C-7).
        found.skipped += 1
        shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        warn_at_caller(f"{shown}: skipped, its name is not UTF-8 text (rename the file to read it)")
        return
    item = file_item(path, format)
    if item is None:
        found.skipped += 1
    else:
        found.items.append(item)


def _no_item(path: str, found: Found) -> bool:
    """Whether the file at ``path`` is neither an item nor a skipped file, told without
    opening it: a database's part (:data:`DATABASE_PARTS`), or an agent's credentials in its
    folder (:data:`CREDENTIALS`), which no scan opens."""
    name = os.path.basename(path)
    base, dash, part = name.rpartition("-")
    if dash and f"-{part}" in DATABASE_PARTS and base.endswith(DATABASE_SUFFIXES):
        return True
    return found.named_like_credentials(path) and is_credentials(Path(path), CREDENTIALS)


def _agent_file(path: str, found: Found) -> bool:
    """Whether the file at ``path``, met in a walk, is an agent's own (:data:`AGENT_FILES`)."""
    return found.named_like_agent_file(path) and is_credentials(Path(path), AGENT_FILES)


def _passed_over_folder(path: str, found: Found) -> bool:
    """Whether every file under the folder at ``path``, met in a walk, is an agent's own or its
    credentials (:meth:`~turnfold.formats.credentials.Credentials.covers`): the walk does not
    enter it, as it would pass over each of its files, uncounted, one by one."""
    if not found.named_like_passed_over(os.path.basename(path)):
        return False
    folder = Path(path)
    return any(keeper.covers(folder) for keeper in (*CREDENTIALS, *AGENT_FILES))


def _is_text(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _walk(root: str, format: str | None, found: Found, links: _Links | None = None) -> None:
    """Every candidate of the folder ``root``, its links followed only where they stay inside
    it (:class:`_Links`); given a glob's ``links``, those inside are left for it to follow."""
    told, links = links is None, links or _Links(root)
    _walk_one(root, format, found, links)
    if told:
        _follow(links, format, found)
        links.warn(found)


def _follow(links: _Links, format: str | None, found: Found) -> None:
    """The links inside the folder met so far, after every folder was walked by its own name."""
    while links.folders:
        _walk_one(links.folders.pop(0), format, found, links)
    _add_linked_files(links, format, found)


def _add_linked_files(links: _Links, format: str | None, found: Found) -> None:
    """The linked files met so far whose targets were not met by their own names."""
    for path in links.files:
        if found.first_time(links.as_walked(path)):
            _add_file(path, format, found)
    links.files = []


class _Links:
    """The symbolic links a walk of ``top`` meets. One that leads out of the folder is not
    followed: a scan (and the site built from it, which publishes what it reads) covers the
    folder it was given, as ``find`` and ``rsync`` do by default, never a file elsewhere on
    the machine a link happens to point at; each is counted as skipped, the scan warns once
    naming them. One that stays inside is followed after the walk of the folders themselves,
    so a file or folder met by its own name and by a link is read once, by its own name, and
    a link back up the tree is no loop."""

    def __init__(self, top: str) -> None:
        self.top = os.path.realpath(top)
        self.root = top
        #: The real folders walked, by device and inode.
        self.walked: set[tuple[int, int]] = set()
        self.folders: list[str] = []
        self.files: list[str] = []
        self.outside: list[str] = []
        #: The folders the walk could not list, each with why.
        self.unlisted: list[str] = []

    def inside(self, path: str) -> bool:
        """Whether ``path``, its links followed, lies inside the scanned folder."""
        target = os.path.realpath(path)
        return target == self.top or target.startswith(self.top.rstrip(os.sep) + os.sep)

    def as_walked(self, path: str) -> str:
        """The path the walk would meet a linked file's target by (``found.seen``'s key)."""
        inner = os.path.relpath(os.path.realpath(path), self.top)
        return os.path.join(self.root, inner)

    def sort(self, folder: str, names: list[str], found: Found, into: list[str]) -> list[str]:
        """``names`` in ``folder`` that are no links; a link among them is put in ``into``
        (to follow later) or, leading out of the folder, counted as skipped."""
        kept = []
        for name in names:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                kept.append(name)
            elif self.inside(path):
                into.append(path)
            elif found.first_time(path):
                found.skipped += 1
                self.outside.append(path)
        return kept

    def not_listed(self, error: OSError, found: Found) -> None:
        """``os.walk``'s ``onerror``: a folder it cannot list (permission denied) holds files
        that are no rows, so it is counted as skipped and the scan warns naming it (C-7); a walk
        passed it over in silence. One gone since its parent was listed held nothing to read."""
        if isinstance(error, FileNotFoundError):
            return
        where = error.filename or self.root
        if found.first_time(where):
            found.skipped += 1
            self.unlisted.append(f"{where} ({error.strerror or error})")

    def warn(self, found: Found) -> None:
        if self.unlisted:
            count = len(self.unlisted)
            named = "; ".join(self.unlisted[:3]) + ("; …" if count > 3 else "")
            folders, them = ("a folder", "it") if count == 1 else (f"{count} folders", "them")
            warn_at_caller(f"{self.root}: skipped {folders} that could not be listed ({named}); "
                           f"no session in {them} is read")  # fmt: skip
        if not self.outside:
            return
        named = ", ".join(self.outside[:3]) + (", …" if len(self.outside) > 3 else "")
        count = len(self.outside)
        links = "a link" if count == 1 else f"{count} links"
        where = "the place it leads to" if count == 1 else "the places they lead to"
        warn_at_caller(f"{self.root}: skipped {links} leading out of the folder, not followed "
                       f"({named}); scan {where} to read them")  # fmt: skip


def _walk_one(start: str, format: str | None, found: Found, links: _Links) -> None:
    for folder, dirs, files in os.walk(start, onerror=lambda e: links.not_listed(e, found)):
        try:
            real = os.stat(folder)
        except OSError:
            dirs.clear()
            continue
        if (real.st_dev, real.st_ino) in links.walked:
            dirs.clear()
            continue
        links.walked.add((real.st_dev, real.st_ino))
        # Sorted, so rows come in the same order on every machine; hidden folders (.git, caches)
        # hold no sessions, but for the agents' own and a home's data folder.
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") or d in _HIDDEN_WALKED)
        dirs[:] = [d for d in dirs if not _passed_over_folder(os.path.join(folder, d), found)]
        holder = _CHECKOUT_HOLDERS.get(os.path.basename(folder))
        if holder is not None and holder.is_folder(Path(folder)):
            dirs[:] = [d for d in dirs if d not in CHECKOUTS]
        entered = _data_home_step(folder, start)
        if entered is not None:
            # On the way to the agents' folders of ``.local/share``: no other folder or file.
            dirs[:] = [d for d in dirs if d in entered]
            files = []
        if openhands_sdk.BASE_STATE in files and openhands_sdk.EVENTS in dirs:
            # An OpenHands SDK conversation: one item, its state file, whose loader reads the
            # events and sub-agents' conversations beside it (one file each: never a row each).
            dirs.clear()
            files = [openhands_sdk.BASE_STATE]
        elif (
            openhands.SESSION_METADATA in files
            and openhands.SESSION_EVENTS in dirs
            and openhands.session_of(Path(folder, openhands.SESSION_METADATA)) is not None
        ):
            # An OpenHands V0 session: one item, its metadata.json, whose loader reads the
            # event files (one file an event: never a row each).
            dirs.clear()
            files = [openhands.SESSION_METADATA]
        elif exported := openhands_sdk.exported_files(files):
            # The OpenHands app server's export, unzipped: one item (its meta.json, else its
            # first event file), whose loader reads the event files beside it (never a row
            # each); the folder's other files and folders are walked as any.
            read_with = set(exported[1:])
            files = [name for name in files if name not in read_with]
        elif copilot.is_session_folder(files, dirs):
            # A Copilot CLI session: one item, its events.jsonl; the rest of the folder is the
            # CLI's own (workspace.yaml, checkpoints, rewind snapshots, files it saved).
            dirs.clear()
            files = [copilot.EVENTS]
        elif kimi.is_session_folder(Path(folder), files, dirs):
            # A Kimi Code session: one item, its lead agent's journal, whose loader reads its
            # sub-agents' journals; state.json and the rest are the CLI's own.
            dirs.clear()
            files = [kimi.MAIN_JOURNAL]
        elif strands_session.is_session_folder(Path(folder), files, dirs):
            # A Strands FileSessionManager session: one item, its session.json, whose loader
            # reads its agents' message files (one file a message: never a row each).
            dirs.clear()
            files = [strands_session.SESSION_FILE]
        elif kimi_cli.is_session_folder(files):
            # An older Kimi CLI session: one item, its context.jsonl, whose loader reads the
            # wire.jsonl beside it (sub-agents' events included); subagents/ holds their copies.
            dirs.clear()
            files = [kimi_cli.CONTEXT]
        elif (walked := opencode.walked_folders(Path(folder), files, dirs)) is not None:
            # OpenCode's data folder, or its storage/: only the folders that hold sessions.
            dirs[:] = walked
        saved = tables.saved_dataset(Path(folder), files)
        if saved is not None:
            # A dataset ``datasets`` saved: a DatasetDict's splits in its order (train before
            # test); a Dataset's shards, in its state's order, a table of runs as Parquet
            # shards are (one named but missing says so when read). Their state, info and list
            # of splits are the dataset's own: neither read nor skipped.
            dirs.sort(key=lambda d: saved.splits.index(d) if d in saved.splits else len(dirs))
            gone = [split for split in saved.splits if split not in dirs]
            if gone:
                named = ", ".join(repr(split) for split in gone)
                warn_at_caller(f"{folder}: its {tables.DATASET_DICT} names splits that have no "
                               f"folder here ({named}): their runs are not read")  # fmt: skip
            for name in saved.shards:
                if links.sort(folder, [name], found, links.files):
                    _add_file(os.path.join(folder, name), format, found)
            files = [name for name in files if name not in saved.own and name not in saved.shards]
        dirs[:] = links.sort(folder, dirs, found, links.folders)
        for name in sorted(files):
            if name.startswith(".") and name not in CANDIDATE_NAMES:
                continue
            path = os.path.join(folder, name)
            if _no_item(path, found) or _agent_file(path, found):
                continue
            suffixes = CANDIDATE_SUFFIXES + TABLE_SUFFIXES + DATABASE_SUFFIXES
            if format in (None, openhands.NAME):  # no other format reads an archive
                suffixes += ARCHIVE_SUFFIXES
            if format in (None, crewai.NAME):  # nor a text file
                suffixes += TEXT_SUFFIXES
            if saved is not None and saved.shards and name.endswith(ARROW_SUFFIXES):
                # No shard of the dataset: a cache of one made of it (``map()`` writes its
                # ``cache-<fingerprint>.arrow`` beside the shards it read), its rows again.
                if found.first_time(path):
                    found.skipped += 1
            elif (
                (name.endswith(suffixes) and name != INDEX_NAME)
                or name in CANDIDATE_NAMES
                or (format in (None, gemini.NAME) and gemini.is_unreadable_copy(name))
            ):
                if links.sort(folder, [name], found, links.files):
                    _add_file(path, format, found)
            elif found.first_time(path):
                found.skipped += 1


def _data_home_step(folder: str, start: str) -> frozenset[str] | None:
    """The only folders a walk of ``start`` enters of ``folder`` when ``folder`` is a
    ``.local`` or ``.local/share`` met inside it (:data:`DATA_HOME`), or the data folder
    ``$XDG_DATA_HOME`` names; None for any other folder. A ``.local`` scanned by name is
    walked as any folder is."""
    parts = os.path.relpath(folder, start).split(os.sep)
    if parts[-1:] == [DATA_HOME[0]]:
        return frozenset({DATA_HOME[1]})
    if parts[-2:] == list(DATA_HOME):
        return DATA_FOLDERS
    data_home = _xdg_data_home()
    if (
        data_home is not None
        and parts != [os.curdir]
        and parts[-1] == os.path.basename(os.path.normpath(data_home))  # no realpath per folder
        and _same(folder, data_home)
    ):
        return DATA_FOLDERS
    return None


def _xdg_data_home() -> str | None:
    """The data folder ``$XDG_DATA_HOME`` names (:data:`XDG_DATA_HOME`), when it is set to an
    absolute path: the XDG spec has a relative one ignored, and where an agent wrote with one
    depends on the folder it ran in."""
    return _absolute_folder(XDG_DATA_HOME)


def _absolute_folder(variable: str) -> str | None:
    """The folder the environment ``variable`` names when it is an absolute path; a relative
    one names a folder of wherever the agent ran, which a scan cannot know."""
    value = os.environ.get(variable, "")
    return value if os.path.isabs(value) else None


def _same(one: str, other: str) -> bool:
    return os.path.realpath(one) == os.path.realpath(other)


def _data_folders_elsewhere(root: str) -> list[str]:
    """The agents' folders of ``$XDG_DATA_HOME`` (:data:`DATA_FOLDERS`) and those the agents'
    own variables name (:data:`MOVED_HOMES`) a scan of the home ``root`` walks besides it: those
    a walk of the home does not meet (outside the home, in a hidden folder of it that no walk
    enters, in a data folder whose step enters only the agents' folders:
    :func:`_data_home_step`); none for a scan of any other folder."""
    if not _same(root, os.path.expanduser("~")):
        return []
    folders = []
    data_home = _xdg_data_home()
    if data_home is not None and not _walked_with(root, data_home):
        folders += [os.path.join(data_home, name) for name in sorted(DATA_FOLDERS)]
    for variable, inner in MOVED_HOMES:
        named = _absolute_folder(variable)
        folder = None if named is None else os.path.join(named, inner)
        if folder is not None and not _walked_with(root, folder):
            folders.append(folder)
    real = {os.path.realpath(folder): folder for folder in folders if os.path.isdir(folder)}
    return list(real.values())  # a folder named twice (variables alike) walked once


def _walked_with(root: str, folder: str) -> bool:
    """Whether a walk of ``root`` enters ``folder``: it lies inside ``root``, through no
    hidden folder a walk passes over (:data:`_HIDDEN_WALKED`) and no folder of which a walk
    enters only some (``.local``, a data folder: :func:`_data_home_step`) but those."""
    top = os.path.realpath(root)
    inner = os.path.relpath(os.path.realpath(folder), top)
    if inner == os.curdir:
        return True
    parts = inner.split(os.sep)
    if parts[0] == os.pardir:
        return False
    at = top
    for part in parts:
        entered = _data_home_step(at, top)
        if (part.startswith(".") and part not in _HIDDEN_WALKED) or (
            entered is not None and part not in entered
        ):
            return False
        at = os.path.join(at, part)
    return True


def _is_glob(text: str) -> bool:
    return any(char in text for char in "*?[")


def _glob(pattern: str, links: _Links, found: Found) -> list[str]:
    """The paths ``pattern`` matches, sorted. ``**`` is matched over a walk of the pattern's
    base (``links.root``) that enters no link: :func:`glob.glob` follows links to folders under
    ``**``, so a link back up the tree made it list paths without end (``pathlib``'s ``**``
    does not follow them either). A link is matched itself, and followed by the walk of its
    match if it stays inside; one leading out is skipped and said, as a walk's is."""
    if "**" not in pattern:
        return sorted(_matched(pattern, False, lambda error: links.not_listed(error, found)))
    base = links.root
    wanted = _parts(pattern)[len(_parts(base)) :]
    hidden = any(part.startswith(".") for part in wanted)
    folders_only = pattern.endswith(os.sep)  # ``runs/**/``: the folders, each with its slash
    # Paths as glob writes them: under the pattern's own base (none for ``**/x.jsonl``).
    lead = [] if base == os.curdir and not pattern.startswith(os.curdir) else [base]
    # The base itself when ``**`` may match no folder (``runs/**`` lists ``runs/``), as glob.
    matches = [os.path.join(base, "")] if lead and _glob_matches(wanted, []) else []
    for folder, dirs, files in os.walk(base, onerror=lambda e: links.not_listed(e, found)):
        if not hidden:  # a hidden folder is no glob's match but by a pattern naming it
            dirs[:] = [d for d in dirs if not d.startswith(".")]
        links.sort(folder, list(dirs), found, [])  # only to say which lead out
        inner = _parts(os.path.relpath(folder, base))
        matches += [os.path.join(*lead, *inner, name, *([""] if folders_only else []))
                    for name in (dirs if folders_only else (*dirs, *files))
                    if _glob_matches(wanted, [*inner, name])]  # fmt: skip
    return sorted(matches)


def _matched(pattern: str, folders_only: bool, not_listed: Callable[[OSError], None]) -> list[str]:
    """The paths a pattern without ``**`` matches (``folders_only``: its folders), as
    :func:`glob.glob` matches them, step for step (``_iglob`` of CPython 3.11's
    ``Lib/glob.py``), but for a folder it cannot list or look into: glob takes one for a folder
    that holds nothing, so the runs in it were left out unsaid; here it is told to
    ``not_listed`` (the walk's, so the scan counts it skipped and says it, as a walk's)."""
    folder, name = os.path.split(pattern)
    if not globbing.has_magic(pattern):  # one ending with a separator names a folder
        there = _looked_up(pattern if name else folder, not name, not_listed)
        return [pattern] if there else []
    if not folder:
        return _names_in("", name, folders_only, not_listed)
    # ``os.path.split`` gives back a drive as its own folder: glob stops there too.
    if folder != pattern and globbing.has_magic(folder):
        folders = _matched(folder, True, not_listed)
    else:
        folders = [folder]
    found: list[str] = []
    for inside in folders:
        if globbing.has_magic(name):
            names = _names_in(inside, name, folders_only, not_listed)
        else:
            path = os.path.join(inside, name) if name else inside
            names = [name] if _looked_up(path, not name, not_listed) else []
        found += [os.path.join(inside, each) for each in names]
    return found


def _names_in(
    folder: str, pattern: str, folders_only: bool, not_listed: Callable[[OSError], None]
) -> list[str]:
    """The names in ``folder`` (the working folder when empty) that ``pattern`` matches, as
    glob matches them: a wildcard never a hidden name's leading dot; ``folders_only``, of
    folders and links to them. A folder not there, or a file, holds none; one that cannot be
    listed is told (the names listed before an error in the middle of the listing kept, as
    glob keeps them), as is a link into a folder that may not be searched."""
    names: list[str] = []
    try:
        with os.scandir(folder or os.curdir) as entries:
            for entry in entries:
                try:
                    if not folders_only or entry.is_dir():
                        names.append(entry.name)
                except PermissionError as error:  # a link into a folder one may not search
                    not_listed(error)
                except OSError:  # a link that loops: no folder, as glob and a walk have it
                    pass
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as error:
        not_listed(error)
    if not pattern.startswith("."):
        names = [each for each in names if not each.startswith(".")]
    return fnmatch.filter(names, pattern)


def _looked_up(path: str, folder: bool, not_listed: Callable[[OSError], None]) -> bool:
    """Whether ``path``, a name a pattern holds as it is, is there (``folder``: a folder), as
    glob looks (``os.path.lexists``, ``os.path.isdir``). A folder it is in that may not be
    searched is told, naming that folder, not taken for one without it; any other error is
    the name's own (a link that loops), not there, as glob has it."""
    try:
        info = os.stat(path) if folder else os.lstat(path)
    except PermissionError as error:
        not_listed(PermissionError(error.errno, error.strerror, os.path.dirname(path) or os.curdir))
        return False
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return False
    return not folder or S_ISDIR(info.st_mode)


def _parts(path: str) -> list[str]:
    return [part for part in path.split(os.sep) if part not in ("", os.curdir)]


def _glob_matches(parts: list[str], names: list[str]) -> bool:
    """Whether the path of ``names`` matches a glob's ``parts`` (:func:`glob.glob`'s rules:
    ``**`` any number of folders, a wildcard never a name's leading dot)."""
    if not parts:
        return not names
    head, rest = parts[0], parts[1:]
    if head == "**":
        return any(_glob_matches(rest, names[at:]) for at in range(len(names) + 1)
                   if not any(n.startswith(".") for n in names[:at]))  # fmt: skip
    if not names or (names[0].startswith(".") and not head.startswith(".")):
        return False
    return fnmatch.fnmatch(names[0], head) and _glob_matches(rest, names[1:])


def _glob_base(pattern: str) -> str:
    """The folder a glob's leading literal part names (``runs/*/x.jsonl``: ``runs``)."""
    parts = pattern.split(os.sep)
    literal = list(itertools.takewhile(lambda part: not _is_glob(part), parts[:-1]))
    return os.sep.join(literal) or (os.sep if pattern.startswith(os.sep) else os.curdir)


def discover(source: str | os.PathLike[str] | Iterable[Any], format: str | None) -> Found:
    """The items of a directory, a glob, one file, or a list of paths (C-1), in a stable order."""
    found = Found([])
    paths: Iterable[Any] = [source] if isinstance(source, (str, os.PathLike)) else source
    for entry in paths:
        text = expanded(os.fspath(entry))
        if isinstance(entry, str) and _is_glob(text) and not os.path.exists(text):
            # A glob reads the folder its literal part names (``runs/**``: runs/): a match that
            # is (or lies through) a link leading out of it is skipped, as a walk's link is.
            links = _Links(_glob_base(text))
            matches = _glob(text, links, found)
            if not matches:
                # An empty corpus alone does not tell a pattern's typo from a folder with no
                # runs yet; of several sources, which one found nothing is not seen at all.
                warn_at_caller(f"{entry}: no file or folder matches this pattern; nothing is "
                               "read from it")  # fmt: skip
            for match in matches:
                if not links.inside(match):
                    if found.first_time(match):
                        found.skipped += 1
                        links.outside.append(match)
                elif os.path.islink(match):
                    (links.folders if os.path.isdir(match) else links.files).append(match)
                elif os.path.isdir(match):
                    _walk(match, format, found, links)
                else:
                    _add_file(match, format, found)
            _follow(links, format, found)
            links.warn(found)
            continue
        if os.path.isdir(text):
            _walk(text, format, found)
            for folder in _data_folders_elsewhere(text):
                _walk(folder, format, found)
            continue
        keeper = keeper_of(text)
        if keeper is not None:  # named, not met in a walk: the scan says why it read nothing
            warn_at_caller(f"{entry}: {never_opened(keeper)}")
            continue
        _add_file(text, format, found)
    if found.tables and found.items:
        # Table files among sessions are passed over (a folder's Parquet files may be a
        # write_parquet() export of its own rows): counted as skipped, and said by name, as a
        # dataset of rollouts beside the sessions would otherwise vanish from the table.
        count = len(found.tables)
        named = ", ".join(found.tables[:3]) + (", …" if count > 3 else "")
        arrow = sum(path.endswith(ARROW_SUFFIXES) for path in found.tables)
        kind = "Parquet" if not arrow else "Arrow" if arrow == count else "table"
        one = "an Arrow" if kind == "Arrow" else f"a {kind}"
        files, them = (
            (f"{one} file", "it on its")
            if count == 1
            else (f"{count} {kind} files", "them on their")
        )
        warn_at_caller(f"skipped {files} among the sessions ({named}); a scan reads {one} "
                       f"file's runs when given {kind} files alone: scan {them} own")  # fmt: skip
    return found


def is_subagent_file(path: Path, format: str, head: list[Any]) -> bool:
    """Whether a session file is a sub-agent's and so belongs to its parent (C-1).

    Claude Code writes ``agent-<id>.jsonl`` in ``<session>/subagents/`` (v2.1) or beside the
    session (v2.0), and a Workflow run's agents (and its ``journal.jsonl``) in
    ``<session>/subagents/workflows/<runId>/``; the session's loader nests every run of the
    session (:mod:`turnfold.formats.claude_code_workflows`), so they are rows only when the
    session file itself is gone. Codex writes a child thread as a rollout whose
    ``session_meta`` names its parent thread; Gemini CLI writes
    ``chats/<parentSessionId>/<sessionId>.jsonl``; Qwen Code
    ``subagents/<sessionId>/agent-*.jsonl`` beside ``chats/<sessionId>.jsonl``; Cursor
    ``<sessionId>/subagents/*.jsonl`` beside ``<sessionId>/<sessionId>.jsonl``; Cline 4
    ``<sessionId>/<agentId>.messages.json`` (``"agent": "subagent"``) and a teammate's run
    ``<sessionId>/<agentId>__<teamTaskId>.messages.json`` (``"agent": "teammate"``) beside
    ``<sessionId>/<sessionId>.messages.json``. The parent's loader reads each of them into the
    call that spawned it; Qwen's, Cursor's and Cline's are rows only when their session file is
    gone, as Claude Code's Workflow agents are. The OpenHands SDK keeps a sub-agent's
    conversation in ``<id>/subagents/<sub id>/``, read with its parent's ``base_state.json``;
    Kimi Code a sub-agent's journal in ``<session>/agents/<agentId>/wire.jsonl``, read with the
    lead's ``agents/main/wire.jsonl`` (the older Kimi CLI its copy in
    ``<session>/subagents/<agentId>/``, read with ``<session>/context.jsonl``).
    """
    if format == "claude-code":
        run = path.parent.parent
        if run.name == "workflows" and run.parent.name == "subagents":
            # A Workflow run (<session>/subagents/workflows/<runId>/): its journal is the run's
            # bookkeeping; its agents nest in the session, when there is one to nest them.
            if path.name == "journal.jsonl":
                return True
            return _session_file_beside(run.parent.parent)
        return path.name.startswith("agent-") or path.parent.name == "subagents"
    if format == "codex":
        return _parent_thread(head) is not None
    if format == "gemini":
        if path.parent.parent.name == "chats":
            return True
        return any(isinstance(v, dict) and v.get("kind") == "subagent" for v in head[:1])
    if format in ("qwen", "cursor"):
        return _subagents_session(path, format) is not None
    if format == openhands_sdk.NAME:
        return _sdk_parent(path) is not None
    if format == "cline-messages":
        agent = next((v.get("agent") for v in head if isinstance(v, dict)), None)
        return agent in _CLINE_CHILDREN and _cline_session(path) is not None
    if format == atif.NAME:
        return _atif_session(path, head) is not None
    if format == opencode.NAME:
        return _opencode_lead(path, head) is not None
    if format in (kimi.NAME, kimi_cli.NAME):
        return _kimi_session(path, format) is not None
    return False


def _kimi_session(path: Path, format: str) -> Path | None:
    """The session file a Kimi sub-agent's file belongs to, if it is there: Kimi Code's
    lead-agent journal for ``<session>/agents/<agentId>/wire.jsonl`` (beside
    ``agents/main/``), the older Kimi CLI's ``<session>/context.jsonl`` for
    ``<session>/subagents/<agentId>/context.jsonl`` (or its ``wire.jsonl``). The session's
    reader reads each sub-agent into the call that spawned it, so a scan of ``agents/`` or
    ``subagents/`` (whose folders are not the session's, :func:`kimi.is_session_folder`) gives
    the session one row, as a scan of the session does."""
    folder = path.parent.parent
    if format == kimi.NAME:
        session = folder.parent / kimi.MAIN_JOURNAL
        mine = folder.name == "agents" and path.name == session.name
    else:
        session = folder.parent / kimi_cli.CONTEXT
        mine = folder.name == "subagents" and path.name in (kimi_cli.CONTEXT, kimi_cli.WIRE)
    return session if mine and session != path and session.is_file() else None


def _opencode_lead(path: Path, head: list[Any]) -> Path | None:
    """The top-level session's file a sub-agent's session file of OpenCode's ``storage/``
    (before 1.2; its ``parentID`` names its lead) belongs to, when it is there."""
    lead = next((v.get("parentID") for v in head if isinstance(v, dict)), None)
    if not isinstance(lead, str) or opencode.legacy_kind(path) != "session":
        return None
    lead = opencode.legacy_session_file(path)
    return lead if lead != path else None


def _atif_session(path: Path, head: list[Any]) -> Path | None:
    """The trajectory an ATIF file is part of, when it is there: a continuation
    (``trajectory.cont-1.json``) or a sub-agent's file (its agent's ``extra`` names the parent
    session, as Terminus 2's ``trajectory.summarization-1-summary.json`` does) belongs to the
    ``<stem>.json`` beside it, which reads it."""
    agent = next((v.get("agent") for v in head if isinstance(v, dict)), None)
    extra = agent.get("extra") if isinstance(agent, dict) else None
    child = isinstance(extra, dict) and "parent_session_id" in extra
    if not child and atif.CONTINUATION.match(path.name) is None:
        return None
    parent = path.with_name(path.name.split(".", 1)[0] + ".json")
    return parent if parent != path and parent.is_file() else None


def is_session_bookkeeping(path: Path, format: str | None = None) -> bool:
    """Whether ``path`` is a file a session's loader reads beside the session, told by its
    place and name alone (no row of its own, and not skipped: it is read, with its session);
    of a scan given a ``format``, only OpenCode's files are (each of its format, and each of a
    session read with another: its sub-agent's session file too, told by its ``parentID``).
    Claude Code writes a sub-agent's ``agent-<id>.meta.json`` beside its ``agent-<id>.jsonl``,
    and a Workflow run's snapshot, ``<session>/workflows/<runId>.json``, beside
    ``<session>.jsonl`` (:mod:`turnfold.formats.claude_code_workflows`). Cline 4 writes a
    session's manifest ``<sessionId>.json`` and its compacted history
    ``<sessionId>.compaction.json`` (a sidecar the messages file makes redundant) beside
    ``<sessionId>.messages.json`` (:mod:`turnfold.formats.agents.cline_messages`); a Cline 3.x
    task's chat panel and metadata (``ui_messages.json``, ``task_metadata.json``) beside its
    ``api_conversation_history.json``, which is read with them. An OpenHands
    SDK conversation's event files (``<id>/events/event-….json``) are read with its
    ``base_state.json`` (:mod:`turnfold.formats.harnesses.openhands_sdk`), an unzipped app
    server export's (``event_NNNNNN_<id>.json``) with its ``meta.json``. OpenCode before 1.2
    wrote each message and part of a session in a file of its own
    (``storage/message/<ses>/<msg>.json``, ``storage/part/<msg>/<prt>.json``), read with the
    session's file (:mod:`turnfold.formats.agents.opencode`)."""
    name = path.name
    kind = opencode.legacy_kind(path)
    if kind in ("message", "part"):
        return format in (None, opencode.NAME)
    if format is not None:
        # Without detection, which tells a sub-agent's session file by its first records.
        head = [json_object_file(path)] if format == opencode.NAME and kind == "session" else []
        return bool(head) and _opencode_lead(path, head) is not None
    if _cline_sidecar_of(path) is not None or _sdk_event_of(path) is not None:
        return True
    if _export_lead(path) not in (None, path):
        return True
    if _cline_task_of(path) is not None:
        return True
    if name != strands_session.SESSION_FILE and strands_session.session_of(path) is not None:
        return True
    if name.startswith("agent-") and name.endswith(".meta.json"):
        return path.with_name(name.removesuffix(".meta.json") + ".jsonl").is_file()
    if path.suffix != ".json" or path.parent.name != "workflows":
        return False
    return _session_file_beside(path.parent.parent)


#: A row's ``error`` for a file of OpenCode's ``storage/`` that no session reads
#: (:func:`is_loose`; :func:`~turnfold.corpus.summarize.summarize`).
LOOSE = (
    "a file of OpenCode's storage/ that no session there reads: a message or a part whose "
    "session's file is missing, or a part whose message's file is missing that names no "
    "session there"
)


def is_loose(path: Path) -> bool:
    """Whether ``path``, a file a session's loader reads beside the session whose session is
    not there (:func:`session_of` found none), is one of OpenCode's ``storage/`` (before 1.2):
    a message or a part that no session reads, which a scan says (their count and the first),
    never passes over unsaid. A session deleted while OpenCode stopped half-way leaves such
    files (:mod:`turnfold.formats.agents.opencode_filing`)."""
    return opencode.legacy_kind(path) in ("message", "part")


def loose_warning(paths: list[str]) -> str:
    """What a scan says of the files :func:`is_loose` tells, given in the scan's order."""
    return (f"{len(paths)} file(s) of OpenCode's storage/ that no session there reads, not "
            f"shown (first: {paths[0]}): messages or parts whose session's file is missing, or "
            "parts whose message's file is missing that name no session there")  # fmt: skip


def session_of(path: Path, format: str | None, head: list[Any]) -> str | None:
    """The session file a sub-agent's file, or a session's bookkeeping file, belongs to, as a
    pattern of its path (:func:`fnmatch.fnmatchcase`); None when neither the file's place nor
    its first records tell.

    A change to such a file is a change to its session's row, though the session file itself
    did not change (a sub-agent still running while its parent waits): the scan reads that
    session again (C-4). The pattern is matched against the files the scan already knows, so
    finding the session costs no search of the file system. Each format's loader finds its
    sub-agents' files where this finds their session: Claude Code by place (and a v2.0 file
    beside the session by its ``sessionId``), Codex by the parent thread's id in the rollout's
    name, Gemini CLI by the first eight characters of the session id in the chat's name.
    """
    folder = path.parent
    if format in (None, opencode.NAME) and opencode.legacy_kind(path) is not None:
        # A message's, a part's or a sub-agent's file: its top-level session's, read for it
        # (a part's file names its session inside, as a sub-agent's its lead).
        lead = opencode.legacy_session_file(path)
        return globbing.escape(str(lead)) if lead is not None else None
    strands = strands_session.session_of(path) if format is None else None
    if strands is not None:  # a Strands session's agent or message file
        return globbing.escape(str(strands / strands_session.SESSION_FILE))
    sdk = _sdk_event_of(path) if format is None else None
    sdk = sdk or (_sdk_parent(path) if format == openhands_sdk.NAME else None)
    if sdk is not None:
        return globbing.escape(str(sdk / openhands_sdk.BASE_STATE))
    lead = _export_lead(path) if format is None else None
    if lead is not None and lead != path:
        return globbing.escape(str(lead))
    cline = _cline_sidecar_of(path) or _cline_task_of(path) if format is None else None
    if cline is None and format == "cline-messages":
        cline = _cline_session(path)
    if cline is not None:
        return globbing.escape(str(cline))
    if format in ("claude-code", None):
        if folder.name == "workflows" and path.suffix == ".json":  # <session>/workflows/<run>.json
            return _beside(folder.parent)
        if folder.parent.name == "workflows" and folder.parent.parent.name == "subagents":
            return _beside(folder.parent.parent.parent)
        if folder.name == "subagents":
            return _beside(folder.parent)
        session = next((v.get("sessionId") for v in head if isinstance(v, dict)), None)
        if isinstance(session, str) and _SAFE_NAME.match(session):  # v2.0: beside its session
            return globbing.escape(str(folder / session)) + ".jsonl"
        return None
    if format == "codex":
        parent = _parent_thread(head)
        if parent is None or not _SAFE_NAME.match(parent):
            return None
        day = folder.parts[-3:]
        root = folder.parents[2] if len(day) == 3 and all(p.isdigit() for p in day) else folder
        return globbing.escape(str(root)) + f"/*{parent}.jsonl"
    if format == "gemini" and folder.parent.name == "chats" and _SAFE_NAME.match(folder.name):
        return globbing.escape(str(folder.parent)) + f"/*{folder.name[:8]}.json*"
    if format in ("qwen", "cursor"):
        session = _subagents_session(path, format)
        return globbing.escape(str(session)) if session is not None else None
    if format == atif.NAME:
        session = _atif_session(path, head)
        return globbing.escape(str(session)) if session is not None else None
    if format in (kimi.NAME, kimi_cli.NAME):
        session = _kimi_session(path, format)
        return globbing.escape(str(session)) if session is not None else None
    return None


def _subagents_session(path: Path, format: str) -> Path | None:
    """The session file beside a Qwen Code or Cursor sub-agent's folder, if it is there."""
    folder = path.parent
    if format == "qwen" and folder.parent.name == "subagents":
        session = folder.parent.parent / "chats" / (folder.name + ".jsonl")
    elif format == "cursor" and folder.name == "subagents":
        session = folder.parent / (folder.parent.name + ".jsonl")
    else:
        return None
    return session if session.is_file() else None


#: Cline 4's session files (``SessionArtifacts``, cline/cline
#: ``sdk/packages/core/src/services/session-artifacts.ts``).
_CLINE_MESSAGES = ".messages.json"
_CLINE_COMPACTION = ".compaction.json"
#: The ``agent`` of the files whose runs belong to the session they sit in
#: (``resolveMessagesFileContext``, ``services/session-data.ts``).
_CLINE_CHILDREN = ("subagent", "teammate")


def _cline_session(path: Path) -> Path | None:
    """The session's messages file in the Cline 4 session folder a sub-agent's file sits in
    (``<sessionId>/<sessionId>.messages.json``), if it is there."""
    session = path.with_name(path.parent.name + _CLINE_MESSAGES)
    return session if session != path and session.is_file() else None


def _cline_sidecar_of(path: Path) -> Path | None:
    """The messages file a Cline 4 manifest (``<sessionId>.json``) or compacted history
    (``<sessionId>.compaction.json``) sits beside, if it is there."""
    name = path.name
    if name.endswith(_CLINE_COMPACTION):
        stem = name.removesuffix(_CLINE_COMPACTION)
    elif path.suffix == ".json" and not name.endswith(_CLINE_MESSAGES):
        stem = path.stem
    else:
        return None
    session = path.with_name(stem + _CLINE_MESSAGES)
    return session if stem and session.is_file() else None


def _cline_task_of(path: Path) -> Path | None:
    """The history of the Cline 3.x task whose chat panel (``ui_messages.json``) or metadata
    (``task_metadata.json``) ``path`` is, if it sits beside them: the task's one row, which
    reads both (:mod:`turnfold.formats.agents.cline`). A lone panel file is a session itself."""
    if path.name not in (cline.UI_NAME, cline.METADATA_NAME):
        return None
    history = path.with_name(cline.HISTORY_NAME)
    return history if history.is_file() else None


def _sdk_event_of(path: Path) -> Path | None:
    """The OpenHands SDK conversation an event file (``<id>/events/event-….json``) is of, if
    its ``base_state.json`` is there."""
    folder = path.parent.parent
    if path.parent.name != openhands_sdk.EVENTS or not openhands_sdk.EVENT_FILE.match(path.name):
        return None
    return folder if (folder / openhands_sdk.BASE_STATE).is_file() else None


def _export_lead(path: Path) -> Path | None:
    """The file that stands for the unzipped OpenHands app server export an event file
    (``event_NNNNNN_<id>.json``) is of: its ``meta.json``, else its first event file."""
    if not openhands_sdk.EXPORT_EVENT_FILE.match(path.name):
        return None
    try:
        found = openhands_sdk.exported_files(os.listdir(path.parent))
    except OSError:
        return None
    return path.with_name(found[0]) if found else None


def _sdk_parent(path: Path) -> Path | None:
    """The OpenHands SDK conversation a sub-agent's state file
    (``<id>/subagents/<sub id>/base_state.json``) belongs to, if its state file is there."""
    parent = path.parent.parent.parent
    if path.name != openhands_sdk.BASE_STATE or path.parent.parent.name != openhands_sdk.SUBAGENTS:
        return None
    return parent if (parent / openhands_sdk.BASE_STATE).is_file() else None


#: An id that may stand in a pattern of a path as it is: no separator, no wildcard.
_SAFE_NAME = re.compile(r"^[0-9A-Za-z_.-]{1,80}$")


def _beside(folder: Path) -> str:
    """The pattern of Claude Code's ``<session>.jsonl`` beside its folder ``<session>/``."""
    return globbing.escape(str(folder.with_name(folder.name + ".jsonl")))


def _parent_thread(head: list[Any]) -> str | None:
    """The parent thread's id a Codex rollout's ``session_meta`` names, if it is a child's."""
    for value in head:
        if isinstance(value, dict) and value.get("type") == "session_meta":
            payload = value.get("payload")
            origin = payload.get("source") if isinstance(payload, dict) else None
            subagent = origin.get("subagent") if isinstance(origin, dict) else None
            spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
            parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
            return parent if isinstance(parent, str) and parent else None
    return None


def _session_file_beside(folder: Path) -> bool:
    """Whether Claude Code's session folder ``<session>/`` has its ``<session>.jsonl`` beside it."""
    return folder.with_name(folder.name + ".jsonl").is_file()


def iter_paths(items: Iterable[Item]) -> Iterator[str]:
    """The paths of file items (for cache pruning)."""
    for item in items:
        if item.path is not None:
            yield item.path


def table_files(
    files: Iterable[Any], format: str | None, messages: str | None
) -> tuple[Found, dict[str, pa.Schema]]:
    """The items of table files of trajectories (Parquet, Arrow), or the shards of one
    dataset (of several: a ``DatasetDict``'s splits): each a file whose rows are runs, their
    messages in the column :func:`~turnfold.formats.tables.messages_column` picks from the
    first file's (every file must hold it, or each column of a run split over columns, its
    ``column`` then their names joined, ``"prompt+completion"``, ``"prompt+chosen+rejected"``);
    and the schema of each file, by path. A file that is no table raises, naming it."""
    paths = [os.fspath(f) for f in files]
    schemas = [tables.schema_of(path) for path in paths]
    column = tables.messages_column(list(schemas[0].names), messages,
                                    tables.column_kinds(schemas[0]))  # fmt: skip
    found = Found([])
    for path, schema in zip(paths, schemas, strict=True):
        lacking = [n for n in tables.read_columns(column, schema.names) if n not in schema.names]
        if lacking:
            raise ValueError(f"{path}: no column {lacking[0]!r}, which the first file's "
                             "messages are in")  # fmt: skip
        item = file_item(path, format)
        if item is not None and found.first_time(path):
            found.items.append(replace(item, column=column))
    return found, dict(zip(paths, schemas, strict=True))


#: :func:`table_files`, by the name it had when they were all Parquet files.
parquet_files = table_files
