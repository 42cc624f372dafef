"""Streaming-latency probe of an OpenAI-compatible `/v1/chat/completions` endpoint.

K requests are shared by N worker threads (N in flight at once); each is one streamed, timed request
(`probes.endpoint_stream`). Definitions of TTFT, TPOT, ITL and E2E: costmodel/measurements/endpoint_result.py.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import UTC, datetime

import requests

from costmodel.http_deadline import deadline_session
from costmodel.measurements.endpoint_result import EndpointProbeResult, EndpointProbeSettings
from costmodel.units import printable
from probes.endpoint_stream import _Outcome, stream_one_request
from probes.endpoint_summary import summarize

__all__ = ["probe_endpoint", "redact", "stream_one_request", "synthetic_prompt"]

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
