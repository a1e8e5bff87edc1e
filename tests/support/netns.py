"""Worker "machines" on one host: a network namespace per worker, linked to a bridge on the host.

:class:`Network` makes (as root, with iproute2) a bridge ``alp<tag>br`` holding the gateway address
``10.231.<n>.1/24`` and, per host, a namespace ``alp<tag>-<host>`` with its own loopback and a veth pair
to the bridge (``10.231.<n>.<10+i>``). A process started with :meth:`Network.prefix` runs inside its
namespace: it reaches only what listens on the gateway address (the servers the test binds there), not the
host's loopback, where the test keeps PostgreSQL: a worker there cannot reach the metadata database, as
in Airflow 3. All addresses belong to links this test made; nothing leaves the machine. ``<tag>`` comes
from the process id and ``<n>`` is a /24 no route of the machine uses yet, so two runs on one machine do
not meet. :meth:`Network.remove` deletes all of it (a namespace's processes must be stopped first).

Where namespaces cannot be made (not root, no iproute2, a sandbox without ``CAP_NET_ADMIN``),
:func:`make_network` returns None and the caller runs its "machines" on the host's loopback instead
(tests/deploy/test_production_topology.py says so).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess

SUBNET_PREFIX = "10.231"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {proc.stderr.strip()}")
    return proc


def _free_subnet() -> int:
    routes = _ip("-4", "route", "show", "table", "all").stdout
    for n in range(os.getpid() % 200, 256):
        if f"{SUBNET_PREFIX}.{n}." not in routes:
            return n
    raise RuntimeError(f"no free {SUBNET_PREFIX}.x.0/24 on this machine")


class Network:
    """A bridge on the host (the gateway) and one network namespace per host name."""

    def __init__(self, hosts: list[str]) -> None:
        self.tag = f"{os.getpid() % 0x10000:04x}"
        self.subnet = _free_subnet()
        self.gateway = f"{SUBNET_PREFIX}.{self.subnet}.1"
        self.bridge = f"alp{self.tag}br"
        self.hosts = {host: f"{SUBNET_PREFIX}.{self.subnet}.{10 + i}" for i, host in enumerate(hosts)}
        self.namespaces = {host: f"alp{self.tag}-{host}" for host in hosts}
        self._made: list[tuple[str, str]] = []

    def create(self) -> None:
        _ip("link", "add", self.bridge, "type", "bridge")
        self._made.append(("link", self.bridge))
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i, (host, address) in enumerate(self.hosts.items()):
            namespace, outside, inside = self.namespaces[host], f"alp{self.tag}h{i}", f"alp{self.tag}n{i}"
            _ip("netns", "add", namespace)
            self._made.append(("netns", namespace))
            _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            self._made.append(("link", outside))
            _ip("link", "set", inside, "netns", namespace)
            _ip("link", "set", outside, "master", self.bridge)
            _ip("link", "set", outside, "up")
            inns = ("netns", "exec", namespace, "ip")
            _ip(*inns, "link", "set", "lo", "up")
            _ip(*inns, "addr", "add", f"{address}/24", "dev", inside)
            _ip(*inns, "link", "set", inside, "up")

    def prefix(self, host: str) -> list[str]:
        """The command prefix that runs a program in ``host``'s namespace."""
        return ["ip", "netns", "exec", self.namespaces[host]]

    def remove(self) -> None:
        for kind, name in reversed(self._made):
            with contextlib.suppress(RuntimeError):
                if kind == "netns":
                    _ip("netns", "delete", name)
                else:
                    _ip("link", "delete", name)
        self._made.clear()


def make_network(hosts: list[str]) -> Network | None:
    """A created :class:`Network` for ``hosts``, or None where namespaces cannot be made here."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return None
    network = Network(hosts)
    try:
        network.create()
    except (RuntimeError, OSError, subprocess.SubprocessError):
        network.remove()
        return None
    return network
