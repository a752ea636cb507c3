"""Message catalogs: every phrase in both locales, with matching placeholders and plural forms."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from turnfold.i18n import SUPPORTED_LOCALES, catalog, normalize_locale, plural, translate

SOURCE = Path(__file__).resolve().parents[1] / "src" / "turnfold"


def placeholders(message: object) -> set[str]:
    forms = message.values() if isinstance(message, dict) else [message]
    return {name for form in forms for _, name, _, _ in string.Formatter().parse(str(form)) if name}


@pytest.mark.parametrize("locale", SUPPORTED_LOCALES)
def test_every_phrase_exists_in_every_locale(locale: str) -> None:
    assert set(catalog(locale)) == set(catalog("en"))


@pytest.mark.parametrize("locale", SUPPORTED_LOCALES)
def test_placeholders_and_kinds_match_english(locale: str) -> None:
    for key, english in catalog("en").items():
        translated = catalog(locale)[key]
        assert type(translated) is type(english), key
        assert placeholders(translated) == placeholders(english), key
        if isinstance(translated, dict):
            assert "other" in translated, key


def test_english_plurals_have_one_and_other() -> None:
    for key, message in catalog("en").items():
        if isinstance(message, dict):
            assert set(message) == {"one", "other"}, key


@pytest.mark.parametrize(
    ("count", "en", "zh"),
    [(0, "Read 0 files", "读取了 0 个文件"), (1, "Read 1 file", "读取了 1 个文件"),
     (2, "Read 2 files", "读取了 2 个文件"), (21, "Read 21 files", "读取了 21 个文件")],
)  # fmt: skip
def test_plural_handling(count: int, en: str, zh: str) -> None:
    assert plural("count.read.past", count) == en
    assert plural("count.read.past", count, "zh") == zh


@pytest.mark.parametrize(
    ("tag", "expected"),
    [("en", "en"), ("EN-us", "en"), ("zh", "zh"), ("zh-CN", "zh"), ("zh_Hans_CN", "zh"),
     (" zh ", "zh"), ("fr", "en"), ("", "en"), (None, "en"), (3, "en")],
)  # fmt: skip
def test_normalize_locale(tag: object, expected: str) -> None:
    assert normalize_locale(tag) == expected  # type: ignore[arg-type]


def test_translate_and_plural_refuse_the_wrong_kind() -> None:
    with pytest.raises(TypeError):
        translate("count.read.past")
    with pytest.raises(TypeError):
        plural("mode.flat", 1)


def test_T4_display_mode_labels() -> None:
    assert [translate(f"mode.{m}", "zh") for m in ("flat", "command-first", "fully-folded")] == [
        "平铺显示",
        "命令工具优先",
        "全折叠显示",
    ]


def test_every_key_the_code_uses_is_in_the_catalog() -> None:
    used: set[str] = set()
    for path in SOURCE.rglob("*.py"):
        used |= set(re.findall(r"""(?:plural|translate)\(\s*["']([\w.-]+)["']""", path.read_text()))
        for prefix in re.findall(r"""plural\(\s*f["']([\w.-]+)\{""", path.read_text()):
            used |= {k for k in catalog("en") if k.startswith(prefix)}
    assert used
    assert used <= set(catalog("en"))
