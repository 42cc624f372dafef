"""The decision's second number says why no self-hosted option competes from typed fields (review D7): a
self-host option out on the quality floor is named as such, not as missing the SLO."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from costmodel.decision.rank import decide
from costmodel.decision.results import exclusion_label
from costmodel.memo.text import why_no_self_host
from costmodel.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[1]


def test_a_floor_only_an_api_passes_names_the_floor() -> None:
    data = load_scenario(ROOT / "examples" / "chat-assistant.yaml").model_dump()
    data["quality"] = {"at_least_as_good_as": "openai/gpt-4.1-mini"}  # only claude-haiku-4.5 passes it
    decision = decide(parse_scenario(data), today=dt.date(2026, 12, 2))
    self_host = [o for o in decision.options if o.kind == "self-host"]
    assert self_host and all(o.excluded_kind == "below_quality_floor" for o in self_host)
    assert any(o.slo_status == "likely_meets" for o in self_host)  # so "misses the SLO" would be false
    text = why_no_self_host(decision)
    assert "misses the SLO" not in text and text.endswith(": " + exclusion_label("below_quality_floor"))
    assert all(o.name in text for o in self_host)


def test_each_reason_is_the_option_s_own() -> None:
    data = load_scenario(ROOT / "examples" / "chat-assistant.yaml").model_dump()
    data["slo"]["ttft_p90_seconds"] = 0.05  # under the 70B's simulated p90 TTFT: it misses; the 8B is below the floor
    decision = decide(parse_scenario(data), today=dt.date(2026, 12, 2))
    text = why_no_self_host(decision)
    for option in (o for o in decision.options if o.kind == "self-host"):
        assert f"{option.name}: {exclusion_label(option.excluded_kind)}" in text
