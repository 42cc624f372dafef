"""The search's parallel seam and executors: same results however the work is cut or started ahead, the Ray
address from --address or $RAY_ADDRESS, and a ray.init that fails or hangs ends with a message (fake Ray)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from costmodel.catalog import load_model
from costmodel.errors import CostmodelError
from costmodel.pricing import load_gpu_prices
from costmodel.scenario import parse_scenario
from costmodel.search import LocalExecutor, enumerate_candidates, make_executor, search
from costmodel.search.executors import chunks, init_ray, ray_address
from costmodel.search.parallel import screen_in_parallel

SCENARIO = {
    "name": "small search", "as_of": "2026-12-01",
    "workload": {"requests_per_day": 20000, "prompt_tokens": {"kind": "fixed", "tokens": 500},
                 "output_tokens": {"kind": "fixed", "tokens": 100}, "peak_to_mean_ratio": 2.0},
    "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
    "search": {"models": ["qwen2.5-0.5b", "llama-3.2-1b"], "hardware": ["l4", "h100-sxm"], "engines": ["generic"]},
    "options": [{"kind": "self-host", "name": "listed", "model": "qwen2.5-0.5b", "hardware": "l4",
                 "gpus_per_replica": 1, "weight_dtype": "bf16", "kv_dtype": "bf16", "offering": "owned/l4/owned"}],
}


class InProcess(LocalExecutor):
    """Runs everything here but reports `parallelism` workers (so the seam cuts and looks ahead as for a pool)."""

    def __init__(self, parallelism: int) -> None:
        super().__init__(workers=1)
        self._fake = parallelism
        self.started: list[Any] = []

    @property
    def parallelism(self) -> int:
        return self._fake

    def submit(self, fn: Callable[[Any], Any], item: Any) -> Any:
        self.started.append(item)
        return super().submit(fn, item)


def test_chunks_keep_order_and_cover_everything() -> None:
    assert chunks(list(range(10)), count=4) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert chunks([1, 2], count=8) == [[1], [2]]
    assert chunks([], count=3) == []


def test_the_screen_cut_by_model_and_hardware_equals_the_screen_by_model() -> None:
    scenario = parse_scenario(SCENARIO)
    sheet = load_gpu_prices()
    candidates = enumerate_candidates(scenario, gpu_sheet=sheet)
    specs = {m: load_model(m) for m in {c.model for c in candidates}}
    by_model = screen_in_parallel(scenario, candidates, gpu_sheet=sheet, calibration=None, model_specs=specs,
                                  runner=InProcess(1))
    by_share = screen_in_parallel(scenario, candidates, gpu_sheet=sheet, calibration=None, model_specs=specs,
                                  runner=InProcess(4))
    assert len(by_model) == len(by_share) > 0
    assert sorted(by_model, key=repr) == sorted(by_share, key=repr)


def test_starting_simulations_ahead_changes_no_result() -> None:
    scenario = parse_scenario(SCENARIO)
    serial = search(scenario, top_k=2)
    ahead = InProcess(3)
    parallel = search(scenario, top_k=2, executor=ahead)
    assert ahead.started  # the lookahead did start simulations
    assert (parallel.best, parallel.frontier, parallel.frontier_ttft, parallel.frontier_tokens_per_second_per_user) == (
        serial.best, serial.frontier, serial.frontier_ttft, serial.frontier_tokens_per_second_per_user)
    assert (parallel.candidates_enumerated, parallel.candidates_pruned, parallel.candidates_simulated,
            parallel.cache_hits) == (serial.candidates_enumerated, serial.candidates_pruned,
                                     serial.candidates_simulated, serial.cache_hits)


def test_a_two_process_pool_gives_the_serial_result() -> None:
    scenario = parse_scenario(SCENARIO)
    pool = make_executor("local", workers=2)
    try:
        pooled = search(scenario, top_k=2, executor=pool)
    finally:
        pool.close()
    serial = search(scenario, top_k=2)
    assert (pooled.best, pooled.frontier, pooled.candidates_simulated) == (
        serial.best, serial.frontier, serial.candidates_simulated)


def test_local_executor_defaults_to_one_worker_and_runs_submitted_items() -> None:
    executor = make_executor("local")
    assert executor.parallelism == 1
    assert [executor.collect(executor.submit(abs, x)) for x in (-1, 2)] == [1, 2]
    assert executor.map(abs, [-3, 4]) == [3, 4]


def test_the_address_flag_wins_over_ray_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert ray_address(None) is None
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    assert ray_address(None) == "10.0.0.5:6379"
    assert ray_address("head:6379") == "head:6379"


class FakeRay:
    """ray.init that blocks until released, or raises."""

    def __init__(self, *, error: BaseException | None = None) -> None:
        self.release = threading.Event()
        self.error = error
        self.kwargs: dict[str, Any] = {}

    def init(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        if self.error is not None:
            raise self.error
        self.release.wait()


def test_a_hanging_ray_init_ends_with_a_message_after_its_time() -> None:
    fake = FakeRay()
    try:
        with pytest.raises(CostmodelError, match=r"ray.init did not reach a local Ray within 0.2 s"):
            init_ray(fake, address=None, workers=2, timeout_seconds=0.2, release=threading.Event())
    finally:
        fake.release.set()
    assert fake.kwargs["num_cpus"] == 2


def test_joining_a_cluster_passes_no_cpu_count_and_a_failure_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")  # as set: nothing turns token auth on in this process
    fake = FakeRay(error=ConnectionError("Failed to connect to Ray cluster at 10.0.0.5:6379"))
    with pytest.raises(CostmodelError, match=r"could not start or join the Ray cluster at '10.0.0.5:6379'.*"
                                             r"ConnectionError: Failed to connect"):
        init_ray(fake, address="10.0.0.5:6379", workers=None, timeout_seconds=5.0, release=threading.Event())
    assert "num_cpus" not in fake.kwargs and fake.kwargs["address"] == "10.0.0.5:6379"




def test_the_thread_that_started_ray_lives_until_released() -> None:
    # Ray gives a local Ray's processes the parent-death signal of the thread that started them.
    fake = FakeRay()
    fake.release.set()  # init returns at once
    release = threading.Event()
    before = set(threading.enumerate())
    init_ray(fake, address=None, workers=1, timeout_seconds=5.0, release=release)
    (starter,) = [t for t in set(threading.enumerate()) - before if t.name == "costmodel-ray-init"]
    assert starter.is_alive()
    release.set()
    starter.join(timeout=5.0)
    assert not starter.is_alive()
