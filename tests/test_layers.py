"""The rooms inside debatrix/ stay layered: the core imports nothing above it, the LLM access only the core."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# each room: its files and what it may import from debatrix (besides itself); every other debatrix module is above
# it. ``debatrix`` itself (the package's __init__) re-exports core names eagerly and the judge's API lazily: a lazy
# name counts as ``debatrix.app.api``, where it comes from.
# From the bottom: the core; the LLM access; the memory; the run's context; the graphs; the judge's API (and its
# deployment); the benchmarks, which judge through the API; at the top the CLI, the web page and the reports, which
# may use any room (they show benchmark results too).
BELOW_GRAPHS = {"debatrix.core", "debatrix.llm", "debatrix.memory", "debatrix.context", "debatrix.prompts",
                "debatrix.dimensions"}
API = ("debatrix/app/api.py", "debatrix/app/deployment.py", "debatrix/app/runtime.py", "debatrix/app/progress_bar.py")
ROOMS = {
    "core": (("debatrix/core/*.py", "debatrix/core/flow/*.py"), {"debatrix.core", "debatrix.dimensions", "debatrix.prompts"}),
    "llm": (("debatrix/llm/*.py",), {"debatrix.core"}),
    "memory": (("memory/*.py",), {"debatrix.core"}),
    "testing": (("debatrix/testing.py", "debatrix/testing_reader.py"), {"debatrix.core"}),
    "context": (("debatrix/context.py",), {"debatrix.core", "debatrix.llm", "debatrix.memory"}),
    "graphs": (("graphs/*.py", "graphs/prose/*.py"), BELOW_GRAPHS),
    "api": (API, BELOW_GRAPHS | {"debatrix.graphs"}),
    "benchmarks": (("benchmarks/*.py",),
                   BELOW_GRAPHS | {"debatrix.graphs", "debatrix.testing", "debatrix.app.api", "debatrix.app.runtime"}),
}
ALLOWED = {room: allowed for room, (_, allowed) in ROOMS.items()}


def _module(path: Path) -> str:
    """A file's import name: the root folders are packaged under ``debatrix`` (pyproject's package-dir)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] != "debatrix":
        parts.insert(0, "debatrix")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _lazy_names() -> set[str]:
    import debatrix

    return set(debatrix._LAZY)


def _package_of(path: Path) -> str:
    """The package a file's relative imports resolve in: its own (a sub-package's file, ``graphs/prose/``, its
    sub-package)."""
    module = _module(path)
    return module if path.name == "__init__.py" else module.rsplit(".", 1)[0]


def _resolve(node: ast.ImportFrom, package: str) -> str:
    """The absolute module of a relative import inside ``package``."""
    base = package.split(".")
    if node.level > 1:
        base = base[: -(node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _debatrix_imports(path: Path, package: str = "debatrix") -> set[str]:
    """Every debatrix module a file imports, at the top or inside a function, relative imports resolved; a name
    the package re-exports lazily counts as the module it comes from."""
    lazy = _lazy_names()
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = _resolve(node, package) if node.level else node.module
            if not module:
                continue
            if module == "debatrix":
                names = [("debatrix.app.api" if a.name in lazy else
                          "debatrix.__version__" if a.name == "__version__" else "debatrix.core") for a in node.names]
            else:
                names = [module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n == "debatrix" or n.startswith("debatrix.")}
    return found


def _within(module: str, allowed: set[str]) -> bool:
    return module == "debatrix.__version__" or any(module == a or module.startswith(a + ".") for a in allowed)


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_a_room_imports_nothing_from_the_rooms_above_it(room):
    patterns, allowed = ROOMS[room]
    files = sorted({f for pattern in patterns for f in ROOT.glob(pattern)})
    assert files
    own = {_module(f) for f in files}  # a room's files may import each other, nothing else of their package
    wrong = {f"{f.name}: {m}" for f in files for m in _debatrix_imports(f, _package_of(f))
             if not _within(m, allowed | own)}
    assert not wrong, f"{room} imports from above it: {sorted(wrong)}"


def test_every_module_is_in_a_room_or_at_the_top():
    """A new file is placed in a room (and so checked), or is one of the front ends at the top."""
    jobs = ("common", "judge", "bench", "models", "serve", "review")
    top = {"debatrix.app.cli", *(f"debatrix.app.cli_{job}" for job in jobs),
           "debatrix.app.options", "debatrix.app.terminal", "debatrix.app.ui",
           "debatrix.app.report", "debatrix.app.reviewing", "debatrix.app.doctables", "debatrix.app.profile_command",
           "debatrix", "debatrix.app"}
    roomed = {_module(f) for patterns, _ in ROOMS.values() for pattern in patterns for f in ROOT.glob(pattern)}
    every = {_module(f) for room in ("debatrix", "graphs", "memory", "benchmarks") for f in (ROOT / room).rglob("*.py")}
    assert every - roomed - top == set()


FLOW = "debatrix.core.flow"


def _flow_file_imports(path: Path, package: str | None = None) -> set[str]:
    """The modules of the flow's package that a file outside it imports by their own name (``from
    debatrix.core.flow.ledger import ...``, or ``from debatrix.core.flow import words`` where the package exports no
    such name), not through the package's names."""
    import debatrix.core.flow as flow

    package = package or _package_of(path)
    found = {m for m in _debatrix_imports(path, package) if m.startswith(FLOW + ".")}
    files = {f.stem for f in (ROOT / "debatrix" / "core" / "flow").glob("*.py")}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (_resolve(node, package) if node.level else node.module) == FLOW:
            found |= {f"{FLOW}.{a.name}" for a in node.names if a.name in files and
                      not callable(getattr(flow, a.name, None))}
    return found


def test_the_flow_is_entered_through_its_package_only():
    """The default mode's arithmetic and words have one door: every module outside ``core/flow/`` imports them from
    ``debatrix.core.flow``, so a reader (and the CLI, the page, the reports) meets the flow in one place."""
    inside = ROOT / "debatrix" / "core" / "flow"
    files = [f for room in ("debatrix", "graphs", "memory", "benchmarks", "tests") for f in (ROOT / room).rglob("*.py")
             if inside not in f.parents]
    users = [f for f in files if FLOW in {m for m in _debatrix_imports(f, _package_of(f))}]
    assert len(users) > 10  # the check reads real imports
    wrong = {f"{f.relative_to(ROOT)}: {m}" for f in files for m in _flow_file_imports(f)}
    assert not wrong, f"import these from debatrix.core.flow: {sorted(wrong)}"


def test_the_flow_door_check_sees_a_file_of_it(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from debatrix.core.flow.ledger import ledger\n")
    assert _flow_file_imports(bad, "debatrix") == {"debatrix.core.flow.ledger"}
    bad.write_text("from .flow import words\nfrom debatrix.core.flow import ledger\n")  # the package's names: allowed
    assert _flow_file_imports(bad, "debatrix.core") == {"debatrix.core.flow.words"}


def test_the_layer_check_sees_an_upward_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from debatrix.graphs.build import build_graph\n")
    assert not all(_within(m, ALLOWED["core"]) for m in _debatrix_imports(bad))
    # a relative import reaching another room, and a lazily re-exported name, are seen for what they are
    bad.write_text("from ..app.api import ajudge_debate\nfrom debatrix import JudgeContext, __version__\n")
    found = _debatrix_imports(bad, "debatrix.graphs")
    assert found == {"debatrix.app.api", "debatrix.__version__"}
    assert not all(_within(m, ALLOWED["graphs"]) for m in found)
    # the API may not reach the benchmarks built on it, nor they the CLI above them; the context not the graphs
    assert not _within("debatrix.benchmarks.runner", ALLOWED["api"])
    assert not _within("debatrix.app.cli", ALLOWED["benchmarks"] | {_module(ROOT / "benchmarks" / "runner.py")})
    assert not _within("debatrix.graphs.build", ALLOWED["context"])


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


def test_no_name_is_defined_in_two_modules_of_the_judge():
    """One file per name: a module-level function or class of the judge (debatrix/, graphs/, memory/) is defined
    in one module only, so a name read anywhere means one thing (the benchmarks' scripts may each have a main)."""
    where: dict[str, list[str]] = {}
    for folder in ("debatrix", "graphs", "memory"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    where.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
                # a public constant too: two WINNER_LINE patterns read "Winner:" lines two ways
                targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                    node, ast.AnnAssign) else []
                for t in targets:
                    if isinstance(t, ast.Name) and t.id.isupper() and len(t.id) > 1 and not t.id.startswith("_"):
                        where.setdefault(t.id, []).append(str(path.relative_to(ROOT)))
    assert {name: files for name, files in where.items() if len(files) > 1} == {}


def test_no_two_modules_of_the_judge_share_a_file_name():
    """A file name means one room: ``flow.py`` in two folders made every reader ask which flow (the computed one or
    the graph's nodes). Packages' ``__init__.py`` aside."""
    where: dict[str, list[str]] = {}
    for folder in ("debatrix", "graphs", "memory", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name != "__init__.py" and "__pycache__" not in path.parts:
                where.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert {name: files for name, files in where.items() if len(files) > 1} == {}


def _modules() -> dict[str, Path]:
    return {_module(f): f for room in ("debatrix", "graphs", "memory", "benchmarks")
            for f in (ROOT / room).rglob("*.py") if "__pycache__" not in f.parts}


def _imports_of(path: Path, known: set[str]) -> set[tuple[str, str]]:
    """(module, name) for every import of a project module in ``path``, at the top or inside a function: ``from .
    import messages`` is the submodule ``messages``, ``from .base import judge_item`` the module ``base`` (name
    ``judge_item``)."""
    module, package = _module(path), _package_of(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # the package's own lazy API (its __getattr__ imports the judge's API on first use) is the documented way up
    nodes = tree.body if module == "debatrix" else ast.walk(tree)
    lazy = _lazy_names()
    found = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            base = _resolve(node, package) if node.level else (node.module or "")
            for alias in node.names:
                if base == "debatrix" and alias.name in lazy:  # re-exported lazily: where it comes from
                    found.add(("debatrix.app.api", alias.name))
                elif f"{base}.{alias.name}" in known:
                    found.add((f"{base}.{alias.name}", ""))
                elif base in known:
                    found.add((base, alias.name))
        elif isinstance(node, ast.Import):
            found |= {(a.name, "") for a in node.names if a.name in known}
    return found


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each a circle of imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_import_graph_has_no_circle_and_no_private_name_crosses_a_module():
    """No module imports, even inside a function, one that imports it back (a circle that works only because one
    side imports late), and no module imports another's private name (``_EVIDENCE``): what another module needs
    is public where it is defined."""
    mods = _modules()
    known = set(mods)
    edges = {m: _imports_of(f, known) for m, f in mods.items()}
    graph = {m: {d for d, _ in found if d != m} for m, found in edges.items()}
    assert _circles(graph) == []
    private = sorted(f"{m}: {d}.{n}" for m, found in edges.items() for d, n in found
                     if n.startswith("_") and not n.startswith("__") and d != m)
    assert private == []


def test_the_circle_check_sees_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


LONGEST = 600  # lines: past this a file has grown a second job (issue 62 split cli.py, gateway.py and the flow)


def test_every_file_of_the_judge_says_what_it_holds_and_does_one_job():
    """Each module opens with a docstring saying what it holds, and none runs past :data:`LONGEST` lines."""
    files = [f for room in ("debatrix", "graphs", "memory", "benchmarks") for f in (ROOT / room).rglob("*.py")
             if "__pycache__" not in f.parts]
    assert len(files) > 80
    silent = [str(f.relative_to(ROOT)) for f in files
              if f.name != "__init__.py" and not ast.get_docstring(ast.parse(f.read_text(encoding="utf-8")))]
    long = {str(f.relative_to(ROOT)): n for f in files if (n := len(f.read_text(encoding="utf-8").splitlines())) > LONGEST}
    assert not silent, f"no opening docstring: {silent}"
    assert not long, f"over {LONGEST} lines, split by job: {long}"
