"""AppTest: the Probes page sweeps the loopback fake server run as a batching engine (the real CLI in a child
process), shows progress per level, measured vs fitted latency, held-out errors and the capacity range,
and applies the calibration to a scenario option in one click (inline in the scenario state; the decision
then sizes that option from it, latency_source measured). The API key typed in the password field reaches
the server and nothing else. The collectives probe runs through a stand-in (the real one is
tests/test_collectives.py) and its fit is applied to a TP option."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from fake_openai_server import running_fake_server
from streamlit.testing.v1 import AppTest

from app import endpoint_runner
from costmodel.decision.rank import decide
from costmodel.measurements.collectives_result import AlphaBetaFit, CollectivesResult, OpFit
from costmodel.scenario import Scenario, SelfHostOption

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")
SECRET = "sk-probes-page-secret"


def _probes() -> AppTest:
    at = AppTest.from_file(MAIN, default_timeout=240).run()
    at.switch_page("views/probes.py")
    return at.run()


def test_parse_level_lines() -> None:
    line = "probe-endpoint: level 2/3 done: 2 in flight: 12 ok, 0 failed, TTFT p50 5 ms\n"
    level = endpoint_runner.parse_level_line(line)
    assert level is not None and (level.done, level.total) == (2, 3) and level.fraction == pytest.approx(2 / 3)
    assert level.summary.startswith("2 in flight")
    assert endpoint_runner.parse_level_line("costmodel: error: --url is not an http(s) URL") is None


def test_sweep_calibrate_and_apply_to_the_scenario() -> None:
    at = _probes()
    with running_fake_server() as fake:
        # a batching engine: step = 4 ms + 3 ms per decoding stream, one token per chunk (as in
        # tests/test_endpoint_calibrate.py)
        fake.config.chunk_delay_seconds, fake.config.per_stream_delay_seconds = 0.004, 0.003
        fake.config.first_token_delay_seconds, fake.config.chunks, fake.config.tokens_per_chunk = 0.002, 8, 1
        at.text_input(key="pbe_url").set_value(fake.base_url)
        at.text_input(key="pbe_model").set_value("normal")
        at.text_input(key="pbe_key").set_value(SECRET)
        at.text_input(key="pbe_levels").set_value("1,2,4")
        at.number_input(key="pbe_requests").set_value(12)
        at.number_input(key="pbe_max_tokens").set_value(8)
        at.button(key="pbe_run").click().run()
        authorizations = list(fake.log.authorizations)
    assert not at.exception, at.exception
    assert f"Bearer {SECRET}" in authorizations  # the key was sent to the server...
    sweep_json = at.session_state["pbe_sweep_json"]
    assert SECRET not in sweep_json and '"api_key_sent":true' in sweep_json.replace(" ", "")  # ...and not stored
    assert any("level 3/3" in m.value for m in at.markdown)  # progress per level
    metrics = {m.label: m.value for m in at.metric}
    assert {"Held-out TTFT p50 error", "Held-out TPOT p50 error", "Capacity at the SLO", "10-90% range"} <= set(metrics)
    spec = json.loads(at.get("plotly_chart")[-1].proto.spec)
    assert {"TTFT p50 measured", "TTFT p50 fitted", "TPOT p50 measured", "TPOT p50 fitted"} <= {
        t.get("name") for t in spec["data"]}
    forced = bool(at.checkbox(key="pbe_force")) if any(c.key == "pbe_force" for c in at.checkbox) else False
    if forced:  # a starved host can push the held-out error past the bound: then it is applied marked forced
        at.checkbox(key="pbe_force").check().run()
    scenario = at.session_state["scenario"]
    target = next(o.name for o in scenario.options if isinstance(o, SelfHostOption))
    at.selectbox(key="pbe_target").set_value(target)
    at.button(key="pbe_apply").click().run()
    assert not at.exception
    applied: Scenario = at.session_state["scenario"]
    option = applied.option(target)
    assert isinstance(option, SelfHostOption) and isinstance(option.calibration, str)
    assert json.loads(option.calibration)["kind"] == "endpoint_calibration" and SECRET not in option.calibration
    result = decide(applied).option(target)
    assert result.latency_source == "measured" and result.capacity_method == "measured"
    assert result.calibration_forced == forced


def test_collectives_probe_and_apply_to_a_tp_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fit = OpFit(fit=AlphaBetaFit(latency_seconds=30e-6, bytes_per_second=2e9))
    probe = CollectivesResult(backend="gloo", processes=4, device="cpu", repeats=5, points=[],
                              ops={"all_reduce": fit, "all_gather": fit})
    stand_in = tmp_path / "fake_collectives.py"
    stand_in.write_text("import sys, pathlib\nout = sys.argv[sys.argv.index('--out') + 1]\n"
                        f"pathlib.Path(out).write_text({probe.model_dump_json()!r})\n", encoding="utf-8")
    monkeypatch.setattr(endpoint_runner, "collectives_command",
                        lambda *, processes, out: [sys.executable, str(stand_in), "--out", str(out)])
    at = _probes()
    at.number_input(key="pbc_processes").set_value(4)
    at.button(key="pbc_run").click().run()
    assert not at.exception and not at.error
    fits = at.dataframe[-1].value
    assert list(fits["op"]) == ["all_reduce", "all_gather"] and fits["latency (us)"][0] == pytest.approx(30.0)
    scenario = at.session_state["scenario"]
    tp4 = next(o.name for o in scenario.options if isinstance(o, SelfHostOption) and o.gpus_per_replica == 4)
    at.selectbox(key="pbc_target").set_value(tp4)
    at.button(key="pbc_apply").click().run()
    result = decide(at.session_state["scenario"]).option(tp4)
    assert "TP all-reduce from the collectives probe (4 ranks, gloo)" in (result.efficiency_source or "")


def test_bad_sweep_input_is_an_inline_error() -> None:
    at = _probes()
    at.text_input(key="pbe_url").set_value("ftp://nowhere")
    at.text_input(key="pbe_model").set_value("m")
    at.button(key="pbe_run").click().run()
    assert not at.exception
    assert any("Sweep" in e.value and "Base URL" in e.value for e in at.error)
