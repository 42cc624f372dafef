"""Price ages count from the price's own date (price_as_of), falling back to the import (checked)."""

from __future__ import annotations

import datetime as dt

from costmodel.decision.options import gpu_price
from costmodel.pricing import load_gpu_prices
from costmodel.scenario.options import SelfHostOption

AS_OF = dt.date(2026, 12, 1)


def _option(offering: str) -> SelfHostOption:
    return SelfHostOption(name="x", model="llama-3.1-8b", hardware=offering.split("/")[1], offering=offering)


def test_capacity_block_price_dated_2025_01_01_is_699_days_old_not_2() -> None:
    # AWS EC2 Capacity Blocks pricing page: "prices updated 2025-01-01"; the sheet was imported 2026-11-29.
    usd, source = gpu_price(_option("aws/h100-sxm/capacity-block"), load_gpu_prices(), today=AS_OF)
    assert usd == 4.916  # 39.33 USD/h per 8-GPU p5.48xlarge block / 8
    assert source.price_as_of == "2025-01-01" and source.checked == "2026-11-29"
    assert source.age_days == (AS_OF - dt.date(2025, 1, 1)).days == 699


def test_undated_price_falls_back_to_the_check_date() -> None:
    _, source = gpu_price(_option("aws/h100-sxm/on-demand"), load_gpu_prices(), today=AS_OF)
    assert source.price_as_of is None and source.age_days == (AS_OF - dt.date(2026, 11, 29)).days == 2


def test_prices_list_prints_price_dates_and_rate_limit_tiers(capsys) -> None:  # type: ignore[no-untyped-def]
    import json

    from costmodel.cli import main

    assert main(["prices", "list", "--sheet", "gpu", "--provider", "aws", "--date", "2026-12-01"]) == 0
    out = capsys.readouterr().out
    assert "aws/h100-sxm/capacity-block" in out and "price 2025-01-01 (699 d)" in out
    assert "checked 2026-11-29 (2 d)" in out  # the SkyPilot rows carry no price date
    assert main(["prices", "list", "--provider", "google", "--date", "2026-12-01"]) == 0
    out = capsys.readouterr().out
    assert "limits 4,000 req/min, 4,000,000 tok/min (tier 1 (paid))" in out
    assert main(["prices", "list", "--sheet", "gpu", "--date", "2026-12-01", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["price_date_oldest"] == "2022-10-12" and listing["age_days"] == (AS_OF - dt.date(2022, 10, 12)).days
    assert listing["checked_oldest"] == "2026-11-29"  # kept key
