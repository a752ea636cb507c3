"""Display settings (spec section 6: T-1 settings, T-2 normalization, T-3 presentation only)."""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import traitlets
from hypothesis import given
from hypothesis import strategies as st

from turnfold.settings import (
    DEFAULT_DISPLAY_MODE,
    DISPLAY_MODES,
    SETTING_NAMES,
    DisplaySettings,
    normalize_settings,
)

DEFAULTS = {
    "show_thinking": True,
    "transcript_display_mode": "fully-folded",
    "auto_collapse_settled_groups": True,
    "auto_collapse_thinking": True,
    "emit_tool_use_summaries": True,
    "fast_model": None,
    "locale": "en",
    "full_detail": False,
    "show_tool_call_args": False,
    "show_turn_usage": False,
}
BOOL_KEYS = [name for name, value in DEFAULTS.items() if isinstance(value, bool)]


@pytest.fixture
def no_warnings() -> Iterator[None]:
    """Fail on any warning: valid input must normalize silently."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def normalize_quietly(mapping: Any) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return normalize_settings(mapping)


# --- T-1: the settings and their defaults ---------------------------------------------------


def test_T1_constants() -> None:
    assert DISPLAY_MODES == ("flat", "command-first", "fully-folded")
    assert DEFAULT_DISPLAY_MODE == "fully-folded"
    assert tuple(DEFAULTS) == SETTING_NAMES


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize("mapping", [None, {}], ids=["none", "empty"])
def test_T1_defaults(mapping: dict[str, Any] | None) -> None:
    assert normalize_settings(mapping) == DEFAULTS


@pytest.mark.usefixtures("no_warnings")
def test_T1_display_settings_defaults() -> None:
    assert DisplaySettings().to_dict() == DEFAULTS
    assert DisplaySettings.from_mapping(None).to_dict() == DEFAULTS


def fast_model_fn(prompt: str) -> str:
    return prompt


# (snake key, camel key, a valid non-default value, its normalized form)
KEYS = [
    ("show_thinking", "showThinking", False, False),
    ("transcript_display_mode", "transcriptDisplayMode", "flat", "flat"),
    ("transcript_display_mode", "transcriptDisplayMode", "command-first", "command-first"),
    ("auto_collapse_settled_groups", "autoCollapseSettledGroups", False, False),
    ("auto_collapse_thinking", "autoCollapseThinking", False, False),
    ("emit_tool_use_summaries", "emitToolUseSummaries", False, False),
    ("fast_model", "fastModel", "claude-haiku", "claude-haiku"),
    ("fast_model", "fastModel", {"model": "m", "base_url": "u"}, {"model": "m", "base_url": "u"}),
    ("fast_model", "fastModel", fast_model_fn, fast_model_fn),
    ("locale", "locale", "zh", "zh"),
    ("full_detail", "fullDetail", True, True),
    ("show_tool_call_args", "showToolCallArgs", True, True),
    ("show_turn_usage", "showTurnUsage", True, True),
]


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize("case", ["snake", "camel"])
@pytest.mark.parametrize(("snake", "camel", "value", "expected"), KEYS)
def test_T1_each_key_in_snake_and_camel_case(
    case: str, snake: str, camel: str, value: Any, expected: Any
) -> None:
    key = snake if case == "snake" else camel
    result = normalize_settings({key: value})
    assert result == {**DEFAULTS, snake: expected}
    assert set(result) == set(SETTING_NAMES)  # output is always snake_case


@pytest.mark.usefixtures("no_warnings")
def test_T1_fast_model_mapping_is_copied() -> None:
    options = {"model": "m"}
    assert normalize_settings({"fast_model": options})["fast_model"] is not options


# --- T-2: normalization ---------------------------------------------------------------------


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("flat", "flat"),
        ("command-first", "command-first"),
        ("fully-folded", "fully-folded"),
        (" Flat ", "flat"),
        ("COMMAND-FIRST", "command-first"),
        ("command_first", "command-first"),
        ("commandFirst", "command-first"),
        ("fully folded", "fully-folded"),
        ("fullyFolded", "fully-folded"),
        (None, "fully-folded"),
    ],
)
def test_T2_display_mode_spellings(value: Any, expected: str) -> None:
    assert normalize_settings({"transcript_display_mode": value})["transcript_display_mode"] == (
        expected
    )


@pytest.mark.parametrize("value", ["", "compact", "folded", "flat!", 1, True, ["flat"], {}, 2.5])
@pytest.mark.parametrize("key", ["transcript_display_mode", "transcriptDisplayMode"])
def test_T2_invalid_display_mode_resolves_to_fully_folded(key: str, value: Any) -> None:
    with pytest.warns(UserWarning, match="transcript_display_mode"):
        result = normalize_settings({key: value})
    assert result["transcript_display_mode"] == "fully-folded"


MISSING = object()


@pytest.mark.parametrize(
    ("show_thinking", "legacy", "expected"),
    [
        # show_thinking missing: the legacy field decides; only an explicit "compact" hides.
        (MISSING, "compact", False),
        (MISSING, " Compact ", False),
        (MISSING, "detailed", True),
        (MISSING, "verbose", True),
        (MISSING, 3, True),
        (MISSING, MISSING, True),
        # show_thinking not a bool: same fallback.
        ("false", "compact", False),
        (0, "compact", False),
        (None, "compact", False),
        ("no", "detailed", True),
        (1, MISSING, True),
        # a real bool always wins over the legacy field.
        (True, "compact", True),
        (False, "detailed", False),
        (False, MISSING, False),
    ],
)
@pytest.mark.parametrize("legacy_key", ["thinking_display_mode", "thinkingDisplayMode"])
@pytest.mark.parametrize("key", ["show_thinking", "showThinking"])
def test_T2_show_thinking_falls_back_to_legacy_thinking_display_mode(
    key: str, legacy_key: str, show_thinking: Any, legacy: Any, expected: bool
) -> None:
    mapping: dict[str, Any] = {}
    if show_thinking is not MISSING:
        mapping[key] = show_thinking
    if legacy is not MISSING:
        mapping[legacy_key] = legacy
    result = normalize_quietly(mapping)
    assert result["show_thinking"] is expected
    assert "thinking_display_mode" not in result
    assert "thinkingDisplayMode" not in result


def test_T2_non_bool_show_thinking_warns() -> None:
    with pytest.warns(UserWarning, match="show_thinking"):
        normalize_settings({"showThinking": "yes"})


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize("key", ["keep_commands_expanded", "keepCommandsExpanded"])
@pytest.mark.parametrize("value", [True, False, "junk"])
def test_T2_keep_commands_expanded_accepted_and_dropped(key: str, value: Any) -> None:
    result = normalize_settings({key: value, "transcriptDisplayMode": "flat"})
    assert result == {**DEFAULTS, "transcript_display_mode": "flat"}
    assert DisplaySettings.from_mapping({key: value}).to_dict() == DEFAULTS


@pytest.mark.parametrize("key", BOOL_KEYS)
@pytest.mark.parametrize("value", ["true", 1, 0, [], {}, 1.0])
def test_T2_non_bool_falls_back_to_default_with_warning(key: str, value: Any) -> None:
    with pytest.warns(UserWarning, match=key):
        result = normalize_settings({key: value})
    assert result[key] is DEFAULTS[key]


@pytest.mark.parametrize("value", [3, 2.5, ["m"], True])
def test_T2_invalid_fast_model_falls_back_to_none(value: Any) -> None:
    with pytest.warns(UserWarning, match="fast_model"):
        assert normalize_settings({"fastModel": value})["fast_model"] is None


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize(
    ("value", "expected"),
    [("zh-CN", "zh"), ("zh_Hans", "zh"), ("ZH", "zh"), ("EN", "en"), ("fr", "en"), ("", "en")],
)
def test_T2_locale_normalized(value: str, expected: str) -> None:
    assert normalize_settings({"locale": value})["locale"] == expected
    assert DisplaySettings(locale=value).locale == expected


def test_T2_non_string_locale_falls_back_to_en() -> None:
    with pytest.warns(UserWarning, match="locale"):
        assert normalize_settings({"locale": 7})["locale"] == "en"


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize(
    ("mapping", "key", "expected"),
    [
        ({"show_thinking": False, "showThinking": True}, "show_thinking", False),
        (
            {"transcriptDisplayMode": "flat", "transcript_display_mode": "command-first"},
            "transcript_display_mode",
            "command-first",
        ),
        ({"fullDetail": False, "full_detail": True}, "full_detail", True),
        (
            {"thinkingDisplayMode": "detailed", "thinking_display_mode": "compact"},
            "show_thinking",
            False,
        ),
    ],
)
def test_T2_snake_case_wins_over_camel_case(
    mapping: dict[str, Any], key: str, expected: Any
) -> None:
    assert normalize_settings(mapping)[key] == expected


def test_T2_snake_case_wins_even_when_invalid() -> None:
    # The snake_case value is the one read; its being invalid does not revive the camelCase one.
    with pytest.warns(UserWarning, match="transcript_display_mode"):
        result = normalize_settings(
            {"transcript_display_mode": "bogus", "transcriptDisplayMode": "flat"}
        )
    assert result["transcript_display_mode"] == "fully-folded"


def test_T2_unknown_keys_ignored_with_one_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = normalize_settings({"colour": "red", "ShowThinking": False, "show_thinking": True})
    assert result == DEFAULTS
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "'colour'" in message
    assert "'ShowThinking'" in message
    assert caught[0].filename == __file__  # attributed to the caller, not to settings.py


@pytest.mark.parametrize("value", [[("showThinking", False)], "flat", 3, object()])
def test_T2_non_mapping_raises_type_error(value: Any) -> None:
    with pytest.raises(TypeError, match="mapping"):
        normalize_settings(value)
    with pytest.raises(TypeError, match="mapping"):
        DisplaySettings().update(value)


@pytest.mark.usefixtures("no_warnings")
def test_T2_display_settings_instance_is_accepted() -> None:
    settings = DisplaySettings(transcript_display_mode="flat")
    assert normalize_settings(settings) == settings.to_dict()


# DisplaySettings: the same rule wherever the mode is read or assigned.


@pytest.mark.parametrize("value", ["bogus", "", 5, ["flat"]])
def test_T2_display_settings_invalid_mode_resolves_to_fully_folded(value: Any) -> None:
    settings = DisplaySettings(transcript_display_mode="flat")
    with pytest.warns(UserWarning, match="transcript_display_mode") as record:
        settings.transcript_display_mode = value
    assert settings.transcript_display_mode == "fully-folded"
    assert repr(value) in str(record[0].message)
    assert record[0].filename == __file__


@pytest.mark.usefixtures("no_warnings")
def test_T2_display_settings_none_mode_is_missing_and_silent() -> None:
    # None is what a JSON null or an unset widget value looks like: "missing", not a mistake.
    settings = DisplaySettings(transcript_display_mode="flat")
    settings.transcript_display_mode = None
    assert settings.transcript_display_mode == "fully-folded"


def test_T2_display_settings_invalid_mode_in_constructor() -> None:
    with pytest.warns(UserWarning, match="'bogus'"):
        settings = DisplaySettings(transcript_display_mode="bogus")
    assert settings.transcript_display_mode == "fully-folded"


@pytest.mark.usefixtures("no_warnings")
def test_T2_display_settings_mode_alias_is_canonicalized() -> None:
    settings = DisplaySettings()
    settings.transcript_display_mode = "commandFirst"
    assert settings.transcript_display_mode == "command-first"


@pytest.mark.usefixtures("no_warnings")
def test_T2_display_settings_locale_normalized_on_assignment() -> None:
    settings = DisplaySettings()
    settings.locale = "zh-CN"
    assert settings.locale == "zh"


class FakeWidget(traitlets.HasTraits):
    show_thinking = traitlets.Bool(True)
    transcript_display_mode = traitlets.Unicode("fully-folded")
    full_detail = traitlets.Bool(False)


@pytest.mark.usefixtures("no_warnings")
def test_T1_traits_linkable_with_traitlets_link() -> None:
    settings = DisplaySettings()
    widgets = [FakeWidget(), FakeWidget()]
    for widget in widgets:
        for name in ("show_thinking", "transcript_display_mode", "full_detail"):
            traitlets.link((settings, name), (widget, name))
    settings.show_thinking = False
    settings.update({"transcriptDisplayMode": "flat"})
    assert [(w.show_thinking, w.transcript_display_mode) for w in widgets] == [(False, "flat")] * 2
    widgets[0].full_detail = True
    assert settings.full_detail is True
    assert widgets[1].full_detail is True


def test_T2_linked_widget_writing_invalid_mode_reads_back_fully_folded() -> None:
    settings = DisplaySettings(transcript_display_mode="flat")
    widget = FakeWidget()
    traitlets.link((settings, "transcript_display_mode"), (widget, "transcript_display_mode"))
    with pytest.warns(UserWarning, match="'sideways'"):
        widget.transcript_display_mode = "sideways"
    assert settings.transcript_display_mode == "fully-folded"


@pytest.mark.usefixtures("no_warnings")
@pytest.mark.parametrize(
    "mapping",
    [
        {},
        {"showThinking": False, "transcriptDisplayMode": "command-first", "locale": "zh-CN"},
        {"thinkingDisplayMode": "compact", "keepCommandsExpanded": True, "fullDetail": True},
        {"fast_model": "m", "auto_collapse_thinking": False, "show_tool_call_args": True},
    ],
)
def test_T2_to_dict_round_trip(mapping: dict[str, Any]) -> None:
    settings = DisplaySettings.from_mapping(mapping)
    saved = settings.to_dict()
    assert saved == normalize_settings(mapping)
    assert set(saved) == set(SETTING_NAMES)  # never the legacy keys (T-2: saving writes new keys)
    assert DisplaySettings.from_mapping(saved).to_dict() == saved
    assert normalize_settings(saved) == saved


def test_T2_update_applies_only_present_keys() -> None:
    settings = DisplaySettings.from_mapping({"transcriptDisplayMode": "flat", "fullDetail": True})
    changes: list[str] = []
    settings.observe(lambda change: changes.append(change["name"]), names=traitlets.All)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        settings.update({"showThinking": False, "locale": "zh_Hans", "keepCommandsExpanded": True})
    assert settings.to_dict() == {
        **DEFAULTS,
        "transcript_display_mode": "flat",
        "full_detail": True,
        "show_thinking": False,
        "locale": "zh",
    }
    assert sorted(changes) == ["locale", "show_thinking"]


@pytest.mark.usefixtures("no_warnings")
def test_T2_update_with_legacy_thinking_display_mode() -> None:
    settings = DisplaySettings()
    settings.update({"thinkingDisplayMode": "compact"})
    assert settings.show_thinking is False
    settings.update({"showThinking": True, "thinkingDisplayMode": "compact"})
    assert settings.show_thinking is True


def test_T2_update_invalid_value_resolves_like_loading() -> None:
    settings = DisplaySettings(transcript_display_mode="flat", full_detail=True)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        settings.update({"transcriptDisplayMode": "bogus", "full_detail": "yes"})
    messages = sorted(str(warning.message) for warning in record)
    assert len(messages) == 2
    assert "full_detail" in messages[0]
    assert "'bogus'" in messages[1]
    assert settings.transcript_display_mode == "fully-folded"
    assert settings.full_detail is False


# --- T-3: presentation only: the input is never modified ------------------------------------


@pytest.mark.parametrize(
    "mapping",
    [
        {"showThinking": "x", "thinkingDisplayMode": "compact", "keepCommandsExpanded": True},
        {"transcriptDisplayMode": " Flat ", "fastModel": {"model": "m", "opts": {"t": 1}}},
        {"show_thinking": False, "showThinking": True, "unknown": [1, 2], "locale": "zh-CN"},
    ],
)
def test_T3_input_mapping_not_mutated(mapping: dict[str, Any]) -> None:
    before = copy.deepcopy(mapping)
    normalize_quietly(mapping)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DisplaySettings.from_mapping(mapping)
        DisplaySettings().update(mapping)
    assert mapping == before


@pytest.mark.usefixtures("no_warnings")
def test_T3_output_does_not_share_fast_model_options_with_input() -> None:
    options = {"model": "m"}
    result = normalize_settings({"fastModel": options})
    result["fast_model"]["model"] = "changed"
    assert options == {"model": "m"}


# --- property: normalization never fails on JSON-ish input ----------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=8,
)
known_keys = st.sampled_from(
    [
        *SETTING_NAMES,
        "showThinking",
        "transcriptDisplayMode",
        "autoCollapseSettledGroups",
        "autoCollapseThinking",
        "emitToolUseSummaries",
        "fastModel",
        "fullDetail",
        "showToolCallArgs",
        "thinking_display_mode",
        "thinkingDisplayMode",
        "keep_commands_expanded",
        "keepCommandsExpanded",
    ]
)
mode_values = st.sampled_from([*DISPLAY_MODES, "compact", "detailed", " Flat ", "commandFirst"])


@given(
    st.dictionaries(
        known_keys | st.text(max_size=12),
        json_values | mode_values,
        max_size=8,
    )
)
def test_T2_property_normalize_never_raises_and_is_valid(mapping: dict[str, Any]) -> None:
    before = copy.deepcopy(mapping)
    result = normalize_quietly(mapping)
    assert list(result) == list(SETTING_NAMES)
    assert result["transcript_display_mode"] in DISPLAY_MODES
    for key in BOOL_KEYS:
        assert type(result[key]) is bool
    assert result["locale"] in ("en", "zh")
    assert result["fast_model"] is None or isinstance(result["fast_model"], (str, dict))
    assert normalize_quietly(result) == result  # idempotent
    assert mapping == before
