"""Live display settings (T-1) as traitlets, so widgets can ``traitlets.link`` to them.

:class:`DisplaySettings` holds what :func:`turnfold.settings.normalize_settings` resolves; its
validators apply the same rules (T-2). It lives apart from :mod:`turnfold.settings` because
traitlets takes longer to import than a small page takes to draw: a view is built from a
:class:`~turnfold.settings.SettingsSnapshot`, which ``turnfold render`` makes with no traitlets
at all (issue 19). ``turnfold.settings.DisplaySettings`` names this class too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import traitlets

from turnfold.i18n import normalize_locale
from turnfold.settings import (
    _ALIASES,
    _LEGACY_THINKING,
    DEFAULT_DISPLAY_MODE,
    SETTING_NAMES,
    FastModel,
    SettingsSnapshot,
    _coerce_fast_model,
    _coerce_mode,
    _normalize,
    _warn_all,
    normalize_settings,
)

__all__ = ["DisplaySettings"]


class _AnyValue(traitlets.Any):
    """An Any trait whose None also reaches the @validate handler.

    T-2 says an invalid mode resolves to fully-folded "everywhere it is read", so a non-string
    must reach the validator instead of raising TraitError (as Unicode would), and so must None,
    which plain Any lets through unvalidated (and ``allow_none=False`` cannot switch off).
    """

    allow_none = False


class DisplaySettings(traitlets.HasTraits):
    """Live display settings (T-1) that transcript and settings widgets can ``traitlets.link``.

    >>> s = DisplaySettings.from_mapping({"transcriptDisplayMode": "command-first"})
    >>> s.transcript_display_mode
    'command-first'
    >>> s.update({"showThinking": False})
    >>> s.show_thinking
    False
    """

    show_thinking = traitlets.Bool(True)
    transcript_display_mode = _AnyValue(DEFAULT_DISPLAY_MODE)
    auto_collapse_settled_groups = traitlets.Bool(True)
    auto_collapse_thinking = traitlets.Bool(True)
    emit_tool_use_summaries = traitlets.Bool(True)
    fast_model = traitlets.Any(None)
    locale = traitlets.Unicode("en")
    # Per-view toggles: full_detail forces every tool onto its own row (F-14).
    full_detail = traitlets.Bool(False)
    show_tool_call_args = traitlets.Bool(False)
    # U-3: tokens and ≈ cost on each turn header, beside its duration and tool count.
    show_turn_usage = traitlets.Bool(False)

    @traitlets.validate("transcript_display_mode")
    def _validate_mode(self, proposal: Mapping[str, Any]) -> str:
        problems: list[str] = []
        mode = _coerce_mode(proposal["value"], problems)
        _warn_all(problems)
        return mode

    @traitlets.validate("fast_model")
    def _validate_fast_model(self, proposal: Mapping[str, Any]) -> FastModel:
        problems: list[str] = []
        model = _coerce_fast_model(proposal["value"], problems)
        _warn_all(problems)
        return model

    @traitlets.validate("locale")
    def _validate_locale(self, proposal: Mapping[str, Any]) -> str:
        return normalize_locale(proposal["value"])

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any] | None) -> DisplaySettings:
        """Build settings from any mapping accepted by :func:`normalize_settings`."""
        return cls(**normalize_settings(mapping))

    def to_dict(self) -> dict[str, Any]:
        """Every setting as a normalized snake_case dict; legacy keys are never written (T-2)."""
        return {name: getattr(self, name) for name in SETTING_NAMES}

    def snapshot(self) -> SettingsSnapshot:
        """What a view is built with, as it is now, read at plain-attribute speed.

        Building a long session's view reads the settings tens of thousands of times; a trait
        read costs several times a plain attribute (Q-1), and a snapshot cannot change halfway.
        """
        return SettingsSnapshot(
            show_thinking=self.show_thinking,
            transcript_display_mode=self.transcript_display_mode,
            auto_collapse_settled_groups=self.auto_collapse_settled_groups,
            auto_collapse_thinking=self.auto_collapse_thinking,
            locale=self.locale,
            full_detail=self.full_detail,
            show_tool_call_args=self.show_tool_call_args,
            show_turn_usage=self.show_turn_usage,
        )

    def update(self, mapping: Mapping[str, Any]) -> None:
        """Apply only the settings named in ``mapping``, normalized exactly as when loading.

        An invalid value therefore resolves to its default (T-2) rather than keeping the old one.
        A lone legacy ``thinking_display_mode`` still counts as setting ``show_thinking``.
        """
        if not isinstance(mapping, Mapping):
            raise TypeError(f"display settings must be a mapping, got {type(mapping).__name__}")
        problems: list[str] = []
        normalized = _normalize(mapping, problems)
        _warn_all(problems)
        present = {_ALIASES[key] for key in mapping if key in _ALIASES}
        if _LEGACY_THINKING in present:
            present.add("show_thinking")
        # One notification burst, so linked widgets redraw once with a consistent state.
        with self.hold_trait_notifications():
            for name in SETTING_NAMES:
                if name in present:
                    setattr(self, name, normalized[name])
