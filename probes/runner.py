"""The model probe: microbenchmarks, then prefill over prompt lengths and decode over batch x context.

Every point is saved (atomically) as soon as it is measured, so Ctrl-C or a crash keeps what was done;
a point that runs out of memory is recorded as "does_not_fit" and the sweep goes on.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from costmodel.catalog.loader import load_model
from costmodel.catalog.schema import ModelSpec
from costmodel.errors import CostmodelError
from costmodel.measurements.probe_result import (
    Microbenchmark,
    ProbeEnvironment,
    ProbePoint,
    ProbeResult,
    ProbeSettings,
    predict_point,
    save_probe_result,
    sliced_shape,
)
from probes import microbench
from probes.environment import (
    TORCH_DTYPES,
    CpuInfo,
    CpuTimes,
    background_cpu_fraction,
    choose_dtype,
    cpu_info,
    cpu_times,
    environment_fields,
    open_nvml,
    resolve_device,
)
from probes.model import ProbeModelConfig, build_model
from probes.points import PointRecord, PointRunner
from probes.sweeps import Sweep, default_model_id, default_sweep
from probes.timing import Progress

MEMORY_HEADROOM = 0.85  # use at most this share of free memory (allocator slack, other processes)
CPU_MEMORY_ID = "cpu"  # catalog accelerator row for CPUs


@dataclass(frozen=True)
class ProbeRequest:
    """Options of `costmodel probe` (None = the device's default)."""

    out: Path
    device: str = "auto"
    model_id: str | None = None
    quick: bool = False
    dtype: str | None = None
    threads: int | None = None
    layers: int | None = None
    cuda_graphs: bool | None = None
    torch_compile: bool = False
    hardware_id: str | None = None
    seed: int = 0
    show_progress: bool = True
    sweep: Sweep | None = None  # None: probes.sweeps.default_sweep for the device


@dataclass
class _State:
    """What the sweep has so far (for saving after every point and on Ctrl-C)."""

    settings: ProbeSettings
    environment: ProbeEnvironment
    benches: list[Microbenchmark] = field(default_factory=list)
    peaks: dict[str, float] = field(default_factory=dict)
    copy_bytes_per_s: float = 0.0
    points: list[ProbePoint] = field(default_factory=list)
    started_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    started_clock: float = field(default_factory=time.perf_counter)
    started_cpu: CpuTimes | None = field(default_factory=cpu_times)

    def result(self, *, complete: bool) -> ProbeResult:
        return ProbeResult(
            settings=self.settings,
            environment=self.environment,
            microbenchmarks=self.benches,
            peak_flops_per_s=self.peaks[self.environment.dtype],
            copy_bytes_per_s=self.copy_bytes_per_s,
            peak_flops_per_s_by_dtype=self.peaks,
            points=self.points,
            started_at=self.started_at,
            wall_seconds=time.perf_counter() - self.started_clock,
            background_cpu_fraction=background_cpu_fraction(self.started_cpu, cpu_times()),
            complete=complete,
        )


def free_memory_bytes(device: torch.device, cpu: CpuInfo) -> float:
    """Memory free for the probe now: CUDA free bytes, or the host's MemAvailable."""
    if device.type == "cuda":
        return float(torch.cuda.mem_get_info(device)[0])
    return cpu_info().available_bytes or cpu.available_bytes


def kv_cache_bytes(cfg: ProbeModelConfig, *, batch: int, max_tokens: int, dtype: str) -> float:
    """K and V for every probed layer: 2 x L x B x G x max_tokens x D elements."""
    return 2.0 * cfg.layers * batch * cfg.kv_heads * max_tokens * cfg.head_dim * torch.finfo(TORCH_DTYPES[dtype]).bits / 8


def workspace_bytes(cfg: ProbeModelConfig, *, tokens: int, batch: int, dtype: str) -> float:
    """Activations of one step: a few hidden-size and MLP-width buffers per token, plus fp32 logits."""
    width = max(cfg.intermediate, cfg.moe_intermediate * max(cfg.experts_per_token, 1), cfg.heads * cfg.head_dim)
    element = torch.finfo(TORCH_DTYPES[dtype]).bits / 8
    return tokens * (6.0 * cfg.hidden + 3.0 * width) * max(element, 4.0) + batch * cfg.vocab * 4.0


def fit_reason(
    cfg: ProbeModelConfig, *, batch: int, cache_tokens: int, step_tokens: int, dtype: str, free_bytes: float
) -> str | None:
    """Why a probe allocation would not fit in MEMORY_HEADROOM x `free_bytes`, or None when it fits.

    `PointRunner` asks twice per group (probes/points.py): first with step_tokens = 0, before it allocates
    the KV cache, so the need is the cache; then once per point with the step's tokens, after the cache is
    allocated, so `free_bytes` (measured at that moment) already excludes the cache and the need is the
    step's workspace alone. Adding the cache again there would count it twice.
    """
    free = MEMORY_HEADROOM * free_bytes
    if step_tokens:
        need = workspace_bytes(cfg, tokens=step_tokens, batch=batch, dtype=dtype)
        what = "workspace of the step"
    else:
        need = kv_cache_bytes(cfg, batch=batch, max_tokens=cache_tokens, dtype=dtype)
        what = f"KV cache for {batch} x {cache_tokens} tokens"
    return None if need < free else f"{what} needs {need / 1e9:.2f} GB; {free / 1e9:.2f} GB free"


def layers_that_fit(cfg: ProbeModelConfig, *, budget_bytes: float, dtype: str, kv_bytes_per_layer: float) -> int:
    """How many layers (weights + their KV cache) fit in `budget_bytes` next to the embedding and lm_head."""
    element = torch.finfo(TORCH_DTYPES[dtype]).bits / 8
    full = sliced_shape(cfg.model_id, layers=cfg.layers_total)
    fixed = full.embedding_params + (0.0 if full.tied_embeddings else full.lm_head_params)
    per_layer = (full.total_params - fixed) / full.layers * element + kv_bytes_per_layer
    return int((budget_bytes - fixed * element) // per_layer)


def choose_layers(
    spec: ModelSpec, request: ProbeRequest, sweep: Sweep, *, free_bytes: float, dtype: str
) -> tuple[int, str | None]:
    """(layers to probe, why fewer than the model has): --layers, --quick's cap, or what fits in memory."""
    full_cfg = ProbeModelConfig.from_spec(spec)
    # Room for the smallest decode batch at the longest context; larger batches may be "does_not_fit".
    kv_per_layer = kv_cache_bytes(
        full_cfg, batch=min(sweep.decode_batches), max_tokens=max(sweep.decode_context_tokens) + 1, dtype=dtype
    ) / full_cfg.layers
    fit = layers_that_fit(full_cfg, budget_bytes=MEMORY_HEADROOM * free_bytes, dtype=dtype,
                          kv_bytes_per_layer=kv_per_layer)
    layers, reason = spec.num_hidden_layers, None
    if request.layers is not None:
        if request.layers > spec.num_hidden_layers:
            raise CostmodelError(f"--layers {request.layers}: {spec.id} has {spec.num_hidden_layers} layers")
        layers, reason = request.layers, f"--layers {request.layers}"
    elif sweep.quick_layers is not None and sweep.quick_layers < layers:
        layers = sweep.quick_layers
        reason = f"--quick probes {layers} layer{'s' if layers > 1 else ''} to stay fast"
    if fit < layers:
        if fit < 1:
            raise CostmodelError(
                f"--model {spec.id}: its embedding, lm_head and one layer do not fit in the "
                f"{free_bytes / 1e9:.1f} GB free; choose a smaller model"
            )
        layers, reason = fit, f"the whole model does not fit in memory: {fit} of {spec.num_hidden_layers} layers fit"
    return layers, reason


def run_probe(request: ProbeRequest) -> ProbeResult:
    """Run the whole probe; returns the result (complete=False if interrupted), saved at `request.out`."""
    device = resolve_device(request.device)
    cpu = cpu_info()
    dtype, dtype_reason = choose_dtype(device, request.dtype, cpu)
    threads = None
    if device.type == "cpu":
        threads = request.threads or cpu.physical_cores or cpu.logical_cpus
        torch.set_num_threads(threads)
    spec = load_model(request.model_id or default_model_id(device.type))
    sweep = request.sweep or default_sweep(device.type, quick=request.quick)
    layers, reason = choose_layers(spec, request, sweep, free_bytes=free_memory_bytes(device, cpu), dtype=dtype)
    cfg = ProbeModelConfig.from_spec(spec, layers=layers)
    graphs = device.type == "cuda" and cfg.experts == 0 if request.cuda_graphs is None else request.cuda_graphs
    if graphs and (device.type != "cuda" or cfg.experts):
        raise CostmodelError("--cuda-graphs needs --device cuda and a dense model (MoE routing is data-dependent)")
    nvml, nvml_status = open_nvml(device)
    settings = ProbeSettings(
        model_id=spec.id,
        layers_probed=layers,
        layers_total=spec.num_hidden_layers,
        slice_reason=reason,
        quick=request.quick,
        rounds=sweep.rounds,
        warmup=sweep.warmup,
        repeats=sweep.repeats,
        prefill_prompt_tokens=list(sweep.prefill_prompt_tokens),
        prefill_batch=sweep.prefill_batch,
        decode_batches=list(sweep.decode_batches),
        decode_context_tokens=list(sweep.decode_context_tokens),
        seed=request.seed,
    )
    environment = ProbeEnvironment(
        **environment_fields(
            device, dtype=dtype, dtype_reason=dtype_reason, threads=threads, cpu=cpu, nvml_status=nvml_status,
            nvml=nvml, cuda_graphs=graphs, torch_compile=request.torch_compile,
            hardware_id=request.hardware_id or (CPU_MEMORY_ID if device.type == "cpu" else None),
        )
    )
    if request.hardware_id and device.type == "cuda":
        environment = environment.model_copy(update={"hardware_id": request.hardware_id})
    state = _State(settings=settings, environment=environment)
    progress = Progress(total=3 + sweep.rounds * len(sweep.points()), enabled=request.show_progress)
    try:
        _microbenchmarks(state, device, sweep, dtype, progress)
        torch.manual_seed(request.seed)
        model = build_model(cfg, dtype=TORCH_DTYPES[dtype], device=device, seed=request.seed)
        forward: Callable[..., torch.Tensor] = model
        if request.torch_compile:
            mode = "reduce-overhead" if graphs else "default"
            forward = torch.compile(model, mode=mode, dynamic=False)  # type: ignore[assignment]
        progress.step(f"built {cfg.layers}/{cfg.layers_total} layers of {spec.id} ({dtype})")

        def fits(batch: int, cache_tokens: int, step_tokens: int) -> str | None:
            return fit_reason(cfg, batch=batch, cache_tokens=cache_tokens, step_tokens=step_tokens, dtype=dtype,
                              free_bytes=free_memory_bytes(device, cpu))

        runner = PointRunner(model=model, forward=forward, device=device, sweep=sweep,
                             graphs=graphs and not request.torch_compile, nvml=nvml, fits=fits)
        _sweep(state, request, device, sweep, cfg, runner, progress)
    except KeyboardInterrupt:
        progress.close()
        if not state.peaks:
            raise
        result = state.result(complete=False)
        save_probe_result(result, request.out)
        return result
    progress.close()
    result = state.result(complete=True)
    save_probe_result(result, request.out)
    return result


def _microbenchmarks(state: _State, device: torch.device, sweep: Sweep, dtype: str, progress: Progress) -> None:
    copy = microbench.copy_bandwidth(device, buffer_bytes=sweep.copy_buffer_bytes, repeats=sweep.microbench_repeats)
    state.benches.append(copy)
    state.copy_bytes_per_s = copy.bytes_per_s or 0.0
    progress.step(f"copy {state.copy_bytes_per_s / 1e9:.1f} GB/s")
    for bench_dtype in dict.fromkeys([dtype, *sweep.matmul_dtypes]):
        runs = microbench.matmul_flops(
            device, dtype=bench_dtype, sizes=sweep.matmul_sizes, max_call_seconds=sweep.matmul_max_call_seconds,
            repeats=sweep.microbench_repeats,
        )
        state.benches.extend(runs)
        state.peaks[bench_dtype] = microbench.best_flops(runs, bench_dtype)
    progress.step(", ".join(f"{k} {v / 1e9:.0f} GFLOP/s" for k, v in state.peaks.items()))


def _sweep(
    state: _State, request: ProbeRequest, device: torch.device, sweep: Sweep, cfg: ProbeModelConfig,
    runner: PointRunner, progress: Progress,
) -> None:
    dtype = state.environment.dtype
    slice_shape = sliced_shape(cfg.model_id, layers=cfg.layers)
    full_shape = sliced_shape(cfg.model_id, layers=cfg.layers_total) if cfg.layers < cfg.layers_total else None
    generator = torch.Generator(device="cpu").manual_seed(request.seed)
    groups: list[tuple[int, int, list[PointRecord]]] = []
    for batch, cache_tokens, points in sweep.groups():
        records = []
        for phase, new_tokens, context in points:
            predicted, flops, bytes_ = predict_point(
                slice_shape, batch=batch, new_tokens=new_tokens, context_tokens=context, dtype=dtype,
                peak_flops_per_s=state.peaks[dtype], hbm_bytes_per_s=state.copy_bytes_per_s,
            )
            full_ratio = None
            if full_shape is not None:
                full, _, _ = predict_point(
                    full_shape, batch=batch, new_tokens=new_tokens, context_tokens=context, dtype=dtype,
                    peak_flops_per_s=state.peaks[dtype], hbm_bytes_per_s=state.copy_bytes_per_s,
                )
                full_ratio = full / predicted
            base = {"phase": phase, "batch": batch, "new_tokens": new_tokens, "context_tokens": context,
                    "predicted_seconds": predicted, "flops": flops, "bytes": bytes_}
            tokens = torch.randint(0, cfg.vocab, (batch, new_tokens), generator=generator).to(device)
            records.append(PointRecord(base=base, tokens=tokens, full_ratio=full_ratio))
        groups.append((batch, cache_tokens, records))
    ordered = [r for _, _, records in groups for r in records]

    def save() -> None:
        state.points = [r.point() for r in ordered if r.started]
        save_probe_result(state.result(complete=False), request.out)

    runner.run(groups, progress, save)
    state.points = [r.point() for r in ordered]
