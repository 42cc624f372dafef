"""Schema of an endpoint load sweep (`probe-endpoint --concurrency 1,2,4` or `--rates 1,2`).

A sweep is a list of load levels; each level keeps every request's raw timings so the step-time model
(costmodel.measurements.endpoint_fit) can be fitted to them. Times are seconds from the level's start
(time.perf_counter on the client): `sent_seconds` when the request left, `chunk_seconds` when each
content chunk arrived (the first is the first token, the last the last token).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from costmodel.measurements.endpoint_result import MAX_TOKENS_PER_REQUEST, TokenSource
from costmodel.strict import StrictModel

SweepMode = Literal["concurrency", "rate"]


class SweepSettings(StrictModel):
    """What every level of the sweep sent. Holds the *name* of the API-key variable, never the key."""

    base_url: str
    model: str
    mode: SweepMode = Field(description="concurrency: closed loop, N in flight; rate: open-loop Poisson arrivals")
    levels_planned: list[float] = Field(description="concurrency values or request rates (requests/s), in order")
    requests_per_level: int = Field(gt=0)
    prompt_tokens: int = Field(gt=0)
    max_tokens: int = Field(gt=0)
    timeout_seconds: float = Field(gt=0)
    api_key_env: str
    arrival_seed: int = Field(description="seed of the Poisson arrival times (rate mode)")


class SweepRequest(StrictModel):
    """One request of one level, with its raw timings (seconds from the level's start)."""

    index: int
    ok: bool
    error_kind: str | None = None
    sent_seconds: float
    chunk_seconds: list[float] = Field(default_factory=list, description="arrival of each content chunk")
    prompt_tokens: int | None = Field(None, ge=0, le=MAX_TOKENS_PER_REQUEST,
                                      description="usage.prompt_tokens when the server sent a plausible one")
    output_tokens: int = 0
    output_tokens_source: TokenSource = "content_chunks"

    @property
    def first_token_seconds(self) -> float | None:
        """Arrival of the first content chunk, or None when none came."""
        return self.chunk_seconds[0] if self.chunk_seconds else None

    @property
    def last_token_seconds(self) -> float | None:
        """Arrival of the last content chunk, or None when none came."""
        return self.chunk_seconds[-1] if self.chunk_seconds else None


class SweepLevel(StrictModel):
    """One load level: its value (concurrency or requests/s), its wall time and every request."""

    mode: SweepMode
    value: float = Field(gt=0)
    wall_seconds: float = Field(ge=0)
    requests_ok: int
    requests_failed: int
    ttft_p50_seconds: float | None
    ttft_p90_seconds: float | None
    tpot_p50_seconds: float | None
    tpot_p90_seconds: float | None
    output_tokens_per_second: float
    requests: list[SweepRequest]


class EndpointSweep(StrictModel):
    """The `probe-endpoint` sweep file, rewritten (atomically) after every finished level."""

    kind: Literal["endpoint_sweep"] = "endpoint_sweep"
    settings: SweepSettings
    started_at_utc: str
    complete: bool = Field(description="False while running or when interrupted: finished levels only")
    api_key_sent: bool
    levels: list[SweepLevel]
