"""Timers (perf_counter on CPU, CUDA events on GPU), repeated runs with a stable median, CUDA graphs.

The pattern is gpt-fast's: warm up, synchronize before reading the timer, report the median. Shared
machines swing timings ~2x, so a point is re-run (up to `max_repeats`) while its spread is wide.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

SPREAD_TARGET = 0.25  # (max - min) / median below which the repeats are deemed stable


@dataclass(frozen=True)
class Timing:
    times: tuple[float, ...]  # seconds of each timed call

    @property
    def seconds_median(self) -> float:
        return statistics.median(self.times)

    @property
    def seconds_min(self) -> float:
        return min(self.times)

    @property
    def seconds_max(self) -> float:
        return max(self.times)

    @property
    def repeats(self) -> int:
        return len(self.times)


def time_once(fn: Callable[[], object], device: torch.device) -> float:
    """Seconds of one call, with the device synchronized (CUDA events on GPU)."""
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3  # ms -> s
    begin = time.perf_counter()
    fn()
    return time.perf_counter() - begin


def measure(
    fn: Callable[[], object],
    device: torch.device,
    *,
    warmup: int,
    repeats: int,
    max_repeats: int,
    budget_seconds: float = float("inf"),
) -> Timing:
    """Median of `repeats` timed calls after `warmup`; more calls while the spread is wide and time allows."""
    for _ in range(warmup):
        fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    times: list[float] = []
    while True:
        times.append(time_once(fn, device))
        if len(times) < repeats:
            continue
        median = statistics.median(times)
        spread = (max(times) - min(times)) / median
        if len(times) >= max_repeats or spread <= SPREAD_TARGET or sum(times) + median > budget_seconds:
            break
    return Timing(tuple(times))


def cuda_graph(fn: Callable[[], object]) -> Callable[[], object]:
    """Capture `fn` (static shapes, no host sync inside) into a CUDA graph; returns its replay."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up on a side stream, as torch.cuda.graphs' docs require
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


class Progress:
    """A one-line progress bar on stderr (redrawn in place on a terminal, one line per step otherwise)."""

    def __init__(self, total: int, *, enabled: bool = True, width: int = 24) -> None:
        self.total, self.width, self.done, self.enabled = total, width, 0, enabled
        self.started = time.perf_counter()
        self.tty = sys.stderr.isatty()

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        filled = self.width * self.done // max(self.total, 1)
        elapsed = time.perf_counter() - self.started
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/{self.total} {elapsed:5.1f}s {label}"
        sys.stderr.write(("\r" + line.ljust(100)) if self.tty else line + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()
