"""AppTest: every field of the scenario format survives the app, and the app says what the CLI says.

Each bundled example and two generated scenarios that between them set every optional section (quality floor
both ways, substitutes, horizon, as-of date, accept_unverified_latency, fleet policy, memo context, search
limits, autoscale and mixed scaling with their parameters, engines, headroom and N+1, ops per GPU, owned host
fields, inline measurements on an API and a self-host option, optional SLO limits, every distribution kind)
is uploaded on the Scenario page, the page is re-run, every other page visited, and the downloaded YAML must
parse to an equal scenario. The Overview's recommendation and cost and the Compare table's $/month and
replicas must equal `costmodel compare --json` on the same file (run in-process through the CLI's main).

A scenario that names a measurement file by path is refused on upload and in a link: the server never reads
(or reveals whether it has) a file of its own.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest

from app.page_list import PAGES
from app.scenario_io import EXAMPLES_DIR, example_names, parse_text, scenario_yaml_bytes
from app.state import encode_token
from costmodel.cli import main
from costmodel.scenario import parse_scenario
from tests.test_calibration_attach import endpoint_cal, probe_result

MAIN = str(Path(__file__).resolve().parents[1] / "app" / "main.py")
# Every page, visited between the upload and the download (Search runs nothing until asked; Memo builds on request).
VISITED = tuple(f"views/{p.file.split('/')[-1]}" for p in PAGES if not p.file.endswith("scenario.py"))


def every_section() -> dict[str, Any]:
    """Small 8B workloads (fast to simulate) with every optional section and option field set."""
    return {
        "name": "every section", "description": "generated: all optional fields", "as_of": "2026-12-01",
        "horizon_months": 18, "owner": "platform lead", "goals": ["p90 TTFT under 1 s"],
        "non_goals": ["fine-tuning"], "constraints": ["prompts stay in the EU"],
        "workload": {
            "tokens_per_month": 2.0e9, "prompt_tokens": {"kind": "uniform", "low_tokens": 200, "high_tokens": 600},
            "output_tokens": {"kind": "empirical", "tokens": [50, 120, 300], "weights": [0.5, 0.3, 0.2]},
            "cached_prompt_fraction": 0.2, "cache_write_prompt_fraction": 0.1, "growth_per_month": 0.03,
            "hourly_traffic_weights": [1, 1, 1, 1, 1, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 5, 4, 3, 3, 2, 2, 1, 1, 1],
        },
        "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05, "ttft_p99_seconds": 2.5,
                "tpot_p50_seconds": 0.03, "e2e_p90_seconds": 20.0},
        "fleet": {"target_peak_utilization": 0.9, "min_replicas": 1, "spare_replicas": 1},
        "options": [
            {"kind": "api", "name": "fw-8b", "price_id": "fireworks/llama-3.1-8b", "use_batch_api": False,
             "requests_per_minute_limit": 6000, "tokens_per_minute_limit": 2_000_000,
             "ttft_p90_seconds": 0.4, "tpot_p90_seconds": 0.01},
            {"kind": "api", "name": "fw-8b-measured", "price_id": "fireworks/llama-3.1-8b",
             "calibration": probe_result().model_dump_json()},
            {"kind": "self-host", "name": "h100-auto", "model": "llama-3.1-8b", "hardware": "h100-sxm",
             "gpus_per_replica": 2, "offering": "lambda/h100-sxm/on-demand", "engine": "vllm",
             "ops_usd_per_month": 1000, "ops_usd_per_gpu_month": 100, "target_peak_utilization": 0.7,
             "min_replicas": 2,
             "scaling": {"mode": "autoscale", "min_replicas": 1, "max_replicas": 6, "warmup_minutes": 10},
             "speculation": {"method": "eagle", "draft_tokens": 2, "acceptance_rates": [0.8, 0.6]},
             "disaggregated": {"prefill_gpus": 1, "decode_gpus": 1, "prefill_instances": 1, "decode_instances": 1,
                               "kv_link": "intra-node"}},
            {"kind": "self-host", "name": "h100-mixed", "model": "llama-3.1-8b", "hardware": "h100-sxm",
             "offering": "semianalysis/h100-sxm/reserved", "engine": "sglang", "weight_dtype": "fp8",
             "max_num_seqs": 128, "max_batched_tokens": 4096, "scheduler_steps": 2, "gpu_memory_utilization": 0.85,
             "spare_replicas": 2,
             "scaling": {"mode": "mixed", "warmup_minutes": 10, "base_replicas": 1, "spot_share": 0.25,
                         "interruption_rate_per_hour": 0.05, "burst_offering": "lambda/h100-sxm/on-demand",
                         "spot_offering": "aws/h100-sxm/spot"}},
            {"kind": "self-host", "name": "owned-measured", "model": "llama-3.1-8b", "hardware": "h100-sxm",
             "offering": "owned/h100-sxm/owned", "host_capex_usd_per_gpu": 5000, "host_power_kw_per_gpu": 0.3,
             "calibration": [endpoint_cal().model_dump_json()]},
            {"kind": "hybrid", "name": "auto+fw", "self_host": "h100-auto", "api": "fw-8b"},
        ],
        "quality": {"at_least_as_good_as": "llama-3.1-8b", "benchmark": "lmarena-text"},
        "substitutes": [["fw-8b", "fw-8b-measured", "h100-auto", "auto+fw"], ["h100-mixed", "owned-measured"]],
        "accept_unverified_latency": True,
        "search": {"models": ["llama-3.1-8b"], "hardware": ["h100-sxm"], "engines": ["vllm"],
                   "ops_usd_per_month": 100.0, "ops_usd_per_gpu_month": 50.0, "warmup_minutes": 30.0},
    }


def batch_floor() -> dict[str, Any]:
    """A batch workload with a min_score floor, a fixed fleet on an own price, peak-to-mean traffic."""
    return {
        "name": "batch floor", "as_of": "2027-03-01", "horizon_months": 6,
        "workload": {"requests_per_day": 50_000, "prompt_tokens": {"kind": "fixed", "tokens": 800},
                     "output_tokens": {"kind": "lognormal", "mean_tokens": 150, "sigma": 0.6},
                     "peak_to_mean_ratio": 1.5, "batch_allowed": True},
        "slo": {"ttft_p90_seconds": 30.0, "tpot_p90_seconds": 0.2, "e2e_p99_seconds": 120.0},
        "options": [
            {"kind": "api", "name": "fw-8b", "price_id": "fireworks/llama-3.1-8b"},
            {"kind": "self-host", "name": "l40s-own-price", "model": "llama-3.1-8b", "hardware": "l40s",
             "usd_per_gpu_hour": 0.9, "kv_dtype": "fp8", "engine": "trtllm",
             "scaling": {"mode": "fixed"}},
        ],
        "quality": {"min_score": 1100, "benchmark": "lmarena-text"},
    }


CASES = {**{name: yaml.safe_load((EXAMPLES_DIR / name).read_text()) for name in example_names()},
         "every-section.yaml": every_section(), "batch-floor.yaml": batch_floor()}


def _cli(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["compare", str(path), "--json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


def _money(text: str) -> float:
    return float(re.sub(r"[^0-9.]", "", text.split("/")[0]))


@pytest.mark.parametrize("name", list(CASES))
def test_every_field_survives_and_the_app_says_what_the_cli_says(name: str, tmp_path: Path, capsys) -> None:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(CASES[name], sort_keys=False))
    expected = parse_scenario(CASES[name], where=name)

    at = AppTest.from_file(MAIN, default_timeout=240).run()
    at.switch_page("views/scenario.py").run()
    at.file_uploader(key="load_upload").upload(name, path.read_bytes(), "application/x-yaml").run()
    assert not at.exception
    assert at.session_state["scenario"] == expected
    at.run()  # a second run of the page, its widgets now seeded: still the same scenario
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["scenario"] == expected
    for page in VISITED:
        at.switch_page(page).run()
        assert not at.exception, page
    at.switch_page("views/scenario.py").run()
    assert at.session_state["scenario"] == expected
    saved = next(b for b in at.get("download_button") if b.proto.label == "Download YAML")
    assert saved is not None
    assert parse_text(scenario_yaml_bytes(at.session_state["scenario"]).decode(), filename="x.yaml") == expected

    contract = _cli(path, capsys)
    at.switch_page("views/overview.py").run()
    assert not at.exception
    recommendation = contract["recommendation"]
    if recommendation is None:
        assert any("No recommendation" in e.value for e in at.error)
    else:
        assert f"Recommendation: **{recommendation}**" in (at.success[0].value if at.success else at.error[0].value)
        chosen = next(o for o in contract["options"] if o["name"] == recommendation)
        cost = next(m for m in at.metric if m.label == "Cost")
        assert _money(cost.value) == pytest.approx(round(chosen["usd_per_month"]), abs=0.5)
    at.switch_page("views/compare.py").run()
    assert not at.exception
    table = at.dataframe(key="cmp_table").value if any(d.key == "cmp_table" for d in at.dataframe) \
        else at.dataframe[0].value
    by_name = {o["name"]: o for o in contract["options"]}
    assert sorted(table["option"]) == sorted(by_name)
    for row in table.to_dict("records"):
        option = by_name[row["option"]]
        assert row["$/month"] == pytest.approx(option["usd_per_month"], rel=1e-9), row["option"]
        assert row["replicas"] == f"{option['replicas']:,}", row["option"]


def _with_path(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "cal.json").write_text(endpoint_cal().model_dump_json())
    data = every_section()
    data["options"][4]["calibration"] = [str(tmp_path / "cal.json")]
    return data


def test_an_upload_naming_a_file_by_path_is_refused(tmp_path: Path) -> None:
    at = AppTest.from_file(MAIN, default_timeout=120).run()
    at.switch_page("views/scenario.py").run()
    before = at.session_state["scenario"]
    content = yaml.safe_dump(_with_path(tmp_path)).encode()
    at.file_uploader(key="load_upload").upload("paths.yaml", content, "application/x-yaml").run()
    assert not at.exception
    assert any("by path" in e.value and "owned-measured" in e.value for e in at.error)
    assert at.session_state["scenario"] == before


def test_a_link_naming_a_file_by_path_is_refused(tmp_path: Path) -> None:
    token = encode_token(parse_scenario(_with_path(tmp_path)))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params["s"] = token
    at.run()
    assert not at.exception
    assert any("Shared link" in e.value and "by path" in e.value for e in at.error)
    assert at.session_state["scenario"].name == "chat-assistant"  # the default example instead


def _stripped() -> dict[str, Any]:
    """every_section() without what the tables do not show: the editors below must put it all back."""
    data = every_section()
    for field in ("horizon_months", "owner", "goals", "non_goals", "constraints", "fleet", "quality", "substitutes",
                  "accept_unverified_latency", "search"):
        data.pop(field)
    for option in data["options"]:
        for field in (*OPTION_FIELDS, "scaling", "calibration", "speculation", "disaggregated"):
            option.pop(field, None)
        if option["kind"] == "self-host":
            option["gpus_per_replica"] = 1  # the disaggregated layout's editor sets it back from the layout
    return data


# A self-host option's fields the details editor sets (beyond scaling, speculation, disaggregation, measurements).
OPTION_FIELDS = ("engine", "target_peak_utilization", "min_replicas", "spare_replicas", "ops_usd_per_gpu_month",
                 "host_capex_usd_per_gpu", "host_power_kw_per_gpu", "max_num_seqs", "max_batched_tokens",
                 "scheduler_steps", "gpu_memory_utilization")
FIRST = ("scaling.mode", "speculation.method", "disaggregated")  # widgets that show the others


def _set(at: AppTest, values: dict[str, Any]) -> None:
    for key, value in values.items():
        widget = next(w for w in at.main if getattr(w, "key", None) == key)
        widget.set_value(value)
    at.run()
    assert not at.exception


def _details(at: AppTest, name: str, values: dict[str, Any]) -> None:
    at.selectbox(key="sc_detail_option").set_value(name).run()
    if values:
        _set(at, {f"sc_opt_{name}_{k}": v for k, v in values.items() if k in FIRST})
        _set(at, {f"sc_opt_{name}_{k}": v for k, v in values.items() if k not in FIRST})
        at.button(key="sc_opt_apply").click().run()
        assert not at.exception
        assert not at.error, [e.value for e in at.error]


def test_every_optional_field_can_be_set_in_the_app(tmp_path: Path) -> None:
    at = AppTest.from_file(MAIN, default_timeout=240).run()
    at.switch_page("views/scenario.py").run()
    at.file_uploader(key="load_upload").upload("s.yaml", yaml.safe_dump(_stripped()).encode(), "application/x-yaml")
    at.run()
    full = every_section()
    options = {o["name"]: o for o in full["options"]}
    options["owned-measured"]["calibration"] = options["owned-measured"]["calibration"][0]  # one file: no list
    for name in ("h100-auto", "h100-mixed", "owned-measured"):
        fields = {k: v for k, v in options[name].items() if k in OPTION_FIELDS}
        fields |= {f"scaling.{k}": v for k, v in options[name].get("scaling", {}).items()}
        speculation = options[name].get("speculation")
        if speculation:
            fields |= {"speculation.method": speculation["method"], "speculation.draft_tokens":
                       speculation["draft_tokens"], "speculation.acceptance_rates":
                       ", ".join(str(a) for a in speculation["acceptance_rates"])}
        layout = options[name].get("disaggregated")
        if layout:
            fields |= {"disaggregated": True} | {f"disaggregated.{k}": v for k, v in layout.items()}
        _details(at, name, fields)
    for name, file_name in (("fw-8b-measured", "probe.json"), ("owned-measured", "cal.json")):
        at.selectbox(key="sc_detail_option").set_value(name).run()
        text = options[name]["calibration"]
        at.file_uploader(key=f"sc_opt_upload_{name}").upload(file_name, text.encode(), "application/json").run()
        assert not at.exception and not at.error, [e.value for e in at.error]
    _set(at, {"sc_horizon_months": 18, "sc_fleet_target": 0.9, "sc_fleet_min_replicas": 1, "sc_fleet_spare_replicas": 1,
              "sc_accept_unverified": True, "sc_quality_mode": "at least as good as"})
    _set(at, {"sc_quality_subject": "llama-3.1-8b", "sc_quality_benchmark": "lmarena-text",
              "sc_substitutes": "fw-8b, fw-8b-measured, h100-auto, auto+fw\nh100-mixed, owned-measured",
              "sc_owner": "platform lead", "sc_goals": "p90 TTFT under 1 s", "sc_non_goals": "fine-tuning",
              "sc_constraints": "prompts stay in the EU", "sc_search_models": ["llama-3.1-8b"],
              "sc_search_hardware": ["h100-sxm"], "sc_search_engines": ["vllm"], "sc_search_ops": 100.0,
              "sc_search_ops_gpu": 50.0,
              "sc_search_warmup": 30.0})
    assert not at.error, [e.value for e in at.error]
    got, want = at.session_state["scenario"], parse_scenario(full)
    for mine, theirs in zip(got.options, want.options, strict=True):
        assert mine == theirs, {k: (v, getattr(theirs, k)) for k, v in mine if v != getattr(theirs, k)}
    assert at.session_state["scenario"] == parse_scenario(full)


def test_a_bad_scaling_value_is_shown_beside_the_option_and_not_applied() -> None:
    at, before = _stripped_on_h100_auto()
    _set(at, {"sc_opt_h100-auto_scaling.mode": "autoscale"})
    at.button(key="sc_opt_apply").click().run()  # autoscale without a warm-up
    assert any("h100-auto" in e.value and "warmup_minutes" in e.value for e in at.error)
    assert at.session_state["scenario"] == before
    _set(at, {"sc_horizon_months": 500})
    assert any("horizon_months" in e.value for e in at.error)
    assert at.session_state["scenario"] == before


def test_one_as_of_date_on_the_prices_page_and_in_the_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.views import memo as memo_page

    dates: list[Any] = []

    def fake_memo(scenario, calibration_json, today):  # type: ignore[no-untyped-def]
        dates.append(today)
        return memo_page.MemoFile(pdf=b"%PDF-1.4", pages=1, recommendation=None, blocks=())

    monkeypatch.setattr(memo_page, "_build_in_steps", fake_memo)
    monkeypatch.setattr(memo_page, "can_render_pages", lambda: False)
    at = AppTest.from_file(MAIN, default_timeout=240).run()
    at.switch_page("views/scenario.py").run()
    at.file_uploader(key="load_upload").upload("b.yaml", yaml.safe_dump(batch_floor()).encode(), "application/x-yaml")
    at.run()
    at.switch_page("views/prices.py").run()
    assert not at.exception
    assert any("ages to 2027-03-01" in c.value for c in at.caption)
    at.switch_page("views/memo.py").run()
    assert not at.exception
    at.button(key="memo_build").click().run()
    assert [d.isoformat() for d in dates] == ["2027-03-01"]
    assert any("2027-03-01" in c.value and "as-of date" in c.value for c in at.caption)


def test_cancelling_a_probe_stops_its_child_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's progress callback raises when the user clicks Cancel (Streamlit interrupts the run there):
    the child process is terminated, not left running."""
    import sys

    from app import probe_runner

    pid_file = tmp_path / "pid"
    child = ("import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid()))\n"
             "for i in range(1000):\n    print(f'[probe] {i}/1000 {i * 0.1:.1f}s step', file=sys.stderr, flush=True)"
             "\n    time.sleep(0.1)")
    monkeypatch.setattr(probe_runner, "probe_command",
                        lambda **_: [sys.executable, "-c", child, str(pid_file)])
    procs = _recorded_children(monkeypatch)

    class Cancelled(Exception):
        pass

    def on_progress(step: probe_runner.ProgressStep) -> None:
        if step.done >= 2:
            raise Cancelled

    with pytest.raises(Cancelled):
        probe_runner.run_probe_subprocess(model="m", device="cpu", out=tmp_path / "out.json", on_progress=on_progress)
    assert procs and procs[0].poll() is not None  # terminated, not running on


def test_a_measurement_can_be_pasted_and_a_pasted_path_is_refused() -> None:
    at = AppTest.from_file(MAIN, default_timeout=240).run()
    at.switch_page("views/scenario.py").run()
    at.file_uploader(key="load_upload").upload("s.yaml", yaml.safe_dump(_stripped()).encode(), "application/x-yaml")
    at.run()
    at.selectbox(key="sc_detail_option").set_value("owned-measured").run()
    at.text_area(key="sc_opt_paste_owned-measured").set_value("/etc/passwd")
    at.button(key="sc_opt_paste_button_owned-measured").click().run()
    assert any("never read" in e.value for e in at.error)
    assert at.session_state["scenario"].option("owned-measured").calibration is None
    text = endpoint_cal().model_dump_json()
    at.text_area(key="sc_opt_paste_owned-measured").set_value(text)
    at.button(key="sc_opt_paste_button_owned-measured").click().run()
    assert not at.exception and not at.error
    assert at.session_state["scenario"].option("owned-measured").calibration == text


def test_the_form_comes_back_filled_after_editing_the_date_and_moving_page() -> None:
    import datetime as dt

    at = AppTest.from_file(MAIN, default_timeout=240).run()
    at.switch_page("views/scenario.py").run()
    at.date_input(key="sc_as_of").set_value(dt.date(2027, 12, 1)).run()
    edited = at.session_state["scenario"]
    assert edited.as_of == dt.date(2027, 12, 1)
    for page in ("views/prices.py", "views/memo.py", "views/overview.py"):
        at.switch_page(page).run()
        at.switch_page("views/scenario.py").run()
        assert at.text_input(key="sc_name").value == edited.name
        assert at.number_input(key="sc_requests_per_day").value == edited.workload.requests_per_day
        assert at.date_input(key="sc_as_of").value == dt.date(2027, 12, 1)
        assert at.session_state["scenario"] == edited


def test_a_bad_speculation_value_is_shown_beside_the_option_and_not_applied() -> None:
    at, before = _stripped_on_h100_auto()
    _set(at, {"sc_opt_h100-auto_speculation.method": "eagle"})
    _set(at, {"sc_opt_h100-auto_speculation.acceptance_rates": "0.8, 1.5"})
    at.button(key="sc_opt_apply").click().run()
    assert not at.exception
    assert any("h100-auto" in e.value and "acceptance_rates" in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state["scenario"] == before  # not applied
    # A disaggregated layout sets the replica's GPUs: 2 prefill instances x 2 GPUs + 1 decode instance x 4 = 8.
    _set(at, {"sc_opt_h100-auto_speculation.acceptance_rates": "0.8, 0.6", "sc_opt_h100-auto_disaggregated": True})
    _set(at, {"sc_opt_h100-auto_disaggregated.prefill_instances": 2, "sc_opt_h100-auto_disaggregated.prefill_gpus": 2,
              "sc_opt_h100-auto_disaggregated.decode_gpus": 4})
    at.button(key="sc_opt_apply").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    option = at.session_state["scenario"].option("h100-auto")
    assert option.speculation is not None and option.speculation.acceptance_rates == (0.8, 0.6)
    assert option.disaggregated is not None and option.gpus_per_replica == 8


def test_an_unapplied_edit_survives_a_visit_to_another_page() -> None:
    """An invalid edit (an empty name) is not applied, and is still in the form after another page; so is an edit
    the Scenario page never ran with (the browser sent it with the click that opened another page)."""
    import datetime as dt

    at = AppTest.from_file(MAIN, default_timeout=240).run()
    at.switch_page("views/scenario.py").run()
    before = at.session_state["scenario"]
    at.text_input(key="sc_name").set_value("").run()
    assert any("not applied" in w.value for w in at.warning)
    at.switch_page("views/compare.py").run()
    assert not at.exception
    at.switch_page("views/scenario.py").run()
    assert at.text_input(key="sc_name").value == ""  # the edit is back, still not applied
    assert any("not applied" in w.value for w in at.warning)
    assert at.session_state["scenario"] == before
    assert at.number_input(key="sc_requests_per_day").value == before.workload.requests_per_day
    at.text_input(key="sc_name").set_value("renamed").run()
    assert at.session_state["scenario"].name == "renamed"
    # The date set, then another page opened before the Scenario page ran with it (a slow server: the click on
    # the page link interrupts the run the date change started).
    at.date_input(key="sc_as_of").set_value(dt.date(2027, 12, 1))
    at.switch_page("views/prices.py").run()
    assert not at.exception
    at.switch_page("views/scenario.py").run()
    assert at.date_input(key="sc_as_of").value == dt.date(2027, 12, 1)
    assert at.session_state["scenario"].as_of == dt.date(2027, 12, 1)
    assert at.text_input(key="sc_name").value == "renamed"


def test_cancelling_a_silent_sweep_stops_its_child_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep level can take minutes without a line on stderr: the page's bar is redrawn meanwhile (`on_wait`,
    where Streamlit raises once Cancel is clicked), so the child is terminated then, not at its next level."""
    import sys

    from app import endpoint_runner

    child = ("import sys, time\nprint('probe-endpoint: level 1/3 done: ok', file=sys.stderr, flush=True)\n"
             "time.sleep(600)")
    monkeypatch.setattr(endpoint_runner, "sweep_command", lambda request, out: [sys.executable, "-c", child])
    procs = _recorded_children(monkeypatch)

    class Cancelled(Exception):
        pass

    levels: list[int] = []

    def on_wait() -> None:
        if levels:  # the user clicks Cancel during the silent second level
            raise Cancelled

    request = endpoint_runner.SweepRequest(url="http://127.0.0.1:9/v1", model="m", levels="1,2,4",
                                           mode="concurrency", requests_per_level=1, prompt_tokens=8,
                                           max_tokens=8, timeout_seconds=5.0)
    with pytest.raises(Cancelled):
        endpoint_runner.run_sweep_subprocess(request, out=tmp_path / "sweep.json", api_key=None,
                                             on_level=lambda level: levels.append(level.done), on_wait=on_wait)
    assert levels == [1]
    assert procs and procs[0].poll() is not None  # terminated during its silence, not left sleeping


def test_the_serving_modes_example_can_be_built_in_the_app() -> None:
    """deepseek-r1-modes.yaml without its DEP layouts and its searched modes, uploaded; the option details'
    parallelism and the search limits' modes put them back: the scenario equals the bundled file."""
    full = yaml.safe_load((EXAMPLES_DIR / "deepseek-r1-modes.yaml").read_text())
    stripped = json.loads(json.dumps(full))
    dep = [o["name"] for o in stripped["options"] if o.pop("parallelism", "tp") == "dep"]
    modes = stripped["search"].pop("modes")
    assert dep and modes
    at = AppTest.from_file(MAIN, default_timeout=240).run()
    at.switch_page("views/scenario.py").run()
    at.file_uploader(key="load_upload").upload("r1.yaml", yaml.safe_dump(stripped).encode(), "application/x-yaml")
    at.run()
    assert at.session_state["scenario"] != parse_scenario(full)
    for name in dep:
        _details(at, name, {"parallelism": "dep"})
    _set(at, {"sc_search_modes": modes})
    assert not at.error, [e.value for e in at.error]
    assert at.session_state["scenario"] == parse_scenario(full)


def _recorded_children(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every child process app.child_process starts, in a list the test can check (alive, killed)."""
    from app import child_process

    procs: list[Any] = []
    real_popen = child_process.subprocess.Popen

    def popen(*args: Any, **kwargs: Any) -> Any:
        procs.append(real_popen(*args, **kwargs))
        return procs[-1]

    monkeypatch.setattr(child_process.subprocess, "Popen", popen)
    return procs


def _stripped_on_h100_auto() -> tuple[AppTest, Any]:
    """The app with `_stripped()` (every section less what the tables do not show) uploaded and its h100-auto option
    open, and the scenario as loaded (an edit that is refused must leave it equal)."""
    at = AppTest.from_file(MAIN, default_timeout=240).run()
    at.switch_page("views/scenario.py").run()
    at.file_uploader(key="load_upload").upload("s.yaml", yaml.safe_dump(_stripped()).encode(), "application/x-yaml")
    at.run()
    before = at.session_state["scenario"]
    at.selectbox(key="sc_detail_option").set_value("h100-auto").run()
    return at, before
