"""Step 3 of the search: simulate the survivors of the screen (branch and bound) and report the front
(assembled by search/result.py).

Candidates are simulated in waves of `WAVE`, cheapest $/month lower bound first. Before each wave a candidate is
pruned (search/prune.py) when the bounds (true bounds, see `search.screen`) show it cannot meet the SLO, or when
its $/month lower bound is above the K-th cheapest SLO-feasible row simulated so far (same-cost variants are one
row, search/rows.py, so a tie is simulated to list it), so it cannot enter the top K. Owned GPUs without host
figures are never ranked, so never simulated (counted in `candidates_without_host`). With `keep_front=True` a
candidate is also kept unless a simulated SLO-feasible configuration costs <= its lower bound and gives >= its
tokens/s per user upper bound (then the $/M tokens vs tokens/s per user front is exact too; the tokens/s bound is
loose, so this simulates far more). Without it the front is the front of the simulated configurations.
Offerings and scalings of one replica configuration and engine share one simulation (they only price it).
Waves have a fixed size whatever the executor or worker count, so every executor simulates the same set and
returns the same result; with more than one worker the screen runs as parallel jobs and the next candidates'
simulations start while a wave runs (search/parallel.py), which changes no result. Capacities come from the
decision's own `self_host_capacity` and costs and verdicts from its `self_host_result` (search/costing.py), on
the models the decision's rules let compete (search/scope.py).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from costmodel.catalog import ModelSpec, load_model
from costmodel.catalog.quality import QualitySheet, load_quality_scores
from costmodel.decision.capacity import CapacityCache
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.pricing import ApiPriceRow, GpuPriceRow, PriceSheet, load_api_prices, load_gpu_prices
from costmodel.pricing.sheets import open_model_ids
from costmodel.scenario import Scenario
from costmodel.search.costing import searched_option
from costmodel.search.executors import LocalExecutor, RayExecutor
from costmodel.search.give_up import NotNeeded, not_needed
from costmodel.search.parallel import (
    SearchInputs,
    Simulations,
    hosted_candidates,
    screen_in_parallel,
    screen_space,
)
from costmodel.search.parallel import usable_candidates as _usable
from costmodel.search.prune import WaveRule
from costmodel.search.result import SearchResult, ranked_rows, search_result
from costmodel.search.rows import Configuration
from costmodel.search.rows import pareto_front as pareto_front
from costmodel.search.scope import SearchScope, grouped_with, search_scope
from costmodel.search.screen import ReplicaKey, Screened
from costmodel.search.shared import Shared
from costmodel.search.space import EMPTY_SPACE, Candidate, QualityFilter, enumerate_candidates, search_space
from costmodel.serving.analytic import Capacity

WAVE = 8
Progress = Callable[[float, str], None]  # (fraction done 0..1, what is running), e.g. the app's progress bar
SCREEN_FRACTION = 0.1  # the bar's share for the roofline screen (a tenth of a search's time or less, measured)


def _kept_all(item: Screened) -> bool:
    """The brute force's rule (prune=False): every candidate is simulated."""
    return True


def usable_candidates(scenario: Scenario, candidates: tuple[Candidate, ...], *,
                      model_specs: dict[str, ModelSpec] | None = None) -> tuple[Candidate, ...]:
    """Candidates the decision would evaluate (no exclusion: TP and dtypes valid, lengths servable)."""
    specs = model_specs if model_specs is not None else {m: load_model(m) for m in {c.model for c in candidates}}
    return _usable(scenario, candidates, model_specs=specs)


def _scope(scenario: Scenario, *, api_sheet: PriceSheet[ApiPriceRow] | None, quality_sheet: QualitySheet | None,
           today: dt.date) -> SearchScope:
    api = api_sheet or load_api_prices()
    sheet = quality_sheet or load_quality_scores(open_model_ids=open_model_ids(api))
    return search_scope(scenario, api_sheet=api, quality=sheet, as_of=today)


@contextmanager
def lost_workers() -> Iterator[None]:
    """A worker lost underneath the search (a pool process killed, by the OOM killer say, or a Ray worker or
    node gone) becomes a CostmodelError naming what was lost, not a traceback; the task's own errors
    (RayTaskError: a bug to show as it is) and the project's input errors pass through."""
    try:
        yield
    except CostmodelError:
        raise
    except BrokenProcessPool as exc:
        raise CostmodelError(
            f"a search worker process died mid-search ({exc}); no result was kept. Rerun the search, with fewer "
            "--workers (or --workers 1) if the machine is short of memory") from None
    except Exception as exc:
        # ray is optional: its errors are known by module.
        if not type(exc).__module__.startswith("ray.") or type(exc).__name__.startswith("RayTaskError"):
            raise
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise CostmodelError(
            f"a Ray worker was lost mid-search ({type(exc).__name__}: {first_line[:200]}); no result was kept. "
            "Check the cluster (`ray status`) and rerun, or use --executor local") from None


def search(scenario: Scenario, *, top_k: int = 5, gpu_sheet: PriceSheet[GpuPriceRow] | None = None,
           calibration: Calibration | None = None, today: dt.date | None = None,
           executor: LocalExecutor | RayExecutor | None = None, quality: QualityFilter | None = None,
           prune: bool = True, keep_front: bool = False, cache: CapacityCache | None = None,
           progress: Progress | None = None, api_sheet: PriceSheet[ApiPriceRow] | None = None,
           quality_sheet: QualitySheet | None = None) -> SearchResult:
    """Enumerate, screen and simulate (see `_search`); a worker lost mid-search is a CostmodelError."""
    with lost_workers():
        return _search(scenario, top_k=top_k, gpu_sheet=gpu_sheet, calibration=calibration, today=today,
                       executor=executor, quality=quality, prune=prune, keep_front=keep_front, cache=cache,
                       progress=progress, api_sheet=api_sheet, quality_sheet=quality_sheet)


def _silent(fraction: float, text: str) -> None:
    """The progress hook when the caller gives none."""


def simulated_fraction(*, simulated: int, queued: int) -> float:
    """The bar's share after the screen: SCREEN_FRACTION + the rest x simulated / (simulated + still queued).
    Pruning only shortens the queue and each wave moves WAVE from it to the simulated, so it never falls (the
    screened queue itself is no measure: the first prune settles most of it in one step)."""
    total = simulated + queued
    return SCREEN_FRACTION + (1.0 - SCREEN_FRACTION) * (simulated / total if total else 1.0)


def _wave_hook(report: Progress, *, simulated: int, at: float) -> Callable[[int, int], None]:
    """The hook called after each simulation of a wave: the bar stays at `at`, its text counts the wave."""
    def each(done: int, missing: int) -> None:
        report(at, f"simulated {simulated:,} configurations; simulating the next {done}/{missing}")
    return each


def _search(scenario: Scenario, *, top_k: int = 5, gpu_sheet: PriceSheet[GpuPriceRow] | None = None,
           calibration: Calibration | None = None, today: dt.date | None = None,
           executor: LocalExecutor | RayExecutor | None = None, quality: QualityFilter | None = None,
           prune: bool = True, keep_front: bool = False, cache: CapacityCache | None = None,
           progress: Progress | None = None, api_sheet: PriceSheet[ApiPriceRow] | None = None,
           quality_sheet: QualitySheet | None = None) -> SearchResult:
    """Enumerate (the models of search/scope.py, cut further by the `quality` hook when given), screen,
    simulate the survivors; `prune=False` simulates every usable candidate (brute force),
    `keep_front=True` keeps every candidate that could join the tokens/s-per-user front (module docstring).
    `cache` (shared with `decide`) holds capacities already simulated, so a repeated search or the decision
    over its top K simulates nothing twice. `progress(fraction, text)` is called after each model screened (in
    this process), after the screen, after each simulation and after each wave (fraction: `simulated_fraction`);
    an exception it raises (the app's Cancel) stops the search there and propagates."""
    if top_k < 1:
        raise ValueError("top_k must be >= 1")
    started = time.perf_counter()
    sheet = gpu_sheet or load_gpu_prices()
    today = scenario.evaluation_date(override=today)
    scope = _scope(scenario, api_sheet=api_sheet, quality_sheet=quality_sheet, today=today)
    runner = executor or LocalExecutor()
    report = progress or _silent
    inputs = Shared(SearchInputs(scenario, sheet, calibration, today=today, scope=scope))
    enumerated, hosted, screened = _screen(inputs, runner=runner, quality=quality, models=scope.models,
                                           viable_only=prune, report=report)
    queue = sorted(screened, key=lambda s: (s.ranked_lower, -s.tokens_per_second_per_user_upper,
                                            s.candidate.order_key))
    simulations = Simulations(inputs, runner=runner, cache=cache, queue=queue)
    report(SCREEN_FRACTION, f"screened {enumerated:,} configurations; simulating the cheapest")
    simulated: list[Configuration] = []
    capacities: dict[ReplicaKey, tuple[Capacity, str] | None] = {}  # one per replica and engine; None: given up
    sharing = _by_capacity(queue) if prune and not keep_front else {}
    hits = 0
    try:  # a hook that raises (the app's Cancel, Ctrl-C) drops the simulations started ahead
        while queue:
            keeps = _kept_all
            tests: list[NotNeeded | None] | None = None
            if prune:
                rule = WaveRule(ranked_rows(simulated, accept_unverified=scenario.accept_unverified_latency),
                                top_k=top_k, keep_front=keep_front)
                queue, keeps = rule.settle(queue), rule.keeps
            wave, queue = queue[:WAVE], queue[WAVE:]
            # A capacity given up cannot put any candidate sharing it into the top K (search/give_up.py).
            wave = [s for s in wave if capacities.get(s.candidate.capacity_key, ()) is not None]
            new = list({s.candidate.capacity_key: s.candidate for s in wave
                        if s.candidate.capacity_key not in capacities}.values())
            if sharing:
                tests = [not_needed(scenario, [s for s in sharing[c.capacity_key] if keeps(s)],
                                    limit_usd_per_month=rule.limit_usd_per_month) for c in new]
            simulations.start_ahead((s.candidate for s in queue), known=capacities, keeps=keeps)
            values, wave_hits = simulations.capacities(new, keeps=keeps, give_ups=tests, each=_wave_hook(
                report, simulated=len(simulated), at=simulated_fraction(simulated=len(simulated),
                                                                        queued=len(wave) + len(queue))))
            hits += wave_hits
            capacities.update(zip((c.capacity_key for c in new), values, strict=True))
            simulated.extend(simulations.row(s.candidate, value, gpu_sheet=sheet, today=today, scope=scope)
                             for s in wave if (value := capacities[s.candidate.capacity_key]) is not None)
            report(simulated_fraction(simulated=len(simulated), queued=len(queue)),
                   f"simulated {len(simulated):,} configurations")
    finally:
        simulations.discard()
    return search_result(simulated, top_k=top_k, enumerated=enumerated, started=started, hits=hits, scope=scope,
                         without_host=enumerated - hosted, accept_unverified=scenario.accept_unverified_latency,
                         horizon_months=scenario.horizon_months)


def _by_capacity(queue: list[Screened]) -> dict[ReplicaKey, list[Screened]]:
    """The queued candidates of each capacity (its offerings and scalings), in queue order."""
    out: dict[ReplicaKey, list[Screened]] = {}
    for s in queue:
        out.setdefault(s.candidate.capacity_key, []).append(s)
    return out


def _screen(inputs: Shared[SearchInputs], *, runner: LocalExecutor | RayExecutor, quality: QualityFilter | None,
            models: tuple[str, ...], viable_only: bool, report: Progress) -> tuple[int, int, tuple[Screened, ...]]:
    """(candidates enumerated, those with their host counted, the usable ones' bounds, only the viable with
    `viable_only`: the wave rule's first test, fixed per candidate, so applied once here, not once a wave): here
    by model with one worker, else by block in the workers (search/parallel.py)."""
    scenario, sheet = inputs.value.scenario, inputs.value.gpu_sheet
    if runner.parallelism > 1:
        space = search_space(scenario, gpu_sheet=sheet, quality=quality, model_ids=models)
        enumerated, hosted, screened = screen_space(inputs, space, runner=runner, viable_only=viable_only)
        if not enumerated:
            raise CostmodelError(EMPTY_SPACE)
        return enumerated, hosted, screened
    candidates = enumerate_candidates(scenario, gpu_sheet=sheet, quality=quality, model_ids=models)
    specs = {m: load_model(m) for m in {c.model for c in candidates}}
    with_host = hosted_candidates(scenario, candidates, sheet=sheet)
    screened = screen_in_parallel(
        scenario, with_host, gpu_sheet=sheet, calibration=inputs.value.calibration, model_specs=specs, runner=runner,
        progress=lambda done, shares: report(SCREEN_FRACTION * done / shares, f"screening {len(candidates):,} "
                                             f"configurations with the roofline: {done}/{shares} models"))
    return len(candidates), len(with_host), tuple(s for s in screened if s.viable) if viable_only else screened


def option_name(rank: int, configuration: Configuration) -> str:
    """'search-1-<model>-<hardware>-tp<N>' (dtypes appended so two precisions of one replica stay distinct; the
    engine, the serving mode ('pd1p1d-g8-mtp1', 'dep16') and the scaling ('autoscale', 'mixed') appended when not
    generic / none / fixed)."""
    c = configuration
    name = f"search-{rank}-{c.model}-{c.hardware}-tp{c.gpus_per_replica}-{c.weight_dtype}-{c.kv_dtype}"
    name += f"-{c.engine}" if c.engine != "generic" else ""
    name += f"-{c.mode_choice.slug(gpus=c.gpus_per_replica)}" if c.mode_choice is not None else ""
    return name + (f"-{c.scaling}" if c.scaling != "fixed" else "")


def with_configuration(scenario: Scenario, configuration: Configuration, *, name: str,
                       api_sheet: PriceSheet[ApiPriceRow] | None = None) -> Scenario:
    """The scenario with one searched configuration added as a self-host option called `name` (the app's
    "add to scenario"), carrying the scenario's ops and host terms (search/scope.py) and, with `substitutes:`
    groups, joining the group of the option serving its model; raises CostmodelError when an option already
    has that name."""
    if any(o.name == name for o in scenario.options):
        raise CostmodelError(f"options: an option named '{name}' is already in the scenario; rename or remove it first")
    added = searched_option(scenario, configuration.candidate(), name=name)
    update: dict[str, object] = {"options": [*scenario.options, added]}
    group = grouped_with(scenario, model=configuration.model, api_sheet=api_sheet or load_api_prices())
    if group is not None and scenario.substitutes is not None:
        update["substitutes"] = [[*g, name] if i == group else list(g) for i, g in enumerate(scenario.substitutes)]
    return scenario.model_copy(update=update)


def with_searched_options(scenario: Scenario, result: SearchResult, *, top_k: int) -> Scenario:
    """The scenario with the top K configurations added as self-host options beside the listed ones (a name
    the scenario already lists, e.g. one added from an earlier search, is kept as listed)."""
    for rank, c in enumerate(result.best[:top_k], start=1):
        name = option_name(rank, c)
        if all(o.name != name for o in scenario.options):
            scenario = with_configuration(scenario, c, name=name)
    return scenario
