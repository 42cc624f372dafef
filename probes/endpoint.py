"""Streaming-latency probe of an OpenAI-compatible `/v1/chat/completions` endpoint.

K requests are shared by N worker threads (N in flight at once). Each worker POSTs with stream=true and
stream_options.include_usage, reads the body with `read1` (returns whatever bytes have arrived, so events
are not held back to fill a buffer), and stamps each read with time.perf_counter() before decoding the
SSE events in it. Definitions of TTFT, TPOT, ITL and E2E: costmodel/measurements/endpoint_result.py.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import requests
import urllib3.exceptions

from costmodel.http_deadline import deadline_session, request_deadline
from costmodel.measurements.endpoint_result import (
    ERROR_KIND_CONNECTION,
    ERROR_KIND_MALFORMED,
    ERROR_KIND_MISSING_DONE,
    ERROR_KIND_REDIRECT,
    ERROR_KIND_TIMEOUT,
    EndpointProbeResult,
    EndpointProbeSettings,
    EndpointRequestRecord,
    implausible_prompt_tokens,
    implausible_usage,
)
from costmodel.units import printable
from probes.endpoint_summary import summarize
from probes.sse import SseDecoder, StreamFault, chunk_fields

# Frequent English nouns; with a leading space each is one token in the cl100k/o200k (OpenAI) and
# Llama-3 BPE vocabularies, so N of them make ~N prompt tokens.
_PROMPT_TEXT = (
    "time year people way day man thing woman life child world school state family student group "
    "country problem hand part place case week company system program question work government number "
    "night point home water room mother area money story fact month lot right study book eye job word "
    "business issue side kind head house service friend father power hour game line end member law car "
    "city community name president team minute idea kid body information back parent face level office "
    "door health person art war history party result change morning reason research girl guy moment air "
    "teacher force education"
)
_PROMPT_WORDS = tuple(_PROMPT_TEXT.split())
_INSTRUCTION = "\n\nWrite a long story that uses every word above."
_INSTRUCTION_TOKENS = 11  # the instruction above, counted with the cl100k tokenizer
_READ_BYTES = 65536
_ERROR_BODY_BYTES = 2048
_MIN_SECRET_FRAGMENT = 8  # redact any run of this many characters of the key, not just the whole key

ProgressCallback = Callable[[int, int, int], None]  # (requests done, requests total, requests failed)


def synthetic_prompt(*, prompt_tokens: int, rng: random.Random) -> str:
    """About `prompt_tokens` tokens: random common words, then an instruction to write at length.

    Random words per request keep prompts distinct, so a server's prefix cache cannot skip the prefill.
    """
    word_count = max(1, prompt_tokens - _INSTRUCTION_TOKENS)
    return " ".join(rng.choice(_PROMPT_WORDS) for _ in range(word_count)) + _INSTRUCTION


def redact(text: str, secret: str | None) -> str:
    """Replace the secret, and any fragment of it of 8+ characters (servers echo masked keys), by ***."""
    if not secret:
        return text
    text = text.replace(secret, "***")
    width = min(_MIN_SECRET_FRAGMENT, len(secret))
    for start in range(len(secret) - width + 1):
        text = text.replace(secret[start : start + width], "***")
    return text


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


def probe_endpoint(
    settings: EndpointProbeSettings,
    *,
    api_key: str | None,
    on_progress: ProgressCallback | None = None,
) -> EndpointProbeResult:
    """Run settings.requests_total requests, settings.concurrency at a time, and summarize them.

    Never raises for a failed request: each is filed under an error kind. Every message stored in the
    result passes through `redact`, so the key (or a server's masked echo of it) is not in the result.
    """
    headers = {"Accept": "text/event-stream", "Accept-Encoding": "identity"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    run_rng = random.Random(random.SystemRandom().getrandbits(64))  # fresh prompts each run
    prompts = [
        synthetic_prompt(prompt_tokens=settings.prompt_tokens, rng=random.Random(run_rng.getrandbits(64)))
        for _ in range(settings.requests_total)
    ]
    local = threading.local()
    sessions: list[requests.Session] = []
    sessions_lock = threading.Lock()

    def worker(index: int) -> _Outcome:
        session = getattr(local, "session", None)
        if session is None:  # one keep-alive session per worker thread (Session is not thread-safe)
            session = local.session = deadline_session()
            with sessions_lock:
                sessions.append(session)
        return stream_one_request(
            session, settings=settings, headers=headers, prompt=prompts[index], index=index
        )

    outcomes: list[_Outcome] = []
    started_at_utc = datetime.now(UTC).isoformat(timespec="seconds")
    start = time.perf_counter()
    workers = min(settings.concurrency, settings.requests_total)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="probe-endpoint")
    try:
        futures = [pool.submit(worker, index) for index in range(settings.requests_total)]
        for future in as_completed(futures):
            outcomes.append(future.result())
            if on_progress is not None:
                failed = sum(not o.record.ok for o in outcomes)
                on_progress(len(outcomes), settings.requests_total, failed)
    finally:
        # On Ctrl-C, drop the queued requests instead of waiting for all of them.
        pool.shutdown(wait=False, cancel_futures=True)
        for session in sessions:
            session.close()
    wall_seconds = time.perf_counter() - start
    outcomes.sort(key=lambda o: o.record.index)
    for outcome in outcomes:
        if outcome.error_message is not None:  # server text: no key, no terminal control or bidi characters
            outcome.error_message = printable(redact(outcome.error_message, api_key))
    return summarize(
        settings,
        outcomes,
        api_key_sent=bool(api_key),
        started_at_utc=started_at_utc,
        wall_seconds=wall_seconds,
    )
