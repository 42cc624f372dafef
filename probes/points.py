"""Measure the sweep's points in rounds, saving after every point.

On a shared CPU another process's burst slows every repeat taken during it, so repeats are spread over
`rounds` passes through the whole sweep and each point's median is over its rounds (GPUs use one round
with many repeats). A point that runs out of memory is "does_not_fit" and is not retried.
"""

from __future__ import annotations

import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from costmodel.measurements.probe_result import ProbePoint
from probes.environment import NvmlDevice
from probes.model import Transformer
from probes.sweeps import Sweep
from probes.timing import Progress, cuda_graph, measure


@dataclass
class PointRecord:
    """What one point has accumulated so far."""

    base: dict[str, Any]  # ProbePoint fields fixed before measuring (phase, shape, prediction)
    tokens: torch.Tensor
    full_ratio: float | None  # predicted(all layers) / predicted(probed layers); None when not a slice
    status: str = "ok"
    message: str = ""
    times: list[float] = field(default_factory=list)
    energy_joules: float = 0.0
    energy_seconds: float = 0.0  # wall time the energy was counted over
    peak_memory_bytes: float = 0.0

    def point(self) -> ProbePoint:
        if self.status != "ok" or not self.times:
            return ProbePoint(status=self.status, message=self.message, **self.base)  # type: ignore[arg-type]
        median = statistics.median(self.times)
        power = self.energy_joules / self.energy_seconds if self.energy_seconds > 0 else None
        tokens = self.base["batch"] * self.base["new_tokens"]
        return ProbePoint(
            status="ok",
            message=self.message,
            seconds_median=median,
            seconds_min=min(self.times),
            seconds_max=max(self.times),
            repeats=len(self.times),
            peak_memory_bytes=self.peak_memory_bytes or None,
            power_watts=power,
            energy_joules_per_token=power * median / tokens if power is not None else None,
            full_model_seconds=median * self.full_ratio if self.full_ratio else None,
            **self.base,
        )

    @property
    def started(self) -> bool:
        return bool(self.times) or self.status != "ok"


def is_oom(exc: BaseException) -> bool:
    """Out of memory on CUDA (torch.OutOfMemoryError) or on the host (allocator RuntimeError/MemoryError)."""
    if isinstance(exc, MemoryError | torch.OutOfMemoryError):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def peak_memory_bytes(device: torch.device) -> float:
    if device.type == "cuda":
        return float(torch.cuda.max_memory_allocated(device))
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024.0  # Linux reports KiB


@dataclass
class PointRunner:
    """Runs the rounds; `on_point` is called after each measurement (to save and show progress)."""

    model: Transformer
    forward: Callable[..., torch.Tensor]
    device: torch.device
    sweep: Sweep
    graphs: bool
    nvml: NvmlDevice | None
    fits: Callable[[int, int, int], str | None]  # (batch, cache tokens, step tokens) -> why not, or None

    def run(self, groups: list[tuple[int, int, list[PointRecord]]], progress: Progress,
            on_point: Callable[[], None]) -> None:
        for round_index in range(self.sweep.rounds):
            for batch, cache_tokens, records in groups:
                live = [r for r in records if r.status == "ok"]
                if live:
                    self._group(batch, cache_tokens, live, round_index, progress, on_point)

    def _group(self, batch: int, cache_tokens: int, records: list[PointRecord], round_index: int,
               progress: Progress, on_point: Callable[[], None]) -> None:
        reason = self.fits(batch, cache_tokens, 0)
        if reason is None:
            try:
                self.model.setup_cache(batch=batch, max_tokens=cache_tokens)
            except (RuntimeError, MemoryError) as exc:
                if not is_oom(exc):
                    raise
                reason = f"KV cache out of memory: {str(exc).splitlines()[0]}"
        try:
            for record in records:
                why = reason or self.fits(batch, cache_tokens, batch * record.base["new_tokens"])
                if why is not None:
                    record.status, record.message = "does_not_fit", why
                else:
                    self._measure(record, warmup=self.sweep.warmup if round_index == 0 else self.sweep.warmup_later)
                on_point()
                b = record.base
                shown = f"{statistics.median(record.times) * 1e3:.1f} ms" if record.times else record.status
                progress.step(f"round {round_index + 1} {b['phase']} B={b['batch']} T={b['new_tokens']} "
                              f"C={b['context_tokens']}: {shown}")
        finally:
            self.model.release_cache()
            if self.device.type == "cuda":
                torch.cuda.empty_cache()

    def _measure(self, record: PointRecord, *, warmup: int) -> None:
        context = record.base["context_tokens"]
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        try:
            with torch.no_grad():
                fn: Callable[[], object] = lambda: self.forward(record.tokens, context)  # noqa: E731
                if self.graphs and record.base["phase"] == "decode":
                    fn = cuda_graph(fn)
                for _ in range(warmup):
                    fn()
                timing = measure(fn, self.device, warmup=0, repeats=self.sweep.repeats,
                                 max_repeats=self.sweep.max_repeats, budget_seconds=self.sweep.point_budget_seconds)
                energy = self._energy(fn) if self.nvml else None
        except (RuntimeError, MemoryError) as exc:
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
            first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if is_oom(exc):
                record.status, record.message = "does_not_fit", f"out of memory: {first_line}"
            else:
                record.status, record.message = "failed", f"{type(exc).__name__}: {first_line}"
            return
        record.times.extend(timing.times)
        record.peak_memory_bytes = max(record.peak_memory_bytes, peak_memory_bytes(self.device))
        if energy is not None:
            record.energy_joules += energy[0]
            record.energy_seconds += energy[1]

    def _energy(self, fn: Callable[[], object]) -> tuple[float, float] | None:
        """(joules, seconds) of back-to-back calls for at least sweep.energy_seconds (NVML counter).

        The counter updates every few tens of ms, so a window much longer than one step is needed.
        """
        assert self.nvml is not None
        if self.sweep.energy_seconds <= 0:
            return None
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        before, started = self.nvml.energy_joules(), time.perf_counter()
        while time.perf_counter() - started < self.sweep.energy_seconds:
            fn()
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
        after, seconds = self.nvml.energy_joules(), time.perf_counter() - started
        if before is None or after is None:
            return None
        return after - before, seconds
