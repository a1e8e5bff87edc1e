"""A real local SMTP server (aiosmtpd) that keeps every message it receives, for alert tests.

Started and stopped by the test or benchmark that uses it, on 127.0.0.1 and a free port; its Airflow
connection (``smtp`` type, no TLS) is :meth:`LocalSmtp.connection`.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _Keep:
    def __init__(self, box: LocalSmtp) -> None:
        self.box = box

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd API
        with self.box.lock:
            self.box.data_commands += 1
        while self.box.hanging:  # a server that stops answering mid-message (until told to go on)
            await asyncio.sleep(0.05)
        message = message_from_bytes(envelope.content, policy=policy.default)
        with self.box.lock:
            self.box.messages.append((list(envelope.rcpt_tos), message))  # type: ignore[arg-type]
        return "250 Message accepted for delivery"


class LocalSmtp:
    """An SMTP server in this process; ``messages`` holds (recipients, message) in arrival order.

    ``hanging``: while true, the server takes each message's DATA and never answers it (a hung server);
    ``data_commands`` counts the DATA commands it was sent, answered or not.
    """

    def __init__(self, hanging: bool = False) -> None:
        self.port = _free_port()
        self.hanging = hanging
        self.data_commands = 0
        self.messages: list[tuple[list[str], EmailMessage]] = []
        self.lock = threading.Lock()
        self.controller = Controller(_Keep(self), hostname="127.0.0.1", port=self.port)

    def __enter__(self) -> LocalSmtp:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()

    def connection(self, from_email: str = "lineage-alerts@example.com") -> str:
        """The Airflow connection (JSON, for ``AIRFLOW_CONN_<ID>``) of this server."""
        return json.dumps(
            {
                "conn_type": "smtp",
                "host": "127.0.0.1",
                "port": self.port,
                "extra": {"disable_tls": True, "disable_ssl": True, "from_email": from_email, "timeout": 10},
            }
        )

    def wait_for(self, count: int, timeout: float = 120.0) -> list[tuple[list[str], EmailMessage]]:
        """The messages, once at least ``count`` have arrived (or the time is up)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.messages) >= count:
                    break
            time.sleep(0.2)
        with self.lock:
            return list(self.messages)
