"""One exception hierarchy (airflow_lineage_plus/exceptions.py): every exception class the package defines
lives there, under ``LineagePlusError``, and the module docstring's tree shows each one under its parent
with the built-in exception it also derives from."""

from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

from airflow_lineage_plus import exceptions

PACKAGE = Path(__file__).resolve().parents[1] / "airflow_lineage_plus"
BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}
#: a line of the tree: the branch drawn before the name, the name, the built-ins in parentheses
TREE_LINE = re.compile(r"^(?P<branch>[ │]*(?:├── |└── ))(?P<name>\w+)(?: \((?P<builtins>[\w, ]+)\))?")


def docstring_tree() -> dict[str, tuple[str | None, set[str]]]:
    """Each class the docstring's tree draws -> (its parent in the tree, the built-ins named beside it)."""
    lines = (exceptions.__doc__ or "").splitlines()
    start = lines.index("    LineagePlusError")
    tree: dict[str, tuple[str | None, set[str]]] = {"LineagePlusError": (None, set())}
    parents = ["LineagePlusError"]  # parents[d]: the last class drawn at depth d
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        match = TREE_LINE.match(line[4:])
        if match is None:  # a description carried over to the next line
            continue
        depth = len(match["branch"]) // 4
        del parents[depth:]
        named = {b.strip() for b in (match["builtins"] or "").split(",") if b.strip()}
        tree[match["name"]] = (parents[-1], named)
        parents.append(match["name"])
    return tree


def _derives(bases: list[str], known: set[str]) -> bool:
    """Whether one of ``bases`` is an exception (a known one, or one imported under an exception's name)."""
    return any(base in known or base.endswith(("Error", "Exception")) for base in bases)


def exception_classes_defined_in_the_package() -> dict[str, list[str]]:
    """Every class derived from an exception, by name -> the modules defining it (read from the source)."""
    classes: list[tuple[str, str, list[str]]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
                classes.append((module, node.name, bases))
    known = set(BUILTIN_EXCEPTIONS)
    while True:  # a class is an exception when one of its bases is (to a fixed point, across modules)
        found = {name for _, name, bases in classes if _derives(bases, known)} - known
        if not found:
            break
        known |= found
    defined: dict[str, list[str]] = {}
    for module, name, bases in classes:
        if _derives(bases, known):
            defined.setdefault(name, []).append(module)
    return defined


def test_every_exception_class_of_the_package_is_defined_in_exceptions_py() -> None:
    defined = exception_classes_defined_in_the_package()
    elsewhere = {
        name: modules for name, modules in defined.items() if modules != ["airflow_lineage_plus.exceptions"]
    }
    assert elsewhere == {}
    assert len(defined) == len(docstring_tree())


def test_every_exception_class_derives_from_lineage_plus_error() -> None:
    classes = [
        value
        for value in vars(exceptions).values()
        if isinstance(value, type) and issubclass(value, BaseException)
    ]
    outside = [cls.__name__ for cls in classes if not issubclass(cls, exceptions.LineagePlusError)]
    assert outside == []
    assert exceptions.LineagePlusError.__bases__ == (Exception,)


def test_the_docstring_draws_every_class_under_its_parent_with_its_builtins() -> None:
    tree = docstring_tree()
    drawn = {}
    for value in vars(exceptions).values():
        if (
            not (isinstance(value, type) and issubclass(value, BaseException))
            or value.__module__ != exceptions.__name__
        ):
            continue
        ours = [b.__name__ for b in value.__bases__ if b.__module__ == exceptions.__name__]
        theirs = {b.__name__ for b in value.__bases__ if b.__module__ == "builtins"} - {"Exception"}
        drawn[value.__name__] = (ours[0] if ours else None, theirs)
    assert drawn == tree
