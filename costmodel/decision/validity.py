"""Whether an option can be evaluated and can serve the workload at all, before any cost is computed.

Each problem is a typed `Exclusion` (a kind the ranking reads, and a sentence that names the scenario
field and the fix). An option with an exclusion is still shown, with its reason, but never ranked first,
never recommended and never used as a reference; `compare` exits 2 only when no option is usable.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

from costmodel.catalog import ModelSpec, derive_shape, load_accelerator, load_model
from costmodel.decision.results import CostBreakdown, OptionResult
from costmodel.errors import CostmodelError
from costmodel.estimate import check_config
from costmodel.pricing import ApiPriceRow, PriceSheet
from costmodel.scenario import ApiOption, HybridOption, Option, Scenario, SelfHostOption, scenario_id_problems
from costmodel.scenario.workload import Workload

ExclusionKind = Literal["invalid_option", "cannot_serve_lengths", "non_finite_cost", "below_quality_floor", "retired",
                        "misses_slo", "throttled", "not_substitute"]
# A window that would refuse more than this share of the workload's requests cannot serve it.
LENGTH_REFUSAL_TOLERANCE = 0.01


@dataclass(frozen=True, kw_only=True)
class Exclusion:
    """Why an option is left out of the ranking's top, the recommendation and every reference."""

    kind: ExclusionKind
    reason: str


def _field_names(index: int) -> dict[str, str]:
    """check_config's names for a self-host option: the scenario's field paths."""
    base = f"options[{index}]"
    return {"gpus": f"{base}.gpus_per_replica", "batch": f"{base}.batch", "weight_dtype": f"{base}.weight_dtype",
            "kv_dtype": f"{base}.kv_dtype", "prompt_tokens": "workload.prompt_tokens (mean)",
            "output_tokens": "workload.output_tokens (mean)"}


def _refused_share(workload: Workload, *, max_input_tokens: int | None, max_output_tokens: int | None) -> float:
    """Share of requests whose prompt or output is longer than a window (prompt and output independent)."""
    fits_in = 1.0 - (workload.prompt_tokens.probability_above(max_input_tokens) if max_input_tokens else 0.0)
    fits_out = 1.0 - (workload.output_tokens.probability_above(max_output_tokens) if max_output_tokens else 0.0)
    return 1.0 - fits_in * fits_out


def _api_lengths(option: ApiOption, row: ApiPriceRow, workload: Workload) -> Exclusion | None:
    refused = _refused_share(workload, max_input_tokens=row.max_input_tokens, max_output_tokens=row.max_output_tokens)
    if refused <= LENGTH_REFUSAL_TOLERANCE:
        return None
    windows = []
    if row.max_input_tokens:
        windows.append(f"{row.max_input_tokens:,}-token input")
    if row.max_output_tokens:
        windows.append(f"{row.max_output_tokens:,}-token output")
    return Exclusion(kind="cannot_serve_lengths", reason=(
        f"cannot serve the lengths: {refused:.1%} of requests exceed {row.id}'s {' and '.join(windows)} window "
        f"(workload.prompt_tokens / output_tokens); pick a longer-context model or shorten the requests"))


def _self_host_lengths(option: SelfHostOption, workload: Workload, spec: ModelSpec | None = None) -> Exclusion | None:
    spec = spec or load_model(option.model)
    context = spec.max_position_embeddings
    if context is None:
        return None
    refused = _refused_share(workload, max_input_tokens=context, max_output_tokens=context)
    too_long_on_average = workload.mean_prompt_tokens() + workload.mean_output_tokens() > context
    if refused <= LENGTH_REFUSAL_TOLERANCE and not too_long_on_average:
        return None
    return Exclusion(kind="cannot_serve_lengths", reason=(
        f"cannot serve the lengths: {option.model}'s context window is {context:,} tokens and "
        f"{max(refused, 0.5 if too_long_on_average else 0.0):.1%} or more of requests are longer "
        "(workload.prompt_tokens / output_tokens); pick a longer-context model or shorten the requests"))


def option_exclusions(
    scenario: Scenario,
    *,
    api_sheet: PriceSheet[ApiPriceRow],
    gpu_offerings: Mapping[str, str],
    model_ids: Collection[str],
    hardware_ids: Collection[str],
) -> dict[str, Exclusion]:
    """Option name -> its exclusion, for every option that cannot be evaluated or cannot serve the lengths."""
    problems = scenario_id_problems(scenario, api_price_ids=api_sheet.ids(), gpu_offerings=gpu_offerings,
                                    model_ids=model_ids, hardware_ids=hardware_ids)
    found: dict[str, Exclusion] = {}
    for index, option in enumerate(scenario.options):
        if index in problems:
            found[option.name] = Exclusion(kind="invalid_option", reason=problems[index])
            continue
        exclusion = _check_option(index, option, scenario, api_sheet)
        if exclusion is not None:
            found[option.name] = exclusion
    return with_hybrid_parts(scenario, found)


def with_hybrid_parts(scenario: Scenario, found: dict[str, Exclusion]) -> dict[str, Exclusion]:
    """`found` plus every hybrid whose self-host or API part is excluded (a hybrid is only as usable as both)."""
    found = dict(found)
    for option in scenario.options:
        if isinstance(option, HybridOption) and option.name not in found:
            broken = [part for part in (option.self_host, option.api) if part in found]
            if broken:
                found[option.name] = Exclusion(kind=found[broken[0]].kind, reason=(
                    f"its part '{broken[0]}' is excluded: {found[broken[0]].reason}"))
    return found


def _check_option(index: int, option: Option, scenario: Scenario, api_sheet: PriceSheet[ApiPriceRow], *,
                  model_spec: ModelSpec | None = None) -> Exclusion | None:
    workload = scenario.workload
    if isinstance(option, ApiOption):
        return _api_lengths(option, api_sheet.get(option.price_id), workload)
    if isinstance(option, SelfHostOption):
        spec = model_spec or load_model(option.model)
        # Tensor-parallel sizes to check: the replica's, or each pool's of a disaggregated deployment.
        layout = option.disaggregated
        sizes = ({"gpus_per_replica": option.gpus_per_replica} if layout is None else
                 {"disaggregated.prefill_gpus": layout.prefill_gpus, "disaggregated.decode_gpus": layout.decode_gpus})
        try:
            for field, gpus in sizes.items():
                check_config(spec, gpus=gpus, weight_dtype=option.weight_dtype,
                             kv_dtype=option.kv_dtype, batch=1, prompt_tokens=1, output_tokens=1,
                             field_names={**_field_names(index), "gpus": f"options[{index}].{field}"},
                             hardware=load_accelerator(option.hardware))
        except CostmodelError as exc:
            return Exclusion(kind="invalid_option", reason=str(exc))
        if option.parallelism == "dep":
            layout_error = _dep_error(spec, sizes, index=index)
            if layout_error is not None:
                return Exclusion(kind="invalid_option", reason=layout_error)
        return _self_host_lengths(option, workload, spec)
    return None


def _dep_error(spec: ModelSpec, sizes: dict[str, int], *, index: int) -> str | None:
    """Why `parallelism: dep` cannot apply (a dense model, or a pool of one GPU), or None."""
    if derive_shape(spec).moe_layers == 0:
        return (f"options[{index}].parallelism dep: {spec.id} has no MoE layers, so there are no experts to spread; "
                "use parallelism tp")
    for field, gpus in sizes.items():
        if gpus < 2:
            return f"options[{index}].{field}: parallelism dep spreads the experts over 2 or more GPUs (got {gpus})"
    return None


def self_host_exclusion(option: SelfHostOption, scenario: Scenario, *, index: int = 0,
                        model_spec: ModelSpec | None = None) -> Exclusion | None:
    """The exclusion of one self-host option (bad dtypes or TP size for its hardware, lengths its model
    cannot serve), or None; what the deployment search applies to each configuration it enumerates
    (`model_spec`: the option's model, already loaded, so a search of thousands does not reload it)."""
    return _check_option(index, option, scenario, api_sheet=None,  # type: ignore[arg-type]  # unused for self-host
                         model_spec=model_spec)


def excluded_result(option: Option, exclusion: Exclusion) -> OptionResult:
    """The row shown for an option that was not evaluated: no cost, no verdict, the reason."""
    return OptionResult(
        name=option.name, kind=option.kind, usd_per_month=float("nan"), usd_per_mtok=float("nan"),
        usd_per_mtok_input=float("nan"), usd_per_mtok_output=float("nan"), meets_slo=False, slo_status="misses",
        slo_reason=exclusion.reason, breakdown=CostBreakdown(), price_sources=(),
        excluded_reason=exclusion.reason, excluded_kind=exclusion.kind, excluded_kinds=(exclusion.kind,),
    )
