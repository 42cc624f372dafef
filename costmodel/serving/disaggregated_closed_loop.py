"""A disaggregated deployment under a closed loop of N clients (genai-perf / vLLM bench `--concurrency N`).

Each client sends its next request when its last one finishes, so request i (in send order) leaves at the
finish of the request N places before it in finish order; the first N leave at 0 (`closed_loop_send_seconds`,
as for one replica, `serving/closed_loop.py`). An aggregated replica runs that as a queue capped at N running
sequences; here the N requests in flight are spread over two pools and a link, so the send times are found
as a fixed point instead: start with every request sent at 0, simulate the xPyD layout
(`disaggregated.disaggregated_times`), take each request's send time from those finishes, and repeat until no
send time moves by more than `TOLERANCE_SECONDS` (at most n + 1 passes, else an error). Reported as the suites
report it: output tokens over the first send to the last token (ramp-up and drain included), and TTFT / TPOT
counted from each request's send.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costmodel.errors import CostmodelError
from costmodel.serving.closed_loop import check_concurrency, closed_loop_send_seconds
from costmodel.serving.disaggregated import DisaggregatedLayout, FirstToken, disaggregated_times
from costmodel.serving.engine_io import KvPolicy
from costmodel.serving.replica import MAX_NUM_SEQS

TOLERANCE_SECONDS = 1e-6


@dataclass(frozen=True, kw_only=True)
class ClosedLoopDisaggregated:
    """Per request (send order) and the run's output throughput; `passes` of the fixed point."""

    send_seconds: np.ndarray
    ttft_seconds: np.ndarray
    tpot_seconds: np.ndarray
    output_tokens_per_second: float
    passes: int


def closed_loop_disaggregated(
    layout: DisaggregatedLayout, *, concurrency: int, prompt_tokens: np.ndarray, output_tokens: np.ndarray,
    kv_policy: KvPolicy = "preempt", max_num_seqs: int = MAX_NUM_SEQS, first_token: FirstToken = "landed",
) -> ClosedLoopDisaggregated:
    """Serve the requests with `concurrency` clients in flight (module docstring)."""
    check_concurrency(concurrency)
    prompts, outputs = np.asarray(prompt_tokens, dtype=np.int64), np.asarray(output_tokens, dtype=np.int64)
    n = len(prompts)
    sent, passes, moved = np.zeros(n), 0, np.inf
    while moved > TOLERANCE_SECONDS:
        if passes > n:
            raise CostmodelError(f"closed-loop send times did not settle in {n + 1} passes")
        times = disaggregated_times(layout, arrival_seconds=sent, prompt_tokens=prompts, output_tokens=outputs,
                                    kv_policy=kv_policy, max_num_seqs=max_num_seqs, first_token=first_token)
        if times.rejected.any():
            raise CostmodelError(f"{int(times.rejected.sum())} requests do not fit the layout's KV memory")
        following = closed_loop_send_seconds(times.finish_seconds, concurrency=concurrency)
        moved = float(np.max(np.abs(following - sent)))
        sent, passes = following, passes + 1
    ttft = times.first_token_seconds - sent
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(outputs > 1, (times.finish_seconds - times.first_token_seconds) / (outputs - 1), np.nan)
    duration = max(float(times.finish_seconds.max()) - float(sent.min()), 1e-12)
    return ClosedLoopDisaggregated(send_seconds=sent, ttft_seconds=ttft, tpot_seconds=tpot,
                                   output_tokens_per_second=float(outputs.sum()) / duration, passes=passes)
