"""Run objects and event streams of agent frameworks (spec §16, issue 22): what an agent built
in a notebook leaves behind (A-1), and what it yields while it runs (A-2).

Each module is one framework's format. Besides a format's ``NAME``, ``detect``, ``read`` and
``RECORDS`` (the saved forms of its runs load from files like any format), a framework module
has:

- ``plain(value) -> Any``: one of the framework's run objects (a result, a message list, an
  agent's memory…) as the plain records ``read`` reads, by the framework's own serialization
  where it has one; the value itself is never modified;
- ``Follower(transcript)``: ``feed(event)`` maps one event of the framework's stream into
  ``transcript`` as it arrives, ``close()`` ends the run (spec A-2; see
  :mod:`turnfold.following`).

Where the framework's items carry a provider's messages (the Agents SDK's Responses items) a
module reuses that provider's conversion rather than a copy.

Objects are recognised by the module their type is defined in (spec A-3), so recognising one
imports nothing: a framework is never imported by turnfold, and a turnfold module that reads it
is imported only when one of its objects is met.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turnfold.model import Transcript

__all__ = [
    "RUN_OBJECTS",
    "adapter_named",
    "adapter_of",
    "adapter_of_module",
    "generator_arguments",
    "is_interrupt",
    "runs_of_object",
]

#: The frameworks' packages (a type's ``__module__``, or a dotted prefix of it) and the
#: turnfold module that reads their objects.
_ADAPTERS: tuple[tuple[str, str], ...] = (
    ("agents", "turnfold.formats.frameworks.openai_agents"),
    ("langchain_core", "turnfold.formats.frameworks.langchain"),
    ("langchain", "turnfold.formats.frameworks.langchain"),
    ("langgraph", "turnfold.formats.frameworks.langchain"),
    ("pydantic_ai", "turnfold.formats.frameworks.pydantic_ai"),
    ("claude_agent_sdk", "turnfold.formats.frameworks.claude_agent_sdk"),
    ("smolagents", "turnfold.formats.frameworks.smolagents"),
    ("google.adk", "turnfold.formats.frameworks.adk"),
    ("autogen_agentchat", "turnfold.formats.frameworks.autogen"),
    ("autogen_core", "turnfold.formats.frameworks.autogen"),
    ("strands", "turnfold.formats.frameworks.strands"),
    ("llama_index.core", "turnfold.formats.frameworks.llamaindex"),
    # The Microsoft Agent Framework; its orchestrations (SequentialBuilder, HandoffBuilder…)
    # are a package of their own.
    ("agent_framework", "turnfold.formats.frameworks.agent_framework"),
    ("agent_framework_orchestrations", "turnfold.formats.frameworks.agent_framework"),
    # What dspy.Evaluate returns (an EvaluationResult: a Prediction of many runs), before the
    # rest of DSPy's objects.
    ("dspy.evaluate", "turnfold.formats.frameworks.dspy_evaluate"),
    ("dspy", "turnfold.formats.frameworks.dspy"),
    ("haystack", "turnfold.formats.frameworks.haystack"),
    ("agno", "turnfold.formats.frameworks.agno"),
    ("crewai", "turnfold.formats.frameworks.crewai"),
    ("semantic_kernel", "turnfold.formats.frameworks.semantic_kernel"),
    # llama-index-workflows (its package is ``workflows``, a name others may use too): a
    # run's handler and its context, by their own modules.
    ("workflows.handler", "turnfold.formats.frameworks.llamaindex"),
    ("workflows.context", "turnfold.formats.frameworks.llamaindex"),
    # MLflow's traces (mlflow.entities.Trace): a trace format, read by its module there.
    ("mlflow", "turnfold.formats.traces.mlflow"),
)

#: The run objects a cell shows as a transcript when it is the cell's last value (spec A-1),
#: as ``(type's module, type's name)``: the objects that are a whole run and that the framework
#: does not display itself. IPython matches them by name (``for_type_by_name``), so registering
#: them imports no framework.
RUN_OBJECTS: tuple[tuple[str, str], ...] = (
    ("agents.result", "RunResult"),
    ("agents.result", "RunResultStreaming"),
    ("langgraph.types", "GraphOutput"),  # invoke(..., version="v2"); its v1 result is a dict
    ("pydantic_ai.run", "AgentRunResult"),
    ("smolagents.memory", "AgentMemory"),
    ("smolagents.agents", "RunResult"),
    ("google.adk.sessions.session", "Session"),
    ("autogen_agentchat.base._task", "TaskResult"),
    ("agent_framework._types", "AgentResponse"),
    ("agent_framework._workflows._workflow", "WorkflowRunResult"),
    ("agno.run.agent", "RunOutput"),
    ("agno.run.team", "TeamRunOutput"),
    ("crewai.crews.crew_output", "CrewOutput"),  # one crew kickoff
)

#: How deep and how wide :func:`adapter_of` looks inside containers for a framework's object
#: (a LangGraph result is a dict of lists of messages; its stream events are tuples of them).
#: The deepest is a list of ``debug`` events with a mode or a namespace, or as
#: ``version="v2"`` parts: list → ``(mode, chunk)``, ``(ns, chunk)`` or ``{"type", "ns",
#: "data"}`` → ``{"type": "checkpoint", "payload"}`` → payload → its state's ``values`` →
#: list → message, six levels down.
_DEPTH, _WIDTH = 6, 8


def _within(module_name: str, package: str) -> bool:
    """``module_name`` is ``package`` or one of its modules (by dotted name: ``agnoctl`` is
    not ``agno``'s)."""
    return module_name == package or module_name.startswith(package + ".")


def _adapter_name(module_name: str) -> str | None:
    for package, adapter in _ADAPTERS:
        if _within(module_name, package):
            return adapter
    return None


def _import(name: str) -> ModuleType:
    __import__(name)
    return sys.modules[name]


def adapter_of(value: Any) -> ModuleType | None:
    """The turnfold module that reads ``value``, by the module of its type or of the first
    framework object inside it; None for plain values and other libraries' objects."""
    found = _find(value, _DEPTH)
    return _import(found) if found is not None else None


def _find(value: Any, depth: int) -> str | None:
    module = type(value).__module__
    if module != "builtins":
        return _adapter_name(module)
    if depth == 0:
        return None
    if isinstance(value, Mapping):
        items: Any = list(value.values())[:_WIDTH]
    elif isinstance(value, (list, tuple)):
        items = value[:_WIDTH]
    else:
        return None
    for item in items:
        found = _find(item, depth - 1)
        if found is not None:
            return found
    return None


def adapter_of_module(module_name: Any) -> ModuleType | None:
    """The turnfold module that reads the objects of the module ``module_name`` (the module a
    framework's generator is defined in, say); None for any other module."""
    found = _adapter_name(module_name) if isinstance(module_name, str) else None
    return _import(found) if found is not None else None


def generator_arguments(
    events: Any, module: str, functions: Collection[str] | None = None
) -> Mapping[str, Any] | None:
    """The arguments of ``events`` when it is the generator (sync or async) a framework's
    function returned: one defined in ``module`` or, when that is a package, in a module of
    it (Agno streams from several), of ``functions`` when named; read off its frame, whose
    locals hold them from before it starts (what no event carries: the prompt, the agent,
    the run). None for any other value, and for a generator that has ended."""
    frame = getattr(events, "gi_frame", None) or getattr(events, "ag_frame", None)
    if frame is None or not _within(str(frame.f_globals.get("__name__", "")), module):
        return None
    if functions is not None and frame.f_code.co_name not in functions:
        return None
    arguments: Mapping[str, Any] = frame.f_locals
    return arguments


def runs_of_object(value: Any) -> list[Transcript] | None:
    """The runs of a framework's object that holds many (a DSPy ``EvaluationResult``: a run per
    example; its module has ``read_each``), each as ``load(value, sample=n)`` reads it, for
    ``scan(value)``; None for any other value."""
    adapter = adapter_of_module(type(value).__module__)
    if adapter is None or not hasattr(adapter, "read_each"):
        return None
    from turnfold.formats.source import from_object

    return [transcript for _, transcript in adapter.read_each(from_object(value))]


def is_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is a stop of the run from outside it, a Ctrl-C or an asyncio cancel,
    not an error of the run (asyncio is not imported to tell: a cancel has imported it)."""
    asyncio = sys.modules.get("asyncio")
    cancel = asyncio is not None and isinstance(exc, asyncio.CancelledError)
    return cancel or isinstance(exc, KeyboardInterrupt)


def adapter_named(name: str) -> ModuleType:
    """The framework module whose format is ``name`` (one of ``load(format=...)``'s names)."""
    from turnfold.formats import _MODULE_NAMES

    adapters = {adapter for _, adapter in _ADAPTERS}
    frameworks = sorted(n for n, module in _MODULE_NAMES.items() if module in adapters)
    if name not in frameworks:
        raise ValueError(f"no agent framework reads {name!r}; frameworks: {', '.join(frameworks)}")
    return _import(_MODULE_NAMES[name])
