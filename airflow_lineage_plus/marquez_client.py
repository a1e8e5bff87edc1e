"""The Marquez REST API (``/api/v1``) over httpx: the one HTTP client for Marquez in the package.

Used by the graph's Marquez source (reads) and by ``lineage-plus replay`` (run lookups and posting
events). Every failure becomes :class:`~airflow_lineage_plus.exceptions.SourceUnavailable` (or
:class:`~airflow_lineage_plus.exceptions.NodeNotFound` for a 404 the caller expects), with the status and
path but never the API key. Imports nothing from Airflow.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from airflow_lineage_plus.exceptions import NodeNotFound, SourceUnavailable


class MarquezClient:
    """One Marquez server: base URL, optional API key (sent as a Bearer token), a timeout per request."""

    def __init__(self, url: str, *, api_key: str | None = None, timeout: float = 5.0) -> None:
        self.url = url.rstrip("/")
        self.shown_url = _without_credentials(self.url)  # what error messages (and so logs) name
        self.timeout = timeout
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(
            base_url=self.url + "/api/v1",
            headers=headers,
            timeout=httpx.Timeout(timeout),
            follow_redirects=True,
        )

    def close(self) -> None:
        self._client.close()

    def get(self, path: str, params: dict[str, Any] | None = None, *, missing: str | None = None) -> Any:
        """The JSON body of ``GET /api/v1<path>``; a 404 raises NodeNotFound(``missing``) when given."""
        response = self._send("GET", path, params=params)
        if response.status_code == 404 and missing is not None:
            raise NodeNotFound(missing)
        self._check(response, path)
        try:
            return response.json()
        except ValueError as exc:
            raise SourceUnavailable(
                f"Marquez at {self.shown_url} sent a body that is not JSON for {path}"
            ) from exc

    def post_lineage(self, raw: bytes) -> None:
        """``POST /api/v1/lineage`` with one event's JSON bytes, as they were logged."""
        response = self._send("POST", "/lineage", content=raw, headers={"Content-Type": "application/json"})
        self._check(response, "/lineage")

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return self._client.request(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            raise SourceUnavailable(
                f"Marquez at {self.shown_url} did not answer within {self.timeout:g} s ({path})"
            ) from exc
        except httpx.HTTPError as exc:
            detail = str(exc).replace(self.url, self.shown_url) if "@" not in str(exc) else type(exc).__name__
            raise SourceUnavailable(f"cannot reach Marquez at {self.shown_url}: {detail}") from exc

    def _check(self, response: httpx.Response, path: str) -> None:
        if response.status_code in (401, 403):
            raise SourceUnavailable(
                f"Marquez at {self.shown_url} refused the request ({response.status_code}): check --api-key"
            )
        if response.status_code >= 400:
            raise SourceUnavailable(f"Marquez at {self.shown_url} answered {response.status_code} for {path}")


def _without_credentials(url: str) -> str:
    """``url`` without a ``user:password@`` part."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
