"""Keeps the group suffix pytest-xdist writes into a test's id where pytest 9.2 and later read the id.

With ``--dist loadgroup``, pytest-xdist 3.8 tells its scheduler a test's group by appending ``@<group>``
to ``item._nodeid`` on each worker. pytest 9.2 keeps a node's id as a structured ``NodeId`` (``item._id``)
and no longer reads ``_nodeid``, so the suffix is lost and the groups silently spread over the workers:
each worker would repeat every group's Airflow runs (pytest-dev/pytest-xdist#1386; its fix, #1388, is not
released). This hook runs after xdist's and writes the suffixed id where such a pytest reads it. With a
pytest that still reads ``_nodeid``, or an xdist that writes the structured id itself, it changes nothing.

``run_report.py`` still fails a run in which a group ran on two workers, whatever the versions.
"""

from __future__ import annotations

import pytest

try:  # pytest >= 9.2: structured node ids
    from _pytest.nodeid import NodeId
except ImportError:  # older pytest: the id is the string xdist writes
    NodeId = None  # type: ignore[assignment,misc]


def carry_group_suffix(item: pytest.Item) -> bool:
    """Make ``item.nodeid`` the id xdist wrote into ``_nodeid`` when the two differ; whether it did."""
    written = item.__dict__.get("_nodeid")
    if NodeId is None or not isinstance(written, str) or not hasattr(item, "_id"):
        return False
    if item.nodeid == written:
        return False
    item._id = NodeId.parse(written)
    return True


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """After xdist's own hook (it writes the suffix on the workers): carry each test's suffix."""
    for item in items:
        carry_group_suffix(item)
