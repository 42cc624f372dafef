"""`costmodel prices list|refresh`: show the price sheets (with their age) and update them."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any

from costmodel.cli.output import emit, parse_date
from costmodel.pricing.refresh import (
    DEFAULT_TIMEOUT_SECONDS,
    MAX_REMOVED_SHARE,
    MAX_TIMEOUT_SECONDS,
    check_timeout_seconds,
    refresh_sheet,
)
from costmodel.pricing.schema import ApiPriceRow, GpuPriceRow
from costmodel.pricing.sheets import load_sheet


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `prices list` and `prices refresh`."""
    prices = subparsers.add_parser("prices", help="API and GPU-hour price sheets")
    psub = prices.add_subparsers(dest="prices_command", required=True)

    plist = psub.add_parser("list", help="list a price sheet's rows and how old it is")
    plist.add_argument("--sheet", choices=("api", "gpu"), default="api")
    plist.add_argument("--file", type=Path, help="sheet file (default: the bundled one)")
    plist.add_argument("--provider", help="only rows of this provider, e.g. openai or lambda")
    plist.add_argument("--date", type=parse_date, default=None,
                       help="as-of date YYYY-MM-DD for ages and retirements (default today)")
    plist.add_argument("--json", action="store_true", help="print one JSON object")
    plist.set_defaults(handler=run_list)

    refresh = psub.add_parser(
        "refresh",
        help="download a newer sheet (default for api: LiteLLM's price JSON), validate it, replace the file",
    )
    refresh.add_argument("--sheet", choices=("api", "gpu"), default="api")
    refresh.add_argument("--url", help="CSV in the sheet's format, or (api) LiteLLM's JSON; required for gpu")
    refresh.add_argument("--file", type=Path, help="sheet file to replace (default: the bundled one)")
    refresh.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS,
                         help=f"seconds for the whole download, at most {MAX_TIMEOUT_SECONDS:g} "
                              f"(default {DEFAULT_TIMEOUT_SECONDS:g})")
    refresh.add_argument("--allow-removals", action="store_true",
                         help=f"accept a download that drops more than {MAX_REMOVED_SHARE * 100:.0f}%% of the sheet's rows")
    refresh.add_argument("--allow-zero-prices", action="store_true",
                         help="accept an API sheet whose every input and output price is 0 (refused by default)")
    refresh.add_argument("--json", action="store_true", help="print one JSON object")
    refresh.set_defaults(handler=run_refresh)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _api_line(row: ApiPriceRow, *, as_of: dt.date) -> str:
    parts = [f"{row.id:<34} in {_fmt(row.input_usd_per_mtok):>6}  cached {_fmt(row.cache_read_usd_per_mtok):>6}"
             f"  out {_fmt(row.output_usd_per_mtok):>6}  $/Mtok"]
    if row.has_batch:
        parts.append(f"batch {_fmt(row.batch_input_usd_per_mtok)}/{_fmt(row.batch_output_usd_per_mtok)}")
    if row.long_context_threshold_tokens:
        parts.append(f"> {row.long_context_threshold_tokens:,} tok: {_fmt(row.long_context_input_usd_per_mtok)}"
                     f"/{_fmt(row.long_context_output_usd_per_mtok)}")
    if row.open_model_id:
        parts.append(f"[{row.open_model_id}]")
    if row.requests_per_minute is not None or row.tokens_per_minute is not None:
        parts.append(f"limits {_fmt_int(row.requests_per_minute)} req/min, {_fmt_int(row.tokens_per_minute)} tok/min"
                     f" ({row.rate_limit_tier or 'tier not stated'})")
    if row.is_retired(today=as_of):
        parts.append(f"RETIRED {row.deprecation_date}")
    if row.disagreement:
        parts.append("sources disagree")
    parts.append(_age(row, as_of=as_of))
    return "  ".join(parts)


def _fmt_int(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _age(row: ApiPriceRow | GpuPriceRow, *, as_of: dt.date) -> str:
    """'price 2025-01-01 (700 d)': the price's own date and age; 'checked' when the sheet has no price date."""
    label = "price" if row.price_as_of else "checked"
    return f"{label} {row.price_date.isoformat()} ({(as_of - row.price_date).days} d)"


def _gpu_line(row: GpuPriceRow, *, as_of: dt.date) -> str:
    line = f"{row.id:<34} {row.offering:<9} {row.all_in_usd_per_gpu_hour():>7.3f} $/GPU-h"
    if row.offering == "owned":
        line += f"  (capex ${row.capex_usd_per_gpu:,.0f} over {row.life_years:g} y + power + colocation)"
    return line + (f"  {row.commitment}" if row.commitment else "") + f"  {_age(row, as_of=as_of)}"


def run_list(args: argparse.Namespace) -> int:
    """Print the sheet's rows and its age."""
    sheet = load_sheet(args.sheet, args.file)
    rows = [r for r in sheet.rows if args.provider is None or r.provider == args.provider]
    as_of = args.date or dt.date.today()
    header = f"{sheet.where}: {len(rows)} of {len(sheet.rows)} rows, {sheet.age_text(today=as_of)} (as of {as_of})"
    lines = [_api_line(r, as_of=as_of) if isinstance(r, ApiPriceRow) else _gpu_line(r, as_of=as_of) for r in rows]
    payload: dict[str, Any] = {
        "sheet": args.sheet,
        "path": sheet.where,
        "checked_oldest": sheet.checked_oldest.isoformat(),
        "as_of": as_of.isoformat(),
        "age_days": sheet.age_days(today=as_of),  # from the oldest price date (price_as_of, else checked)
        "price_date_oldest": sheet.price_date_oldest.isoformat(),
        "rows": [r.model_dump(mode="json") for r in rows],
    }
    emit(payload, as_json=args.json, text="\n".join([header, *lines]))
    return 0


def run_refresh(args: argparse.Namespace) -> int:
    """Refresh a sheet and print what changed."""
    timeout_seconds = check_timeout_seconds(args.timeout, name="--timeout")
    result = refresh_sheet(args.sheet, path=args.file, url=args.url, timeout_seconds=timeout_seconds,
                           allow_removals=args.allow_removals, allow_zero_prices=args.allow_zero_prices)
    payload = dataclasses.asdict(result)
    payload["checked"] = result.checked.isoformat()
    lines = [
        f"refreshed {result.path} from {result.url}: {result.rows_before} -> {result.rows_after} rows",
        f"added ({len(result.added)}): {', '.join(result.added) or '-'}",
        f"removed ({len(result.removed)}): {', '.join(result.removed) or '-'}",
        f"changed ({len(result.changed)}):",
        *(f"  {change.id}: {', '.join(change.fields)}" for change in result.changed),
    ]
    emit(payload, as_json=args.json, text="\n".join(lines))
    return 0
