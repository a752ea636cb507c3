"""Message catalogs: every phrase a person reads, in English and Simplified Chinese.

Catalogs are JSON files in ``turnfold/locales/`` (one per locale, same keys). A plural phrase maps
CLDR plural categories to text, so adding a locale means adding a file and its plural rule.

>>> plural("count.read.past", 3)
'Read 3 files'
>>> plural("count.read.past", 3, "zh-CN")
'读取了 3 个文件'
>>> translate("mode.flat", "zh")
'平铺显示'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

DEFAULT_LOCALE = "en"
SUPPORTED_LOCALES = ("en", "zh")
#: The message catalogs, one JSON file per supported locale.
_LOCALES = Path(__file__).parent / "locales"

# CLDR plural rules for cardinal numbers, one per supported locale. Two rules do not justify a
# dependency on Babel's locale database; a new locale adds its rule here.
_PLURAL_RULES: dict[str, Callable[[int], str]] = {
    "en": lambda n: "one" if n == 1 else "other",
    "zh": lambda n: "other",
}


@cache
def _language(locale: str) -> str:
    language = locale.strip().replace("_", "-").split("-", 1)[0].lower()
    return language if language in SUPPORTED_LOCALES else DEFAULT_LOCALE


def normalize_locale(locale: str | None) -> str:
    """Map a locale tag to a supported catalog: ``"zh-CN"``, ``"zh_Hans"`` → ``"zh"``.

    Unknown or empty tags fall back to English rather than failing a render.
    """
    if not isinstance(locale, str):
        return DEFAULT_LOCALE
    return _language(locale)


@cache
def catalog(locale: str) -> dict[str, Any]:
    """The message catalog of a supported locale (keys starting with ``_`` are comments)."""
    # Read beside this module, as render/scripts.py reads its scripts: importlib.resources
    # would bring tempfile, random and shutil into every render (issue 19).
    text = (_LOCALES / f"{locale}.json").read_text("utf-8")
    messages: dict[str, Any] = json.loads(text)
    return {key: value for key, value in messages.items() if not key.startswith("_")}


def _message(key: str, locale: str | None) -> Any:
    messages = catalog(normalize_locale(locale))
    if key in messages:
        return messages[key]
    # A key missing from a translation falls back to English; the catalog tests keep it rare.
    return catalog(DEFAULT_LOCALE)[key]


def translate(key: str, locale: str | None = DEFAULT_LOCALE, **params: Any) -> str:
    """The phrase ``key`` in ``locale`` with ``params`` filled in."""
    if not params:  # labels and statuses: asked for thousands of times per view (Q-1)
        return _phrase(key, locale)
    message = _message(key, locale)
    if not isinstance(message, str):
        raise TypeError(f"message {key!r} is a plural phrase; use plural()")
    return message.format(**params)


@cache
def _phrase(key: str, locale: str | None) -> str:
    message = _message(key, locale)
    if not isinstance(message, str):
        raise TypeError(f"message {key!r} is a plural phrase; use plural()")
    return message.format()


def localized(text: str, key: str, params: Mapping[str, str], locale: str | None) -> str:
    """What a reader wrote itself (a :class:`~turnfold.model.Wording`) said in ``locale``: the
    message ``key`` with ``params`` where that locale's catalog has it, else ``text``, the
    stored English, which is also what an English view shows, as the dump holds it.

    >>> localized("Handed off to billing", "reader.handed_off", {"target": "billing"}, "zh")
    '已移交给 billing'
    >>> localized("Handed off to billing", "no.such.key", {}, "zh")
    'Handed off to billing'
    """
    language = normalize_locale(locale)
    message = catalog(language).get(key) if language != DEFAULT_LOCALE else None
    if not isinstance(message, str):
        return text
    try:
        return message.format_map(with_words(params, language))
    except (KeyError, IndexError, ValueError, AttributeError, TypeError):  # a dump's, unfit
        return text


def with_words(params: Mapping[str, str], locale: str | None) -> Mapping[str, str]:
    """``params`` with the lists a reader made of words said in ``locale``: a param named
    ``"<list>.<item>"`` is one item of ``{<list>}``, said by the catalog's
    ``"reader.<list>.<item>"`` with its value, the items joined as the language lists them.
    A word is the reader's, so it is a message of its own; only the value is the source's.
    A numbered item (``"<list>.<n>"``) is a value alone, as it is (a name).

    >>> with_words({"spent.input_tokens": "1,200", "spent.output_tokens": "80"}, "zh")["spent"]
    '输入 1,200、输出 80'
    >>> with_words({"names.0": "a", "names.1": "b"}, "zh")["names"]
    'a、b'
    """
    lists: dict[str, list[str]] = {}
    for name, value in params.items():
        head, dot, item = name.partition(".")
        if dot:
            word = (
                value if item.isdigit() else translate(f"reader.{head}.{item}", locale, value=value)
            )
            lists.setdefault(head, []).append(word)
    if not lists:
        return params
    separator = translate("list.separator", locale)
    return {**params, **{head: separator.join(items) for head, items in lists.items()}}


def plural(key: str, count: int, locale: str | None = DEFAULT_LOCALE, **params: Any) -> str:
    """The plural phrase ``key`` for ``count`` in ``locale``; ``{count}`` is filled in too."""
    message = _message(key, locale)
    if not isinstance(message, dict):
        raise TypeError(f"message {key!r} is not a plural phrase; use translate()")
    category = _PLURAL_RULES[normalize_locale(locale)](count)
    form = message.get(category, message["other"])
    return str(form).format(count=count, **params)


def join_list(items: list[str], locale: str | None = DEFAULT_LOCALE, *, limit: int = 3) -> str:
    """Items joined the way the language lists things, at most ``limit``, then "etc." (P-6).

    >>> join_list(["searched", "read files", "ran commands"])
    'searched, read files and ran commands'
    >>> join_list(["搜索", "读取文件"], "zh")
    '搜索并读取文件'
    >>> join_list(["a", "b", "c", "d"])
    'a, b, c, etc.'
    """
    separator = translate("list.separator", locale)
    if len(items) > limit:
        return translate("list.etc", locale, items=separator.join(items[:limit]))
    if len(items) <= 1:
        return "".join(items)
    if len(items) == 2:
        return translate("list.pair", locale, first=items[0], second=items[1])
    return translate("list.last", locale, items=separator.join(items[:-1]), last=items[-1])
