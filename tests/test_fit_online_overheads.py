"""scripts/fit_online_overheads.py: the fitted engine CPU costs are reproducible, come from the tuning half
only, and are what the vllm, sglang and trtllm profiles hold (docs/validation.md's fitting policy)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from costmodel.catalog.engines import load_engine
from costmodel.validation import REFERENCE_CSV, read_reference_rows
from costmodel.validation import categories as cats
from costmodel.validation.online import predict_online
from scripts.fit_online_overheads import FITTED_ENGINES, OnlineFit, fit, tuning_rows, write_profiles


@pytest.fixture(scope="module")
def committed_fit() -> OnlineFit:
    return fit()


def _copy_with(tmp_path: Path, change: dict[int, float]) -> Path:
    """The reference CSV with the values of the rows at these indices replaced."""
    rows = read_reference_rows()
    for index, value in change.items():
        rows[index] = rows[index] | {"value": repr(value)}
    path = tmp_path / "reference.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _online_indices(*, holdout: bool, category: str | None = None) -> list[int]:
    return [i for i, r in enumerate(read_reference_rows())
            if (cats.category_of(r) or "").startswith("online") and cats.is_holdout(r) == holdout
            and (category is None or cats.category_of(r) == category)]


def test_refit_gives_the_values_the_profiles_hold(committed_fit: OnlineFit) -> None:
    for engine_id in FITTED_ENGINES:
        profile = load_engine(engine_id)
        assert profile.step_overhead_seconds == committed_fit.step_overhead_seconds, engine_id
        assert profile.request_overhead_seconds == committed_fit.request_overhead_seconds, engine_id
        for field in ("step_overhead_seconds", "request_overhead_seconds"):
            source = profile.sources[field]
            assert source.basis == "fitted-public" and "scripts/fit_online_overheads.py" in source.note
    # Physically plausible magnitudes: a few ms of CPU per step and per request, not seconds.
    assert 0.0 < committed_fit.step_overhead_seconds < 0.01
    assert 0.0 < committed_fit.request_overhead_seconds < 0.05
    # The generic and naive profiles keep the pre-profile behaviour.
    assert load_engine("generic").request_overhead_seconds == 0.0 and load_engine("generic").step_overhead_seconds is None


def test_fit_reads_only_tuning_rows(committed_fit: OnlineFit) -> None:
    for category in ("online_tpot", "online_ttft"):
        rows = tuning_rows(REFERENCE_CSV, category)
        assert rows and not any(cats.is_holdout(r) for r in rows)
    assert len(committed_fit.tpot_rows) == len(tuning_rows(REFERENCE_CSV, "online_tpot"))
    assert len(committed_fit.ttft_rows) == len(tuning_rows(REFERENCE_CSV, "online_ttft"))


def test_held_out_values_do_not_move_the_fit(committed_fit: OnlineFit, tmp_path: Path) -> None:
    # Triple every held-out online row's measured value: the fit must not notice.
    change = {i: 3.0 * float(read_reference_rows()[i]["value"]) for i in _online_indices(holdout=True)}
    assert len(change) >= 10
    assert fit(_copy_with(tmp_path, change)) == committed_fit


def test_a_tuning_value_does_move_the_fit(committed_fit: OnlineFit, tmp_path: Path) -> None:
    # The check above can fail: doubling one tuning TTFT row's value raises the per-request cost.
    index = _online_indices(holdout=False, category="online_ttft")[0]
    changed = fit(_copy_with(tmp_path, {index: 2.0 * float(read_reference_rows()[index]["value"])}))
    assert changed.step_overhead_seconds == committed_fit.step_overhead_seconds  # TPOT rows unchanged
    assert changed.request_overhead_seconds > committed_fit.request_overhead_seconds


def test_per_request_cost_adds_exactly_to_ttft() -> None:
    # The closed form of the fit's second step rests on this: TTFT(c) = TTFT(0) + c for every request.
    row = next(r for r in read_reference_rows() if cats.category_of(r) == "online_ttft" and "SGLang" in r["scenario"])
    model_id, hardware_id, _ = cats._ids(row)
    assert model_id is not None and hardware_id is not None
    zero = predict_online(row, model_id, hardware_id, request_overhead_seconds=0.0)
    shifted = predict_online(row, model_id, hardware_id, request_overhead_seconds=0.01)
    assert shifted - zero == pytest.approx(10.0, rel=1e-6)


def test_write_profiles_replaces_only_the_value_lines(tmp_path: Path) -> None:
    for engine_id in FITTED_ENGINES:
        source = Path(load_engine.__code__.co_filename).parent / "engines" / f"{engine_id}.yaml"
        (tmp_path / f"{engine_id}.yaml").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    write_profiles(OnlineFit(step_overhead_seconds=0.001, request_overhead_seconds=0.002, tpot_rows=(), ttft_rows=()),
                   engines_dir=tmp_path)
    text = (tmp_path / "vllm.yaml").read_text(encoding="utf-8")
    assert "\nstep_overhead_seconds: 0.001\n" in text and "\nrequest_overhead_seconds: 0.002\n" in text
    assert "\nstep_overhead_seconds_per_sequence: 0.0\n" in text  # the per-sequence line is left alone
