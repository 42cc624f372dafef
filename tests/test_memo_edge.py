"""Memos for the unusual scenarios: a calibration, API options only, nothing meeting the SLO."""

from __future__ import annotations

import datetime as dt
import io
import re
from pathlib import Path

import pytest

pypdf = pytest.importorskip("pypdf")
pytest.importorskip("reportlab")
pytest.importorskip("matplotlib")

from costmodel.measurements.calibration import Calibration
from costmodel.memo import build_memo
from costmodel.memo.blocks import Figure
from costmodel.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[1]
TODAY = dt.date(2026, 12, 1)


def text_of(pdf: bytes) -> str:
    return re.sub(r"\s+", " ", "\n".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(pdf)).pages))


def chat_data() -> dict:
    return load_scenario(ROOT / "examples" / "chat-assistant.yaml").model_dump()


def test_calibration_provenance_names_the_probe_and_its_held_out_error():
    calibration = Calibration(
        hardware_id="h100-sxm", device_name="NVIDIA H100 80GB HBM3", eff_compute=0.61, eff_memory=0.78,
        overhead_seconds_per_step=0.00035, holdout_median_abs_error=0.043, holdout_max_abs_error=0.118,
        points_fit=24, points_holdout=8, source="probe-h100-2026-11-20.json",
        created=dt.datetime(2026, 11, 20, 9, 30, tzinfo=dt.UTC),
    )
    memo = build_memo(load_scenario(ROOT / "examples" / "chat-assistant.yaml"), calibration=calibration, today=TODAY)
    text = text_of(memo.pdf)
    assert "calibrated from probe probe-h100-2026-11-20.json on NVIDIA H100 80GB HBM3 (h100-sxm)" in text
    assert "eff_compute 0.61, eff_memory 0.78, overhead 0.35 ms/step, fitted on 24 points" in text
    assert "Held-out error on 8 points: median 4.3%, max 11.8%" in text
    assert "Uncalibrated efficiencies" not in text


def test_api_only_scenario_has_no_self_host_charts_and_no_flip():
    data = chat_data()
    data["options"] = [o for o in data["options"] if o["kind"] == "api"]
    memo = build_memo(parse_scenario(data), today=TODAY)
    keys = {b.key for b in memo.content.blocks if isinstance(b, Figure)}
    # No tornado either: claude-haiku-4.5 is the only API left that likely meets the SLO (published p90 band);
    # deepinfra's latency is unverified and gpt-4.1-mini retires 2027-01-14 inside the 12-month horizon, so the
    # recommendation has no eligible alternative, its advantage is unbounded at every end of every bar, and the
    # memo says so in a sentence instead of drawing zero-width bars.
    decision = memo.content.decision
    assert decision.recommendation == "claude-haiku-4.5"
    assert decision.option("llama-3.3-70b-deepinfra").slo_status == "unverified"
    assert decision.option("gpt-4.1-mini").excluded_reason
    assert keys == {"volume", "traffic", "months"}  # cost by month: APIs have a horizon too
    text = text_of(memo.pdf)
    assert "so there is no tornado to draw" in text
    assert "moves its $/month advantage by a dollar a month" in text  # not "the largest swing is gpu price ($0)"
    assert "largest swing" not in text
    assert "No self-hosted option can meet the SLO here" in text
    # API costs are all proportional to volume, so their order never changes with it.
    assert "The decision does not flip anywhere from" in text
    assert memo.pages >= 3


def test_nothing_meets_the_slo_says_no_option_is_feasible():
    # Issue 13: an option that misses the SLO is infeasible; with none left the memo recommends nothing.
    data = chat_data()
    data["slo"] = {"ttft_p90_seconds": 0.001, "tpot_p90_seconds": 0.001}  # 1 ms: no GPU, no API
    for option in data["options"]:
        if option["kind"] == "api":
            option["ttft_p90_seconds"], option["tpot_p90_seconds"] = 0.4, 0.02
    memo = build_memo(parse_scenario(data), today=TODAY)
    decision = memo.content.decision
    assert decision.recommendation is None and not decision.recommendation_meets_slo
    assert all(o.excluded_kind for o in decision.options)
    text = text_of(memo.pdf)
    assert "No option is feasible." in text and "misses the SLO" in text
    # Self-host figures with no load meeting the SLO are each request alone, and the cell says so (review D6).
    assert "(no load meets it; alone" in text
    assert text.count("No option is feasible") == 1  # the bold lead, not repeated by the sentence after it
    # Every option's latency here is given (measured) or simulated, and the page says exactly that.
    assert {o.latency_source for o in decision.options} == {"measured", "simulated"}
    assert "every option's verdict is measured or simulated; nothing is owed" in text
    assert "Recommendation:" not in text and memo.pages >= 2
