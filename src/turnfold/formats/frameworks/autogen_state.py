"""AutoGen AgentChat's saved state (issue 22): what ``await agent.save_state()`` or
``await team.save_state()`` returns, dumped with ``json.dump`` to resume the run later
(AutoGen's "Managing State" guide), read through :mod:`~turnfold.formats.frameworks.autogen`'s
rules.

The shapes (``autogen_agentchat/state/_states.py``), each ``{"type", "version", ...}``:

- ``TeamState``: ``agent_states`` by name, one ``ChatAgentContainerState`` per participant
  (its ``agent_state`` and ``message_buffer``) and the group chat manager's state
  (``RoundRobinManagerState``, ``SelectorManagerState``, ``SwarmManagerState``,
  ``MagenticOneOrchestratorState``…) whose ``message_thread`` is the team's conversation: the
  same message dumps a ``TaskResult``'s ``messages`` are, read as the autogen format reads
  them (calls, handoffs, outcomes, usage, times). The participants' states repeat what the
  thread holds, each as its model saw it, and are not read again;
- ``AssistantAgentState`` (an agent's own, or a ``ChatAgentContainerState`` of a team
  whose manager kept no thread): ``llm_context.messages``, the model context, whose messages
  are ``autogen_core``'s (``UserMessage``, ``AssistantMessage`` with its ``thought`` and its
  text or ``FunctionCall`` list, ``FunctionExecutionResultMessage`` with each result's
  ``is_error``, ``SystemMessage``). Each is read as the AgentChat message that made it
  (``TextMessage``, ``ThoughtEvent``, ``ToolCallRequestEvent``, ``ToolCallExecutionEvent``);
  the model context keeps no time, usage or id, so none is shown, and of an agent used as a
  tool (``AgentTool``) it keeps only the call and its answer: a plain call here (the team's
  thread, or the ``TaskResult``, holds the inner run).
- A ``SocietyOfMindAgentState`` holds its inner team's state (``inner_team_state``), read as
  that team's.

A state of none of these (a ``UserProxyAgent``'s, which keeps nothing) holds no conversation:
loading it says so. Detection: a document whose ``type`` is one of these state classes and
that holds ``agent_states``, ``llm_context`` or ``inner_team_state``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from turnfold.formats.catalog import Records
from turnfold.formats.common import NameSet
from turnfold.formats.detection import Evidence
from turnfold.formats.errors import TranscriptFormatError
from turnfold.formats.frameworks import autogen
from turnfold.formats.source import Source, warning_count
from turnfold.model import Transcript

NAME = "autogen-state"

#: The state classes that hold a conversation, and the key each keeps it under.
_TEAM, _AGENT, _SOCIETY = "TeamState", "AssistantAgentState", "SocietyOfMindAgentState"
_CONTAINER = "ChatAgentContainerState"
_HOLDERS = {_TEAM: "agent_states", _AGENT: "llm_context", _SOCIETY: "inner_team_state"}
#: ``autogen_core.models``' message types of a model context.
_CONTEXT_TYPES = NameSet(
    {"UserMessage", "AssistantMessage", "FunctionExecutionResultMessage", "SystemMessage"}
)

RECORDS = Records(
    mapped={
        **autogen.RECORDS.mapped,
        _TEAM: "a team's state: its group chat manager's message_thread, read as a "
        "TaskResult's messages (each accounted for by its type)",
        _AGENT: "an agent's state: its llm_context.messages, each read as the AgentChat "
        "message that made it",
        _SOCIETY: "a SocietyOfMindAgent's state: its inner team's state",
        "context/UserMessage": "a TextMessage of its source (the user's prompt, or a "
        "teammate's text as this agent's model saw it)",
        "context/AssistantMessage": "its thought (ThoughtEvent), then its FunctionCall list "
        "(ToolCallRequestEvent) or text (TextMessage)",
        "context/FunctionExecutionResultMessage": "a ToolCallExecutionEvent: each result "
        "settles its call (is_error → error)",
        "context/SystemMessage": 'the system message: metadata["system"]',
    },
    ignored={
        **autogen.RECORDS.ignored,
        "participant state": "a team member's own state: the manager's message_thread holds "
        "its messages already",
    },
)


def _state_type(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, Mapping) else None
    return kind if isinstance(kind, str) and kind in _HOLDERS else None


def detect(source: Source) -> Evidence:
    """A saved ``TeamState``, ``AssistantAgentState`` or ``SocietyOfMindAgentState``."""
    document = source.document if source.is_document else None
    kind = _state_type(document)
    if kind is None or not isinstance(document, Mapping):
        return Evidence.none("no AgentChat state (type TeamState, AssistantAgentState…)")
    if not isinstance(document.get(_HOLDERS[kind]), Mapping):
        return Evidence.none(f"a {kind} without its {_HOLDERS[kind]}")
    return Evidence(share=1.0, marks=2)


def _thread(team: Mapping[str, Any]) -> tuple[str | None, list[Any] | None]:
    """The name and ``message_thread`` of a team state's group chat manager."""
    states = team.get("agent_states")
    for name, state in states.items() if isinstance(states, Mapping) else ():
        if isinstance(state, Mapping) and isinstance(state.get("message_thread"), list):
            return str(name), state["message_thread"]
    return None, None


def _context_messages(
    messages: list[Any], agent: str, transcript: Transcript
) -> Iterator[tuple[int, str, list[Any]]]:
    """Each model-context message (its place, from 1, and the record type it is accounted
    as) as the AgentChat message dumps that made it. The context keeps no ids: a response's
    calls are batched by its place (``context-<n>``); results are the last speaker's."""
    for place, message in enumerate(messages, start=1):
        kind = message.get("type") if isinstance(message, Mapping) else None
        if not isinstance(message, Mapping) or kind not in _CONTEXT_TYPES:
            yield place, "context/other", [message]
            continue
        record = f"context/{kind}"
        source = message.get("source")
        if kind == "AssistantMessage" and isinstance(source, str) and source:
            agent = source
        source = source if isinstance(source, str) and source else agent
        base = {"source": source, "models_usage": None, "id": f"context-{place}"}
        content = message.get("content")
        if kind == "SystemMessage":
            if isinstance(content, str) and content:
                transcript.metadata["system"] = content
            yield place, record, []
        elif kind == "UserMessage":
            if isinstance(content, list):  # text and images: the text parts, as the model read
                content = "\n".join(part for part in content if isinstance(part, str))
            yield place, record, [{**base, "type": "TextMessage", "content": content}]
        elif kind == "AssistantMessage":
            made = []
            thought = message.get("thought")
            if isinstance(thought, str) and thought:
                made.append({**base, "type": "ThoughtEvent", "content": thought,
                             "id": f"context-{place}-thought"})  # fmt: skip
            calls = isinstance(content, list)
            made.append({**base, "type": "ToolCallRequestEvent" if calls else "TextMessage",
                         "content": content})  # fmt: skip
            yield place, record, made
        else:
            yield place, record, [{**base, "type": "ToolCallExecutionEvent", "content": content}]


def _read_agent(source: Source, builder: autogen.AutogenBuilder, state: Mapping[str, Any],
                agent: str) -> None:  # fmt: skip
    context = state.get("llm_context")
    messages = context.get("messages") if isinstance(context, Mapping) else None
    for place, record, made in _context_messages(
        messages if isinstance(messages, list) else [], agent, builder.transcript
    ):
        if not all(autogen.is_message(message) for message in made):
            source.warn(f"{record}: not a model context message, skipped", place,
                        record_type=record)  # fmt: skip
            continue
        before = warning_count(builder.transcript.warnings)
        for message in made:
            builder.feed(message, place)
        warned = warning_count(builder.transcript.warnings) > before
        source.note(record, "warned" if warned else "mapped")


def _read_team(source: Source, builder: autogen.AutogenBuilder, team: Mapping[str, Any]) -> None:
    manager, thread = _thread(team)
    states = team.get("agent_states")
    states = states if isinstance(states, Mapping) else {}
    if thread is None:
        # No manager's thread (a team saved by hand, say): each participant's model context.
        for name, state in states.items():
            inner = state.get("agent_state") if isinstance(state, Mapping) else None
            if isinstance(inner, Mapping) and _state_type(inner) is not None:
                _read_state(source, builder, inner, str(name))
        return
    for name in states:
        if name != manager:
            source.ignored("participant state")
    for line, message in enumerate(thread, start=1):
        autogen._feed(source, builder, message, line)


def _read_state(
    source: Source, builder: autogen.AutogenBuilder, state: Mapping[str, Any], agent: str
) -> None:
    kind = _state_type(state)
    source.mapped(str(kind))
    if kind == _TEAM:
        _read_team(source, builder, state)
    elif kind == _AGENT:
        _read_agent(source, builder, state, agent)
    elif kind == _SOCIETY and _state_type(state.get("inner_team_state")) is not None:
        _read_state(source, builder, state["inner_team_state"], agent)


def read(source: Source) -> Transcript:
    """The conversation a saved AgentChat state holds."""
    document = source.document if source.is_document else None
    if _state_type(document) is None or not isinstance(document, Mapping):
        raise TranscriptFormatError(source.name, [NAME], 1, "no AgentChat state document")
    transcript = Transcript(metadata={"source_format": NAME})
    builder = autogen.AutogenBuilder(transcript, source.name)
    _read_state(source, builder, document, "assistant")
    builder.finish()
    if builder.recognized == 0:
        raise TranscriptFormatError(
            source.name, [NAME], 1, "the state holds no conversation (no message_thread or "
            "llm_context messages)",
        )  # fmt: skip
    return transcript
