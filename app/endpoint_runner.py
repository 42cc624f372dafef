"""Run `costmodel probe-endpoint` (a load sweep) and `costmodel probe --collectives` in child processes for
the Probes page, reporting the sweep's progress level by level.

The API key reaches the child only through its environment (KEY_ENV); the sweep file records the
variable's name and whether a key was sent, never the key, and nothing here writes or logs it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.child_process import failure_detail, follow_stderr, start_child, wait_child
from costmodel.errors import CostmodelError
from costmodel.fileio import load_json_model
from costmodel.measurements.collectives_result import CollectivesResult
from costmodel.measurements.endpoint_sweep import EndpointSweep

KEY_ENV = "COSTMODEL_PROBES_PAGE_API_KEY"
LEVEL_LINE = re.compile(r"^probe-endpoint: level (\d+)/(\d+) done: (.*)$")
SWEEP_TIMEOUT_SECONDS = 1800.0
COLLECTIVES_TIMEOUT_SECONDS = 300.0


@dataclass(frozen=True)
class LevelDone:
    """One finished level of the sweep, as the CLI reports it on stderr."""

    done: int
    total: int
    summary: str

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total > 0 else 0.0


def parse_level_line(line: str) -> LevelDone | None:
    """A sweep progress line, or None for any other output."""
    match = LEVEL_LINE.match(line.strip())
    if match is None:
        return None
    done, total, summary = match.groups()
    return LevelDone(done=int(done), total=int(total), summary=summary)


@dataclass(frozen=True, kw_only=True)
class SweepRequest:
    """What the page asks for (checked again by the CLI, which names the bad field)."""

    url: str
    model: str
    levels: str  # comma list, e.g. "1,2,4"
    mode: str  # "concurrency" | "rates"
    requests_per_level: int
    prompt_tokens: int
    max_tokens: int
    timeout_seconds: float


def sweep_command(request: SweepRequest, *, out: Path) -> list[str]:
    """The CLI call the page runs."""
    flag = "--concurrency" if request.mode == "concurrency" else "--rates"
    return [sys.executable, "-m", "costmodel", "probe-endpoint", "--url", request.url, "--model", request.model,
            flag, request.levels, "--requests", str(request.requests_per_level), "--prompt-tokens",
            str(request.prompt_tokens), "--max-tokens", str(request.max_tokens), "--timeout",
            str(request.timeout_seconds), "--api-key-env", KEY_ENV, "--out", str(out)]


def _child_env(api_key: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != KEY_ENV}
    if api_key:
        env[KEY_ENV] = api_key
    return env


def run_sweep_subprocess(request: SweepRequest, *, out: Path, api_key: str | None,
                         on_level: Callable[[LevelDone], None],
                         on_wait: Callable[[], None] | None = None) -> EndpointSweep:
    """Run the sweep, calling `on_level` per finished level; the sweep file is validated on return (a sweep
    with failed requests still returns its levels: calibration then says what is wrong). `on_wait` runs while the
    child is silent (the page redraws its bar, so a Cancel stops the child at once)."""
    proc = start_child(sweep_command(request, out=out), what="sweep", env=_child_env(api_key))
    errors = follow_stderr(proc, parse=parse_level_line, on_item=on_level, on_wait=on_wait)
    returncode = wait_child(proc, what="sweep", timeout_seconds=SWEEP_TIMEOUT_SECONDS)
    if returncode not in (0, 1) or not out.exists():  # 1: some requests failed, the file is written
        raise CostmodelError(f"the sweep failed: {failure_detail(errors, returncode=returncode)}")
    return load_json_model(out, EndpointSweep, what="sweep")


def collectives_command(*, processes: int, out: Path) -> list[str]:
    """The CLI call for the collectives probe (tests replace it with a fast stand-in)."""
    return [sys.executable, "-m", "costmodel", "probe", "--collectives", "--processes", str(processes),
            "--out", str(out)]


def run_collectives_subprocess(*, processes: int, out: Path) -> CollectivesResult:
    """Run the collectives probe (gloo on CPU, NCCL when there are as many GPUs) and read its result."""
    try:
        done = subprocess.run(collectives_command(processes=processes, out=out), capture_output=True, text=True,
                              timeout=COLLECTIVES_TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise CostmodelError(f"the collectives probe ran longer than {COLLECTIVES_TIMEOUT_SECONDS:.0f} s") from None
    except OSError as exc:
        raise CostmodelError(f"could not start the collectives probe ({exc.strerror})") from None
    if done.returncode != 0 or not out.exists():
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise CostmodelError("the collectives probe failed: "
                             + failure_detail(lines, returncode=done.returncode, last=2))
    return load_json_model(out, CollectivesResult, what="collectives probe")
