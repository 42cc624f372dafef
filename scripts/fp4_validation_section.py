"""The fp4 section of docs/validation.md (issue 26 item 5): the fp4 rows by accelerator, fitted value or not.

"Before" is static: the fp4 medians docs/validation.md printed at main d9fc2af, when only the B200 had fp4 rows
(tuning 16.6% over 20, held-out 17.9% over 14). "After" is computed from today's rows. The "datasheet ratio"
column re-predicts each part's held-out rows with fp4_realized_peak_fraction = 1 (the value a part without a
fitted one runs at), so the held-out effect of the fit is visible per part.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from costmodel.catalog.loader import load_accelerator
from costmodel.validation import categories as cats
from costmodel.validation import read_reference_rows
from costmodel.validation.fp4_fit import FIT_GROUP

BEFORE_B200 = ((0.166, 20), (0.179, 14))  # (median |error|, rows) of the tuning and held-out halves at d9fc2af
FP4_HARDWARE = ("b200", "gb200", "b300", "rtx-pro-6000", "mi355x")


def _pct(errors: Sequence[float]) -> str:
    return f"{statistics.median(errors):.1%} ({len(errors)})" if errors else "- (0)"


def _paired(rows: Sequence[cats.CategoryRow]) -> list[tuple[cats.CategoryRow, dict[str, str]]]:
    """Each fp4 CategoryRow with its reference CSV row (both lists keep the CSV order)."""
    raw = [r for r in read_reference_rows() if cats.category_of(r) == "fp4"]
    if len(raw) != len(rows):
        raise ValueError(f"{len(rows)} fp4 category rows against {len(raw)} fp4 CSV rows")
    return list(zip(rows, raw, strict=True))


def _is_dense(raw: dict[str, str]) -> bool:
    return not any(name in raw["model"] for name in cats.MOE_MODELS)


def _datasheet_ratio_error(row: cats.CategoryRow, raw: dict[str, str]) -> float:
    """The row's signed error with its part's fp4 peak unscaled (fraction 1)."""
    model_id, hardware_id, _ = cats._ids(raw)
    assert model_id is not None and hardware_id is not None
    spec = load_accelerator(hardware_id).model_copy(
        update={"fp4_realized_peak_fraction": None, "fp4_realized_peak_fraction_source": None})
    total = cats.throughput_prediction(model_id=model_id, hardware=spec, gpus=row.gpus, precision=row.precision,
                                       isl=int(raw["input_len"]), osl=int(raw["output_len"]))
    predicted = total / row.gpus if row.metric == "output_throughput_per_gpu" else total
    return (predicted - row.measured) / row.measured


def _fraction_text(hardware_id: str) -> str:
    spec = load_accelerator(hardware_id)
    if spec.fp4_realized_peak_fraction is None:
        return "none: datasheet ratio (1), an assumption"
    shared = " (shared)" if hardware_id in FIT_GROUP and len(FIT_GROUP) > 1 else ""
    return f"{spec.fp4_realized_peak_fraction:.2f} fitted{shared}"


def _table_line(hardware_id: str, pairs: Sequence[tuple[cats.CategoryRow, dict[str, str]]]) -> str:
    done = [(r, raw) for r, raw in pairs if r.error is not None]
    tuning = [abs(r.error) for r, _ in done if not r.holdout and r.error is not None]
    held = [(r, raw) for r, raw in done if r.holdout]
    dense_held = [abs(r.error) for r, raw in held if _is_dense(raw) and r.error is not None]
    moe_held = [abs(r.error) for r, raw in held if not _is_dense(raw) and r.error is not None]
    ratio = [abs(_datasheet_ratio_error(r, raw)) for r, raw in held]
    return (f"| `{hardware_id}` | {_fraction_text(hardware_id)} | {len(pairs)} | {_pct(tuning)} | "
            f"**{_pct([abs(r.error) for r, _ in held if r.error is not None])}** | {_pct(ratio)} | "
            f"{_pct(dense_held)} | {_pct(moe_held)} |")


def fp4_section(rows: Sequence[cats.CategoryRow]) -> list[str]:
    """Markdown lines: the fp4 category per accelerator, with the held-out check of the fitted fraction."""
    pairs = _paired(rows)
    by_part = {hw: [(r, raw) for r, raw in pairs if cats._ids(raw)[1] == hw] for hw in FP4_HARDWARE}
    summary = cats.summarize_category(rows)
    (before_tuning, n_tuning), (before_held, n_held) = BEFORE_B200
    return [
        "",
        "### FP4 by accelerator (issue 26 item 5)",
        "",
        "| Accelerator | fp4_realized_peak_fraction | Rows | Tuning median \\|e\\| (n) | Held-out median \\|e\\| (n) | "
        "Held-out at the datasheet ratio (n) | Held-out dense (n) | Held-out MoE (n) |",
        "|---|---|---|---|---|---|---|---|",
        *(_table_line(hw, by_part[hw]) for hw in FP4_HARDWARE),
        "",
        f"Before (main d9fc2af, B200 rows only): tuning {before_tuning:.1%} over {n_tuning} rows, held-out "
        f"{before_held:.1%} over {n_held}.",
        f"After (every fp4 row): tuning {summary.tuning_median_abs_error:.1%} over {summary.tuning_evaluated}, "
        f"held-out **{summary.holdout_median_abs_error:.1%}** over {summary.holdout_evaluated}.",
        "The rows beyond B200 are the TP1 NVFP4 columns of the TensorRT-LLM release/1.2 perf overview (B300 marked",
        "beta there; the RTX PRO 6000 Server Edition's TP1,PP1 column; GB300 is not in the catalog, and the DEP and",
        "PP > 1 layouts are left out as for B200). One fraction is fitted for b200, gb200 and b300 together",
        "(`costmodel/validation/fp4_fit.py`: the split leaves gb200 and b300 one dense tuning row each, and",
        "b300's is decode-bound, moving under 3 points from f = 0.4 to 1). `rtx-pro-6000` (one dense tuning row,",
        "another chip) and `mi355x` (MXFP4; no serving row in this table format was found) keep none and run the",
        "datasheet fp4 peak times eff_compute. The MoE rows (gpt-oss, Qwen3-30B-A3B) stay far over on every",
        "datacenter part and the fit leaves them out: see 'MoE fp4 rows' below for what moved them and what is left.",
    ]
