"""The zero-load run of a capacity search: every request alone on the replica, and why no load meets the SLO
when even that breaks a limit (serving/capacity.py, step 1)."""

from __future__ import annotations

import numpy as np

from costmodel.scenario.slo import SloLimit
from costmodel.serving.engine_io import KvPolicy
from costmodel.serving.replica import Replica
from costmodel.serving.simulation import run_requests
from costmodel.serving.summary import FinishedRun

ZERO_LOAD_REQUESTS = 120  # requests the zero-load run checks (the search's sample)
_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "e2e": "E2E"}


def zero_load_result(
    replica: Replica, *, prompts: np.ndarray, outputs: np.ndarray, prefix_cached_fraction: float, kv_policy: KvPolicy
) -> FinishedRun:
    """Every request alone on the replica: all arrive at 0, one sequence runs at a time (unsummarized: its
    readers take the trace)."""
    return run_requests(
        replica, arrival_seconds=np.zeros(len(prompts)), prompt_tokens=prompts, output_tokens=outputs,
        prefix_cached_fraction=prefix_cached_fraction, kv_policy=kv_policy, max_num_seqs=1,
    )


def zero_load_seconds(result: FinishedRun, limit: SloLimit) -> float:
    """A limit's metric at its percentile in a zero-load run, measured from admission (no queueing)."""
    trace = result.trace
    done = trace.completed
    ttft = trace.first_token_seconds[done] - trace.admitted_seconds[done]
    e2e = trace.finish_seconds[done] - trace.admitted_seconds[done]
    values = {"ttft": ttft, "e2e": e2e, "tpot": trace.values("tpot")}[limit.metric]
    return float(np.percentile(values, limit.percentile)) if values.size else 0.0


def _infeasible_reason(replica: Replica, limit: SloLimit, value: float, prompts: np.ndarray, outputs: np.ndarray) -> str:
    name = f"{_NAMES[limit.metric]} p{limit.percentile}"
    where = f"at batch 1 on {replica.gpus} x {replica.hardware_id}"
    if limit.metric == "ttft":
        tokens = int(np.percentile(prompts, limit.percentile))
        what = f"prefill of a {tokens}-token prompt (p{limit.percentile}) alone takes {value:.3g} s {where}"
    elif limit.metric == "tpot":
        what = f"a decode step alone takes {value:.3g} s {where}"
    else:
        what = f"a request alone takes {value:.3g} s end to end {where} (p{limit.percentile})"
    return f"{what} > {name} limit {limit.limit_seconds:.3g} s: no load meets it"


def zero_load_reason(replica: Replica, limits: tuple[SloLimit, ...], minimum: dict[str, float],
                      alone: FinishedRun, *, prompts: np.ndarray, outputs: np.ndarray) -> str:
    """Why no load meets the SLO, from the zero-load run ("" when it does not show that)."""
    for limit in limits:
        if minimum[limit.key] > limit.limit_seconds:
            return _infeasible_reason(replica, limit, minimum[limit.key], prompts, outputs)
    rejected = int(alone.trace.rejected.sum())
    if rejected:
        checked = min(len(prompts), ZERO_LOAD_REQUESTS)
        share = rejected / checked
        return (f"{share:.1%} of requests can never fit in KV memory or the model's context "
                f"({rejected} of {checked}); shorten them or add GPUs")
    return ""
