"""`estimate`: prefill time, decode step time, TTFT/TPOT and memory fit for one configuration."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from costmodel.catalog.engines import GENERIC_ENGINE_ID, EngineProfile, load_engine
from costmodel.catalog.links import tp_link
from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.catalog.schema import AcceleratorSpec, ModelSpec
from costmodel.config import ReplicaConfig
from costmodel.dtypes import KV_DTYPES, WEIGHT_DTYPES
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration, apply_calibration
from costmodel.memory import MemoryPlan, plan_replica_memory
from costmodel.roofline import Efficiency, StepResult


@dataclass(frozen=True)
class Estimate:
    """Latency and memory of one replica serving `batch` sequences of prompt -> output tokens."""

    model_id: str
    hardware_id: str
    gpus: int
    weight_dtype: str
    kv_dtype: str
    batch: int
    prompt_tokens: int
    output_tokens: int
    prefill: StepResult  # the batch's prompts in one step
    decode: StepResult  # one decode step at the mean context prompt + output/2
    memory: MemoryPlan  # at context prompt + output
    efficiency: Efficiency
    engine_id: str = "generic"  # engine profile (catalog/engines)
    request_overhead_seconds: float = 0.0  # the profile's per-request CPU cost, part of TTFT
    tp_link: str = ""  # what the all-reduces run over (catalog/links.py), e.g. NVLink or the network across nodes
    tp_nodes: int = 1  # nodes the replica spans

    @property
    def prefill_seconds(self) -> float:
        return self.prefill.step_seconds

    @property
    def decode_step_seconds(self) -> float:
        return self.decode.step_seconds

    @property
    def ttft_seconds(self) -> float:
        """The prefill step emits the first token (vLLM samples it from the prefill logits), after the
        engine's per-request overhead."""
        return self.request_overhead_seconds + self.prefill.step_seconds

    @property
    def tpot_seconds(self) -> float:
        return self.decode.step_seconds

    @property
    def decode_tokens_per_second(self) -> float:
        """Output tokens/s of the replica while decoding: B / TPOT."""
        return self.batch / self.decode.step_seconds

    @property
    def fits(self) -> bool:
        return self.memory.fits and self.batch <= self.memory.max_batch

    def contract(self) -> dict[str, float | int | bool | str]:
        """The `costmodel estimate --json` keys of DESIGN.md's contract (plus context)."""
        return {
            "model": self.model_id,
            "hardware": self.hardware_id,
            "gpus": self.gpus,
            "weight_dtype": self.weight_dtype,
            "kv_dtype": self.kv_dtype,
            "batch": self.batch,
            "prompt_tokens": self.prompt_tokens,
            "output_tokens": self.output_tokens,
            "prefill_seconds": self.prefill_seconds,
            "decode_step_seconds": self.decode_step_seconds,
            "ttft_seconds": self.ttft_seconds,
            "tpot_seconds": self.tpot_seconds,
            "decode_tokens_per_second": self.decode_tokens_per_second,
            "weights_bytes": self.memory.weights_bytes,
            "kv_bytes_per_token": self.memory.kv_bytes_per_token,
            "max_batch": self.memory.max_batch,
            "fits": self.fits,
            "prefill_bound": self.prefill.bound,
            "decode_bound": self.decode.bound,
            "memory_message": self.memory.message,
            "efficiency_source": self.efficiency.source,
            "engine": self.engine_id,
            "request_overhead_seconds": self.request_overhead_seconds,
            "prefill_comm_seconds": self.prefill.comm_seconds,
            "decode_comm_seconds": self.decode.comm_seconds,
            "tp_link": self.tp_link,
            "tp_nodes": self.tp_nodes,
        }


# What each checked value is called where it came from: the CLI's flags by default; the decision passes
# the scenario's field paths (e.g. options[2].gpus_per_replica) so a message names what the user wrote.
CLI_FIELD_NAMES: dict[str, str] = {
    "gpus": "--gpus", "batch": "--batch", "prompt_tokens": "--prompt-tokens", "output_tokens": "--output-tokens",
    "weight_dtype": "--weight-dtype", "kv_dtype": "--kv-dtype",
}


def valid_tensor_parallel_sizes(spec: ModelSpec, *, max_gpus: int = 64) -> tuple[int, ...]:
    """GPU counts that split the model's attention heads evenly (tensor parallelism), up to `max_gpus`."""
    return tuple(n for n in range(1, max_gpus + 1) if spec.num_attention_heads % n == 0)


def check_config(
    spec: ModelSpec, *, gpus: int, weight_dtype: str, kv_dtype: str, batch: int, prompt_tokens: int, output_tokens: int,
    field_names: Mapping[str, str] = CLI_FIELD_NAMES,
    hardware: AcceleratorSpec | None = None,
) -> None:
    """Raise CostmodelError naming the field (`field_names`: CLI flags or scenario paths) and the fix (and the
    hardware when it cannot hold the formats, e.g. fp4 without fp4 tensor cores)."""
    if weight_dtype not in WEIGHT_DTYPES:
        raise CostmodelError(f"{field_names['weight_dtype']} '{weight_dtype}' is not one of {', '.join(WEIGHT_DTYPES)}")
    if kv_dtype not in KV_DTYPES:
        raise CostmodelError(f"{field_names['kv_dtype']} '{kv_dtype}' is not one of {', '.join(KV_DTYPES)}")
    if hardware is not None:
        hardware.check_dtypes(weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    for key, value in (("gpus", gpus), ("batch", batch), ("prompt_tokens", prompt_tokens),
                       ("output_tokens", output_tokens)):
        if value < 1:
            raise CostmodelError(f"{field_names[key]} must be >= 1 (got {value})")
    context = spec.max_position_embeddings
    if context is not None and prompt_tokens + output_tokens > context:
        raise CostmodelError(
            f"{field_names['prompt_tokens']} {prompt_tokens:,} + {field_names['output_tokens']} {output_tokens:,} = "
            f"{prompt_tokens + output_tokens:,} exceeds {spec.id}'s context window of {context:,} tokens "
            "(max_position_embeddings); shorten them"
        )
    if spec.num_attention_heads % gpus != 0:
        sizes = ", ".join(str(n) for n in valid_tensor_parallel_sizes(spec))
        raise CostmodelError(
            f"{field_names['gpus']} {gpus}: {spec.id} has {spec.num_attention_heads} attention heads, which do not "
            f"split evenly across {gpus} GPUs for tensor parallelism; use a divisor of {spec.num_attention_heads} "
            f"(valid sizes for {spec.id}: {sizes})"
        )


def resolve_config(
    model: ModelSpec | str,
    hardware: AcceleratorSpec | str,
    *,
    efficiency: Efficiency | None = None,
    calibration: Calibration | None = None,
) -> tuple[ModelSpec, AcceleratorSpec, Efficiency]:
    """Look up catalog ids and pick the efficiencies: a calibration's (with its measured peaks), the
    ones given, or the accelerator's datasheet defaults."""
    spec = load_model(model) if isinstance(model, str) else model
    hw = load_accelerator(hardware) if isinstance(hardware, str) else hardware
    if calibration is not None:
        hw, efficiency = apply_calibration(hw, calibration)
    return spec, hw, efficiency or Efficiency.from_accelerator(hw)


def estimate(
    model: ModelSpec | str,
    hardware: AcceleratorSpec | str,
    *,
    gpus: int = 1,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    batch: int = 1,
    prompt_tokens: int = 1024,
    output_tokens: int = 256,
    efficiency: Efficiency | None = None,
    calibration: Calibration | None = None,
    engine: EngineProfile | str = GENERIC_ENGINE_ID,
) -> Estimate:
    """Prefill, decode and memory of one replica (ids are looked up in the bundled catalogs).

    `engine` (catalog/engines) adds its per-request overhead to TTFT and, where it names one, replaces
    the per-step overhead; the generic profile changes nothing.
    """
    spec, hw, eff = resolve_config(model, hardware, efficiency=efficiency, calibration=calibration)
    profile = load_engine(engine) if isinstance(engine, str) else engine
    eff = replace(eff, comm_overlap_fraction=profile.tp_comm_overlap_fraction)
    if profile.step_overhead_seconds is not None:
        eff = replace(eff, overhead_seconds_per_step=profile.step_overhead_seconds,
                      source=f"{eff.source}; step overhead from engine '{profile.id}'")
    check_config(
        spec, gpus=gpus, weight_dtype=weight_dtype, kv_dtype=kv_dtype, batch=batch,
        prompt_tokens=prompt_tokens, output_tokens=output_tokens, hardware=hw,
    )
    config = ReplicaConfig(shape=derive_shape(spec), hardware=hw, gpus=gpus, weight_dtype=weight_dtype,
                           kv_dtype=kv_dtype, efficiency=eff)
    prefill = config.step(batch=batch, new_tokens=prompt_tokens, context_tokens=0)
    # Step time is linear in context while memory-bound, so the mean context gives the mean TPOT.
    decode = config.step(batch=batch, new_tokens=1, context_tokens=prompt_tokens + output_tokens // 2)
    memory = plan_replica_memory(config, context_tokens=prompt_tokens + output_tokens)
    link = tp_link(hw, gpus=gpus)
    return Estimate(
        model_id=spec.id,
        hardware_id=hw.id,
        gpus=gpus,
        weight_dtype=weight_dtype,
        kv_dtype=kv_dtype,
        batch=batch,
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        prefill=prefill,
        decode=decode,
        memory=memory,
        efficiency=eff,
        engine_id=profile.id,
        request_overhead_seconds=profile.request_overhead_seconds,
        tp_link=link.description,
        tp_nodes=link.nodes,
    )
