"""One deadline for a whole HTTP request: connect, response headers and body together.

A socket timeout bounds each read, not the request: a server that sends its response headers one byte a
second never lets a read time out, and http.client reads the headers before any caller code runs. So the
sessions made here register every socket they open with the thread that opened it, and `request_deadline`
arms a timer that shuts those sockets down when the time is up. The blocked read then returns (urllib3
raises a connection error) and the caller, seeing `DeadlineWatch.fired`, reports a timeout.

One session per thread, one request at a time on it (how `probes.endpoint` and `prices refresh` use
them), so the calling thread's sockets are exactly the current request's. requests/urllib3 are imported
inside the functions: costmodel opens no network at import.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_LOCAL = threading.local()


class _ThreadSockets:
    """The sockets one thread's deadline sessions opened (weak: a closed, dropped socket falls out)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()

    def add(self, sock: socket.socket) -> None:
        with self.lock:
            self.sockets.add(sock)

    def shut_down(self) -> None:
        with self.lock:
            sockets = list(self.sockets)
        for sock in sockets:
            # socket.socket's own shutdown, also for an SSLSocket: ends a read blocked in another thread
            # without touching the TLS state that thread is using. OSError: already closed.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _thread_sockets() -> _ThreadSockets:
    sockets = getattr(_LOCAL, "sockets", None)
    if sockets is None:
        sockets = _LOCAL.sockets = _ThreadSockets()
    return sockets


class DeadlineWatch:
    """Whether the deadline passed while the request ran (then its error is a timeout, whatever it says)."""

    def __init__(self, sockets: _ThreadSockets) -> None:
        self._sockets = sockets
        self._lock = threading.Lock()
        self._finished = False
        self.fired = False

    def fire(self) -> None:
        with self._lock:
            if self._finished:
                return
            self.fired = True
        self._sockets.shut_down()

    def finish(self) -> None:
        with self._lock:
            self._finished = True


@contextmanager
def request_deadline(seconds: float) -> Iterator[DeadlineWatch]:
    """Shut the calling thread's deadline-session sockets down `seconds` from now if the block still runs."""
    watch = DeadlineWatch(_thread_sockets())
    timer = threading.Timer(max(seconds, 0.0), watch.fire)
    timer.daemon = True
    timer.start()
    try:
        yield watch
    finally:
        watch.finish()
        timer.cancel()


def deadline_session() -> Any:
    """A requests.Session whose sockets `request_deadline` can cut (http and https)."""
    import requests

    session = requests.Session()
    adapter = _adapter_class()()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


@functools.cache
def _adapter_class() -> type:
    """An HTTPAdapter whose connection pools make connections that register their socket on connect."""
    from requests.adapters import HTTPAdapter
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class _WatchedHTTPConnection(HTTPConnection):
        def connect(self) -> None:
            super().connect()
            _thread_sockets().add(self.sock)

    class _WatchedHTTPSConnection(HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            _thread_sockets().add(self.sock)

    class _WatchedHTTPPool(HTTPConnectionPool):
        ConnectionCls = _WatchedHTTPConnection

    class _WatchedHTTPSPool(HTTPSConnectionPool):
        ConnectionCls = _WatchedHTTPSConnection

    class _WatchedAdapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}

    return _WatchedAdapter
