"""`costmodel memo` per bundled example and one large scenario (target < 3 s CPU each, the whole process), and
`memo --search 3` per example (target < 10 s CPU). CPU user+sys of the child, medians, since the machine is
shared. Printed, never asserted."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import yaml

from bench.cputime import AS_OF, ROOT, budget_line, median_cpu_seconds

RUNS = 3
SEARCH_RUNS = 1
TARGET_CPU_SECONDS = 3.0
SEARCH_TARGET_CPU_SECONDS = 10.0
SEARCH_K = 3
LARGE_TOKENS_PER_DAY = 2e9  # a large scenario: 2B tokens/day


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


def run() -> list[str]:
    """Printed figures."""
    lines = []
    with tempfile.TemporaryDirectory() as folder:
        examples = sorted((ROOT / "examples").glob("*.yaml"))
        for scenario in [*examples, _large_scenario(Path(folder))]:
            args = ["memo", str(scenario), "--out", str(Path(folder) / f"{scenario.stem}.pdf"), "--json", "--date", AS_OF]
            lines.append(budget_line(f"costmodel memo {scenario.name}", seconds=median_cpu_seconds(args, runs=RUNS),
                                     target_seconds=TARGET_CPU_SECONDS, runs=RUNS))
            if scenario in examples:
                lines.append(budget_line(f"costmodel memo {scenario.name} --search {SEARCH_K}",
                                         seconds=median_cpu_seconds([*args, "--search", str(SEARCH_K)], runs=SEARCH_RUNS),
                                         target_seconds=SEARCH_TARGET_CPU_SECONDS, runs=SEARCH_RUNS))
    return lines
