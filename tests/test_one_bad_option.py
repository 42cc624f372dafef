"""One bad option never aborts the whole compare: it is excluded with its reason and the rest are ranked.

Two ways it used to abort: a computed check in decision/fleet.py (the work redone per spot interruption,
(TTFT p90 + output tokens x TPOT p90) / 2, must be finite) ran for every autoscaled option, also off spot
where nothing is redone, and blamed `scaling.interruption_rate_per_hour` on an option that never set it; and
a bad measurement file (inline or a path) on one option exited 2 for the whole scenario.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from costmodel.cli import main
from costmodel.decision import plan, self_host
from costmodel.decision.fleet import autoscaled_day
from costmodel.decision.rank import decide
from costmodel.errors import CostmodelError
from costmodel.scenario import parse_scenario

SPOT_ROW = "aws/h100-sxm/spot"


def scenario(*hosts: dict[str, Any]) -> dict[str, Any]:
    """864,000 requests/day (10/s mean), 32-token prompts, 16-token outputs; one API and the given hosts."""
    return {
        "name": "one-bad", "as_of": "2026-12-01",
        "workload": {"requests_per_day": 864_000, "prompt_tokens": {"kind": "fixed", "tokens": 32},
                     "output_tokens": {"kind": "fixed", "tokens": 16}, "peak_to_mean_ratio": 2.0},
        "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
        "options": [{"kind": "api", "name": "api", "price_id": "fireworks/llama-3.1-8b"}, *hosts],
    }


def host(name: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "self-host", "name": name, "model": "llama-3.1-8b", "hardware": "h100-sxm",
            "offering": "lambda/h100-sxm/on-demand", **fields}


AUTOSCALE = {"mode": "autoscale", "warmup_minutes": 5}


def test_off_spot_nothing_is_redone_whatever_the_latency() -> None:
    day = autoscaled_day(hourly_requests_per_second=[1.0] * 24, capacity_requests_per_second=2.0,
                         target_peak_utilization=1.0, min_replicas=1, max_replicas=10, warmup_minutes=5,
                         interruptions_per_replica_hour=0.0, redo_seconds=math.inf)
    assert day.spot_overhead_replica_hours_per_day == 0.0 and day.serving_replica_hours_per_day == 24


def _unbounded_redo(monkeypatch: pytest.MonkeyPatch) -> None:
    """The redone work an unbounded latency estimate gives (an extreme scenario's TTFT or TPOT p90)."""
    for module in (plan, self_host):  # where the decision's costing looks it up (decision/plan.py, self_host.py)
        monkeypatch.setattr(module, "interrupted_work_seconds", lambda **kwargs: math.inf)


def test_an_autoscaled_option_off_spot_is_priced(monkeypatch: pytest.MonkeyPatch) -> None:
    _unbounded_redo(monkeypatch)
    decision = decide(parse_scenario(scenario(host("auto", scaling=AUTOSCALE))), capacity_method="roofline")
    auto = decision.option("auto")
    assert auto.excluded_reason is None and math.isfinite(auto.usd_per_month) and auto.scaling == "autoscale"


def test_an_unbounded_redo_on_spot_excludes_that_option_only(monkeypatch: pytest.MonkeyPatch) -> None:
    _unbounded_redo(monkeypatch)
    spot = host("spot", offering=SPOT_ROW, scaling={**AUTOSCALE, "interruption_rate_per_hour": 0.05})
    decision = decide(parse_scenario(scenario(spot, host("fixed"))), capacity_method="roofline")
    reason = decision.option("spot").excluded_reason
    assert reason is not None and "work redone per spot interruption" in reason and "inf s" in reason
    assert "interruption_rate_per_hour" not in reason  # the user's field is not blamed for a computed value
    assert decision.recommendation in {"api", "fixed"}
    assert decision.option("fixed").excluded_reason is None


BAD_INLINE = [
    ({"kind": "something"}, "unknown kind 'something'"),
    ({"kind": "endpoint_calibration", "capacity_p10": "fast"}, "capacity_p10"),
]


@pytest.mark.parametrize(("inline", "fragment"), BAD_INLINE)
def test_a_bad_inline_calibration_excludes_that_option_only(tmp_path: Path, capsys, inline: dict[str, Any],
                                                            fragment: str) -> None:
    data = scenario(host("measured", calibration=json.dumps(inline)), host("plain"))
    data["options"].append({"kind": "hybrid", "name": "mix", "self_host": "measured", "api": "api"})
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    code = main(["compare", str(path), "--json", "--date", "2026-12-01"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    by_name = {o["name"]: o for o in payload["options"]}
    assert "option 'measured': calibration:" in by_name["measured"]["excluded_reason"]
    assert fragment in by_name["measured"]["excluded_reason"]
    assert "its part 'measured' is excluded" in by_name["mix"]["excluded_reason"]
    assert by_name["plain"]["excluded_reason"] is None and by_name["api"]["excluded_reason"] is None
    assert payload["recommendation"] in {"api", "plain"}


def test_every_option_with_a_bad_calibration_still_exits_2() -> None:
    data = scenario(host("measured", calibration=json.dumps({"kind": "something"})))
    data["options"][0]["calibration"] = json.dumps({"kind": "something"})
    with pytest.raises(CostmodelError, match="no option of the scenario can be evaluated"):
        decide(parse_scenario(data), capacity_method="roofline")


def test_a_replica_the_roofline_fits_but_the_engine_cannot_is_excluded_not_fatal() -> None:
    # Llama 3.3 70B in fp8 on one 80 GB A100: 70.6 GB of weights. The roofline's fit check counts the whole HBM,
    # the engine's KV rule (SGLang's static memory fraction of 80 GB, less weights and activations)
    # leaves no room for a 9,000-token prompt. That option misses with the simulator's message; the compare
    # still ranks the rest (it used to exit 2, as `compare rag-service --search 3` did).
    data = scenario(host("tight", model="llama-3.3-70b", hardware="a100-80gb", gpus_per_replica=1, engine="sglang",
                         weight_dtype="fp8", kv_dtype="bf16", offering="owned/a100-80gb/owned"))
    data["workload"].update(prompt_tokens={"kind": "lognormal", "mean_tokens": 9000, "sigma": 0.5},
                            output_tokens={"kind": "uniform", "low_tokens": 100, "high_tokens": 400},
                            cached_prompt_fraction=0.6)  # rag-service's workload and SLO
    data["slo"] = {"ttft_p90_seconds": 2.0, "tpot_p90_seconds": 0.06}
    decision = decide(parse_scenario(data), today=dt.date(2026, 12, 1))
    tight = decision.option("tight")
    assert tight.slo_status == "misses" and "no request fits" in (tight.slo_reason or "")
    assert decision.option("api").usd_per_month > 0
