"""Turn a fast model's raw reply into a label, or reject it (spec S-5).

Models decorate: they answer with a bullet, bold, quotes or a ``Label:`` prefix, or they answer
with an error or a refusal instead of a label. :func:`clean_summary` undoes the decoration and
returns ``""`` for anything that reads like an error, so no misleading label is ever shown.

>>> clean_summary('- **"Read config.json"**')
'Read config.json'
>>> clean_summary("Label: Searched in auth/\\nI looked at three files.")
'Searched in auth/'
>>> clean_summary("I cannot see any tool output.")
''
"""

from __future__ import annotations

import re

__all__ = ["MAX_LABEL_CHARS", "REJECTED_PREFIXES", "clean_summary"]

#: A label is cut to this many characters (the row shows about 30; CJK labels need the room).
MAX_LABEL_CHARS = 100

#: Replies starting like one of these are errors or refusals, not labels (English ones are
#: matched case-insensitively, as whole words).
REJECTED_PREFIXES: tuple[str, ...] = (
    "API error",
    "Error:",
    "I can't",
    "I cannot",
    "Unable to",
    "Failed to",
    "Sorry,",
    "Request failed",
    "我无法",
    "我不能",
    "抱歉",
    "无法",
)

_LINE_BREAK = re.compile(r"\r\n|[\n\r\u2028\u2029\x85]")
_BULLET = re.compile(r"^[-*•]\s+")
_PREFIX = re.compile(r"^(?:label|summary|result|output)\s*[:：]\s*", re.IGNORECASE)
# Bold anywhere (``Fixed **NPE** in X``), when its insides start and end with a non-space, so a
# glob such as ``**/*.ts`` survives.
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
# Underscore emphasis only as its own word: ``_config_`` loses its marks, ``my_var_name`` and
# ``__init__.py`` keep theirs.
_UNDERSCORE = re.compile(r"(?<![\w])_(?![_\s])(.+?)(?<![_\s])_(?!\w)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_QUOTES = {
    '"': '"',
    "'": "'",
    "`": "`",
    "“": "”",
    "”": "”",
    "‘": "’",
    "’": "’",
    "「": "」",
    "『": "』",
    "«": "»",
    "＂": "＂",
}


def _ascii_word_end(prefix: str) -> bool:
    """English prefixes match whole words (``API errors`` is a label); CJK ones match as is."""
    return prefix[-1].isascii() and prefix[-1].isalnum()


# Straight apostrophes are also how a contraction is typed, so "I can't" and "I can’t" both count.
_REJECT = re.compile(
    "^(?:"
    + "|".join(
        re.escape(prefix).replace("'", "['’]") + (r"(?!\w)" if _ascii_word_end(prefix) else "")
        for prefix in REJECTED_PREFIXES
    )
    + "|error：|sorry，)",
    re.IGNORECASE,
)


def _unwrap(text: str) -> str:
    """Strip surrounding emphasis, quotes and a label prefix, repeatedly, in any nesting."""
    for _ in range(10):  # bounded: each pass removes at least one layer or stops
        before = text
        text = text.strip()
        if len(text) >= 4 and text[:2] == text[-2:] and text[:2] in ("**", "__"):
            text = text[2:-2]  # **bold** or __bold__
        elif len(text) >= 2 and (text[0] == text[-1] in "_*" or _QUOTES.get(text[0]) == text[-1]):
            text = text[1:-1]  # _emphasis_, *emphasis* or a quoted label
        else:
            text = _PREFIX.sub("", text, count=1)
        if text == before:
            break
    return text.strip()


def clean_summary(raw: object) -> str:
    """The label in ``raw``, cleaned, or ``""`` when there is none (spec S-5).

    Keeps the first line; strips one leading bullet (``-``, ``*`` or ``•`` and a space), markdown
    emphasis (``**``, ``_``), surrounding quotes (ASCII, curly, ``「」``, ``『』``) and a leading
    ``Label:`` / ``Summary:`` / ``Result:`` / ``Output:`` prefix (ASCII or full-width colon).
    Rejects, returning ``""``, a reply that starts like an error or a refusal
    (:data:`REJECTED_PREFIXES`). Cuts to :data:`MAX_LABEL_CHARS` characters.

    >>> clean_summary("• 『读取配置文件』")
    '读取配置文件'
    >>> clean_summary("Summary：Fixed NPE in UserService")
    'Fixed NPE in UserService'
    >>> clean_summary("抱歉，我无法完成")
    ''
    """
    if not isinstance(raw, str):
        return ""
    stripped = raw.strip()
    if not stripped:
        return ""
    text = _LINE_BREAK.split(stripped, maxsplit=1)[0]
    text = _CONTROL.sub(" ", text).strip()
    text = _BULLET.sub("", text, count=1)
    text = _unwrap(text)
    text = _BOLD.sub(r"\1", text)
    text = _UNDERSCORE.sub(r"\1", text)
    text = _unwrap(text)
    if not text or _REJECT.match(text):
        return ""
    return text[:MAX_LABEL_CHARS].rstrip()
