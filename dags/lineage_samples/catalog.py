"""The datasets the sample pipelines write and read, declared once so a writer and its readers meet.

A hop that writes a dataset and the next hop that reads it use the same reference, so the lineage graph has
one node for it. The S3 references are partition roots: the date partition a run touches is recorded as a
subset of the same dataset, not as a new one. The warehouse references name a connection, not a host: the
namespace comes from the ``warehouse`` Airflow connection when the task runs.

``analytics.marts.fct_daily_orders`` is not here: it is a dbt model (``dags/dbt/shop``), and dbt reports
its lineage under the same identity (``airflow_lineage_plus.dbt``).
"""

from __future__ import annotations

from airflow_lineage_plus import Field
from airflow_lineage_plus import datasets as ds
from lineage_samples.warehouse import WAREHOUSE_CONN_ID

RAW_CONTACTS_ROOT = "s3://raw-data-lake/crm/contacts/"
RAW_ORDERS_ROOT = "s3://raw-data-lake/orders/"

RAW_CONTACTS = ds.s3(RAW_CONTACTS_ROOT)
RAW_ORDERS = ds.s3(RAW_ORDERS_ROOT)

STG_CONTACTS_TABLE = "analytics.staging.stg_contacts"
STG_ORDERS_TABLE = "analytics.staging.stg_orders"
DIM_CONTACTS_TABLE = "analytics.marts.dim_contacts"

STG_CONTACTS = ds.sql_table(WAREHOUSE_CONN_ID, STG_CONTACTS_TABLE)
STG_ORDERS = ds.sql_table(WAREHOUSE_CONN_ID, STG_ORDERS_TABLE)
DIM_CONTACTS = ds.sql_table(WAREHOUSE_CONN_ID, DIM_CONTACTS_TABLE)

RAW_CONTACTS_SCHEMA = [
    Field("contact_id", "STRING", "CRM contact id"),
    Field("email", "STRING", "Primary e-mail, missing for some contacts"),
    Field("account_id", "STRING", "CRM account the contact belongs to"),
    Field("first_name", "STRING"),
    Field("last_name", "STRING"),
    Field("created_at", "TIMESTAMP", "ISO 8601, UTC"),
    Field("is_active", "BOOLEAN"),
    Field("annual_revenue_usd", "DECIMAL(14,2)", "Account's annual revenue, missing when unknown"),
]

RAW_ORDERS_SCHEMA = [
    Field("order_id", "STRING", "Order key"),
    Field("customer_id", "STRING", "CRM contact id of the buyer"),
    Field("ordered_at", "TIMESTAMP", "ISO 8601, UTC"),
    Field("status", "STRING", "completed, refunded or cancelled"),
    Field("total_amount_usd", "DECIMAL(12,2)", "Order total in US dollars"),
    Field("coupon_code", "STRING", "Coupon applied, if any"),
]

# (name, SQL type) pairs: the warehouse DDL and the declared schema come from the same list.
STG_CONTACTS_COLUMNS = [
    ("contact_id", "VARCHAR"),
    ("email", "VARCHAR"),
    ("account_id", "VARCHAR"),
    ("first_name", "VARCHAR"),
    ("last_name", "VARCHAR"),
    ("created_at", "TIMESTAMP"),
    ("is_active", "BOOLEAN"),
    ("annual_revenue_usd", "DECIMAL(14,2)"),
    ("_loaded_at", "TIMESTAMP"),
]
STG_ORDERS_COLUMNS = [
    ("order_id", "VARCHAR"),
    ("customer_id", "VARCHAR"),
    ("ordered_at", "TIMESTAMP"),
    ("order_date", "DATE"),
    ("status", "VARCHAR"),
    ("total_amount_usd", "DECIMAL(12,2)"),
    ("coupon_code", "VARCHAR"),
    ("_loaded_at", "TIMESTAMP"),
]
DIM_CONTACTS_COLUMNS = [
    ("contact_id", "VARCHAR"),
    ("email", "VARCHAR"),
    ("account_id", "VARCHAR"),
    ("full_name", "VARCHAR"),
    ("is_active", "BOOLEAN"),
    ("annual_revenue_usd", "DECIMAL(14,2)"),
    ("customer_segment", "VARCHAR"),
]


def schema_of(columns: list[tuple[str, str]]) -> list[Field]:
    return [Field(name, sql_type) for name, sql_type in columns]
