"""Closed-loop load: N clients, each sending its next request when its last one finishes.

Benchmark suites drive a server this way (vLLM bench `--max-concurrency N`, GuideLLM's concurrent profile,
InferenceX sweeps): N requests are in flight at any time, so the load follows the server's speed instead of
an arrival rate. The simulator runs it as every request waiting at t = 0 with at most N running at once
(`simulate_requests(concurrency=N)`): under FCFS admission that is the same engine as N clients, because a
finishing request's client sends the next request at that instant and the queue is never empty. Each
request's send time is then the finish of the request N places before it in finish order (the first N are
sent at 0), and TTFT and E2E count from it, as the client measures them.

What it leaves out: the engine's per-request CPU cost (HTTP, tokenize) of a request sent mid-run overlaps
the running batch here, where a real slot would sit empty for it (one step at most per request).
Reported per GPU: output tokens/s over the run (ramp-up and drain included, as the suites report) and
tokens/s per user = 1 / mean TPOT (DESIGN.md's interactivity).
"""

from __future__ import annotations

import numpy as np

from costmodel.errors import CostmodelError

MAX_CONCURRENCY = 100_000


def check_concurrency(concurrency: int) -> None:
    """Refuse a client count that is not a positive integer (CostmodelError naming the flag)."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int | np.integer) or not (
            1 <= concurrency <= MAX_CONCURRENCY):
        raise CostmodelError(f"--concurrency must be an integer in 1..{MAX_CONCURRENCY:,} requests in flight "
                             f"(got {concurrency!r})")


def closed_loop_send_seconds(finish_seconds: np.ndarray, *, concurrency: int) -> np.ndarray:
    """When each request (in send order) left its client: 0 for the first `concurrency`, then the k-th
    finish time in order. A request that never ran (rejected: NaN) frees its client at once (time 0)."""
    finishes = np.sort(np.where(np.isnan(finish_seconds), 0.0, finish_seconds))
    sent = np.zeros(finish_seconds.size)
    later = finish_seconds.size - concurrency
    if later > 0:
        sent[concurrency:] = finishes[:later]
    return sent
