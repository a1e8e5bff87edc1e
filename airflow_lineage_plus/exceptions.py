"""Every error airflow-lineage-plus raises, in one hierarchy.

Catch :class:`LineagePlusError` to catch any of them; each also derives from the built-in exception a
caller would expect (a bad declaration is a ``ValueError``, an unknown node a ``LookupError``), so code
written against those keeps working::

    LineagePlusError
    ├── LineageDeclarationError (ValueError)   an authoring mistake, raised at DAG parse time
    │   └── DatasetNameError                   a dataset reference that cannot name a dataset
    ├── ConfigurationError (ValueError)        a [lineage_plus] setting or a database the package cannot use
    ├── EventLostError (OSError)               an event could not be logged or delivered (always contained)
    │   └── EventRefusedError                  the OpenLineage endpoint refused it (400, 413): not spooled
    ├── UncheckedEventError (ValueError)       an event could not be checked for secrets: nothing is sent
    ├── ReplayError (RuntimeError)             ``lineage-plus replay`` could not start
    ├── NodeNotFound (LookupError)             the graph knows no such dataset, job, column or run
    ├── SourceUnavailable (RuntimeError)       the graph's source cannot be read (file missing, Marquez down)
    │   ├── SourceLoading                      it is still being opened (a large event log): ask again
    │   ├── StoreUnavailable                   the lineage store cannot be reached or opened
    │   │   └── StoreDamaged                   it is damaged or of another schema version (names the fix)
    │   └── DeadlineExceeded                   a question did not finish, or start, within its deadline
    ├── BadEventError (ValueError)             bytes of the event log that are not a usable event
    ├── BodyTooLargeError (ValueError)         a request body to the OpenLineage endpoint over its cap (413)
    ├── StaticLineageError (RuntimeError)      a DAG folder version could not be read for static lineage
    ├── UsageError (ValueError)                bad command-line arguments
    ├── NotAValidationResult (TypeError)       ``runtime.record_expectations`` got no Great Expectations
    │                                          result (contained: logged once, the task goes on)
    ├── ContractBreachError (RuntimeError)     a task wrote data that breaks its output's DataContract,
    │                                          raised only with ``[lineage_plus] contract_mode = fail``
    └── DbtRunFailed (RuntimeError)            dbt run by ``run_dbt`` failed: the task fails (on purpose)

Declaration-time errors name the field and the fix; run-time errors (but a contract breach the
configuration asks to fail on) are contained by :mod:`airflow_lineage_plus.containment` and never reach
a task (``DbtRunFailed`` is the task's own failure: its dbt command failed). This module imports nothing,
so the Airflow-free graph can use it.
"""

from __future__ import annotations


class LineagePlusError(Exception):
    """Base class of every error raised by airflow-lineage-plus."""


class LineageDeclarationError(LineagePlusError, ValueError):
    """An authoring mistake in a lineage declaration, raised at DAG parse time; the message names the fix."""


class DatasetNameError(LineageDeclarationError):
    """A dataset reference that cannot name a dataset; the message names the field and the fix."""


class ConfigurationError(LineagePlusError, ValueError):
    """A ``[lineage_plus]`` setting, or a deployment (a metadata database), the package cannot work with."""


class EventLostError(LineagePlusError, OSError):
    """An event could not be appended to the event log or delivered; contained and counted, never raised
    into a task."""


class EventRefusedError(EventLostError):
    """The OpenLineage endpoint of the API server refused an event for good (400 bad shape, 413 too
    large): sending it again cannot succeed, so it is not spooled."""


class UncheckedEventError(LineagePlusError, ValueError):
    """An event could not be checked for secrets; it is neither logged nor forwarded (fail closed)."""


class ReplayError(LineagePlusError, RuntimeError):
    """Replay could not start: no event log, no Marquez URL, a bad time."""


class NodeNotFound(LineagePlusError, LookupError):  # noqa: N818 - the name callers use
    """The dataset, job, column or run is not known to the lineage source."""


class SourceUnavailable(LineagePlusError, RuntimeError):  # noqa: N818 - the name callers use
    """The lineage source cannot be read (missing file, Marquez down, erroring or too slow)."""


class SourceLoading(SourceUnavailable):
    """The lineage source is still being opened (a large event log); the message says for how long."""


class StoreUnavailable(SourceUnavailable):
    """The lineage store (``[lineage_plus] store_url``) cannot be reached or opened."""


class StoreDamaged(StoreUnavailable):
    """The lineage store cannot be read as it is (not a database, truncated, a schema version this package
    does not read); the message names the fix. Nothing in the store is deleted or rewritten."""


class DeadlineExceeded(SourceUnavailable):
    """A lineage question did not finish, or could not start, within its deadline."""


class BadEventError(LineagePlusError, ValueError):
    """The bytes are not an event the graph can use; ``kind`` says why (``malformed`` or ``invalid``),
    ``detail`` in words."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class BodyTooLargeError(LineagePlusError, ValueError):
    """A request body, or what it inflates to, is larger than the OpenLineage endpoint accepts."""


class StaticLineageError(LineagePlusError, RuntimeError):
    """A version of a DAG folder could not be read for static lineage (unknown git ref, a parse that failed
    or took too long); the message says which version and why."""


class UsageError(LineagePlusError, ValueError):
    """Bad command-line arguments (the CLI exits with status 2)."""


class NotAValidationResult(LineagePlusError, TypeError):  # noqa: N818 - the name callers use
    """What ``runtime.record_expectations`` was given is none of the Great Expectations result shapes it
    reads; the message names the ones it does."""


class DbtRunFailed(LineagePlusError, RuntimeError):  # noqa: N818 - names what happened, as dbt says it
    """``dbt`` (run by :func:`airflow_lineage_plus.dbt.run_dbt`) exited with an error: the task fails."""


class ContractBreachError(LineagePlusError, RuntimeError):
    """A task's output broke its ``DataContract`` and ``[lineage_plus] contract_mode`` is ``fail``: the one
    error this package raises into a task on purpose (with ``DbtRunFailed``, which is dbt's own failure). The
    message lists each breach and the fix."""
