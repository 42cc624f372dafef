"""The search's parallel seam: the screen split into jobs, and simulations started ahead of the waves.

Screen: the usable-candidate check and the vectorized roofline run per model, in this process with one
worker. With more than one, each (model, accelerator) block of the space is a `runner.map` job that also
enumerates its candidates and leaves out owned GPUs without host figures (so a search of few models still
spreads, and the search's own process neither enumerates nor sends candidates out), and, when the search
prunes, drops the candidates the bounds show cannot meet the SLO (which the wave rule prunes first). Each
value is elementwise, so a candidate's bounds do not depend on which others share its arrays; blocks come back
in enumeration order and the search sorts the screened queue by a total order: the result is the same
however the jobs are cut.

Simulations: the search settles its queue in waves (search.run); the candidates a wave simulates, and so its
result, depend only on the waves before. With a pool or a cluster, `Simulations` also starts the next
candidates of the queue, up to `LOOKAHEAD_PER_WORKER` per worker in flight, while the current wave runs; a
wave then collects what is already running. A capacity is a pure function of its candidate, so starting one
early changes no value; one the wave rule later prunes is discarded unread (spent work, never a result), and
it reaches neither the capacity cache nor the counts. With 1 worker nothing is started ahead.

With more than one worker a simulation's task also costs the queued candidates that share its capacity (its
offerings and scalings, `search/costing.py`), those the wave rule still keeps when it starts, so the search's
own process only collects rows; a capacity from the cache is costed here, as is everything with 1 worker. The
queue only shrinks, so a candidate a later wave takes was queued, so kept, when its simulation started; one
costed and pruned after is spent work, never a result, and a row the task did not cost is costed here.
What every task reads (scenario, calibration, price sheet, scope) is sent as one `Shared` (search/shared.py).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from costmodel.catalog import ModelSpec, load_model
from costmodel.decision.capacity import CapacityCache, option_capacity_key, self_host_capacity
from costmodel.decision.validity import self_host_exclusion
from costmodel.measurements.calibration import Calibration
from costmodel.pricing import GpuPriceRow, PriceSheet
from costmodel.scenario import Scenario
from costmodel.search.costing import configuration, host_counted, searched_option
from costmodel.search.executors import LocalExecutor, RayExecutor
from costmodel.search.give_up import NotNeeded
from costmodel.search.rows import Configuration
from costmodel.search.scope import SearchScope
from costmodel.search.screen import ReplicaKey, Screened, screen_candidates
from costmodel.search.shared import Shared
from costmodel.search.space import Candidate, SearchSpace
from costmodel.serving.analytic import Capacity
from costmodel.serving.capacity import CapacityNotNeeded

LOOKAHEAD_PER_WORKER = 2
Runner = LocalExecutor | RayExecutor
CapacityValue = tuple[Capacity, str]


def usable_candidates(scenario: Scenario, candidates: tuple[Candidate, ...], *,
                      model_specs: Mapping[str, ModelSpec]) -> tuple[Candidate, ...]:
    """Candidates the decision would evaluate (no exclusion: TP and dtypes valid, lengths servable)."""
    verdicts: dict[tuple[object, ...], bool] = {}
    for c in candidates:
        if c.replica_key not in verdicts:  # the exclusions read the replica, not the engine or the price
            verdicts[c.replica_key] = self_host_exclusion(c.option(name="search"), scenario,
                                                          model_spec=model_specs[c.model]) is None
    return tuple(c for c in candidates if verdicts[c.replica_key])


def hosted_candidates(scenario: Scenario, candidates: Sequence[Candidate], *,
                      sheet: PriceSheet[GpuPriceRow]) -> tuple[Candidate, ...]:
    """The candidates whose cost counts their host (an owned GPU without host figures is never ranked, so it is
    not simulated either)."""
    verdicts: dict[tuple[str, str], bool] = {}
    for c in candidates:
        key = (c.hardware, c.offering)  # host figures: the offering's row and the scenario's overrides on the hardware
        if key not in verdicts:
            verdicts[key] = host_counted(searched_option(scenario, c, name="search"), sheet)
    return tuple(c for c in candidates if verdicts[(c.hardware, c.offering)])


@dataclass(frozen=True)
class SearchInputs:
    """What every screen and simulation task of one search reads (sent once per worker as a `Shared`)."""

    scenario: Scenario
    gpu_sheet: PriceSheet[GpuPriceRow]
    calibration: Calibration | None
    today: dt.date | None = None  # for costing (search/costing.py); None: the tasks cost nothing
    scope: SearchScope | None = None


@dataclass(frozen=True)
class ScreenJob:
    """One share of the screen: candidates of one model (and hardware), with what screening them reads."""

    inputs: Shared[SearchInputs]
    candidates: tuple[Candidate, ...]
    model_specs: dict[str, ModelSpec]


def screen_job(job: ScreenJob) -> tuple[int, tuple[Screened, ...]]:
    """(usable candidates, their bounds) of one share."""
    inputs = job.inputs.value
    usable = usable_candidates(inputs.scenario, job.candidates, model_specs=job.model_specs)
    return len(usable), screen_candidates(inputs.scenario, usable, gpu_sheet=inputs.gpu_sheet,
                                          calibration=inputs.calibration, model_specs=job.model_specs)


def screen_in_parallel(scenario: Scenario, candidates: tuple[Candidate, ...], *, gpu_sheet: PriceSheet[GpuPriceRow],
                       calibration: Calibration | None, model_specs: Mapping[str, ModelSpec],
                       runner: Runner, progress: Callable[[int, int], None] | None = None) -> tuple[Screened, ...]:
    """Every usable candidate's bounds, screened as `runner.map` jobs (order: by share, then enumeration).
    In this process (one worker) `progress(shares done, shares)` is called after each share, so a caller's hook
    (the app's Cancel) runs every model or so; a pool or cluster maps the jobs at once."""
    shares: dict[tuple[str, ...], list[Candidate]] = {}
    for c in candidates:
        key = (c.model,) if runner.parallelism == 1 else (c.model, c.hardware)
        shares.setdefault(key, []).append(c)
    inputs = Shared(SearchInputs(scenario, gpu_sheet, calibration))
    jobs = [ScreenJob(inputs, tuple(share), {share[0].model: model_specs[share[0].model]}) for share in shares.values()]
    if runner.parallelism > 1 or progress is None:
        return tuple(s for _, part in runner.map(screen_job, jobs) for s in part)
    parts: list[Screened] = []
    for done, job in enumerate(jobs, start=1):
        parts.extend(screen_job(job)[1])
        progress(done, len(jobs))
    return tuple(parts)


@dataclass(frozen=True)
class BlockJob:
    """One (model, accelerator) block of the space to enumerate, filter and screen in a worker."""

    inputs: Shared[SearchInputs]
    space: Shared[SearchSpace]
    block: tuple[str, str]
    viable_only: bool


def screen_block(job: BlockJob) -> tuple[int, int, tuple[Screened, ...]]:
    """(candidates enumerated, those with their host counted, the usable ones' bounds) of one block."""
    inputs, (model_id, hardware) = job.inputs.value, job.block
    enumerated = job.space.value.block(model_id, hardware)
    hosted = hosted_candidates(inputs.scenario, enumerated, sheet=inputs.gpu_sheet)
    specs = {model_id: load_model(model_id)}
    usable = usable_candidates(inputs.scenario, hosted, model_specs=specs)
    screened = screen_candidates(inputs.scenario, usable, gpu_sheet=inputs.gpu_sheet, calibration=inputs.calibration,
                                 model_specs=specs)
    return len(enumerated), len(hosted), tuple(s for s in screened if s.viable) if job.viable_only else screened


def screen_space(inputs: Shared[SearchInputs], space: SearchSpace, *, runner: Runner,
                 viable_only: bool) -> tuple[int, int, tuple[Screened, ...]]:
    """`screen_block` over every block as `runner.map` jobs: the totals and the bounds in enumeration order."""
    shared = Shared(space)
    parts = runner.map(screen_block, [BlockJob(inputs, shared, block, viable_only) for block in space.blocks()])
    return (sum(p[0] for p in parts), sum(p[1] for p in parts), tuple(s for p in parts for s in p[2]))


@dataclass(frozen=True)
class SimulationJob:
    """One replica configuration to simulate, and the candidates sharing it to cost (what a worker needs)."""

    inputs: Shared[SearchInputs]
    candidate: Candidate
    costed: tuple[Candidate, ...] = ()
    give_up: NotNeeded | None = None  # search/give_up.py: stop once the capacity is not needed


def simulate_capacity(job: SimulationJob) -> CapacityValue | None:
    """Capacity per replica at the SLO from the decision's simulator (the offering does not change it); None
    when the job's `give_up` stopped it (search/give_up.py)."""
    option = job.candidate.option(name="search")
    inputs = job.inputs.value
    try:
        return self_host_capacity(inputs.scenario, option, calibration=inputs.calibration, cache=CapacityCache(),
                                  give_up=job.give_up)
    except CapacityNotNeeded:
        return None


def simulate_and_cost(job: SimulationJob) -> tuple[CapacityValue | None, tuple[Configuration, ...]]:
    """The capacity, and the decision's row of each `costed` candidate at it (search/costing.py)."""
    value = simulate_capacity(job)
    inputs = job.inputs.value
    if value is None or not job.costed or inputs.today is None:
        return value, ()
    return value, tuple(configuration(inputs.scenario, c, value, gpu_sheet=inputs.gpu_sheet, today=inputs.today,
                                      scope=inputs.scope) for c in job.costed)


Keeps = Callable[[Screened], bool]  # the wave rule at this wave (search/prune.py `WaveRule.keeps`)


class Simulations:
    """Capacities for the search's waves: from the cache, from a simulation started ahead, or simulated now;
    with more than one worker, also the rows its tasks costed (module docstring)."""

    def __init__(self, inputs: Shared[SearchInputs], *, runner: Runner, cache: CapacityCache | None,
                 queue: Sequence[Screened] = ()) -> None:
        self._scenario, self._calibration = inputs.value.scenario, inputs.value.calibration
        self._runner, self._cache = runner, cache
        self._inputs = inputs
        self._running: dict[ReplicaKey, Any] = {}  # capacity key -> executor handle, started ahead
        self._rows: dict[Candidate, Configuration] = {}  # rows the tasks costed, until the search takes them
        self._sharing: dict[ReplicaKey, list[Screened]] = {}  # capacity key -> its queued candidates, in order
        if runner.parallelism > 1 and inputs.value.today is not None:
            for s in queue:
                self._sharing.setdefault(s.candidate.capacity_key, []).append(s)

    def _cache_key(self, candidate: Candidate) -> Any:
        # The key the decision itself stores under (its SLO tightened by the engine's documented error).
        return option_capacity_key(self._scenario, candidate.option(name="search"), calibration=self._calibration)

    def _start(self, candidate: Candidate, keeps: Keeps, give_up: NotNeeded | None = None) -> None:
        key = candidate.capacity_key
        if key not in self._running:
            costed = tuple(s.candidate for s in self._sharing.pop(key, ()) if keeps(s))
            self._running[key] = self._runner.submit(simulate_and_cost,
                                                     SimulationJob(self._inputs, candidate, costed, give_up))

    def start_ahead(self, upcoming: Iterable[Candidate], *, known: Mapping[ReplicaKey, object], keeps: Keeps) -> None:
        """Start the first upcoming candidates not known, not running and not cached, until the executor
        has LOOKAHEAD_PER_WORKER per worker in flight (nothing with 1 worker)."""
        limit = LOOKAHEAD_PER_WORKER * self._runner.parallelism if self._runner.parallelism > 1 else 0
        for c in upcoming:
            if len(self._running) >= limit:
                return
            key = c.capacity_key
            if key in known or key in self._running:
                continue
            if self._cache is None or self._cache.get(self._cache_key(c)) is None:
                self._start(c, keeps)

    def capacities(self, candidates: list[Candidate], *, keeps: Keeps,
                   give_ups: Sequence[NotNeeded | None] | None = None,
                   each: Callable[[int, int], None] | None = None) -> tuple[list[CapacityValue | None], int]:
        """Capacity of each candidate's replica: from the cache when it holds it, else simulated (or collected
        from a simulation started ahead) and stored in the cache; also the number of cache hits. With
        `give_ups` (one per candidate, search/give_up.py) a capacity its test gives up is None, however it was
        found (stopped early here, or judged by the bound it carries: started ahead, or from the cache).
        `each(done, missing)` is called after each simulation collected (a caller's progress or cancel hook)."""
        tests = list(give_ups) if give_ups is not None else [None] * len(candidates)
        keys = [self._cache_key(c) for c in candidates]
        found: dict[Any, CapacityValue | None] = {
            k: hit for k in keys if self._cache is not None and (hit := self._cache.get(k)) is not None}
        missing = [(c, k, t) for c, k, t in zip(candidates, keys, tests, strict=True) if k not in found]
        for c, _, test in missing:  # all of the wave in flight before waiting on the first
            self._start(c, keeps, test)
        for done, (c, key, _) in enumerate(missing, start=1):
            value, rows = self._runner.collect(self._running.pop(c.capacity_key))
            self._rows.update((r.candidate(), r) for r in rows)
            found[key] = value
            if self._cache is not None and value is not None:
                self._cache.put(key, value)
            if each is not None:
                each(done, len(missing))
        values = [found[k] for k in keys]
        return [None if v is None or (t is not None and t(v[0].upper_bound_requests_per_second)) else v
                for v, t in zip(values, tests, strict=True)], len(candidates) - len(missing)

    def row(self, candidate: Candidate, capacity: CapacityValue, *, gpu_sheet: PriceSheet[GpuPriceRow],
            today: dt.date, scope: SearchScope) -> Configuration:
        """The candidate's row: the one its simulation's task costed, else costed here."""
        costed = self._rows.pop(candidate, None)
        if costed is not None:
            return costed
        return configuration(self._scenario, candidate, capacity, gpu_sheet=gpu_sheet, today=today, scope=scope)

    def discard(self) -> None:
        """Drop the simulations started ahead that no wave needed."""
        for handle in self._running.values():
            self._runner.discard(handle)
        self._running.clear()
