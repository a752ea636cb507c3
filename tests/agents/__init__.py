"""Session files written by the real coding agents, checked against the model that drove them.

Claude Code, Codex, Qwen Code and Gemini CLI (pinned in ``package.json``) run non-interactively
against a scripted model server on 127.0.0.1 (:mod:`tests.agents.server`, one wire module per
model API in :mod:`tests.agents.wire`). The server plays a scenario (:mod:`tests.agents.scenarios`)
and records every tool call it issued and every tool result the agent sent back; that record is
the truth each loaded transcript is checked against (:mod:`tests.agents.truth`), never what the
loader itself says. ``python -m tests.agents.drift`` plays the same scenarios on the newest
releases and reports what changed.
"""
