"""Display defaults from Jupyter config, the environment and arguments, in layers (spec T-5).

Lowest priority first: the built-in defaults (T-1) < ``turnfold/settings.json`` in each directory
of Jupyter's config path < the same file in the user's Jupyter config directory < ``TURNFOLD_*``
environment variables < keyword arguments. A layer overrides only the settings it names, so a file
holding just ``{"locale": "zh"}`` leaves every other choice to the layers below it.

>>> import os
>>> from unittest import mock
>>> with mock.patch.dict(os.environ, TURNFOLD_TRANSCRIPT_DISPLAY_MODE="flat"):
...     s = load_settings(show_thinking=False)
>>> s.transcript_display_mode, s.show_thinking
('flat', False)

A broken file or variable is reported once with a :class:`ConfigWarning` and ignored: loading
settings must never stop a transcript from displaying.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import traitlets
from jupyter_core.paths import jupyter_config_dir, jupyter_config_path

from turnfold.settings import SETTING_NAMES, DisplaySettings, normalize_settings
from turnfold.userwarn import warn_at_caller

__all__ = [
    "ENV_PREFIX",
    "PERSISTED_SETTINGS",
    "SETTINGS_FILE",
    "ConfigWarning",
    "environment_settings",
    "load_settings",
    "save_user_defaults",
    "settings_files",
    "user_settings_path",
]

# Relative to a Jupyter config directory; the wheel ships one under <prefix>/etc/jupyter (T-5).
SETTINGS_FILE = Path("turnfold", "settings.json")
ENV_PREFIX = "TURNFOLD_"

# T-1: full_detail and show_tool_call_args are per-view toggles, so "my defaults" never holds them.
_PER_VIEW = frozenset({"full_detail", "show_tool_call_args"})
PERSISTED_SETTINGS: tuple[str, ...] = tuple(n for n in SETTING_NAMES if n not in _PER_VIEW)

_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
_FALSE_WORDS = frozenset({"0", "false", "no", "off"})
_BOOL_SETTINGS = frozenset(
    name for name, value in normalize_settings(None).items() if isinstance(value, bool)
)

# Problems already reported in this process: a notebook builds settings for every display, and
# one broken file must not print the same warning under each of them.
_reported: set[str] = set()


class ConfigWarning(UserWarning):
    """A settings file or ``TURNFOLD_*`` variable that was ignored or corrected."""


def _warn(message: str) -> None:
    """Warn, attributed to the first frame outside turnfold (the reader's cell, not our code)."""
    warn_at_caller(message, ConfigWarning)


def _report(message: str) -> None:
    """Warn about a broken file or variable once per process, however often settings load."""
    if message in _reported:
        return
    _reported.add(message)
    _warn(message)


# --- where the files are ---------------------------------------------------------------------


def user_settings_path() -> Path:
    """The user's settings file: ``<jupyter_config_dir()>/turnfold/settings.json``.

    ``JUPYTER_CONFIG_DIR`` moves it, as it moves every Jupyter config file.
    """
    return Path(jupyter_config_dir()) / SETTINGS_FILE


def _same_path(a: str | Path, b: str | Path) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _unique_keep_last(paths: Iterable[Path]) -> list[Path]:
    """Drop repeats, keeping each path at its highest-priority (last) position."""
    kept: list[Path] = []
    for path in reversed(list(paths)):
        if not any(_same_path(path, seen) for seen in kept):
            kept.append(path)
    return kept[::-1]


def settings_files() -> list[Path]:
    """Every settings file location, lowest priority first; the user's file is always last.

    ``jupyter_config_path()`` lists directories from the highest priority to the lowest (user,
    environment, system), so it is applied in reverse. The user's directory is taken out of it
    and put on top whatever the order Jupyter chose: inside a virtualenv Jupyter ranks the
    environment above the user, and the package's own file there would otherwise hide the
    defaults a reader saved from the settings widget (T-5 puts the user above the path).
    """
    user_dir = jupyter_config_dir()
    path_dirs = [d for d in reversed(jupyter_config_path()) if not _same_path(d, user_dir)]
    return _unique_keep_last([*(Path(d) / SETTINGS_FILE for d in path_dirs), user_settings_path()])


# --- reading one layer -----------------------------------------------------------------------


def _read_file(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; None when it is absent or broken (broken files are reported).

    ``utf-8-sig`` because editors on Windows like to start a JSON file with a byte-order mark.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as exc:
        _report(f"{path}: cannot read display settings ({_reason(exc)}); ignoring this file")
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        _report(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg}); ignoring this file")
        return None
    if not isinstance(data, dict):
        kind = type(data).__name__
        _report(f"{path}:1: display settings must be a JSON object, not {kind}; ignoring this file")
        return None
    return data


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _parse_env_value(name: str, raw: str) -> tuple[bool, Any]:
    """``(ok, value)`` for one variable: booleans from words, the rest as normalize reads them."""
    if name in _BOOL_SETTINGS:
        word = raw.strip().lower()
        if word in _TRUE_WORDS or word in _FALSE_WORDS:
            return True, word in _TRUE_WORDS
        return False, None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = normalize_settings({name: raw})[name]
    return not caught, value


def environment_settings(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings named by ``TURNFOLD_<SETTING>`` variables, parsed; invalid ones are reported.

    Booleans accept ``1/true/yes/on`` and ``0/false/no/off`` in any case. An empty variable counts
    as unset (the shell's ``VAR= command`` idiom). An invalid value is ignored with a warning, so a
    typo in a shell profile leaves the lower layers in charge.

    >>> environment_settings({"TURNFOLD_SHOW_THINKING": "off", "TURNFOLD_LOCALE": "zh-CN"})
    {'show_thinking': False, 'locale': 'zh'}
    """
    env = os.environ if environ is None else environ
    layer: dict[str, Any] = {}
    for name in SETTING_NAMES:
        if name == "emit_tool_use_summaries":
            continue  # S-3: only the summaries gate reads that switch, with its exact-match rules
        variable = ENV_PREFIX + name.upper()
        raw = env.get(variable, "")
        if not raw.strip():
            continue
        ok, value = _parse_env_value(name, raw)
        if ok:
            layer[name] = value
        else:
            _report(f"{variable}={raw!r} is not a valid {name}; ignoring it")
    return layer


def _apply(settings: DisplaySettings, layer: Mapping[str, Any], origin: str) -> None:
    """Apply only the keys ``layer`` names (T-5), normalized as when loading (T-2).

    ``update`` warns about bad values; they are re-reported here with the file they came from.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            settings.update(layer)
        except (traitlets.TraitError, TypeError, ValueError) as exc:
            # Not expected (update normalizes every value), but display must never crash (T-5).
            _report(f"{origin}: unusable display settings ({exc}); ignoring them")
    for caught_warning in caught:
        _report(f"{origin}: {caught_warning.message}")


# --- the public API --------------------------------------------------------------------------


def load_settings(**overrides: Any) -> DisplaySettings:
    """Display settings from every layer of T-5, ``overrides`` on top.

    ``overrides`` take the keys :func:`~turnfold.settings.normalize_settings` accepts (snake_case
    or camelCase); a bad override warns and resolves like any other setting (T-2).

    >>> load_settings(transcriptDisplayMode="command-first").transcript_display_mode
    'command-first'
    """
    settings = DisplaySettings()
    for path in settings_files():
        data = _read_file(path)
        if data is not None:
            _apply(settings, data, str(path))
    _apply(settings, environment_settings(), "environment")
    settings.update(overrides)
    return settings


def _persistable(settings: DisplaySettings | Mapping[str, Any] | None) -> dict[str, Any]:
    """The normalized settings a defaults file holds: no per-view toggles, no legacy keys (T-2).

    A ``fast_model`` that JSON cannot hold (a callable, say) is left out with a warning rather
    than failing the whole save.
    """
    values = normalize_settings(settings)
    data = {name: values[name] for name in PERSISTED_SETTINGS}
    try:
        json.dumps(data["fast_model"], allow_nan=False)
    except (TypeError, ValueError):
        _warn("fast_model cannot be saved as JSON; leaving it out")
        del data["fast_model"]
    return data


def _write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file in the same directory and ``os.replace`` it into place.

    A reader (another kernel loading its settings) sees the old file or the new one, never half
    of one. A symlinked settings file (dotfile managers) is written through, not replaced.
    """
    target = path.resolve() if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def save_user_defaults(settings: DisplaySettings | Mapping[str, Any] | None) -> Path:
    """Save ``settings`` as the user's defaults and return the file written.

    The file holds every persisted setting in normalized snake_case form; it never holds the
    per-view toggles or the legacy ``thinking_display_mode`` / ``keep_commands_expanded`` (T-2).
    Raises ``OSError`` when the file cannot be written; the settings widget reports that instead.

    >>> import os, tempfile
    >>> from unittest import mock
    >>> tmp = tempfile.TemporaryDirectory()
    >>> with mock.patch.dict(os.environ, JUPYTER_CONFIG_DIR=tmp.name):
    ...     path = save_user_defaults({"transcriptDisplayMode": "flat", "full_detail": True})
    ...     saved = json.loads(path.read_text("utf-8"))
    ...     reloaded = load_settings()
    >>> path.name, saved["transcript_display_mode"], "full_detail" in saved
    ('settings.json', 'flat', False)
    >>> reloaded.transcript_display_mode
    'flat'
    >>> tmp.cleanup()
    """
    path = user_settings_path()
    text = json.dumps(_persistable(settings), indent=2, ensure_ascii=False) + "\n"
    _write_atomically(path, text)
    return path
