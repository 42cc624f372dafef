"""Fit the engine profiles' per-step and per-request CPU costs on the TUNING half of the online rows.

No public figure in seconds was found for either (the profiles' `sources` say what was searched), so
both are fitted, per docs/validation.md's policy: only rows with `categories.is_holdout(row)` False are
read, and the held-out half is reported as the headline. Model, chosen on physical grounds and on the
tuning half only (nothing per row, nothing per model):
- `step_overhead_seconds`: the engine's fixed CPU time per step (schedule, prepare inputs, sample,
  process outputs; replaces the accelerator row's 0.4 ms). It lengthens every step, so TPOT grows, and
  more under load, where prefills interrupt decoding more often.
- `request_overhead_seconds`: CPU time per request before it reaches the scheduler (HTTP, chat template,
  tokenization; a TTFT floor).
One value of each, pooled over the vllm, sglang and trtllm profiles: the online rows hold 2 (vLLM, SGLang)
or 5 (TensorRT-LLM) tuning TPOT rows per engine and a single vLLM tuning TTFT row, too few to fit
engines apart.
1. The step overhead minimizes the mean squared relative error of the TPOT tuning rows (a per-request cost
   shifts every arrival by the same amount and leaves TPOT unchanged). Golden-section search on
   [0, 5 ms], 24 iterations, rounded to 10 us.
2. With it, a per-request cost c adds exactly c to every TTFT, so the c minimizing the squared relative
   error of the TTFT tuning rows (measured m, predicted p at c = 0) is sum((m - p) / m^2) / sum(1 / m^2),
   clipped at 0 and rounded to 0.1 ms.
Usage: python scripts/fit_online_overheads.py [--write]  (--write puts the values in the profiles)
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from costmodel.catalog.engines import ENGINES_DIR
from costmodel.fileio import atomic_write_text
from costmodel.validation import REFERENCE_CSV, read_reference_rows
from costmodel.validation import categories as cats
from costmodel.validation.online import predict_online

FITTED_ENGINES = ("vllm", "sglang", "trtllm")
STEP_SEARCH_SECONDS = (0.0, 5e-3)
STEP_ITERATIONS = 24
STEP_DECIMALS = 5  # 10 us
REQUEST_DECIMALS = 4  # 0.1 ms


@dataclass(frozen=True)
class OnlineFit:
    """The fitted values (s) and the tuning rows they were fitted on (labels)."""

    step_overhead_seconds: float
    request_overhead_seconds: float
    tpot_rows: tuple[str, ...]
    ttft_rows: tuple[str, ...]


def tuning_rows(path: Path, category: str) -> list[dict[str, str]]:
    """The evaluable rows of an online category in the tuning half (held-out rows are never returned)."""
    return [r for r in read_reference_rows(path)
            if cats.category_of(r) == category and not cats.is_holdout(r) and cats._ids(r)[2] is None]


def _predictions_ms(rows: list[dict[str, str]], *, step_overhead_seconds: float) -> list[float]:
    out = []
    for row in rows:
        model_id, hardware_id, _ = cats._ids(row)
        assert model_id is not None and hardware_id is not None
        out.append(predict_online(row, model_id, hardware_id, request_overhead_seconds=0.0,
                                  step_overhead_seconds=step_overhead_seconds))
    return out


def tpot_loss(rows: list[dict[str, str]], *, step_overhead_seconds: float) -> float:
    """Mean squared relative TPOT error of `rows` at this step overhead."""
    predicted = _predictions_ms(rows, step_overhead_seconds=step_overhead_seconds)
    return sum((p / float(r["value"]) - 1.0) ** 2 for p, r in zip(predicted, rows, strict=True)) / len(rows)


def fit_step_overhead(rows: list[dict[str, str]]) -> float:
    """Golden-section minimum of `tpot_loss` on STEP_SEARCH_SECONDS, rounded to 10 us."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    low, high = STEP_SEARCH_SECONDS
    x1, x2 = high - ratio * (high - low), low + ratio * (high - low)
    f1, f2 = tpot_loss(rows, step_overhead_seconds=x1), tpot_loss(rows, step_overhead_seconds=x2)
    for _ in range(STEP_ITERATIONS):
        if f1 <= f2:
            high, x2, f2 = x2, x1, f1
            x1 = high - ratio * (high - low)
            f1 = tpot_loss(rows, step_overhead_seconds=x1)
        else:
            low, x1, f1 = x1, x2, f2
            x2 = low + ratio * (high - low)
            f2 = tpot_loss(rows, step_overhead_seconds=x2)
    return round(0.5 * (low + high), STEP_DECIMALS)


def fit_request_overhead(rows: list[dict[str, str]], *, step_overhead_seconds: float) -> float:
    """Closed-form least-squares per-request cost (s) on the TTFT rows (module docstring, step 2)."""
    predicted = _predictions_ms(rows, step_overhead_seconds=step_overhead_seconds)
    measured = [float(r["value"]) for r in rows]
    shift_ms = sum((m - p) / m**2 for m, p in zip(measured, predicted, strict=True)) / sum(1.0 / m**2 for m in measured)
    return round(max(shift_ms, 0.0) / 1e3, REQUEST_DECIMALS)


def fit(path: Path = REFERENCE_CSV) -> OnlineFit:
    """Both values, fitted on the tuning half of the online rows of the CSV at `path`."""
    tpot, ttft = tuning_rows(path, "online_tpot"), tuning_rows(path, "online_ttft")
    step = fit_step_overhead(tpot)
    request = fit_request_overhead(ttft, step_overhead_seconds=step)
    return OnlineFit(step_overhead_seconds=step, request_overhead_seconds=request,
                     tpot_rows=tuple(cats._label(r) for r in tpot), ttft_rows=tuple(cats._label(r) for r in ttft))


def write_profiles(result: OnlineFit, *, engines_dir: Path = ENGINES_DIR) -> None:
    """Put the fitted values into each FITTED_ENGINES profile (the top-level value lines only)."""
    for engine_id in FITTED_ENGINES:
        path = engines_dir / f"{engine_id}.yaml"
        text = path.read_text(encoding="utf-8")
        for field, value in (("request_overhead_seconds", result.request_overhead_seconds),
                             ("step_overhead_seconds", result.step_overhead_seconds)):
            text, count = re.subn(rf"^{field}: .*$", f"{field}: {value!r}", text, flags=re.MULTILINE)
            if count != 1:
                raise SystemExit(f"{path}: expected one top-level '{field}:' line, found {count}")
        atomic_write_text(path, text)


def main() -> int:
    result = fit()
    print(f"step_overhead_seconds = {result.step_overhead_seconds!r} (TPOT tuning rows: {len(result.tpot_rows)})")
    print(f"request_overhead_seconds = {result.request_overhead_seconds!r} (TTFT tuning rows: {len(result.ttft_rows)})")
    for label in (*result.tpot_rows, *result.ttft_rows):
        print(f"  {label}")
    if "--write" in sys.argv:
        write_profiles(result)
        print(f"wrote {', '.join(FITTED_ENGINES)} profiles in {ENGINES_DIR}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
