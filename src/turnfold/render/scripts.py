"""The few lines of script a static page runs, allowed by their hash alone (spec B-2, X-1).

A page of :mod:`turnfold.render.html` or :mod:`turnfold.render.site` may run its own script and
nothing else: each script is a file beside this module, inlined as it is, and the page's
Content-Security-Policy names it by its SHA-256 (``script-src 'sha256-…'``), so no other script
runs there, whatever a transcript holds: not one a sanitizer missed, not an event handler, not
a ``javascript:`` link. Transcript text never reaches a script's source.

>>> policy(["deeplinks.js"]).startswith("default-src 'none'; img-src data:; "
...                                     "style-src 'unsafe-inline'; script-src 'sha256-")
True
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

__all__ = ["policy", "script_tag", "source"]

_HERE = Path(__file__).parent / "scripts"
#: What every page may load besides its scripts: inline images and its own inline style.
_BASE = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


@cache
def source(name: str) -> str:
    """The script ``name`` (``deeplinks.js``, ``site-index.js``) as the page inlines it."""
    return (_HERE / name).read_text(encoding="utf-8")


def _digest(name: str) -> str:
    import base64
    import hashlib  # here: a page hashes its script once it draws its head (issue 19)

    raw = hashlib.sha256(source(name).encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(raw).decode("ascii") + "'"


def policy(names: list[str]) -> str:
    """The Content-Security-Policy of a page that runs the scripts ``names`` and nothing else."""
    if not names:
        return _BASE
    return f"{_BASE}; script-src {' '.join(_digest(name) for name in names)}"


def script_tag(name: str) -> str:
    """The script ``name`` inline, exactly as :func:`policy` hashed it."""
    return f"<script>{source(name)}</script>"
