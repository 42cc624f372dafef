"""Run `costmodel probe --quick` in a child process and report its progress, for the Probes page.

A child process keeps torch out of the app's server process and lets the page draw a live progress
bar from the probe's own progress lines on stderr ("[####....] 3/40   1.2s label", one per step).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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


def stop_child(proc: subprocess.Popen) -> None:  # type: ignore[type-arg]
    """Terminate a child process (then kill it if it ignores that for 5 s)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()


def probe_command(*, model: str, device: str, out: Path) -> list[str]:
    """The CLI call the page runs (tests replace this with a fast stand-in)."""
    return [sys.executable, "-m", "costmodel", "probe", "--quick", "--device", device, "--model", model,
            "--out", str(out)]


def run_probe_subprocess(*, model: str, device: str, out: Path,
                         on_progress: Callable[[ProgressStep], None]) -> ProbeResult:
    """Run the probe, calling `on_progress` for each step; the result file is validated on return."""
    command = probe_command(model=model, device=device, out=out)
    try:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, bufsize=1)
    except OSError as exc:
        raise CostmodelError(f"could not start the probe ({exc.strerror})") from None
    errors: list[str] = []
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            step = parse_progress(line)
            if step is not None:
                on_progress(step)  # the page's progress bar: a click on Cancel (a rerun) raises here
            elif line.strip():
                errors.append(line.strip())
    except BaseException:  # cancelled (Streamlit's rerun or stop) or failed: never leave the probe running
        stop_child(proc)
        raise
    try:
        proc.wait(timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise CostmodelError(f"the probe ran longer than {TIMEOUT_SECONDS:.0f} s and was stopped") from None
    if proc.returncode != 0 or not out.exists():
        detail = " ".join(errors[-3:]) or f"exit code {proc.returncode}"
        raise CostmodelError(f"the probe failed: {detail.removeprefix('costmodel: error: ')}")
    return load_probe_result(out)
