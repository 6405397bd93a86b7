"""The modules of python/ccsim import each other without circles.

A function-local import is allowed only to keep start-up cheap (pandas, pyarrow, matplotlib, rich
loaded on first use) or for an optional dependency, and says so with a ``# lazy:`` comment.

Every import of a ccsim module counts, wherever it is written: at the top, inside a function (a
function-local import hides a circle from Python, not from this test), under ``TYPE_CHECKING``,
relative, or through ``importlib.import_module("ccsim....")``. Importing a submodule does not count as
importing its parent package (Python runs the parent's ``__init__`` first, but never again).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "python" / "ccsim"


def module_files(package_dir: Path = PACKAGE_DIR) -> dict[str, Path]:
    """Dotted module name -> source file, for every .py file of the package."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_modules(name: str, source: str, known: set[str], is_package: bool = False) -> set[str]:
    """The modules in ``known`` that the module ``name`` (source text ``source``) imports."""
    found: set[str] = set()

    def add(target: str) -> None:
        # `import ccsim.a.b` names ccsim.a.b; a name that is no source module (ccsim._core) is skipped
        if target in known and target != name:
            found.add(target)

    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                if f"{base}.{alias.name}" in known:  # `from ccsim import plots`: the submodule
                    add(f"{base}.{alias.name}")
                else:  # `from ccsim.result import Result`, `from ccsim import __version__`
                    add(base)
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called == "import_module" and node.args and isinstance(node.args[0], ast.Constant):
                if isinstance(node.args[0].value, str):
                    add(node.args[0].value)
    return found


def import_graph(package_dir: Path = PACKAGE_DIR) -> dict[str, set[str]]:
    files = module_files(package_dir)
    known = set(files)
    return {
        name: imported_modules(name, path.read_text(encoding="utf-8"), known, path.name == "__init__.py")
        for name, path in files.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as [a, b, ..., a], or None when the graph is acyclic."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_ccsim_modules_import_without_circles():
    graph = import_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_the_graph_sees_every_kind_of_import():
    known = {"ccsim", "ccsim.a", "ccsim.b", "ccsim.c", "ccsim.d", "ccsim.e", "ccsim.pkg", "ccsim.pkg.sub"}
    source = (
        "import ccsim.a\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from ccsim.b import B\n"
        "def f():\n"
        "    from ccsim import c\n"
        "    import importlib\n"
        "    importlib.import_module('ccsim.d')\n"
        "    from ccsim import __version__\n"
        "from . import e\n"
        "import ccsim._core\n"
    )
    assert imported_modules("ccsim.x", source, known) == {"ccsim", "ccsim.a", "ccsim.b", "ccsim.c", "ccsim.d", "ccsim.e"}
    assert imported_modules("ccsim.pkg", "from .sub import y\n", known, is_package=True) == {"ccsim.pkg.sub"}
    assert imported_modules("ccsim.pkg.sub", "from .. import a\nfrom . import z\n", known) == {"ccsim.a", "ccsim.pkg"}


def test_find_cycle_names_the_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_real_graph_is_not_empty():
    graph = import_graph()
    assert "ccsim.result" in graph["ccsim.runner"]
    assert "ccsim.errors" in graph["ccsim"]


def function_local_imports_without_reason(source: str) -> list[tuple[int, str]]:
    """(line, text) of each import inside a function with no ``# lazy:`` comment on its line or on
    a comment line heading its group of imports."""
    lines = source.splitlines()
    missing = []
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            i = node.lineno - 1
            reasoned = "# lazy:" in lines[i]
            j = i - 1
            while not reasoned and j >= 0 and lines[j].strip().startswith(("#", "from ", "import ")):
                reasoned = "# lazy:" in lines[j]
                j -= 1
            if not reasoned:
                missing.append((node.lineno, lines[i].strip()))
    return missing


def test_every_function_local_import_says_why():
    unexplained = [
        f"{path.relative_to(PACKAGE_DIR.parent)}:{line}: {text}"
        for path in module_files().values()
        for line, text in function_local_imports_without_reason(path.read_text(encoding="utf-8"))
    ]
    assert not unexplained, "function-local imports without a '# lazy:' reason:\n" + "\n".join(unexplained)


def test_the_reason_check_sees_a_bare_local_import():
    source = (
        "import os\n"
        "def f():\n"
        "    # lazy: start-up time\n"
        "    import pandas\n"
        "    import pyarrow\n"
        "def g():\n"
        "    x = 1\n"
        "    from ccsim import result\n"
        "    import numpy  # lazy: start-up time\n"
    )
    assert function_local_imports_without_reason(source) == [(8, "from ccsim import result")]


# -- the one door to the compiled engine ------------------------------------------------------------

EXTENSION = "ccsim._core"


def imports_the_extension(name: str, source: str, is_package: bool = False) -> bool:
    """The module ``name`` imports ``ccsim._core`` (in any of the ways the graph sees)."""
    return EXTENSION in imported_modules(name, source, set(module_files()) | {EXTENSION}, is_package)


def test_only_the_engine_module_imports_the_extension():
    # ccsim.engine is the one door to ccsim._core (load_core, known_algorithms, check_scenario,
    # build_simulation, built_revision); another module asks it instead of importing the extension
    doors = sorted(name for name, path in module_files().items()
                   if imports_the_extension(name, path.read_text(encoding="utf-8"), path.name == "__init__.py"))
    assert doors == ["ccsim.engine"], f"modules importing {EXTENSION} besides ccsim.engine: {doors}"


def test_the_door_check_sees_every_kind_of_import_of_the_extension():
    for source in (
        "import ccsim._core\n",
        "from ccsim._core import GIT_REVISION\n",
        "from ccsim import _core\n",
        "def f():\n    from . import _core  # lazy: optional\n",
        "from ._core import validate_resolved\n",
        "import importlib\nimportlib.import_module('ccsim._core')\n",
    ):
        assert imports_the_extension("ccsim.x", source), source
    assert not imports_the_extension("ccsim.x", "import ccsim.engine\nx = 'ccsim._core'  # ccsim._core\n")
