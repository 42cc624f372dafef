"""A published closed-loop run split into its stages by Little's law, to say where its time went.

A closed loop of N clients (genai-perf `--concurrency N`) reports per-request means: time to first token, time
to second token, request latency, the request rate X and the output length. Little's law (requests in a stage =
X x the mean time spent in it) splits the N requests in flight into those waiting for their first token and
those decoding, and (latency - TTFT - time to second token) / (output - 2) is the decode step after the second
token. Two client counts on the same deployment then give the decode step's cost per extra decoding sequence,
and a saturated prefill pool of k workers gives each worker's time per prompt as k / X.

`DYNAMO_B200_26K`: the two B200 NVIDIA Dynamo 3P1D runs of `mode_reference_measurements.csv` (Llama 3.1 70B FP8,
26,000-token prompts), from ankdeshm/dynamo_disaag_serving_gke 14_workato_dynamo_benchmarking_llama70b.md,
commit 9e046976 (read 2026-12-02), section 4 'Empirical Benchmark Results': mean TTFT 7,513.46 / 13,144.97 ms,
mean time to second token 758.48 / 830.53 ms, mean request latency 22,611.73 / 36,457.78 ms, request throughput
0.70 / 0.85 req/s, OSL 983.90 / 983.10 tokens at concurrency 16 / 32.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class ClosedLoopReading:
    """One published closed-loop run's means (seconds, requests/s, tokens per request)."""

    concurrency: int
    ttft_seconds: float
    second_token_seconds: float  # mean gap from the first to the second token
    latency_seconds: float
    requests_per_second: float
    output_tokens: float

    @property
    def decoding_seconds(self) -> float:
        """Mean time from the second token to the last."""
        return self.latency_seconds - self.ttft_seconds - self.second_token_seconds

    @property
    def decode_step_seconds(self) -> float:
        """Mean gap between tokens after the second (output - 2 gaps)."""
        return self.decoding_seconds / (self.output_tokens - 2)

    @property
    def decoding_requests(self) -> float:
        """Requests past their second token, on average (Little's law)."""
        return self.requests_per_second * self.decoding_seconds

    @property
    def waiting_first_token_requests(self) -> float:
        """Requests not yet at their first token, on average (Little's law)."""
        return self.requests_per_second * self.ttft_seconds


def step_seconds_per_sequence(low: ClosedLoopReading, high: ClosedLoopReading) -> float:
    """The decode step's growth per extra decoding sequence between two client counts."""
    return (high.decode_step_seconds - low.decode_step_seconds) / (high.decoding_requests - low.decoding_requests)


DYNAMO_B200_26K = (
    ClosedLoopReading(concurrency=16, ttft_seconds=7.51346, second_token_seconds=0.75848, latency_seconds=22.61173,
                      requests_per_second=0.70, output_tokens=983.90),
    ClosedLoopReading(concurrency=32, ttft_seconds=13.14497, second_token_seconds=0.83053, latency_seconds=36.45778,
                      requests_per_second=0.85, output_tokens=983.10),
)
