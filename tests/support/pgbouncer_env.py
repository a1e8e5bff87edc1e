"""A real PgBouncer in transaction mode in front of a :class:`~tests.support.postgres_env.PostgresServer`:
Debian's ``pgbouncer`` (``scripts/system-deps.sh`` installs it), started on a free port of 127.0.0.1 with a
configuration in a temporary directory, stopped at the end. As root it runs as the ``postgres`` user (it
refuses to run as root)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from tests.support.postgres_env import PostgresServer, free_port, wait_until

#: Debian installs it in /usr/sbin, on the PATH of root only; elsewhere the PATH says
PROGRAM = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


class PgBouncer:
    """Transaction pooling, ``pool_size`` server connections per database, every client as ``postgres``."""

    def __init__(self, server: PostgresServer, pool_size: int = 2) -> None:
        self.server = server
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="alp-pgbouncer-"))
        self.config = self.root / "pgbouncer.ini"
        self.config.write_text(
            "[databases]\n"
            f"* = host=127.0.0.1 port={server.port} user=postgres\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            "auth_type = any\npool_mode = transaction\n"
            f"default_pool_size = {pool_size}\nmax_client_conn = 200\n"
            f"logfile = {self.root / 'pgbouncer.log'}\npidfile = {self.root / 'pgbouncer.pid'}\n"
        )
        self.user = "postgres" if os.geteuid() == 0 else None
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        if not Path(PROGRAM).exists():
            raise RuntimeError(f"{PROGRAM} is missing: run scripts/system-deps.sh (Debian's pgbouncer)")
        command = [PROGRAM, str(self.config)]
        if self.user is not None:
            os.chmod(self.root, 0o755)
            for path in (self.root, self.config):
                shutil.chown(path, self.user)
            command[1:1] = ["-u", self.user]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(self._listening, 20, f"pgbouncer on port {self.port}", poll=0.1)

    def _listening(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"pgbouncer exited: {self.log()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
        except OSError:
            return False
        return True

    def url(self, database: str = "airflow") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def log(self) -> str:
        path = self.root / "pgbouncer.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)
        shutil.rmtree(self.root, ignore_errors=True)
