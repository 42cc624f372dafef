"""Scenario -> decision: ranking, SLO verdicts, break-even identity, hybrid, CLI contract and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from costmodel.cli import main
from costmodel.decision.rank import Overrides, decide
from costmodel.errors import CostmodelError
from costmodel.scenario import load_scenario, parse_scenario
from costmodel.units import HOURS_PER_MONTH

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.yaml"))
CONTRACT_KEYS = {"name", "kind", "usd_per_month", "usd_per_mtok", "meets_slo", "ttft_p90_seconds",
                 "tpot_p90_seconds", "gpus", "utilization", "break_even_utilization"}


def scenario_dict(**workload_changes):
    return {
        "name": "test", "as_of": "2026-12-01",
        "workload": {"requests_per_day": 100_000, "prompt_tokens": {"kind": "fixed", "tokens": 1000},
                     "output_tokens": {"kind": "fixed", "tokens": 200}, "peak_to_mean_ratio": 2.0,
                     **workload_changes},
        "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
        "options": [
            # fireworks: together/llama-3.1-8b retired on 2026-03-06 and a retired row is never chosen (issue 13)
            {"kind": "api", "name": "api", "price_id": "fireworks/llama-3.1-8b", "ttft_p90_seconds": 0.4,
             "tpot_p90_seconds": 0.02},
            {"kind": "self-host", "name": "h100", "model": "llama-3.1-8b", "hardware": "h100-sxm",
             "usd_per_gpu_hour": 2.0},
            {"kind": "hybrid", "name": "hybrid", "self_host": "h100", "api": "api"},
        ],
    }


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_examples_decide_and_rank(path):
    decision = decide(load_scenario(path))
    usable = [o for o in decision.options if o.excluded_reason is None]
    # Usable options by cost, then the excluded; the recommendation is the cheapest usable option that meets or
    # likely meets the SLO (decision/recommend.py), whatever cheaper unverified option precedes it.
    assert decision.options[:len(usable)] == tuple(usable)
    assert [o.usd_per_month for o in usable] == sorted(o.usd_per_month for o in usable)
    meeting = [o for o in usable if o.slo_status in ("meets", "likely_meets") and not o.throttled]
    assert decision.recommendation == (meeting[0].name if meeting else None)
    if decision.recommendation is not None:
        premium = decision.option(decision.recommendation).usd_per_month - usable[0].usd_per_month
        assert decision.recommendation_premium_usd_per_month == pytest.approx(premium)
        cheaper = decision.cheaper_unverified
        assert (cheaper is None) == (usable[0].name == decision.recommendation)
        if cheaper is not None:
            assert cheaper.option == usable[0].name and cheaper.saving_usd_per_month == pytest.approx(premium)
            assert "costmodel probe-endpoint" in cheaper.check and "--slo-ttft-p90" in cheaper.check
    for option in decision.options:
        assert option.contract().keys() >= CONTRACT_KEYS
        assert option.price_sources, option.name


def test_break_even_identity_and_hand_sizing():
    decision = decide(parse_scenario(scenario_dict()))
    api = decision.option("api")
    h100 = decision.option("h100")
    assert h100.kind == "self-host" and h100.meets_slo
    # u* = self-host $/M at 100% / API $/M, with $/M at 100% = $2/h x 1 GPU x 1e6 / (3600 s x X tokens/s).
    full = 2.0 * 1 * 1e6 / (3600 * h100.tokens_per_second_per_replica)
    assert h100.break_even_utilization == pytest.approx(full / api.usd_per_mtok)
    # $/month = replicas x 1 GPU x $2 x 730.5 h.
    assert h100.usd_per_month == pytest.approx(h100.replicas * 2.0 * HOURS_PER_MONTH)
    # API: 1000 prompt + 200 output tokens at Together's flat rate; $/M is the same at any volume.
    small = decide(parse_scenario(scenario_dict(requests_per_day=1_000))).option("api")
    assert small.usd_per_mtok == pytest.approx(api.usd_per_mtok)


def test_volume_flips_the_decision():
    low = decide(parse_scenario(scenario_dict(requests_per_day=2_000)))
    high = decide(parse_scenario(scenario_dict(requests_per_day=5_000_000)))
    assert low.recommendation == "api"
    assert high.recommendation in ("h100", "hybrid")
    h100 = high.option("h100")
    assert h100.utilization is not None and h100.utilization > h100.break_even_utilization


def test_hybrid_never_costs_more_than_its_parts():
    for volume in (2_000, 100_000, 2_000_000):
        d = decide(parse_scenario(scenario_dict(requests_per_day=volume)))
        hybrid = d.option("hybrid")
        assert hybrid.usd_per_month <= d.option("api").usd_per_month + 1e-6
        assert hybrid.usd_per_month <= d.option("h100").usd_per_month + 1e-6


def test_infeasible_option_says_why():
    data = scenario_dict(prompt_tokens={"kind": "fixed", "tokens": 30000})
    data["slo"] = {"ttft_p90_seconds": 0.5, "tpot_p90_seconds": 0.05}
    data["options"][1].update(model="llama-3.1-70b", hardware="l40s", gpus_per_replica=4)
    h = decide(parse_scenario(data)).option("h100")
    assert not h.meets_slo and "cannot meet the SLO at any load" in h.slo_reason
    assert "prefill" in h.slo_reason or "fit" in h.slo_reason


def test_unverified_api_latency_is_flagged():
    data = scenario_dict()
    del data["options"][0]["ttft_p90_seconds"]
    # A price row with no published latency, so only the measurement could verify it.
    data["options"][0]["price_id"] = "deepinfra/llama-3.3-70b"
    d = decide(parse_scenario(data))
    # Unverified latency never counts as meeting the SLO (meets_slo == slo_status in {meets, likely_meets}).
    api = d.option("api")
    assert api.slo_reason.startswith("unverified") and api.slo_status == "unverified" and not api.meets_slo
    assert any("Latency is unverified for" in w and "api" in w for w in d.warnings)


def test_slow_api_fails_slo():
    data = scenario_dict()
    data["options"][0]["ttft_p90_seconds"] = 3.0
    api = decide(parse_scenario(data)).option("api")
    assert not api.meets_slo and "TTFT p90 3.00 s > 1.00 s" in api.slo_reason


def test_overrides_move_costs_in_the_right_direction():
    scenario = parse_scenario(scenario_dict())
    base = decide(scenario)
    pricier_gpu = decide(scenario, overrides=Overrides(gpu_price=1.5))
    assert pricier_gpu.option("h100").usd_per_month == pytest.approx(1.5 * base.option("h100").usd_per_month)
    pricier_api = decide(scenario, overrides=Overrides(api_price=2.0))
    assert pricier_api.option("api").usd_per_month == pytest.approx(2 * base.option("api").usd_per_month)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda d: d["workload"].update(requests_per_day=-5), "requests_per_day"),
        (lambda d: d.pop("slo"), "slo: missing"),
    ],
)
def test_bad_scenarios_exit_2_naming_the_field(tmp_path, capsys, change, fragment):
    data = scenario_dict()
    change(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    code = main(["compare", str(path), "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert fragment in captured.err


@pytest.mark.parametrize(
    ("change", "bad", "fragment"),
    [
        (lambda d: d["options"][0].update(price_id="nope/model"), "api", "options[0] ('api').price_id"),
        (lambda d: d["options"][1].update(model="llama-9"), "h100", "options[1] ('h100').model"),
    ],
)
def test_one_unknown_id_excludes_that_option_not_the_comparison(tmp_path, capsys, change, bad, fragment):
    """Issue 10 item 13: one bad option is reported with its field and the rest are compared."""
    data = scenario_dict()
    change(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    code = main(["compare", str(path), "--json"])
    payload = json.loads(capsys.readouterr().out)
    by_name = {o["name"]: o for o in payload["options"]}
    assert code == 0 and fragment in by_name[bad]["excluded_reason"]
    assert by_name["hybrid"]["excluded_reason"] is not None  # it needs the bad option
    assert by_name[payload["recommendation"]]["excluded_reason"] is None
    assert any(fragment in w for w in payload["warnings"])


def test_compare_cli_json_contract(capsys):
    code = main(["compare", str(EXAMPLES[0]), "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {o["name"] for o in payload["options"]} >= {payload["recommendation"]}
    for option in payload["options"]:
        assert option.keys() >= CONTRACT_KEYS
        assert option["kind"] in ("api", "self-host", "hybrid")


def test_compare_cli_table(capsys):
    assert main(["compare", str(EXAMPLES[0])]) == 0
    out = capsys.readouterr().out
    assert "Recommendation:" in out and "Sources:" in out and "days old" in out


def test_missing_file():
    with pytest.raises(CostmodelError, match="not found"):
        load_scenario("does/not/exist.yaml")
