"""The test suite's helpers, imported as a package: ``from tests.support import harness``.

Every test file and helper imports it so (``tests/test_support_package.py`` checks). Each helper is also
importable by its bare name (``import harness``: ``tests/support`` stays on pytest's ``pythonpath``), for
what is not a test file: the dotted paths Airflow's subprocesses are configured with
(``fake_host.hostname``), the scripts a test writes and runs, and benchmarks/. Both names give the same
module object (one isolated AIRFLOW_HOME, one check counter): this package's finder answers
``tests.support.<name>`` with the module already imported, or imported now, under the bare name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

_HERE = Path(__file__).resolve().parent
_PREFIX = __name__ + "."


class _SameModule(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``tests.support.<name>`` is the module ``<name>`` (one object under both names)."""

    def __init__(self) -> None:
        self._specs: dict[str, Any] = {}

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        bare = fullname[len(_PREFIX) :] if fullname.startswith(_PREFIX) else ""
        if not bare or "." in bare or not (_HERE / f"{bare}.py").is_file():
            return None
        return importlib.machinery.ModuleSpec(fullname, self, origin=str(_HERE / f"{bare}.py"))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(spec.name[len(_PREFIX) :])
        self._specs[spec.name] = module.__spec__  # the import system sets the alias's spec on it next
        return module

    def exec_module(self, module: ModuleType) -> None:
        alias = module.__spec__.name if module.__spec__ else ""
        module.__spec__ = self._specs.pop(alias, module.__spec__)  # keep the module's own spec


if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))  # the bare names resolve outside pytest too
if not any(isinstance(finder, _SameModule) for finder in sys.meta_path):
    sys.meta_path.insert(0, _SameModule())
