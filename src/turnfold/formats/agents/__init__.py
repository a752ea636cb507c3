"""Agent CLIs' other outputs (spec H-5): what a coding agent prints or saves besides its session
files, such as Claude Code's ``--output-format stream-json`` and Codex's ``exec --json`` events.

Each module is one format; where a format carries another format's messages (stream-json's
Anthropic messages) it reuses that format's block conversion rather than a copy of it.
"""
