"""One streamed request to an OpenAI-compatible `/v1/chat/completions` endpoint, timed.

`stream_one_request` POSTs with stream=true, reads the body with `read1` (whatever bytes have arrived, so
events are not held back to fill a buffer) and stamps each read with time.perf_counter() before decoding the
SSE events in it. `probes.endpoint` runs many of these at once; `probes.sweep` runs them at several
concurrencies. Definitions of TTFT, TPOT, ITL and E2E: costmodel/measurements/endpoint_result.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import requests
import urllib3.exceptions

from costmodel.http_deadline import request_deadline
from costmodel.measurements.endpoint_result import (
    ERROR_KIND_CONNECTION,
    ERROR_KIND_MALFORMED,
    ERROR_KIND_MISSING_DONE,
    ERROR_KIND_REDIRECT,
    ERROR_KIND_TIMEOUT,
    EndpointProbeSettings,
    EndpointRequestRecord,
    implausible_prompt_tokens,
    implausible_usage,
)
from probes.sse import SseDecoder, StreamFault, chunk_fields

_READ_BYTES = 65536
_ERROR_BODY_BYTES = 2048


@dataclass
class _Outcome:
    """One request as measured; `itl_seconds` is kept out of the stored record (it can be long)."""

    record: EndpointRequestRecord
    itl_seconds: list[float] = field(default_factory=list)
    error_message: str | None = None


def _read_stream(
    response: requests.Response, *, sent: float, timeout_seconds: float, max_tokens: int, prompt_tokens_sent: int,
    index: int
) -> _Outcome:
    """Consume an event stream; return the timing of a complete one or raise StreamFault."""
    content_times: list[float] = []
    usage: dict[str, Any] | None = None
    decoder = SseDecoder()
    done = False
    while not done:
        try:
            data = response.raw.read1(_READ_BYTES)
        except (urllib3.exceptions.ReadTimeoutError, TimeoutError) as exc:
            raise StreamFault(ERROR_KIND_TIMEOUT, f"no data for {timeout_seconds} s mid-stream") from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise StreamFault(ERROR_KIND_CONNECTION, f"connection lost mid-stream: {exc}") from exc
        if not data:
            break
        arrived = time.perf_counter()  # before any parsing
        if arrived - sent > timeout_seconds:
            raise StreamFault(ERROR_KIND_TIMEOUT, f"request ran past {timeout_seconds} s")
        for payload in decoder.feed(data):
            if payload.strip() == "[DONE]":
                done = True
                break
            has_content, chunk_usage = chunk_fields(payload)
            if has_content:
                content_times.append(arrived)
            usage = chunk_usage or usage
    if not done:
        raise StreamFault(ERROR_KIND_MISSING_DONE, "stream ended without data: [DONE]")
    _drain(response)
    return _timing_outcome(content_times, usage, sent=sent, max_tokens=max_tokens,
                           prompt_tokens_sent=prompt_tokens_sent, index=index)


def _drain(response: requests.Response) -> None:
    """Read past [DONE] to the end of the body, so urllib3 returns the connection to the pool (reused,
    no new TCP/TLS handshake in the next TTFT). Errors here cannot change a finished measurement."""
    try:
        while response.raw.read1(_READ_BYTES):
            pass
    except (urllib3.exceptions.HTTPError, OSError):
        pass


def _timing_outcome(
    content_times: list[float], usage: dict[str, Any] | None, *, sent: float, max_tokens: int,
    prompt_tokens_sent: int, index: int
) -> _Outcome:
    """Latencies of one finished stream. The server's usage counts are used only when plausible
    (costmodel.measurements.endpoint_result.implausible_usage); otherwise tokens are counted as content chunks."""
    completion_tokens = usage.get("completion_tokens") if usage else None
    prompt_tokens = usage.get("prompt_tokens") if usage else None
    problem = None
    if completion_tokens is not None:
        problem = implausible_usage(completion_tokens, max_tokens=max_tokens, content_chunks=len(content_times))
    from_usage = completion_tokens is not None and problem is None
    output_tokens = int(completion_tokens) if from_usage and completion_tokens is not None else len(content_times)
    prompt_problem = None
    if prompt_tokens is not None:
        prompt_problem = implausible_prompt_tokens(prompt_tokens, prompt_tokens_sent=prompt_tokens_sent)
        prompt_tokens = None if prompt_problem else prompt_tokens
    ttft = e2e = tpot = None
    if content_times:
        ttft = content_times[0] - sent
        e2e = content_times[-1] - sent
        if output_tokens >= 2:
            tpot = (e2e - ttft) / (output_tokens - 1)
    record = EndpointRequestRecord(
        index=index,
        ok=True,
        http_status=200,
        ttft_seconds=ttft,
        tpot_seconds=tpot,
        e2e_seconds=e2e,
        output_tokens=output_tokens,
        output_tokens_source="usage" if from_usage else "content_chunks",
        content_chunks=len(content_times),
        prompt_tokens=prompt_tokens,
        usage_implausible="; ".join(p for p in (problem, prompt_problem) if p) or None,
    )
    itl_seconds = [later - earlier for earlier, later in zip(content_times, content_times[1:], strict=False)]
    return _Outcome(record=record, itl_seconds=itl_seconds)


def _request_body(settings: EndpointProbeSettings, prompt: str) -> dict[str, Any]:
    # max_tokens rather than max_completion_tokens: vLLM, SGLang, TGI and OpenAI's chat models accept it.
    return {
        "model": settings.model,
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": settings.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def stream_one_request(
    session: requests.Session,
    *,
    settings: EndpointProbeSettings,
    headers: dict[str, str],
    prompt: str,
    index: int,
) -> _Outcome:
    """Send one streamed chat completion and time it; failures come back as records, never raised."""
    timeout_seconds = settings.timeout_seconds
    sent = time.perf_counter()
    # One deadline for the whole request: a server dripping its headers a byte at a time never trips the
    # per-read timeout, so the deadline shuts the socket down (costmodel.http_deadline).
    with request_deadline(timeout_seconds) as watch:
        outcome = _post_and_read(session, settings=settings, headers=headers, prompt=prompt, index=index, sent=sent)
    if watch.fired and not outcome.record.ok:
        fault = StreamFault(ERROR_KIND_TIMEOUT, f"request ran past {timeout_seconds} s (headers and body together)")
        return _failed(index, fault)
    return outcome


def _post_and_read(session: requests.Session, *, settings: EndpointProbeSettings, headers: dict[str, str],
                   prompt: str, index: int, sent: float) -> _Outcome:
    timeout_seconds = settings.timeout_seconds
    try:
        response = session.post(
            settings.chat_completions_url,
            json=_request_body(settings, prompt),
            headers=headers,
            stream=True,
            timeout=(timeout_seconds, timeout_seconds),  # (connect, between bytes)
            allow_redirects=False,  # the key and the numbers belong to the host given, not to a Location
        )
    except requests.Timeout as exc:
        return _failed(
            index, StreamFault(ERROR_KIND_TIMEOUT, f"no response within {timeout_seconds} s: {exc}")
        )
    except requests.RequestException as exc:
        return _failed(index, StreamFault(ERROR_KIND_CONNECTION, f"could not connect: {exc}"))
    with response:
        try:
            _check_response(response)
            return _read_stream(response, sent=sent, timeout_seconds=timeout_seconds, max_tokens=settings.max_tokens,
                                prompt_tokens_sent=settings.prompt_tokens, index=index)
        except StreamFault as fault:
            return _failed(index, fault)


def _check_response(response: requests.Response) -> None:
    """StreamFault unless the response is a 200 event stream; a redirect is refused, never followed."""
    if response.is_redirect:
        raise StreamFault(
            ERROR_KIND_REDIRECT,
            f"HTTP {response.status_code} redirect to {response.headers.get('location', '?')!r} not followed "
            "(the key is sent only to the URL given); pass the final URL as --url",
            http_status=response.status_code,
        )
    if response.status_code != 200:
        raise StreamFault(f"http_{response.status_code}", _error_body(response), http_status=response.status_code)
    content_type = response.headers.get("content-type", "")
    if "text/event-stream" not in content_type:
        raise StreamFault(ERROR_KIND_MALFORMED, f"content-type is {content_type!r}, not text/event-stream")


def _error_body(response: requests.Response) -> str:
    try:
        raw = response.raw.read(_ERROR_BODY_BYTES, decode_content=True)
    except (urllib3.exceptions.HTTPError, OSError):
        raw = b""
    text = raw.decode("utf-8", errors="replace").strip()
    return f"HTTP {response.status_code}: {text[:500]}" if text else f"HTTP {response.status_code}"


def _failed(index: int, fault: StreamFault) -> _Outcome:
    record = EndpointRequestRecord(
        index=index, ok=False, error_kind=fault.kind, http_status=fault.http_status
    )
    return _Outcome(record=record, error_message=str(fault))
