"""Redaction: secrets replaced by ``***`` in every string of an event before it leaves the process.

``scheme://user:password@host`` in any string becomes ``scheme://user:***@host``, and every string goes
through Airflow's secrets masker (connection passwords and variables the process has seen), where one is
available (:func:`airflow_lineage_plus._compat.secrets_redactor`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from airflow_lineage_plus import _compat

_CREDENTIALS = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@]*):(?P<secret>[^\s/@]+)@")
_SCALARS = (int, float, bool)


def scrub(text: str, mask: Callable[[str], str] | None = None) -> str:
    """``text`` with URI credentials and (when given) the secrets masker's secrets replaced by ``***``."""
    if "@" in text and "://" in text:
        text = _CREDENTIALS.sub(r"\g<head>:***@", text)
    return mask(text) if mask is not None else text


def redact(event: Any, *, secrets_masker: bool = True) -> int:
    """Redact credentials and known secrets in every string of ``event``, in place; returns how many.

    ``secrets_masker=False``: URI credentials only (no Airflow import, for processes without Airflow).
    """
    counter = [0]
    _scrub_all(event, _compat.secrets_redactor() if secrets_masker else None, counter)
    return counter[0]


def _scrub_all(value: Any, mask: Callable[[str], str] | None, counter: list[int]) -> Any:
    if isinstance(value, str):
        clean = scrub(value, mask)
        if clean != value:
            counter[0] += 1
        return clean
    if isinstance(value, dict):
        for key, item in value.items():
            if item is not None and not isinstance(item, _SCALARS):
                new = _scrub_all(item, mask, counter)
                if new is not item:
                    value[key] = new
        return value
    if isinstance(value, list):
        for i, item in enumerate(value):
            if item is not None and not isinstance(item, _SCALARS):
                new = _scrub_all(item, mask, counter)
                if new is not item:
                    value[i] = new
        return value
    if isinstance(value, tuple):
        return tuple(_scrub_all(item, mask, counter) for item in value)
    fields = getattr(type(value), "__attrs_attrs__", None)
    if fields is not None:
        for field in fields:
            item = getattr(value, field.name)
            if item is not None and not isinstance(item, _SCALARS):
                new = _scrub_all(item, mask, counter)
                if new is not item:
                    object.__setattr__(value, field.name, new)
    return value
