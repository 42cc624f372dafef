"""Page 1's latency line is read from each option's `latency_source` / `slo_status` (review D5): with nothing
usable it speaks of every option, and it never says 'measured or simulated' of a published or absent figure."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from costmodel.decision.rank import decide
from costmodel.memo.revisit import latency_owed
from costmodel.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[1]


def chat(**slo: float):  # type: ignore[no-untyped-def]
    data = load_scenario(ROOT / "examples" / "chat-assistant.yaml").model_dump()
    data["slo"].update(slo)
    return decide(parse_scenario(data), today=dt.date(2026, 12, 2))


def test_nothing_feasible_names_the_options_without_measured_latency() -> None:
    decision = chat(ttft_p90_seconds=0.001)  # nothing meets 1 ms: no usable option
    assert decision.recommendation is None and not decision.usable_options
    text = latency_owed(decision)
    assert "nothing is owed" not in text
    for option in decision.options:
        named = option.name in text
        assert named == (option.latency_source in ("none", "published") or option.slo_status == "unverified")
    assert any(o.latency_source == "none" for o in decision.options)  # deepinfra: no figure at all


def test_the_bundled_example_owes_its_unverified_and_published_options() -> None:
    decision = chat()
    text = latency_owed(decision)
    usable = {o.name: o for o in decision.usable_options}
    assert "nothing is owed" not in text
    for name, option in usable.items():
        assert (name in text) == (option.latency_source != "simulated" or option.slo_status == "unverified")
