"""The dotted path users configure: ``{"type": "airflow_lineage_plus.transport.EventLogTransport"}``."""

from airflow_lineage_plus.deliver.event_log_transport import EventLogConfig, EventLogTransport

__all__ = ["EventLogConfig", "EventLogTransport"]
