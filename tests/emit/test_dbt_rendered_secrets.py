"""No secret in a rendered template: the dbt ``BashOperator`` env names a ``0600`` file, not the
provider's transport config with its inline API key, and ``dbt-ol`` redacts the task's masker's secrets.

One real DAG run (``dags/dbt_rendered_env.py``); the rendered fields are read back from Airflow's
metadata database, where the UI's "Rendered Template" tab reads them.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tests.support.harness import AirflowRunner, event_log_transport
from tests.support.servers import free_port

pytestmark = [pytest.mark.airflow, pytest.mark.minutes(1.5)]

HERE = Path(__file__).resolve().parent
API_KEY = "olk-inline-api-key-4d1f9a7c"
DB_PASSWORD = "warehouse-pw-8c2e51"


@pytest.fixture(scope="module")
def rendered(airflow_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str]:
    work = tmp_path_factory.mktemp("dbt-rendered")
    # the runner's own log (``events-<dag id>.jsonl``): it waits there for the DAG-run end event (60 s for
    # nothing in another file) and validates what it finds
    log = work / "events-dbt_rendered_env.jsonl"
    transport = json.loads(event_log_transport(log))
    transport["forward"] = {  # a backend with an inline API key (down: the forward just fails)
        "type": "http",
        "url": f"http://127.0.0.1:{free_port()}",
        "auth": {"type": "api_key", "apiKey": API_KEY},
    }
    transport["forward_timeout"] = 0.5
    env = {
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport),
        "AIRFLOW_CONN_WAREHOUSE": json.dumps(
            {"conn_type": "postgres", "host": "db", "password": DB_PASSWORD}
        ),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    }
    result = AirflowRunner(work).run(
        HERE / "dags" / "dbt_rendered_env.py", dag_id="dbt_rendered_env", env=env, timeout=420
    )
    assert result.returncode == 0, result.output[-4000:]
    from airflow.models.renderedtifields import RenderedTaskInstanceFields
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        row = session.scalars(
            select(RenderedTaskInstanceFields).where(RenderedTaskInstanceFields.dag_id == "dbt_rendered_env")
        ).one()
        fields = dict(row.rendered_fields)
    return fields, result.output


def test_the_rendered_env_holds_no_credential_of_the_transport(rendered: tuple[dict, str]) -> None:
    fields, _ = rendered
    text = json.dumps(fields)
    assert API_KEY not in text and DB_PASSWORD not in text
    pointer = json.loads(fields["env"]["OPENLINEAGE__TRANSPORT"])
    assert pointer["type"] == "airflow_lineage_plus.dbt.DbtLineageTransport"
    assert sorted(pointer) == ["config_file", "type"]


def test_the_transport_file_is_readable_by_its_owner_only_and_holds_the_transport(
    rendered: tuple[dict, str],
) -> None:
    fields, _ = rendered
    path = Path(json.loads(fields["env"]["OPENLINEAGE__TRANSPORT"])["config_file"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o750
    config = json.loads(path.read_text())
    assert config["transport"]["forward"]["auth"]["apiKey"] == API_KEY


def test_dbt_ol_redacts_the_secrets_of_the_task_masker(rendered: tuple[dict, str]) -> None:
    _, output = rendered
    # the printed answer (the logged command holds the words too, without the space)
    answers = [
        line.rsplit("DBT-OL REDACTS IT: ", 1)[1].split()[0]
        for line in output.splitlines()
        if "DBT-OL REDACTS IT: " in line
    ]
    assert answers == ["True"]
