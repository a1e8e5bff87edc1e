"""Run dbt Core from an Airflow task so that every dbt run is a child of the task's own run.

``dbt-ol`` (openlineage-dbt) wraps ``dbt`` and reports each model and test run as an OpenLineage run. What
it needs from the task that runs it, it reads from environment variables; :func:`dbt_lineage_env` builds
them from the running task instance:

* ``OPENLINEAGE_PARENT_ID`` / ``OPENLINEAGE_ROOT_PARENT_ID`` (``namespace/job/runId``): the task run and
  the DAG run, from the OpenLineage provider's own macros (``lineage_parent_id``,
  ``lineage_root_parent_id``), so ``dbt-ol``'s run of the command is a child of the task's run and its
  node runs are grandchildren; ``OPENLINEAGE_CONTEXT`` carries the same as JSON (it is read first, and
  keeps a namespace with ``/`` in it, which the ``/``-separated form cannot);
* ``OPENLINEAGE_NAMESPACE``: the provider's namespace, so dbt's jobs sit next to the task's;
* ``OPENLINEAGE__TRANSPORT``: :class:`~airflow_lineage_plus.dbt.dbt_events.DbtLineageTransport` around the
  transport the provider uses (its config, read here because ``dbt-ol`` does not read Airflow's), with
  the ``[lineage_plus]`` limits, so dbt's events land where the task's land, named as the Airflow side
  names the same tables, redacted (with the secrets of the task's masker) and within the same limits.
  The variable names only a ``0600`` file holding all that (:func:`transport_by_file`): the transport's
  credentials never reach a rendered template.

Three ways to use it: :func:`run_dbt` inside a ``@task`` (runs ``dbt-ol``, streams its output to the
task log, fails the task when dbt fails); :func:`dbt_lineage_env_templates` as a ``BashOperator``'s
``env`` (``bash_command="dbt-ol build ..."``, rendered per task instance by the ``lineage_plus`` plugin
macro); or :func:`dbt_lineage_env` for any other way of starting a process. Nothing here can stop dbt
from running: when the lineage part fails, dbt runs without it and the problem is logged once.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attr

from airflow_lineage_plus import _compat, conf
from airflow_lineage_plus import facet_keys as fk
from airflow_lineage_plus.containment import contained
from airflow_lineage_plus.exceptions import DbtRunFailed
from airflow_lineage_plus.private_dirs import ensure_dir

#: The dotted path ``dbt-ol`` imports the transport by (a re-export of :mod:`.dbt_events`).
TRANSPORT_CLASS = "airflow_lineage_plus.dbt.DbtLineageTransport"
#: What ``dbt-ol`` does when a variable is missing; the templates fall back to it.
UNSET = {
    "OPENLINEAGE_PARENT_ID": "",
    "OPENLINEAGE_ROOT_PARENT_ID": "",
    "OPENLINEAGE_CONTEXT": "",
    "OPENLINEAGE_NAMESPACE": "dbt",
    "OPENLINEAGE__TRANSPORT": json.dumps({"type": TRANSPORT_CLASS}),
}
#: The environment of ``dbt-ol`` run by a task whose events the provider's ``emission_policy`` turns off:
#: its runs would be children of a run nobody reports, so it reports nothing (the client's own switch, and
#: a no-op transport for the ``BashOperator`` templates, which pass ``OPENLINEAGE__TRANSPORT`` only).
POLICY_SAYS_NONE = {"OPENLINEAGE_DISABLED": "true", "OPENLINEAGE__TRANSPORT": json.dumps({"type": "noop"})}
#: Airflow's owner of a task nobody named: not an owner to carry.
DEFAULT_OWNER = "airflow"
#: Inherited variables that would change the transport dbt-ol's client builds around ours.
_CLIENT_DISCOVERY = ("OPENLINEAGE_URL", "OPENLINEAGE_CONFIG", "OPENLINEAGE_API_KEY", "OPENLINEAGE_ENDPOINT")


@attr.frozen
class TaskRunIds:
    """OpenLineage ids of a task instance's run and of its root (the DAG run), as the provider has them."""

    namespace: str
    job_name: str
    run_id: str
    root_namespace: str
    root_job_name: str
    root_run_id: str

    @classmethod
    def of(cls, task_instance: Any) -> TaskRunIds:
        """From the provider's macros (the functions behind ``macros.OpenLineageProviderPlugin``)."""
        from airflow.providers.openlineage.plugins import macros

        return cls(
            namespace=macros.lineage_job_namespace(),
            job_name=macros.lineage_job_name(task_instance),
            run_id=macros.lineage_run_id(task_instance),
            root_namespace=macros.lineage_root_job_namespace(task_instance),
            root_job_name=macros.lineage_root_job_name(task_instance),
            root_run_id=macros.lineage_root_run_id(task_instance),
        )

    def parent_env(self) -> dict[str, str]:
        """The parent variables ``dbt-ol`` reads, for this run as the parent."""
        context = {
            "parent": {
                "run": {"runId": self.run_id},
                "job": {"namespace": self.namespace, "name": self.job_name},
                "root": {
                    "run": {"runId": self.root_run_id},
                    "job": {"namespace": self.root_namespace, "name": self.root_job_name},
                },
            }
        }
        return {
            "OPENLINEAGE_PARENT_ID": f"{self.namespace}/{self.job_name}/{self.run_id}",
            "OPENLINEAGE_ROOT_PARENT_ID": f"{self.root_namespace}/{self.root_job_name}/{self.root_run_id}",
            "OPENLINEAGE_CONTEXT": json.dumps(context, sort_keys=True),
            "OPENLINEAGE_NAMESPACE": self.namespace,
        }


def task_job_facets(task: Any) -> dict[str, Any]:
    """The job facets of ``task`` (an operator) that the dbt models it runs carry too, as JSON: its owners
    (``ownership``, from the task's ``owner``) and this package's declared job facets (``lineagePlus_*``:
    service level, owning team). So freshness targets and owners reach the jobs that write the tables."""
    from openlineage.client.facet_v2 import ownership_job

    from airflow_lineage_plus.deliver.serialize import plain

    facets: dict[str, Any] = {}
    on_start = getattr(task, _compat.openlineage_method_names()[0], None)
    declared = on_start() if callable(on_start) else None
    for key, facet in (getattr(declared, "job_facets", None) or {}).items():
        if key.startswith(fk.PREFIX):
            facets[key] = plain(facet)
    owners = [o.strip() for o in str(getattr(task, "owner", "") or "").split(",")]
    owners = [o for o in owners if o and o != DEFAULT_OWNER]
    if owners:
        owned = ownership_job.OwnershipJobFacet(owners=[ownership_job.Owner(name=o) for o in owners])
        facets[fk.OWNERSHIP] = plain(owned)
    return facets


def dbt_transport_config(target_path: str | None = None, task: Any = None) -> dict[str, Any]:
    """``OPENLINEAGE__TRANSPORT`` for ``dbt-ol``: the dbt transport around the provider's transport, with
    the ``[lineage_plus]`` limits and the job facets of ``task`` (the operator running dbt)."""
    from airflow_lineage_plus.deliver.event_budget import Limits

    config: dict[str, Any] = {"type": TRANSPORT_CLASS, "limits": Limits.configured().as_dict()}
    provider = _compat.openlineage_client_config()
    if provider and provider.get("transport"):
        config["transport"] = provider["transport"]
    if target_path:
        config["target_path"] = str(target_path)
    if task is not None:
        with contained("the owners and service level of the task on dbt's model jobs"):
            config["job_facets"] = task_job_facets(task)
    return config


def transport_by_file(config: dict[str, Any], task_instance: Any) -> dict[str, Any]:
    """The ``OPENLINEAGE__TRANSPORT`` that points ``dbt-ol`` at ``config`` written to a file, with the
    secrets of this process's masker: no credential of the provider's transport ends up in an environment
    variable, a rendered template (Airflow stores and shows those) or a log.

    The file, ``$AIRFLOW_HOME/lineage_plus/dbt/transport-<task>.json``, is ``0600`` in a ``0750``
    directory, one per task (rewritten whole, atomically, at each try: its content is the task's).
    """
    key = "/".join(
        str(getattr(task_instance, name, "")) for name in ("dag_id", "task_id", "map_index")
    ).encode()
    folder = ensure_dir(conf.package_home() / "dbt")
    path = folder / f"transport-{hashlib.sha256(key).hexdigest()[:24]}.json"
    handle, partial = tempfile.mkstemp(dir=folder, prefix=".transport-", suffix=".json")  # 0600
    with os.fdopen(handle, "w") as out:
        json.dump({**config, "secrets": _compat.registered_secret_patterns()}, out)
    os.replace(partial, path)
    return {"type": TRANSPORT_CLASS, "config_file": str(path)}


def dbt_lineage_env(
    task_instance: Any = None,
    *,
    target_path: str | os.PathLike[str] | None = None,
    job_name: str | None = None,
) -> dict[str, str]:
    """The environment variables that make ``dbt-ol`` report to this task instance's run.

    ``task_instance`` defaults to the running one; ``target_path`` is dbt's target folder when it is not
    ``target`` in the project (``--target-path``); ``job_name`` names dbt-ol's run of the whole command
    (default ``dbt-run-<project>``). Returns what it could build: on an error (logged once) the
    variables it could not compute are left out, and dbt runs without that part of its lineage. For a task
    whose events the provider's ``emission_policy`` turns off: :data:`POLICY_SAYS_NONE` (dbt reports nothing).
    """
    env: dict[str, str] = {}
    if conf.is_disabled():
        return env
    with contained("the parent link of dbt's runs to the task (OPENLINEAGE_PARENT_ID)"):
        if task_instance is None:
            from airflow.sdk import get_current_context

            task_instance = get_current_context()["ti"]
        if not _task_events_allowed(task_instance):
            return dict(POLICY_SAYS_NONE)
        env.update(TaskRunIds.of(task_instance).parent_env())
    with contained("the transport of dbt's events (OPENLINEAGE__TRANSPORT)"):
        config = dbt_transport_config(
            os.fspath(target_path or "") or None, getattr(task_instance, "task", None)
        )
        env["OPENLINEAGE__TRANSPORT"] = json.dumps(transport_by_file(config, task_instance))
    if job_name:
        env["OPENLINEAGE_DBT_JOB_NAME"] = job_name
    return env


def _task_events_allowed(task_instance: Any) -> bool:
    """Whether the provider's ``emission_policy`` lets this task instance's events out (a task without its
    operator at hand, as on the API server, is allowed: the provider decides there)."""
    task = getattr(task_instance, "task", None)
    if task is None:
        return True
    return _compat.task_events_allowed(task, str(task_instance.dag_id), str(task_instance.task_id))


def dbt_lineage_env_templates(
    target_path: str | os.PathLike[str] | None = None, job_name: str | None = None
) -> dict[str, str]:
    """A ``BashOperator`` ``env`` (with ``append_env=True``) that gives ``dbt-ol`` :func:`dbt_lineage_env`.

    Each value is a template of the ``lineage_plus`` plugin macro, rendered for the task instance when
    it runs; a variable the macro could not compute renders as what ``dbt-ol`` assumes without it.
    """
    args = [] if target_path is None else [f"target_path={os.fspath(target_path)!r}"]
    if job_name is not None:
        args.append(f"job_name={job_name!r}")
    call = ", ".join(["task_instance", *args])
    names = [*UNSET, *(["OPENLINEAGE_DBT_JOB_NAME"] if job_name else [])]
    return {
        name: "{{ macros.lineage_plus.dbt_lineage_env("
        + call
        + f").get({name!r}, {UNSET.get(name, '')!r}) }}}}"
        for name in names
    }


def _dbt_ol_path(dbt_ol: str | None) -> str:
    """``dbt-ol`` next to this Python (a virtualenv's bin need not be on PATH in a worker), else on PATH."""
    if dbt_ol:
        return dbt_ol
    beside = Path(sys.executable).parent / "dbt-ol"
    return str(beside) if beside.exists() else (shutil.which("dbt-ol") or "dbt-ol")


def _subprocess_env(
    lineage: Mapping[str, str], dbt_ol: str, extra: Mapping[str, str] | None
) -> dict[str, str]:
    """The environment of ``dbt-ol``: this process's, ``extra``, then the lineage variables.

    Inherited ``OPENLINEAGE__*`` variables would be merged into the transport config by the client, so
    they go; so does the client's own discovery (``OPENLINEAGE_URL``, ...) when the provider's transport is
    passed explicitly (otherwise the dbt transport discovers it the same way the provider did).
    """
    env = {k: v for k, v in {**os.environ, **(extra or {})}.items() if not k.startswith("OPENLINEAGE__")}
    if _explicit_transport(lineage.get("OPENLINEAGE__TRANSPORT")):
        env = {k: v for k, v in env.items() if k not in _CLIENT_DISCOVERY}
    env.update(lineage)
    if os.sep in dbt_ol:  # dbt-ol starts `dbt` through PATH: use the one installed beside dbt-ol
        env["PATH"] = os.pathsep.join([str(Path(dbt_ol).parent), env.get("PATH", "")])
    return env


def _explicit_transport(value: str | None) -> bool:
    try:
        config = json.loads(value) if value else {}
        if config.get("config_file"):
            config = json.loads(Path(config["config_file"]).read_text())
        return bool(config.get("transport"))
    except (ValueError, AttributeError, OSError):
        return False


def _results(target: Path) -> dict[str, Any]:
    try:
        data = json.loads((target / "run_results.json").read_text())
    except (OSError, ValueError):
        return {}
    return {r["unique_id"]: r for r in data.get("results") or () if isinstance(r, dict) and "unique_id" in r}


def run_dbt(
    *args: str,
    project_dir: str | os.PathLike[str],
    profiles_dir: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    dbt_ol: str | None = None,
    job_name: str | None = None,
) -> dict[str, str]:
    """Run ``dbt-ol <args>`` for ``project_dir`` from the running task; returns each node's status.

    The dbt runs are children of the task's run (:func:`dbt_lineage_env`). dbt's ``target/`` and logs go
    to a temporary folder of this run (removed afterwards), so concurrent task instances never share
    them and the project folder stays clean. dbt's output goes to the task log. When dbt fails (exit
    code not 0), :class:`DbtRunFailed` names the failed nodes and dbt's errors: the task fails.

    ``args``: the dbt command and its options (``"build", "--select", "fct_daily_orders+"``);
    ``profiles_dir``: where ``profiles.yml`` is (dbt's default: the project, then ``~/.dbt``);
    ``env``: extra environment variables (for ``env_var()`` in the profile); ``dbt_ol``: the ``dbt-ol``
    executable (default: beside this Python, else on PATH).
    """
    if not args:
        raise ValueError("run_dbt needs a dbt command: run_dbt('build', project_dir=...)")
    executable = _dbt_ol_path(dbt_ol)
    with tempfile.TemporaryDirectory(prefix="lineage-plus-dbt-") as scratch:
        target = Path(scratch) / "target"
        command = [executable, *args, "--project-dir", os.fspath(project_dir)]
        command += ["--target-path", str(target), "--log-path", str(Path(scratch) / "logs")]
        if profiles_dir is not None:
            command += ["--profiles-dir", os.fspath(profiles_dir)]
        lineage = dbt_lineage_env(target_path=target, job_name=job_name)
        returncode = _stream(command, _subprocess_env(lineage, executable, env), os.fspath(project_dir))
        results = _results(target)
    statuses = {unique_id: str(result.get("status")) for unique_id, result in results.items()}
    if returncode != 0:
        raise DbtRunFailed(_failure_message(args, returncode, results))
    return statuses


def _stream(command: list[str], env: dict[str, str], cwd: str) -> int:
    """Run ``command``, copying its output line by line to stdout (the task log); its exit code."""
    print(f"airflow-lineage-plus: running {' '.join(command)}", flush=True)
    try:
        process = subprocess.Popen(
            command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
        )
    except FileNotFoundError:
        raise DbtRunFailed(
            f"{command[0]} was not found: install openlineage-dbt and a dbt adapter beside Airflow "
            f"(pip install 'airflow-lineage-plus[dbt]' dbt-<adapter>) or pass dbt_ol='/path/to/dbt-ol'"
        ) from None
    assert process.stdout is not None
    with process:
        for line in process.stdout:
            print(line.rstrip("\n"), flush=True)
    return process.wait()


def _failure_message(args: Sequence[str], returncode: int, results: Mapping[str, Any]) -> str:
    failed = [r for r in results.values() if r.get("status") in {"error", "fail", "runtime error"}]
    head = f"dbt {' '.join(args)} failed (exit code {returncode})"
    if not failed:
        return (
            f"{head}; dbt's output above says why (no node failed: a project, profile or compilation error?)"
        )
    lines = [f"{r['unique_id']} ({r['status']}): {str(r.get('message') or '').strip()}" for r in failed]
    return head + ":\n" + "\n".join(lines)
