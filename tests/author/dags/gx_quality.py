"""Great Expectations checks inside tasks, recorded with ``runtime.record_expectations`` (docs/quality.md).

The data is the sample pipelines' (``dags/lineage_samples/sources.py``, on ``PYTHONPATH``): the CRM's
contacts (some e-mails missing, so one expectation fails) and the order service's orders.

* ``crm_quality_gate``: a GX ``Checkpoint`` over three CSV files in the lake (three data assets), recorded
  on the two declared inputs through an asset-name mapping that leaves the third out; the task then fails
  its own gate.
* ``validate_orders``: a ``ValidationDefinition`` run on a DataFrame, recorded on the declared output.
"""

from __future__ import annotations

import csv
import tempfile
from datetime import date
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import dag, task
from lineage_samples import catalog, sources

from airflow_lineage_plus import Input, Output, lineage, runtime

DAY = date(2024, 6, 1)
ORDER_COUNT = 40
VALID_STATUSES = ["completed", "refunded", "cancelled"]


class QualityGateFailedError(RuntimeError):
    """The gate's expectations did not all pass."""


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


@dag(dag_id="gx_quality", schedule=None, start_date=pendulum.datetime(2024, 6, 1, tz="UTC"), catchup=False)
def gx_quality() -> None:
    @lineage(inputs=[Input(catalog.RAW_CONTACTS), Input(catalog.RAW_ORDERS)])
    @task
    def crm_quality_gate() -> None:
        import great_expectations as gx
        import great_expectations.expectations as gxe

        with tempfile.TemporaryDirectory() as lake:
            _write_csv(Path(lake, "contacts.csv"), sources.crm_contacts(DAY))
            _write_csv(Path(lake, "orders.csv"), sources.orders(DAY, ORDER_COUNT))
            accounts = sorted({c["account_id"] for c in sources.crm_contacts(DAY)})
            _write_csv(Path(lake, "accounts.csv"), [{"account_id": a} for a in accounts])
            context = gx.get_context(mode="ephemeral")
            files = context.data_sources.add_pandas_filesystem("lake", base_directory=lake)
            contacts = files.add_csv_asset("contacts").add_batch_definition_path("all", "contacts.csv")
            orders = files.add_csv_asset("orders").add_batch_definition_path("all", "orders.csv")
            # checked, but not a dataset the mapping below names: left out, logged once
            accounts = files.add_csv_asset("accounts").add_batch_definition_path("all", "accounts.csv")
            contact_checks = gx.ExpectationSuite(
                "crm_contacts",
                expectations=[
                    gxe.ExpectColumnValuesToNotBeNull(column="email"),
                    gxe.ExpectColumnValuesToBeUnique(column="contact_id"),
                    gxe.ExpectColumnValuesToNotBeNull(
                        column="annual_revenue_usd", mostly=0.8, severity="warning"
                    ),
                    gxe.ExpectTableRowCountToBeBetween(min_value=1, max_value=1000),
                ],
            )
            order_checks = gx.ExpectationSuite(
                "orders",
                expectations=[
                    gxe.ExpectColumnValuesToBeInSet(column="status", value_set=VALID_STATUSES),
                    gxe.ExpectColumnMeanToBeBetween(column="total_amount_usd", min_value=5, max_value=900),
                ],
            )
            checkpoint = context.checkpoints.add(
                gx.Checkpoint(
                    name="crm_gate",
                    validation_definitions=[
                        context.validation_definitions.add(
                            gx.ValidationDefinition(
                                name="contacts", data=contacts, suite=context.suites.add(contact_checks)
                            )
                        ),
                        context.validation_definitions.add(
                            gx.ValidationDefinition(
                                name="orders", data=orders, suite=context.suites.add(order_checks)
                            )
                        ),
                        context.validation_definitions.add(
                            gx.ValidationDefinition(
                                name="accounts",
                                data=accounts,
                                suite=context.suites.add(
                                    gx.ExpectationSuite(
                                        "accounts",
                                        expectations=[gxe.ExpectColumnValuesToBeUnique(column="account_id")],
                                    )
                                ),
                            )
                        ),
                    ],
                )
            )
            result = checkpoint.run()
        passed = runtime.record_expectations(
            result, {"contacts": catalog.RAW_CONTACTS, "orders": catalog.RAW_ORDERS}
        )
        if not passed:
            raise QualityGateFailedError("crm_gate: expectations failed (see dataQualityAssertions)")

    @lineage(outputs=[Output(catalog.RAW_ORDERS)])
    @task
    def validate_orders() -> None:
        import great_expectations as gx
        import great_expectations.expectations as gxe
        import pandas as pd

        frame = pd.DataFrame(sources.orders(DAY, ORDER_COUNT))
        context = gx.get_context(mode="ephemeral")
        batch = (
            context.data_sources.add_pandas("service")
            .add_dataframe_asset("orders")
            .add_batch_definition_whole_dataframe("all")
        )
        suite = context.suites.add(
            gx.ExpectationSuite(
                "orders_written",
                expectations=[
                    gxe.ExpectColumnValuesToBeUnique(column="order_id"),
                    gxe.ExpectTableRowCountToEqual(value=ORDER_COUNT),
                ],
            )
        )
        validation = context.validation_definitions.add(
            gx.ValidationDefinition(name="orders_written", data=batch, suite=suite)
        )
        runtime.record_expectations(validation.run(batch_parameters={"dataframe": frame}), catalog.RAW_ORDERS)

    crm_quality_gate()
    validate_orders()


gx_quality()
