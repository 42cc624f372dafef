"""The step timer's lazy tables (serving/lazy_tables.py) equal the eager tables they replace, bit for bit.

The eager forms are written out here as the code had them: every token table `tuple(array.tolist())`, every
decode row `tuple(tuple(op) for op in row)` of `rows.tolist()`, and a speculative timer's verify row followed by
its draft row times k in Python floats.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from costmodel.serving import build_replica
from costmodel.serving.expert_parallel_timer import dep_replica
from costmodel.serving.lazy_tables import ROW_BLOCK, TOKEN_BLOCK, DecodeRows, TokenTable
from costmodel.serving.speculative import Speculation
from costmodel.serving.speculative_timer import speculative_replica
from costmodel.serving.steptime import StepTimer


def _eager(rows: np.ndarray) -> list[tuple[tuple[float, ...], ...]]:
    return [tuple(tuple(op) for op in row) for row in rows.tolist()]


def test_rows_equal_the_eager_conversion_in_any_read_order() -> None:
    rows = np.random.default_rng(3).normal(size=(2 * ROW_BLOCK + 17, 2, 8))
    lazy = DecodeRows(rows)
    assert len(lazy) == 0 and lazy.size == len(rows)
    order = [len(rows) - 1, 0, ROW_BLOCK, 5, *range(len(rows))]
    eager = _eager(rows)
    for batch in order:
        assert lazy[batch] == eager[batch]
    assert len(lazy) == len(rows)  # each row built once
    with pytest.raises(IndexError):
        lazy[len(rows)]
    with pytest.raises(IndexError):
        lazy[-1]
    with pytest.raises(ValueError, match="shape"):
        DecodeRows(np.zeros((3, 8)))


def test_token_table_equals_the_eager_list_in_any_read_order() -> None:
    array = np.random.default_rng(5).normal(size=2 * TOKEN_BLOCK + 3)
    lazy = TokenTable(array)
    eager = tuple(array.tolist())
    for tokens in [len(array) - 1, 0, TOKEN_BLOCK + 1, *range(len(array))]:
        value = lazy[tokens]
        assert value == eager[tokens] and type(value) is float  # a Python float, not a numpy scalar
    assert len(lazy) == len(array) and lazy.array is array
    with pytest.raises(IndexError):
        lazy[len(array)]
    with pytest.raises(ValueError, match="1-D"):
        TokenTable(np.zeros((2, 2)))


def test_rows_survive_pickling_half_built() -> None:
    rows = np.arange(3 * ROW_BLOCK * 8, dtype=np.float64).reshape(3 * ROW_BLOCK, 1, 8)
    lazy = DecodeRows(rows)
    _ = lazy[1]
    copy = pickle.loads(pickle.dumps(lazy))
    assert copy.size == lazy.size and copy[2 * ROW_BLOCK] == _eager(rows)[2 * ROW_BLOCK]


@pytest.mark.parametrize(("model", "hardware", "gpus", "dtype"), [
    ("llama-3.1-8b", "h100-sxm", 1, "bf16"),
    ("gpt-oss-20b", "l40s", 1, "bf16"),  # sliding-window layers: above-window coefficients too
])
def test_timer_rows_equal_the_eager_table(model: str, hardware: str, gpus: int, dtype: str) -> None:
    timer = build_replica(model, hardware, gpus=gpus, weight_dtype=dtype, kv_dtype=dtype).timer
    static, lines = timer.decode_tables()
    static_array, rows = timer._decode_arrays()
    assert static == static_array.tolist()
    eager = _eager(rows)
    assert [lines[b] for b in range(lines.size)] == eager


@pytest.mark.parametrize("dep", [False, True])
def test_speculative_rows_equal_verify_plus_k_drafts_in_python_floats(dep: bool) -> None:
    replica = build_replica("deepseek-v3", "h200", gpus=8, weight_dtype="fp8", kv_dtype="fp8")
    spec = Speculation(method="mtp", acceptance_rates=(0.8, 0.6))
    fast = speculative_replica(replica, spec)
    if dep:
        fast = dep_replica(fast)
    timer = fast.timer
    static, lines = timer.decode_tables()
    # The eager form: the verify step's own tables, then + k x the draft's, in Python floats.
    verify_static, verify_rows = StepTimer._decode_arrays(timer)
    draft_static, draft_rows = timer.draft._decode_arrays()
    k = float(spec.draft_tokens)
    batches = len(verify_static)
    expected_static = [s + k * d for s, d in zip(verify_static.tolist(), draft_static.tolist()[:batches], strict=True)]
    expected_lines = [row + tuple(tuple(k * v for v in op) for op in draft_row)
                      for row, draft_row in zip(_eager(verify_rows), _eager(draft_rows)[:batches], strict=True)]
    assert static == expected_static
    for batch in (0, 1, 7, 300, batches - 1):
        assert lines[batch] == expected_lines[batch]
