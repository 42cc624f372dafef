"""The fitted fp4_realized_peak_fraction of the b200 row (costmodel/validation/fp4_fit.py).

Fitting policy (docs/validation.md): the value comes from a re-runnable script, is fitted on the tuning half
only, and the catalog marks it as fitted. Re-running the fit here, on a copy of the reference rows whose
held-out values are all tripled, must give the committed value: the fit reproduces, and no held-out row moves it.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from costmodel.catalog.loader import accelerators, load_accelerator
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.validation import REFERENCE_CSV, read_reference_rows
from costmodel.validation.categories import MOE_MODELS, category_of, is_holdout
from costmodel.validation.fp4_fit import fit_fp4_peak_fraction, tuning_rows


def test_the_fit_uses_only_dense_fp4_rows_of_the_tuning_half() -> None:
    rows = tuning_rows()
    assert rows and all(category_of(r) == "fp4" and not is_holdout(r) for r in rows)
    assert not any(name in r["model"] for r in rows for name in MOE_MODELS)
    assert {r["model"] for r in rows} == {"Llama-3.1-405B-Instruct", "Llama-3.3-70B-Instruct"}
    held_out = [r for r in read_reference_rows() if category_of(r) == "fp4" and is_holdout(r)]
    assert held_out and not any(r in rows for r in held_out)


def test_refit_with_held_out_values_changed_gives_the_committed_value(tmp_path: Path) -> None:
    rows = read_reference_rows()
    changed = 0
    for row in rows:
        if is_holdout(row) and category_of(row) is not None:
            row["value"] = repr(float(row["value"]) * 3.0)
            changed += 1
    assert changed > 50
    path = tmp_path / "reference.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    committed = load_accelerator("b200").fp4_realized_peak_fraction
    assert committed is not None and 0 < committed < 1
    assert fit_fp4_peak_fraction(path) == committed
    assert path != REFERENCE_CSV


def test_the_catalog_marks_the_value_fitted_and_no_other_row_has_one() -> None:
    b200 = load_accelerator("b200")
    source = b200.fp4_realized_peak_fraction_source or ""
    assert source.startswith("fitted-public:") and "scripts/fit_fp4_peak_fraction.py" in source
    assert "tuning half" in source
    others = [hw.id for hw in accelerators().values() if hw.fp4_realized_peak_fraction is not None]
    assert others == ["b200"]  # B300, GB200: no rows to fit on, the datasheet ratio stays


def test_the_fraction_scales_only_the_fp4_linear_layers() -> None:
    b200 = load_accelerator("b200")
    fraction = b200.fp4_realized_peak_fraction
    assert fraction is not None
    fp4 = b200.op_precision(weight_dtype="fp4", kv_dtype="fp8")
    assert fp4.peak_flops_per_s == pytest.approx(9e15 * fraction)  # datasheet 18 PFLOPS sparse / 2
    assert (fp4.attention_peak_flops_per_s, fp4.lm_head_peak_flops_per_s) == (4.5e15, 2.25e15)
    assert b200.op_precision(weight_dtype="fp8", kv_dtype="fp8").peak_flops_per_s == 4.5e15
    row = b200.model_dump()
    row["fp4_realized_peak_fraction_source"] = None
    with pytest.raises(ValueError, match="fp4_realized_peak_fraction_source"):
        AcceleratorSpec.model_validate(row)
