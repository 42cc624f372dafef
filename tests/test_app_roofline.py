"""AppTest: the Roofline page renders on the defaults, reacts to widgets and shows bad input inline."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from costmodel.estimate import estimate
from costmodel.units import fmt_seconds

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")


def _app() -> AppTest:
    """The Roofline page set to Llama 3.1 8B on one H100, batch 16, 1024 -> 256 tokens."""
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.run()
    at.switch_page("views/roofline.py").run()
    for key, value in (("rf_model", "llama-3.1-8b"), ("rf_hardware", "h100-sxm"), ("rf_weight_dtype", "bf16"),
                       ("rf_kv_dtype", "bf16")):
        at.selectbox(key=key).set_value(value)
    for key, value in (("rf_gpus", 1), ("rf_batch", 16), ("rf_prompt_tokens", 1024), ("rf_output_tokens", 256)):
        at.number_input(key=key).set_value(value)
    return at.run()


def test_defaults_come_from_the_scenarios_first_self_host_option() -> None:
    at = AppTest.from_file(MAIN, default_timeout=60)
    at.run()
    at.switch_page("views/roofline.py").run()
    assert not at.exception
    # chat-assistant.yaml: first self-host option is llama-3.3-70b on h100-sxm, 4 GPUs.
    assert at.selectbox(key="rf_model").value == "llama-3.3-70b"
    assert at.selectbox(key="rf_hardware").value == "h100-sxm"
    assert at.number_input(key="rf_gpus").value == 4


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _figure(at: AppTest, key: str) -> dict:
    chart = next(c for c in at.get("plotly_chart") if c.proto.id and key in c.proto.id)
    return json.loads(chart.proto.spec)


def test_renders_defaults_with_metrics_charts_and_table() -> None:
    at = _app()
    assert not at.exception
    assert [t.value for t in at.title] == ["Roofline"]
    est = estimate("llama-3.1-8b", "h100-sxm", batch=16, prompt_tokens=1024, output_tokens=256)
    assert _metric(at, "TTFT (prefill)") == fmt_seconds(est.ttft_seconds)
    assert _metric(at, "TPOT (decode step)") == fmt_seconds(est.tpot_seconds)
    assert len(at.get("plotly_chart")) == 3
    ops = at.dataframe[0].value
    assert set(ops["phase"]) == {"prefill", "decode"}
    assert len(ops) == len(est.prefill.ops) + len(est.decode.ops)


def test_roofline_chart_places_every_op() -> None:
    at = _app()
    fig = _figure(at, "rf_roofline_chart")
    names = [trace.get("name") for trace in fig["data"]]
    assert "prefill ops" in names and "decode ops" in names
    decode = next(t for t in fig["data"] if t.get("name") == "decode ops")
    assert "mlp" in decode["text"]
    assert fig["layout"]["xaxis"]["type"] == "log"


def _decode_y(fig: dict) -> list[float]:
    trace = next(t for t in fig["data"] if t.get("name") == "decode step (ms)")
    y = trace["y"]
    if isinstance(y, dict):  # plotly 7 base64-encodes numeric arrays
        import numpy as np

        return list(np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"]))
    return list(y)


def test_changing_the_model_changes_the_numbers() -> None:
    at = _app()
    before = _metric(at, "TPOT (decode step)")
    at.selectbox(key="rf_model").set_value("llama-3.1-70b")
    at.number_input(key="rf_gpus").set_value(4)
    at.run()
    assert not at.exception
    est = estimate("llama-3.1-70b", "h100-sxm", gpus=4, batch=16, prompt_tokens=1024, output_tokens=256)
    assert _metric(at, "TPOT (decode step)") == fmt_seconds(est.tpot_seconds) != before


def test_batch_that_does_not_fit_is_flagged() -> None:
    at = _app()
    at.selectbox(key="rf_hardware").set_value("l4")
    at.number_input(key="rf_batch").set_value(512)
    at.number_input(key="rf_prompt_tokens").set_value(8192)
    at.run()
    assert not at.exception
    assert any("does not fit" in e.value or "Batch 512" in e.value for e in at.error)


def test_bad_gpu_count_is_an_inline_error_naming_the_field() -> None:
    at = _app()
    at.number_input(key="rf_gpus").set_value(3)
    at.run()
    assert not at.exception
    assert len(at.error) == 1
    assert "GPUs per replica" in at.error[0].value and "divisor" in at.error[0].value
    assert not at.get("plotly_chart")


def test_step_time_chart_shows_the_batch_sweep_in_ms() -> None:
    from costmodel.charts.roofline import batch_sweep

    at = _app()
    sweep = batch_sweep("llama-3.1-8b", "h100-sxm", batches=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
                        prompt_tokens=1024, output_tokens=256)
    assert _decode_y(_figure(at, "rf_step_chart")) == pytest.approx([p.decode_step_seconds * 1e3 for p in sweep])
