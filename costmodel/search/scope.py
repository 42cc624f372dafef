"""Which models the search may deploy, and the terms every searched configuration carries: the decision's rules.

Models. The search competes only with what `compare` would let compete (decision/feasibility.py, quality.py):
- by default the scenario's own models: its self-host options' models and the open models its API options sell;
- with a quality floor (`quality:`), every catalog model past it, by the decision's own `assess` (a model the
  floor's benchmark does not score cannot be shown to pass, so it is left out);
- `search.models: [ids]` the listed models, `search.models: all` the whole catalog (less tiny-test); either is
  still cut by the floor, and without one the models searched beyond the scenario's own are *treated as
  substitutes* of the scenario's models (which every face says);
- with `substitutes:` groups only the models that a grouped option serves (a searched configuration joins the
  group of that option, `grouped_with`), since any other model would not be a substitute of anything.
Context windows, TP sizes and dtypes are the decision's `self_host_exclusion` (search/run.py); retirements and
rate limits belong to API rows, so no self-hosted configuration has them.

Terms. The scenario's operations and host figures apply to every candidate: `search.ops_usd_per_month` /
`ops_usd_per_gpu_month` when set, else those of the scenario's self-host option serving the same model (the
lowest when several do), else the lowest of all its self-host options; with no self-host option and no
`search.ops_*` the search refuses rather than price ops at $0. Owned host overrides (`host_capex_usd_per_gpu`,
`host_power_kw_per_gpu`) of a scenario option on the same accelerator apply to the candidates on it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from costmodel.catalog import accelerators, models
from costmodel.catalog.quality import DEFAULT_BENCHMARK, QualitySheet
from costmodel.decision.feasibility import assess
from costmodel.decision.quality import ResolvedFloor, option_scores, resolve_floor
from costmodel.errors import CostmodelError, unknown_id_error
from costmodel.pricing import ApiPriceRow, PriceSheet
from costmodel.scenario import ApiOption, Scenario, SelfHostOption

EXCLUDED_MODELS = frozenset({"tiny-test"})  # a test fixture, not a servable model
ScopeBasis = Literal["scenario", "quality_floor", "listed", "all"]


@dataclass(frozen=True, kw_only=True)
class SearchScope:
    """The models searched, why, their quality scores and the models left out (with the reason)."""

    models: tuple[str, ...]
    basis: ScopeBasis
    floor: ResolvedFloor | None
    benchmark: str  # the floor's benchmark, else the default one (for `quality_score`)
    quality_scores: Mapping[str, float | None]  # model -> score on `benchmark` (None: unscored)
    treated_as_substitutes: bool  # models beyond the scenario's own, with no floor to vouch for them
    left_out: tuple[tuple[str, str], ...] = ()  # (model, why), e.g. the scenario's models below the floor

    def sentence(self) -> str:
        """One sentence for people: which models were searched and on what grounds."""
        names = ", ".join(self.models)
        if self.basis == "scenario":
            text = f"Models searched: the scenario's own ({names})."
        elif self.basis == "quality_floor":
            text = f"Models searched: the {len(self.models)} catalog models past the quality floor, {self.floor.label if self.floor else ''} ({names})."
        elif self.basis == "listed":
            text = f"Models searched: search.models ({names})."
        else:
            text = f"Models searched: search.models: all, {len(self.models)} catalog models."
        if self.treated_as_substitutes:
            text += (" They are treated as substitutes of the scenario's models: no quality floor checks that they "
                     "answer as well (set quality: to require it).")
        if self.left_out:
            text += " Left out: " + "; ".join(f"{m} ({why})" for m, why in self.left_out) + "."
        return text

    def contract(self) -> dict[str, object]:
        """`search --json` keys on the models searched."""
        return {"models_searched": list(self.models), "models_basis": self.basis,
                "models_treated_as_substitutes": self.treated_as_substitutes, "models_sentence": self.sentence(),
                "quality_floor": self.floor.contract() if self.floor else None,
                "models_left_out": [{"model": m, "reason": why} for m, why in self.left_out]}


def scenario_models(scenario: Scenario, api_sheet: PriceSheet[ApiPriceRow]) -> tuple[str, ...]:
    """The catalog models the scenario's options serve (self-host models, API rows' open models), in order."""
    known = models()
    found: list[str] = []
    for option in scenario.options:
        if isinstance(option, SelfHostOption):
            found.append(option.model)
        elif isinstance(option, ApiOption) and option.price_id in api_sheet.ids():
            open_model = api_sheet.get(option.price_id).open_model_id
            if open_model:
                found.append(open_model)
    return tuple(m for m in dict.fromkeys(found) if m in known)


def _probe(scenario: Scenario, model_ids: tuple[str, ...]) -> Scenario:
    """The scenario with one self-host option per model (named by it): the subjects `assess` scores."""
    hardware = sorted(accelerators())[0]  # any: quality reads the model only
    probe = [SelfHostOption(name=m, model=m, hardware=hardware, usd_per_gpu_hour=1.0) for m in model_ids]
    return scenario.model_copy(update={"options": probe, "substitutes": None})


def _listed(scenario: Scenario) -> tuple[ScopeBasis, tuple[str, ...]] | None:
    listed = scenario.search.models if scenario.search else None
    known = sorted(models())
    if listed == "all":
        return "all", tuple(m for m in known if m not in EXCLUDED_MODELS)
    if listed is None:
        return None
    for index, item in enumerate(listed):
        if item not in known:
            raise CostmodelError(f"search.models[{index}]: {unknown_id_error('model', item, known)}")
    return "listed", tuple(dict.fromkeys(listed))


def _grouped_models(scenario: Scenario, api_sheet: PriceSheet[ApiPriceRow]) -> set[str] | None:
    """Models served by an option named in a `substitutes:` group (None without groups)."""
    if scenario.substitutes is None:
        return None
    grouped = {name for group in scenario.substitutes for name in group}
    options = [o for o in scenario.options if o.name in grouped]
    return set(scenario_models(scenario.model_copy(update={"options": options}), api_sheet))


def search_scope(scenario: Scenario, *, api_sheet: PriceSheet[ApiPriceRow], quality: QualitySheet,
                 as_of: dt.date) -> SearchScope:
    """The models searched (module docstring); raises CostmodelError when none is left, naming the fix."""
    own = scenario_models(scenario, api_sheet)
    floor = resolve_floor(scenario, quality)
    listed = _listed(scenario)
    if listed is not None:
        basis, chosen = listed
    elif floor is not None:
        basis, chosen = "quality_floor", tuple(m for m in sorted(models()) if m not in EXCLUDED_MODELS)
    else:
        basis, chosen = "scenario", own
    benchmark = floor.benchmark if floor else DEFAULT_BENCHMARK
    scores = option_scores(_probe(scenario, chosen), quality, benchmark=benchmark) if chosen else {}
    left_out: list[tuple[str, str]] = []
    if floor is not None:
        unscored = [m for m in chosen if scores.get(m) is None]
        left_out += [(m, f"no {benchmark} score, so it cannot be shown to pass the floor") for m in unscored
                     if m in own or basis != "quality_floor"]
        scored = tuple(m for m in chosen if m not in unscored)
        below = assess(_probe(scenario, scored), api_sheet=api_sheet, quality=quality, as_of=as_of).below_floor
        left_out += [(m, f"below the quality floor, {benchmark} {scores[m]:g} < {floor.min_score:g}") for m in below
                     if m in own or basis != "quality_floor"]
        chosen = tuple(m for m in scored if m not in below)
    grouped = _grouped_models(scenario, api_sheet)
    if grouped is not None:
        left_out += [(m, "no option of a substitutes: group serves it") for m in chosen if m not in grouped
                     and (m in own or basis == "listed")]
        chosen = tuple(m for m in chosen if m in grouped)
    if not chosen:
        raise CostmodelError("search: no model to search (" + ("; ".join(f"{m}: {w}" for m, w in left_out)
                             or "the scenario serves no catalog model") + "); list models in search.models (or "
                             "search.models: all), add a self-host option, or lower the quality floor")
    beyond = any(m not in own for m in chosen)
    return SearchScope(models=chosen, basis=basis, floor=floor, benchmark=benchmark,
                       quality_scores={m: scores.get(m) for m in chosen},
                       treated_as_substitutes=floor is None and beyond, left_out=tuple(left_out))


@dataclass(frozen=True, kw_only=True)
class OptionTerms:
    """What a searched configuration pays beyond its GPUs: ops, owned host overrides, warm-up (module docstring)."""

    ops_usd_per_month: float
    ops_usd_per_gpu_month: float
    ops_source: str  # for people: where the ops figures come from
    host_capex_usd_per_gpu: float | None = None
    host_power_kw_per_gpu: float | None = None
    warmup_minutes: float = 60.0


def _self_host_options(scenario: Scenario) -> list[SelfHostOption]:
    return [o for o in scenario.options if isinstance(o, SelfHostOption)]


def _ops(scenario: Scenario, model: str) -> tuple[float, float, str]:
    settings = scenario.search
    own = _self_host_options(scenario)
    same = [o for o in own if o.model == model]
    pool = same or own
    if (settings is None or settings.ops_usd_per_month is None or settings.ops_usd_per_gpu_month is None) and not pool:
        raise CostmodelError("search.ops_usd_per_month: the scenario has no self-host option to take the operations "
                             "cost of a searched configuration from; set search.ops_usd_per_month (and "
                             "search.ops_usd_per_gpu_month), 0 to leave ops out")
    fixed = settings.ops_usd_per_month if settings and settings.ops_usd_per_month is not None else None
    per_gpu = settings.ops_usd_per_gpu_month if settings and settings.ops_usd_per_gpu_month is not None else None
    where = (f"option {min(pool, key=lambda o: o.ops_usd_per_month).name}" if same
             else "the lowest of the scenario's self-host options")
    source = "search.ops_usd_per_month" if fixed is not None else where
    return (fixed if fixed is not None else min(o.ops_usd_per_month for o in pool),
            per_gpu if per_gpu is not None else min(o.ops_usd_per_gpu_month for o in pool), source)


def option_terms(scenario: Scenario, *, model: str, hardware: str) -> OptionTerms:
    """The ops and host terms a candidate of `model` on `hardware` carries (module docstring)."""
    fixed, per_gpu, source = _ops(scenario, model)
    hosts = [o for o in _self_host_options(scenario) if o.hardware == hardware
             and (o.host_capex_usd_per_gpu is not None or o.host_power_kw_per_gpu is not None)]
    host = hosts[0] if hosts else None
    return OptionTerms(ops_usd_per_month=fixed, ops_usd_per_gpu_month=per_gpu, ops_source=source,
                       host_capex_usd_per_gpu=host.host_capex_usd_per_gpu if host else None,
                       host_power_kw_per_gpu=host.host_power_kw_per_gpu if host else None,
                       warmup_minutes=scenario.search.warmup_minutes if scenario.search else 60.0)


def grouped_with(scenario: Scenario, *, model: str, api_sheet: PriceSheet[ApiPriceRow]) -> int | None:
    """Index of the `substitutes:` group a searched configuration of `model` joins (that of the first grouped
    option serving the model), or None (no groups, or none serves it)."""
    if scenario.substitutes is None:
        return None
    for index, group in enumerate(scenario.substitutes):
        options = [o for o in scenario.options if o.name in group]
        if model in scenario_models(scenario.model_copy(update={"options": options}), api_sheet):
            return index
    return None
