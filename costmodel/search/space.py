"""Step 1 of the search: enumerate the self-host configurations a scenario could deploy.

models (search/scope.py: the scenario's own, those past its quality floor, or `search.models`; optionally cut
further by a quality hook) x accelerators with a GPU price offering x valid tensor-parallel sizes x weight/KV dtypes the hardware
holds x offerings x engine profiles x scaling. Every bundled engine profile is searched (`naive`, the teaching
baseline, included: its one-sequence cap gives a tight capacity bound, so the screen prunes it without simulating).
Scaling is `fixed` on every offering, `autoscale` on on-demand offerings (owned and reserved GPUs are paid
whether used or not, so the decision refuses to autoscale them: `decision.terms.option_plan`; autoscale
on spot needs the user's interruption rate, which has no public default, so the search does not invent one), and
`mixed` on reserved and owned offerings of an accelerator that also has an on-demand row (the fixed base on the
offering, the burst on the cheapest on-demand row: `decision.mixed`; no spot share, for the same reason).
Spot offerings are searched only for a batch workload (`workload.batch_allowed`): spot capacity can be
reclaimed, so it is not for SLO-bound interactive serving alone (the decision warns about it on any option), and
a fixed fleet on spot is priced without the interruptions the search has no rate for.
An autoscaled or mixed configuration pays `search.warmup_minutes` per started replica (default 60, the schema's
largest value: warm-up is billed in whole hours, so every warm-up in (0, 60] min bills the same hour).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from costmodel.catalog import accelerators, load_accelerator, load_model
from costmodel.catalog.engines import GENERIC_ENGINE_ID, engine_ids
from costmodel.catalog.params import ModelShape, derive_shape
from costmodel.catalog.quality import load_quality_scores
from costmodel.dtypes import KV_DTYPES, WEIGHT_DTYPES, unsupported_dtype_reason
from costmodel.errors import CostmodelError, unknown_id_error
from costmodel.estimate import valid_tensor_parallel_sizes
from costmodel.pricing import GpuPriceRow, PriceSheet, load_api_prices
from costmodel.pricing.sheets import open_model_ids
from costmodel.scenario import Scenario, SelfHostOption
from costmodel.scenario.modes import DisaggregationSpec, SpeculationSpec
from costmodel.scenario.options import ScalingPolicy
from costmodel.search.mode_choice import ModeChoice, dep_choices, mode_choices
from costmodel.search.scope import EXCLUDED_MODELS, OptionTerms, search_scope

# Formats searched: the serving formats engines ship (fp32 and fp16 add nothing over bf16 for serving).
SEARCH_WEIGHT_DTYPES: tuple[str, ...] = ("bf16", "fp8", "int8", "int4", "fp4")
SEARCH_KV_DTYPES: tuple[str, ...] = ("bf16", "fp8", "fp4")
# Tensor parallelism beyond one 8-GPU node is not searched (NVLink domain of HGX/DGX boards).
MAX_SEARCH_GPUS = 8
SEARCH_SCALING: tuple[str, ...] = ("fixed", "autoscale")
AUTOSCALE_OFFERINGS = frozenset({"on-demand"})  # owned/reserved: fixed or mixed; spot: needs an interruption rate
MIXED_BASE_OFFERINGS = frozenset({"reserved", "owned"})  # decision.mixed.check_mixed_base
DEFAULT_SEARCH_WARMUP_MINUTES = 60.0  # the schema's largest warm-up; billed per whole hour, so = any in (0, 60]
__all__ = ["EXCLUDED_MODELS", "Candidate", "enumerate_candidates", "scalings", "search_engines"]

QualityFilter = Callable[[str], bool]


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One self-host configuration of the search space (priced by one GPU offering)."""

    model: str
    hardware: str
    gpus_per_replica: int
    weight_dtype: str
    kv_dtype: str
    offering: str
    engine: str = "generic"
    scaling: str = "fixed"
    mode: ModeChoice | None = None  # a serving mode (search/mode_choice.py); None: aggregated, tensor parallel

    @property
    def replica_key(self) -> tuple[object, ...]:
        """The replica's hardware configuration (memory fit and the roofline depend only on it), and its mode."""
        key: tuple[object, ...] = (self.model, self.hardware, self.gpus_per_replica, self.weight_dtype, self.kv_dtype)
        return key if self.mode is None else (*key, self.mode)

    @property
    def order_key(self) -> tuple[str, str, int, str, str, str, str, str]:
        """The fields in declaration order: sorts as repr() did (ids are [a-z0-9._/-], which sort after the
        quote that ends a field in repr, and at most 8 GPUs are one digit), without building a string."""
        return (self.model, self.hardware, self.gpus_per_replica, self.weight_dtype, self.kv_dtype, self.offering,
                self.engine, self.scaling)

    @property
    def capacity_key(self) -> tuple[object, ...]:
        """What the simulated capacity depends on: the replica, its engine (offering and scaling only price it)
        and its serving mode (appended after the engine, so the first six entries keep their meaning).
        Computed on each read (0.6 us), not cached: storing it in a new instance's __dict__, as
        functools.cached_property does, took 5.6 us a candidate (0.9 s over the 157,600 a chat-assistant search
        screens, measured 2026-12-02), and the search reads it once or twice a candidate."""
        key = (self.model, self.hardware, self.gpus_per_replica, self.weight_dtype, self.kv_dtype, self.engine)
        return key if self.mode is None else (*key, self.mode)

    def plain(self) -> Candidate:
        """The aggregated tensor-parallel replica a mode's screen starts from (search/mode_screen.py): a pool
        instance of a disaggregated deployment, else the same GPUs (DEP, speculation)."""
        if self.mode is None:
            return self
        gpus = self.mode.pool_gpus if self.mode.disaggregated else self.gpus_per_replica
        return Candidate(model=self.model, hardware=self.hardware, gpus_per_replica=gpus, weight_dtype=self.weight_dtype,
                         kv_dtype=self.kv_dtype, offering=self.offering, engine=self.engine, scaling=self.scaling)

    def mode_fields(self) -> dict[str, object]:
        """The option fields of the candidate's serving mode (none for the plain search)."""
        mode = self.mode
        if mode is None:
            return {}
        fields: dict[str, object] = {"parallelism": mode.parallelism}
        if mode.speculation_method is not None:
            fields["speculation"] = SpeculationSpec(method=mode.speculation_method, draft_tokens=mode.draft_tokens)
        if mode.disaggregated:
            fields["disaggregated"] = DisaggregationSpec(
                prefill_gpus=mode.pool_gpus, decode_gpus=mode.pool_gpus, prefill_instances=mode.prefill_instances,
                decode_instances=mode.decode_instances)
        return fields

    def option(self, *, name: str, terms: OptionTerms | None = None) -> SelfHostOption:
        """This configuration as a scenario option carrying `terms` (ops, host overrides, warm-up; none: the
        replica alone, for capacity and the roofline, which the terms do not change)."""
        warmup = terms.warmup_minutes if terms is not None else DEFAULT_SEARCH_WARMUP_MINUTES
        scaling = (ScalingPolicy(mode=self.scaling, warmup_minutes=warmup)  # type: ignore[arg-type]
                   if self.scaling in ("autoscale", "mixed") else ScalingPolicy())
        extra = {} if terms is None else {
            "ops_usd_per_month": terms.ops_usd_per_month, "ops_usd_per_gpu_month": terms.ops_usd_per_gpu_month,
            "host_capex_usd_per_gpu": terms.host_capex_usd_per_gpu, "host_power_kw_per_gpu": terms.host_power_kw_per_gpu}
        return SelfHostOption(name=name, model=self.model, hardware=self.hardware,
                              gpus_per_replica=self.gpus_per_replica, weight_dtype=self.weight_dtype,  # type: ignore[arg-type]
                              kv_dtype=self.kv_dtype, offering=self.offering,  # type: ignore[arg-type]
                              engine=self.engine, scaling=scaling, **extra,  # type: ignore[arg-type]
                              **self.mode_fields())  # type: ignore[arg-type]


def scalings(offering_kind: str, *, on_demand_burst: bool = False) -> tuple[str, ...]:
    """Scaling modes an offering of this kind can run: autoscale on on-demand; mixed on reserved or owned when
    the accelerator has an on-demand row for the burst (`on_demand_burst`)."""
    if offering_kind in AUTOSCALE_OFFERINGS:
        return SEARCH_SCALING
    return ("fixed", "mixed") if offering_kind in MIXED_BASE_OFFERINGS and on_demand_burst else ("fixed",)


def _check_ids(field: str, wanted: Sequence[str], known: Sequence[str], what: str) -> None:
    for index, item in enumerate(wanted):
        if item not in known:
            raise CostmodelError(f"{field}[{index}]: {unknown_id_error(what, item, known)}")


def search_engines(scenario: Scenario) -> tuple[str, ...]:
    """Engine profiles searched: `search.engines` (checked against the catalog), else every bundled one,
    generic first (the module docstring)."""
    listed = scenario.search.engines if scenario.search and scenario.search.engines else None
    if listed is not None:
        _check_ids("search.engines", listed, engine_ids(), "engine")
        return tuple(dict.fromkeys(listed))
    return (GENERIC_ENGINE_ID, *(e for e in engine_ids() if e != GENERIC_ENGINE_ID))


def search_models(scenario: Scenario, *, quality: QualityFilter | None = None) -> tuple[str, ...]:
    """The models searched (search/scope.py `search_scope`, on the bundled sheets), kept where
    `quality(model_id)` is true when a quality hook is given."""
    api = load_api_prices()
    scope = search_scope(scenario, api_sheet=api, quality=load_quality_scores(open_model_ids=open_model_ids(api)),
                         as_of=scenario.evaluation_date(override=None))
    return tuple(m for m in scope.models if quality is None or quality(m))


def _dtype_pairs(hardware_id: str) -> list[tuple[str, str]]:
    peaks = load_accelerator(hardware_id).peak_flops_per_s
    return [(w, kv) for w in SEARCH_WEIGHT_DTYPES for kv in SEARCH_KV_DTYPES
            if w in WEIGHT_DTYPES and kv in KV_DTYPES
            and unsupported_dtype_reason(weight_dtype=w, kv_dtype=kv, peak_flops_per_s=peaks) is None]


def _mode_candidates(model_id: str, shape: ModelShape, hardware_id: str, *, sizes: Sequence[int],
                     engines: Sequence[str], modes: frozenset[str], offerings: list[tuple[str, str]],
                     burst: bool) -> list[Candidate]:
    """The configurations `search.modes` adds for one model and accelerator (search/mode_choice.py)."""
    hardware = load_accelerator(hardware_id)
    layouts: list[tuple[int, str, ModeChoice]] = []
    for engine in engines:
        for gpus in sizes:
            layouts += [(n, engine, m) for n, m in mode_choices(model_id=model_id, shape=shape, hardware=hardware,
                                                                tp_gpus=gpus, engine=engine, modes=modes)]
        layouts += [(n, engine, m) for n, m in dep_choices(model_id=model_id, shape=shape, hardware=hardware,
                                                           engine=engine, modes=modes)]
    return [Candidate(model=model_id, hardware=hardware_id, gpus_per_replica=gpus, weight_dtype=w, kv_dtype=kv,
                      offering=offering, engine=engine, scaling=scaling, mode=mode)
            for gpus, engine, mode in layouts for w, kv in _dtype_pairs(hardware_id) for offering, kind in offerings
            for scaling in scalings(kind, on_demand_burst=burst)]


@dataclass(frozen=True)
class SearchSpace:
    """The axes of a scenario's search space (checked), enumerated one (model, accelerator) block at a time."""

    model_ids: tuple[str, ...]
    tp_sizes: dict[str, tuple[int, ...]]  # model -> the tensor-parallel sizes searched
    hardware_ids: tuple[str, ...]
    offerings: dict[str, tuple[tuple[str, str], ...]]  # accelerator -> (offering id, kind), the sheet's order
    engines: tuple[str, ...]
    serving_modes: frozenset[str]

    def blocks(self) -> list[tuple[str, str]]:
        """(model, accelerator) pairs in enumeration order."""
        return [(m, hw) for m in self.model_ids for hw in self.hardware_ids]

    def block(self, model_id: str, hw: str) -> list[Candidate]:
        """The configurations of one model on one accelerator, in enumeration order (plain, then modes)."""
        sizes = self.tp_sizes[model_id]
        offerings = list(self.offerings[hw])
        burst = any(k == "on-demand" for _, k in offerings)
        out: list[Candidate] = []
        for gpus in sizes:
            for weight_dtype, kv_dtype in _dtype_pairs(hw):
                for offering, kind in offerings:
                    for engine in self.engines:
                        out.extend(Candidate(model=model_id, hardware=hw, gpus_per_replica=gpus,
                                             weight_dtype=weight_dtype, kv_dtype=kv_dtype, offering=offering,
                                             engine=engine, scaling=scaling)
                                   for scaling in scalings(kind, on_demand_burst=burst))
        if self.serving_modes:  # after the plain space, so its order is unchanged
            out += _mode_candidates(model_id, derive_shape(load_model(model_id)), hw, sizes=sizes, engines=self.engines,
                                    modes=self.serving_modes, offerings=offerings, burst=burst)
        return out


EMPTY_SPACE = ("search: the search space is empty (no model passes the quality floor / search.models, or no listed "
               "hardware has a GPU price offering); widen search.models (search.models: all), search.hardware or "
               "lower the quality floor")


def search_space(scenario: Scenario, *, gpu_sheet: PriceSheet[GpuPriceRow], quality: QualityFilter | None = None,
                 model_ids: tuple[str, ...] | None = None) -> SearchSpace:
    """The space's axes over `model_ids` (default `search_models`), the listed hardware and engines checked."""
    model_ids = search_models(scenario) if model_ids is None else model_ids
    model_ids = tuple(m for m in model_ids if quality is None or quality(m))
    offerings: dict[str, list[tuple[str, str]]] = {}
    for row in gpu_sheet.rows:
        if row.offering != "spot" or scenario.workload.batch_allowed:
            offerings.setdefault(row.accelerator_id, []).append((row.id, row.offering))
    listed_hw = scenario.search.hardware if scenario.search and scenario.search.hardware else None
    if listed_hw is not None:
        _check_ids("search.hardware", listed_hw, sorted(accelerators()), "hardware")
    hardware_ids = tuple(h for h in sorted(offerings) if h in accelerators() and (listed_hw is None or h in listed_hw))
    engines = search_engines(scenario)
    sizes = {m: valid_tensor_parallel_sizes(load_model(m), max_gpus=MAX_SEARCH_GPUS) for m in model_ids}
    return SearchSpace(model_ids=model_ids, tp_sizes=sizes, hardware_ids=hardware_ids,
                       offerings={h: tuple(offerings[h]) for h in hardware_ids}, engines=engines,
                       serving_modes=frozenset(scenario.search.modes if scenario.search else ()))


def enumerate_candidates(scenario: Scenario, *, gpu_sheet: PriceSheet[GpuPriceRow],
                         quality: QualityFilter | None = None,
                         model_ids: tuple[str, ...] | None = None) -> tuple[Candidate, ...]:
    """Every configuration of the space over `model_ids` (default `search_models`), in a deterministic order;
    raises CostmodelError when it is empty."""
    space = search_space(scenario, gpu_sheet=gpu_sheet, quality=quality, model_ids=model_ids)
    out = [c for model_id, hw in space.blocks() for c in space.block(model_id, hw)]
    if not out:
        raise CostmodelError(EMPTY_SPACE)
    return tuple(out)
