"""Run `costmodel probe --quick` in a child process and report its progress, for the Probes page.

A child process keeps torch out of the app's server process and lets the page draw a live progress
bar from the probe's own progress lines on stderr ("[####....] 3/40   1.2s label", one per step), followed
by app/child_process.py.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.child_process import failure_detail, follow_stderr, start_child, wait_child
from costmodel.errors import CostmodelError
from costmodel.measurements.probe_result import ProbeResult, load_probe_result

PROGRESS_LINE = re.compile(r"\]\s+(\d+)/(\d+)\s+([\d.]+)s\s*(.*)$")
TIMEOUT_SECONDS = 900.0


@dataclass(frozen=True)
class ProgressStep:
    """One progress line of the probe."""

    done: int
    total: int
    elapsed_seconds: float
    label: str

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total > 0 else 0.0


def parse_progress(line: str) -> ProgressStep | None:
    """A probe progress line, or None for any other output."""
    match = PROGRESS_LINE.search(line.rstrip())
    if match is None:
        return None
    done, total, elapsed, label = match.groups()
    return ProgressStep(done=int(done), total=int(total), elapsed_seconds=float(elapsed), label=label.strip())


def probe_command(*, model: str, device: str, out: Path) -> list[str]:
    """The CLI call the page runs (tests replace this with a fast stand-in)."""
    return [sys.executable, "-m", "costmodel", "probe", "--quick", "--device", device, "--model", model,
            "--out", str(out)]


def run_probe_subprocess(*, model: str, device: str, out: Path,
                         on_progress: Callable[[ProgressStep], None],
                         on_wait: Callable[[], None] | None = None) -> ProbeResult:
    """Run the probe, calling `on_progress` for each step and `on_wait` while the child is silent (the page
    redraws its bar, so a Cancel stops the child at once); the result file is validated on return."""
    proc = start_child(probe_command(model=model, device=device, out=out), what="probe")
    errors = follow_stderr(proc, parse=parse_progress, on_item=on_progress, on_wait=on_wait)
    returncode = wait_child(proc, what="probe", timeout_seconds=TIMEOUT_SECONDS)
    if returncode != 0 or not out.exists():
        raise CostmodelError(f"the probe failed: {failure_detail(errors, returncode=returncode)}")
    return load_probe_result(out)

