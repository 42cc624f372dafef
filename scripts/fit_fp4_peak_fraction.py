"""Refit the b200 row's fp4_realized_peak_fraction on the tuning half of the fp4 rows; write it into the catalog.

Usage: PYTHONPATH=. python scripts/fit_fp4_peak_fraction.py [--check]
The fit is `costmodel.validation.fp4_fit.fit_fp4_peak_fraction` (its docstring states the rule). The value
goes into the `fp4_realized_peak_fraction:` line of costmodel/catalog/accelerators.yaml (the b200 row, the
only row that carries one); --check only prints the fit and exits 1 when the file holds another value.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from costmodel.fileio import atomic_write_text
from costmodel.validation.fp4_fit import fit_fp4_peak_fraction

CATALOG = Path(__file__).resolve().parents[1] / "costmodel" / "catalog" / "accelerators.yaml"
LINE = re.compile(r"^(    fp4_realized_peak_fraction: )([0-9.]+)(.*)$", re.MULTILINE)


def main(argv: list[str]) -> int:
    value = fit_fp4_peak_fraction()
    text = CATALOG.read_text(encoding="utf-8")
    found = LINE.findall(text)
    if len(found) != 1:
        print(f"expected one fp4_realized_peak_fraction line in {CATALOG}, found {len(found)}", file=sys.stderr)
        return 2
    print(f"fitted fp4_realized_peak_fraction = {value:.2f} (catalog: {found[0][1]})")
    if "--check" in argv:
        return 0 if float(found[0][1]) == value else 1
    atomic_write_text(CATALOG, LINE.sub(lambda m: f"{m.group(1)}{value:.2f}{m.group(3)}", text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
