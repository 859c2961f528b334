"""The rooms inside debatrix/ stay layered: the core imports nothing above it, the LLM access only the core."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# what each room may import from debatrix (besides itself); every other debatrix module is above it
ALLOWED = {
    "core": {"debatrix", "debatrix.core", "debatrix.dimensions", "debatrix.prompts"},
    "llm": {"debatrix", "debatrix.core", "debatrix.llm"},
}


def _debatrix_imports(path: Path) -> set[str]:
    """Every debatrix module a file imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n == "debatrix" or n.startswith("debatrix.")}
    return found


def _within(module: str, allowed: set[str]) -> bool:
    if module == "debatrix":
        return True
    if module.startswith("debatrix.") and module.count(".") == 1 and module.split(".")[1][0].isupper():
        return True  # a name re-exported by the package (``from debatrix import __version__``)
    return any(module == a or module.startswith(a + ".") for a in allowed if a != "debatrix")


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_a_room_imports_nothing_from_the_rooms_above_it(room):
    files = sorted((ROOT / "debatrix" / room).glob("*.py"))
    assert files
    wrong = {f"{f.name}: {m}" for f in files for m in _debatrix_imports(f)
             if not _within(m, ALLOWED[room]) and m != "debatrix.__version__"}
    assert not wrong, f"debatrix/{room} imports from above it: {sorted(wrong)}"


def test_the_layer_check_sees_an_upward_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from debatrix.graphs.modes import build_graph\n")
    assert not all(_within(m, ALLOWED["core"]) for m in _debatrix_imports(bad))


# the folders at the root that setuptools maps into the package (pyproject's package-dir): importable only as
# debatrix.<name>; under their short name the same file would load twice, with two registries
SHORT_NAMES = ("graphs", "memory", "benchmarks", "prompts", "dimensions", "examples")


def _short_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n.split(".")[0] in SHORT_NAMES}
    return found


def test_no_file_imports_a_packaged_folder_by_its_short_name():
    files = [f for room in ("debatrix", "tests", *SHORT_NAMES) for f in (ROOT / room).rglob("*.py")]
    assert len(files) > 50
    wrong = {f"{f.relative_to(ROOT)}: {m}" for f in files for m in _short_imports(f)}
    assert not wrong, f"import these as debatrix.<name>: {sorted(wrong)}"


def test_the_short_name_check_sees_one(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from graphs.modes import expected_calls\nimport benchmarks.runner\n")
    assert _short_imports(bad) == {"graphs.modes", "benchmarks.runner"}
