"""The documented error of a simulated p90 latency, per engine profile and metric (TTFT, TPOT).

`costmodel/data/simulated_latency_error.csv` is written by `scripts/make_validation_doc.py` from the online
categories of docs/validation.md (predicted vs published TTFT/TPOT at moderate load): for each engine profile
the larger of the held-out half's and all its rows' median |relative error| (a held-out half of two or three
rows can be narrow by chance), and for
`generic` the same rows run with the generic profile's CPU costs (docs/validation.md, "before the fit").
`scripts/make_validation_doc.py --check` fails when the file is out of step with the code.

A simulated p90 x (1 -+ error) is the band every face shows (decision/evidence.py): half of the held-out rows
fell inside it. An engine with no online validation row (`naive`) has no documented error, so its simulated
latency is never counted as likely to meet an SLO.
"""

from __future__ import annotations

import csv
import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from costmodel.errors import CostmodelError

ERROR_CSV = "simulated_latency_error.csv"
ERROR_PATH = Path(__file__).resolve().parents[1] / "data" / ERROR_CSV
Metric = Literal["ttft", "tpot"]
COLUMNS = ("engine", "metric", "median_abs_error", "rows", "split", "basis")


@dataclass(frozen=True, kw_only=True)
class SimulatedError:
    """One engine's documented median |relative error| of one simulated latency metric."""

    engine: str
    metric: Metric
    median_abs_error: float  # fraction, e.g. 0.134 = 13.4%
    rows: int  # validation rows behind the median
    split: str  # "held-out" | "all rows": which median was the larger
    basis: str  # which docs/validation.md figure, for people


def _row(raw: dict[str, str]) -> SimulatedError:
    value = float(raw["median_abs_error"])
    if not (math.isfinite(value) and 0 <= value < 1):
        raise CostmodelError(f"{ERROR_CSV}: median_abs_error {raw['median_abs_error']!r} for {raw['engine']} "
                             f"{raw['metric']} must be a fraction in [0, 1); regenerate with "
                             "scripts/make_validation_doc.py")
    metric = raw["metric"]
    if metric not in ("ttft", "tpot"):
        raise CostmodelError(f"{ERROR_CSV}: metric {metric!r} must be ttft or tpot")
    return SimulatedError(engine=raw["engine"], metric=metric, median_abs_error=value,  # type: ignore[arg-type]
                          rows=int(raw["rows"]), split=raw["split"], basis=raw["basis"])


@functools.cache
def simulated_errors() -> tuple[SimulatedError, ...]:
    """Every row of the bundled error file (read once)."""
    text = ERROR_PATH.read_text(encoding="utf-8")
    return tuple(_row(r) for r in csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))


def simulated_error(engine: str, metric: Metric) -> SimulatedError | None:
    """The documented error of `engine`'s simulated `metric`; None: the engine has no online validation row."""
    return next((e for e in simulated_errors() if e.engine == engine and e.metric == metric), None)
