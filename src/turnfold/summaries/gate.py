"""Whether tool-use summary labels are generated at all (spec S-2, S-3).

Three layers, highest first: the ``TURNFOLD_EMIT_TOOL_USE_SUMMARIES`` environment variable, the
``emit_tool_use_summaries`` setting (default true), and the fast model: without one nothing is
ever generated, whatever the other two say.

>>> summaries_enabled(True, fast_model=lambda request: "Read a.ts", environ={})
True
>>> summaries_enabled(True, fast_model=lambda request: "Read a.ts",
...                   environ={ENV_VARIABLE: "false"})
False
>>> summaries_enabled(True, fast_model=None, environ={ENV_VARIABLE: "1"})
False
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["ENV_VARIABLE", "env_override", "setting_enabled", "summaries_enabled"]

ENV_VARIABLE = "TURNFOLD_EMIT_TOOL_USE_SUMMARIES"

_FORCE_OFF = frozenset({"0", "false"})
_FORCE_ON = frozenset({"1", "true"})


def env_override(environ: Mapping[str, str] | None = None) -> bool | None:
    """The switch of S-3: ``False`` for exactly ``0`` or ``false``, ``True`` for exactly ``1`` or
    ``true``, ``None`` (defer to the setting) for anything else, unset included.

    The match is exact: ``FALSE``, `` 0`` or ``no`` defer to the setting.

    >>> [env_override({ENV_VARIABLE: v}) for v in ("0", "false", "1", "true", "False", "")]
    [False, False, True, True, None, None]
    """
    env = os.environ if environ is None else environ
    value = env.get(ENV_VARIABLE)
    if value in _FORCE_OFF:
        return False
    if value in _FORCE_ON:
        return True
    return None


def setting_enabled(settings: Any) -> bool:
    """The ``emit_tool_use_summaries`` setting of a DisplaySettings, a mapping or a bool.

    A mapping is read in snake_case or camelCase; anything missing or not a bool means the
    default, on.
    """
    if isinstance(settings, bool):
        return settings
    if settings is None:
        return True
    if isinstance(settings, Mapping):
        for key in ("emit_tool_use_summaries", "emitToolUseSummaries"):
            value = settings.get(key)
            if isinstance(value, bool):
                return value
        return True
    value = getattr(settings, "emit_tool_use_summaries", True)
    return value if isinstance(value, bool) else True


def summaries_enabled(
    settings: Any = None,
    *,
    fast_model: Any,
    environ: Mapping[str, str] | None = None,
) -> bool:
    """Whether labels are generated: a fast model is configured, and the switch (S-3) or, when it
    defers, the setting says so (S-2)."""
    if fast_model is None:
        return False
    forced = env_override(environ)
    if forced is not None:
        return forced
    return setting_enabled(settings)
