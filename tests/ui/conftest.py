"""Fixtures the Lineage view's permission tests share: one real FAB API server per session.

Starting it costs a minute (roles and users, then the API server), so ``test_permissions_fab.py`` and
``test_permissions_browser.py`` share it; it starts only when a test asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fab_airflow import FabAirflow, fab_airflow
from servers import free_port
from ui_pipeline import ALPHA_DAG, PermissionPipeline, record_permission_pipeline


@pytest.fixture(scope="session")
def permission_pipeline(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> PermissionPipeline:
    pipeline = record_permission_pipeline(tmp_path_factory.getbasetemp() / "permission-pipeline")
    assert pipeline.alpha.returncode == 0, pipeline.alpha.output[-3000:]
    assert pipeline.beta.returncode != 0, "perm_beta's scoring task must fail"
    return pipeline


@pytest.fixture(scope="session")
def fab_server(
    permission_pipeline: PermissionPipeline, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FabAirflow]:
    with fab_airflow(
        tmp_path_factory.mktemp("fab"), permission_pipeline.log, ALPHA_DAG, free_port()
    ) as server:
        yield server
