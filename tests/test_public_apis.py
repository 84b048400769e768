"""The service uses its libraries' public APIs only (service/web/adapters.py, the one
adapter, excepted: tests/web/test_adapters.py pins it), checked from the source and from
the classes themselves:

- no attribute of a library that the library names private (a leading underscore) is read
  or written from the service's code, unless the service defines that name itself (its own
  privates share names with some library's: `_lock`, `_hash`);
- no class of the service overrides a private method or attribute of a library class it
  extends, but the extension points the library documents (marshmallow's custom fields:
  `_serialize`, `_deserialize`).

A release that renames a private attribute would break the service silently; this fails
first, by name."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from functools import cache
from pathlib import Path

import marshmallow
import pytest

import service

PACKAGE = Path(service.__file__).resolve().parent
#: The libraries the service builds on (their private names are theirs to change).
LIBRARIES = ("flask", "flask_smorest", "marshmallow", "limits", "numba", "prometheus_client",
             "gunicorn", "werkzeug", "gevent", "redis", "apispec")
#: Where the service reaches past a documented API, pinned by tests/web/test_adapters.py.
ADAPTER = PACKAGE / "web" / "adapters.py"
#: Private names a library documents as the way to extend it.
DOCUMENTED = {
    "_serialize": "marshmallow: a custom field implements _serialize",
    "_deserialize": "marshmallow: a custom field implements _deserialize",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined_names(paths: list[Path]) -> set[str]:
    """Every private name the files define: functions, classes, assigned names and
    attributes, parameters."""
    names: set[str] = set()
    for path in paths:
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return {name for name in names if _private(name)}


@cache
def library_privates() -> frozenset[str]:
    """The private names the libraries define."""
    paths: list[Path] = []
    for name in LIBRARIES:
        module = importlib.import_module(name)
        paths += Path(module.__file__).parent.rglob("*.py")
    return frozenset(_defined_names(paths))


def service_sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_service_reads_no_private_attribute_of_a_library():
    ours = _defined_names(service_sources())
    theirs = library_privates()
    found = []
    for path in service_sources():
        if path == ADAPTER:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr in theirs
                    and node.attr not in ours and node.attr not in DOCUMENTED):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} .{node.attr}")
    assert not found, ("private attributes of a library (use its public API, or put the "
                       "reach in service/web/adapters.py with a pinned test): "
                       + ", ".join(found))


def test_the_checks_own_reading_finds_a_private_attribute():
    """The scan above is not vacuous: marshmallow's private field table is one of the names
    it looks for, and the service defines no such name of its own."""
    assert "_declared_fields" in library_privates()
    assert "_declared_fields" not in _defined_names(service_sources())


def _service_classes():
    for info in pkgutil.walk_packages([str(PACKAGE)], prefix="service."):
        if info.name == "service.web.adapters":
            continue
        module = importlib.import_module(info.name)
        for _, klass in inspect.getmembers(module, inspect.isclass):
            if klass.__module__ == info.name:
                yield klass


def _class_body_names(klass: type) -> set[str]:
    """The names the class statement itself defines (not those a library's metaclass or
    base puts on it, as marshmallow's `_declared_fields`)."""
    try:
        tree = ast.parse(inspect.getsource(klass).lstrip())
    except (OSError, TypeError, SyntaxError):  # made by a function (Schema.from_dict)
        return set()
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    names = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _library_class(klass: type) -> bool:
    return klass.__module__.split(".")[0] in LIBRARIES


@pytest.mark.parametrize("klass", [k for k in _service_classes()
                                   if any(_library_class(b) for b in k.__mro__[1:])],
                         ids=lambda k: f"{k.__module__}.{k.__qualname__}")
def test_no_class_overrides_a_private_member_of_a_library_class(klass):
    bases = [b for b in klass.__mro__[1:] if _library_class(b)]
    overridden = sorted(name for name in _class_body_names(klass) if _private(name)
                        and name not in DOCUMENTED
                        and any(name in vars(base) for base in bases))
    assert not overridden, (f"{klass.__qualname__} overrides private members of "
                            f"{[b.__qualname__ for b in bases]}: {overridden}")



class _BadSchema(marshmallow.Schema):
    """A class as the check above must refuse: it overrides a private method of
    marshmallow's Schema."""

    def _invoke_dump_processors(self, *args: object, **kwargs: object) -> None:
        return None


def test_the_override_check_finds_an_override():
    assert "_invoke_dump_processors" in _class_body_names(_BadSchema)
    with pytest.raises(AssertionError, match="_invoke_dump_processors"):
        test_no_class_overrides_a_private_member_of_a_library_class(_BadSchema)
