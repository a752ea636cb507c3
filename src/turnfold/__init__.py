"""turnfold: AI-agent transcripts, folded the way the best agent UIs fold them, inline in Jupyter.

The public names below are the ones spec §10 promises; everything else is internal.
"""

from turnfold.batches import BatchView, SummaryRow, ToolRow, build_batch_view, iter_batches
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

__version__ = "0.1.0.dev0"

__all__ = [
    "CATEGORIES",
    "COLLAPSIBLE",
    "FORMATS",
    "AbortMarker",
    "AssistantError",
    "AssistantText",
    "BatchView",
    "CompactionBoundary",
    "DisplaySettings",
    "Entry",
    "ImageData",
    "LoadWarning",
    "MessageSync",
    "PendingAction",
    "Recorder",
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
    "Usage",
    "UserMessage",
    "build_batch_view",
    "build_tool_summary",
    "format_duration",
    "format_subagent_line",
    "format_token_count",
    "is_collapsible_tool",
    "iter_batches",
    "load",
    "normalize_settings",
    "register_tool",
    "safe_description",
    "tool_category",
    "unregister_tool",
]
