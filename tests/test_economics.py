"""Hand-computed checks of each self-host formula, and the properties the economics must keep."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costmodel.decision.economics import (
    HOURS_PER_MONTH,
    break_even_tokens_per_month,
    break_even_utilization,
    diurnal_profile,
    normalized_profile,
    plan_hybrid,
    size_self_host,
)
from costmodel.errors import CostmodelError


def test_size_self_host_by_hand():
    # Peak 25 req/s, 10 req/s per replica at the SLO -> ceil(2.5) = 3 replicas of 2 GPUs at $2.50/GPU-h.
    cost = size_self_host(mean_requests_per_second=10, peak_requests_per_second=25, capacity_requests_per_second=10,
                          tokens_per_request=1000, gpus_per_replica=2, usd_per_gpu_hour=2.5, ops_usd_per_month=1000)
    assert cost.replicas == 3 and cost.gpus == 6
    # 6 GPUs x $2.50 x 730.5 h = $10,957.50; + $1,000 ops = $11,957.50.
    assert HOURS_PER_MONTH == 730.5
    assert cost.gpu_usd_per_month == pytest.approx(6 * 2.5 * 730.5)
    assert cost.usd_per_month == pytest.approx(10957.5 + 1000)
    # Tokens/month = 10 req/s x 1000 tokens x 2,629,800 s = 2.6298e10 -> $/M = 11957.5 / 26298 = 0.4547.
    assert cost.usd_per_mtok == pytest.approx(11957.5 / (10 * 1000 * 730.5 * 3600 / 1e6))
    # Utilization = 10 / (3 x 10) = 1/3.
    assert cost.utilization == pytest.approx(1 / 3)
    # At 100% (ops included): $11,957.50 / (3 replicas x 10,000 tokens/s x 2,629,800 s / 1e6) = $0.1516/M.
    assert cost.usd_per_mtok_at_full_utilization == pytest.approx(11957.5 / (3 * 10_000 * 2_629_800 / 1e6))


def test_break_even_utilization_by_hand_and_identity():
    # $2/GPU-h, 1 GPU, 2,000 tokens/s at the SLO, API at $0.50/M: 2 x 1e6 / (3600 x 2000 x 0.5) = 0.5556.
    u = break_even_utilization(usd_per_gpu_hour=2.0, gpus_per_replica=1, tokens_per_second_per_replica=2000,
                               api_usd_per_mtok=0.5)
    assert u == pytest.approx(2e6 / (3600 * 2000 * 0.5))
    cost = size_self_host(mean_requests_per_second=1, peak_requests_per_second=1, capacity_requests_per_second=2,
                          tokens_per_request=1000, gpus_per_replica=1, usd_per_gpu_hour=2.0)
    # Property from the issue: u* = self-host $/M at 100% / API $/M.
    assert u == pytest.approx(cost.usd_per_mtok_at_full_utilization / 0.5)
    # With $500/month ops on one replica ($1,461 of GPU): u* grows by (1 + 500 / 1461).
    with_ops = break_even_utilization(usd_per_gpu_hour=2.0, gpus_per_replica=1, tokens_per_second_per_replica=2000,
                                      api_usd_per_mtok=0.5, ops_usd_per_month=500, replicas=1)
    assert with_ops == pytest.approx(u * (1 + 500 / (2.0 * 730.5)))
    cost_ops = size_self_host(mean_requests_per_second=1, peak_requests_per_second=1, capacity_requests_per_second=2,
                              tokens_per_request=1000, gpus_per_replica=1, usd_per_gpu_hour=2.0, ops_usd_per_month=500)
    assert with_ops == pytest.approx(cost_ops.usd_per_mtok_at_full_utilization / 0.5)


def test_break_even_volume_by_hand():
    # One replica costs $1,000/month and serves 1e9 tokens/month at peak sizing; API $2/M; ops $0.
    # API cost at volume V = 2 V / 1e6 -> equals $1,000 at V = 5e8 tokens (inside the first step).
    v = break_even_tokens_per_month(replica_usd_per_month=1000, ops_usd_per_month=0,
                                    tokens_per_month_per_replica_at_peak=1e9, api_usd_per_mtok=2.0)
    assert v == pytest.approx(5e8)
    # API at $0.50/M: one replica's full volume costs $500 < $1,000 at the API -> never cheaper.
    assert break_even_tokens_per_month(replica_usd_per_month=1000, ops_usd_per_month=0,
                                       tokens_per_month_per_replica_at_peak=1e9, api_usd_per_mtok=0.5) is None
    # With $3,000 ops: (1000 + 3000) x 1e6 / 2 = 2e9 > 1e9 -> step 2: (2000 + 3000) / 2 x 1e6 = 2.5e9 > 2e9 ->
    # step 3: 6000/2 = 3e9 <= 3e9 -> 3e9.
    assert break_even_tokens_per_month(replica_usd_per_month=1000, ops_usd_per_month=3000,
                                       tokens_per_month_per_replica_at_peak=1e9,
                                       api_usd_per_mtok=2.0) == pytest.approx(3e9)


def test_profiles():
    flat = normalized_profile([5] * 24)
    assert flat == tuple([1.0] * 24)
    for ratio in (1.0, 1.5, 2.0, 3.0, 6.0):
        prof = diurnal_profile(peak_to_mean=ratio)
        assert sum(prof) / 24 == pytest.approx(1.0)
        assert max(prof) == pytest.approx(ratio, rel=1e-6)
    with pytest.raises(CostmodelError, match="peak_to_mean"):
        diurnal_profile(peak_to_mean=0.5)
    with pytest.raises(CostmodelError, match="24"):
        normalized_profile([1, 2, 3])


def test_hybrid_by_hand():
    # 12 hours at 2 req/s and 12 hours at 0 (mean 1 req/s); one replica serves 1 req/s and costs $1,000.
    # API costs $0.001/request. k=0: all 2 x 3600 x 12 x 30.4375 = 2,629,800 requests x $0.001 = $2,629.80.
    # k=1: $1,000 + half overflow $1,314.90 = $2,314.90. k=2: $2,000. -> best k=2.
    profile = [2.0] * 12 + [0.0] * 12
    plan = plan_hybrid(mean_requests_per_second=1.0, hourly_profile=profile, capacity_requests_per_second=1.0,
                       replica_usd_per_month=1000, ops_usd_per_month=0, api_usd_per_request=0.001,
                       max_base_replicas=3)
    assert plan.base_replicas == 2 and plan.usd_per_month == pytest.approx(2000)
    cheap_api = plan_hybrid(mean_requests_per_second=1.0, hourly_profile=profile, capacity_requests_per_second=1.0,
                            replica_usd_per_month=1000, ops_usd_per_month=0, api_usd_per_request=0.0005,
                            max_base_replicas=3)
    # k=0: $1,314.90; k=1: 1000 + 657.45 = $1,657.45; k=2: $2,000 -> all API.
    assert cheap_api.base_replicas == 0 and cheap_api.usd_per_month == pytest.approx(1314.9)
    assert cheap_api.overflow_fraction == pytest.approx(1.0)


@settings(max_examples=50, deadline=None)
@given(mean=st.floats(0.01, 50), capacity=st.floats(0.1, 20), price=st.floats(0.2, 10))
def test_property_cost_per_mtok_falls_with_volume_until_new_replica(mean, capacity, price):
    kwargs = {"capacity_requests_per_second": capacity, "tokens_per_request": 800, "gpus_per_replica": 2,
              "usd_per_gpu_hour": price}
    low = size_self_host(mean_requests_per_second=mean, peak_requests_per_second=mean * 2, **kwargs)
    high = size_self_host(mean_requests_per_second=mean * 1.01, peak_requests_per_second=mean * 2.02, **kwargs)
    if high.replicas == low.replicas:
        assert high.usd_per_mtok < low.usd_per_mtok
    else:
        assert high.usd_per_month > low.usd_per_month
    cheaper = size_self_host(mean_requests_per_second=mean, peak_requests_per_second=mean * 2,
                             **{**kwargs, "usd_per_gpu_hour": price * 0.8})
    assert cheaper.usd_per_month <= low.usd_per_month  # a cheaper GPU never raises self-host cost


def test_errors():
    with pytest.raises(CostmodelError, match="capacity"):
        size_self_host(mean_requests_per_second=1, peak_requests_per_second=1, capacity_requests_per_second=0,
                       tokens_per_request=1, gpus_per_replica=1, usd_per_gpu_hour=1)
    assert math.isinf(break_even_utilization(usd_per_gpu_hour=1, gpus_per_replica=1, tokens_per_second_per_replica=1,
                                             api_usd_per_mtok=0))
