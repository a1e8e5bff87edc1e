"""``lineage-plus --airflow URL --token TOKEN``: the questions asked of a remote Airflow's Lineage view.

:class:`RemoteQueries` answers the graph questions of the CLI (``upstream``, ``downstream``,
``failed-upstream``, ``impact``, ``columns``, ``schema-diff``, ``what-changed``, ``freshness``) through the
Lineage view's JSON API (``<URL>/lineage-plus/api/...``, :mod:`airflow_lineage_plus.ui.api`) with the
token of an Airflow user: the answers are those the view gives that user, filtered to the DAGs the user
may read, from the store the API server reads. The token is an Airflow JWT (``POST <URL>/auth/token``),
given with ``--token`` or ``LINEAGE_PLUS_TOKEN`` (which keeps it out of the shell's history); it is sent
only to ``URL``.

HTTP answers map to the CLI's exit statuses (docs/cli.md): 404 is an unknown dataset or job and 400/422 a
bad argument (2); 401/403, a server that cannot be reached, and a 503 that lasts past ``--timeout`` are a
source that cannot be read (1). A 503 with ``Retry-After`` (the server still opening its store) is asked
again until ``--timeout``.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from typing import Any

import httpx

from airflow_lineage_plus.exceptions import NodeNotFound, SourceUnavailable, UsageError

#: the commands a remote Airflow answers
COMMANDS = frozenset(
    {
        "upstream",
        "downstream",
        "failed-upstream",
        "impact",
        "columns",
        "schema-diff",
        "what-changed",
        "freshness",
    }
)
#: where the plugin's app is mounted below the API server's base URL
PREFIX = "/lineage-plus/api"
#: the depths the view's API takes
MIN_DEPTH, MAX_DEPTH = 1, 12
#: seconds a question may take, 503 retries included, unless ``--timeout`` says otherwise
DEFAULT_TIMEOUT = 60.0


def _iso(as_of: int | None) -> str | None:
    """An ``--as-of`` in epoch microseconds as the API's ISO-8601 ``asOf``."""
    if as_of is None:
        return None
    return datetime.fromtimestamp(as_of / 1e6, tz=timezone.utc).isoformat().replace("+00:00", "Z")


class RemoteQueries:
    """The CLI's graph questions, asked of the Lineage view API of the Airflow at ``base``."""

    def __init__(self, base: str, token: str, timeout: float | None = None) -> None:
        if not token:
            raise UsageError(
                "--airflow needs a token: --token TOKEN or LINEAGE_PLUS_TOKEN (POST /auth/token)"
            )
        self.base = base.rstrip("/")
        self.timeout = timeout or DEFAULT_TIMEOUT
        self._client = httpx.Client(
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=self.timeout,
            follow_redirects=False,
        )

    def close(self) -> None:
        self._client.close()

    # -- the questions (the signatures of LineageQueries the CLI calls) --------------------------------
    def upstream(self, node: str, depth: int = 10, **way: Any) -> dict[str, Any]:
        return self._graph("upstream", node, depth, **way)

    def downstream(self, node: str, depth: int = 10, **way: Any) -> dict[str, Any]:
        return self._graph("downstream", node, depth, **way)

    def failed_upstream(self, node: str, depth: int = 10, **way: Any) -> dict[str, Any]:
        return self.get("/failed-upstream", node=node, depth=_depth(depth), **_way(**way))

    def impact(self, node: str, depth: int = 10, **way: Any) -> dict[str, Any]:
        return self.get("/impact", node=node, depth=_depth(depth), **_way(**way))

    def columns(self, node: str, column: str, depth: int = 10, *, as_of: int | None = None) -> dict[str, Any]:
        return self.get("/columns", node=node, column=column, depth=_depth(depth), asOf=_iso(as_of))

    def schema_diff(self, node: str, proposed: Any = None, *, as_of: int | None = None) -> dict[str, Any]:
        body = None if proposed is None else json.dumps(proposed)
        return self.get("/schema-diff", node=node, proposed=body, asOf=_iso(as_of))

    def what_changed(
        self, node: str, baseline_runs: int = 7, depth: int = 10, *, as_of: int | None = None, **_: Any
    ) -> dict[str, Any]:
        """What changed upstream (the server's thresholds and node cap apply, not this machine's)."""
        return self.get(
            "/what-changed", node=node, baselineRuns=baseline_runs, depth=_depth(depth), asOf=_iso(as_of)
        )

    def freshness(self) -> dict[str, Any]:
        return self.get("/freshness")

    def _graph(self, direction: str, node: str, depth: int, **way: Any) -> dict[str, Any]:
        answer = self.get("/lineage", node=node, depth=_depth(depth), direction=direction, **_way(**way))
        answer.pop("failedUpstream", None)  # the view's addition for its page; the CLI asks failed-upstream
        return answer

    # -- HTTP ----------------------------------------------------------------------------------------
    def get(self, path: str, **params: Any) -> dict[str, Any]:
        """The JSON answer of ``GET <base>/lineage-plus/api<path>``, asked again on 503 with
        ``Retry-After`` until the timeout; raises the CLI's errors."""
        url = self.base + PREFIX + path
        query = {k: _param(v) for k, v in params.items() if v is not None}
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                response = self._client.get(url, params=query)
            except httpx.HTTPError as exc:
                raise SourceUnavailable(
                    f"the Airflow API server at {self.base} cannot be reached: {exc}"
                ) from None
            retry = _retry_after(response)
            if retry is None or time.monotonic() + retry > deadline:
                return _answer(response, self.base)
            time.sleep(retry)


def _answer(response: httpx.Response, base: str) -> dict[str, Any]:
    detail = _detail(response)
    code = response.status_code
    if code == 200:
        try:
            found = response.json()
        except ValueError:
            found = None
        if isinstance(found, dict):
            return found
        raise SourceUnavailable(f"{base} did not answer lineage JSON (is the plugin installed there?)")
    if code == 404:
        raise NodeNotFound(detail or "not found in the lineage graph")
    if code in (400, 422):
        raise UsageError(detail or f"the Airflow API server refused the question ({code})")
    if code == 401:
        raise SourceUnavailable(f"{base} refused the token (401): get a new one with POST {base}/auth/token")
    if code == 403:
        raise SourceUnavailable(f"{base}: this user may not read lineage (403)")
    raise SourceUnavailable(f"{base} answered {code}: {detail}")


def _retry_after(response: httpx.Response) -> float | None:
    if response.status_code != 503:
        return None
    try:
        return max(0.1, min(float(response.headers.get("Retry-After", "")), 10.0))
    except ValueError:
        return None


def _detail(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail")
    except (ValueError, AttributeError):
        return response.reason_phrase
    return detail if isinstance(detail, str) else str(detail)[:500]


def _depth(depth: int) -> int:
    if not MIN_DEPTH <= depth <= MAX_DEPTH:
        raise UsageError(f"--airflow answers --depth {MIN_DEPTH} to {MAX_DEPTH} (the Lineage view's range)")
    return depth


def _way(
    as_of: int | None = None, include_retired: bool = False, include_declared: bool = False, **_: Any
) -> dict[str, Any]:
    return {"asOf": _iso(as_of), "includeRetired": include_retired, "declared": include_declared}


def _param(value: Any) -> Any:
    return ("true" if value else "false") if isinstance(value, bool) else value
