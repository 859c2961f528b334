"""The one registry helper: modes, templates and benchmarks are registered where defined and looked up one way."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

from debatrix.core.errors import ConfigurationError, UnknownModeError
from debatrix.core.registry import Registry

names = st.lists(st.text(st.characters(categories=["Ll"]), min_size=1, max_size=8), unique=True, max_size=6)


@given(names, st.text(min_size=1, max_size=8))
def test_a_registry_lists_what_was_added_in_order_and_names_them_for_an_unknown_name(added, asked):
    reg: Registry[int] = Registry("widget", error=UnknownModeError)
    for k, name in enumerate(added):
        assert reg.add(name, k) == k
    assert list(reg) == added and len(reg) == len(added) and dict(reg) == {n: k for k, n in enumerate(added)}
    if asked in added:
        assert reg.get_or_raise(asked) == added.index(asked)
    else:
        with pytest.raises(UnknownModeError) as e:
            reg.get_or_raise(asked)
        assert f"unknown widget {asked!r}" in str(e.value) and all(n in str(e.value) for n in added)


def test_the_same_entry_again_is_kept_another_under_a_taken_name_refused():
    reg: Registry[object] = Registry("widget")
    entry = object()
    reg.add("a", entry)
    reg.add("a", entry)
    with pytest.raises(ConfigurationError, match="widget 'a' is registered twice"):
        reg.add("a", object())
    with pytest.raises(ConfigurationError, match="needs a name"):
        reg.add("", entry)


def test_the_load_hook_runs_once_and_only_when_the_registry_is_read():
    calls: list[int] = []
    reg: Registry[int] = Registry("widget", load=lambda: (calls.append(1), reg.add("late", 7)))
    reg.add("early", 1)
    assert calls == []
    assert "late" in reg and reg["late"] == 7 and list(reg) == ["early", "late"]
    assert calls == [1]


def test_every_benchmark_adapter_of_the_package_is_found_through_its_entry_point():
    """An adapter whose module is missing from pyproject's entry points would be unknown to `debatrix bench`: in a
    fresh interpreter, what the first read of the registry finds is all that importing every module of the package
    registers."""
    script = (
        "import importlib, pkgutil, debatrix.benchmarks as pkg\n"
        "from debatrix.benchmarks.base import BENCHMARKS\n"
        "listed = sorted(BENCHMARKS)\n"
        "for info in pkgutil.iter_modules(pkg.__path__):\n"
        "    importlib.import_module(pkg.__name__ + '.' + info.name)\n"
        "print(listed == sorted(BENCHMARKS), listed, sorted(set(BENCHMARKS) - set(listed)))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("True ['bp', 'claims', 'contrast'"), out.stdout


def test_a_users_dimension_folder_wins_over_the_package_and_an_unknown_name_lists_both_kinds(tmp_path):
    from importlib import resources

    from debatrix.core.dimension import DimensionRegistry
    from debatrix.core.errors import UnknownDimensionError

    shipped = resources.files("debatrix.dimensions").joinpath("argument.yaml").read_text(encoding="utf-8")
    (tmp_path / "argument.yaml").write_text(shipped.replace(
        "description: the arguments and rebuttals", "description: MY arguments and rebuttals"), encoding="utf-8")
    (tmp_path / "sets.yaml").write_text("mine: {argument: 2}\n", encoding="utf-8")
    reg = DimensionRegistry([tmp_path])
    assert reg.get("argument").description.startswith("MY ") and "source" in reg.names
    assert "mine" in reg.set_names and DimensionRegistry().get("argument").description.startswith("the ")
    with pytest.raises(UnknownDimensionError, match=r"unknown dimension 'nope'; known: .*argument.*; sets: .*mine"):
        reg.get("nope")
