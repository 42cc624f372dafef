"""Load sweep of an OpenAI-compatible endpoint: one level per concurrency (closed loop) or per request
rate (open loop, Poisson arrivals), every request's raw timings kept, the file rewritten after each level.

Closed loop: N worker threads share the level's requests, each sending the next as soon as its last one
ends (N in flight). Open loop: request k is sent at the k-th arrival of a Poisson process of the given
rate (exponential gaps, seeded), whether or not earlier ones have finished.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import UTC, datetime
from pathlib import Path

import requests

from costmodel.fileio import atomic_write_text
from costmodel.http_deadline import deadline_session
from costmodel.measurements.endpoint_result import EndpointProbeSettings
from costmodel.measurements.endpoint_sweep import EndpointSweep, SweepLevel, SweepRequest, SweepSettings
from probes.endpoint import synthetic_prompt
from probes.endpoint_stream import _Outcome, stream_one_request
from probes.endpoint_summary import latency_percentiles

# Threads that may wait on requests at once in open-loop mode (one per request in flight).
MAX_OPEN_LOOP_THREADS = 1024

LevelCallback = Callable[[SweepLevel, int, int], None]  # (finished level, its position, levels planned)


def poisson_arrivals_seconds(*, rate_per_second: float, count: int, rng: random.Random) -> list[float]:
    """Send times of `count` requests of a Poisson process: cumulative exponential gaps of mean 1/rate."""
    times, now = [], 0.0
    for _ in range(count):
        now += rng.expovariate(rate_per_second)
        times.append(now)
    return times


def _sweep_request(outcome: _Outcome, *, sent_seconds: float) -> SweepRequest:
    record = outcome.record
    chunks: list[float] = []
    if record.ok and record.ttft_seconds is not None:
        chunks.append(sent_seconds + record.ttft_seconds)
        for gap in outcome.itl_seconds:
            chunks.append(chunks[-1] + gap)
    return SweepRequest(
        index=record.index,
        ok=record.ok,
        error_kind=record.error_kind,
        sent_seconds=sent_seconds,
        chunk_seconds=chunks,
        prompt_tokens=record.prompt_tokens,
        output_tokens=record.output_tokens,
        output_tokens_source=record.output_tokens_source,
    )


def _level_summary(mode: str, value: float, rows: list[SweepRequest], wall_seconds: float) -> SweepLevel:
    ok = [r for r in rows if r.ok and r.chunk_seconds]
    ttft = [r.chunk_seconds[0] - r.sent_seconds for r in ok]
    tpot = [(r.chunk_seconds[-1] - r.chunk_seconds[0]) / (r.output_tokens - 1) for r in ok if r.output_tokens >= 2]
    ttft_p, tpot_p = latency_percentiles(ttft), latency_percentiles(tpot)
    tokens = sum(r.output_tokens for r in ok)
    return SweepLevel(
        mode=mode,  # type: ignore[arg-type]
        value=value,
        wall_seconds=wall_seconds,
        requests_ok=sum(r.ok for r in rows),
        requests_failed=sum(not r.ok for r in rows),
        ttft_p50_seconds=ttft_p[0],
        ttft_p90_seconds=ttft_p[1],
        tpot_p50_seconds=tpot_p[0],
        tpot_p90_seconds=tpot_p[1],
        output_tokens_per_second=tokens / wall_seconds if wall_seconds > 0 else 0.0,
        requests=sorted(rows, key=lambda r: r.index),
    )


def run_level(
    settings: SweepSettings, *, value: float, headers: dict[str, str], rng: random.Random
) -> SweepLevel:
    """Run one level (closed loop of `value` in flight, or Poisson at `value` requests/s)."""
    count = settings.requests_per_level
    closed = settings.mode == "concurrency"
    arrivals = None if closed else poisson_arrivals_seconds(rate_per_second=value, count=count, rng=rng)
    workers = min(int(value), count) if closed else min(count, MAX_OPEN_LOOP_THREADS)
    probe_settings = EndpointProbeSettings(
        base_url=settings.base_url, model=settings.model, concurrency=max(1, workers), requests_total=count,
        prompt_tokens=settings.prompt_tokens, max_tokens=settings.max_tokens,
        timeout_seconds=settings.timeout_seconds, api_key_env=settings.api_key_env,
    )
    prompts = [synthetic_prompt(prompt_tokens=settings.prompt_tokens, rng=random.Random(rng.getrandbits(64)))
               for _ in range(count)]
    local = threading.local()
    sessions: list[requests.Session] = []
    lock = threading.Lock()
    start = time.perf_counter()

    def worker(index: int) -> SweepRequest:
        session = getattr(local, "session", None)
        if session is None:
            session = local.session = deadline_session()
            with lock:
                sessions.append(session)
        if arrivals is not None:
            delay = start + arrivals[index] - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        sent = time.perf_counter() - start
        outcome = stream_one_request(session, settings=probe_settings, headers=headers, prompt=prompts[index],
                                     index=index)
        return _sweep_request(outcome, sent_seconds=sent)

    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="probe-sweep")
    rows: list[SweepRequest] = []
    try:
        futures = [pool.submit(worker, index) for index in range(count)]
        rows.extend(future.result() for future in as_completed(futures))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # Ctrl-C: drop queued requests
        for session in sessions:
            session.close()
    return _level_summary(settings.mode, value, rows, time.perf_counter() - start)


def run_sweep(
    settings: SweepSettings,
    *,
    api_key: str | None,
    out: Path | None,
    on_level: LevelCallback | None = None,
) -> EndpointSweep:
    """Run every planned level in order; after each, rewrite `out` atomically (complete=False until the
    last), so an interrupted sweep keeps its finished levels. Failed requests are recorded, never raised."""
    headers = {"Accept": "text/event-stream", "Accept-Encoding": "identity"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    rng = random.Random(settings.arrival_seed)
    started = datetime.now(UTC).isoformat(timespec="seconds")
    levels: list[SweepLevel] = []
    sweep = EndpointSweep(settings=settings, started_at_utc=started, complete=False,
                          api_key_sent=bool(api_key), levels=levels)
    for position, value in enumerate(settings.levels_planned):
        levels.append(run_level(settings, value=value, headers=headers, rng=rng))
        done = position == len(settings.levels_planned) - 1
        sweep = EndpointSweep(settings=settings, started_at_utc=started, complete=done,
                              api_key_sent=bool(api_key), levels=list(levels))
        if out is not None:
            atomic_write_text(out, sweep.model_dump_json(indent=1) + "\n")
        if on_level is not None:
            on_level(levels[-1], position, len(settings.levels_planned))
    return sweep
