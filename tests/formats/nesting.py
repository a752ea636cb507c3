"""Reading nested transcripts in the tests: the calls of every level, and by agent (A-1).

Handoffs and agents used as tools nest as sub-agents; these helpers walk that nesting for the
framework tests, which compare it with the counts their framework's own records give.
"""

from __future__ import annotations

from turnfold.model import ToolCall, Transcript


def calls_by_id(transcript: Transcript) -> dict[str, ToolCall]:
    """Every call, nested ones included, by its ``call_id``."""
    return {call.call_id: call for call in transcript.tool_calls(nested=True)}


def calls_by_level(transcript: Transcript, agent: str) -> dict[str, int]:
    """How many calls each level of the nesting holds, by the agent the level belongs to (the
    top's is ``agent``, a nested one's is its sub-agent's name)."""
    counts: dict[str, int] = {}
    for call in transcript.tool_calls():
        counts[agent] = counts.get(agent, 0) + 1
        child = call.subagent.transcript if call.subagent else None
        if child is not None and call.subagent is not None and call.subagent.name:
            for name, n in calls_by_level(child, call.subagent.name).items():
                counts[name] = counts.get(name, 0) + n
    return counts
