"""Run every bench/bench_*.py module's `run()` and print the lines it returns."""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path


def main() -> int:
    names = sorted(p.stem for p in Path(__file__).resolve().parent.glob("bench_*.py"))
    only = set(sys.argv[1:])
    for name in names:
        if only and name not in only:
            continue
        started = time.perf_counter()
        print(f"== {name}", flush=True)
        module = importlib.import_module(f"bench.{name}")
        for line in module.run():
            print(f"  {line}", flush=True)
        print(f"  ({time.perf_counter() - started:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
