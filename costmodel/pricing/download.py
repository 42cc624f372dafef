"""Time-bounded HTTP download of one price file: a GET that gives up at a deadline or a byte cap.

This module owns the network side of `costmodel prices refresh`: the whole download (connect, headers,
body) is bounded by one deadline, the body is capped at `max_bytes`, and every failure (offline, timeout,
HTTP error, a connection broken off) becomes a CostmodelError that says what happened and what to try.
What the bytes mean (CSV or LiteLLM JSON, validation, the diff) is costmodel.pricing.refresh's concern.
"""

from __future__ import annotations

import time
from typing import Any

from costmodel.errors import CostmodelError
from costmodel.http_deadline import deadline_session, request_deadline

_CHUNK_BYTES = 64 * 1024


def _read_timeout_text(url: str, *, received_bytes: int, timeout_seconds: float) -> str:
    return (f"read timeout: {url} stopped sending after {received_bytes:,} bytes; timed out after "
            f"{timeout_seconds:g} s (--timeout bounds the whole download); try again or raise --timeout")


def _set_socket_timeout(response: Any, *, seconds: float) -> None:
    """Make the next socket read give up after `seconds` (the time left before the deadline)."""
    sock = getattr(getattr(response.raw, "connection", None), "sock", None)
    if sock is not None:
        sock.settimeout(max(seconds, 1e-3))


class _Received:
    """Bytes of the body read so far (what the error messages report)."""

    def __init__(self) -> None:
        self.bytes = 0


def _read_body(response: Any, *, url: str, deadline: float, timeout_seconds: float, max_bytes: int,
               progress: _Received) -> bytes:
    """Read the body with `read1`, the deadline checked between reads (see `download`)."""
    read_some = getattr(response.raw, "read1", None)  # urllib3 2.x; 1.26 has none
    if read_some is None:
        raise CostmodelError("this urllib3 has no HTTPResponse.read1, which a time-bounded download needs; "
                             "upgrade it (pip install -U urllib3)")
    chunks: list[bytes] = []
    while True:
        left_seconds = deadline - time.monotonic()
        if left_seconds <= 0:
            raise CostmodelError(_read_timeout_text(url, received_bytes=progress.bytes,
                                                    timeout_seconds=timeout_seconds))
        _set_socket_timeout(response, seconds=left_seconds)
        chunk = read_some(_CHUNK_BYTES, decode_content=True)
        if not chunk:
            return b"".join(chunks)
        progress.bytes += len(chunk)
        if progress.bytes > max_bytes:
            raise CostmodelError(f"{url} sent more than {max_bytes:,} bytes; not a price sheet")
        chunks.append(chunk)


def download(url: str, *, timeout_seconds: float, max_bytes: int) -> bytes:
    """GET `url`, giving up `timeout_seconds` after the start (connect, headers and body together) or past
    `max_bytes`.

    urllib3's total timeout bounds the connect and leaves the rest for the response headers; the body is
    read with `read1` (whatever one socket read returns, up to 64 KiB), the deadline checked between
    reads and each read's socket timeout set to the time left, so a server that sends 1 byte every
    0.5 s cannot hold the download open past the deadline. A server dripping its *headers* (which
    http.client reads before any code here runs) is cut off at the deadline by costmodel.http_deadline."""
    progress = _Received()
    with request_deadline(timeout_seconds) as watch:
        try:
            data = _download(url, timeout_seconds=timeout_seconds, max_bytes=max_bytes, progress=progress)
        except CostmodelError:
            if not watch.fired:
                raise
            data = b""  # cut off at the deadline, whatever the error said
        if watch.fired:  # also when no error was raised: a body cut short can end like a whole one
            raise CostmodelError(_cut_off_text(url, received_bytes=progress.bytes, timeout_seconds=timeout_seconds))
    return data


def _cut_off_text(url: str, *, received_bytes: int, timeout_seconds: float) -> str:
    if received_bytes:
        return _read_timeout_text(url, received_bytes=received_bytes, timeout_seconds=timeout_seconds)
    return (f"{url} sent no complete response; timed out after {timeout_seconds:g} s (headers and body together: "
            "--timeout bounds the whole download); try again or raise --timeout")


def _download(url: str, *, timeout_seconds: float, max_bytes: int, progress: _Received) -> bytes:
    import requests  # only this function touches the network
    from urllib3 import Timeout
    from urllib3.exceptions import ProtocolError, ReadTimeoutError

    deadline = time.monotonic() + timeout_seconds
    try:
        # requests passes a urllib3 Timeout through as it is (HTTPAdapter.send); its stubs list only floats.
        with deadline_session() as session, session.get(
                url, timeout=Timeout(total=timeout_seconds), stream=True,  # type: ignore[arg-type]
                headers={"User-Agent": "costmodel-prices-refresh"}) as response:
            if response.status_code != 200:
                raise CostmodelError(f"{url} answered HTTP {response.status_code}; check the URL")
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise CostmodelError(f"{url} is {int(declared):,} bytes, over the {max_bytes:,}-byte limit")
            return _read_body(response, url=url, deadline=deadline, timeout_seconds=timeout_seconds,
                              max_bytes=max_bytes, progress=progress)
    except ReadTimeoutError:
        raise CostmodelError(_read_timeout_text(url, received_bytes=progress.bytes, timeout_seconds=timeout_seconds)) from None
    except ProtocolError as exc:
        raise CostmodelError(f"{url} broke off after {progress.bytes:,} bytes ({exc}); try again") from None
    except requests.ConnectTimeout:
        raise CostmodelError(f"could not reach {url}: connect timed out after {timeout_seconds:g} s; offline?") from None
    except requests.Timeout:
        raise CostmodelError(f"{url} sent no response headers; timed out after {timeout_seconds:g} s; try again or "
                             "raise --timeout") from None
    except requests.ConnectionError as exc:
        raise CostmodelError(f"could not reach {url} ({type(exc).__name__}); offline?") from None
    except requests.RequestException as exc:
        raise CostmodelError(f"download from {url} failed: {exc}") from None
