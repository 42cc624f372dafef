"""Where the survivors are simulated: a local process pool (default) or a Ray cluster (`.[cluster]` extra).

Both map the same pure function over the same items in the same order, so their results are identical.
A Ray address is checked before `ray.init` (a TCP connect and the gRPC handshake a Ray head answers, each
bounded by `timeout_seconds`), so an address that does not answer, or answers but is no Ray head, gives a
clear message instead of a hang. The cluster's workers must be able to import costmodel (install it there).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Literal, TypeVar

from costmodel.errors import CostmodelError

ExecutorKind = Literal["local", "ray"]
T = TypeVar("T")
R = TypeVar("R")
RAY_CONNECT_TIMEOUT_SECONDS = 5.0


class LocalExecutor:
    """`workers` processes (1: in this process, no pool)."""

    def __init__(self, *, workers: int = 1) -> None:
        if workers < 1:
            raise CostmodelError(f"--workers must be >= 1 (got {workers})")
        self._workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """fn over items, results in item order."""
        if self._workers == 1 or len(items) <= 1:
            return [fn(item) for item in items]
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self._workers)
        return list(self._pool.map(fn, items))

    def close(self) -> None:
        """Stop the pool's processes."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


def parse_ray_address(address: str) -> tuple[str, int]:
    """(host, port) of 'host:port' or 'ray://host:port'; raises CostmodelError naming --address otherwise."""
    text = address.removeprefix("ray://")
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise CostmodelError(f"--address '{address}': give HOST:PORT or ray://HOST:PORT of a Ray head node "
                             "(e.g. 127.0.0.1:6379), or leave it out to start a local Ray")
    return host, int(port_text)


# A Ray head's GCS is a gRPC server: it answers the HTTP/2 connection preface with a SETTINGS frame
# (RFC 9113 section 3.4: the server's preface is a SETTINGS frame, possibly empty).
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_HTTP2_SETTINGS = 0x4


def _answers_grpc(sock: socket.socket) -> bool:
    sock.sendall(_HTTP2_PREFACE)
    header = b""
    while len(header) < 9:
        chunk = sock.recv(9 - len(header))
        if not chunk:
            return False
        header += chunk
    return header[3] == _HTTP2_SETTINGS


def check_ray_address(address: str, *, timeout_seconds: float = RAY_CONNECT_TIMEOUT_SECONDS) -> None:
    """Raise CostmodelError when nothing answers at the address within `timeout_seconds`, or what answers does
    not speak gRPC as a Ray head does (`ray.init` would otherwise wait for it without end)."""
    host, port = parse_ray_address(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_seconds) as sock:
            sock.settimeout(timeout_seconds)
            if _answers_grpc(sock):
                return
            problem = "it answers, but not as a Ray head (no gRPC)"
    except TimeoutError:
        problem = f"nothing answered within {timeout_seconds:g} s"
    except OSError as exc:
        problem = f"nothing answers ({exc})"
    raise CostmodelError(
        f"--address '{address}': no Ray cluster answers at {host}:{port}: {problem}; "
        "start one with `ray start --head` or fix the address")


class RayExecutor:
    """Ray tasks over `ray.init(address=...)` (a local Ray when address is None)."""

    def __init__(self, *, address: str | None = None, workers: int | None = None,
                 timeout_seconds: float = RAY_CONNECT_TIMEOUT_SECONDS) -> None:
        if address is not None:
            check_ray_address(address, timeout_seconds=timeout_seconds)
        try:
            import ray
        except ImportError:
            raise CostmodelError("--executor ray needs Ray: pip install 'costmodel[cluster]' "
                                 "(or use --executor local)") from None
        self._ray: Any = ray
        self._remote: dict[Callable[..., Any], Any] = {}  # one Ray remote function per fn (exported once)
        self._started = not ray.is_initialized()
        if self._started:
            kwargs: dict[str, Any] = {"address": address} if address is not None else {"num_cpus": workers}
            ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False, **kwargs)

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """fn over items as Ray tasks, results in item order."""
        if fn not in self._remote:
            self._remote[fn] = self._ray.remote(fn)
        remote = self._remote[fn]
        return list(self._ray.get([remote.remote(item) for item in items]))

    def close(self) -> None:
        """Shut down the Ray this executor started."""
        if self._started:
            self._ray.shutdown()


def make_executor(kind: ExecutorKind, *, workers: int = 1, address: str | None = None) -> LocalExecutor | RayExecutor:
    """The executor for `--executor`."""
    if kind == "local":
        if address is not None:
            raise CostmodelError("--address is for --executor ray; drop it or add --executor ray")
        return LocalExecutor(workers=workers)
    if kind == "ray":
        return RayExecutor(address=address, workers=workers)
    raise CostmodelError(f"--executor '{kind}': use local or ray")
