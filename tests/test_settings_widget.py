"""The settings panel (spec T-4) and its save button (T-5).

Targets are linked by trait name, so the tests use DisplaySettings and a small HasTraits stand-in
that records every assignment (a ``validate`` handler runs even when the value does not change),
plus TranscriptWidget when it is importable.
"""

from __future__ import annotations

import json
import os
import site
from pathlib import Path
from typing import Any

import jupyter_core.paths
import pytest
import traitlets

from turnfold import config
from turnfold.i18n import translate
from turnfold.settings import DisplaySettings
from turnfold.settings_widget import LINKED_SETTINGS, SettingsWidget

MODES = ("flat", "command-first", "fully-folded")


class StandIn(traitlets.HasTraits):
    """Anything with TranscriptWidget's setting traits; ``writes`` logs every assignment."""

    show_thinking = traitlets.Bool(True)
    transcript_display_mode = traitlets.Unicode("fully-folded")
    auto_collapse_settled_groups = traitlets.Bool(True)
    auto_collapse_thinking = traitlets.Bool(True)
    locale = traitlets.Unicode("en")
    full_detail = traitlets.Bool(False)
    show_tool_call_args = traitlets.Bool(False)
    show_turn_usage = traitlets.Bool(False)

    def __init__(self, **kwargs: Any) -> None:
        self.writes: list[tuple[str, Any]] = []
        super().__init__(**kwargs)

    @traitlets.validate(*LINKED_SETTINGS)
    def _record(self, proposal: Any) -> Any:
        self.writes.append((proposal["trait"].name, proposal["value"]))
        return proposal["value"]

    def written(self, name: str) -> list[Any]:
        return [value for trait, value in self.writes if trait == name]


@pytest.fixture(autouse=True)
def jupyter_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty, isolated Jupyter config; returns the user's config directory."""
    user = tmp_path / "user"
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(user))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(tmp_path / "path"))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "0")
    monkeypatch.delenv("JUPYTER_NO_CONFIG", raising=False)
    monkeypatch.setattr(jupyter_core.paths, "ENV_CONFIG_PATH", [str(tmp_path / "env")])
    monkeypatch.setattr(jupyter_core.paths, "SYSTEM_CONFIG_PATH", [str(tmp_path / "system")])
    monkeypatch.setattr(site, "ENABLE_USER_SITE", False)
    for variable in list(os.environ):
        if variable.startswith("TURNFOLD_"):
            monkeypatch.delenv(variable)
    monkeypatch.setattr(config, "_reported", set())
    return user


def hidden(control: Any) -> bool:
    return bool(control.layout.display == "none")


# --- initial values --------------------------------------------------------------------------


def test_T4_initial_values_come_from_load_settings(jupyter_config: Path) -> None:
    (jupyter_config / "turnfold").mkdir(parents=True)
    (jupyter_config / "turnfold" / "settings.json").write_text(
        json.dumps({"show_thinking": False, "transcript_display_mode": "flat"}), encoding="utf-8"
    )
    panel = SettingsWidget()
    assert panel.show_thinking_toggle.value is False
    assert panel.mode_selector.value == "flat"
    # A mapping overrides only the keys it names, on top of the layered defaults.
    panel = SettingsWidget(settings={"transcript_display_mode": "command-first"})
    assert (panel.settings.show_thinking, panel.mode_selector.value) == (False, "command-first")


def test_T4_without_settings_the_panel_starts_from_the_first_target(jupyter_config: Path) -> None:
    (jupyter_config / "turnfold").mkdir(parents=True)
    (jupyter_config / "turnfold" / "settings.json").write_text(
        json.dumps({"transcript_display_mode": "flat", "emit_tool_use_summaries": False}),
        encoding="utf-8",
    )
    first = StandIn(transcript_display_mode="command-first", auto_collapse_thinking=False)
    second = StandIn()
    panel = SettingsWidget(first, second)
    assert first.written("transcript_display_mode") == ["command-first"]  # linking changed nothing
    assert panel.mode_selector.value == "command-first"
    assert panel.auto_collapse_thinking_toggle.value is False
    assert (second.transcript_display_mode, second.auto_collapse_thinking) == (
        "command-first",
        False,
    )
    assert panel.settings.emit_tool_use_summaries is False  # the rest: from the defaults
    assert panel.locale == "en"  # the labels speak the view's language


class FourTraits(traitlets.HasTraits):
    """A target with the four linked settings and no locale, nor show_turn_usage."""

    show_thinking = traitlets.Bool(True)
    transcript_display_mode = traitlets.Unicode("fully-folded")
    auto_collapse_settled_groups = traitlets.Bool(True)
    auto_collapse_thinking = traitlets.Bool(True)


def test_T4_label_locale_follows_the_view_else_the_defaults(jupyter_config: Path) -> None:
    (jupyter_config / "turnfold").mkdir(parents=True)
    (jupyter_config / "turnfold" / "settings.json").write_text('{"locale": "zh"}', "utf-8")
    assert SettingsWidget(StandIn(locale="en")).locale == "en"
    assert SettingsWidget(FourTraits()).locale == "zh"
    assert SettingsWidget().locale == "zh"


def test_T4_settings_object_is_copied_not_shared() -> None:
    given = DisplaySettings(auto_collapse_thinking=False, locale="zh")
    panel = SettingsWidget(settings=given)
    assert panel.settings is not given
    assert panel.auto_collapse_thinking_toggle.value is False
    panel.settings.auto_collapse_thinking = True
    assert given.auto_collapse_thinking is False


# --- visibility (T-4) ------------------------------------------------------------------------


def test_T4_thinking_child_shows_only_while_thinking_is_shown() -> None:
    panel = SettingsWidget(settings=DisplaySettings())
    assert not hidden(panel.auto_collapse_thinking_toggle)
    panel.show_thinking_toggle.value = False  # the reader unticks "Show thinking"
    assert hidden(panel.auto_collapse_thinking_toggle)
    panel.show_thinking_toggle.value = True
    assert not hidden(panel.auto_collapse_thinking_toggle)


@pytest.mark.parametrize(
    ("mode", "shown"), [("flat", False), ("command-first", True), ("fully-folded", True)]
)
def test_T4_groups_child_shows_only_when_the_mode_is_not_flat(mode: str, shown: bool) -> None:
    panel = SettingsWidget(settings=DisplaySettings())
    panel.mode_selector.value = mode
    assert hidden(panel.auto_collapse_groups_toggle) is not shown
    assert not hidden(panel.auto_collapse_thinking_toggle)  # the other child is independent


def test_T4_initially_hidden_children() -> None:
    panel = SettingsWidget(
        settings=DisplaySettings(show_thinking=False, transcript_display_mode="flat")
    )
    assert hidden(panel.auto_collapse_thinking_toggle)
    assert hidden(panel.auto_collapse_groups_toggle)
    assert not hidden(panel.show_thinking_toggle)
    assert not hidden(panel.mode_selector)


# (parent setting, value hiding the child, value showing it, child, its control, another setting)
HIDING = [
    (
        "show_thinking",
        False,
        True,
        "auto_collapse_thinking",
        "auto_collapse_thinking_toggle",
        ("transcript_display_mode", "command-first"),
    ),
    (
        "transcript_display_mode",
        "flat",
        "command-first",
        "auto_collapse_settled_groups",
        "auto_collapse_groups_toggle",
        ("show_thinking", False),
    ),
]


@pytest.mark.parametrize(("parent", "off", "on", "child", "control", "other"), HIDING)
def test_T4_hidden_child_keeps_its_value_and_is_never_written(
    parent: str, off: Any, on: Any, child: str, control: str, other: tuple[str, Any]
) -> None:
    target = StandIn()
    panel = SettingsWidget(target, settings=DisplaySettings())
    getattr(panel, control).value = False  # the reader's choice
    assert getattr(target, child) is False
    target.writes.clear()
    setattr(panel.settings, parent, off)  # the parent flips: the child hides ...
    assert hidden(getattr(panel, control))
    setattr(panel.settings, *other)  # ... other changes while it is hidden write nothing to it
    setattr(panel.settings, parent, on)  # ... and the parent flips back
    assert not hidden(getattr(panel, control))
    assert target.written(child) == []
    assert getattr(panel, control).value is False  # the reader's choice is still there
    assert getattr(panel.settings, child) is False
    assert getattr(target, child) is False


# --- linking ---------------------------------------------------------------------------------


def test_T4_linked_targets_follow_the_panel_at_once() -> None:
    a, b, c = StandIn(), StandIn(), DisplaySettings()
    panel = SettingsWidget(a, b, c, settings=DisplaySettings())
    assert panel.targets == (a, b, c)
    panel.mode_selector.value = "flat"
    panel.show_thinking_toggle.value = False
    for target in (a, b, c):
        assert target.transcript_display_mode == "flat"
        assert target.show_thinking is False


def test_T4_a_change_on_one_target_reaches_the_panel_and_the_others() -> None:
    a, b = StandIn(), DisplaySettings()
    panel = SettingsWidget(a, b, settings=DisplaySettings())
    a.transcript_display_mode = "command-first"
    assert panel.mode_selector.value == "command-first"
    assert b.transcript_display_mode == "command-first"


def test_T4_linking_gives_the_target_the_panels_choices() -> None:
    target = StandIn(show_thinking=False, transcript_display_mode="flat")
    panel = SettingsWidget(
        settings=DisplaySettings(
            transcript_display_mode="command-first", auto_collapse_thinking=False
        )
    )
    panel.link(target)
    assert target.show_thinking is True
    assert target.transcript_display_mode == "command-first"
    assert target.auto_collapse_thinking is False
    assert panel.show_thinking_toggle.value is True  # the panel was not changed by linking


def test_T4_per_view_toggles_and_locale_are_not_linked() -> None:
    a, b = StandIn(full_detail=True, locale="zh"), StandIn(show_tool_call_args=True)
    SettingsWidget(a, b, settings=DisplaySettings(locale="en"))
    assert (a.full_detail, a.show_tool_call_args, a.locale) == (True, False, "zh")
    assert (b.full_detail, b.show_tool_call_args, b.locale) == (False, True, "en")


def test_T4_unlink_stops_following_both_ways() -> None:
    a, b = StandIn(), StandIn()
    panel = SettingsWidget(a, b, settings=DisplaySettings())
    panel.unlink(a)
    assert panel.targets == (b,)
    panel.mode_selector.value = "flat"
    assert (a.transcript_display_mode, b.transcript_display_mode) == ("fully-folded", "flat")
    a.transcript_display_mode = "command-first"
    assert panel.mode_selector.value == "flat"
    panel.unlink(a)  # not linked any more: nothing happens
    panel.link(a)
    assert a.transcript_display_mode == "flat"


def test_T4_linking_twice_is_a_no_op() -> None:
    target = StandIn()
    panel = SettingsWidget(target, target, settings=DisplaySettings())
    panel.link(target)
    assert panel.targets == (target,)
    panel.unlink(target)
    panel.mode_selector.value = "flat"
    assert target.transcript_display_mode == "fully-folded"


class Partial(traitlets.HasTraits):
    show_thinking = traitlets.Bool(True)


@pytest.mark.parametrize("target", [Partial(), object(), {"show_thinking": True}])
def test_T4_a_target_without_the_traits_is_refused(target: Any) -> None:
    panel = SettingsWidget(settings=DisplaySettings())
    with pytest.raises(TypeError, match="transcript_display_mode"):
        panel.link(target)
    assert panel.targets == ()


def test_T4_close_unlinks_every_target() -> None:
    target = StandIn()
    panel = SettingsWidget(target, settings=DisplaySettings())
    settings = panel.settings
    panel.close()
    assert panel.targets == ()
    settings.transcript_display_mode = "flat"
    assert target.transcript_display_mode == "fully-folded"
    panel.close()  # again, as ipywidgets does when the panel is garbage collected


def test_T4_transcript_widgets_link_too() -> None:
    widget_module = pytest.importorskip("turnfold.widget")
    from turnfold.samples import demo_session

    first = widget_module.TranscriptWidget(demo_session())
    second = widget_module.TranscriptWidget(demo_session())
    panel = SettingsWidget(first, second, settings=DisplaySettings())
    panel.mode_selector.value = "flat"
    panel.show_thinking_toggle.value = False
    for widget in (first, second):
        assert widget.transcript_display_mode == "flat"
        assert widget.show_thinking is False


# --- labels ----------------------------------------------------------------------------------

LABELS = {
    "en": (
        "Show thinking",
        "Auto-collapse finished thinking",
        "Process display",
        ("Flat", "Command-first", "Fully folded"),
        "Auto-collapse settled groups",
    ),
    "zh": (
        "显示思考",
        "已完成思考自动收起",
        "过程显示",
        ("平铺显示", "命令工具优先", "全折叠显示"),
        "已完成小组自动收起",
    ),
}


@pytest.mark.parametrize("locale", ["en", "zh"])
def test_T4_labels(locale: str) -> None:
    panel = SettingsWidget(settings=DisplaySettings(), locale=locale)
    thinking, auto_thinking, process, modes, auto_groups = LABELS[locale]
    assert panel.show_thinking_toggle.description == thinking
    assert panel.auto_collapse_thinking_toggle.description == auto_thinking
    assert panel.mode_selector.description == process
    assert tuple(panel.mode_selector.options) == tuple(zip(modes, MODES, strict=True))
    assert panel.auto_collapse_groups_toggle.description == auto_groups
    assert panel.save_button.description == translate("settings.save_defaults", locale)


def test_T4_label_locale_defaults_to_the_settings_locale() -> None:
    panel = SettingsWidget(settings=DisplaySettings(locale="zh-CN"))
    assert panel.locale == "zh"
    assert panel.mode_selector.options[0] == ("平铺显示", "flat")
    assert SettingsWidget(settings=DisplaySettings(locale="zh"), locale="en").locale == "en"


# --- static output (W-4) ---------------------------------------------------------------------


def test_T4_text_summary_in_english() -> None:
    panel = SettingsWidget(settings=DisplaySettings(auto_collapse_settled_groups=False))
    assert panel.summary() == (
        "[x] Show thinking\n"
        "    [x] Auto-collapse finished thinking\n"
        "Process display  ( ) Flat  ( ) Command-first  (x) Fully folded\n"
        "    [ ] Auto-collapse settled groups\n"
        "[ ] Show tokens and cost on each turn"
    )


def test_T4_text_summary_leaves_hidden_children_out() -> None:
    panel = SettingsWidget(
        settings=DisplaySettings(show_thinking=False, transcript_display_mode="flat"), locale="zh"
    )
    assert (
        panel.summary()
        == "[ ] 显示思考\n过程显示  (x) 平铺显示  ( ) 命令工具优先  ( ) 全折叠显示\n"
        "[ ] 在每轮标题显示 token 与费用"
    )


def test_T4_display_bundle_is_deterministic() -> None:
    bundles = [SettingsWidget(settings=DisplaySettings())._repr_mimebundle_() for _ in range(2)]
    assert bundles[0]["text/plain"] == bundles[1]["text/plain"]
    assert bundles[0]["text/plain"].startswith("[x] Show thinking\n")
    assert "application/vnd.jupyter.widget-view+json" in bundles[0]  # the live view too


# --- saving (T-5) ----------------------------------------------------------------------------


def test_T5_save_button_writes_the_users_defaults(jupyter_config: Path) -> None:
    target = StandIn(full_detail=True)
    panel = SettingsWidget(target, settings=DisplaySettings(show_tool_call_args=True))
    panel.mode_selector.value = "command-first"
    panel.auto_collapse_thinking_toggle.value = False
    panel.save_button.click()
    path = jupyter_config / "turnfold" / "settings.json"
    saved = json.loads(path.read_text("utf-8"))
    assert saved["transcript_display_mode"] == "command-first"
    assert saved["auto_collapse_thinking"] is False
    assert "show_tool_call_args" not in saved
    assert "full_detail" not in saved
    assert panel.status.value == translate("settings.saved", "en", path=str(path))
    reopened = SettingsWidget()
    assert reopened.mode_selector.value == "command-first"
    assert reopened.auto_collapse_thinking_toggle.value is False


def test_T5_save_errors_are_shown_not_raised(
    jupyter_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    panel = SettingsWidget(settings=DisplaySettings())
    jupyter_config.parent.mkdir(parents=True, exist_ok=True)
    jupyter_config.write_text("a file where the config directory should be", encoding="utf-8")
    panel.save_button.click()  # must not raise
    assert panel.save_defaults() is None
    assert panel.status.value.startswith(translate("settings.save_failed", "en", error="")[:10])
    assert str(jupyter_config) in panel.status.value


def test_T5_save_failure_of_any_kind_is_contained(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(settings: Any) -> Path:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("turnfold.settings_widget.save_user_defaults", broken)
    panel = SettingsWidget(settings=DisplaySettings(), locale="zh")
    panel.save_button.click()
    assert panel.status.value == translate("settings.save_failed", "zh", error="disk on fire")


def test_T5_status_clears_when_a_choice_changes() -> None:
    panel = SettingsWidget(settings=DisplaySettings())
    assert panel.save_defaults() is not None
    assert panel.status.value
    panel.mode_selector.value = "flat"
    assert panel.status.value == ""


# --- N-2: the panel's own view, where ipywidgets' controls are not drawn (marimo) ----------------


def test_N2_T4_the_panels_own_view_draws_what_python_computes_and_sets_what_it_is_told() -> None:
    view = DisplaySettings()
    panel = SettingsWidget(view, locale="zh")
    try:
        assert "as default" in panel._esm  # marimo draws a widget that brings its own module
        rows = {row["name"]: row for row in panel._panel["rows"]}
        assert rows["transcript_display_mode"]["options"][0] == {
            "label": "平铺显示",
            "value": "flat",
        }
        assert rows["auto_collapse_thinking"]["child"]
        assert rows["auto_collapse_settled_groups"]["visible"]
        panel._on_panel_message(panel, {"type": "set", "name": "transcript_display_mode",
                                        "value": "flat"}, [])  # fmt: skip
        assert view.transcript_display_mode == "flat"  # the linked target follows
        rows = {row["name"]: row for row in panel._panel["rows"]}
        assert rows["transcript_display_mode"]["value"] == "flat"
        assert not rows["auto_collapse_settled_groups"]["visible"]  # T-4: hidden under Flat
        panel._on_panel_message(panel, {"type": "set", "name": "show_thinking", "value": False}, [])
        assert view.show_thinking is False
        # The view is untrusted: anything but the panel's settings, or a wrong type, is ignored.
        ignored = [
            {"type": "set", "name": "locale", "value": "en"},
            {"type": "set", "name": "show_thinking", "value": "yes"},
            "nonsense",
        ]
        for message in ignored:
            panel._on_panel_message(panel, message, [])
        assert (view.locale, view.show_thinking) == ("en", False)
        assert panel.locale == "zh"
    finally:
        panel.close()


def test_N2_T5_saving_from_the_panels_own_view_says_where(jupyter_config: Path) -> None:
    panel = SettingsWidget()
    try:
        panel._on_panel_message(panel, {"type": "save"}, [])
        assert panel._panel["status"] == panel.status.value
        assert str(jupyter_config) in panel._panel["status"]
    finally:
        panel.close()
