"""`costmodel memo` wall time per bundled example and one large scenario (target < 5 s each, start-up
included), with CPU time beside it (on a shared machine the wall time mostly measures the load)."""

from __future__ import annotations

import json
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
RUNS = 3
TARGET_SECONDS = 5.0
LARGE_TOKENS_PER_DAY = 2e9  # issue 16: "13.3 s to build for a 2B tokens/day scenario"


def _large_scenario(folder: Path) -> Path:
    """chat-assistant.yaml at 2B prompt + output tokens/day (its 1,500 + 350 mean tokens per request)."""
    data = yaml.safe_load((ROOT / "examples" / "chat-assistant.yaml").read_text(encoding="utf-8"))
    workload = data["workload"]
    per_request = workload["prompt_tokens"]["mean_tokens"] + workload["output_tokens"]["mean_tokens"]
    workload["requests_per_day"] = math.ceil(LARGE_TOKENS_PER_DAY / per_request)
    data["name"] = f"{data['name']} at 2B tokens/day"
    path = folder / "chat-assistant-2b-tokens-per-day.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


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
        for scenario in [*sorted((ROOT / "examples").glob("*.yaml")), _large_scenario(Path(folder))]:
            results = [_one(scenario, Path(folder) / f"{scenario.stem}.pdf") for _ in range(RUNS)]
            wall = statistics.median(r[0] for r in results)
            cpu = statistics.median(r[1] for r in results)
            verdict = "ok" if wall < TARGET_SECONDS else f"OVER the {TARGET_SECONDS:.0f} s target"
            lines.append(f"costmodel memo {scenario.name}: {results[0][2]} pages, {wall:.2f} s wall "
                         f"({cpu:.2f} s CPU), median of {RUNS}: {verdict}")
    return lines
