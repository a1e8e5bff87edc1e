"""One failed task instance try, as the alerts need it: ids, error, the datasets it was to write.

It is built where the failure is seen (a task process, the scheduler, the API server) from what is at
hand there, and travels to the alert courier as JSON, so it holds only strings and numbers.
"""

from __future__ import annotations

import re
from typing import Any

import attr

from airflow_lineage_plus import node_ids as ids

#: Longest error text carried (the rest is cut with a marker): an alert is a pointer, not a log.
MAX_ERROR_CHARS = 2000


def _outputs(value: Any) -> tuple[str, ...]:
    return tuple(sorted(set(value)))


@attr.frozen
class Failure:
    """A task instance try that ended FAILED.

    Attributes:
        dag_id, task_id, run_id, map_index, try_number: the try (Airflow's ids).
        job_namespace: the OpenLineage job namespace its events use (``[openlineage] namespace``).
        error: the error, cut at :data:`MAX_ERROR_CHARS`.
        outputs: ids (``dataset:NS:NAME``) of the datasets it declared as outputs, where known; the
            lineage graph adds those it wrote in earlier runs.
    """

    dag_id: str
    task_id: str
    run_id: str
    map_index: int
    try_number: int
    job_namespace: str
    error: str | None = None
    outputs: tuple[str, ...] = attr.field(default=(), converter=_outputs)

    @property
    def job_id(self) -> str:
        """The task's OpenLineage job: ``job:<namespace>:<dag_id>.<task_id>``."""
        return ids.job_id(self.job_namespace, f"{self.dag_id}.{self.task_id}")

    @property
    def key(self) -> str:
        """What alerts for this try are deduplicated on (with the owner)."""
        return f"failed:{self.dag_id}:{self.task_id}:{self.run_id}:{self.map_index}:{self.try_number}"

    def to_json(self) -> dict[str, Any]:
        return attr.asdict(self, recurse=False) | {"outputs": list(self.outputs)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Failure:
        names = {a.name for a in attr.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def error_text(error: Any) -> str | None:
    """An error (exception or message) as one bounded line of text."""
    if error is None:
        return None
    text = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) > MAX_ERROR_CHARS:
        text = text[:MAX_ERROR_CHARS] + " [cut]"
    return text or None
