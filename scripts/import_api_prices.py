"""Build pricing_data/api_prices.csv from LiteLLM's price JSON, cross-checked against genai-prices.

Rerunnable:  .venv/bin/python scripts/import_api_prices.py [--litellm-wheel W] [--genai-prices-wheel W]
Without wheel paths it runs `pip download --no-deps litellm genai-prices` into a temporary folder
(nothing is installed into the venv). LiteLLM ships model_prices_and_context_window_backup.json inside
its wheel; genai-prices ships its data as Python (genai_prices/data.py), which is imported from the
unpacked wheel without running the package __init__ (that needs httpx).

Cross-check policy (also in docs/economics.md, "Sources of the price data"):
- Primary source per row: LiteLLM (batch prices, long-context tiers, context sizes, deprecation dates).
  Rows LiteLLM lacks take genai-prices as primary.
- Every price is compared with the other source(s); a difference of more than 5% of the larger value
  (costmodel.pricing.litellm.DISAGREEMENT_TOLERANCE) is flagged in the `disagreement` column, and the
  option's notes repeat it. Smaller differences (rounding, 0.27 vs 0.28) are not flagged.
- The provider's own pricing page wins where the sheet records it (RowSpec.price_page, transcribed by
  hand with its URL and date): source 'provider-page', and each source that differs by more than 5% is
  listed in `disagreement`.
- Otherwise a disagreement keeps LiteLLM, except where RowSpec.prefer_genai_prices names a third public
  page that agrees with genai-prices (notes say which); LiteLLM's values then go in the cross-check columns.
- Rate limits are not taken from LiteLLM (its rpm/tpm carry no account tier); RowSpec.rate_limits gives a
  paid-tier limit with its page, or the row has none. Retirements LiteLLM lacks come from RowSpec.retirement.
- `price_as_of` is on every row: the price's own date where known (RowSpec.price_as_of or the page's date,
  `price_as_of_basis` 'page'), else the import date, the day the LiteLLM / genai-prices snapshot ('snapshot')
  or an undated page ('read') was read; `checked` is the import date.
- Every retirement date names its source (`deprecation_source`): RowSpec.retirement's page, else LiteLLM's
  `deprecation_date` field of the row's key.
- RowSpec.discounts: a provider page's published batch / cached-input discounts (Fireworks, Groq), applied as
  fractions of the standard rates where the sources give no such rate; `discount_source` cites the page.
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


def _page_fields(spec: RowSpec) -> dict[str, Any]:
    assert spec.price_page is not None
    return {"input_usd_per_mtok": spec.price_page.input_usd_per_mtok,
            "output_usd_per_mtok": spec.price_page.output_usd_per_mtok}


def _page_version(page: Any) -> str:
    return f"{page.url}, transcribed by hand" + (f" ({page.note})" if page.note else "")


def _apply_policy(row: dict[str, Any], spec: RowSpec, sources: dict[str, dict[str, Any]],
                  versions: dict[str, str]) -> None:
    """The cross-check policy of the module docstring, applied to a row built from its primary source."""
    if spec.price_page is not None:
        page = spec.price_page
        page_fields = _page_fields(spec)
        label = "provider-page" if page.own else "manual"
        row.update(page_fields, source=label, source_url=page.url, price_as_of=page.as_of,
                   source_version=_page_version(page))
        diffs = [disagreement_text(page_fields, {k: other.get(k) for k in page_fields}, names=(label, name))
                 for name, other in sources.items()]
        row["disagreement"] = "; ".join(d for d in diffs if d) or None
    elif spec.crosscheck_page is not None and not row.get("crosscheck_source"):
        page = spec.crosscheck_page
        page_fields = {"input_usd_per_mtok": page.input_usd_per_mtok, "output_usd_per_mtok": page.output_usd_per_mtok}
        row.update(crosscheck_source=_page_version(page), crosscheck_input_usd_per_mtok=page.input_usd_per_mtok,
                   crosscheck_output_usd_per_mtok=page.output_usd_per_mtok,
                   disagreement=disagreement_text({k: row[k] for k in page_fields}, page_fields,
                                                  names=(row["source"], "page")))
    elif spec.prefer_genai_prices and "litellm" in sources and "genai-prices" in sources:
        litellm, genai = sources["litellm"], sources["genai-prices"]
        row.update({k: v for k, v in genai.items() if v is not None and k.endswith("_usd_per_mtok")})
        row.update(source="genai-prices", source_version=versions["genai-prices"],
                   source_key="/".join(spec.genai_key or ()), crosscheck_source=versions["litellm"],
                   crosscheck_input_usd_per_mtok=litellm["input_usd_per_mtok"],
                   crosscheck_cache_read_usd_per_mtok=litellm["cache_read_usd_per_mtok"],
                   crosscheck_cache_write_usd_per_mtok=litellm["cache_write_usd_per_mtok"],
                   crosscheck_output_usd_per_mtok=litellm["output_usd_per_mtok"],
                   crosscheck_long_context_threshold_tokens=litellm.get("long_context_threshold_tokens"),
                   disagreement=disagreement_text(genai, litellm, names=("genai-prices", "litellm")))
    if spec.rate_limits is not None:
        limits = spec.rate_limits
        row.update(requests_per_minute=limits.requests_per_minute, tokens_per_minute=limits.tokens_per_minute,
                   rate_limit_tier=limits.tier, rate_limit_source=limits.source)
    if spec.retirement is not None:
        row.update(deprecation_date=spec.retirement.date, deprecation_source=spec.retirement.source)
    elif row.get("deprecation_date") is not None and row.get("deprecation_source") is None:
        # the date comes with the primary entry: LiteLLM's deprecation_date whenever the row has a LiteLLM key
        origin = (f"{versions['litellm']}, deprecation_date of {spec.litellm_key}" if spec.litellm_key
                  else f"{versions['genai-prices']}, {'/'.join(spec.genai_key or ())}")
        row["deprecation_source"] = origin
    if spec.discounts is not None:
        _apply_discounts(row, spec.discounts)
    if spec.price_as_of is not None:
        row["price_as_of"] = spec.price_as_of


def _apply_discounts(row: dict[str, Any], discounts: Any) -> None:
    """Fill the cached-input and batch rates a provider page publishes as fractions, where the row lacks them."""
    filled = []
    if discounts.cache_read_fraction is not None and row.get("cache_read_usd_per_mtok") is None:
        row["cache_read_usd_per_mtok"] = round(row["input_usd_per_mtok"] * discounts.cache_read_fraction, 6)
        filled.append("cached input")
    if discounts.batch_fraction is not None and row.get("batch_input_usd_per_mtok") is None:
        row["batch_input_usd_per_mtok"] = round(row["input_usd_per_mtok"] * discounts.batch_fraction, 6)
        row["batch_output_usd_per_mtok"] = round(row["output_usd_per_mtok"] * discounts.batch_fraction, 6)
        filled.append("batch")
    if filled:
        row["discount_source"] = f"{discounts.url}: {discounts.note} ({' and '.join(filled)} derived here)"


def _date_the_price(row: dict[str, Any], *, day: dt.date) -> None:
    """price_as_of on every row: the page's own date ('page'), else the import day, which is when the package
    snapshot ('snapshot') or the undated page ('read') was read."""
    if row.get("price_as_of") is not None:
        row["price_as_of_basis"] = "page"
        return
    row["price_as_of"] = day
    row["price_as_of_basis"] = "snapshot" if row["source"] in ("litellm", "genai-prices") else "read"


def build_row(spec: RowSpec, litellm: dict[str, Any], providers: list[Any], *, versions: dict[str, str],
              day: dt.date) -> ApiPriceRow:
    """One sheet row from the sources (LiteLLM primary when it has the key), then the cross-check policy."""
    provider = spec.row_id.split("/")[0]
    entry = litellm.get(spec.litellm_key) if spec.litellm_key else None
    crosscheck = genai_fields(providers, spec.genai_key, day) if spec.genai_key else None
    if spec.genai_key and crosscheck is None:
        raise SystemExit(f"{spec.row_id}: genai-prices has no {spec.genai_key}; fix scripts/api_price_rows.py")
    if entry is not None:
        primary, source, key = litellm_price_fields(entry, key=spec.litellm_key), "litellm", spec.litellm_key
        model_name = key.split("/", 1)[1] if key.startswith(f"{entry['litellm_provider']}/") else key
        names = ("litellm", "genai-prices")
    elif spec.litellm_key:
        raise SystemExit(f"{spec.row_id}: LiteLLM has no key '{spec.litellm_key}'; fix scripts/api_price_rows.py")
    elif crosscheck is not None:
        primary, source, key, crosscheck = crosscheck, "genai-prices", "/".join(spec.genai_key), None
        model_name = spec.genai_key[1]
        names = ("genai-prices", "")
    elif spec.price_page is not None:
        model_name = (spec.price_page.note or spec.row_id.split("/")[1]).split(",")[0]  # the note starts with it
        primary, source, key, names = _page_fields(spec), "provider-page", model_name, ("provider-page", "")
    else:
        raise SystemExit(f"{spec.row_id}: give a LiteLLM key, a genai-prices key or a price page")
    row: dict[str, Any] = {k: v for k, v in primary.items() if v is not None}
    row.update(
        id=spec.row_id, provider=provider, model=model_name, open_model_id=spec.open_model_id,
        source=source, source_version=versions.get(source, "set by the price page"), source_key=key, checked=day,
        notes=spec.notes,
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
    sources = {name: fields for name, fields in (("litellm", primary if source == "litellm" else None),
                                                  ("genai-prices", crosscheck if source == "litellm" else
                                                   (primary if source == "genai-prices" else None)))
               if fields is not None}
    _apply_policy(row, spec, sources, versions)
    _date_the_price(row, day=day)
    return ApiPriceRow.model_validate(row)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--litellm-wheel", type=Path, help="litellm-*.whl (default: pip download the latest)")
    parser.add_argument("--genai-prices-wheel", type=Path, help="genai_prices-*.whl (default: pip download)")
    parser.add_argument("--out", type=Path, default=default_sheet_path("api"))
    parser.add_argument("--date", type=dt.date.fromisoformat, default=dt.date.today(),
                        help="the `checked` date (import date; price ages count from price_as_of where known)")
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
