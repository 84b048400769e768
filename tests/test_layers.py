"""The package's layers, checked from the source: no import cycles, and each layer imports
only what it may (the domain neither Flask nor numpy; the advisor no web code; within the
advisor, each sub-package only those below it: kernels <- solving <- tables <- advice <-
analysis <- objectives)."""

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


def imports_of(path: Path, type_only: bool = False) -> set[str]:
    """Absolute names of every module a file imports (relative imports resolved); with
    `type_only`, also those imported under `if TYPE_CHECKING:` for type hints."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    tree = ast.parse(path.read_text())
    for node in (ast.walk(tree) if type_only else _runtime_nodes(tree)):
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
#: the same with the imports for type hints only (`if TYPE_CHECKING:`)
TYPED_GRAPH = {name: {m for m in imports_of(path, True) if m in MODULES and m != name}
               for name, path in MODULES.items()}

#: The advisor's sub-packages, lowest first: each imports only those before it (and itself).
ADVISOR = "service.advisor"
ADVISOR_ORDER = ("kernels", "solving", "tables", "advice", "analysis", "objectives")


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


def _cycles(full: dict[str, set[str]], within: str = "") -> list[list[str]]:
    """The import cycles of a graph (restricted to modules under `within`)."""
    graph = {n: {m for m in deps if not n.startswith(m + ".") and m.startswith(within)}
             for n, deps in full.items() if n.startswith(within)}
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
    return cycles


def test_no_import_cycles():
    """No module reaches itself through the runtime imports of others (a module's own
    enclosing packages excepted: importing `a.b` runs `a/__init__` first, not a cycle)."""
    assert not _cycles(GRAPH)


def test_no_advisor_cycles_with_type_imports():
    """Nor in the advisor when imports for type hints only count too: a type-only import
    is a dependency the layout must allow."""
    assert not _cycles(TYPED_GRAPH, ADVISOR + ".")


def _advisor_rank(name: str) -> int | None:
    """The rank of an advisor module's sub-package in `ADVISOR_ORDER` (None: the package's
    own `__init__` and `__main__`, which may import any of them)."""
    parts = name.split(".")
    if parts[:2] != ["service", "advisor"] or len(parts) < 3 or parts[2] == "__main__":
        return None
    return ADVISOR_ORDER.index(parts[2])


def test_advisor_modules_live_in_the_sub_packages():
    """Every advisor module is in one of the sub-packages (a new one picks its layer)."""
    loose = [n for n in MODULES if n.startswith(ADVISOR + ".")
             and n.split(".")[2] not in (*ADVISOR_ORDER, "__main__")]
    assert not loose


def test_advisor_imports_run_one_way():
    """Each advisor sub-package imports only the ones below it (type-only and
    function-local imports included): kernels <- solving <- tables <- advice <- analysis
    <- objectives."""
    bad = []
    for name, deps in TYPED_GRAPH.items():
        rank = _advisor_rank(name)
        if rank is None:
            continue
        for dep in deps:
            other = _advisor_rank(dep)
            if other is not None and other > rank:
                bad.append(f"{name} ({ADVISOR_ORDER[rank]}) imports {dep}")
    assert not bad


def test_the_check_sees_the_layers():
    assert "service.domain.scoring" in MODULES and "service.web.app" in MODULES
    assert "service.domain.rules" in GRAPH["service.domain.scoring"]
    assert "service.advisor.kernels.values" in GRAPH["service.advisor.solving.solver"]
    assert _advisor_rank("service.advisor.kernels.values") == 0
    assert _advisor_rank("service.advisor.analysis.analyst") == len(ADVISOR_ORDER) - 2
    # the cycle check finds a cycle where there is one
    assert _cycles({"service.advisor.a": {"service.advisor.b"},
                    "service.advisor.b": {"service.advisor.a"}}, ADVISOR + ".")


#: What a request says about who sends it (the peer's address, forwarded addresses, keys)
#: or where it goes (its raw path): read only where the front door decides it, once per
#: request (service/web/frontdoor.py and the keys and proxies it asks, service/web/auth.py);
#: every other concern reads the route and the caller it decided (`service.caller`).
IDENTITY_NAMES = {"remote_addr", "REMOTE_ADDR", "HTTP_X_FORWARDED_FOR", "access_route",
                  "HTTP_AUTHORIZATION", "HTTP_X_API_KEY", "authorization", "PATH_INFO",
                  "HTTP_X_ORIGINAL_URL", "HTTP_X_REWRITE_URL", "url_rule"}
IDENTITY_READERS = {
    "service.web.auth": {"REMOTE_ADDR", "HTTP_X_FORWARDED_FOR", "HTTP_AUTHORIZATION",
                         "HTTP_X_API_KEY"},
    "service.web.frontdoor": {"PATH_INFO"},
    # the access line's fields (gunicorn's peer address, the path as it came), logged, not
    # an identity: `AccessAtomsLogger` makes gunicorn's atoms of them
    "service.logs": {"remote_addr", "REMOTE_ADDR", "PATH_INFO"},
    # Flask's request context takes the front door's route (adapters.RoutedRequestContext)
    "service.web.adapters": {"url_rule"},
}


def _names_read(path: Path) -> set[str]:
    """Attribute names and string constants a module uses (docstrings excepted)."""
    tree = ast.parse(path.read_text())
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
                  and n.body and isinstance(n.body[0], ast.Expr)
                  and isinstance(n.body[0].value, ast.Constant)}
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings):
            out.add(node.value)
    return out


def test_who_is_calling_is_decided_in_one_place():
    bad = []
    for name, path in MODULES.items():
        used = _names_read(path) & IDENTITY_NAMES
        extra = used - IDENTITY_READERS.get(name, set())
        if extra:
            bad.append(f"{name} reads {sorted(extra)}")
    assert not bad, bad
