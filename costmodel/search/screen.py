"""Step 2 of the search: screen every configuration with the roofline, without simulating.

Per replica configuration and engine (model, hardware, TP, dtypes, engine profile; the engine's step overhead
and all-reduce overlap applied to the efficiencies as `serving.replica.build_replica` applies them) it computes
- memory fit (`plan_replica_memory` at the mean prompt + output, what `roofline_capacity` checks first); a
  configuration that does not fit is left out exactly as the decision leaves it out (`self_host_capacity`
  returns that answer without simulating);
- a capacity UPPER bound. Every step the simulator takes costs at least its FLOPs at the effective peak
  (`roofline.step` takes per-op maxima of compute and memory time, so step >= compute_seconds). A request
  needs (1 - f) P new prompt tokens and O output tokens, each at least `c_tok` compute-seconds, so a replica
  serves at most 1 / ((1 - f) P + O) / c_tok requests/s. `LENGTH_SAMPLING_MARGIN` covers the simulator's
  sampled lengths being shorter than the means (its 1000 requests) and its 5% bisection tolerance. An engine
  that runs at most S sequences (`naive`: 1) emits at most S tokens per step, and a step takes >= t_min (below),
  so also capacity <= margin x S / (O t_min);
- a decode-step LOWER bound t_min = step(batch 1, 1 new token, context 0): every decode step of any batch
  and context takes at least this, so TPOT p90 >= t_min and tokens/s per user <= 1 / t_min. If t_min
  exceeds the TPOT limit no load meets the SLO.
From these `search/cost_bound.py` takes a $/month LOWER bound per candidate: of month 0's $/month (the fronts'
basis) and of the cost the search ranks by (decision/commitment.py: a reserved term past the horizon counted).
`screen_candidates` evaluates these with the vectorized roofline (`roofline.step_arrays` and
`memory.memory_arrays` over one array per model of every replica configuration), the same formulas
`screen_replica` runs one configuration at a time (kept as the scalar reference, tested equal).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from costmodel.catalog import ModelSpec, derive_shape, load_model
from costmodel.catalog.allreduce_curve import GRID_BYTES, allreduce_curve
from costmodel.catalog.links import intra_node_bytes_per_s
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.config import ReplicaConfig
from costmodel.decision.attach import option_efficiency
from costmodel.decision.fleet import fleet_policy
from costmodel.dtypes import BYTES_PER_ELEMENT, lm_head_weight_dtype, precision_kwargs
from costmodel.measurements.calibration import Calibration
from costmodel.memory import memory_arrays, plan_replica_memory
from costmodel.ops import uniform_work
from costmodel.pricing import GpuPriceRow, PriceSheet
from costmodel.roofline import Efficiency, step_arrays
from costmodel.scenario import Scenario
from costmodel.search.cost_bound import (
    autoscaled_replica_hours_lower,
    hourly_demand_requests_per_second,
    lower_usd_per_month,
    lowest_usd_per_gpu_hour,
)
from costmodel.search.mode_screen import candidate_mode_bounds
from costmodel.search.scope import option_terms
from costmodel.search.space import Candidate
from costmodel.serving.profile import EngineSettings, engine_settings

LENGTH_SAMPLING_MARGIN = 1.5
# Batch at which the per-token compute cost is taken (the largest GEMMs run nearest peak; a larger batch
# than any replica's memory holds, so the per-token cost is a floor).
_FLOOR_BATCH = 4096


@dataclass(frozen=True, kw_only=True)
class ReplicaScreen:
    """Roofline facts of one replica configuration (shared by every offering of it)."""

    fits: bool
    capacity_upper_requests_per_second: float  # >= any simulated capacity at the SLO
    decode_step_lower_seconds: float  # <= any decode step (so <= TPOT p90); a mode's: <= its TPOT
    compute_seconds_per_token: float = 0.0  # c: the floor on compute per token (search/mode_screen.py reads it)

    @property
    def can_meet_slo(self) -> bool:
        """False when the configuration provably cannot meet the SLO (does not fit, or decode too slow)."""
        return self.fits and math.isfinite(self.decode_step_lower_seconds)


@dataclass(frozen=True, kw_only=True)
class Screened:
    """One candidate with its bounds: $/month lower bounds (month 0's, and of the ranked cost) and tokens/s per
    user upper bound."""

    candidate: Candidate
    replica: ReplicaScreen
    usd_per_gpu_hour: float
    usd_per_month_lower: float  # of month 0's $/month (the front test, search/prune.py)
    tokens_per_second_per_user_upper: float
    tpot_limit_seconds: float
    # what its ranked lower bound was priced at (search/give_up.py prices it again at a tighter capacity bound)
    lowest_usd_per_gpu_hour: float | None = None
    ops_usd_per_month: float | None = None
    # of the cost the search ranks by (decision/commitment.py); None: usd_per_month_lower (no term past the horizon)
    ranking_usd_per_month_lower: float | None = None

    @property
    def ranked_lower(self) -> float:
        """The lower bound of the ranked cost: the top-K test and the queue's order (search/prune.py)."""
        return self.usd_per_month_lower if self.ranking_usd_per_month_lower is None else self.ranking_usd_per_month_lower

    @property
    def viable(self) -> bool:
        """Could this configuration meet the SLO at all (by the bounds)?"""
        return self.replica.can_meet_slo and self.replica.decode_step_lower_seconds <= self.tpot_limit_seconds


def _engine(scenario: Scenario, engine_id: str) -> EngineSettings:
    """The engine's settings as the decision's simulator runs them (`decision.capacity`)."""
    return engine_settings(engine_id, longest_prompt_tokens=math.ceil(scenario.workload.mean_prompt_tokens()))


def engine_efficiency(eff: Efficiency, engine: EngineSettings) -> Efficiency:
    """The efficiencies a replica runs with under `engine` (as `serving.replica.build_replica` sets them)."""
    eff = replace(eff, comm_overlap_fraction=engine.comm_overlap_fraction)
    if engine.step_overhead_seconds is not None:
        eff = replace(eff, overhead_seconds_per_step=engine.step_overhead_seconds)
    return eff


def _capacity_upper(*, per_token_seconds: float, tokens_per_request: float, max_num_seqs: int,
                    output_tokens: float, decode_step_lower_seconds: float) -> float:
    """min(compute bound, sequence-cap bound), both with LENGTH_SAMPLING_MARGIN (module docstring)."""
    compute = LENGTH_SAMPLING_MARGIN / (tokens_per_request * per_token_seconds) if per_token_seconds > 0 else math.inf
    seqs = (LENGTH_SAMPLING_MARGIN * max_num_seqs / (output_tokens * decode_step_lower_seconds)
            if decode_step_lower_seconds > 0 else math.inf)
    return min(compute, seqs)


def screen_replica(scenario: Scenario, candidate: Candidate, *, calibration: Calibration | None) -> ReplicaScreen:
    """Roofline capacity and the two bounds for the candidate's replica and engine (see the module docstring)."""
    option = candidate.option(name="screen")
    hardware, eff = option_efficiency(option, calibration)
    engine = _engine(scenario, candidate.engine)
    eff = engine_efficiency(eff, engine)
    shape = derive_shape(load_model(candidate.model))
    workload = scenario.workload
    config = ReplicaConfig(shape=shape, hardware=hardware, gpus=candidate.gpus_per_replica,
                           weight_dtype=candidate.weight_dtype, kv_dtype=candidate.kv_dtype, efficiency=eff)
    memory = plan_replica_memory(
        config, context_tokens=int(workload.mean_prompt_tokens() + workload.mean_output_tokens()))
    per_token = config.step(batch=_FLOOR_BATCH, new_tokens=1, context_tokens=0).compute_seconds / _FLOOR_BATCH
    tokens = workload.mean_prompt_tokens() * (1.0 - workload.cached_prompt_fraction) + workload.mean_output_tokens()
    t_min = config.step(batch=1, new_tokens=1, context_tokens=0).step_seconds
    upper = _capacity_upper(per_token_seconds=per_token, tokens_per_request=tokens, max_num_seqs=engine.max_num_seqs,
                            output_tokens=workload.mean_output_tokens(), decode_step_lower_seconds=t_min)
    return ReplicaScreen(fits=memory.fits, capacity_upper_requests_per_second=upper, decode_step_lower_seconds=t_min,
                         compute_seconds_per_token=per_token)


PlainKey = tuple[str, str, int, str, str, str]  # a plain Candidate.capacity_key: replica and engine
ReplicaKey = tuple[object, ...]  # Candidate.capacity_key: a PlainKey, plus the serving mode when it runs one


def _replica_tokens(scenario: Scenario) -> tuple[int, float]:
    workload = scenario.workload
    context = int(workload.mean_prompt_tokens() + workload.mean_output_tokens())
    tokens = workload.mean_prompt_tokens() * (1.0 - workload.cached_prompt_fraction) + workload.mean_output_tokens()
    return context, tokens


def _column(values: list[float]) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def _curves(hws: list[AcceleratorSpec], keys: list[PlainKey]) -> np.ndarray:
    nan = (float("nan"),) * len(GRID_BYTES)
    return np.asarray([allreduce_curve(hw.allreduce_table, gpus=int(k[2])) or nan for hw, k in zip(hws, keys, strict=True)])


def _model_screens(spec: ModelSpec, keys: list[PlainKey], hardware: Mapping[str, tuple[AcceleratorSpec, Efficiency]],
                   *, engines: Mapping[str, EngineSettings], context_tokens: int, tokens_per_request: float,
                   output_tokens: float) -> list[ReplicaScreen]:
    """`screen_replica` for every replica configuration of one model at once (one array element per key)."""
    shape = derive_shape(spec)
    hws = [hardware[k[1]][0] for k in keys]
    effs = [engine_efficiency(hardware[k[1]][1], engines[k[5]]) for k in keys]
    gpus = _column([float(k[2]) for k in keys])
    kv_bytes = _column([BYTES_PER_ELEMENT[k[4]] for k in keys])
    precisions = [precision_kwargs(hw.op_precision(weight_dtype=k[3], kv_dtype=k[4])) for hw, k in zip(hws, keys, strict=True)]
    per_hw = {
        **{name: _column([p[name] for p in precisions]) for name in precisions[0]},  # bytes and peaks per op
        "kv_bytes_per_element": kv_bytes, "gpus": gpus,
        "hbm_bytes_per_s": _column([hw.hbm_bytes_per_s for hw in hws]),
        "link_bytes_per_s": _column([intra_node_bytes_per_s(hw) for hw in hws]),
        "link_latency_seconds": _column([hw.link_latency_seconds for hw in hws]),
        **{name: _column([getattr(e, name) for e in effs]) for name in (
            "eff_compute", "eff_memory", "overhead_seconds_per_step", "compute_half_saturation_tokens",
            "weight_reads_max_rows")},
        "comm_overlap_fraction": _column([e.comm_overlap_fraction for e in effs]),
        "allreduce_curve": _curves(hws, keys),  # measured all-reduce by size (catalog/allreduce_curve.py), NaN = formula
    }
    floor = step_arrays(shape, uniform_work(shape, batch=float(_FLOOR_BATCH), new_tokens=1.0, context_tokens=0.0),
                        **per_hw)
    one = step_arrays(shape, uniform_work(shape, batch=1.0, new_tokens=1.0, context_tokens=0.0), **per_hw)
    _, _, max_batch = memory_arrays(shape, hbm_bytes_per_gpu=_column([hw.memory_bytes for hw in hws]), gpus=gpus,
                                    weight_bytes_per_param=_column([BYTES_PER_ELEMENT[k[3]] for k in keys]),
                                    kv_bytes_per_element=kv_bytes, context_tokens=context_tokens,
                                    head_weight_bytes_per_param=_column(
                                        [BYTES_PER_ELEMENT[lm_head_weight_dtype(k[3])] for k in keys]))
    per_token = np.broadcast_to(floor.compute_seconds, gpus.shape) / _FLOOR_BATCH
    t_min = np.broadcast_to(one.step_seconds, gpus.shape)
    fits = np.broadcast_to(max_batch, gpus.shape) >= 1
    return [ReplicaScreen(fits=bool(f), capacity_upper_requests_per_second=_capacity_upper(
                per_token_seconds=float(p), tokens_per_request=tokens_per_request,
                max_num_seqs=engines[k[5]].max_num_seqs, output_tokens=output_tokens,
                decode_step_lower_seconds=float(t)),
            decode_step_lower_seconds=float(t), compute_seconds_per_token=float(p))
            for f, p, t, k in zip(fits, per_token, t_min, keys, strict=True)]


def screen_replicas(scenario: Scenario, candidates: tuple[Candidate, ...], *, calibration: Calibration | None,
                    model_specs: Mapping[str, ModelSpec] | None = None) -> dict[ReplicaKey, ReplicaScreen]:
    """Bounds of every replica configuration of the candidates, vectorized per model (module docstring)."""
    context, tokens = _replica_tokens(scenario)
    by_model: dict[str, dict[PlainKey, Candidate]] = {}
    for c in candidates:
        base = c.plain()
        by_model.setdefault(c.model, {}).setdefault(_plain_key(base), base)
    hardware = {}
    for group in by_model.values():
        for c in group.values():
            if c.hardware not in hardware:
                hardware[c.hardware] = option_efficiency(c.option(name="screen"), calibration)
    engines = {e: _engine(scenario, e) for e in {c.engine for c in candidates}}
    out: dict[ReplicaKey, ReplicaScreen] = {}
    for model_id, group in by_model.items():
        spec = model_specs[model_id] if model_specs is not None else load_model(model_id)
        keys = list(group)
        out.update(zip(keys, _model_screens(spec, keys, hardware, engines=engines, context_tokens=context,
                                            tokens_per_request=tokens,
                                            output_tokens=scenario.workload.mean_output_tokens()),
                       strict=True))
    for c in candidates:
        if c.mode is not None and c.capacity_key not in out:
            out[c.capacity_key] = _mode_replica(scenario, c, out[_plain_key(c.plain())],
                                                hardware=hardware[c.hardware], engine=engines[c.engine])
    return out


def _plain_key(c: Candidate) -> PlainKey:
    return (c.model, c.hardware, c.gpus_per_replica, c.weight_dtype, c.kv_dtype, c.engine)


def _mode_replica(scenario: Scenario, candidate: Candidate, base: ReplicaScreen, *,
                  hardware: tuple[AcceleratorSpec, Efficiency], engine: EngineSettings) -> ReplicaScreen:
    """A mode's screen from its plain replica's (search/mode_screen.py)."""
    bounds = candidate_mode_bounds(
        scenario, candidate, compute_seconds_per_token=base.compute_seconds_per_token,
        decode_step_lower_seconds=base.decode_step_lower_seconds, hardware=hardware[0],
        efficiency=engine_efficiency(hardware[1], engine), max_num_seqs=engine.max_num_seqs,
        margin=LENGTH_SAMPLING_MARGIN)
    return replace(base, capacity_upper_requests_per_second=bounds.capacity_upper_requests_per_second,
                   decode_step_lower_seconds=bounds.tpot_lower_seconds)


def screen_candidates(scenario: Scenario, candidates: tuple[Candidate, ...], *, gpu_sheet: PriceSheet[GpuPriceRow],
                      calibration: Calibration | None,
                      model_specs: Mapping[str, ModelSpec] | None = None) -> tuple[Screened, ...]:
    """Bounds for every candidate (the vectorized roofline once per replica configuration)."""
    peak = scenario.workload.peak_requests_per_second()
    tpot_limit = scenario.slo.tpot_p90_seconds
    replicas = screen_replicas(scenario, candidates, calibration=calibration, model_specs=model_specs)
    prices = {o: gpu_sheet.get(o).all_in_usd_per_gpu_hour() for o in {c.offering for c in candidates}}
    on_demand: dict[str, float] = {}
    for row in gpu_sheet.rows:
        if row.offering == "on-demand":
            price = row.all_in_usd_per_gpu_hour()
            on_demand[row.accelerator_id] = min(price, on_demand.get(row.accelerator_id, price))
    terms = {key: option_terms(scenario, model=key[0], hardware=key[1]) for key in {(c.model, c.hardware)
                                                                                    for c in candidates}}
    floor = fleet_policy(candidates[0].option(name="screen"), scenario).min_replicas if candidates else 1
    hourly = hourly_demand_requests_per_second(scenario)
    hours = {key: autoscaled_replica_hours_lower(capacity_upper_requests_per_second=r.capacity_upper_requests_per_second,
                                                 hourly_requests_per_second=hourly, min_replicas=floor)
             for key, r in replicas.items()}
    terms_months = {o: gpu_sheet.get(o).term_months for o in prices}
    out = []
    for candidate in candidates:
        key = candidate.capacity_key
        replica = replicas[key]
        own = terms[(candidate.model, candidate.hardware)]
        lower = partial(lower_usd_per_month, candidate, replica, ops_usd_per_month=own.ops_usd_per_month,
                        peak_requests_per_second=peak, hourly_requests_per_second=hourly, replica_hours=hours[key],
                        min_replicas=floor)
        month_0 = lowest_usd_per_gpu_hour(candidate, prices=prices, on_demand=on_demand, terms=own)
        ranked = lowest_usd_per_gpu_hour(candidate, prices=prices, on_demand=on_demand, terms=own,
                                         term_months=terms_months, horizon_months=scenario.horizon_months)
        bound = lower(usd_per_gpu_hour=month_0)
        out.append(Screened(
            candidate=candidate, replica=replica, usd_per_gpu_hour=prices[candidate.offering],
            usd_per_month_lower=bound, tokens_per_second_per_user_upper=1.0 / replica.decode_step_lower_seconds,
            tpot_limit_seconds=tpot_limit, lowest_usd_per_gpu_hour=ranked, ops_usd_per_month=own.ops_usd_per_month,
            ranking_usd_per_month_lower=bound if ranked == month_0 else lower(usd_per_gpu_hour=ranked),
        ))
    return tuple(out)
