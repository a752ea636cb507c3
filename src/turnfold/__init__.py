"""turnfold: AI-agent transcripts, folded the way the best agent UIs fold them, inline in Jupyter.

The public names below are the ones spec §10 promises; everything else is internal. Each is
imported from its module on first use (:func:`__getattr__`), so ``import turnfold`` costs next to
nothing and ``turnfold.load(path)`` imports the loaders and no more: the corpus, the fast-model
summaries (asyncio, ssl), the settings (traitlets, jupyter_core) and the widgets (anywidget,
ipywidgets) load when a program asks for them (issue 19).
"""

from __future__ import annotations

import sys as _sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy reads it the same

if TYPE_CHECKING:
    from types import ModuleType

    from turnfold.batches import BatchView, SummaryRow, ToolRow, build_batch_view, iter_batches
    from turnfold.browser import SessionBrowser
    from turnfold.compare_widget import CompareWidget, compare
    from turnfold.config import ConfigWarning, load_settings, save_user_defaults
    from turnfold.corpus import Corpus, scan
    from turnfold.display import register_display
    from turnfold.following import Follow, follow
    from turnfold.formats import FORMATS, TranscriptFormatError, load
    from turnfold.model import (
        AbortMarker,
        AssistantError,
        AssistantText,
        CompactionBoundary,
        Entry,
        ImageData,
        LoadWarning,
        PendingAction,
        SubAgent,
        SystemNotice,
        Thinking,
        ToolCall,
        ToolResult,
        ToolUseSummary,
        Transcript,
        TranscriptChange,
        Usage,
        UserMessage,
    )
    from turnfold.recording import MessageSync, Recorder
    from turnfold.settings import DisplaySettings, normalize_settings
    from turnfold.settings_widget import SettingsWidget
    from turnfold.summaries import TranscriptLabeller, clean_summary, label_batches, truncate_json
    from turnfold.tools import (
        CATEGORIES,
        COLLAPSIBLE,
        build_tool_summary,
        format_duration,
        format_subagent_line,
        format_token_count,
        is_collapsible_tool,
        register_tool,
        safe_description,
        tool_category,
        unregister_tool,
    )
    from turnfold.widget import TranscriptWidget

__version__ = "0.1.0.dev0"

#: The module each public name lives in, imported when the name is first read.
_HOMES: dict[str, tuple[str, ...]] = {
    "turnfold.batches": ("BatchView", "SummaryRow", "ToolRow", "build_batch_view", "iter_batches"),
    "turnfold.compare_widget": ("CompareWidget", "compare"),
    "turnfold.browser": ("SessionBrowser",),
    "turnfold.config": ("ConfigWarning", "load_settings", "save_user_defaults"),
    "turnfold.corpus": ("Corpus", "scan"),
    "turnfold.display": ("register_display",),
    "turnfold.following": ("Follow", "follow"),
    "turnfold.formats": ("FORMATS", "TranscriptFormatError", "load"),
    "turnfold.model": (
        "AbortMarker",
        "AssistantError",
        "AssistantText",
        "CompactionBoundary",
        "Entry",
        "ImageData",
        "LoadWarning",
        "PendingAction",
        "SubAgent",
        "SystemNotice",
        "Thinking",
        "ToolCall",
        "ToolResult",
        "ToolUseSummary",
        "Transcript",
        "TranscriptChange",
        "Usage",
        "UserMessage",
    ),
    "turnfold.recording": ("MessageSync", "Recorder"),
    "turnfold.settings": ("DisplaySettings", "normalize_settings"),
    "turnfold.settings_widget": ("SettingsWidget",),
    "turnfold.summaries": ("TranscriptLabeller", "clean_summary", "label_batches", "truncate_json"),
    "turnfold.tools": (
        "CATEGORIES",
        "COLLAPSIBLE",
        "build_tool_summary",
        "format_duration",
        "format_subagent_line",
        "format_token_count",
        "is_collapsible_tool",
        "register_tool",
        "safe_description",
        "tool_category",
        "unregister_tool",
    ),
    "turnfold.widget": ("TranscriptWidget",),
}
_HOME: dict[str, str] = {name: module for module, names in _HOMES.items() for name in names}


def _imported(module: str) -> ModuleType:
    """``module``, imported by the machinery of an import statement: ``python -X importtime``
    reports what that imports, not what ``importlib.import_module`` does."""
    __import__(module)
    return _sys.modules[module]


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use; or a submodule, as ``import
    turnfold; turnfold.corpus.summarize`` found it when the package imported everything."""
    home = _HOME.get(name)
    if home is not None:
        value = getattr(_imported(home), name)
        globals()[name] = value  # the next read is an ordinary attribute
        return value
    if not name.startswith("__"):
        try:
            return _imported(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# W-1: in a kernel, a Transcript as the last expression of a cell shows as the widget. A kernel has
# imported IPython before any cell runs, so without it there is nothing to register with and
# neither IPython nor the model is imported for nothing.
if "IPython" in _sys.modules:
    _imported("turnfold.display").register_display()

__all__ = [
    "CATEGORIES",
    "COLLAPSIBLE",
    "FORMATS",
    "AbortMarker",
    "AssistantError",
    "AssistantText",
    "BatchView",
    "CompactionBoundary",
    "CompareWidget",
    "ConfigWarning",
    "Corpus",
    "DisplaySettings",
    "Entry",
    "Follow",
    "ImageData",
    "LoadWarning",
    "MessageSync",
    "PendingAction",
    "Recorder",
    "SessionBrowser",
    "SettingsWidget",
    "SubAgent",
    "SummaryRow",
    "SystemNotice",
    "Thinking",
    "ToolCall",
    "ToolResult",
    "ToolRow",
    "ToolUseSummary",
    "Transcript",
    "TranscriptChange",
    "TranscriptFormatError",
    "TranscriptLabeller",
    "TranscriptWidget",
    "Usage",
    "UserMessage",
    "build_batch_view",
    "build_tool_summary",
    "clean_summary",
    "compare",
    "follow",
    "format_duration",
    "format_subagent_line",
    "format_token_count",
    "is_collapsible_tool",
    "iter_batches",
    "label_batches",
    "load",
    "load_settings",
    "normalize_settings",
    "register_display",
    "register_tool",
    "safe_description",
    "save_user_defaults",
    "scan",
    "tool_category",
    "truncate_json",
    "unregister_tool",
]
