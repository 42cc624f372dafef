"""Every price, rate and limit is a finite number >= 0 when loaded, and ranking never sees NaN
(issue 10, section 2, item 1: a CSV with an `inf` output price made that option's $/month NaN, NaN sorted
first and `compare` recommended it at "$nan/month")."""

from __future__ import annotations

import csv
import io

import pytest

from costmodel.decision.rank import Overrides, decide
from costmodel.errors import CostmodelError
from costmodel.pricing import default_sheet_path
from costmodel.pricing.sheets import SheetKind, parse_sheet_text
from costmodel.scenario import parse_scenario

NON_FINITE = ["inf", "-inf", "nan", "NaN", "Infinity", "1e400"]  # 1e400 overflows a float to inf


def _sheet_with(kind: SheetKind, field: str, value: str) -> tuple[str, str]:
    """The bundled sheet's CSV text with `field` of its first row set to `value`, and that row's id."""
    text = default_sheet_path(kind).read_text(encoding="utf-8")
    records = list(csv.DictReader(io.StringIO(text)))
    assert records[0][field] != ""  # the cell we spoil holds a price today
    records[0][field] = value
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue(), records[0]["id"]


@pytest.mark.parametrize("value", NON_FINITE)
@pytest.mark.parametrize("field", ["input_usd_per_mtok", "output_usd_per_mtok", "cache_read_usd_per_mtok"])
def test_api_sheet_refuses_non_finite_prices(field: str, value: str) -> None:
    text, row_id = _sheet_with("api", field, value)
    with pytest.raises(CostmodelError) as err:
        parse_sheet_text(text, kind="api", where="prices.csv")
    message = str(err.value)
    assert f"prices.csv line 2 (id '{row_id}')" in message and f"field '{field}'" in message
    assert "finite" in message and "fix that cell" in message


@pytest.mark.parametrize("value", NON_FINITE)
def test_gpu_sheet_refuses_non_finite_prices(value: str) -> None:
    text, row_id = _sheet_with("gpu", "usd_per_gpu_hour", value)
    with pytest.raises(CostmodelError, match=rf"line 2 \(id '{row_id}'\): field 'usd_per_gpu_hour': .*finite"):
        parse_sheet_text(text, kind="gpu", where="gpu.csv")


def test_negative_price_is_refused() -> None:
    text, _ = _sheet_with("api", "output_usd_per_mtok", "-1")
    with pytest.raises(CostmodelError, match="output_usd_per_mtok.*greater than or equal to 0"):
        parse_sheet_text(text, kind="api", where="prices.csv")


def _scenario(*, usd_per_gpu_hour: object = 2.0, with_self_host: bool = True) -> dict:  # type: ignore[type-arg]
    options: list[dict] = [  # type: ignore[type-arg]
        # fireworks: together/llama-3.1-8b retired 2026-03-06, and a retired row is excluded before its cost (issue 13)
        {"kind": "api", "name": "api", "price_id": "fireworks/llama-3.1-8b", "ttft_p90_seconds": 0.4,
         "tpot_p90_seconds": 0.02},
    ]
    if with_self_host:
        options += [
            {"kind": "self-host", "name": "h100", "model": "llama-3.1-8b", "hardware": "h100-sxm",
             "usd_per_gpu_hour": usd_per_gpu_hour},
            {"kind": "hybrid", "name": "hybrid", "self_host": "h100", "api": "api"},
        ]
    return {
        "name": "finite", "as_of": "2026-12-01",
        "workload": {"requests_per_day": 100_000, "prompt_tokens": {"kind": "fixed", "tokens": 1000},
                     "output_tokens": {"kind": "fixed", "tokens": 200}, "peak_to_mean_ratio": 2.0},
        "slo": {"ttft_p90_seconds": 1.0, "tpot_p90_seconds": 0.05},
        "options": options,
    }


@pytest.mark.parametrize("value", [float("inf"), float("nan"), "inf", "nan"])
def test_scenario_gpu_price_override_must_be_finite(value: object) -> None:
    with pytest.raises(CostmodelError, match="usd_per_gpu_hour"):
        parse_scenario(_scenario(usd_per_gpu_hour=value))


@pytest.mark.parametrize("scale", [float("nan"), float("inf")])
def test_non_finite_cost_is_infeasible_and_never_first(scale: float) -> None:
    # Overrides are unvalidated multipliers (sensitivity analysis): the one way left for a library caller
    # to hand decide a non-finite API price now that the sheets refuse them.
    decision = decide(parse_scenario(_scenario()), overrides=Overrides(api_price=scale), capacity_method="roofline")
    assert decision.recommendation == "h100" and decision.options[0].name == "h100"
    api = decision.option("api")
    assert not api.meets_slo and "not a finite number" in api.slo_reason
    assert [o.name for o in decision.options][-2:] in (["api", "hybrid"], ["hybrid", "api"])  # ranked last
    assert "$nan" not in " ".join(decision.reasons) and "$inf" not in " ".join(decision.reasons)


def test_no_finite_option_is_an_input_error() -> None:
    with pytest.raises(CostmodelError, match="no option has a finite cost"):
        decide(parse_scenario(_scenario(with_self_host=False)), overrides=Overrides(api_price=float("nan")),
               capacity_method="roofline")
