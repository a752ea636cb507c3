"""Real session files of the readers added last (API stream events, CrewAI, DSPy, pydantic-ai),
each string a person or a model wrote in them carrying a hostile payload: what
``tests/test_hostile_readers.py`` audits as HTML and ``tests/browser/test_hostile_pages.py``
opens in Chromium.

The payload is appended, never substituted, so each file still reads as its format (a model's
name still starts ``claude-``); ids, types and roles are left alone, so its calls still meet
their results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"

#: What sets ``window.__pwned`` if it ever runs, in every way a page could run it: a script,
#: event handlers on an image, an SVG, a details and a hovered element, a ``javascript:`` link
#: (markdown's, raw HTML's), an iframe's ``srcdoc``, a ``data:text/html`` link, an SVG image as
#: ``data:``, CSS breaking out of a style, an attribute broken out of, an RLO, terminal
#: escapes (an OSC 8 link, an OSC 52 clipboard write, a screen clear).
PAYLOAD = (
    "<script>window.__pwned='script'</script>"
    "<img src=x onerror=\"window.__pwned='img'\">"
    "<svg onload=\"window.__pwned='svg'\"></svg>"
    "<details open ontoggle=\"window.__pwned='details'\"></details>"
    "<iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>"
    '<a href="data:text/html,<script>alert(1)</script>">data link</a>'
    "[md link](javascript:window.__pwned='md') "
    "![md image](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+) "
    "![tracker](http://evil.test/t.png) "
    "<style>*{background:url(http://evil.test/css)}</style></style>"
    '<div style="background:url(http://evil.test/attr)">styled</div>'
    '" onmouseover="window.__pwned=\'attr\'" x="'
    "' onmouseover='window.__pwned=\"attr1\"' "
    "&lt;script&gt;window.__pwned='entity'&lt;/script&gt; "
    "\u202eevil\u202c "
    "\x1b]8;;javascript:window.__pwned=1\x1b\\osc8\x1b]8;;\x1b\\ "
    "\x1b]52;c;ZXZpbA==\x07\x1b[2J\x1b[31mred\x1b[0m"
)

#: The keys whose string values a person, a model or a tool wrote (or a run's author named).
WRITTEN = frozenset({
    "text", "content", "thinking", "delta", "name", "tool_name", "model", "title",
    "description", "output", "raw", "error", "message", "summary", "agent", "goal",
    "backstory", "expected_output", "task", "result", "reasoning", "answer", "question",
    "instructions", "system_prompt", "file_path", "path", "command", "url", "final_output",
    "tool_input", "log", "prompt", "completion", "feedback", "rationale", "error_message",
})  # fmt: skip

#: The real files (each a reader added last): their paths under ``tests/fixtures``.
NEW_READERS = [
    "messages/anthropic-2.15.0_stream-events_two-calls.jsonl",
    "messages/anthropic-2.15.0_stream-events_with-requests.jsonl",
    "messages/openai-3.57.0_responses_stream-events_two-calls.jsonl",
    "messages/openai-3.57.0_responses_stream-events_incomplete-and-error.jsonl",
    "crewai/crewai_v1.15.30_crew-output_two-tasks.json",
    "crewai/crewai_v1.15.30_crew-output_hierarchical.json",
    "crewai/crewai_v1.15.30_output-log.json",
    "crewai/crewai_v1.15.30_stream-frames.jsonl",
    "frameworks/dspy/dspy_v3.4.1_prediction-todict_nested.json",
    "frameworks/pydantic-ai/pydantic-ai_v2.68.0_all-messages_retry-failed.json",
    "frameworks/pydantic-ai/pydantic-ai_v2.78.0_all-messages_capability-retry.json",
]


def hostile(value: Any, key: str | None = None) -> Any:
    """``value`` with :data:`PAYLOAD` after each string written under a :data:`WRITTEN` key."""
    if isinstance(value, dict):
        return {k: hostile(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [hostile(v, key) for v in value]
    if isinstance(value, str) and key in WRITTEN:
        return value + PAYLOAD
    return value


def hostile_copy(name: str, folder: Path) -> Path:
    """The fixture ``name`` (a JSON or JSON-lines file) with :func:`hostile` strings, written
    to ``folder`` under its own name."""
    source = FIXTURES / name
    text = source.read_text(encoding="utf-8")
    if source.suffix == ".jsonl":
        lines = [json.dumps(hostile(json.loads(line))) for line in text.splitlines() if line]
        out = "\n".join(lines) + "\n"
    else:
        out = json.dumps(hostile(json.loads(text)), indent=1)
    path = folder / source.name
    path.write_text(out, encoding="utf-8")
    return path
