"""Build pricing_data/api_prices.csv from LiteLLM's price JSON, cross-checked against genai-prices.

Rerunnable:  .venv/bin/python scripts/import_api_prices.py [--litellm-wheel W] [--genai-prices-wheel W]
Without wheel paths it runs `pip download --no-deps litellm genai-prices` into a temporary folder
(nothing is installed into the venv). LiteLLM ships model_prices_and_context_window_backup.json inside
its wheel; genai-prices ships its data as Python (genai_prices/data.py), which is imported from the
unpacked wheel without running the package __init__ (that needs httpx).

Primary source per row: LiteLLM (batch prices, long-context tiers, rate limits, context sizes). Rows
LiteLLM lacks take genai-prices as primary. `disagreement` lists fields where the two differ.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import subprocess
import sys
import tempfile
import types
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from costmodel.fileio import atomic_write_text
from costmodel.pricing.litellm import disagreement_text, litellm_price_fields
from costmodel.pricing.schema import ApiPriceRow
from costmodel.pricing.sheets import default_sheet_path, sheet_to_csv_text
from scripts.api_price_rows import ROW_SPECS, RowSpec

LITELLM_JSON = "litellm/model_prices_and_context_window_backup.json"


def _download_wheel(package: str, folder: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", package, "-d",
         str(folder)],
        check=True,
    )
    name = package.replace("-", "_")
    return next(p for p in folder.glob("*.whl") if p.name.lower().startswith(name.lower() + "-"))


def _wheel_version(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def read_litellm(wheel: Path) -> dict[str, Any]:
    """The price JSON inside the LiteLLM wheel."""
    with zipfile.ZipFile(wheel) as archive:
        data: dict[str, Any] = json.loads(archive.read(LITELLM_JSON))
    return data


def read_genai_providers(wheel: Path, unpack_to: Path) -> list[Any]:
    """genai_prices.data.providers, imported from the unpacked wheel without its __init__."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpack_to)
    package = types.ModuleType("genai_prices")
    package.__path__ = [str(unpack_to / "genai_prices")]
    sys.modules["genai_prices"] = package
    from genai_prices.data import providers  # type: ignore[import-not-found]

    return list(providers)


def _decimal_fields(value: Any) -> tuple[float | None, int | None, float | None]:
    """(base USD/Mtok, tier start tokens, tier USD/Mtok) of a genai-prices Decimal or TieredPrices."""
    if value is None:
        return None, None, None
    if hasattr(value, "tiers"):
        tier = value.tiers[0] if value.tiers else None
        return float(value.base), (tier.start if tier else None), (float(tier.price) if tier else None)
    return float(value), None, None


def _standard_price(model: Any, day: dt.date, context: dict[str, str] | None = None) -> Any:
    """The price in force for most of `day` (time-of-day discounts such as DeepSeek's off-peak
    hours lose to the rate that applies the other 16 hours)."""
    prices = [model.get_prices(dt.datetime(day.year, day.month, day.day, hour, 45, tzinfo=dt.UTC), context)
              for hour in range(24)]
    counts = collections.Counter(repr(p) for p in prices)
    winner = counts.most_common(1)[0][0]
    return next(p for p in prices if repr(p) == winner)


def genai_fields(providers: list[Any], key: tuple[str, str], day: dt.date) -> dict[str, Any] | None:
    """Sheet fields from one genai-prices model, or None when the provider/model id is absent."""
    provider = next((p for p in providers if p.id == key[0]), None)
    model = next((m for m in provider.models if m.id == key[1]), None) if provider else None
    if model is None:
        return None
    price = _standard_price(model, day)
    inp, start, inp_tier = _decimal_fields(getattr(price, "input_mtok", None))
    out, _, out_tier = _decimal_fields(getattr(price, "output_mtok", None))
    read, _, read_tier = _decimal_fields(getattr(price, "cache_read_mtok", None))
    write, _, write_tier = _decimal_fields(getattr(price, "cache_write_mtok", None))
    fields: dict[str, Any] = {
        "input_usd_per_mtok": inp, "output_usd_per_mtok": out,
        "cache_read_usd_per_mtok": read, "cache_write_usd_per_mtok": write,
        "max_input_tokens": model.context_window,
    }
    if start is not None:
        fields.update(long_context_threshold_tokens=start, long_context_input_usd_per_mtok=inp_tier,
                      long_context_output_usd_per_mtok=out_tier if out_tier is not None else out,
                      long_context_cache_read_usd_per_mtok=read_tier, long_context_cache_write_usd_per_mtok=write_tier)
    batch = _standard_price(model, day, {"processing": "batch"}) if model.price_variants else None
    if batch is not None and repr(batch) != repr(price):
        fields["batch_input_usd_per_mtok"] = _decimal_fields(getattr(batch, "input_mtok", None))[0]
        fields["batch_output_usd_per_mtok"] = _decimal_fields(getattr(batch, "output_mtok", None))[0]
    return fields


def build_row(spec: RowSpec, litellm: dict[str, Any], providers: list[Any], *, versions: dict[str, str],
              day: dt.date) -> ApiPriceRow:
    """One sheet row from the two sources (LiteLLM primary when it has the key)."""
    provider = spec.row_id.split("/")[0]
    entry = litellm.get(spec.litellm_key) if spec.litellm_key else None
    crosscheck = genai_fields(providers, spec.genai_key, day) if spec.genai_key else None
    if spec.genai_key and crosscheck is None:
        raise SystemExit(f"{spec.row_id}: genai-prices has no {spec.genai_key}; fix scripts/api_price_rows.py")
    if entry is not None:
        primary, source, key = litellm_price_fields(entry), "litellm", spec.litellm_key
        model_name = key.split("/", 1)[1] if key.startswith(f"{entry['litellm_provider']}/") else key
        names = ("litellm", "genai-prices")
    elif spec.litellm_key:
        raise SystemExit(f"{spec.row_id}: LiteLLM has no key '{spec.litellm_key}'; fix scripts/api_price_rows.py")
    elif crosscheck is not None:
        primary, source, key, crosscheck = crosscheck, "genai-prices", "/".join(spec.genai_key), None
        model_name = spec.genai_key[1]
        names = ("genai-prices", "")
    else:
        raise SystemExit(f"{spec.row_id}: give a LiteLLM key or a genai-prices key")
    row: dict[str, Any] = {k: v for k, v in primary.items() if v is not None}
    row.update(
        id=spec.row_id, provider=provider, model=model_name, open_model_id=spec.open_model_id,
        source=source, source_version=versions[source], source_key=key, checked=day, notes=spec.notes,
    )
    if crosscheck is not None:
        row.update(
            crosscheck_source=f"{versions['genai-prices']} ({'/'.join(spec.genai_key or ())})",
            crosscheck_input_usd_per_mtok=crosscheck["input_usd_per_mtok"],
            crosscheck_cache_read_usd_per_mtok=crosscheck["cache_read_usd_per_mtok"],
            crosscheck_cache_write_usd_per_mtok=crosscheck["cache_write_usd_per_mtok"],
            crosscheck_output_usd_per_mtok=crosscheck["output_usd_per_mtok"],
            crosscheck_long_context_threshold_tokens=crosscheck.get("long_context_threshold_tokens"),
            disagreement=disagreement_text(primary, crosscheck, names=names),
        )
    return ApiPriceRow.model_validate(row)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--litellm-wheel", type=Path, help="litellm-*.whl (default: pip download the latest)")
    parser.add_argument("--genai-prices-wheel", type=Path, help="genai_prices-*.whl (default: pip download)")
    parser.add_argument("--out", type=Path, default=default_sheet_path("api"))
    parser.add_argument("--date", type=dt.date.fromisoformat, default=dt.date.today(), help="the `checked` date")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        litellm_wheel = args.litellm_wheel or _download_wheel("litellm", tmp)
        genai_wheel = args.genai_prices_wheel or _download_wheel("genai-prices", tmp)
        versions = {
            "litellm": f"litellm=={_wheel_version(litellm_wheel)} ({LITELLM_JSON})",
            "genai-prices": f"genai-prices=={_wheel_version(genai_wheel)}",
        }
        litellm = read_litellm(litellm_wheel)
        providers = read_genai_providers(genai_wheel, tmp / "genai")
        rows = [build_row(spec, litellm, providers, versions=versions, day=args.date) for spec in ROW_SPECS]
    atomic_write_text(args.out, sheet_to_csv_text(rows, kind="api"))
    disagreeing = [r for r in rows if r.disagreement]
    retired = [r.id for r in rows if r.is_retired(today=args.date)]
    print(f"wrote {len(rows)} rows from {len({r.provider for r in rows})} providers to {args.out}")
    print(f"{len(disagreeing)} rows where LiteLLM and genai-prices disagree; retired by {args.date}: {retired}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
