"""Measured all-reduce time by message size: OpenXLA's collective perf tables, per GPU family and group size.

`costmodel/data/xla_allreduce_throughput.csv` (extracted by scripts/extract_xla_perf_tables.py from OpenXLA's
default_collective_perf_table.txtpb, openxla/xla commit ad6eaee1, Apache-2.0) holds, per XLA device key
("sm_90", "sm_100_B200", ...) and GPUs per group (2, 4, 8 inside one 8-GPU node), the median time of one
all-reduce of 1 KiB to 2 GiB (F32 buffers, powers of two), measured by XLA's collective_perf_table_gen
through NCCL. The table does not name the sm_90 board; its 8-GPU all-reduce reaches 230 GB/s of algorithm
bandwidth at 2 GiB, a bus bandwidth of 2 * 7/8 * 230 = 402 GB/s per direction, above what an H800's
NVLink (200 GB/s per direction) or an H100 PCIe (no NVSwitch) can carry: an NVLink 4 / NVSwitch HGX board,
H100 SXM or H200 (the same link), which is the assumption the catalog rows `h100-sxm` and `h200` make.

The curve, per table: each size's time is the lowest measured at that size or any larger one (a smaller
message can always be padded to a larger one; small sizes are noisy in the table, 14-167 us, and timing noise
only adds: the 1 KiB entries at 2 GPUs take 123 us on sm_90 and 167 us on sm_100_B200, 5-8x their 2 KiB
neighbours), then interpolated linearly in (log bytes, log seconds). Below 1 KiB the 1 KiB time holds (a latency floor); above 2 GiB the
time grows in proportion to size at the 2 GiB bandwidth. Every table shares the grid `GRID_BYTES`, so a
curve is an array of times on it and numpy broadcasts curves over configurations (the grid, the screen).
The activations all-reduced are bf16 (2 bytes per element), the table's F32: the same bytes take the same
time when bandwidth-bound; the reduction arithmetic is not separated out.
"""

from __future__ import annotations

import csv
import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np

CURVE_CSV = Path(__file__).resolve().parents[1] / "data" / "xla_allreduce_throughput.csv"
GRID_BYTES = 2.0 ** np.arange(10, 32)  # 1 KiB .. 2 GiB, the sizes every table in the CSV measured
_LOG_GRID = np.log(GRID_BYTES)
NODE_GPUS = 8  # the HGX boards the sm_90 / sm_100_B200 tables ran on: groups of 2, 4 or 8 of 8 GPUs


def _lower_envelope(values: np.ndarray) -> np.ndarray:
    """Time at each size = the fastest measured time at that size or any larger one (a message can be padded to
    a larger size, so a larger message's time bounds it; timing noise only adds, so the minimum is kept)."""
    return np.minimum.accumulate(values[::-1])[::-1]


@functools.cache
def _curves() -> dict[tuple[str, int], tuple[float, ...]]:
    """(XLA device key, GPUs per group) -> seconds at each GRID_BYTES size, non-decreasing."""
    seconds: dict[tuple[str, int], dict[float, float]] = {}
    with CURVE_CSV.open(encoding="utf-8") as handle:
        for row in csv.DictReader(line for line in handle if not line.startswith("#")):
            devices = int(row["devices_per_group"])
            if devices * int(row["groups"]) != NODE_GPUS:  # the 8 GPUs of one node, every group running at once
                continue
            size = float(row["buffer_bytes"])
            seconds.setdefault((row["arch"], devices), {})[size] = size / float(row["algbw_bytes_per_s"])
    curves = {}
    for key, by_size in seconds.items():
        if all(size in by_size for size in GRID_BYTES.tolist()):
            curves[key] = tuple(_lower_envelope(np.asarray([by_size[s] for s in GRID_BYTES.tolist()])).tolist())
    return curves


def allreduce_curve(table: str | None, *, gpus: int) -> tuple[float, ...] | None:
    """Seconds of one all-reduce at each GRID_BYTES size for `gpus` GPUs of device `table`; None = no data."""
    if table is None:
        return None
    return _curves().get((table, gpus))


def curve_seconds(buffer_bytes: np.ndarray | float, curve: np.ndarray | Sequence[float]) -> np.ndarray:
    """One all-reduce of `buffer_bytes` on `curve` (trailing axis = GRID_BYTES; leading axes broadcast with
    `buffer_bytes`): log-log interpolation inside the grid, the floor below it, constant bandwidth above."""
    log_bytes = np.log(np.maximum(np.asarray(buffer_bytes, dtype=np.float64), GRID_BYTES[0]))
    upper = np.clip(np.searchsorted(_LOG_GRID, log_bytes), 1, len(GRID_BYTES) - 1)
    lower = upper - 1
    weight = (log_bytes - _LOG_GRID[lower]) / (_LOG_GRID[upper] - _LOG_GRID[lower])  # > 1 above the grid
    log_curve = np.log(np.asarray(curve, dtype=np.float64))
    shape = np.broadcast_shapes(log_bytes.shape, log_curve.shape[:-1])
    table = np.broadcast_to(log_curve, (*shape, len(GRID_BYTES)))
    at_lower = np.take_along_axis(table, np.broadcast_to(lower, shape)[..., None], axis=-1)[..., 0]
    at_upper = np.take_along_axis(table, np.broadcast_to(upper, shape)[..., None], axis=-1)[..., 0]
    inside = np.exp(at_lower + np.minimum(weight, 1.0) * (at_upper - at_lower))
    return np.where(log_bytes > _LOG_GRID[-1], inside * np.exp(log_bytes - _LOG_GRID[-1]), inside)
