"""A file written beside the file it replaces and moved over it once whole (spec W-6, B-2).

``turnfold render FILE``, a static site's index, manifest and run pages, and the prices kept
between processes (:mod:`turnfold.kept_prices`) are each written to a part file in the same
folder and moved over the old file by ``os.replace``: a reader (or a write cut short by a full
disk or Ctrl-C) sees the old file or the new one, never half of one. A file moved over another
is a new file, with the mode a new file gets; the page keeps the mode of the file it replaces
instead (a site kept private, 0600, stays so), and while it is written it is never more
readable than that file. This module imports nothing of turnfold's, so a module on the path of
loading a session (the kept prices) may use it without importing :mod:`turnfold.render`.

>>> import tempfile
>>> from pathlib import Path
>>> folder = Path(tempfile.mkdtemp())
>>> page = folder / "page.html"
>>> _ = page.write_text("old")
>>> page.chmod(0o600)
>>> write_whole(page, lambda stream: stream.write(b"new"), folder / ".page.html.part")
3
>>> page.read_text(), oct(page.stat().st_mode & 0o777), sorted(p.name for p in folder.iterdir())
('new', '0o600', ['page.html'])
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TypeVar

__all__ = ["Part", "keep_mode", "write_whole"]

T = TypeVar("T")

#: The permission bits a page keeps: not setuid, setgid or sticky, which have no business on it.
_PERMISSIONS = 0o777
#: A page whose place is not known yet: its owner's, until it is.
_PRIVATE = 0o600


def keep_mode(replaced: Path, page: int | Path) -> bool:
    """Give ``page`` (a descriptor or a path) the permission bits of the file it replaces;
    False, and nothing changed, when there is none (a new file keeps what the umask gives). A
    mode that cannot be set raises rather than widen who may read the page."""
    try:
        mode = replaced.stat().st_mode
    except FileNotFoundError:
        return False
    os.chmod(page, mode & _PERMISSIONS)
    return True


class Part:
    """A page being written at ``path``, to be moved over the file it replaces.

    ``replaces`` names that file when it is known as the page is begun: the part has its mode
    before anything is written to it. A site's run page is named by its run's key, final only
    once its whole file is read: until :meth:`replace` names it, the part is its owner's only.
    """

    def __init__(self, path: Path, replaces: Path | None = None) -> None:
        self.path = path
        self.stream: BinaryIO = path.open("wb")
        try:
            fd = self.stream.fileno()
            #: What the umask gave the part: a page's mode where it replaces no file.
            self.made = os.fstat(fd).st_mode & _PERMISSIONS
            if replaces is None:
                os.chmod(fd, self.made & _PRIVATE)
            else:
                keep_mode(replaces, fd)
        except BaseException:
            self.stream.close()
            raise

    def replace(self, target: Path) -> None:
        """Move the whole part (its stream closed) over ``target``, with ``target``'s mode, or
        where there is no ``target``, the mode a new file gets."""
        if not keep_mode(target, self.path):
            os.chmod(self.path, self.made)
        os.replace(self.path, target)


def write_whole(path: Path, write: Callable[[BinaryIO], T], part: Path) -> T:
    """Run ``write`` on a :class:`Part` at ``part`` and move it over ``path`` once whole, with
    the mode of the file it replaces; what ``write`` returned. The part is removed if it could
    not be finished, leaving ``path`` as it was."""
    try:
        written = Part(part, replaces=path)
        with written.stream:
            result = write(written.stream)
        written.replace(path)
    finally:
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)
    return result
