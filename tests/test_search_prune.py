"""The wave rule over a whole sorted queue (search/prune.py `WaveRule`) keeps exactly what the one-candidate rule
keeps, in order, ties at the K-th cost and the tokens/s front included; a `Shared` value is unpickled once per
process (search/shared.py)."""

from __future__ import annotations

import pickle
import random

import pytest

from costmodel.search.prune import TIE_USD, WaveRule, kth_cost, pruned
from costmodel.search.rows import Configuration
from costmodel.search.screen import ReplicaScreen, Screened
from costmodel.search.shared import Shared
from costmodel.search.space import Candidate


def _screened(rng: random.Random, index: int, costs: list[float]) -> Screened:
    step = rng.choice([0.0, 1e-3, 0.02, 0.05])  # the TPOT lower bound; 0.05 > the limit: not viable
    replica = ReplicaScreen(fits=rng.random() > 0.1, capacity_upper_requests_per_second=1.0,
                            decode_step_lower_seconds=step if step else 1e-4)
    lower = rng.choice(costs) + rng.choice([-TIE_USD, 0.0, TIE_USD / 2, TIE_USD, 0.02, rng.uniform(0, 50)])
    candidate = Candidate(model="m", hardware="h", gpus_per_replica=1, weight_dtype="bf16", kv_dtype="bf16",
                          offering=f"o{index}")
    return Screened(candidate=candidate, replica=replica, usd_per_gpu_hour=1.0, usd_per_month_lower=lower,
                    tokens_per_second_per_user_upper=rng.choice([10.0, 50.0, 100.0, rng.uniform(1, 200)]),
                    tpot_limit_seconds=0.04)


def _row(rng: random.Random, cost: float, index: int) -> Configuration:
    return Configuration(model="m", hardware="h", gpus_per_replica=1, weight_dtype="bf16", kv_dtype="bf16",
                         offering=f"r{index % 3}", engine="generic", scaling="fixed", usd_per_month=cost,
                         usd_per_mtok=1.0, tokens_per_second_per_user=rng.choice([10.0, 50.0, rng.uniform(1, 200)]),
                         ttft_p90_seconds=0.1, meets_slo=True, slo_status="meets")


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("keep_front", [False, True])
def test_settling_the_queue_keeps_what_the_one_candidate_rule_keeps(seed: int, keep_front: bool) -> None:
    rng = random.Random(seed)
    costs = [round(rng.uniform(10, 100), 2) for _ in range(rng.randint(0, 8))]
    rows = [_row(rng, c, i) for i, c in enumerate(costs)]
    queue = sorted((_screened(rng, i, costs or [50.0]) for i in range(60)), key=lambda s: s.usd_per_month_lower)
    queue = [s for s in queue if s.viable]
    top_k = rng.randint(1, 4)
    kth = kth_cost(rows, top_k=top_k)
    expected = [s for s in queue if not pruned(s, rows, kth_usd_per_month=kth, keep_front=keep_front)]
    rule = WaveRule(rows, top_k=top_k, keep_front=keep_front)
    assert rule.settle(queue) == expected
    assert [s for s in queue if rule.keeps(s)] == expected


def test_a_shared_value_is_unpickled_once_per_process() -> None:
    value = {"scenario": list(range(100))}
    blob = pickle.dumps(Shared(value))
    first, second = pickle.loads(blob), pickle.loads(pickle.dumps(Shared(value)))
    assert first.value == value and first.value is not value  # a copy here, as a worker process gets
    assert second.value is first.value  # the same bytes: the object kept, not unpickled again
    changed = pickle.loads(pickle.dumps(Shared({"scenario": [1]})))
    assert changed.value == {"scenario": [1]}  # other bytes, another entry
