"""`make bench`: the quick CPU probe's wall time, batch-1 decode MBU and the calibration's held-out error.

Prints figures; asserts nothing (timings depend on the machine and on what else runs on it).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path


def run() -> list[str]:
    """Run `costmodel probe --device cpu --quick` and `costmodel calibrate` on it; return report lines."""
    from costmodel.measurements.fit import fit_calibration
    from costmodel.measurements.probe_result import batch1_decode_mbu
    from probes.runner import ProbeRequest, run_probe

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        result = run_probe(ProbeRequest(out=Path(folder) / "probe.json", device="cpu", quick=True,
                                        show_progress=False))
        wall = time.perf_counter() - started
    fit = fit_calibration(result)
    mbu = batch1_decode_mbu(result)
    busy = result.background_cpu_fraction
    lines = [
        f"probe --device cpu --quick: {wall:.1f} s wall ({result.settings.model_id}, "
        f"{result.settings.layers_probed} layers, {len(result.ok_points)} points, target < 90 s)",
        f"  copy {result.copy_bytes_per_s / 1e9:.1f} GB/s, matmul "
        + ", ".join(f"{k} {v / 1e9:.1f} GFLOP/s" for k, v in result.peak_flops_per_s_by_dtype.items()),
        f"  batch-1 decode MBU {mbu:.0%} (target >= 50%)" if mbu is not None else "  batch-1 decode MBU: no point",
        f"  calibration held-out error: median {fit.holdout_median_abs_error:.1%} (target <= 10%), "
        f"max {fit.holdout_max_abs_error:.1%}",
        f"  other processes used {busy:.0%} of the CPUs meanwhile" if busy is not None else "",
    ]
    return [line for line in lines if line]


if __name__ == "__main__":
    print("\n".join(run()))
