"""Where the search's work runs: a local process pool (default) or a Ray cluster (`.[cluster]` extra).

Both run the same pure functions on the same items and return results in item order, so their results are
identical. `map` runs a batch (split into about `TASKS_PER_WORKER` tasks per worker, so a cluster gets enough
tasks and each task enough items); `submit` starts items one by one and `collect` waits for them (the search
keeps `parallelism` simulations in flight ahead of the one it needs).

Ray: the address is `--address`, else the `RAY_ADDRESS` environment variable, else a new local Ray of
`workers` CPUs. An explicit address is checked before `ray.init` (a TCP connect and the gRPC handshake a Ray
head answers, each bounded by `RAY_CONNECT_TIMEOUT_SECONDS`), so one that does not answer, or answers but is no
Ray head, gives a clear message instead of a hang; `ray.init` itself runs in a helper thread and is given up
after `RAY_INIT_TIMEOUT_SECONDS` with a message that says so (the main thread keeps waiting in Python, so
SIGTERM and Ctrl-C end it at once). On a cluster `workers` defaults to the CPUs Ray reports. The cluster's
workers must be able to import costmodel (install it on every node; docs/search.md).
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Generic, Literal, TypeVar

from costmodel.errors import CostmodelError

ExecutorKind = Literal["local", "ray"]
T = TypeVar("T")
R = TypeVar("R")
RAY_CONNECT_TIMEOUT_SECONDS = 5.0
# A local Ray took 20-30 s to start on a loaded 2-core machine (2026-12-01); a cluster head answers in seconds.
RAY_INIT_TIMEOUT_SECONDS = 120.0
TASKS_PER_WORKER = 2  # tasks per worker in one `map`: large enough to balance uneven items, few enough to batch


def chunks(items: Sequence[T], *, count: int) -> list[list[T]]:
    """`items` in at most `count` contiguous chunks of near-equal length (in order)."""
    count = max(1, min(count, len(items)))
    size = math.ceil(len(items) / count) if items else 0
    return [list(items[i:i + size]) for i in range(0, len(items), size)] if size else []


def _apply_all(fn: Callable[[T], R], batch: list[T]) -> list[R]:
    return [fn(item) for item in batch]


class _Deferred(Generic[R]):
    """An item run in this process when it is collected (the 1-worker executor: no pool, no speculation)."""

    def __init__(self, fn: Callable[[Any], R], item: Any) -> None:
        self._fn, self._item = fn, item

    def result(self) -> R:
        return self._fn(self._item)


class LocalExecutor:
    """`workers` processes (1: in this process, no pool)."""

    def __init__(self, *, workers: int = 1) -> None:
        if workers < 1:
            raise CostmodelError(f"--workers must be >= 1 (got {workers})")
        self._workers = workers
        self._pool: ProcessPoolExecutor | None = None

    @property
    def parallelism(self) -> int:
        """Items that run at once."""
        return self._workers

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self._workers)
        return self._pool

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """fn over items, results in item order."""
        if self._workers == 1 or len(items) <= 1:
            return [fn(item) for item in items]
        size = max(1, math.ceil(len(items) / (self._workers * TASKS_PER_WORKER)))
        return list(self._get_pool().map(fn, items, chunksize=size))

    def submit(self, fn: Callable[[T], R], item: T) -> Future[R] | _Deferred[R]:
        """Start fn(item) (1 worker: run it when collected)."""
        if self._workers == 1:
            return _Deferred(fn, item)
        return self._get_pool().submit(fn, item)

    def collect(self, handle: Future[R] | _Deferred[R]) -> R:
        """The result of a submitted item (waits for it)."""
        return handle.result()

    def discard(self, handle: Future[Any] | _Deferred[Any]) -> None:
        """Drop a submitted item whose result is not needed (cancelled if it has not started)."""
        if isinstance(handle, Future):
            handle.cancel()

    def close(self) -> None:
        """Stop the pool's processes."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


def parse_ray_address(address: str) -> tuple[str, int]:
    """(host, port) of 'host:port' or 'ray://host:port'; raises CostmodelError naming --address otherwise."""
    text = address.removeprefix("ray://")
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise CostmodelError(f"--address '{address}': give HOST:PORT or ray://HOST:PORT of a Ray head node "
                             "(e.g. 127.0.0.1:6379), or leave it out to start a local Ray")
    return host, int(port_text)


def ray_address(address: str | None) -> str | None:
    """The cluster to join: `address` (--address), else $RAY_ADDRESS, else None (start a local Ray)."""
    if address:
        return address
    return os.environ.get("RAY_ADDRESS", "").strip() or None


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


def _where(address: str | None) -> str:
    return f"the Ray cluster at '{address}'" if address else "a local Ray"


def _token_auth_to_join() -> None:
    """Ray 2.60's `ray start --head` turns token authentication on when a token exists (~/.ray/auth_token,
    $RAY_AUTH_TOKEN_PATH or $RAY_AUTH_TOKEN), but a driver joining reads only $RAY_AUTH_MODE (unset: off), so
    its handshake is refused. With RAY_AUTH_MODE unset, turn it on here the same way when a token is available
    (Ray's own helper; an explicit RAY_AUTH_MODE is left as set)."""
    if os.environ.get("RAY_AUTH_MODE") is not None:
        return
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:  # a Ray without token authentication
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def init_ray(ray: Any, *, address: str | None, workers: int | None, timeout_seconds: float,
             release: threading.Event) -> None:
    """`ray.init` joining `address` (None: a new local Ray of `workers` CPUs, all when None), given up after
    `timeout_seconds`. It runs in a daemon thread while this one waits in Python (signals stay deliverable).
    The thread then waits for `release` (set it after `ray.shutdown`): Ray starts a local Ray's processes
    with the parent-death signal, which fires when the thread that started them ends, not the process."""
    kwargs: dict[str, Any] = {"address": address} if address else {"num_cpus": workers}
    if address:
        _token_auth_to_join()
    outcome: dict[str, BaseException | None] = {}
    started = threading.Event()

    def start() -> None:
        try:
            ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False, **kwargs)
            outcome["error"] = None
        except BaseException as exc:  # handed to the waiting thread, which reports it
            outcome["error"] = exc
        started.set()
        release.wait()  # keep the parent of the local Ray's processes alive until the executor closes

    threading.Thread(target=start, name="costmodel-ray-init", daemon=True).start()
    deadline = time.monotonic() + timeout_seconds
    while not started.is_set() and time.monotonic() < deadline:
        started.wait(timeout=0.2)
    if not started.is_set():
        hint = ("check that `ray status` answers on its head" if address else
                "a loaded machine may need longer (--ray-init-timeout)")
        raise CostmodelError(f"ray.init did not reach {_where(address)} within {timeout_seconds:g} s: {hint}, "
                             "or run with --executor local")
    if outcome["error"] is not None:
        release.set()
        raise CostmodelError(f"ray.init could not start or join {_where(address)}: "
                             f"{type(outcome['error']).__name__}: {outcome['error']}") from None


class RayExecutor:
    """Ray tasks over `ray.init` (module docstring: which cluster, checks, time limits)."""

    def __init__(self, *, address: str | None = None, workers: int | None = None,
                 timeout_seconds: float = RAY_CONNECT_TIMEOUT_SECONDS,
                 init_timeout_seconds: float = RAY_INIT_TIMEOUT_SECONDS) -> None:
        if workers is not None and workers < 1:
            raise CostmodelError(f"--workers must be >= 1 (got {workers})")
        address = ray_address(address)
        if address is not None and address not in ("auto", "local"):  # 'auto': the head `ray start` left here
            check_ray_address(address, timeout_seconds=timeout_seconds)
        try:
            import ray
        except ImportError:
            raise CostmodelError("--executor ray needs Ray: pip install 'costmodel[cluster]' "
                                 "(or use --executor local)") from None
        self._ray: Any = ray
        self._remote: dict[Callable[..., Any], Any] = {}  # one Ray remote function per fn (exported once)
        self._started = not ray.is_initialized()
        self._release = threading.Event()  # ends the thread that started Ray, after shutdown
        if self._started:
            init_ray(ray, address=address, workers=workers, timeout_seconds=init_timeout_seconds,
                     release=self._release)
        cluster_cpus = int(ray.cluster_resources().get("CPU", 1))
        self._parallelism = max(1, workers if workers is not None else cluster_cpus)

    @property
    def parallelism(self) -> int:
        """Tasks that run at once: `workers`, else the CPUs the cluster reports."""
        return self._parallelism

    def _as_remote(self, fn: Callable[..., Any]) -> Any:
        if fn not in self._remote:
            self._remote[fn] = self._ray.remote(fn)
        return self._remote[fn]

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """fn over items in about TASKS_PER_WORKER tasks per worker, results in item order."""
        batches = chunks(items, count=self._parallelism * TASKS_PER_WORKER)
        remote = self._as_remote(_apply_all)
        return [r for batch in self._ray.get([remote.remote(fn, b) for b in batches]) for r in batch]

    def submit(self, fn: Callable[[T], R], item: T) -> Any:
        """Start fn(item) as one Ray task (its ObjectRef)."""
        return self._as_remote(fn).remote(item)

    def collect(self, handle: Any) -> Any:
        """The result of a submitted task (waits for it)."""
        return self._ray.get(handle)

    def discard(self, handle: Any) -> None:
        """Drop a task whose result is not needed (cancelled; a task already done is left alone)."""
        with contextlib.suppress(Exception):  # best effort: a finished or lost task needs nothing
            self._ray.cancel(handle)

    def close(self) -> None:
        """Shut down the Ray this executor started (a cluster it joined keeps running)."""
        if self._started:
            self._ray.shutdown()
        self._release.set()


def make_executor(kind: ExecutorKind, *, workers: int | None = None, address: str | None = None,
                  init_timeout_seconds: float = RAY_INIT_TIMEOUT_SECONDS) -> LocalExecutor | RayExecutor:
    """The executor for `--executor` (`workers` None: 1 locally, the cluster's CPUs on Ray)."""
    if kind == "local":
        if address is not None:
            raise CostmodelError("--address is for --executor ray; drop it or add --executor ray")
        return LocalExecutor(workers=workers or 1)
    if kind == "ray":
        return RayExecutor(address=address, workers=workers, init_timeout_seconds=init_timeout_seconds)
    raise CostmodelError(f"--executor '{kind}': use local or ray")
