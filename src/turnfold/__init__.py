"""turnfold: AI-agent transcripts, folded the way the best agent UIs fold them, inline in Jupyter.

The public names below are the ones spec §10 promises; everything else is internal. The widgets
load anywidget and ipywidgets only when first used, so ``import turnfold`` stays light.
"""

from typing import TYPE_CHECKING

from turnfold.batches import BatchView, SummaryRow, ToolRow, build_batch_view, iter_batches
from turnfold.config import ConfigWarning, load_settings, save_user_defaults
from turnfold.corpus import Corpus, scan
from turnfold.display import register_display
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

if TYPE_CHECKING:
    from turnfold.settings_widget import SettingsWidget
    from turnfold.widget import TranscriptWidget

__version__ = "0.1.0.dev0"


def __getattr__(name: str) -> object:
    """The widgets, imported on first use (they pull in anywidget and ipywidgets)."""
    if name == "TranscriptWidget":
        from turnfold.widget import TranscriptWidget

        return TranscriptWidget
    if name == "SettingsWidget":
        from turnfold.settings_widget import SettingsWidget

        return SettingsWidget
    raise AttributeError(f"module 'turnfold' has no attribute {name!r}")


# W-1: in a kernel, a Transcript as the last expression of a cell shows as the widget.
register_display()

__all__ = [
    "CATEGORIES",
    "COLLAPSIBLE",
    "FORMATS",
    "AbortMarker",
    "AssistantError",
    "AssistantText",
    "BatchView",
    "CompactionBoundary",
    "ConfigWarning",
    "Corpus",
    "DisplaySettings",
    "Entry",
    "ImageData",
    "LoadWarning",
    "MessageSync",
    "PendingAction",
    "Recorder",
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
