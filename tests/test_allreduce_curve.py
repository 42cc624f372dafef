"""The measured all-reduce curve (catalog/allreduce_curve.py) against its CSV rows, by hand.

Rows quoted from costmodel/data/xla_allreduce_throughput.csv (OpenXLA default_collective_perf_table.txtpb,
openxla/xla ad6eaee1, sm_90, one group of 8 GPUs): time = buffer bytes / algbw.
  262,144 B at 10,014,669,926 B/s = 26.176 us     1,048,576 B at 20,189,772,027 B/s = 51.936 us
  524,288 B at 12,593,389,700 B/s = 41.632 us     2,097,152 B at 36,612,290,502 B/s = 57.280 us
  2,147,483,648 B at 229,968,237,690 B/s = 9,338.18 us (the largest size measured)
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from costmodel.catalog.allreduce_curve import GRID_BYTES, allreduce_curve, curve_seconds
from costmodel.catalog.links import tp_link
from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.grid import evaluate_grid
from costmodel.roofline import step

ROOT = Path(__file__).resolve().parents[1]
SM90_8 = np.asarray(allreduce_curve("sm_90", gpus=8))
H100 = load_accelerator("h100-sxm")
SHAPE = derive_shape(load_model("llama-3.1-70b"))  # 80 layers, hidden 8192 (config.json)


def test_grid_points_are_the_table_and_smaller_sizes_take_the_fastest_larger_time() -> None:
    assert SM90_8[GRID_BYTES.tolist().index(2.0**20)] == pytest.approx(1_048_576 / 20_189_772_027, rel=1e-12)
    # 1 KiB .. 256 KiB all take 26.176 us: the 256 KiB entry is faster than every smaller one in the table.
    assert SM90_8[:9] == pytest.approx([262_144 / 10_014_669_926] * 9, rel=1e-12)
    assert np.all(np.diff(SM90_8) >= 0)


def test_log_log_interpolation_floor_and_extrapolation_by_hand() -> None:
    # 2^19.5 B (~724 KiB) lies halfway in log size between 512 KiB and 1 MiB: the geometric mean of their times.
    between = math.sqrt(524_288 / 12_593_389_700 * 1_048_576 / 20_189_772_027)
    assert float(curve_seconds(2.0**19.5, SM90_8)) == pytest.approx(between, rel=1e-12)
    assert float(curve_seconds(8.0, SM90_8)) == pytest.approx(262_144 / 10_014_669_926, rel=1e-12)  # below 1 KiB
    # 4 GiB: twice the 2 GiB time (constant bandwidth beyond the table).
    assert float(curve_seconds(2.0**32, SM90_8)) == pytest.approx(2 * 2_147_483_648 / 229_968_237_690, rel=1e-12)


def test_rows_without_data_and_other_group_sizes_keep_the_formula() -> None:
    assert allreduce_curve(None, gpus=8) is None
    assert allreduce_curve("sm_90", gpus=16) is None
    assert tp_link(load_accelerator("a100-80gb"), gpus=8).curve is None
    assert tp_link(H100, gpus=16).curve is None  # across nodes: the NIC formula (catalog/links.py)
    assert tp_link(H100, gpus=8).curve == tuple(SM90_8.tolist())


def test_tp8_decode_step_pays_the_measured_time_at_its_buffer() -> None:
    # Batch 64 decode: the buffer is 64 x 8192 x 2 = 1,048,576 B, 51.936 us per all-reduce; 2 per layer, 80 layers.
    result = step(SHAPE, H100, batch=64, new_tokens=1, context_tokens=1024, gpus=8)
    assert result.comm_seconds == pytest.approx(80 * 2 * 1_048_576 / 20_189_772_027, rel=1e-12)
    # Batch 16: 262,144 B, the 26.176 us entry.
    small = step(SHAPE, H100, batch=16, new_tokens=1, context_tokens=1024, gpus=8)
    assert small.comm_seconds == pytest.approx(80 * 2 * 262_144 / 10_014_669_926, rel=1e-12)


def test_grid_broadcasts_curves_and_matches_the_scalar_step() -> None:
    grid = evaluate_grid(model_ids=["llama-3.1-70b"], hardware_ids=["h100-sxm", "a100-80gb"], gpus=[1, 8],
                         weight_dtypes=["bf16"], batch=[16, 64], context_tokens=[1024])
    for i, hw in enumerate(("h100-sxm", "a100-80gb")):
        for b_index, batch in enumerate((16, 64)):
            scalar = step(SHAPE, load_accelerator(hw), batch=batch, new_tokens=1, context_tokens=1024, gpus=8)
            assert grid.decode_step_seconds[0, i, 1, 0, b_index, 0] == pytest.approx(scalar.step_seconds, rel=1e-12)


def test_the_csv_names_its_source_and_holds_every_size() -> None:
    # 22 sizes (1 KiB .. 2 GiB) x 3 group sizes per 8-GPU table; the header names the OpenXLA commit.
    text = (ROOT / "costmodel" / "data" / "xla_allreduce_throughput.csv").read_text()
    assert text.startswith("# Extracted by scripts/extract_xla_perf_tables.py from openxla/xla ad6eaee1")
    for arch in ("sm_90", "sm_100_B200"):
        for gpus in (2, 4, 8):
            assert sum(line.startswith(f"{arch},{gpus},{8 // gpus},") for line in text.splitlines()) == len(GRID_BYTES)
