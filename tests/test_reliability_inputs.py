"""Issue 10 (reliability), the scenario and CLI items: no bad input becomes an answer or a traceback.

Each test is a regression test for one defect found by trying the tool as a hostile user would:
non-finite and absurd numbers, over-long requests, unbounded work, one bad option in a scenario, files
that are not what they claim to be. Every check runs through the CLI or the library entry point a user
would call, and asserts exit 2 (or CostmodelError) with a message naming the field.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from costmodel.cli import main
from costmodel.decision.economics import break_even_tokens_per_month, plan_hybrid
from costmodel.decision.rank import decide
from costmodel.scenario import parse_scenario
from costmodel.scenario.model import load_scenario

ROOT = Path(__file__).resolve().parents[1]
CHAT = ROOT / "examples" / "chat-assistant.yaml"
TODAY_ISO = "2026-12-01"


def chat() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CHAT.read_text(encoding="utf-8"))
    return data


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own exit for a bad flag value
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def write(tmp_path: Path, data: dict[str, Any], name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


# --- item 6: non-finite and absurd scenario numbers -> exit 2 naming the field ---------------------------

HOSTILE_FIELDS = [
    (("workload", "requests_per_day"), math.inf, "workload.requests_per_day"),
    (("workload", "requests_per_day"), math.nan, "workload.requests_per_day"),
    (("workload", "requests_per_day"), 1e-320, "workload.requests_per_day"),
    (("workload", "requests_per_day"), 1e300, "workload.requests_per_day"),
    (("workload", "growth_per_month"), 1e308, "workload.growth_per_month"),
    (("workload", "growth_per_month"), math.nan, "workload.growth_per_month"),
    (("slo", "ttft_p90_seconds"), math.inf, "slo.ttft_p90_seconds"),
    (("slo", "tpot_p90_seconds"), 1e-320, "slo.tpot_p90_seconds"),
    (("workload", "prompt_tokens", "mean_tokens"), math.inf, "workload.prompt_tokens.mean_tokens"),
    (("workload", "prompt_tokens", "mean_tokens"), 1e-320, "workload.prompt_tokens.mean_tokens"),
    (("workload", "output_tokens", "mean_tokens"), 1e308, "workload.output_tokens.mean_tokens"),
    (("options", 3, "usd_per_gpu_hour"), math.inf, "options[3].usd_per_gpu_hour"),
    (("options", 3, "usd_per_gpu_hour"), 1e308, "options[3].usd_per_gpu_hour"),
    (("options", 3, "ops_usd_per_month"), math.nan, "options[3].ops_usd_per_month"),
    (("options", 3, "ops_usd_per_month"), 1e308, "options[3].ops_usd_per_month"),
]


@pytest.mark.parametrize(("path", "value", "field"), HOSTILE_FIELDS, ids=lambda v: str(v))
def test_hostile_scenario_numbers_exit_2_naming_the_field(tmp_path, capsys, path, value, field):
    data = chat()
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    # JSON carries nan/inf as NaN/Infinity tokens (Python's json accepts them), YAML as .nan/.inf.
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = cli(capsys, "compare", str(scenario), "--date", TODAY_ISO)
    assert code == 2 and out == ""
    assert field in err, err


def test_hourly_weights_nan_inf_and_tiny_exit_2(tmp_path, capsys):
    for weights in ([math.nan] + [1.0] * 23, [math.inf] + [1.0] * 23, [1e-320] * 24, [1e308] * 24):
        data = chat()
        data["workload"]["hourly_traffic_weights"] = weights
        path = tmp_path / "w.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        code, _, err = cli(capsys, "compare", str(path))
        assert code == 2 and "workload.hourly_traffic_weights" in err, err


def test_empirical_weights_and_peak_ratio_exit_2(tmp_path, capsys):
    data = chat()
    data["workload"]["output_tokens"] = {"kind": "empirical", "tokens": [100, 200], "weights": [math.nan, 1.0]}
    path = tmp_path / "e.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = cli(capsys, "compare", str(path))
    assert code == 2 and "workload.output_tokens" in err
    data = chat()
    del data["workload"]["hourly_traffic_weights"]
    data["workload"]["peak_to_mean_ratio"] = 25.0  # the busiest of 24 hours carries at most 24x the mean
    code, _, err = cli(capsys, "compare", str(write(tmp_path, data)))
    assert code == 2 and "workload.peak_to_mean_ratio" in err and "24" in err


# --- item 6: CLI flags ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("argv", "flag"), [
    (["simulate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "1", "--seed", "-1"], "--seed"),
    (["simulate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "1e-308"], "--rate"),
    (["simulate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "nan"], "--rate"),
    (["simulate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "inf"], "--rate"),
    (["estimate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--prompt-tokens", "99999999999999999999"],
     "--prompt-tokens"),
    (["estimate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--gpus", "100000"], "--gpus"),
    (["simulate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "1", "--slo-ttft-p90", "nan"],
     "--slo-ttft-p90"),
])
def test_bad_flag_values_exit_2_naming_the_flag(capsys, argv, flag):
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == "" and flag in err, err


# --- item 4: context windows -------------------------------------------------------------------------------

def test_estimate_beyond_the_context_window_names_the_limit(capsys):
    code, _, err = cli(capsys, "estimate", "--model", "llama-3.1-8b", "--hardware", "h100-sxm",
                       "--prompt-tokens", "10000000")
    assert code == 2 and "context window of 131,072 tokens" in err  # llama-3.1-8b: max_position_embeddings


def test_api_that_cannot_serve_the_output_length_is_excluded(tmp_path, capsys):
    data = chat()
    # 10M-token outputs: every option's window is far shorter (gpt-4.1-mini's max_output_tokens is 32,768),
    # so nothing is usable. It used to recommend an API; since issue 13 nothing feasible is a null
    # recommendation with the reason stated (exit 0), each option named with its window.
    data["workload"]["output_tokens"] = {"kind": "fixed", "tokens": 10_000_000}
    decision = decide(parse_scenario(data))
    assert decision.recommendation is None and not decision.usable_options
    assert "openai/gpt-4.1-mini's 1,047,576-token input and 32,768-token output window" in decision.reasons[0]
    code, out, _ = cli(capsys, "compare", str(write(tmp_path, data)), "--json")
    body = json.loads(out)
    assert code == 0 and body["recommendation"] is None
    assert all(o["excluded_reason"] for o in body["options"])
    assert any("cannot serve the lengths" in o["excluded_reason"] for o in body["options"])


def test_self_host_context_window_excludes_only_that_option():
    data = chat()
    data["workload"]["prompt_tokens"] = {"kind": "fixed", "tokens": 200_000}  # > 131,072 (llama 3.x)
    data["options"] = [o for o in data["options"] if o["kind"] != "hybrid"]
    data["options"].append({"kind": "api", "name": "flash-lite", "price_id": "google/gemini-2.5-flash-lite"})
    data.pop("quality", None)  # the example's floor would exclude flash-lite (no published score) first
    decision = decide(parse_scenario(data))
    assert decision.option("llama-3.1-8b-l40s").excluded_kind == "cannot_serve_lengths"
    # A 1M-token window serves it; at 200k-token prompts its Tier 1 4M tokens/min throttle it instead (issue 13:
    # throttled is an exclusion of its own kind).
    flash_lite = decision.option("flash-lite")
    # (and its published latency, widened by the sourced p90/p50 spread, misses the 1 s TTFT limit there).
    assert "cannot_serve_lengths" not in flash_lite.excluded_kinds and "throttled" in flash_lite.excluded_kinds
    assert decision.option("llama-3.3-70b-h100-tp4").excluded_kind == "cannot_serve_lengths"
    assert decision.recommendation is None or decision.option(decision.recommendation).excluded_reason is None


# --- item 13: one bad option does not abort compare ---------------------------------------------------------

def test_one_bad_option_is_reported_and_the_rest_compared(tmp_path, capsys):
    data = chat()
    data["options"][4]["gpus_per_replica"] = 3  # llama-3.1-8b has 32 attention heads
    data["options"][1]["price_id"] = "deepinfra/no-such-model"
    code, out, err = cli(capsys, "compare", str(write(tmp_path, data)), "--json", "--date", TODAY_ISO)
    assert code == 0, err
    payload = json.loads(out)
    by_name = {o["name"]: o for o in payload["options"]}
    tp = by_name["llama-3.1-8b-l40s"]["excluded_reason"]
    assert "options[4].gpus_per_replica 3" in tp and "valid sizes for llama-3.1-8b: 1, 2, 4, 8, 16, 32" in tp
    assert "options[1] ('llama-3.3-70b-deepinfra').price_id: unknown API price id" in by_name[
        "llama-3.3-70b-deepinfra"]["excluded_reason"]
    # The hybrid needs the excluded API: excluded too, and nothing excluded is recommended or ranked first.
    assert by_name["llama-70b-base-plus-deepinfra"]["excluded_reason"] is not None
    assert by_name[payload["recommendation"]]["excluded_reason"] is None
    assert payload["options"][0]["excluded_reason"] is None


def test_every_option_bad_exits_2(tmp_path, capsys):
    data = chat()
    data["options"] = [{"kind": "api", "name": "a", "price_id": "nope/nope"},
                       {"kind": "api", "name": "b", "price_id": "nope/other"}]
    code, out, err = cli(capsys, "compare", str(write(tmp_path, data)))
    assert code == 2 and out == "" and "options[0] ('a').price_id" in err and "options[1] ('b').price_id" in err


# --- item 7: unbounded work is bounded ------------------------------------------------------------------------

def _plan_hybrid_by_loop(**kwargs: Any) -> tuple[int, float]:
    """The former planner, one plan per base replica count (the reference the bisection must match)."""
    hourly = kwargs["mean_requests_per_second"] * np.asarray(kwargs["hourly_profile"]) / np.mean(kwargs["hourly_profile"])
    per_month = 3600.0 * 730.5 / 24.0
    best_k, best_usd = 0, math.inf
    for k in range(0, kwargs["max_base_replicas"] + 1):
        served = np.minimum(hourly, k * kwargs["capacity_requests_per_second"])
        overflow = float((hourly - served).sum()) * per_month
        usd = k * kwargs["replica_usd_per_month"] + (kwargs["ops_usd_per_month"] if k else 0.0) \
            + overflow * kwargs["api_usd_per_request"]
        if usd < best_usd - 1e-9:
            best_k, best_usd = k, usd
    return best_k, best_usd


def test_hybrid_planner_bisection_matches_the_exhaustive_loop():
    rng = np.random.default_rng(7)
    for _ in range(300):
        kwargs = {
            "mean_requests_per_second": float(rng.uniform(0.01, 50)),
            "hourly_profile": tuple(float(x) for x in rng.uniform(0.05, 3.0, 24)),
            "capacity_requests_per_second": float(rng.uniform(0.1, 10)),
            "replica_usd_per_month": float(rng.uniform(100, 30_000)),
            "ops_usd_per_month": float(rng.choice([0.0, rng.uniform(0, 20_000)])),
            "api_usd_per_request": float(rng.uniform(1e-5, 5e-2)),
            "max_base_replicas": int(rng.integers(0, 60)),
        }
        plan = plan_hybrid(**kwargs)
        k, usd = _plan_hybrid_by_loop(**kwargs)
        assert plan.base_replicas == k and plan.usd_per_month == pytest.approx(usd, rel=1e-12)


def test_hybrid_planner_at_the_largest_volume_is_logarithmic():
    """1e10 requests/day (the stated maximum) with a tiny replica: ~1e6 base replicas; the planner evaluates
    O(log) plans, so this returns (it used to loop over every count)."""
    plan = plan_hybrid(mean_requests_per_second=1e10 / 86_400, hourly_profile=(1.0,) * 24,
                       capacity_requests_per_second=0.1, replica_usd_per_month=100.0, ops_usd_per_month=0.0,
                       api_usd_per_request=1.0, max_base_replicas=2_000_000)
    assert plan.base_replicas == math.ceil(1e10 / 86_400 / 0.1)


def test_break_even_closed_form_matches_the_step_search():
    # (k R + ops) 1e6 / p <= k V first at k = ceil(ops' / (V - R')): R=1000, ops=9000, p=1 $/M, V=2e9 tokens
    # -> R' = 1e9, ops' = 9e9 tokens, k = ceil(9e9 / 1e9) = 9, crossing = (9 x 1000 + 9000) x 1e6 = 1.8e10.
    volume = break_even_tokens_per_month(replica_usd_per_month=1000.0, ops_usd_per_month=9000.0,
                                         tokens_per_month_per_replica_at_peak=2e9, api_usd_per_mtok=1.0)
    assert volume == pytest.approx(1.8e10)
    # A replica dearer than the volume it adds at API prices never breaks even once past the first step.
    assert break_even_tokens_per_month(replica_usd_per_month=3000.0, ops_usd_per_month=9000.0,
                                       tokens_per_month_per_replica_at_peak=2e9, api_usd_per_mtok=1.0) is None


def test_volume_beyond_the_stated_maximum_is_refused(tmp_path, capsys):
    data = chat()
    data["workload"]["requests_per_day"] = 1e15  # the app once spun for minutes on this
    code, _, err = cli(capsys, "compare", str(write(tmp_path, data)))
    assert code == 2 and "workload.requests_per_day" in err and "less than or equal to 10000000000" in err, err


# --- item 6: files that are not what they claim ------------------------------------------------------------

def test_bad_files_exit_2(tmp_path, capsys):
    bad_utf8 = tmp_path / "bad.yaml"
    bad_utf8.write_bytes(b"name: caf\xe9\n")
    deep_json = tmp_path / "deep.json"
    deep_json.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    deep_yaml = tmp_path / "deep.yaml"
    deep_yaml.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    huge = tmp_path / "huge.yaml"
    huge.write_bytes(b"#" * (9 * 1024 * 1024))
    for path, fragment in ((bad_utf8, "not UTF-8"), (tmp_path, "is a directory"), (deep_json, "nested too deeply"),
                           (deep_yaml, "not valid YAML"), (huge, "larger than 8 MiB")):
        code, out, err = cli(capsys, "compare", str(path))
        assert code == 2 and out == "" and fragment in err, (path, err)


def test_dev_zero_is_refused(capsys):
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero on this system")
    code, _, err = cli(capsys, "compare", "/dev/zero")
    assert code == 2 and "/dev/zero is not a regular file (it is a character device)" in err


def test_scenario_loads_the_same_after_the_bounded_reader(tmp_path):
    assert load_scenario(CHAT) == parse_scenario(chat(), where=str(CHAT))
    copy.deepcopy(chat())  # the example itself stays valid under every new bound
