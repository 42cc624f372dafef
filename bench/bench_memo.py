"""`costmodel memo` wall time per bundled example (target < 5 s each, start-up included), with CPU time."""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 3
TARGET_SECONDS = 5.0


def _one(scenario: Path, out: Path) -> tuple[float, float, int]:
    """(wall s, CPU s of the child, pages) of one `costmodel memo` run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "costmodel", "memo", str(scenario), "--out", str(out), "--json", "--date", "2026-12-01"],
        check=True, capture_output=True, text=True, cwd=ROOT,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, int(json.loads(proc.stdout)["pages"])


def run() -> list[str]:
    """Printed figures: median over RUNS runs per example."""
    lines = []
    with tempfile.TemporaryDirectory() as folder:
        for scenario in sorted((ROOT / "examples").glob("*.yaml")):
            results = [_one(scenario, Path(folder) / f"{scenario.stem}.pdf") for _ in range(RUNS)]
            wall = statistics.median(r[0] for r in results)
            cpu = statistics.median(r[1] for r in results)
            verdict = "ok" if wall < TARGET_SECONDS else f"OVER the {TARGET_SECONDS:.0f} s target"
            lines.append(f"costmodel memo {scenario.name}: {results[0][2]} pages, {wall:.2f} s wall "
                         f"({cpu:.2f} s CPU), median of {RUNS}: {verdict}")
    return lines
