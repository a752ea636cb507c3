"""Whether a value read from a transcript may name a file or folder beside it (spec X-1).

Readers find a session's other files (a sub-agent's journal, background agents' folder) by ids
its records hold: content, so untrusted. Only a plain name, one entry of the folder it is
joined to, may become part of a path there: ``..``, an absolute path or a separator would let a
hostile file have turnfold read files outside the session's own folders. A reader refuses any
other value with a warning saying what it did not look for, and reads the rest of the session.

A plain name may still hold a glob's wildcards (``*``, ``?``, ``[``): joined to a folder it is
literal, but a reader that puts it in a pattern escapes it (:func:`glob.escape`).

>>> [is_plain_name(v) for v in ("agent-0", "62c225bc", "*", "..", ".", "/etc", "a/b", "a\\\\b")]
[True, True, True, False, False, False, False, False]
>>> is_plain_name(""), is_plain_name("a\\x00b")
(False, False)
"""

from __future__ import annotations

import os


def is_plain_name(value: str) -> bool:
    """Whether ``value`` names an entry of the folder it is joined to, and nothing elsewhere:
    not empty, not ``.`` or ``..``, with no separator of any system (a file written on one is
    read on another), no NUL, and no drive (``os.path.basename`` on Windows drops ``C:``)."""
    return (
        value not in ("", ".", "..")
        and not any(char in value for char in "/\\\x00")
        and os.path.basename(value) == value
    )
