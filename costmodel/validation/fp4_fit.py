"""The one fitted value of the fp4 rows: the share of the fp4 peak that fp4 linear layers realize.

No public source gives the throughput TensorRT-LLM's NVFP4 GEMMs reach on a B200 next to its fp8 ones, and
with the datasheet ratio (fp4 = 2 x fp8) every fp4 row is predicted ~40% high while the fp8 rows are not.
Physically: an NVFP4 GEMM also reads and applies one E4M3 scale per 16 elements, and each one is preceded by
a kernel that quantizes its bf16 activations to fp4 with those scales, work the FLOP count does not see; so
the fp4 layers reach a smaller share of their peak than fp8 layers of theirs. One dimensionless factor
`fp4_realized_peak_fraction` (0 < f <= 1, on top of eff_compute) stands for it.

One value, shared by the datacenter Blackwell parts FIT_GROUP (B200, GB200, B300: the same NVFP4 tensor-core
design, one TensorRT-LLM kernel family). Per part the data is too thin: the TensorRT-LLM release/1.2 perf
overview gives GB200 and B300 four dense (Llama 3.3 70B TP1) rows each, of which the hashed split leaves ONE
per part in the tuning half; B300's (ISL/OSL 1024/8192) is decode-bound and moves by under 3 points from
f = 0.4 to 1, so it cannot fix f alone. The RTX PRO 6000 (a different chip, GDDR7, one dense tuning row) and
the MI355X (MXFP4, no rows) are not in the group and keep no fitted value: their fp4 layers run at the
datasheet fp4 peak times eff_compute (schema: None = 1), an assumption the catalog comment states.

Fit (binding policy, docs/validation.md): only the TUNING half of the fp4 category
(`categories.is_holdout(row)` False), and of it the dense models' rows, where the fp4 linear layers are the
work: the MoE rows (gpt-oss ships MXFP4, not NVFP4, experts; Qwen3-30B-A3B's experts are 768 wide) run grouped
expert GEMMs whose own shortfall this factor must not absorb. Each row is predicted on its own accelerator with
the trial f; f is the value at which the median signed error over the pooled rows is zero, by bisection on
[0.05, 1] (the predictions fall monotonically with f), 8 halvings, rounded to two decimals. Run
`scripts/fit_fp4_peak_fraction.py` to refit and write the value into accelerators.yaml; tests/test_fp4_fit.py
re-runs it (with every held-out row's value changed) and checks the committed one.
"""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

from costmodel.catalog.loader import load_accelerator
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.validation import REFERENCE_CSV, read_reference_rows
from costmodel.validation.categories import MOE_MODELS, _ids, category_of, is_holdout, throughput_prediction

FIT_GROUP = ("b200", "gb200", "b300")  # the accelerators that share the one fitted value
LOW, HIGH, HALVINGS = 0.05, 1.0, 8


def tuning_rows(path: Path = REFERENCE_CSV) -> list[dict[str, str]]:
    """The dense-model fp4 rows of the tuning half on FIT_GROUP parts that the catalog can evaluate (never a
    held-out row)."""
    rows = []
    for row in read_reference_rows(path):
        if category_of(row) != "fp4" or is_holdout(row) or any(name in row["model"] for name in MOE_MODELS):
            continue
        model_id, hardware_id, reason = _ids(row)
        if reason is None and hardware_id in FIT_GROUP and model_id is not None:
            rows.append(row)
    return rows


def tuning_row_counts(path: Path = REFERENCE_CSV) -> dict[str, int]:
    """How many tuning rows each FIT_GROUP part puts into the fit (the doc and the catalog source say it)."""
    counts = Counter(_ids(row)[1] for row in tuning_rows(path))
    return {hardware_id: counts.get(hardware_id, 0) for hardware_id in FIT_GROUP}


def median_signed_error(rows: list[dict[str, str]], *, fraction: float) -> float:
    """Median of (predicted - measured) / measured over `rows`, each on its own accelerator with the fp4 peak
    scaled by `fraction`."""
    errors = []
    for row in rows:
        model_id, hardware_id, _ = _ids(row)
        assert model_id is not None and hardware_id is not None
        hardware = _with_fraction(load_accelerator(hardware_id), fraction=fraction)
        gpus = int(row["n_gpus"])
        total = throughput_prediction(model_id=model_id, hardware=hardware, gpus=gpus, precision=row["precision"],
                                      isl=int(row["input_len"]), osl=int(row["output_len"]))
        predicted = total / gpus if row["metric"] == "output_throughput_per_gpu" else total
        errors.append((predicted - float(row["value"])) / float(row["value"]))
    return statistics.median(errors)


def fit_fp4_peak_fraction(path: Path = REFERENCE_CSV) -> float:
    """The fraction (two decimals) at which the tuning half's median signed error crosses zero."""
    rows = tuning_rows(path)
    low, high = LOW, HIGH
    for _ in range(HALVINGS):
        middle = (low + high) / 2.0
        if median_signed_error(rows, fraction=middle) > 0.0:
            high = middle  # still over-predicted: the fp4 layers are slower than this
        else:
            low = middle
    return round((low + high) / 2.0, 2)


def _with_fraction(hardware: AcceleratorSpec, *, fraction: float) -> AcceleratorSpec:
    return hardware.model_copy(update={
        "fp4_realized_peak_fraction": fraction,
        "fp4_realized_peak_fraction_source": "fitted-public: trial value of the fit",
    })
