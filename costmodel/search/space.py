"""Step 1 of the search: enumerate the self-host configurations a scenario could deploy.

models (the scenario's `search: models:`, else the catalog minus tiny-test, optionally filtered by a quality
hook) x accelerators with a GPU price offering x valid tensor-parallel sizes x weight/KV dtypes the hardware
holds x offerings x engine profiles x scaling. Every bundled engine profile is searched (`naive`, the teaching
baseline, included: its one-sequence cap gives a tight capacity bound, so the screen prunes it without simulating).
Scaling is `fixed` on every offering and `autoscale` on on-demand offerings (owned and reserved GPUs are
paid whether used or not, so the decision refuses to autoscale them: `decision.fleet.autoscaled_result`; autoscale
on spot needs the user's interruption rate, which has no public default, so the search does not invent one).
An autoscaled configuration pays `search.warmup_minutes` per started replica (default 60, the schema's largest
value: warm-up is billed in whole hours, so every warm-up in (0, 60] min bills the same hour).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from costmodel.catalog import accelerators, load_accelerator, load_model, models
from costmodel.catalog.engines import GENERIC_ENGINE_ID, engine_ids
from costmodel.catalog.quality import load_quality_scores
from costmodel.decision.quality import resolve_floor
from costmodel.dtypes import KV_DTYPES, WEIGHT_DTYPES, unsupported_dtype_reason
from costmodel.errors import CostmodelError, unknown_id_error
from costmodel.estimate import valid_tensor_parallel_sizes
from costmodel.pricing import GpuPriceRow, PriceSheet, load_api_prices
from costmodel.pricing.sheets import open_model_ids
from costmodel.scenario import Scenario, SelfHostOption
from costmodel.scenario.options import ScalingPolicy

# Formats searched: the serving formats engines ship (fp32 and fp16 add nothing over bf16 for serving).
SEARCH_WEIGHT_DTYPES: tuple[str, ...] = ("bf16", "fp8", "int8", "int4", "fp4")
SEARCH_KV_DTYPES: tuple[str, ...] = ("bf16", "fp8", "fp4")
# Tensor parallelism beyond one 8-GPU node is not searched (NVLink domain of HGX/DGX boards).
MAX_SEARCH_GPUS = 8
SEARCH_SCALING: tuple[str, ...] = ("fixed", "autoscale")
AUTOSCALE_OFFERINGS = frozenset({"on-demand"})  # owned/reserved: fixed only; spot: needs an interruption rate
DEFAULT_SEARCH_WARMUP_MINUTES = 60.0  # the schema's largest warm-up; billed per whole hour, so = any in (0, 60]
EXCLUDED_MODELS = frozenset({"tiny-test"})  # a test fixture, not a servable model

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

    @property
    def replica_key(self) -> tuple[str, str, int, str, str]:
        """The replica's hardware configuration (memory fit and the roofline depend only on it)."""
        return (self.model, self.hardware, self.gpus_per_replica, self.weight_dtype, self.kv_dtype)

    @cached_property
    def capacity_key(self) -> tuple[str, str, int, str, str, str]:
        """What the simulated capacity depends on: the replica and its engine (offering and scaling only price it)."""
        return (*self.replica_key, self.engine)

    def option(self, *, name: str, ops_usd_per_month: float = 0.0,
               warmup_minutes: float = DEFAULT_SEARCH_WARMUP_MINUTES) -> SelfHostOption:
        """This configuration as a scenario option (`warmup_minutes` applies to autoscale only)."""
        scaling = (ScalingPolicy(mode="autoscale", warmup_minutes=warmup_minutes) if self.scaling == "autoscale"
                   else ScalingPolicy())
        return SelfHostOption(name=name, model=self.model, hardware=self.hardware,
                              gpus_per_replica=self.gpus_per_replica, weight_dtype=self.weight_dtype,  # type: ignore[arg-type]
                              kv_dtype=self.kv_dtype, offering=self.offering,  # type: ignore[arg-type]
                              ops_usd_per_month=ops_usd_per_month, engine=self.engine, scaling=scaling)




def search_warmup_minutes(scenario: Scenario) -> float:
    """Warm-up per started replica of an autoscaled configuration: `search.warmup_minutes`, else 60."""
    return scenario.search.warmup_minutes if scenario.search else DEFAULT_SEARCH_WARMUP_MINUTES


def scalings(offering_kind: str) -> tuple[str, ...]:
    """Scaling modes an offering of this kind can run (autoscale only on on-demand)."""
    return SEARCH_SCALING if offering_kind in AUTOSCALE_OFFERINGS else ("fixed",)


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
    """The models searched: `search.models` (checked against the catalog), else the catalog (minus
    tiny-test), kept where `quality(model_id)` is true when a quality filter is given."""
    known = sorted(models())
    listed = scenario.search.models if scenario.search and scenario.search.models else None
    if listed is not None:
        _check_ids("search.models", listed, known, "model")
    chosen = list(dict.fromkeys(listed)) if listed is not None else [m for m in known if m not in EXCLUDED_MODELS]
    return tuple(m for m in chosen if quality is None or quality(m))


def scenario_quality_filter(scenario: Scenario) -> QualityFilter | None:
    """The scenario's `quality:` floor as a model filter (None without one): a model passes when the quality
    sheet scores it at least the floor on the floor's benchmark; a model with no score there is left out
    (it cannot be shown to pass)."""
    sheet = load_quality_scores(open_model_ids=open_model_ids(load_api_prices())) if scenario.quality else None
    floor = resolve_floor(scenario, sheet) if sheet is not None else None
    if sheet is None or floor is None:
        return None

    def passes(model_id: str) -> bool:
        score = sheet.score(model_id, floor.benchmark)
        return score is not None and score.score >= floor.min_score

    return passes


def _dtype_pairs(hardware_id: str) -> list[tuple[str, str]]:
    peaks = load_accelerator(hardware_id).peak_flops_per_s
    return [(w, kv) for w in SEARCH_WEIGHT_DTYPES for kv in SEARCH_KV_DTYPES
            if w in WEIGHT_DTYPES and kv in KV_DTYPES
            and unsupported_dtype_reason(weight_dtype=w, kv_dtype=kv, peak_flops_per_s=peaks) is None]


def enumerate_candidates(scenario: Scenario, *, gpu_sheet: PriceSheet[GpuPriceRow],
                         quality: QualityFilter | None = None) -> tuple[Candidate, ...]:
    """Every configuration of the space, in a deterministic order; raises CostmodelError when it is empty."""
    model_ids = search_models(scenario, quality=quality)
    offerings: dict[str, list[tuple[str, str]]] = {}
    for row in gpu_sheet.rows:
        offerings.setdefault(row.accelerator_id, []).append((row.id, row.offering))
    listed_hw = scenario.search.hardware if scenario.search and scenario.search.hardware else None
    if listed_hw is not None:
        _check_ids("search.hardware", listed_hw, sorted(accelerators()), "hardware")
    hardware_ids = [h for h in sorted(offerings) if h in accelerators() and (listed_hw is None or h in listed_hw)]
    engines = search_engines(scenario)
    out: list[Candidate] = []
    for model_id in model_ids:
        sizes = valid_tensor_parallel_sizes(load_model(model_id), max_gpus=MAX_SEARCH_GPUS)
        for hw in hardware_ids:
            for gpus in sizes:
                for weight_dtype, kv_dtype in _dtype_pairs(hw):
                    for offering, kind in offerings[hw]:
                        for engine in engines:
                            out.extend(Candidate(model=model_id, hardware=hw, gpus_per_replica=gpus,
                                                 weight_dtype=weight_dtype, kv_dtype=kv_dtype, offering=offering,
                                                 engine=engine, scaling=scaling) for scaling in scalings(kind))
    if not out:
        raise CostmodelError("search: the search space is empty (no model passes the quality floor / "
                             "search.models, or no listed hardware has a GPU price offering); widen search.models, "
                             "search.hardware or lower the quality floor")
    return tuple(out)
