"""Step 3 of the search: simulate the survivors of the screen (branch and bound) and report the front.

Candidates are simulated in waves of `WAVE`, cheapest $/month lower bound first. Before each wave a candidate is
pruned when the bounds (true bounds, see `search.screen`) show it cannot meet the SLO, or when its $/month
lower bound is >= the K-th cheapest SLO-feasible cost simulated so far (it cannot enter the top K). With
`keep_front=True` a candidate is also kept unless a simulated SLO-feasible configuration costs <= its lower
bound and gives >= its tokens/s per user upper bound (then the $/M tokens vs tokens/s per user front is
exact too; the tokens/s bound is loose, so this simulates far more). Without it the front is the front of
the simulated configurations.
Offerings and scalings of one replica configuration and engine share one simulation (they only price it).
Waves have a fixed size whatever the executor or worker count, so every executor simulates the same set and
returns the same result. Capacities come from the decision's own `self_host_capacity` and costs from its
`self_host_result`, so a searched configuration costs what `compare` says it costs.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from costmodel.catalog import ModelSpec, load_model
from costmodel.decision.attach import option_efficiency
from costmodel.decision.capacity import CapacityCache, capacity_cache_key, self_host_capacity
from costmodel.decision.options import self_host_result
from costmodel.decision.validity import self_host_exclusion
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.pricing import GpuPriceRow, PriceSheet, load_gpu_prices
from costmodel.scenario import Scenario
from costmodel.search.executors import LocalExecutor, RayExecutor
from costmodel.search.screen import ReplicaKey, Screened, screen_candidates
from costmodel.search.space import (
    Candidate,
    QualityFilter,
    enumerate_candidates,
    scenario_quality_filter,
    search_warmup_minutes,
)
from costmodel.serving.analytic import Capacity

WAVE = 8
Progress = Callable[[float, str], None]  # (fraction done 0..1, what is running), e.g. the app's progress bar


@dataclass(frozen=True, kw_only=True)
class Configuration:
    """One simulated configuration: the `search --json` frontier/best row."""

    model: str
    hardware: str
    gpus_per_replica: int
    weight_dtype: str
    kv_dtype: str
    offering: str
    engine: str
    scaling: str
    usd_per_month: float
    usd_per_mtok: float
    tokens_per_second_per_user: float  # 1 / TPOT p90 at the operating point (0 when it misses the SLO)
    ttft_p90_seconds: float | None
    meets_slo: bool
    replicas: int = 0

    def candidate(self) -> Candidate:
        """The configuration as a search candidate (to add it to a scenario)."""
        return Candidate(model=self.model, hardware=self.hardware, gpus_per_replica=self.gpus_per_replica,
                         weight_dtype=self.weight_dtype, kv_dtype=self.kv_dtype, offering=self.offering,
                         engine=self.engine, scaling=self.scaling)

    def contract(self) -> dict[str, object]:
        """The JSON row (exact keys of the contract)."""
        return {key: getattr(self, key) for key in (
            "model", "hardware", "gpus_per_replica", "weight_dtype", "kv_dtype", "offering", "engine", "scaling",
            "usd_per_month", "usd_per_mtok", "tokens_per_second_per_user", "ttft_p90_seconds", "meets_slo")}


@dataclass(frozen=True, kw_only=True)
class SearchResult:
    """Counts, time, the cheapest SLO-feasible configurations and the Pareto front."""

    candidates_enumerated: int
    candidates_pruned: int
    candidates_simulated: int
    seconds: float
    best: tuple[Configuration, ...]  # cheapest SLO-feasible first, at most K
    frontier: tuple[Configuration, ...]  # $/M tok vs tokens/s per user, and vs TTFT p90 (union), cheapest first
    frontier_tokens_per_second_per_user: tuple[Configuration, ...] = ()  # $/M tok vs tokens/s per user
    frontier_ttft: tuple[Configuration, ...] = ()  # $/M tok vs TTFT p90
    cache_hits: int = 0  # replica configurations whose capacity came from the capacity cache

    def contract(self) -> dict[str, object]:
        """`search --json`: best is the cheapest row (null when none meets the SLO); top_k the K rows;
        `frontier` the union of the two fronts, `frontier_tokens_per_second_per_user` and `frontier_ttft` each."""
        return {"candidates_enumerated": self.candidates_enumerated, "candidates_pruned": self.candidates_pruned,
                "candidates_simulated": self.candidates_simulated, "seconds": self.seconds,
                "frontier": [c.contract() for c in self.frontier],
                "frontier_tokens_per_second_per_user": [c.contract() for c in self.frontier_tokens_per_second_per_user],
                "frontier_ttft": [c.contract() for c in self.frontier_ttft],
                "best": self.best[0].contract() if self.best else None,
                "top_k": [c.contract() for c in self.best]}


@dataclass(frozen=True)
class _Job:
    scenario: Scenario
    candidate: Candidate
    calibration: Calibration | None


def simulate_capacity(job: _Job) -> tuple[Capacity, str]:
    """Capacity per replica at the SLO from the decision's simulator (the offering does not change it)."""
    option = job.candidate.option(name="search")
    return self_host_capacity(job.scenario, option, calibration=job.calibration, cache=CapacityCache())


def configuration(scenario: Scenario, candidate: Candidate, capacity: tuple[Capacity, str], *,
                  gpu_sheet: PriceSheet[GpuPriceRow], today: dt.date) -> Configuration:
    """The decision's cost of one candidate at its simulated capacity."""
    ops = scenario.search.ops_usd_per_month if scenario.search else 0.0
    option = candidate.option(name="search", ops_usd_per_month=ops, warmup_minutes=search_warmup_minutes(scenario))
    result = self_host_result(option, scenario, gpu_sheet, capacity, reference=None, today=today)
    tpot = result.tpot_p90_seconds
    c = candidate
    return Configuration(model=c.model, hardware=c.hardware, gpus_per_replica=c.gpus_per_replica,
                         weight_dtype=c.weight_dtype, kv_dtype=c.kv_dtype, offering=c.offering, engine=c.engine,
                         scaling=c.scaling, usd_per_month=result.usd_per_month, usd_per_mtok=result.usd_per_mtok,
                         tokens_per_second_per_user=1.0 / tpot if result.meets_slo and tpot else 0.0,
                         ttft_p90_seconds=result.ttft_p90_seconds, meets_slo=result.meets_slo,
                         replicas=result.replicas)


def pareto_front(rows: list[Configuration], *, better_is_higher: bool, metric: str) -> list[Configuration]:
    """Rows no other row beats on both $/M tokens (lower) and `metric` (higher or lower is better)."""
    def value(row: Configuration) -> float:
        raw = getattr(row, metric)
        x = math.inf if raw is None else float(raw)
        return -x if better_is_higher else x

    front: list[Configuration] = []
    best_so_far = math.inf
    for row in sorted(rows, key=lambda r: (r.usd_per_mtok, value(r))):
        if value(row) < best_so_far:
            front.append(row)
            best_so_far = value(row)
    return front


def _kth_cost(feasible: list[Configuration], *, top_k: int) -> float:
    costs = sorted(r.usd_per_month for r in feasible)
    return costs[top_k - 1] if len(costs) >= top_k else math.inf


def _pruned(item: Screened, feasible: list[Configuration], *, kth_usd_per_month: float, keep_front: bool) -> bool:
    """Safe: the candidate cannot meet the SLO, or its $/month LOWER bound already reaches the K-th cheapest
    simulated SLO-feasible cost (so it cannot enter the top K), and (keep_front) a simulated feasible one
    is at least as cheap and at least as fast as its bounds allow."""
    if not item.viable:
        return True
    if item.usd_per_month_lower < kth_usd_per_month:
        return False
    if not keep_front:
        return True
    return any(r.usd_per_month <= item.usd_per_month_lower
               and r.tokens_per_second_per_user >= item.tokens_per_second_per_user_upper for r in feasible)


def usable_candidates(scenario: Scenario, candidates: tuple[Candidate, ...], *,
                      model_specs: dict[str, ModelSpec] | None = None) -> tuple[Candidate, ...]:
    """Candidates the decision would evaluate (no exclusion: TP and dtypes valid, lengths servable)."""
    specs = model_specs if model_specs is not None else {m: load_model(m) for m in {c.model for c in candidates}}
    verdicts: dict[tuple[str, str, int, str, str], bool] = {}
    for c in candidates:
        if c.replica_key not in verdicts:  # the exclusions read the replica, not the engine or the price
            verdicts[c.replica_key] = self_host_exclusion(c.option(name="search"), scenario,
                                                          model_spec=specs[c.model]) is None
    return tuple(c for c in candidates if verdicts[c.replica_key])


def _run_wave(runner: LocalExecutor | RayExecutor, jobs: list[_Job]) -> list[tuple[Capacity, str]]:
    """simulate_capacity over the jobs; a worker lost underneath the search (a pool process killed, by the
    OOM killer say, or a Ray worker or node gone) is a CostmodelError naming what was lost, not a traceback."""
    try:
        return runner.map(simulate_capacity, jobs)
    except CostmodelError:
        raise
    except BrokenProcessPool as exc:
        raise CostmodelError(
            f"a search worker process died mid-search ({exc}); no result was kept. Rerun the search, with fewer "
            "--workers (or --workers 1) if the machine is short of memory") from None
    except Exception as exc:
        # ray is optional: its errors are known by module. RayTaskError is the task's own exception (a bug
        # to show as it is), not a lost worker.
        if not type(exc).__module__.startswith("ray.") or type(exc).__name__.startswith("RayTaskError"):
            raise
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise CostmodelError(
            f"a Ray worker was lost mid-search ({type(exc).__name__}: {first_line[:200]}); no result was kept. "
            "Check the cluster (`ray status`) and rerun, or use --executor local") from None


def _capacities(scenario: Scenario, candidates: list[Candidate], *, runner: LocalExecutor | RayExecutor,
                calibration: Calibration | None, cache: CapacityCache | None) -> tuple[list[tuple[Capacity, str]], int]:
    """Capacity of each candidate's replica: from `cache` when it holds it, else simulated by `runner` (and
    stored in `cache`); also the number of cache hits."""
    keys = []
    for c in candidates:
        option = c.option(name="search")
        hardware, eff = option_efficiency(option, calibration)
        keys.append(capacity_cache_key(scenario, option, hardware=hardware, efficiency=eff))
    found = {k: hit for k in keys if cache is not None and (hit := cache.get(k)) is not None}
    missing = [(c, k) for c, k in zip(candidates, keys, strict=True) if k not in found]
    simulated = _run_wave(runner, [_Job(scenario, c, calibration) for c, _ in missing])
    for (_, key), value in zip(missing, simulated, strict=True):
        found[key] = value
        if cache is not None:
            cache.put(key, value)
    return [found[k] for k in keys], len(candidates) - len(missing)


def search(scenario: Scenario, *, top_k: int = 5, gpu_sheet: PriceSheet[GpuPriceRow] | None = None,
           calibration: Calibration | None = None, today: dt.date | None = None,
           executor: LocalExecutor | RayExecutor | None = None, quality: QualityFilter | None = None,
           prune: bool = True, keep_front: bool = False, cache: CapacityCache | None = None,
           progress: Progress | None = None) -> SearchResult:
    """Enumerate (models passing `quality`, default the scenario's `quality:` floor), screen, simulate the
    survivors; `prune=False` simulates every usable candidate (brute force),
    `keep_front=True` keeps every candidate that could join the tokens/s-per-user front (module docstring).
    `cache` (shared with `decide`) holds capacities already simulated, so a repeated search or the decision
    over its top K simulates nothing twice. `progress(fraction, text)` is called after the screen and after
    every wave of simulations (fraction: share of the screened queue settled, simulated or pruned)."""
    if top_k < 1:
        raise ValueError("top_k must be >= 1")
    started = time.perf_counter()
    sheet = gpu_sheet or load_gpu_prices()
    today = scenario.evaluation_date(override=today)
    quality = quality if quality is not None else scenario_quality_filter(scenario)
    enumerated = enumerate_candidates(scenario, gpu_sheet=sheet, quality=quality)
    specs = {m: load_model(m) for m in {c.model for c in enumerated}}
    screened = screen_candidates(scenario, usable_candidates(scenario, enumerated, model_specs=specs),
                                 gpu_sheet=sheet, calibration=calibration, model_specs=specs)
    queue = sorted(screened, key=lambda s: (s.usd_per_month_lower, -s.tokens_per_second_per_user_upper,
                                            repr(s.candidate)))
    runner = executor or LocalExecutor()
    total = max(len(queue), 1)
    if progress is not None:
        progress(0.0, f"screened {len(enumerated):,} configurations; simulating the cheapest")
    simulated: list[Configuration] = []
    capacities: dict[ReplicaKey, tuple[Capacity, str]] = {}  # one simulation per replica and engine
    hits = 0
    while queue:
        feasible = [r for r in simulated if r.meets_slo]
        kth = _kth_cost(feasible, top_k=top_k)
        if prune:
            queue = [s for s in queue if not _pruned(s, feasible, kth_usd_per_month=kth, keep_front=keep_front)]
        wave, queue = queue[:WAVE], queue[WAVE:]
        new = list({s.candidate.capacity_key: s.candidate for s in wave
                    if s.candidate.capacity_key not in capacities}.values())
        values, wave_hits = _capacities(scenario, new, runner=runner, calibration=calibration, cache=cache)
        hits += wave_hits
        capacities.update(zip((c.capacity_key for c in new), values, strict=True))
        simulated.extend(configuration(scenario, s.candidate, capacities[s.candidate.capacity_key],
                                       gpu_sheet=sheet, today=today) for s in wave)
        if progress is not None:
            progress(1.0 - len(queue) / total, f"simulated {len(simulated):,} configurations")
    feasible = [r for r in simulated if r.meets_slo and math.isfinite(r.usd_per_month)]
    best = sorted(feasible, key=lambda r: (r.usd_per_month, -r.tokens_per_second_per_user, repr(r)))[:top_k]
    speed = pareto_front(feasible, better_is_higher=True, metric="tokens_per_second_per_user")
    ttft = pareto_front(feasible, better_is_higher=False, metric="ttft_p90_seconds")
    frontier = sorted(set(speed + ttft), key=lambda r: (r.usd_per_mtok, repr(r)))
    return SearchResult(candidates_enumerated=len(enumerated), candidates_pruned=len(enumerated) - len(simulated),
                        candidates_simulated=len(simulated), seconds=time.perf_counter() - started,
                        best=tuple(best), frontier=tuple(frontier), frontier_tokens_per_second_per_user=tuple(speed),
                        frontier_ttft=tuple(ttft), cache_hits=hits)


def option_name(rank: int, configuration: Configuration) -> str:
    """'search-1-<model>-<hardware>-tp<N>' (dtypes appended so two precisions of one replica stay distinct; the
    engine and 'autoscale' appended when not generic / fixed)."""
    c = configuration
    name = f"search-{rank}-{c.model}-{c.hardware}-tp{c.gpus_per_replica}-{c.weight_dtype}-{c.kv_dtype}"
    name += f"-{c.engine}" if c.engine != "generic" else ""
    return name + ("-autoscale" if c.scaling != "fixed" else "")


def with_configuration(scenario: Scenario, configuration: Configuration, *, name: str) -> Scenario:
    """The scenario with one searched configuration added as a self-host option called `name` (the app's
    "add to scenario"); raises CostmodelError when an option already has that name."""
    if any(o.name == name for o in scenario.options):
        raise CostmodelError(f"options: an option named '{name}' is already in the scenario; rename or remove it first")
    ops = scenario.search.ops_usd_per_month if scenario.search else 0.0
    added = configuration.candidate().option(name=name, ops_usd_per_month=ops,
                                             warmup_minutes=search_warmup_minutes(scenario))
    return scenario.model_copy(update={"options": [*scenario.options, added]})


def with_searched_options(scenario: Scenario, result: SearchResult, *, top_k: int) -> Scenario:
    """The scenario with the top K configurations added as self-host options beside the listed ones (a name
    the scenario already lists, e.g. one added from an earlier search, is kept as listed)."""
    for rank, c in enumerate(result.best[:top_k], start=1):
        name = option_name(rank, c)
        if all(o.name != name for o in scenario.options):
            scenario = with_configuration(scenario, c, name=name)
    return scenario
