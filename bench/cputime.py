"""CPU seconds (user + sys) of a child process, medians, and the verdict each bench line prints.

The machine is shared, so the benches time CPU, not wall: the CPU a command burns does not grow when other
work shares the cores (its wall time does).

The package's bytecode is compiled once before the first timing (`compileall`, into the usual __pycache__
folders): an installed package runs from bytecode (pip compiles it; a plain interpreter writes it on the first
run), so a command's CPU is timed as a user's second run sees it. Without this, an environment with
PYTHONDONTWRITEBYTECODE set (as in CI and dev shells) recompiles every costmodel module in every timed
process: 0.05 s on `estimate`, 0.2-0.35 s on `compare` and `memo`, measured on the 2-core dev machine.
"""

from __future__ import annotations

import compileall
import functools
import os
import resource
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AS_OF = "2026-12-01"


@functools.cache
def compile_package() -> bool:
    """Compile costmodel's bytecode once per bench run (True when every file compiled)."""
    return bool(compileall.compile_dir(ROOT / "costmodel", quiet=1))


def child_cpu_seconds(args: Sequence[str], *, cwd: Path = ROOT) -> float:
    """CPU seconds of one `python -m costmodel ARGS` run, from compiled bytecode (raises when it fails)."""
    compile_package()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "costmodel", *args], check=True, capture_output=True, text=True, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median_cpu_seconds(args: Sequence[str], *, runs: int, cwd: Path = ROOT) -> float:
    """Median CPU seconds over `runs` runs."""
    return statistics.median(child_cpu_seconds(args, cwd=cwd) for _ in range(runs))


def descendants_cpu_seconds() -> float | None:
    """CPU seconds (user + sys) so far of the live processes under this one (Linux /proc; None elsewhere): a
    local Ray's workers are the raylet's children, so RUSAGE_CHILDREN misses them unless the raylet reaps them."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended while listed
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after the command name, which may hold spaces
        parents[int(entry.name)] = int(fields[1])
        cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime (proc(5))
    under, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier and pid not in under}
        under |= frontier
    return sum(cpu[pid] for pid in under)


def verdict(*, value: float, target: float, higher_is_better: bool = False) -> str:
    """'ok' when the figure meets its target, else 'MISS'."""
    met = value >= target if higher_is_better else value < target
    return "ok" if met else "MISS"


def budget_line(label: str, *, seconds: float, target_seconds: float, runs: int) -> str:
    """'LABEL: 0.41 s CPU (median of 5; target < 0.5 s) ok'."""
    return (f"{label}: {seconds:.2f} s CPU (median of {runs}; target < {target_seconds:g} s) "
            f"{verdict(value=seconds, target=target_seconds)}")


if __name__ == "__main__":  # ad hoc: python -m bench.cputime RUNS ARGS...
    print(f"{median_cpu_seconds(sys.argv[2:], runs=int(sys.argv[1])):.3f}")
