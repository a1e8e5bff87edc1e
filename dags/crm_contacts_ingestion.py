"""CRM contacts: extract them to the raw data lake, stage them in the warehouse, build ``dim_contacts``.

Hops (each declares its lineage with airflow-lineage-plus, so the graph runs CRM -> S3 -> warehouse):

* ``extract_contacts_to_s3``: the CRM's contacts as JSON lines in
  ``s3://raw-data-lake/crm/contacts/date=YYYY-MM-DD/`` through the Amazon provider's ``S3Hook``;
  schema, row count and null counts of what was written.
* ``load_stg_contacts``: that partition into ``analytics.staging.stg_contacts`` (adds ``_loaded_at``).
* ``build_dim_contacts``: ``analytics.marts.dim_contacts`` with a derived ``customer_segment``
  (a TRANSFORMATION of ``annual_revenue_usd``).

Where the data lives is set by the Airflow connections ``aws_default`` and ``warehouse`` alone.

Two days that change on purpose, for ``lineage-plus what-changed`` (docs/what-changed.md), both opt-in so an
ordinary run is unchanged: a run triggered with ``{"crm_contacts_returned": N}`` gets only the first N
contacts from the CRM (an export that came back short), and with ``LINEAGE_SAMPLES_STAGING_SQL=v2`` in the
environment (a deploy) ``load_stg_contacts`` runs a new version of its SQL that keeps active contacts only.
"""

from __future__ import annotations

import os
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any

import pendulum
from airflow.sdk import dag, get_current_context, task
from lineage_samples import catalog, lake, sources, warehouse

from airflow_lineage_plus import ColumnFrom, Output, lineage, runtime

OWNERS = ["team:crm-data"]

DIM_CONTACTS_SQL = f"""
INSERT INTO {catalog.DIM_CONTACTS_TABLE}
    (contact_id, email, account_id, full_name, is_active, annual_revenue_usd, customer_segment)
SELECT contact_id, email, account_id, first_name || ' ' || last_name, is_active, annual_revenue_usd,
       CASE
           WHEN annual_revenue_usd IS NULL THEN 'unknown'
           WHEN annual_revenue_usd >= 1000000 THEN 'enterprise'
           WHEN annual_revenue_usd >= 100000 THEN 'mid_market'
           ELSE 'smb'
       END
FROM {catalog.STG_CONTACTS_TABLE}
""".strip()


STAGING_SQL_VERSION = os.environ.get("LINEAGE_SAMPLES_STAGING_SQL", "v1")
STG_CONTACTS_SQL = (
    f"""
INSERT INTO {catalog.STG_CONTACTS_TABLE}
SELECT *, CURRENT_TIMESTAMP AS _loaded_at FROM read_json('{catalog.RAW_CONTACTS_ROOT}')
""".strip()
    + ("\nWHERE is_active" if STAGING_SQL_VERSION == "v2" else "")
)


def _returned(contacts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The contacts the CRM returned: all, or the first ``crm_contacts_returned`` of the run's conf."""
    limit = (get_current_context()["dag_run"].conf or {}).get("crm_contacts_returned")
    return contacts if limit is None else contacts[: int(limit)]


def _day() -> date:
    return date.fromisoformat(str(get_current_context()["ds"]))


@dag(
    dag_id="crm_contacts_ingestion",
    schedule="@daily",
    start_date=pendulum.datetime(2024, 6, 1, tz="UTC"),
    catchup=False,
    tags=["lineage-plus-sample", "crm"],
    doc_md=__doc__,
)
def crm_contacts_ingestion() -> None:
    @lineage(
        outputs=[
            Output(
                catalog.RAW_CONTACTS,
                schema=catalog.RAW_CONTACTS_SCHEMA,
                description="CRM contacts, one JSON object a line, partitioned by snapshot date",
                owners=OWNERS,
                tags=["pii", "raw"],
            )
        ],
        owners=OWNERS,
        description="Extracts every CRM contact and lands the snapshot in the raw data lake",
    )
    @task
    def extract_contacts_to_s3() -> str:
        day = _day()
        contacts = _returned(sources.crm_contacts(day))
        written = lake.write_partition(catalog.RAW_CONTACTS_ROOT, day, contacts, "contacts.jsonl")
        partition = catalog.RAW_CONTACTS.with_partition(date=day.isoformat())
        runtime.record(partition, contacts, bytes=written.size, file_count=1)
        return written.url

    @lineage(
        inputs=[catalog.RAW_CONTACTS],
        outputs=[
            Output(
                catalog.STG_CONTACTS,
                schema=catalog.schema_of(catalog.STG_CONTACTS_COLUMNS),
                column_lineage={
                    name: [ColumnFrom(catalog.RAW_CONTACTS, name)]
                    for name, _type in catalog.STG_CONTACTS_COLUMNS
                    if not name.startswith("_")
                },
                description="Latest CRM contact snapshot",
                owners=OWNERS,
            )
        ],
        owners=OWNERS,
        description="Loads the day's contact snapshot from the data lake into staging",
        sql=STG_CONTACTS_SQL,
    )
    @task
    def load_stg_contacts() -> int:
        day = _day()
        contacts = lake.read_partition(catalog.RAW_CONTACTS_ROOT, day)
        loaded_at = datetime.now(timezone.utc).replace(tzinfo=None)
        rows = [_contact_row(c, loaded_at) for c in contacts if STAGING_SQL_VERSION == "v1" or c["is_active"]]
        warehouse.ensure_table(catalog.STG_CONTACTS_TABLE, catalog.STG_CONTACTS_COLUMNS)
        columns = [name for name, _type in catalog.STG_CONTACTS_COLUMNS]
        warehouse.replace_rows(catalog.STG_CONTACTS_TABLE, "TRUE", columns, rows)
        written = warehouse.select(f"SELECT * FROM {catalog.STG_CONTACTS_TABLE}")
        runtime.record(catalog.STG_CONTACTS, written)
        return len(written)

    @lineage(
        inputs=[catalog.STG_CONTACTS],
        outputs=[
            Output(
                catalog.DIM_CONTACTS,
                schema=catalog.schema_of(catalog.DIM_CONTACTS_COLUMNS),
                column_lineage={
                    "contact_id": [ColumnFrom(catalog.STG_CONTACTS, "contact_id")],
                    "email": [ColumnFrom(catalog.STG_CONTACTS, "email")],
                    "account_id": [ColumnFrom(catalog.STG_CONTACTS, "account_id")],
                    "full_name": [
                        ColumnFrom(catalog.STG_CONTACTS, "first_name", subtype="TRANSFORMATION"),
                        ColumnFrom(catalog.STG_CONTACTS, "last_name", subtype="TRANSFORMATION"),
                    ],
                    "is_active": [ColumnFrom(catalog.STG_CONTACTS, "is_active")],
                    "annual_revenue_usd": [ColumnFrom(catalog.STG_CONTACTS, "annual_revenue_usd")],
                    "customer_segment": [
                        ColumnFrom(
                            catalog.STG_CONTACTS,
                            "annual_revenue_usd",
                            subtype="TRANSFORMATION",
                            description="revenue bands: enterprise >= 1M, mid_market >= 100k, else smb",
                        )
                    ],
                },
                description="One row per contact, with its customer segment",
                owners=["team:analytics"],
                tags=["mart"],
            )
        ],
        owners=["team:analytics"],
        description="Builds the contact dimension with a revenue-based customer segment",
        sql=DIM_CONTACTS_SQL,
    )
    @task
    def build_dim_contacts() -> int:
        warehouse.ensure_table(catalog.STG_CONTACTS_TABLE, catalog.STG_CONTACTS_COLUMNS)
        warehouse.ensure_table(catalog.DIM_CONTACTS_TABLE, catalog.DIM_CONTACTS_COLUMNS)
        warehouse.run([f"DELETE FROM {catalog.DIM_CONTACTS_TABLE}", DIM_CONTACTS_SQL])
        written = warehouse.select(f"SELECT * FROM {catalog.DIM_CONTACTS_TABLE}")
        runtime.record(catalog.DIM_CONTACTS, written)
        return len(written)

    extract_contacts_to_s3() >> load_stg_contacts() >> build_dim_contacts()


def _contact_row(contact: dict[str, Any], loaded_at: datetime) -> tuple[Any, ...]:
    revenue = contact["annual_revenue_usd"]
    return (
        contact["contact_id"],
        contact["email"],
        contact["account_id"],
        contact["first_name"],
        contact["last_name"],
        datetime.fromisoformat(contact["created_at"]).astimezone(timezone.utc).replace(tzinfo=None),
        bool(contact["is_active"]),
        Decimal(revenue) if revenue is not None else None,
        loaded_at,
    )


crm_contacts_ingestion()
