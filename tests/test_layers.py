"""The package's layers, checked from the source: no import cycles, and each layer imports
only what it may (the domain neither Flask nor numpy; the advisor no web code)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "service"

#: layer -> top-level modules it must not import (within `service` or outside it)
FORBIDDEN = {
    "service.domain": ("flask", "flask_smorest", "marshmallow", "werkzeug", "numpy", "numba",
                       "service.advisor", "service.web", "service.config"),
    "service.advisor": ("flask", "flask_smorest", "marshmallow", "werkzeug", "service.web"),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Absolute names of every module a file imports (relative imports resolved)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            out.add(prefix)
            # `from . import x` may import a submodule x
            out.update(f"{prefix}.{alias.name}" for alias in node.names)
    return out


def _runtime_nodes(tree: ast.AST):
    """Every node but those under `if TYPE_CHECKING:` (imports for type hints only)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if (isinstance(child, ast.If) and isinstance(child.test, ast.Name)
                    and child.test.id == "TYPE_CHECKING"):
                todo.extend(child.orelse)
                continue
            todo.append(child)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}
GRAPH = {name: {m for m in imports_of(path) if m in MODULES and m != name}
         for name, path in MODULES.items()}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports(layer):
    bad = []
    for name, path in MODULES.items():
        if name == layer or name.startswith(layer + "."):
            for imported in imports_of(path):
                for forbidden in FORBIDDEN[layer]:
                    if imported == forbidden or imported.startswith(forbidden + "."):
                        bad.append(f"{name} imports {imported}")
    assert not bad


def test_no_import_cycles():
    """No module reaches itself through the runtime imports of others (a module's own
    enclosing packages excepted: importing `a.b` runs `a/__init__` first, not a cycle)."""
    graph = {n: {m for m in deps if not n.startswith(m + ".")} for n, deps in GRAPH.items()}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, cycles


def test_the_check_sees_the_layers():
    assert "service.domain.scoring" in MODULES and "service.web.app" in MODULES
    assert "service.domain.rules" in GRAPH["service.domain.scoring"]
