"""A disaggregated layout under closed-loop clients: the fixed point of send times against its two limits.

One client: requests never overlap, so request k is sent when request k - 1 finishes and every request sees an
idle layout (the same latency as a lone request). As many clients as requests: everyone is sent at 0, the same
run as `disaggregated_times` with zero arrivals.
"""

from __future__ import annotations

import numpy as np
import pytest

from costmodel.errors import CostmodelError
from costmodel.serving import build_replica
from costmodel.serving.disaggregated import DisaggregatedLayout, disaggregated_times, kv_link
from costmodel.serving.disaggregated_closed_loop import closed_loop_disaggregated


@pytest.fixture(scope="module")
def layout() -> DisaggregatedLayout:
    replica = build_replica("llama-3.1-8b", "h100-sxm", gpus=1, weight_dtype="fp8", kv_dtype="fp8")
    return DisaggregatedLayout(prefill=replica, decode=replica, prefill_instances=1, decode_instances=1,
                               link=kv_link(replica, replica))


def test_one_client_sends_each_request_when_the_last_finishes(layout: DisaggregatedLayout) -> None:
    n, prompts, outputs = 6, np.full(6, 1024), np.full(6, 64)
    lone = disaggregated_times(layout, arrival_seconds=np.zeros(1), prompt_tokens=prompts[:1], output_tokens=outputs[:1])
    latency = float(lone.finish_seconds[0])
    run = closed_loop_disaggregated(layout, concurrency=1, prompt_tokens=prompts, output_tokens=outputs)
    assert run.send_seconds == pytest.approx(latency * np.arange(n), rel=1e-9)
    assert run.ttft_seconds == pytest.approx(np.full(n, float(lone.landed_seconds[0])), rel=1e-9)
    assert run.output_tokens_per_second == pytest.approx(n * 64 / (n * latency), rel=1e-9)


def test_as_many_clients_as_requests_is_everyone_at_zero(layout: DisaggregatedLayout) -> None:
    prompts, outputs = np.full(8, 2048), np.full(8, 128)
    flood = disaggregated_times(layout, arrival_seconds=np.zeros(8), prompt_tokens=prompts, output_tokens=outputs)
    run = closed_loop_disaggregated(layout, concurrency=8, prompt_tokens=prompts, output_tokens=outputs)
    assert run.passes == 1 and not run.send_seconds.any()
    assert run.output_tokens_per_second == pytest.approx(8 * 128 / float(flood.finish_seconds.max()), rel=1e-12)


def test_refuses_a_client_count_that_is_not_a_positive_integer(layout: DisaggregatedLayout) -> None:
    with pytest.raises(CostmodelError, match="concurrency"):
        closed_loop_disaggregated(layout, concurrency=0, prompt_tokens=np.full(2, 8), output_tokens=np.full(2, 8))
