"""Display settings: one normalized place for every presentation preference (spec section 6).

Settings arrive from old files, Jupyter config, the settings widget and keyword arguments, in
either snake_case or the seeds' camelCase. :func:`normalize_settings` turns any of those into one
complete snake_case dict, and :class:`DisplaySettings` holds the result as traitlets so widgets can
``traitlets.link`` to it. A view is built from a :class:`SettingsSnapshot` of them, which needs
no traitlets: :class:`DisplaySettings` lives in :mod:`turnfold.live_settings`, imported when first
named, so ``turnfold render`` never imports traitlets (issue 19).

>>> s = normalize_settings({"transcriptDisplayMode": "flat", "thinkingDisplayMode": "compact"})
>>> s["transcript_display_mode"], s["show_thinking"]
('flat', False)

T-3: these are presentation preferences only. Nothing here touches a transcript, an export, a copy
payload or anything sent to a model, and the input mapping is never modified.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeGuard

from turnfold.i18n import normalize_locale
from turnfold.userwarn import warn_at_caller

if TYPE_CHECKING:
    from turnfold.live_settings import DisplaySettings

__all__ = [
    "DEFAULT_DISPLAY_MODE",
    "DISPLAY_MODES",
    "SETTING_NAMES",
    "DisplaySettings",
    "normalize_settings",
]

DISPLAY_MODES = ("flat", "command-first", "fully-folded")
DEFAULT_DISPLAY_MODE = "fully-folded"

# T-1: every setting and its default, in the order the spec lists them.
_DEFAULTS: dict[str, Any] = {
    "show_thinking": True,
    "transcript_display_mode": DEFAULT_DISPLAY_MODE,
    "auto_collapse_settled_groups": True,
    "auto_collapse_thinking": True,
    "emit_tool_use_summaries": True,
    "fast_model": None,
    "locale": "en",
    "full_detail": False,
    "show_tool_call_args": False,
    "show_turn_usage": False,  # U-3: each turn header adds its tokens and cost
}
SETTING_NAMES: tuple[str, ...] = tuple(_DEFAULTS)

# T-2: kept only so old settings files still load; neither is ever written back out.
_LEGACY_THINKING = "thinking_display_mode"
_DEPRECATED = "keep_commands_expanded"

# Mode spellings are compared with case, spaces, "_" and "-" removed, so " Flat ",
# "command_first", "commandFirst" and "Fully folded" all mean what a person would expect.
_MODE_BY_SQUASHED = {mode.replace("-", ""): mode for mode in DISPLAY_MODES}

_MISSING: Any = object()

# What fast_model may hold: a model name, endpoint options, or a callable that does the call.
FastModel = str | dict[str, Any] | Callable[..., Any] | None


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


# Every spelling we recognise -> its snake_case name (anything else is an unknown key).
_ALIASES: dict[str, str] = {
    alias: name
    for name in (*SETTING_NAMES, _LEGACY_THINKING, _DEPRECATED)
    for alias in (name, _camel(name))
}


def _pick(mapping: Mapping[Any, Any], snake: str) -> Any:
    """Return the value under ``snake`` or its camelCase twin; snake_case wins when both exist."""
    if snake in mapping:
        return mapping[snake]
    return mapping.get(_camel(snake), _MISSING)


def _is_internal(module: str) -> bool:
    # The widget too: ``TranscriptWidget(t, transcript_display_mode=...)`` sets the setting.
    return (
        module in (__name__, _LIVE, "turnfold.widget")
        or module == "traitlets"
        or module.startswith("traitlets.")
    )


def _warn_all(problems: list[str]) -> None:
    """Warn about each problem, attributed to the first frame outside this module and traitlets.

    Coercers only collect problems so that the warning points at the user's line (a settings
    call, a trait assignment, a ``traitlets.link``) however deep traitlets' own call chain is.
    """
    for message in problems:
        warn_at_caller(message, UserWarning, _is_internal)


def _coerce_mode(value: object, problems: list[str]) -> str:
    """T-2: a missing or invalid ``transcript_display_mode`` resolves to ``fully-folded``."""
    if value is _MISSING or value is None:
        return DEFAULT_DISPLAY_MODE
    if isinstance(value, str):
        mode = _MODE_BY_SQUASHED.get(re.sub(r"[\s_-]", "", value).lower())
        if mode is not None:
            return mode
    problems.append(f"invalid transcript_display_mode {value!r}; using {DEFAULT_DISPLAY_MODE!r}")
    return DEFAULT_DISPLAY_MODE


def _coerce_show_thinking(value: object, legacy: object, problems: list[str]) -> bool:
    """T-2: a missing or non-bool ``show_thinking`` falls back to legacy ``thinking_display_mode``.

    Only an explicit ``compact`` hides reasoning; ``detailed``, unknown or missing shows it.
    """
    if isinstance(value, bool):
        return value
    if value is not _MISSING and value is not None:
        problems.append(f"show_thinking must be a bool, got {value!r}; using the legacy fallback")
    return not (isinstance(legacy, str) and legacy.strip().lower() == "compact")


def _coerce_bool(name: str, value: object, problems: list[str]) -> bool:
    # Real bools only: "false" or 0 from a hand-edited file would otherwise read as a choice.
    if isinstance(value, bool):
        return value
    default: bool = _DEFAULTS[name]
    if value is not _MISSING and value is not None:
        problems.append(f"{name} must be a bool, got {value!r}; using {default!r}")
    return default


def _coerce_fast_model(value: object, problems: list[str]) -> FastModel:
    """A model name, a mapping of endpoint options (copied, never shared), a callable, or None."""
    if value is _MISSING or value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, Mapping):
        return dict(value)
    if callable(value):
        return value
    problems.append(f"fast_model must be a name, mapping or callable, got {value!r}; using None")
    return None


def _coerce_locale(value: object, problems: list[str]) -> str:
    if value is _MISSING or value is None:
        return str(_DEFAULTS["locale"])
    if isinstance(value, str):
        return normalize_locale(value)
    problems.append(f"locale must be a string, got {value!r}; using 'en'")
    return str(_DEFAULTS["locale"])


def _normalize(mapping: Mapping[Any, Any], problems: list[str]) -> dict[str, Any]:
    unknown = sorted(repr(key) for key in mapping if key not in _ALIASES)
    if unknown:
        problems.append(f"ignoring unknown display settings: {', '.join(unknown)}")
    # T-2: keep_commands_expanded is a known alias (so it is not "unknown") that is never read.
    out: dict[str, Any] = {}
    for name in SETTING_NAMES:
        value = _pick(mapping, name)
        if name == "show_thinking":
            legacy = _pick(mapping, _LEGACY_THINKING)
            out[name] = _coerce_show_thinking(value, legacy, problems)
        elif name == "transcript_display_mode":
            out[name] = _coerce_mode(value, problems)
        elif name == "fast_model":
            out[name] = _coerce_fast_model(value, problems)
        elif name == "locale":
            out[name] = _coerce_locale(value, problems)
        else:
            out[name] = _coerce_bool(name, value, problems)
    return out


def normalize_settings(mapping: Mapping[str, Any] | DisplaySettings | None) -> dict[str, Any]:
    """Return a complete snake_case dict of every display setting, defaults filled in.

    Keys may be snake_case or camelCase; when both spellings of one setting are present the
    snake_case one wins. Invalid values fall back to their default with a ``UserWarning``; unknown
    keys are ignored with one warning listing them. The legacy ``thinking_display_mode`` only feeds
    ``show_thinking`` and the deprecated ``keep_commands_expanded`` is dropped (T-2).

    >>> s = normalize_settings({"showThinking": False, "transcript_display_mode": "Command_First"})
    >>> s["show_thinking"], s["transcript_display_mode"], s["auto_collapse_thinking"]
    (False, 'command-first', True)
    >>> normalize_settings(None)["transcript_display_mode"]
    'fully-folded'
    """
    if mapping is None:
        return dict(_DEFAULTS)
    if _is_live(mapping):
        return mapping.to_dict()
    if not isinstance(mapping, Mapping):
        raise TypeError(f"display settings must be a mapping, got {type(mapping).__name__}")
    problems: list[str] = []
    out = _normalize(mapping, problems)
    _warn_all(problems)
    return out


@dataclass(frozen=True)
class SettingsSnapshot:
    """The display settings a view is built with (:meth:`DisplaySettings.snapshot`)."""

    show_thinking: bool
    transcript_display_mode: str
    auto_collapse_settled_groups: bool
    auto_collapse_thinking: bool
    locale: str
    full_detail: bool
    show_tool_call_args: bool
    show_turn_usage: bool


#: The defaults as a snapshot: what a view is built with when no settings are given.
DEFAULT_SNAPSHOT = SettingsSnapshot(**{f.name: _DEFAULTS[f.name] for f in fields(SettingsSnapshot)})


def snapshot_of(
    settings: DisplaySettings | SettingsSnapshot | Mapping[str, Any] | None,
) -> SettingsSnapshot:
    """``settings`` as a snapshot; None means the defaults, and a mapping is normalized as by
    :func:`normalize_settings` (neither needs traitlets: ``turnfold render`` builds its page
    from a snapshot of its options)."""
    if isinstance(settings, SettingsSnapshot):
        return settings
    if settings is None:
        return DEFAULT_SNAPSHOT
    if _is_live(settings):
        return settings.snapshot()
    normalized = normalize_settings(settings)
    return SettingsSnapshot(**{f.name: normalized[f.name] for f in fields(SettingsSnapshot)})


#: The module of :class:`DisplaySettings`, which imports traitlets.
_LIVE = "turnfold.live_settings"


def _is_live(value: object) -> TypeGuard[DisplaySettings]:
    """Whether ``value`` is a :class:`DisplaySettings`, asked without importing traitlets: there
    is none before its module was imported."""
    live = sys.modules.get(_LIVE)
    return live is not None and isinstance(value, live.DisplaySettings)


def __getattr__(name: str) -> object:
    """:class:`DisplaySettings`, imported from its module when first named here."""
    if name == "DisplaySettings":
        from turnfold.live_settings import DisplaySettings

        return DisplaySettings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
