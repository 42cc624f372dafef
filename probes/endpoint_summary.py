"""Turn per-request outcomes of the endpoint probe into the EndpointProbeResult summary."""

from __future__ import annotations

import platform
from collections import Counter
from collections.abc import Sequence
from typing import Literal, Protocol

import numpy as np
import requests

from costmodel.measurements.endpoint_result import (
    EndpointProbeResult,
    EndpointProbeSettings,
    EndpointRequestRecord,
)

PERCENTILES = (50, 90, 99)


class OutcomeLike(Protocol):
    """What summarize needs of one measured request (probes.endpoint._Outcome)."""

    record: EndpointRequestRecord
    itl_seconds: list[float]
    error_message: str | None


def latency_percentiles(values_seconds: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    """p50, p90, p99 with numpy's linear interpolation (as vLLM's benchmark); Nones when empty."""
    if len(values_seconds) == 0:
        return None, None, None
    p50, p90, p99 = np.percentile(np.asarray(values_seconds, dtype=float), PERCENTILES)
    return float(p50), float(p90), float(p99)


def _token_source(
    records: list[EndpointRequestRecord],
) -> Literal["usage", "content_chunks", "mixed", "none"]:
    sources = {r.output_tokens_source for r in records}
    if not sources:
        return "none"
    return sources.pop() if len(sources) == 1 else "mixed"


def _notes(
    settings: EndpointProbeSettings, token_source: str, empty_ok: int, implausible: list[EndpointRequestRecord]
) -> list[str]:
    notes = [
        f"prompt: ~{settings.prompt_tokens} tokens of random common English words (about one token each "
        "in the cl100k/o200k and Llama-3 vocabularies) plus a short instruction; the chat template adds "
        "more; prompt_tokens_mean is the server's own count when it sends usage",
        "times: time.perf_counter() when bytes arrive, before parsing; events read together share a time",
        "TTFT: sent -> first chunk with content; E2E: sent -> last chunk with content; "
        "TPOT = (E2E - TTFT) / (N - 1), requests with N < 2 left out; ITL: gaps between content chunks",
        f"timeout: a request fails as 'timeout' after {settings.timeout_seconds} s without a byte, or "
        f"when a chunk arrives more than {settings.timeout_seconds} s after sending",
    ]
    if token_source in ("content_chunks", "mixed"):
        notes.append(
            "output tokens: some responses had no usage, so their tokens are counted as content chunks "
            "(undercounts when a chunk carries several tokens; TPOT is then too high)"
        )
    if empty_ok:
        notes.append(f"{empty_ok} successful request(s) streamed no content: no TTFT/E2E for them")
    if implausible:
        notes.append(
            f"{len(implausible)} request(s) had implausible usage counts, not used (tokens counted as content "
            f"chunks instead), e.g. {implausible[0].usage_implausible}"
        )
    return notes


def summarize(
    settings: EndpointProbeSettings,
    outcomes: Sequence[OutcomeLike],
    *,
    api_key_sent: bool,
    started_at_utc: str,
    wall_seconds: float,
) -> EndpointProbeResult:
    """Aggregate outcomes (already redacted) into counts, error kinds and p50/p90/p99 latencies."""
    records = [o.record for o in outcomes]
    ok = [r for r in records if r.ok]
    errors_by_kind = Counter(r.error_kind or "unknown" for r in records if not r.ok)
    error_examples: dict[str, str] = {}
    for outcome in outcomes:
        kind = outcome.record.error_kind
        if kind and kind not in error_examples:
            error_examples[kind] = outcome.error_message or ""
    ttft = [r.ttft_seconds for r in ok if r.ttft_seconds is not None]
    tpot = [r.tpot_seconds for r in ok if r.tpot_seconds is not None]
    e2e = [r.e2e_seconds for r in ok if r.e2e_seconds is not None]
    itl = [gap for o in outcomes if o.record.ok for gap in o.itl_seconds]
    prompt_counts = [r.prompt_tokens for r in ok if r.prompt_tokens is not None]
    output_tokens = sum(r.output_tokens for r in ok)
    implausible = [r for r in ok if r.usage_implausible is not None]
    token_source = _token_source(ok)
    ttft_p = latency_percentiles(ttft)
    tpot_p = latency_percentiles(tpot)
    itl_p = latency_percentiles(itl)
    e2e_p = latency_percentiles(e2e)
    return EndpointProbeResult(
        settings=settings,
        api_key_sent=api_key_sent,
        started_at_utc=started_at_utc,
        wall_seconds=wall_seconds,
        requests_ok=len(ok),
        requests_failed=len(records) - len(ok),
        errors_by_kind=dict(sorted(errors_by_kind.items())),
        error_examples=dict(sorted(error_examples.items())),
        output_tokens=output_tokens,
        output_tokens_source=token_source,
        output_tokens_per_second=output_tokens / wall_seconds if wall_seconds > 0 else 0.0,
        prompt_tokens_mean=float(np.mean(prompt_counts)) if prompt_counts else None,
        itl_samples=len(itl),
        ttft_p50_seconds=ttft_p[0],
        ttft_p90_seconds=ttft_p[1],
        ttft_p99_seconds=ttft_p[2],
        tpot_p50_seconds=tpot_p[0],
        tpot_p90_seconds=tpot_p[1],
        tpot_p99_seconds=tpot_p[2],
        itl_p50_seconds=itl_p[0],
        itl_p90_seconds=itl_p[1],
        itl_p99_seconds=itl_p[2],
        e2e_p50_seconds=e2e_p[0],
        e2e_p90_seconds=e2e_p[1],
        e2e_p99_seconds=e2e_p[2],
        requests_implausible_usage=len(implausible),
        notes=_notes(settings, token_source, empty_ok=sum(r.ttft_seconds is None for r in ok), implausible=implausible),
        environment={
            "python": platform.python_version(),
            "requests": requests.__version__,
            "platform": platform.platform(terse=True),
        },
        request_records=records,
    )
