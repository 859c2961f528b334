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
