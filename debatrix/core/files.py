"""Writing result files so that a crash never leaves one half-written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def check_writable(path: Path) -> None:
    """Raise ``OSError`` (or ``IsADirectoryError``) unless :func:`write_atomic` can write ``path``: creates its folder
    as that would, and a probe file in it. For checking an output path before work that would be lost."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder: give a file path")
    _regular_or_new(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.probe."):
        pass


def inside(folder: Path, relative: str) -> Path | None:
    """``folder / relative`` where that stays inside ``folder`` (a results folder's own file), else None: a record
    naming ``../elsewhere/x.json`` or an absolute path must not make a report or a merge write outside it."""
    root = Path(folder).resolve()
    target = (root / relative).resolve()
    return target if target != root and target.is_relative_to(root) else None


def _regular_or_new(path: Path) -> None:
    """Refuse to replace anything but a regular file: the rename of an atomic write would put a file where a
    FIFO, a device (``/dev/null``) or a symlink (to ``/proc/self/fd/1``, or to a file elsewhere) was."""
    if path.is_symlink():
        raise OSError(f"{path} is a symbolic link: give the path of a regular file or a new one")
    if path.exists() and not path.is_file():
        raise OSError(f"{path} is not a regular file (a FIFO, a device or a socket): give a file path")


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it to disk, then rename it over ``path``."""
    path = Path(path)
    _regular_or_new(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        # mkstemp makes the file private (0600); a result or a report is an ordinary file, readable to share or
        # serve (the umask is not read: setting it to read it would race other threads' file creation)
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
