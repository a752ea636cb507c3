"""Layered display defaults (spec T-5), read through jupyter_core's config path.

Every test runs in an isolated Jupyter config: ``JUPYTER_CONFIG_DIR`` (the user's directory) and
``JUPYTER_CONFIG_PATH`` point into ``tmp_path``, and jupyter_core's environment and system
directories are replaced, so nothing on the machine running the tests is read or written.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import site
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jupyter_core.paths
import pytest

from turnfold import config
from turnfold.config import (
    PERSISTED_SETTINGS,
    SETTINGS_FILE,
    ConfigWarning,
    environment_settings,
    load_settings,
    save_user_defaults,
    settings_files,
    user_settings_path,
)
from turnfold.settings import SETTING_NAMES, DisplaySettings, normalize_settings

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS = normalize_settings(None)
LEGACY_KEYS = {
    "thinking_display_mode",
    "thinkingDisplayMode",
    "keep_commands_expanded",
    "keepCommandsExpanded",
}


@dataclass
class Jupyter:
    """The isolated config directories, lowest priority first, and the user's directory."""

    system: Path
    environment: Path
    path_low: Path
    path_high: Path
    user: Path

    def write(self, directory: Path, data: Any) -> Path:
        text = data if isinstance(data, str | bytes) else json.dumps(data)
        path = directory / SETTINGS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path


@pytest.fixture
def jupyter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Jupyter:
    dirs = Jupyter(*(tmp_path / name for name in ("system", "env", "low", "high", "user")))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(dirs.user))
    listed = os.pathsep.join([str(dirs.path_high), str(dirs.path_low)])  # highest first
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", listed)
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "0")
    monkeypatch.setenv("JUPYTER_PREFER_ENV_PATH", "1")  # as inside a virtualenv
    monkeypatch.delenv("JUPYTER_NO_CONFIG", raising=False)
    monkeypatch.setattr(jupyter_core.paths, "ENV_CONFIG_PATH", [str(dirs.environment)])
    monkeypatch.setattr(jupyter_core.paths, "SYSTEM_CONFIG_PATH", [str(dirs.system)])
    monkeypatch.setattr(site, "ENABLE_USER_SITE", False)
    for variable in list(os.environ):
        if variable.startswith("TURNFOLD_"):
            monkeypatch.delenv(variable)
    monkeypatch.setattr(config, "_reported", set())  # "reported once" is per process
    return dirs


@pytest.fixture
def no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# --- where the files are ---------------------------------------------------------------------


@pytest.mark.parametrize("prefer_env", ["1", "0"])
def test_T5_user_file_is_applied_last_and_the_path_from_system_up(
    jupyter: Jupyter, monkeypatch: pytest.MonkeyPatch, prefer_env: str
) -> None:
    monkeypatch.setenv("JUPYTER_PREFER_ENV_PATH", prefer_env)
    expected = [
        jupyter.system,
        jupyter.environment,
        jupyter.path_low,
        jupyter.path_high,
        jupyter.user,
    ]
    assert settings_files() == [d / SETTINGS_FILE for d in expected]
    assert user_settings_path() == jupyter.user / "turnfold" / "settings.json"


def test_T5_a_directory_listed_twice_is_read_once_at_its_highest_place(
    jupyter: Jupyter, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed = [jupyter.path_high, jupyter.system, jupyter.user]
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", os.pathsep.join(map(str, listed)))
    files = settings_files()
    assert files == [
        jupyter.environment / SETTINGS_FILE,
        jupyter.system / SETTINGS_FILE,
        jupyter.path_high / SETTINGS_FILE,
        jupyter.user / SETTINGS_FILE,
    ]


# --- layers ----------------------------------------------------------------------------------

LAYERS = ["system", "environment", "path_low", "path_high", "user", "environ", "arguments"]


def set_layer(
    jupyter: Jupyter, monkeypatch: pytest.MonkeyPatch, layer: str, values: dict[str, Any]
) -> dict[str, Any]:
    """Put ``values`` into one layer; returns the keyword arguments for the arguments layer."""
    if layer == "arguments":
        return values
    if layer == "environ":
        for name, value in values.items():
            text = ("on" if value else "off") if isinstance(value, bool) else str(value)
            monkeypatch.setenv(f"TURNFOLD_{name.upper()}", text)
        return {}
    jupyter.write(getattr(jupyter, layer), values)
    return {}


@pytest.mark.usefixtures("no_warnings")
def test_T5_no_files_gives_the_built_in_defaults(jupyter: Jupyter) -> None:
    assert load_settings().to_dict() == DEFAULTS


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize(("lower", "upper"), list(itertools.pairwise(LAYERS)))
def test_T5_a_layer_overrides_only_the_keys_it_sets(
    jupyter: Jupyter, monkeypatch: pytest.MonkeyPatch, lower: str, upper: str
) -> None:
    overrides = set_layer(
        jupyter,
        monkeypatch,
        lower,
        {"transcript_display_mode": "command-first", "show_thinking": False, "locale": "zh"},
    )
    overrides |= set_layer(jupyter, monkeypatch, upper, {"transcript_display_mode": "flat"})
    settings = load_settings(**overrides)
    assert settings.transcript_display_mode == "flat"  # the upper layer wins for its key ...
    assert settings.show_thinking is False  # ... and its filled-in defaults clobber nothing
    assert settings.locale == "zh"
    assert settings.auto_collapse_thinking is True  # nobody set it: built-in default


@pytest.mark.usefixtures("no_warnings")
def test_T5_every_layer_at_once(jupyter: Jupyter, monkeypatch: pytest.MonkeyPatch) -> None:
    names = [
        "show_thinking",
        "auto_collapse_thinking",
        "auto_collapse_settled_groups",
        "emit_tool_use_summaries",
        "full_detail",
        "show_tool_call_args",
    ]
    overrides: dict[str, Any] = {}
    # Layer i flips names[i:] to not-default, so names[i] is last set by layer i.
    for index, layer in enumerate(LAYERS[: len(names)]):
        flipped = {name: not DEFAULTS[name] for name in names[index:]}
        overrides |= set_layer(jupyter, monkeypatch, layer, flipped)
    settings = load_settings(**overrides)
    assert {name: getattr(settings, name) for name in names} == {n: not DEFAULTS[n] for n in names}


@pytest.mark.usefixtures("no_warnings")
def test_T5_camel_case_keys_in_files(jupyter: Jupyter) -> None:
    jupyter.write(
        jupyter.user, {"transcriptDisplayMode": "Command_First", "autoCollapseThinking": False}
    )
    settings = load_settings()
    assert settings.transcript_display_mode == "command-first"
    assert settings.auto_collapse_thinking is False


@pytest.mark.usefixtures("no_warnings")
def test_T5_user_file_beats_the_environment_prefix_file_inside_a_virtualenv(
    jupyter: Jupyter,
) -> None:
    # jupyter_core ranks <venv>/etc/jupyter above the user when it prefers the environment;
    # the reader's saved defaults must still win (T-5: user above the config path).
    jupyter.write(jupyter.environment, {"transcript_display_mode": "flat"})
    jupyter.write(jupyter.user, {"transcript_display_mode": "command-first"})
    assert load_settings().transcript_display_mode == "command-first"


@pytest.mark.usefixtures("no_warnings")
def test_T5_the_shipped_file_does_not_mask_system_settings(jupyter: Jupyter) -> None:
    # The wheel installs jupyter-config/ into <prefix>/etc/jupyter, above /etc/jupyter.
    shipped = ROOT / "jupyter-config" / SETTINGS_FILE
    (jupyter.environment / "turnfold").mkdir(parents=True)
    shutil.copy(shipped, jupyter.environment / SETTINGS_FILE)
    jupyter.write(jupyter.system, {"locale": "zh", "transcript_display_mode": "flat"})
    settings = load_settings()
    assert (settings.locale, settings.transcript_display_mode) == ("zh", "flat")


def test_T5_invalid_argument_resolves_like_any_setting(jupyter: Jupyter) -> None:
    jupyter.write(jupyter.user, {"transcript_display_mode": "flat"})
    with pytest.warns(UserWarning, match="transcript_display_mode"):
        settings = load_settings(transcript_display_mode="sideways")
    assert settings.transcript_display_mode == "fully-folded"  # T-2


def test_T5_load_returns_a_fresh_settings_object(jupyter: Jupyter) -> None:
    first, second = load_settings(), load_settings()
    assert isinstance(first, DisplaySettings)
    assert first is not second


# --- environment variables -------------------------------------------------------------------

TRUE_WORDS = ["1", "true", "yes", "on", "TRUE", " Yes ", "On"]
FALSE_WORDS = ["0", "false", "no", "off", "FALSE", " No ", "Off"]


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize(
    ("word", "expected"), [(w, True) for w in TRUE_WORDS] + [(w, False) for w in FALSE_WORDS]
)
@pytest.mark.parametrize(
    "name",
    # TURNFOLD_EMIT_TOOL_USE_SUMMARIES belongs to the summaries gate and its exact rules (S-3).
    [n for n in SETTING_NAMES if isinstance(DEFAULTS[n], bool) and n != "emit_tool_use_summaries"],
)
def test_T5_env_booleans(name: str, word: str, expected: bool) -> None:
    assert environment_settings({f"TURNFOLD_{name.upper()}": word}) == {name: expected}


@pytest.mark.parametrize("word", ["0", "false", "1", "true", "yes", "off"])
def test_S3_the_summaries_switch_is_not_a_settings_layer(word: str) -> None:
    assert environment_settings({"TURNFOLD_EMIT_TOOL_USE_SUMMARIES": word}) == {}


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize(
    ("variable", "raw", "expected"),
    [
        ("TURNFOLD_TRANSCRIPT_DISPLAY_MODE", "flat", {"transcript_display_mode": "flat"}),
        (
            "TURNFOLD_TRANSCRIPT_DISPLAY_MODE",
            "Command_First",
            {"transcript_display_mode": "command-first"},
        ),
        ("TURNFOLD_LOCALE", "zh_CN", {"locale": "zh"}),
        ("TURNFOLD_FAST_MODEL", "claude-haiku", {"fast_model": "claude-haiku"}),
        ("TURNFOLD_SHOW_THINKING", "", {}),  # empty means unset
        ("TURNFOLD_LOCALE", "   ", {}),
        ("TURNFOLD_UNRELATED", "x", {}),
        ("SHOW_THINKING", "off", {}),  # only the TURNFOLD_ prefix counts
    ],
)
def test_T5_env_values(variable: str, raw: str, expected: dict[str, Any]) -> None:
    assert environment_settings({variable: raw}) == expected


@pytest.mark.parametrize(
    ("variable", "raw"),
    [
        ("TURNFOLD_SHOW_THINKING", "maybe"),
        ("TURNFOLD_SHOW_THINKING", "2"),
        ("TURNFOLD_AUTO_COLLAPSE_THINKING", "enabled"),
        ("TURNFOLD_TRANSCRIPT_DISPLAY_MODE", "sideways"),
    ],
)
def test_T5_invalid_env_value_warns_and_is_ignored(
    jupyter: Jupyter, monkeypatch: pytest.MonkeyPatch, variable: str, raw: str
) -> None:
    name = variable.removeprefix("TURNFOLD_").lower()
    lower = {"transcript_display_mode": "flat"} if "MODE" in variable else {name: False}
    jupyter.write(jupyter.user, lower)
    monkeypatch.setenv(variable, raw)
    with pytest.warns(ConfigWarning, match=variable) as caught:
        settings = load_settings()
    assert len(caught) == 1
    assert getattr(settings, name) == next(iter(lower.values()))  # the lower layer stays


def test_T5_invalid_env_value_is_reported_once(
    jupyter: Jupyter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURNFOLD_SHOW_THINKING", "maybe")
    with pytest.warns(ConfigWarning):
        load_settings()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_settings()


# --- broken files ----------------------------------------------------------------------------

BROKEN: list[tuple[str, str | bytes, str]] = [
    ("bad-json", '{\n  "locale": "zh",\n  oops\n}\n', r"settings\.json:3:3: invalid JSON"),
    ("truncated", '{"locale": ', r"settings\.json:1:\d+: invalid JSON"),
    ("empty", "", r"settings\.json:1:1: invalid JSON"),
    ("list", '["flat"]', r"settings\.json:1: display settings must be a JSON object, not list"),
    ("string", '"flat"', r"settings\.json:1: .*not str"),
    ("null", "null", r"settings\.json:1: .*not NoneType"),
    ("not-utf8", b'{"locale": "\xff\xfe"}', r"settings\.json: cannot read display settings"),
]


@pytest.mark.parametrize(
    ("content", "pattern"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN]
)
def test_T5_broken_file_is_reported_once_and_ignored(
    jupyter: Jupyter, content: str | bytes, pattern: str
) -> None:
    jupyter.write(jupyter.system, {"transcript_display_mode": "flat"})
    path = jupyter.write(jupyter.user, content)
    with pytest.warns(ConfigWarning, match=pattern) as caught:
        settings = load_settings()
    assert len(caught) == 1
    assert str(path) in str(caught[0].message)
    assert settings.transcript_display_mode == "flat"  # the layers below still apply
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reported once: later loads stay quiet
        assert load_settings().transcript_display_mode == "flat"


def test_T5_unreadable_path_is_reported_and_ignored(jupyter: Jupyter) -> None:
    (jupyter.user / SETTINGS_FILE).mkdir(parents=True)  # a directory where the file should be
    with pytest.warns(ConfigWarning, match="cannot read display settings"):
        assert load_settings().to_dict() == DEFAULTS


@pytest.mark.usefixtures("no_warnings")
def test_T5_a_file_under_a_non_directory_is_simply_absent(jupyter: Jupyter) -> None:
    jupyter.user.mkdir()
    (jupyter.user / "turnfold").write_text("not a directory", encoding="utf-8")
    assert load_settings().to_dict() == DEFAULTS


@pytest.mark.usefixtures("no_warnings")
def test_T5_byte_order_mark_is_tolerated(jupyter: Jupyter) -> None:
    jupyter.write(jupyter.user, '\ufeff{"transcript_display_mode": "flat"}')
    assert load_settings().transcript_display_mode == "flat"


def test_T5_bad_values_in_a_file_are_reported_with_the_file(jupyter: Jupyter) -> None:
    jupyter.write(jupyter.system, {"transcript_display_mode": "flat", "locale": "zh"})
    path = jupyter.write(
        jupyter.user,
        {"transcript_display_mode": "sideways", "colour": "red", "showThinking": False},
    )
    with pytest.warns(ConfigWarning) as caught:
        settings = load_settings()
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert all(message.startswith(f"{path}: ") for message in messages)
    assert "'colour'" in messages[0]
    assert "sideways" in messages[1]
    # T-2: an invalid mode resolves to fully-folded; the file's valid keys still apply.
    assert settings.transcript_display_mode == "fully-folded"
    assert settings.show_thinking is False
    assert settings.locale == "zh"


# --- saving ----------------------------------------------------------------------------------


def saved(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


@pytest.mark.usefixtures("no_warnings")
def test_T5_save_writes_the_normalized_persisted_settings(jupyter: Jupyter) -> None:
    settings = DisplaySettings(
        show_thinking=False,
        transcript_display_mode="command-first",
        auto_collapse_settled_groups=False,
        fast_model="claude-haiku",
        locale="zh",
        full_detail=True,
        show_tool_call_args=True,
    )
    path = save_user_defaults(settings)
    assert path == jupyter.user / "turnfold" / "settings.json"
    data = saved(path)
    assert list(data) == list(PERSISTED_SETTINGS)  # normalized snake_case, in T-1 order
    assert "full_detail" not in data
    assert "show_tool_call_args" not in data
    assert data == {name: getattr(settings, name) for name in PERSISTED_SETTINGS}
    assert path.read_text("utf-8").endswith("}\n")


@pytest.mark.usefixtures("no_warnings")
def test_T5_save_round_trips_through_load(jupyter: Jupyter) -> None:
    jupyter.write(
        jupyter.system, {"transcript_display_mode": "flat", "emit_tool_use_summaries": False}
    )
    chosen = {
        "show_thinking": False,
        "transcript_display_mode": "command-first",
        "auto_collapse_thinking": False,
        "locale": "zh",
    }
    save_user_defaults(load_settings(**chosen))
    loaded = load_settings().to_dict()
    assert loaded == {**DEFAULTS, **chosen, "emit_tool_use_summaries": False}


@pytest.mark.usefixtures("no_warnings")
def test_T5_save_accepts_camel_case_mappings(jupyter: Jupyter) -> None:
    path = save_user_defaults({"transcriptDisplayMode": "flat", "showToolCallArgs": True})
    assert saved(path)["transcript_display_mode"] == "flat"
    assert set(saved(path)) == set(PERSISTED_SETTINGS)


@pytest.mark.usefixtures("no_warnings")
def test_T5_save_is_atomic(jupyter: Jupyter, monkeypatch: pytest.MonkeyPatch) -> None:
    replaced: list[tuple[Path, Path]] = []
    real_replace = os.replace

    def spy(src: Any, dst: Any) -> None:
        replaced.append((Path(src), Path(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    path = save_user_defaults({"locale": "zh"})
    [(temporary, destination)] = replaced
    assert destination == path
    assert temporary.parent == path.parent  # same directory, so os.replace is atomic
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_T5_failed_save_leaves_the_old_file_and_no_temporary(
    jupyter: Jupyter, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = save_user_defaults({"transcript_display_mode": "flat"})
    before = path.read_bytes()

    def failing_replace(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space left"):
        save_user_defaults({"transcript_display_mode": "command-first"})
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


@pytest.mark.usefixtures("no_warnings")
def test_T5_save_writes_through_a_symlinked_settings_file(jupyter: Jupyter, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "turnfold-settings.json"
    real.parent.mkdir()
    real.write_text("{}", encoding="utf-8")
    (jupyter.user / "turnfold").mkdir(parents=True)
    (jupyter.user / SETTINGS_FILE).symlink_to(real)
    save_user_defaults({"transcript_display_mode": "flat"})
    assert (jupyter.user / SETTINGS_FILE).is_symlink()
    assert saved(real)["transcript_display_mode"] == "flat"


def test_T5_an_unsaveable_fast_model_is_left_out(jupyter: Jupyter) -> None:
    def summarize(prompt: str) -> str:
        return prompt

    with pytest.warns(ConfigWarning, match="fast_model"):
        path = save_user_defaults(DisplaySettings(fast_model=summarize, locale="zh"))
    assert "fast_model" not in saved(path)
    assert saved(path)["locale"] == "zh"


# --- legacy keys (T-2) -----------------------------------------------------------------------

LEGACY_FILE = {
    "thinkingDisplayMode": "compact",
    "keepCommandsExpanded": True,
    "transcriptDisplayMode": "command-first",
}


@pytest.mark.usefixtures("no_warnings")
def test_T2_legacy_keys_in_a_user_file_load(jupyter: Jupyter) -> None:
    jupyter.write(jupyter.system, {"show_thinking": True})
    jupyter.write(jupyter.user, LEGACY_FILE)
    settings = load_settings()
    assert settings.show_thinking is False  # explicit compact hides reasoning
    assert settings.transcript_display_mode == "command-first"
    assert not hasattr(settings, "keep_commands_expanded")


@pytest.mark.usefixtures("no_warnings")
def test_T2_legacy_keys_are_never_written_back(jupyter: Jupyter) -> None:
    path = jupyter.write(jupyter.user, LEGACY_FILE)
    save_user_defaults(load_settings())
    data = saved(path)
    assert not LEGACY_KEYS & set(data)
    assert data["show_thinking"] is False
    assert data["transcript_display_mode"] == "command-first"
    save_user_defaults(LEGACY_FILE)  # a raw legacy mapping is normalized before writing too
    assert not LEGACY_KEYS & set(saved(path))


# --- the fixture itself ----------------------------------------------------------------------


def test_isolation_reads_nothing_from_the_machine(jupyter: Jupyter) -> None:
    assert all(path.is_relative_to(jupyter.user.parent) for path in settings_files())
