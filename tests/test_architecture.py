"""The package's layout rules, checked on its source: one way through the code (docs/architecture.md).

- no import cycle between the package's modules (imports inside functions count), and no two modules
  that know each other's types: with the imports under ``TYPE_CHECKING`` added, there is still no cycle
  (a type wanted by two modules lives in the one both import);
- dependencies point one way along the flow: author -> emit -> deliver (dbt/ beside emit/), and
  view -> act -> graph; the graph and the dataset identity stand on their own; static lineage (declared/)
  reads declarations (author), sends them (deliver) and weighs changes over the graph (graph), and the CLI
  shows it;
- no module over 600 lines, no function over 60;
- no file name repeats in the package (a name says its room without its folder), except the re-exports
  that keep the dotted paths users configure;
- the dotted paths users put in ``airflow.cfg`` and the README's public names keep working.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "airflow_lineage_plus"
ROOT = "airflow_lineage_plus"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60

#: Modules every stage may use: configuration, errors, facets and their keys, containment, the private-API
#: shim, dataset identity and node ids, the Marquez HTTP client.
BASE = {
    "__about__",
    "provider_info",
    "conf",
    "exceptions",
    "facet_keys",
    "custom_facets",
    "containment",
    "_compat",
    "node_ids",
    "marquez_client",
    "datasets",
    # the one ISO 8601 time parser (Python 3.10 rejects "Z" in fromisoformat): the graph and replay share it
    "timestamps",
    # pictures of lineage (Mermaid, DOT) from plain nodes and edges: the CLI's answers and diff's Markdown
    "pictures",
    # progress bars of long work on a terminal (import into the store, replay, publish-static, diff)
    "progress",
    # the directories the package creates, one mode whoever comes first
    "private_dirs",
    # the one claim store ("once, across processes and hosts"): the skip records (emit) and alerts (act)
    "claims",
}
#: stage -> the stages (besides BASE and itself) its modules may import.
#:
#: ``source`` (sources.py, "open the configured lineage") is its own stage because two stages use it: the
#: view, and ``act``. ``act`` (alerts, freshness) is the stage after the graph: it reads the lineage to
#: compute impact and acts on it, so it may use every stage before it (the declared outputs of a failed
#: task from author/, Airflow states from emit/, redaction from deliver/, the graph through source), and
#: the view shows what it computes (the freshness command, route and badge), so the view may use it.
ALLOWED = {
    "base": set(),
    # store/ (the lineage store: raw events in a database) stands on its own, like the graph: the graph
    # reads it, and the delivery will write it
    "store": set(),
    "author": {"emit", "deliver"},
    "emit": {"deliver"},
    # dbt/ (dbt Core run from a task, dbt-ol's runs children of the task's run) sits beside emit/: like
    # emit/, it connects the runs another emitter makes to the task run and adds the records it does not
    # make, through the delivery rules (limits, redaction); only the wiring (plugin.py) imports it
    "dbt": {"deliver"},
    "deliver": {"store"},
    "graph": {"store"},
    # declared/ (static lineage: DAG code read before it runs) is a stage of its own, beside the run-time
    # flow: it reads DAGs and their declarations like the DAG processor (author), sends JobEvents through
    # the delivery rules (deliver) and weighs a change's impact over the lineage graph (graph). Nothing
    # of the run-time flow imports it; the CLI (view) shows it.
    "declared": {"author", "deliver", "graph"},
    "source": {"graph", "store"},
    "act": {"author", "emit", "deliver", "graph", "source", "store"},
    "view": {"graph", "deliver", "source", "act", "declared", "store"},
    "wiring": {"author", "emit", "dbt", "deliver", "graph", "source", "act", "declared", "view", "store"},
}
#: What the Airflow-free graph may import from the rest of the package (all of them import no Airflow).
GRAPH_MAY_IMPORT = {"node_ids", "facet_keys", "exceptions", "marquez_client", "timestamps", "store"}
#: The dotted paths users type into airflow.cfg and the README (kept as re-exports).
USER_PATHS = [
    "airflow_lineage_plus.transport.EventLogTransport",
    "airflow_lineage_plus.skip.run_facets",
    "airflow_lineage_plus.budget.BudgetTransformer",
    "airflow_lineage_plus.fold.FoldIntoTaskRun",
    "airflow_lineage_plus.dbt.DbtLineageTransport",
    "airflow_lineage_plus.alerts.DownstreamOwnersNotifier",
    # named by docs/cli.md and docs/alerts.md for code users write
    "airflow_lineage_plus.cli.commands.add_command",
    "airflow_lineage_plus.act.message.Alert",
]


#: Modules that exist only to keep a user's dotted path (each re-exports names of the module that owns them).
REEXPORTS = {f"{ROOT}.{name}" for name in ("transport", "skip", "budget", "fold", "alerts")}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def stage_of(module: str) -> str:
    """The stage a module belongs to (see ``ALLOWED``)."""
    parts = module.split(".")
    first = parts[1] if len(parts) > 1 else ""
    if first in {"author", "emit", "dbt", "deliver", "graph", "declared", "act", "store"}:
        return first
    if first in BASE:
        return "base"
    if first == "sources":
        return "source"
    if first in {"cli", "ui"}:
        return "view"
    return "wiring"  # the package __init__, the plugin, the user-path re-exports


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _import_nodes(tree: ast.AST, *, type_checking: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if not type_checking and _type_checking_block(node):
            stack.extend(getattr(node, "orelse", []))
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _resolve(module: str, node: ast.ImportFrom) -> str | None:
    if node.level:
        package = module.split(".")
        if MODULES[module].name != "__init__.py":
            package = package[:-1]
        base = ".".join(package[: len(package) - node.level + 1])
        return f"{base}.{node.module}" if node.module else base
    return node.module


def imports_of(module: str, *, type_checking: bool = False) -> set[str]:
    """Package modules ``module`` imports at run time (in functions too), and with ``type_checking`` also
    those it imports for its annotations only (under ``TYPE_CHECKING``)."""
    tree = ast.parse(MODULES[module].read_text())
    found: set[str] = set()
    for node in _import_nodes(tree, type_checking=type_checking):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            target = _resolve(module, node)
            if target is None:
                continue
            names = [f"{target}.{alias.name}" for alias in node.names]
            names = [n if n in MODULES else target for n in names]
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name.startswith(ROOT) and name != module:
                found.add(name)
    return found


def _cycles(*, type_checking: bool = False) -> list[list[str]]:
    graph = {module: imports_of(module, type_checking=type_checking) for module in MODULES}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    return cycles


def test_no_module_imports_back_into_a_module_that_imports_it() -> None:
    assert _cycles() == []


def test_no_two_modules_know_each_others_types_type_checking_imports_included() -> None:
    assert _cycles(type_checking=True) == []


def test_dependencies_point_one_way_along_the_flow() -> None:
    wrong = []
    for module in MODULES:
        stage = stage_of(module)
        allowed = {stage, "base"} | ALLOWED[stage]
        for imported in sorted(imports_of(module)):
            if stage_of(imported) not in allowed:
                wrong.append(f"{module} ({stage}) imports {imported} ({stage_of(imported)})")
    assert wrong == []


def test_the_graph_imports_nothing_of_the_package_but_ids_keys_and_errors() -> None:
    wrong = []
    for module in MODULES:
        if stage_of(module) != "graph":
            continue
        for imported in imports_of(module):
            if stage_of(imported) != "graph" and imported.split(".")[1] not in GRAPH_MAY_IMPORT:
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


def test_dataset_identity_stands_on_its_own() -> None:
    wrong = [
        f"{module} imports {imported}"
        for module in MODULES
        if module.startswith(f"{ROOT}.datasets")
        for imported in imports_of(module)
        if not imported.startswith(f"{ROOT}.datasets")
        and imported.split(".")[1] not in {"exceptions", "node_ids"}
    ]
    assert wrong == []


def test_no_module_is_longer_than_600_lines() -> None:
    sources = [*MODULES.values(), *(PACKAGE / "ui" / "static").glob("*.js")]
    long = {str(p.relative_to(PACKAGE)): n for p in sources if (n := len(p.read_text().splitlines())) > 600}
    assert long == {}


def test_no_function_is_longer_than_60_lines() -> None:
    long = {}
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long[f"{module}.{node.name}"] = length
    assert long == {}


def test_no_file_name_repeats_in_the_package_except_user_path_reexports() -> None:
    by_name: dict[str, list[str]] = {}
    for module, path in MODULES.items():
        if path.name not in {"__init__.py", "__main__.py"}:
            by_name.setdefault(path.name, []).append(module)
    # a name may be shared only by one module that owns it and the re-exports of users' paths
    repeated = {name: owners for name, owners in by_name.items() if len(set(owners) - REEXPORTS) > 1}
    assert repeated == {}


def test_no_two_test_files_share_a_name() -> None:
    """Test folders are not packages: pytest imports each test file by its name alone, and a second file of
    the same name fails to collect ("import file mismatch") wherever both are collected, as in CI."""
    by_name: dict[str, list[str]] = {}
    for path in sorted(Path(__file__).resolve().parent.rglob("test_*.py")):
        if "node_modules" not in path.parts:
            by_name.setdefault(path.name, []).append(str(path.parent.name))
    assert {name: folders for name, folders in by_name.items() if len(folders) > 1} == {}


@pytest.mark.parametrize("path", USER_PATHS)
def test_dotted_paths_users_configure_still_import(path: str) -> None:
    module, _, name = path.rpartition(".")
    assert callable(getattr(importlib.import_module(module), name))


def test_every_public_name_of_the_package_resolves() -> None:
    import airflow_lineage_plus

    missing = [
        name for name in airflow_lineage_plus.__all__ if getattr(airflow_lineage_plus, name, None) is None
    ]
    assert missing == []
    assert airflow_lineage_plus.runtime.record is not None
    assert airflow_lineage_plus.datasets.s3("s3://lake/orders/").name == "orders"
