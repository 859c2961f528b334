"""Dimensions and dimension sets, registered by name from YAML files."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from debatrix.core.errors import ConfigurationError, InvalidDebateError, UnknownDimensionError, field_problems
from debatrix.core.flow import MEASURES
from debatrix.core.loader import strict_yaml
from debatrix.core.models import DebateFormat
from debatrix.core.registry import Registry

DEFAULT_SET = {DebateFormat.ONE_V_ONE: "debateart", DebateFormat.BP: "bp", DebateFormat.SINGLE: "general"}


class DimensionPrompts(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    analyze: str = Field(min_length=1, description="what to look at when analysing one speech")
    context: str = Field(min_length=1, description="how to use the previous context")
    judge: str = Field(min_length=1, description="how to judge debaters and winner from the analyses")
    judge_debate: str = Field(min_length=1, description="how to judge from the raw debate")


class Dimension(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{1,40}$")
    description: str
    weight: float = Field(default=1.0, gt=0, allow_inf_nan=False)  # .inf would make the panel's shares NaN
    allow_tie: bool = False
    tie_margin: float = Field(default=0.0, ge=0, description="score-comparison tie band (SC)")
    measure: str | None = Field(default=None, description="what the flow mode weighs for it: a registered flow "
                                "measure (argument, source, language, clash, mean); the prose modes read the prompts")
    prompts: DimensionPrompts

    @field_validator("measure")
    @classmethod
    def _known_measure(cls, name: str | None) -> str | None:
        if name is not None and name not in MEASURES:
            raise ValueError(f"unknown flow measure {name!r}; choose one of: {', '.join(MEASURES)}")
        return name


@functools.lru_cache(maxsize=256)
def _parsed(content: bytes, label: str) -> Any:
    """A dimension file's YAML, parsed once per content (every run opens a registry; the package's files rarely
    change, and a changed file is parsed again). Validated into frozen models by the caller: never changed."""
    return strict_yaml(content, label)


class DimensionRegistry:
    """Dimensions from the package's ``dimensions/`` folder plus any user folders (later folders win)."""

    def __init__(self, extra_dirs: Iterable[Path] = ()):
        self._dims: Registry[Dimension] = Registry("dimension")
        self._sets: Registry[dict[str, float]] = Registry("dimension set")
        package = resources.files("debatrix.dimensions")
        self._load_folder(package, "debatrix.dimensions")
        for folder in extra_dirs:
            folder = Path(folder)
            if not folder.is_dir():
                raise ConfigurationError(f"dimension folder {folder} does not exist")
            self._load_folder(folder, str(folder))

    def _load_folder(self, folder, label: str) -> None:
        for entry in sorted(folder.iterdir(), key=lambda p: p.name):
            if not entry.name.endswith((".yaml", ".yml")):
                continue
            try:
                data = _parsed(entry.read_bytes(), f"{label}/{entry.name}")
            except InvalidDebateError as e:
                raise ConfigurationError(str(e).replace("\n", "; ")) from None
            except OSError as e:
                raise ConfigurationError(f"{label}/{entry.name}: cannot read file: {e.strerror}") from None
            if entry.name.startswith("sets."):
                self._load_sets(data, f"{label}/{entry.name}")
                continue
            try:
                dim = Dimension.model_validate(data)
            except ValidationError as e:  # in the project's words (no pydantic tags or links)
                said = "; ".join(f"{loc}: {msg}" if loc else msg for loc, msg in field_problems(e))
                raise ConfigurationError(f"{label}/{entry.name}: {said}") from None
            if dim.name == "panel":  # the panel's name: its key in a run's state and its progress row
                raise ConfigurationError(f"{label}/{entry.name}: 'panel' is reserved for the panel, not a dimension")
            self._dims.add(dim.name, dim, replace=True)

    def _load_sets(self, data, label: str) -> None:
        if not isinstance(data, dict):
            raise ConfigurationError(f"{label}: expected a mapping of set name -> {{dimension: weight}}")
        for name, members in data.items():
            if not isinstance(members, dict) or not all(
                    isinstance(w, int | float) and not isinstance(w, bool) and math.isfinite(w) and w > 0
                    for w in members.values()):
                raise ConfigurationError(f"{label}: set {name!r} must map dimension names to positive, finite "
                                         "weights")
            self._sets.add(name, {k: float(v) for k, v in members.items()}, replace=True)

    @property
    def names(self) -> list[str]:
        return sorted(self._dims)

    @property
    def set_names(self) -> list[str]:
        return sorted(self._sets)

    def get(self, name: str) -> Dimension:
        if name not in self._dims:  # named with the sets too: either may have been meant
            raise UnknownDimensionError(
                f"unknown dimension {name!r}; known: {', '.join(self.names)}; sets: {', '.join(self.set_names)}")
        return self._dims[name]

    def resolve(self, spec: Iterable[str] | None, fmt: DebateFormat) -> tuple[Dimension, ...]:
        """Names or one set name -> dimensions with the set's weights applied."""
        names = list(spec) if spec else [DEFAULT_SET[fmt]]
        if len(names) == 1 and names[0] in self._sets:
            weights = self._sets[names[0]]
            return tuple(self.get(n).model_copy(update={"weight": w}) for n, w in weights.items())
        dims = tuple(self.get(n) for n in names)
        if len({d.name for d in dims}) != len(dims):
            raise ConfigurationError(f"dimension listed twice in {names}")
        return dims
