"""One way to keep named things of a kind (modes, prompt templates, benchmarks): registered where they are defined,
looked up by name with one message for a name that is not there, listed for the CLI."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

from debatrix.core.errors import ConfigurationError

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """Entries of one ``kind`` by name, in registration order. ``load`` (optional) is called once, before the first
    lookup or listing, to import the modules whose definitions register themselves (a package's plug-ins); a lookup
    of an unknown name raises ``error`` naming the known ones."""

    def __init__(self, kind: str, *, error: type[Exception] = ConfigurationError,
                 load: Callable[[], None] | None = None) -> None:
        self.kind = kind
        self._error = error
        self._load = load
        self._entries: dict[str, T] = {}

    def add(self, name: str, entry: T, *, replace: bool = False) -> T:
        """Register ``entry`` under ``name``; the same entry again is a no-op, another under a taken name an error
        unless ``replace`` (where a later definition is meant to win: a user's dimension folder over the package's)."""
        if not name:
            raise ConfigurationError(f"a {self.kind} needs a name")
        if replace:
            self._entries[name] = entry
            return entry
        known = self._entries.setdefault(name, entry)
        if known is not entry:
            raise ConfigurationError(f"{self.kind} {name!r} is registered twice")
        return entry

    def get_or_raise(self, name: str) -> T:
        """The entry called ``name``; else ``error``: "unknown {kind} 'x'; choose one of: a, b"."""
        self._loaded()
        entry = self._entries.get(name)
        if entry is None:
            raise self._error(f"unknown {self.kind} {name!r}; choose one of: {', '.join(self._entries)}")
        return entry

    def _loaded(self) -> None:
        load, self._load = self._load, None
        if load is not None:
            load()

    def __getitem__(self, name: str) -> T:
        self._loaded()
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        self._loaded()
        return iter(self._entries)

    def __len__(self) -> int:
        self._loaded()
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"
