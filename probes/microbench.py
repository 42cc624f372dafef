"""Microbenchmarks: the measured roofline of this machine (copy bytes/s, matmul FLOP/s per dtype).

copy: `dst.copy_(src)` over buffers far larger than the last-level cache, counting read + write bytes
(STREAM's "copy" convention). matmul: `F.linear(a, w)` with n x n operands, the layout nn.Linear uses
(x @ w.T); n doubles while a call stays short, and the best rate over sizes is the peak (bf16 on a
CPU without native bf16 runs ~10x slower than fp32, so it stops at a smaller n).
Rates use the fastest repeat: another process on the machine can only slow a copy or a GEMM down.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from costmodel.measurements.probe_result import Microbenchmark
from probes.environment import TORCH_DTYPES
from probes.timing import measure


def copy_bandwidth(device: torch.device, *, buffer_bytes: int, repeats: int) -> Microbenchmark:
    """Bytes/s of a device-to-same-device copy (2 x buffer bytes moved per call)."""
    elements = buffer_bytes // 4
    src = torch.ones(elements, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    timing = measure(lambda: dst.copy_(src), device, warmup=1, repeats=repeats, max_repeats=repeats)
    return Microbenchmark(
        kind="copy",
        dtype="fp32",
        size=elements * 4,
        seconds_median=timing.seconds_median,
        seconds_min=timing.seconds_min,
        seconds_max=timing.seconds_max,
        repeats=timing.repeats,
        bytes_per_s=2.0 * elements * 4 / timing.seconds_min,
    )


def matmul_flops(
    device: torch.device, *, dtype: str, sizes: tuple[int, ...], max_call_seconds: float, repeats: int
) -> list[Microbenchmark]:
    """FLOP/s of n x n x n products for growing n; stops before a call would exceed `max_call_seconds`."""
    results = []
    for n in sizes:
        a = torch.randn(n, n, device=device).to(TORCH_DTYPES[dtype])
        w = torch.randn(n, n, device=device).to(TORCH_DTYPES[dtype])

        def product(a: torch.Tensor = a, w: torch.Tensor = w) -> torch.Tensor:
            return F.linear(a, w)

        timing = measure(product, device, warmup=1, repeats=repeats, max_repeats=repeats)
        results.append(
            Microbenchmark(
                kind="matmul",
                dtype=dtype,
                size=n,
                seconds_median=timing.seconds_median,
                seconds_min=timing.seconds_min,
                seconds_max=timing.seconds_max,
                repeats=timing.repeats,
                flops_per_s=2.0 * n**3 / timing.seconds_min,
            )
        )
        if 8.0 * timing.seconds_median > max_call_seconds:  # doubling n multiplies the FLOPs by 8
            break
    return results


def best_flops(benches: list[Microbenchmark], dtype: str) -> float:
    """Highest FLOP/s measured for `dtype`."""
    return max(b.flops_per_s or 0.0 for b in benches if b.kind == "matmul" and b.dtype == dtype)
