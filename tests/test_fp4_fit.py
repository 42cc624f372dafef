"""The fitted fp4_realized_peak_fraction that b200, gb200 and b300 share (costmodel/validation/fp4_fit.py).

Fitting policy (docs/validation.md): the value comes from a re-runnable script, is fitted on the tuning half
only, and the catalog marks it as fitted. Re-running the fit here, on a copy of the reference rows whose
held-out values are all tripled, must give the committed value: the fit reproduces, and no held-out row moves it.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

import pytest

from costmodel.catalog.loader import accelerators, load_accelerator
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.decision.warnings import fp4_peak_warnings
from costmodel.scenario import SelfHostOption
from costmodel.validation import REFERENCE_CSV, read_reference_rows
from costmodel.validation.categories import MOE_MODELS, _ids, category_of, is_holdout
from costmodel.validation.fp4_fit import FIT_GROUP, fit_fp4_peak_fraction, tuning_row_counts, tuning_rows
from scripts.fit_fp4_peak_fraction import CATALOG, rewrite, source_text


def test_the_fit_uses_only_dense_fp4_rows_of_the_tuning_half() -> None:
    rows = tuning_rows()
    assert rows and all(category_of(r) == "fp4" and not is_holdout(r) for r in rows)
    assert not any(name in r["model"] for r in rows for name in MOE_MODELS)
    assert {r["model"] for r in rows} == {"Llama-3.1-405B-Instruct", "Llama-3.3-70B-Instruct"}
    assert {_ids(r)[1] for r in rows} == set(FIT_GROUP)  # pooled over the three parts, each row on its own part
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
    fitted = {hw.id: hw for hw in accelerators().values() if hw.fp4_realized_peak_fraction is not None}
    assert sorted(fitted) == sorted(FIT_GROUP)  # rtx-pro-6000, mi355x: no fitted value, the datasheet ratio stays
    assert len({hw.fp4_realized_peak_fraction for hw in fitted.values()}) == 1  # one shared value
    counts = tuning_row_counts()
    for hw in fitted.values():
        source = hw.fp4_realized_peak_fraction_source or ""
        assert source.startswith("fitted-public:") and "scripts/fit_fp4_peak_fraction.py" in source
        assert "tuning half" in source and f"over the {sum(counts.values())} dense-model rows" in source
        assert all(f"{part}: {n}" in source for part, n in counts.items())
    # Too thin to fit per part: the split leaves gb200 and b300 one dense tuning row each.
    assert counts["b200"] == 14 and counts["gb200"] == counts["b300"] == 1
    for hw_id in ("rtx-pro-6000", "mi355x"):
        assert "fp4" in load_accelerator(hw_id).peak_flops_per_s
        assert load_accelerator(hw_id).op_precision(weight_dtype="fp4", kv_dtype="fp8").peak_flops_per_s == (
            load_accelerator(hw_id).peak_flops_per_s["fp4"])  # the datasheet peak, unscaled


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


def test_the_script_writes_value_and_source_into_each_shared_row_only() -> None:
    text = CATALOG.read_text(encoding="utf-8")
    source = source_text(counts=tuning_row_counts(), fitted=dt.date(2026, 12, 2))
    new, held = rewrite(text, value=0.61, source=source)
    assert sorted(held) == sorted(FIT_GROUP) and len(set(held.values())) == 1
    assert new.count("fp4_realized_peak_fraction: 0.61") == len(FIT_GROUP)
    assert new.count(json.dumps(source)) == len(FIT_GROUP) and "Fitted 2026-12-02." in source
    outside = text.replace("  - id: mi355x\n", "  - id: mi355x\n    fp4_realized_peak_fraction: 0.5\n", 1)
    with pytest.raises(ValueError, match="mi355x carries fp4_realized_peak_fraction but is not in FIT_GROUP"):
        rewrite(outside, value=0.61, source=source)


def test_fp4_on_a_part_without_a_fitted_fraction_is_flagged_in_the_warnings() -> None:
    def option(hardware: str, weight_dtype: str = "fp4") -> SelfHostOption:
        return SelfHostOption(name=f"{hardware}-70b", model="llama-3.3-70b", hardware=hardware,
                              weight_dtype=weight_dtype, kv_dtype="fp8", usd_per_gpu_hour=3.0)

    for hw_id in ("rtx-pro-6000", "mi355x"):
        (line,) = fp4_peak_warnings(option(hw_id))
        assert line.startswith(f"fp4 on {hw_id}:") and "datasheet fp4 peak, an assumption" in line
    assert fp4_peak_warnings(option("b300")) == fp4_peak_warnings(option("mi355x", "fp8")) == []
