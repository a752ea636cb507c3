"""Coloured terminal output reads at WCAG AA (4.5:1) in light and dark themes (spec P-7).

The contrast ratios are computed from the CSS itself: the ANSI colours ``content_css()`` writes,
against every surface an output can sit on, as the widget's stylesheet (``js/src/widget.css``)
and the pages' palette (``palette_css``) define them: a JupyterLab variable, read from the
theme JupyterLab installs, or the fallback a host without it gets.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from turnfold.render.content import content_css
from turnfold.render.html import palette_css

ROOT = Path(__file__).resolve().parent.parent
#: WCAG 2.x, AA, for text of normal size.
AA = 4.5
#: The surfaces behind an output: the page and the output's own box.
SURFACES = ("--tf-bg", "--tf-bg-soft")


def _luminance(colour: str) -> float:
    def channel(value: int) -> float:
        value_ = value / 255
        return value_ / 12.92 if value_ <= 0.03928 else ((value_ + 0.055) / 1.055) ** 2.4

    red, green, blue = (channel(int(colour[i : i + 2], 16)) for i in (1, 3, 5))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(first: str, second: str) -> float:
    high, low = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _hex(colour: str) -> str:
    """``#abc``, ``#aabbcc`` or ``white`` as ``#aabbcc``."""
    colour = {"white": "#ffffff", "black": "#000000"}.get(colour.strip(), colour.strip())
    if re.fullmatch(r"#[0-9a-fA-F]{3}", colour):
        colour = "#" + "".join(c * 2 for c in colour[1:])
    assert re.fullmatch(r"#[0-9a-fA-F]{6}", colour), colour
    return colour.lower()


def _block(css: str, selector: str) -> dict[str, str]:
    """The custom properties of the first rule whose selector starts with ``selector``."""
    at = css.index(selector)
    body = css[css.index("{", at) + 1 : css.index("}", at)]
    return dict(re.findall(r"(--[\w-]+)\s*:\s*([^;]+);", body))


def _jupyterlab_theme(name: str) -> dict[str, str]:
    """The ``--jp-*`` colours of JupyterLab's installed theme ``name`` (light, dark)."""
    jupyterlab = pytest.importorskip("jupyterlab")
    css = (
        Path(jupyterlab.__file__).parent / f"themes/@jupyterlab/theme-{name}-extension/index.css"
    ).read_text(encoding="utf-8")
    found = {}
    for variable, value in re.findall(r"(--jp-layout-color\d)\s*:\s*([^;}]+)", css):
        # ``var(--md-grey-900, #212121)``: Material's colour, as its fallback names it.
        fallback = re.search(r"(#[0-9a-fA-F]{3,6}|white|black)\s*\)?\s*$", value.strip())
        assert fallback, (variable, value)
        found[variable] = _hex(fallback.group(1))
    return found


def _surfaces(theme: str) -> dict[str, str]:
    """Every colour an output's surface takes in ``theme``: in JupyterLab and as a fallback,
    in the widget and on a page."""
    lab = _jupyterlab_theme(theme)
    widget_css = (ROOT / "js/src/widget.css").read_text(encoding="utf-8")
    widget = _block(widget_css, ".tf-widget {" if theme == "light" else "[data-jp-theme-light")
    page_css = palette_css(standalone=False)
    page = _block(page_css, ".turnfold {" if theme == "light" else "[data-jp-theme-light")
    surfaces = {}
    for where, variables in (("widget", widget), ("page", page)):
        for name in SURFACES:
            used = re.fullmatch(r"var\((--[\w-]+),\s*([^)]+)\)", variables[name].strip())
            assert used, variables[name]
            jp, fallback = used.groups()
            surfaces[f"{where} {name} (fallback)"] = _hex(fallback)
            if jp in lab:
                surfaces[f"{where} {name} (JupyterLab {theme}: {jp})"] = lab[jp]
    return surfaces


def _ansi(theme: str) -> dict[str, str]:
    css = content_css()
    scope = ":root, .tf-light {" if theme == "light" else '[data-jp-theme-light="false"],'
    block = _block(css, scope)
    return {f"ansi {n}": _hex(block[f"--tf-ansi-{n}"]) for n in range(16)}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_P7_every_ansi_foreground_reads_at_AA_on_every_output_surface(theme: str) -> None:
    surfaces = _surfaces(theme)
    # The output's box in JupyterLab: the surface the QA pass measured on, and the hardest.
    box = "widget --tf-bg-soft (JupyterLab {0}: --jp-layout-color{1})"
    assert box.format(theme, 2 if theme == "light" else 1) in surfaces
    too_faint = {
        (colour_name, colour, where, round(contrast(colour, surface), 2))
        for colour_name, colour in _ansi(theme).items()
        for where, surface in surfaces.items()
        if contrast(colour, surface) < AA
    }
    assert not too_faint


def test_P7_red_in_jupyterlab_dark_was_the_reported_3_1_and_is_now_AA() -> None:
    box = _jupyterlab_theme("dark")["--jp-layout-color1"]
    assert box == "#212121"
    assert round(contrast("#cd3131", box), 1) == 3.1  # VS Code's red, as QA measured it
    assert contrast(_ansi("dark")["ansi 1"], box) >= AA


def test_P7_ansi_backgrounds_keep_the_terminal_palette() -> None:
    # A background colour sits behind the theme's own text colour: it is not darkened or
    # lightened as the text colours are, or a white background would turn grey.
    css = content_css()
    assert ".tf-ansi-bg7 { background-color: var(--tf-ansi-bg-7); }" in css
    assert _block(css, ":root, .tf-light {")["--tf-ansi-bg-7"].strip() == "#c5c1b4"
    assert _block(css, '[data-jp-theme-light="false"],')["--tf-ansi-bg-1"].strip() == "#cd3131"
