"""The options a scenario compares: an API, a self-hosted deployment, or a hybrid of the two."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from costmodel.catalog.engines import engine_ids
from costmodel.dtypes import KvDtype, WeightDtype
from costmodel.scenario.limits import (
    MAX_GPUS_PER_REPLICA,
    MAX_HOST_CAPEX_USD_PER_GPU,
    MAX_HOST_POWER_KW_PER_GPU,
    MAX_LATENCY_SECONDS,
    MAX_MIN_REPLICAS,
    MAX_RATE_LIMIT_PER_MINUTE,
    MAX_TOKENS_PER_REQUEST,
    MAX_USD_PER_GPU_HOUR,
    MAX_USD_PER_GPU_MONTH,
    MAX_USD_PER_MONTH,
    MIN_LATENCY_SECONDS,
    MIN_TARGET_PEAK_UTILIZATION,
)
from costmodel.scenario.modes import DisaggregationSpec, SpeculationSpec
from costmodel.strict import StrictModel

_NAME = Field(min_length=1, description="unique name of this option in the scenario")
_ID = r"^[a-z0-9][a-z0-9._-]*$"
_TARGET = Field(
    default=None, ge=MIN_TARGET_PEAK_UTILIZATION, le=1.0,
    description="share of a replica's capacity at the SLO used in the peak hour (headroom = 1 - this); "
    "default 0.8 for an interactive workload, 1.0 when batch_allowed",
)
_MIN_REPLICAS = Field(
    default=None, ge=1, le=MAX_MIN_REPLICAS,
    description="replicas kept whatever the demand; default 2 for an interactive workload, 1 when batch_allowed",
)
_SPARE_REPLICAS = Field(
    default=None, ge=0, le=MAX_MIN_REPLICAS,
    description="replicas beyond what the hour's demand needs at 100% of capacity (N+k: with k replicas down the rest "
    "still carry the hour); default 1 (N+1) for an interactive workload, 0 when batch_allowed",
)


_CALIBRATION_HELP = (
    "measurement file(s) for this option, a path relative to the scenario file (or the file's JSON text "
    "inline, as the app's Probes page writes it): ")


class ScalingPolicy(StrictModel):
    """How a self-host option's replicas follow the day: `fixed` (paid 24/7 at the peak size), `autoscale`
    (replicas follow the hourly demand; each replica started pays its warm-up) or `mixed` (a fixed base on the
    option's reserved or owned offering plus an autoscaled on-demand burst, part of it on spot).
    docs/economics.md "Autoscaling" and "Mixed fleets" give the formulas."""

    mode: Literal["fixed", "autoscale", "mixed"] = Field(
        default="fixed", description="fixed: N replicas paid 24/7; autoscale: replicas follow the hourly demand; "
        "mixed: a fixed base plus an autoscaled on-demand (and spot) burst")
    min_replicas: int | None = Field(
        default=None, ge=0, le=MAX_MIN_REPLICAS,
        description="autoscale floor (0 lets zero-demand hours cost nothing); default: the fleet policy's min_replicas")
    max_replicas: int | None = Field(default=None, ge=1, le=MAX_MIN_REPLICAS,
                                     description="autoscale ceiling; hours that need more miss the SLO")
    warmup_minutes: float | None = Field(
        default=None, ge=0, le=60,
        description="model load and warm-up per started replica, paid and not serving (required for autoscale "
        "and mixed; billed per hour: the price sheet records no finer granularity)")
    base_replicas: int | None = Field(
        default=None, ge=0, le=MAX_MIN_REPLICAS,
        description="mixed: replicas of the fixed base (the option's offering); default: the count, between the "
        "trough and the peak hour's need, that minimizes $/month")
    burst_offering: str | None = Field(
        default=None, min_length=1,
        description="mixed: on-demand GPU sheet row of the burst (same accelerator); default: the cheapest "
        "on-demand row of the option's hardware")
    spot_share: float = Field(default=0.0, ge=0, le=1, description="mixed: share of the burst's replica-hours on spot")
    spot_offering: str | None = Field(
        default=None, min_length=1,
        description="mixed: spot GPU sheet row of the burst's spot share; default: the cheapest spot row of the "
        "option's hardware")
    interruption_rate_per_hour: float | None = Field(
        default=None, ge=0, le=1,
        description="mixed, or autoscale on a spot offering: spot interruptions per spot replica-hour (required "
        "with spot_share > 0 and for autoscale on spot: the sheets publish no rate; measure it or take your "
        "provider's figure)")

    @model_validator(mode="after")
    def _check(self) -> ScalingPolicy:
        if self.min_replicas is not None and self.max_replicas is not None and self.min_replicas > self.max_replicas:
            raise ValueError(f"min_replicas ({self.min_replicas}) must be <= max_replicas ({self.max_replicas})")
        if self.mode in ("autoscale", "mixed") and self.warmup_minutes is None:
            raise ValueError(f"{self.mode} needs warmup_minutes (model load + warm-up of one replica, measured; 0..60)")
        mixed_only = {"base_replicas": self.base_replicas, "burst_offering": self.burst_offering,
                      "spot_offering": self.spot_offering,
                      "spot_share": self.spot_share or None}
        if self.mode == "fixed":  # autoscale takes it on a spot offering (decision/fleet.py)
            mixed_only["interruption_rate_per_hour"] = self.interruption_rate_per_hour
        given = [name for name, value in mixed_only.items() if value is not None]
        if self.mode != "mixed" and given:
            also = " (interruption_rate_per_hour also to autoscale on a spot offering)" if self.mode == "fixed" \
                and self.interruption_rate_per_hour is not None else ""
            raise ValueError(f"{', '.join(given)} apply only to mode mixed{also} (mode is {self.mode})")
        if self.spot_share > 0 and self.interruption_rate_per_hour is None:
            raise ValueError("spot_share > 0 needs interruption_rate_per_hour (spot interruptions per replica-hour; "
                             "no public default is bundled)")
        if (self.max_replicas is not None and self.base_replicas is not None
                and self.base_replicas > self.max_replicas):
            raise ValueError(f"base_replicas ({self.base_replicas}) must be <= max_replicas ({self.max_replicas})")
        return self


class FleetPolicy(StrictModel):
    """Headroom and redundancy for every self-host option of the scenario (an option's own fields win)."""

    target_peak_utilization: float | None = _TARGET
    min_replicas: int | None = _MIN_REPLICAS
    spare_replicas: int | None = _SPARE_REPLICAS


class ApiOption(StrictModel):
    """Call a provider's API, priced by a row of the API price sheet."""

    kind: Literal["api"] = "api"
    name: str = _NAME
    price_id: str = Field(min_length=1, description="row id in pricing_data/api_prices.csv, e.g. openai/gpt-4o")
    use_batch_api: bool = Field(default=True, description="use the batch API when the workload allows batching")
    requests_per_minute_limit: int | None = Field(default=None, gt=0, le=MAX_RATE_LIMIT_PER_MINUTE,
                                                  description="overrides the sheet's limit")
    tokens_per_minute_limit: int | None = Field(default=None, gt=0, le=MAX_RATE_LIMIT_PER_MINUTE,
                                                description="overrides the sheet's limit")
    ttft_p90_seconds: float | None = Field(
        default=None, ge=MIN_LATENCY_SECONDS, le=MAX_LATENCY_SECONDS,
        description="measured (costmodel probe-endpoint) or published p90 TTFT, s",
    )
    tpot_p90_seconds: float | None = Field(default=None, ge=MIN_LATENCY_SECONDS, le=MAX_LATENCY_SECONDS,
                                           description="measured or published p90 TPOT, s")
    calibration: str | None = Field(
        default=None, min_length=1,
        description=_CALIBRATION_HELP + "a `costmodel calibrate-endpoint` CAL.json or a `probe-endpoint` result; "
        "its p90 TTFT/TPOT become this option's measured latency (over ttft_p90_seconds / tpot_p90_seconds)")


class SelfHostOption(StrictModel):
    """Serve a catalog model on rented or owned accelerators, replicas of `gpus_per_replica` GPUs."""

    kind: Literal["self-host"] = "self-host"
    name: str = _NAME
    model: str = Field(pattern=_ID, description="catalog model id, e.g. llama-3.1-70b")
    hardware: str = Field(pattern=_ID, description="catalog accelerator id, e.g. h100-sxm")
    gpus_per_replica: int = Field(default=1, ge=1, le=MAX_GPUS_PER_REPLICA, description="tensor-parallel GPUs per replica")
    weight_dtype: WeightDtype = "bf16"
    kv_dtype: KvDtype = "bf16"
    offering: str | None = Field(
        default=None, description="row id in pricing_data/gpu_prices.csv, e.g. lambda/h100-sxm/on-demand"
    )
    usd_per_gpu_hour: float | None = Field(
        default=None, gt=0, le=MAX_USD_PER_GPU_HOUR,
        description="your own price per GPU-hour; overrides the offering's price"
    )
    ops_usd_per_month: float = Field(default=0.0, ge=0, le=MAX_USD_PER_MONTH,
                                     description="operations (people, monitoring), USD/month, whatever the fleet size")
    ops_usd_per_gpu_month: float = Field(
        default=0.0, ge=0, le=MAX_USD_PER_GPU_MONTH,
        description="operations that grow with the fleet, USD per GPU-month paid (default 0: no public "
        "per-GPU figure is bundled); ops = ops_usd_per_month + this x GPU-hours / 730.5 h")
    host_capex_usd_per_gpu: float | None = Field(
        default=None, ge=0, le=MAX_HOST_CAPEX_USD_PER_GPU,
        description="owned GPUs: the host server's purchase price per GPU, beyond the GPU (default: "
        "pricing_data/host_servers.csv; 0 leaves the host out)")
    host_power_kw_per_gpu: float | None = Field(
        default=None, ge=0, le=MAX_HOST_POWER_KW_PER_GPU,
        description="owned GPUs: the host server's power per GPU, beyond the GPU's, kW (default: the host sheet)")
    engine: str = Field(
        default="vllm", pattern=_ID,
        description="serving engine profile id in catalog/engines (vllm, sglang, trtllm, generic, naive): "
                    "scheduler defaults and CPU overheads; default vllm (a served engine whose CPU costs are fitted "
                    "on public runs; generic is the optimistic roofline-only profile)",
    )

    # Scheduler settings an engine user sets (None: the engine profile's); serving.profile.engine_settings.
    max_num_seqs: int | None = Field(default=None, ge=1, le=100_000,
                                     description="running sequences at most (vLLM --max-num-seqs; default the engine's)")
    max_batched_tokens: int | None = Field(
        default=None, ge=1, le=MAX_TOKENS_PER_REQUEST,
        description="token budget per engine step (vLLM --max-num-batched-tokens; default the engine's)")
    scheduler_steps: int | None = Field(
        default=None, ge=1, le=1024,
        description="multi-step scheduling (vLLM v0.6 --num-scheduler-steps): the scheduler runs once per this "
                    "many decode steps and streams that many tokens per chunk; default 1")
    gpu_memory_utilization: float | None = Field(
        default=None, ge=0.05, le=1.0,
        description="the engine's KV memory fraction under its own rule: vLLM's gpu_memory_utilization (share of "
                    "all HBM), TensorRT-LLM's free_gpu_memory_fraction (share of what weights leave); default 0.9")

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, value: str) -> str:
        known = engine_ids()
        if value not in known:
            raise ValueError(f"unknown engine '{value}'; use one of {', '.join(known)}")
        return value
    target_peak_utilization: float | None = _TARGET
    min_replicas: int | None = _MIN_REPLICAS
    spare_replicas: int | None = _SPARE_REPLICAS
    scaling: ScalingPolicy = Field(default_factory=ScalingPolicy,
                                   description="fixed (default), autoscale or mixed; see docs/economics.md")
    calibration: str | list[str] | None = Field(
        default=None,
        description=_CALIBRATION_HELP + "a `calibrate-endpoint` CAL.json (the fitted step-time model of your "
        "deployment gives capacity and latency, latency_source measured), a `costmodel calibrate` file (roofline "
        "efficiencies for this option) and/or a `probe --collectives` result (tensor-parallel all-reduce)")

    speculation: SpeculationSpec | None = Field(
        default=None, description="speculative decoding / MTP (costmodel/scenario/modes.py); default none")
    disaggregated: DisaggregationSpec | None = Field(
        default=None, description="disaggregated prefill/decode pools; a replica is then one whole xPyD deployment")
    parallelism: Literal["tp", "dep"] = Field(
        default="tp", description="tp: tensor parallel over the replica's GPUs (default); dep: data-parallel attention "
        "+ expert-parallel MoE over them (MoE models; in each pool when disaggregated)")

    def calibration_paths(self) -> tuple[str, ...]:
        """The attached measurement files, in order."""
        if self.calibration is None:
            return ()
        return (self.calibration,) if isinstance(self.calibration, str) else tuple(self.calibration)

    @model_validator(mode="after")
    def _needs_a_price(self) -> SelfHostOption:
        if self.offering is None and self.usd_per_gpu_hour is None:
            raise ValueError("give offering (a GPU price sheet row id) or usd_per_gpu_hour")
        if self.disaggregated is not None and self.disaggregated.gpus != self.gpus_per_replica:
            raise ValueError(f"gpus_per_replica must equal the disaggregated layout's GPUs, prefill_instances x "
                             f"prefill_gpus + decode_instances x decode_gpus = {self.disaggregated.gpus} "
                             f"(got {self.gpus_per_replica}); a replica is one whole xPyD deployment")
        return self


class HybridOption(StrictModel):
    """Self-host the base load and send the overflow above it to an API (both named options)."""

    kind: Literal["hybrid"] = "hybrid"
    name: str = _NAME
    self_host: str = Field(min_length=1, description="name of a self-host option in this scenario")
    api: str = Field(min_length=1, description="name of an api option in this scenario")


Option = Annotated[ApiOption | SelfHostOption | HybridOption, Field(discriminator="kind")]
