"""Refit the shared fp4_realized_peak_fraction on the tuning half of the fp4 rows; write it into the catalog.

Usage: PYTHONPATH=. python scripts/fit_fp4_peak_fraction.py [--check]
The fit is `costmodel.validation.fp4_fit.fit_fp4_peak_fraction` (its docstring states the rule, and why one
value is shared by the FIT_GROUP parts b200, gb200 and b300). The value and its source go into the
`fp4_realized_peak_fraction:` and `fp4_realized_peak_fraction_source:` lines of each FIT_GROUP row of
costmodel/catalog/accelerators.yaml (the only rows that carry them); --check only prints the fit and exits 1
when a row holds another value.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path

from costmodel.fileio import atomic_write_text
from costmodel.validation.fp4_fit import FIT_GROUP, fit_fp4_peak_fraction, tuning_row_counts

CATALOG = Path(__file__).resolve().parents[1] / "costmodel" / "catalog" / "accelerators.yaml"
BLOCK = re.compile(r"^  - id: (\S+)\n(?:(?!  - id: ).*\n?)*", re.MULTILINE)
VALUE = re.compile(r"^(    fp4_realized_peak_fraction: )([0-9.]+)(.*)$", re.MULTILINE)
SOURCE = re.compile(r"^(    fp4_realized_peak_fraction_source: ).*$", re.MULTILINE)


def source_text(*, counts: dict[str, int], fitted: dt.date) -> str:
    """The catalog's `fp4_realized_peak_fraction_source` for this fit (what it was fitted on, and when)."""
    per_part = ", ".join(f"{hw}: {n}" for hw, n in counts.items())
    return (
        "fitted-public: scripts/fit_fp4_peak_fraction.py (costmodel/validation/fp4_fit.py), one value shared by "
        f"{', '.join(FIT_GROUP)} (the datacenter Blackwell parts; that B300's Blackwell Ultra shares B200's fraction of "
        "a higher fp4 peak is an assumption the held-out rows test): the value at which "
        f"the median signed error is 0 over the {sum(counts.values())} dense-model rows of the tuning half "
        f"(categories.is_holdout False) of the fp4 category, each predicted on its own accelerator ({per_part}): "
        "the NVFP4 Llama 3.1 405B and Llama 3.3 70B rows of NVIDIA's TensorRT-LLM perf overview (v1.0, commit "
        "00f37686, and release/1.2, whose B300 column is marked beta) in costmodel/data/reference_measurements.csv. "
        "Shared, not per part, because the split leaves too few tuning rows on the parts other than b200 to fit "
        "each alone; no public figure for NVFP4 GEMM throughput next to fp8 was found. "
        f"Fitted {fitted.isoformat()}."
    )


def rewrite(text: str, *, value: float, source: str) -> tuple[str, dict[str, float]]:
    """`text` with each FIT_GROUP row's value and source replaced, and the values it held before."""
    held: dict[str, float] = {}

    def one(block: re.Match[str]) -> str:
        body, hardware_id = block.group(0), block.group(1)
        found = VALUE.findall(body)
        if hardware_id not in FIT_GROUP:
            if found:
                raise ValueError(f"{hardware_id} carries fp4_realized_peak_fraction but is not in FIT_GROUP")
            return body
        if len(found) != 1 or len(SOURCE.findall(body)) != 1:
            raise ValueError(f"expected one fp4_realized_peak_fraction and one _source line in the {hardware_id} row")
        held[hardware_id] = float(found[0][1])
        body = VALUE.sub(lambda m: f"{m.group(1)}{value:.2f}{m.group(3)}", body)
        return SOURCE.sub(lambda m: m.group(1) + json.dumps(source), body)

    new = BLOCK.sub(one, text)
    missing = set(FIT_GROUP) - set(held)
    if missing:
        raise ValueError(f"no catalog row for {sorted(missing)}")
    return new, held


def main(argv: list[str]) -> int:
    value = fit_fp4_peak_fraction()
    text = CATALOG.read_text(encoding="utf-8")
    try:
        new, held = rewrite(text, value=value, source=source_text(counts=tuning_row_counts(), fitted=dt.date.today()))
    except ValueError as exc:
        print(f"{CATALOG}: {exc}", file=sys.stderr)
        return 2
    print(f"fitted fp4_realized_peak_fraction = {value:.2f} (catalog: {held})")
    if "--check" in argv:
        return 0 if all(v == value for v in held.values()) else 1
    atomic_write_text(CATALOG, new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
