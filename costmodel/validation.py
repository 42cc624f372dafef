"""Predicted vs published measurements (../shared/reference rows, copied into costmodel/data/).

Each comparison is a ValidationRow; `docs/validation.md` is generated from them by
`scripts/make_validation_doc.py`, and tests check the median errors against the targets.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from costmodel.estimate import estimate

REFERENCE_CSV = Path(__file__).resolve().parent / "data" / "reference_measurements.csv"

# Reference hardware strings -> catalog ids (the gpt-fast A100s were power-capped at 330 W; we use the
# stock a100-80gb datasheet and say so in docs/validation.md).
HARDWARE_IDS = {
    "A100-SXM-80GB (330W cap)": "a100-80gb",
    "H100-SXM-80GB": "h100-sxm",
    "H200-SXM-141GB": "h200",
    "H100-PCIe-80GB": "h100-pcie",
    "RTX 4090 24GB": "rtx-4090",
}
MODEL_IDS = {
    "Llama-2-7B": "llama-2-7b",
    "Llama-2-70B": "llama-2-70b",
    "Llama-3.1-8B": "llama-3.1-8b",
    "Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "Llama-3.1-70B": "llama-3.1-70b",
    "Llama-3.1-405B": "llama-3.1-405b",
    "Mixtral-8x7B": "mixtral-8x7b",
}
# Precision strings -> our weight dtypes. Eager and speculative-decoding rows are not comparable
# (a non-compiled baseline and a different algorithm) and are listed as excluded.
PRECISIONS = {
    "BF16": "bf16",
    "FP8": "fp8",
    "INT8 weight-only": "int8",
    "INT4 weight-only g32": "int4",
    "INT4 weight-only (GPTQ)": "int4",
}


@dataclass(frozen=True)
class ValidationRow:
    """One published figure next to our prediction for the same configuration."""

    label: str
    model_id: str
    hardware_id: str
    gpus: int
    weight_dtype: str
    metric: str
    measured: float
    predicted: float
    source: str

    @property
    def error(self) -> float:
        """Signed relative error (predicted - measured) / measured."""
        return (self.predicted - self.measured) / self.measured


def read_reference_rows(path: Path = REFERENCE_CSV) -> list[dict[str, str]]:
    """Raw rows of the reference CSV."""
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def batch1_decode_rows(path: Path = REFERENCE_CSV) -> list[ValidationRow]:
    """gpt-fast / PyTorch-blog batch-1 decode tok/s vs `estimate` with default efficiencies."""
    result = []
    for row in read_reference_rows(path):
        if row["metric"] != "decode_tokens_per_second" or row["concurrency_or_batch"] != "1":
            continue
        if "eager" in row["scenario"] or "spec" in row["precision"] or "speculative" in row["scenario"]:
            continue
        model_id = MODEL_IDS.get(row["model"])
        hardware_id = HARDWARE_IDS.get(row["hardware"])
        dtype = PRECISIONS.get(row["precision"])
        if not (model_id and hardware_id and dtype):
            continue
        gpus = int(row["n_gpus"])
        # gpt-fast's default run: a ~5-token prompt then 200 new tokens.
        est = estimate(model_id, hardware_id, gpus=gpus, weight_dtype=dtype, batch=1, prompt_tokens=5, output_tokens=200)
        result.append(
            ValidationRow(
                label=f"{row['model']} {row['precision']} {row['hardware']} x{gpus}: {row['scenario']}",
                model_id=model_id,
                hardware_id=hardware_id,
                gpus=gpus,
                weight_dtype=dtype,
                metric="decode tok/s (batch 1)",
                measured=float(row["value"]),
                predicted=est.decode_tokens_per_second,
                source=row["source"],
            )
        )
    return result


def median_abs_error(rows: Sequence[ValidationRow]) -> float:
    """Median of |predicted - measured| / measured."""
    return statistics.median(abs(r.error) for r in rows)
