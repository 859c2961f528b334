"""Writing result files so that a crash never leaves one half-written, and reading stored ones so that a damaged
one is refused in one line naming it."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from collections.abc import Callable
from typing import Any

from debatrix.core.errors import DamagedFileError

_KINDS = {dict: "a JSON object", list: "a JSON list", str: "a string", int: "a number", float: "a number",
          bool: "true or false", type(None): "null"}


def kind_words(value: Any) -> str:
    """What a JSON value is, in words ("a JSON list")."""
    return _KINDS.get(type(value), type(value).__name__)


def _bytes(path: Path) -> bytes:
    """A stored file's bytes; :class:`DamagedFileError` naming it where it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as e:
        raise DamagedFileError(f"{path}: cannot be read ({e.strerror or e})") from None


def _text(path: Path, data: bytes | None = None) -> str:
    """A stored file's text (``data``: its bytes, already read); :class:`DamagedFileError` naming it where it cannot
    be read or is not UTF-8 text."""
    try:
        return (_bytes(path) if data is None else data).decode("utf-8")
    except UnicodeDecodeError:
        raise DamagedFileError(f"{path}: damaged (not UTF-8 text: a binary or cut file)") from None


def read_json(path: Path, expect: type = dict) -> Any:
    """The JSON value stored in ``path``, of type ``expect``; :class:`DamagedFileError` naming the file where it
    cannot be read, is not UTF-8 text, is not JSON, or holds another kind of value."""
    path = Path(path)
    try:
        value = json.loads(_text(path))
    except json.JSONDecodeError as e:
        raise DamagedFileError(f"{path}: damaged (not JSON: {e.msg} at line {e.lineno}, column {e.colno})") from None
    if not isinstance(value, expect):
        raise DamagedFileError(f"{path}: damaged (it holds {kind_words(value)} where {_KINDS[expect]} belongs)")
    return value


def json_record(line: str, path: Path, number: int) -> dict[str, Any]:
    """Line ``number`` of a JSON-lines file as the object it must be (:class:`DamagedFileError` otherwise)."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as e:
        raise DamagedFileError(f"{path}: line {number} is damaged (not JSON: {e.msg}); remove or repair that line") \
            from None
    if not isinstance(value, dict):
        raise DamagedFileError(f"{path}: line {number} is damaged (it holds {kind_words(value)} where a JSON object "
                               "belongs); remove or repair that line")
    return value


#: the kinds of an item record's fields that its readers rely on
ITEM_FIELDS = {"usage": dict, "mode": str, "item": str, "status": str}


def checked_record(rec: dict[str, Any], path: Path, number: int) -> dict[str, Any]:
    """An item record whose fields a reader relies on have their kinds (:class:`DamagedFileError` otherwise)."""
    for key, kind in ITEM_FIELDS.items():
        if rec.get(key) is not None and not isinstance(rec[key], kind):
            raise DamagedFileError(f"{path}: line {number} is damaged ({key} is {kind_words(rec[key])} where "
                                   f"{_KINDS[kind]} belongs); remove or repair that line")
    return rec


def read_json_lines(path: Path, trim: bool = False,
                    check: Callable[[dict[str, Any], Path, int], dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The objects of a JSON-lines file (``check`` applied to each, with its line number): a last line cut short by
    a killed write is left out (and, with ``trim``, cut from the file, as the runner does before appending); any
    other damaged line is :class:`DamagedFileError` naming it, never guessed past. A file not there holds none."""
    path = Path(path)
    if not path.exists():
        return []
    data = _bytes(path)
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        if trim:
            with path.open("r+b") as fh:
                fh.truncate(len(data))
    out = []
    for k, line in enumerate(_text(path, data).splitlines(), 1):
        if line.strip():
            rec = json_record(line, path, k)
            out.append(check(rec, path, k) if check else rec)
    return out


def read_items(path: Path, trim: bool = False) -> list[dict[str, Any]]:
    """The records of a run's ``items.jsonl``, each checked (:func:`checked_record`; :func:`read_json_lines`)."""
    return read_json_lines(path, trim, checked_record)


def check_writable(path: Path) -> None:
    """Raise ``OSError`` (or ``IsADirectoryError``) unless :func:`write_atomic` can write ``path``: creates its folder
    as that would, and a probe file in it. For checking an output path before work that would be lost."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder: give a file path")
    _regular_or_new(path)
    above = next((p for p in path.parents if p.exists()), None)
    if above is not None and not above.is_dir():  # good.yaml/x.json: mkdir would say only "File exists"
        raise NotADirectoryError(f"{above} is a file, not a folder: a file cannot go inside it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OSError(f"its folder {path.parent} cannot be made ({e.strerror or e})") from None
    try:
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.probe."):
            pass
    except OSError as e:  # /proc, a read-only mount: the probe's own name says nothing to the user
        raise OSError(f"no file can be written in {path.parent} ({e.strerror or e})") from None


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
