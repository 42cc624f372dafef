"""Issue 13's decision rules: quality floor, retirement, tri-state API latency, nothing feasible.

Dates are passed in (as_of), never read from the clock. Figures come from the bundled sheets, cited there:
quality scores from costmodel/catalog/quality.csv (LMArena text snapshot 2026-07-30: llama-3.1-8b 1211,
llama-3.1-70b 1293), retirement dates and latency rows from pricing_data/.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from costmodel.cli import main
from costmodel.decision.feasibility import add_months
from costmodel.decision.latency import published_latency
from costmodel.decision.rank import decide
from costmodel.errors import CostmodelError
from costmodel.pricing.latency import load_api_latency
from costmodel.scenario import parse_scenario

AS_OF = "2026-12-01"


def scenario(*options: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": "feasibility", "as_of": AS_OF,
        "workload": {"requests_per_day": 100_000, "prompt_tokens": {"kind": "fixed", "tokens": 1000},
                     "output_tokens": {"kind": "fixed", "tokens": 200}, "peak_to_mean_ratio": 2.0},
        "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
        "options": list(options), **extra,
    }


def api(name: str, price_id: str, *, measured: bool = True) -> dict[str, Any]:
    latency = {"ttft_p90_seconds": 0.4, "tpot_p90_seconds": 0.02} if measured else {}
    return {"kind": "api", "name": name, "price_id": price_id, **latency}


def host(name: str, model: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "self-host", "name": name, "model": model, "hardware": "h100-sxm", "usd_per_gpu_hour": 2.0,
            **extra}


def run_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path, data: dict[str, Any], *flags: str
            ) -> tuple[int, str, str]:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    code = main(["compare", str(path), *flags])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_add_months_clamps_to_the_month_end():
    assert add_months(dt.date(2026, 12, 1), months=12) == dt.date(2027, 12, 1)
    assert add_months(dt.date(2027, 1, 31), months=1) == dt.date(2027, 2, 28)


def test_a_retired_cheapest_option_is_shown_with_its_date_but_never_recommended():
    # together/llama-3.1-8b retired 2026-03-06 (pricing_data/api_prices.csv deprecation_date); it is the
    # cheapest 8B API on the sheet, deepinfra/llama-3.1-8b is live.
    decision = decide(parse_scenario(scenario(api("retired", "together/llama-3.1-8b"),
                                              api("live", "deepinfra/llama-3.3-70b"))))
    retired = decision.option("retired")
    assert retired.excluded_kind == "retired" and "2026-03-06" in (retired.excluded_reason or "")
    assert retired.retires_on == dt.date(2026, 3, 6)
    assert decision.recommendation == "live"
    assert retired.usd_per_month < decision.option("live").usd_per_month  # cheapest, yet not chosen


def test_retirement_within_the_horizon_excludes_and_within_90_days_warns():
    # openai/gpt-4.1-mini retires 2027-01-14: 44 days after 2026-12-01, inside a 12-month horizon.
    data = scenario(api("mini", "openai/gpt-4.1-mini"), api("live", "deepinfra/llama-3.3-70b"))
    decision = decide(parse_scenario(data))
    assert decision.option("mini").excluded_kind == "retired"
    assert any("Retiring soon: mini" in w and "44 days" in w for w in decision.warnings)
    data["as_of"], data["horizon_months"] = "2026-11-01", 2  # horizon ends 2027-01-01, before 2027-01-14
    decision = decide(parse_scenario(data))
    assert decision.option("mini").excluded_reason is None
    assert any("Retiring soon: mini" in w and "74 days" in w for w in decision.warnings)


def test_an_8b_under_a_70b_floor_is_excluded_and_used_for_no_break_even(tmp_path, capsys):
    data = scenario(api("api-70b", "deepinfra/llama-3.3-70b"), host("h100-8b", "llama-3.1-8b"),
                    quality={"at_least_as_good_as": "llama-3.1-70b"})
    decision = decide(parse_scenario(data))
    small = decision.option("h100-8b")
    assert small.excluded_kind == "below_quality_floor"
    assert small.quality_score == 1211 and "1211 < 1293" in (small.excluded_reason or "")
    assert decision.recommendation == "api-70b"
    assert decision.quality_floor is not None and decision.quality_floor.min_score == 1293
    assert [o.name for o in decision.usable_options] == ["api-70b"]
    assert not any("break even" in r for r in decision.reasons)
    code, out, _ = run_cli(capsys, tmp_path, data, "--json")
    body = json.loads(out)
    assert code == 0 and body["quality_floor"]["min_score"] == 1293 and body["quality_floor"]["benchmark"] == "lmarena-text"
    by_name = {o["name"]: o for o in body["options"]}
    assert by_name["h100-8b"]["quality_score"] == 1211 and by_name["h100-8b"]["excluded_reason"]
    # deepinfra/llama-3.3-70b inherits llama-3.3-70b's 1318 (open_model_id in the price sheet).
    assert by_name["api-70b"]["quality_score"] == 1318


def test_no_floor_says_the_options_are_treated_as_substitutes(tmp_path, capsys):
    code, out, _ = run_cli(capsys, tmp_path, scenario(api("a", "deepinfra/llama-3.3-70b")))
    assert code == 0 and "treated as substitutes" in out
    code, out, _ = run_cli(capsys, tmp_path, scenario(api("a", "deepinfra/llama-3.3-70b")), "--json")
    assert json.loads(out)["quality_floor"] is None


@pytest.mark.parametrize(("quality", "field", "detail"), [
    ({"at_least_as_good_as": "llama-9-900b"}, "quality.at_least_as_good_as", "llama-9-900b"),
    ({"min_score": 1200, "benchmark": "no-such-bench"}, "no-such-bench", "known: lmarena-text"),
])
def test_bad_quality_floors_exit_2_naming_the_field(tmp_path, capsys, quality, field, detail):
    # qwen2.5-7b has no lmarena-text score (the CSV header lists the gap), so its option is named.
    data = scenario(api("a", "deepinfra/llama-3.3-70b"), host("qwen-small", "qwen2.5-7b"), quality=quality)
    code, out, err = run_cli(capsys, tmp_path, data)
    assert code == 2 and out == "" and field in err and detail in err, err


def test_contradictory_substitute_groups_exit_2(tmp_path, capsys):
    data = scenario(api("a", "deepinfra/llama-3.3-70b"), host("b", "llama-3.1-8b"),
                    substitutes=[["a", "b"], ["b"]])
    code, _, err = run_cli(capsys, tmp_path, data)
    assert code == 2 and "substitutes" in err and "contradictory" in err, err
    data["substitutes"] = [["a", "nope"]]
    code, _, err = run_cli(capsys, tmp_path, data)
    assert code == 2 and "substitutes[0]" in err and "'nope'" in err, err


def test_an_unmeasured_api_under_a_150ms_ttft_limit_is_unverified_not_green():
    # deepinfra/llama-3.3-70b has no row in pricing_data/api_latency.csv and no measurement: unverified.
    data = scenario(api("unmeasured", "deepinfra/llama-3.3-70b", measured=False), host("h100", "llama-3.1-8b"))
    data["slo"]["ttft_p90_seconds"] = 0.150
    decision = decide(parse_scenario(data))
    unmeasured = decision.option("unmeasured")
    assert unmeasured.slo_status == "unverified" and unmeasured.latency_source == "none"
    assert unmeasured.meets_slo is False
    contract = unmeasured.contract()
    assert contract["meets_slo"] == (contract["slo_status"] == "meets")
    if decision.option("h100").meets_slo:  # an option with evidence is recommended even when dearer
        assert decision.recommendation == "h100"
    data["accept_unverified_latency"] = True
    accepted = decide(parse_scenario(data))
    cheapest = min(accepted.usable_options, key=lambda o: o.usd_per_month)
    assert accepted.options[0].name == cheapest.name == accepted.recommendation


def test_a_1ms_ttft_limit_never_leaves_an_api_green():
    data = scenario(api("unmeasured", "deepinfra/llama-3.3-70b", measured=False))
    data["slo"]["ttft_p90_seconds"] = 0.001
    decision = decide(parse_scenario(data))
    assert decision.recommendation_meets_slo is False and decision.recommendation is None
    # No API in the latency sheet publishes a TTFT near 1 ms, so an unpublished one misses, saying why.
    fastest = min(r.ttft_seconds for r in load_api_latency().rows if r.ttft_seconds is not None)
    assert fastest > 0.001
    unmeasured = decision.option("unmeasured")
    assert unmeasured.slo_status == "misses" and unmeasured.excluded_kind == "misses_slo"
    assert "fastest figure any API in the latency sheet publishes" in unmeasured.slo_reason


def test_an_option_without_a_score_is_below_a_floor_saying_why(tmp_path, capsys):
    # qwen2.5-7b has no lmarena-text score (the CSV header lists the gap): it cannot be shown to meet the floor.
    data = scenario(api("a", "deepinfra/llama-3.3-70b"), host("qwen-small", "qwen2.5-7b"),
                    quality={"min_score": 1200, "benchmark": "lmarena-text"})
    code, out, _ = run_cli(capsys, tmp_path, data, "--json")
    small = {o["name"]: o for o in json.loads(out)["options"]}["qwen-small"]
    assert code == 0 and small["excluded_kind"] == "below_quality_floor"
    assert "no published lmarena-text score" in small["excluded_reason"]


def test_published_latency_interpolates_by_prompt_length_and_misses():
    # groq/llama-3.1-8b: p50 TTFT 0.045 s at 500 prompt tokens (kickllm.com) and 0.157 s at 700 (krabarena.org);
    # at 600 tokens, halfway: 0.045 + (0.157 - 0.045) / 2 = 0.101 s.
    rows = load_api_latency().for_price_id("groq/llama-3.1-8b")
    found = published_latency(rows, prompt_tokens=600)
    assert found is not None and found.ttft_seconds == pytest.approx(0.101)
    assert "interpolated between prompt lengths 500 and 700" in found.how
    nearest = published_latency(rows, prompt_tokens=5000)
    assert nearest is not None and nearest.ttft_seconds == pytest.approx(0.157) and "nearest" in nearest.how
    data = scenario(api("groq", "groq/llama-3.1-8b", measured=False))
    data["workload"]["prompt_tokens"] = {"kind": "fixed", "tokens": 600}
    data["slo"]["ttft_p90_seconds"] = 0.08  # the published median alone exceeds it, so the p90 does too
    verdict = decide(parse_scenario(data)).option("groq")
    assert verdict.slo_status == "misses" and verdict.latency_source == "published"
    assert "published, not your traffic" in verdict.slo_reason
    data["slo"]["ttft_p90_seconds"] = 1.0  # a median within the limit does not bound the p90
    verdict = decide(parse_scenario(data)).option("groq")
    assert verdict.slo_status == "unverified" and verdict.latency_source == "published"


def test_nothing_feasible_gives_a_null_recommendation_and_exit_0(tmp_path, capsys):
    data = scenario(api("retired", "together/llama-3.1-8b"), host("h100-8b", "llama-3.1-8b"),
                    quality={"at_least_as_good_as": "llama-3.1-70b"})
    decision = decide(parse_scenario(data))
    assert decision.recommendation is None and decision.recommendation_meets_slo is False
    assert "No option is feasible" in decision.reasons[0] and "retired" in decision.reasons[0]
    with pytest.raises(CostmodelError, match="nothing to recommend"):
        decision.chosen()
    code, out, _ = run_cli(capsys, tmp_path, data, "--json")
    body = json.loads(out)
    assert code == 0 and body["recommendation"] is None and "No option is feasible" in body["reasons"][0]
