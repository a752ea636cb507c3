"""The display settings panel (spec T-4), built from ipywidgets, with a view of its own for marimo.

``SettingsWidget(*targets)`` shows the choices a reader makes while reading: ``Show thinking``
with ``Auto-collapse finished thinking`` under it, ``Process display`` (Flat / Command-first /
Fully folded) with ``Auto-collapse settled groups`` under it, and ``Show tokens and cost on each
turn`` (U-3). It links those settings, by trait name, to every target: transcript widgets,
:class:`~turnfold.settings.DisplaySettings`, or anything else with the same traits (the last one
where the target has it). All linked targets change together.

>>> from turnfold.settings import DisplaySettings
>>> view = DisplaySettings()
>>> panel = SettingsWidget(view, settings=DisplaySettings(transcript_display_mode="flat"))
>>> view.transcript_display_mode
'flat'
>>> panel.settings.transcript_display_mode = "command-first"
>>> view.transcript_display_mode
'command-first'
>>> print(panel.summary())
[x] Show thinking
    [x] Auto-collapse finished thinking
Process display  ( ) Flat  (x) Command-first  ( ) Fully folded
    [x] Auto-collapse settled groups
[ ] Show tokens and cost on each turn

Where ipywidgets' controls are not drawn (marimo draws only widgets that bring their own ES
module, as anywidgets do, spec N-2), the panel draws itself: it carries such a module
(``_esm``, ``js/src/settings.js``) and the state it draws, computed here (``_panel``: each
control's label, value and whether it shows), and takes the reader's choices back as messages.
JupyterLab and the other ipywidgets front ends ignore both and draw the controls.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypedDict

import ipywidgets as widgets  # type: ignore[import-untyped]
import traitlets

from turnfold.config import load_settings, save_user_defaults
from turnfold.i18n import normalize_locale, translate
from turnfold.settings import DISPLAY_MODES, DisplaySettings, normalize_settings

__all__ = [
    "LINKED_SETTINGS",
    "OPTIONAL_SETTINGS",
    "PanelOption",
    "PanelRow",
    "PanelState",
    "SettingsWidget",
    "typescript",
]

_STATIC = Path(__file__).parent / "static"

# The settings the panel shows and links. T-1's per-view toggles (full_detail,
# show_tool_call_args) stay per view, and locale only picks the panel's own labels.
LINKED_SETTINGS = (
    "show_thinking",
    "auto_collapse_thinking",
    "transcript_display_mode",
    "auto_collapse_settled_groups",
)
#: Linked too when a target has them: a target made for the four above still links.
OPTIONAL_SETTINGS = ("show_turn_usage",)

# The widgets the panel creates and closes with itself.
_OWNED_CONTROLS = (
    "show_thinking_toggle",
    "auto_collapse_thinking_toggle",
    "mode_selector",
    "auto_collapse_groups_toggle",
    "turn_usage_toggle",
    "save_button",
    "status",
)
_CHILD_MARGIN = "0 0 0 2em"  # T-4: each child sits indented under the choice it refines
_INDENT = " " * 4


class PanelOption(TypedDict):
    label: str
    value: str


class PanelRow(TypedDict):
    """One control of the panel as its own view draws it (N-2): a checkbox or a choice of
    ``options``, indented under the one above it when ``child``, hidden unless ``visible``."""

    name: str  #: the setting it changes
    kind: Literal["check", "choice"]
    label: str
    value: bool | str
    options: list[PanelOption]
    child: bool
    visible: bool


class PanelState(TypedDict):
    """Everything the panel's own view draws (the ``_panel`` trait), in the panel's language."""

    rows: list[PanelRow]
    save: str  #: the save button's label
    status: str  #: what the last save did, or ""


def typescript() -> str:
    """The panel's state as TypeScript declarations (``js/src/settings.d.ts``)."""
    from turnfold.render.declarations import typescript as declare

    return declare(
        (PanelOption, PanelRow, PanelState), {}, source="src/turnfold/settings_widget.py"
    )


def _panel_esm() -> str:
    """The panel's own view (``js/src/settings.js``, bundled), or a stub saying how to build it."""
    built = _STATIC / "settings.js"
    if built.is_file():
        return built.read_text(encoding="utf-8")
    return "export default { render({ el }) { el.textContent = 'npm run build in js/'; } }\n"


def _checkbox(label: str, *, child: bool = False) -> Any:
    margin = _CHILD_MARGIN if child else "0"
    return widgets.Checkbox(
        description=label, indent=False, layout=widgets.Layout(width="auto", margin=margin)
    )


def _mark(checked: bool, *, radio: bool = False) -> str:
    on, off = ("(x)", "( )") if radio else ("[x]", "[ ]")
    return on if checked else off


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _initial_settings(
    settings: DisplaySettings | Mapping[str, Any] | None, targets: tuple[traitlets.HasTraits, ...]
) -> DisplaySettings:
    """A private copy of the panel's starting values.

    A DisplaySettings is copied; a mapping overrides only the keys it names on top of the layered
    defaults (T-5). Without ``settings``, the first target's current choices (and locale) are
    kept, so linking a panel to a view never changes what the view already shows; with no target
    either, the layered defaults alone.
    """
    if isinstance(settings, DisplaySettings):
        return DisplaySettings.from_mapping(normalize_settings(settings))
    if settings is not None:
        return load_settings(**settings)
    first = next(
        (t for t in targets if isinstance(t, traitlets.HasTraits) and not _missing_traits(t)), None
    )
    if first is None:
        return load_settings()
    # The view's locale too (when it has one), so the panel speaks the language of its view.
    names = [*_linked(first), *(["locale"] if first.has_trait("locale") else [])]
    return load_settings(**{name: getattr(first, name) for name in names})


def _linked(target: traitlets.HasTraits) -> list[str]:
    """The settings linked to ``target``: every required one, and the optional ones it has."""
    return [*LINKED_SETTINGS, *(name for name in OPTIONAL_SETTINGS if target.has_trait(name))]


def _missing_traits(target: object) -> list[str]:
    if not isinstance(target, traitlets.HasTraits):
        return list(LINKED_SETTINGS)
    return [name for name in LINKED_SETTINGS if not target.has_trait(name)]


class SettingsWidget(widgets.VBox):  # type: ignore[misc]
    """A panel of display settings linked to one or many targets (T-4).

    ``settings`` gives the initial values: a :class:`DisplaySettings` is copied, a mapping
    overrides only the keys it names on top of :func:`~turnfold.config.load_settings`. Without
    it the panel starts from the first target's choices (so linking changes no view), and with
    no target from ``load_settings()``. ``locale`` picks the label language (default: the
    settings'). The panel's own state is ``panel.settings``; every linked target follows it.
    """

    # N-2: the panel's own view and what it draws, for the front ends that do not draw
    # ipywidgets' controls (see the module docstring); the others ignore both.
    _esm = traitlets.Unicode(_panel_esm()).tag(sync=True)
    _panel = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        *targets: traitlets.HasTraits,
        settings: DisplaySettings | Mapping[str, Any] | None = None,
        locale: str | None = None,
    ) -> None:
        # First, so that close() (which ipywidgets also calls on garbage collection) always works.
        self._targets: list[tuple[traitlets.HasTraits, list[traitlets.link]]] = []
        self._control_links: list[traitlets.link] = []
        self.settings = _initial_settings(settings, targets)
        self._locale = normalize_locale(locale if locale is not None else self.settings.locale)
        self._build_controls()
        super().__init__(children=self._layout_children())
        self._control_links = [
            traitlets.link((self.settings, name), (control, "value"))
            for name, control in self._controls().items()
        ]
        self.settings.observe(
            self._update_visibility, names=["show_thinking", "transcript_display_mode"]
        )
        self.settings.observe(self._clear_status, names=[*LINKED_SETTINGS, *OPTIONAL_SETTINGS])
        self._update_visibility()
        self._draw_panel()
        self.settings.observe(self._draw_panel, names=[*LINKED_SETTINGS, *OPTIONAL_SETTINGS])
        self.status.observe(self._draw_panel, names=["value"])
        self.on_msg(self._on_panel_message)
        for target in targets:
            self.link(target)

    # --- building ------------------------------------------------------------------------------

    def _build_controls(self) -> None:
        loc = self._locale
        self.show_thinking_toggle = _checkbox(translate("settings.show_thinking", loc))
        self.auto_collapse_thinking_toggle = _checkbox(
            translate("settings.auto_collapse_thinking", loc), child=True
        )
        self.mode_selector = widgets.ToggleButtons(
            options=[(self._mode_label(mode), mode) for mode in DISPLAY_MODES],
            description=translate("settings.process_display", loc),
            style={"description_width": "initial", "button_width": "auto"},
        )
        self.auto_collapse_groups_toggle = _checkbox(
            translate("settings.auto_collapse_settled_groups", loc), child=True
        )
        self.turn_usage_toggle = _checkbox(translate("settings.show_turn_usage", loc))
        # Sized to its label: ipywidgets' fixed button width cut "Save as my defaults".
        self.save_button = widgets.Button(
            description=translate("settings.save_defaults", loc),
            icon="save",
            layout=widgets.Layout(width="auto"),
        )
        self.save_button.on_click(self._on_save)
        self.status = widgets.Label("")

    def _mode_label(self, mode: str) -> str:
        return translate(f"mode.{mode}", self._locale)

    def _controls(self) -> dict[str, Any]:
        return {
            "show_thinking": self.show_thinking_toggle,
            "auto_collapse_thinking": self.auto_collapse_thinking_toggle,
            "transcript_display_mode": self.mode_selector,
            "auto_collapse_settled_groups": self.auto_collapse_groups_toggle,
            "show_turn_usage": self.turn_usage_toggle,
        }

    def _layout_children(self) -> list[Any]:
        return [*self._controls().values(), widgets.HBox([self.save_button, self.status])]

    # --- visibility (T-4) ----------------------------------------------------------------------

    def _visible_children(self) -> dict[str, bool]:
        """Which indented children show: each only while its parent choice enables it."""
        return {
            "auto_collapse_thinking": bool(self.settings.show_thinking),
            "auto_collapse_settled_groups": self.settings.transcript_display_mode != "flat",
        }

    def _update_visibility(self, change: object = None) -> None:
        # T-4: hiding only changes the layout. A hidden child never writes its value, so the
        # reader's choice is still there when the parent flips back.
        controls = self._controls()
        for name, visible in self._visible_children().items():
            controls[name].layout.display = None if visible else "none"

    # --- the panel's own view (N-2) -------------------------------------------------------------

    def panel_state(self) -> PanelState:
        """What the panel's own view draws now: the same controls, labels and visibility as the
        ipywidgets panel (T-4)."""
        loc, values = self._locale, self.settings
        visible = self._visible_children()
        parents = {"auto_collapse_thinking", "auto_collapse_settled_groups"}

        def check(name: str, label: str) -> PanelRow:
            return {"name": name, "kind": "check", "label": translate(label, loc),
                    "value": bool(getattr(values, name)), "options": [],
                    "child": name in parents, "visible": visible.get(name, True)}  # fmt: skip

        modes: list[PanelOption] = [
            {"label": self._mode_label(mode), "value": mode} for mode in DISPLAY_MODES
        ]
        mode: PanelRow = {
            "name": "transcript_display_mode", "kind": "choice",
            "label": translate("settings.process_display", loc),
            "value": values.transcript_display_mode, "options": modes, "child": False,
            "visible": True,
        }  # fmt: skip
        rows = [
            check("show_thinking", "settings.show_thinking"),
            check("auto_collapse_thinking", "settings.auto_collapse_thinking"),
            mode,
            check("auto_collapse_settled_groups", "settings.auto_collapse_settled_groups"),
            check("show_turn_usage", "settings.show_turn_usage"),
        ]
        save = translate("settings.save_defaults", loc)
        return {"rows": rows, "save": save, "status": self.status.value}

    def _draw_panel(self, change: object = None) -> None:
        self._panel = dict(self.panel_state())

    def _on_panel_message(self, widget: object, content: Any, buffers: object) -> None:
        """A choice made in the panel's own view. The view is untrusted: only the panel's
        settings are set, with values the settings accept (anything else is ignored)."""
        if not isinstance(content, dict):
            return
        if content.get("type") == "save":
            self.save_defaults()
        elif content.get("type") == "set" and content.get("name") in self._controls():
            with contextlib.suppress(traitlets.TraitError):
                setattr(self.settings, str(content["name"]), content.get("value"))

    # --- linking -------------------------------------------------------------------------------

    @property
    def locale(self) -> str:
        """The language of the panel's labels."""
        return self._locale

    @property
    def targets(self) -> tuple[traitlets.HasTraits, ...]:
        """The linked targets, in the order they were linked."""
        return tuple(target for target, _ in self._targets)

    def link(self, target: traitlets.HasTraits) -> None:
        """Make ``target`` follow the panel, and the panel follow ``target``'s changes.

        The target takes the panel's current values at once, hidden children's kept values
        included, so every linked view shows one consistent state. Linking twice is a no-op.
        """
        if target is self.settings or any(target is linked for linked in self.targets):
            return
        missing = _missing_traits(target)
        if missing:
            kind = type(target).__name__
            raise TypeError(f"cannot link settings to {kind}: it has no {', '.join(missing)} trait")
        # Observers run after all four values are in place, never on a half-linked state.
        with target.hold_trait_notifications():
            links = [traitlets.link((self.settings, n), (target, n)) for n in _linked(target)]
        self._targets.append((target, links))

    def unlink(self, target: traitlets.HasTraits) -> None:
        """Stop linking ``target``; it keeps its current values. Unknown targets are ignored."""
        for index, (linked, links) in enumerate(self._targets):
            if linked is target:
                for trait_link in links:
                    trait_link.unlink()
                del self._targets[index]
                return

    def close(self) -> None:
        """Unlink every target and close the panel's controls with it. Safe to call twice.

        (ipywidgets calls ``close`` again when the widget is garbage collected.)
        """
        for target in self.targets:
            self.unlink(target)
        control_links, self._control_links = self._control_links, []
        for control_link in control_links:
            control_link.unlink()
        for name in _OWNED_CONTROLS:
            control = getattr(self, name, None)  # absent if construction failed half-way
            if control is not None:
                control.close()
        super().close()

    # --- saving (T-5) --------------------------------------------------------------------------

    def save_defaults(self) -> Path | None:
        """Save the current choices as the user's defaults; the panel shows the outcome.

        Returns the file written, or None when saving failed (the error is shown, not raised).
        """
        try:
            path = save_user_defaults(self.settings)
        except Exception as error:  # T-5: a failed save must never raise into the notebook
            self.status.value = translate(
                "settings.save_failed", self._locale, error=_describe(error)
            )
            return None
        self.status.value = translate("settings.saved", self._locale, path=str(path))
        return path

    def _on_save(self, button: object) -> None:
        self.save_defaults()

    def _clear_status(self, change: object = None) -> None:
        # A "saved" note is stale once the reader changes a choice again.
        self.status.value = ""

    # --- static output (W-4) -------------------------------------------------------------------

    def summary(self) -> str:
        """The current choices as text, laid out like the panel (hidden children left out).

        Deterministic (no ids, no paths), so a saved notebook reads well and nbval can compare it.
        """
        s, loc = self.settings, self._locale
        visible = self._visible_children()
        lines = [f"{_mark(s.show_thinking)} {translate('settings.show_thinking', loc)}"]
        if visible["auto_collapse_thinking"]:
            label = translate("settings.auto_collapse_thinking", loc)
            lines.append(f"{_INDENT}{_mark(s.auto_collapse_thinking)} {label}")
        modes = "  ".join(
            f"{_mark(mode == s.transcript_display_mode, radio=True)} {self._mode_label(mode)}"
            for mode in DISPLAY_MODES
        )
        lines.append(f"{translate('settings.process_display', loc)}  {modes}")
        if visible["auto_collapse_settled_groups"]:
            label = translate("settings.auto_collapse_settled_groups", loc)
            lines.append(f"{_INDENT}{_mark(s.auto_collapse_settled_groups)} {label}")
        lines.append(f"{_mark(s.show_turn_usage)} {translate('settings.show_turn_usage', loc)}")
        return "\n".join(lines)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # ipywidgets' own text/plain is a truncated repr of the children; the summary is what a
        # saved notebook (GitHub, nbconvert, a closed kernel) should show instead (W-4).
        bundle: dict[str, Any] = dict(super()._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.summary()
        return bundle


if __name__ == "__main__":
    sys.stdout.write(typescript())
