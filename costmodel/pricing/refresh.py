"""`costmodel prices refresh`: download a newer sheet, validate it, replace the file atomically.

Sources: a CSV in the sheet's own format (any URL), or, for the API sheet, LiteLLM's raw
model_prices_and_context_window.json (the default: this repository's own raw URL is not known, and
LiteLLM is the sheet's primary source). LiteLLM JSON is converted with the keys already in the
sheet's `source_key` column; rows are not added from it (which models the sheet covers is decided
by scripts/import_api_prices.py). The GPU sheet has no machine-readable upstream, so it needs --url.

Any failure (offline, timeout, HTTP error, HTML, oversized, schema-broken, a non-finite price, more than
MAX_REMOVED_SHARE of the rows gone without --allow-removals) raises CostmodelError and leaves the file
byte-for-byte as it was; the message says how old the kept sheet is.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from costmodel.errors import CostmodelError
from costmodel.fileio import write_problem, write_text_or_keep
from costmodel.pricing.download import download
from costmodel.pricing.litellm import LITELLM_RAW_URL, refresh_rows_from_litellm
from costmodel.pricing.schema import ApiPriceRow
from costmodel.pricing.sheets import (
    PriceSheet,
    SheetKind,
    default_sheet_path,
    load_sheet,
    parse_sheet_text,
    sheet_to_csv_text,
)

DEFAULT_TIMEOUT_SECONDS = 20.0
# A refresh is one ~3.5 MB file; ten minutes is more than any working link needs, and bounds a typo (--timeout 1e9).
MAX_TIMEOUT_SECONDS = 600.0
# An upstream refresh retires a few models at a time (10% of a 62-row sheet is 6 rows); a download cut off
# at a row boundary loses most of them and still parses.
MAX_REMOVED_SHARE = 0.10
# LiteLLM's JSON is ~3.5 MB (Nov 2026); 8 MiB leaves room to grow and stops runaway downloads.
MAX_DOWNLOAD_BYTES = 8 * 1024 * 1024
_METADATA_FIELDS = {"checked", "source_version"}  # changes here alone are not reported as price changes


@dataclass(frozen=True)
class RowChange:
    """A row present before and after whose listed fields changed."""

    id: str
    fields: tuple[str, ...]


@dataclass(frozen=True)
class RefreshResult:
    """What a refresh did to a sheet."""

    sheet: SheetKind
    path: str
    url: str
    rows_before: int
    rows_after: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[RowChange, ...]
    checked: dt.date


def check_timeout_seconds(value: float, *, name: str = "timeout_seconds") -> float:
    """`value` when it is a finite number of seconds in (0, MAX_TIMEOUT_SECONDS]; else CostmodelError naming `name`."""
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else float("nan")
    if not (math.isfinite(number) and 0 < number <= MAX_TIMEOUT_SECONDS):
        raise CostmodelError(
            f"{name} must be a number of seconds above 0 and at most {MAX_TIMEOUT_SECONDS:g}, got {value!r}; "
            f"e.g. {name} {DEFAULT_TIMEOUT_SECONDS:g}"
        )
    return float(number)


def _rows_from_download(
    data: bytes, *, kind: SheetKind, current: PriceSheet, url: str, today: dt.date  # type: ignore[type-arg]
) -> list[BaseModel]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CostmodelError(f"{url} is not UTF-8 text; not a price sheet") from None
    head = text.lstrip()[:200].lower()
    if head.startswith("<"):
        raise CostmodelError(f"{url} returned HTML, not a price sheet; use the raw file URL")
    if not head.startswith("{"):
        return list(parse_sheet_text(text, kind=kind, where=url).rows)
    if kind != "api":
        raise CostmodelError(f"{url} is JSON; the GPU sheet needs a CSV like pricing_data/gpu_prices.csv")
    try:
        litellm = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CostmodelError(f"{url}: invalid JSON ({exc})") from None
    except RecursionError:
        raise CostmodelError(f"{url}: JSON nested too deeply; not LiteLLM's price file") from None
    if not isinstance(litellm, dict):
        raise CostmodelError(f"{url}: expected LiteLLM's JSON object of model entries")
    version = f"litellm ({url}, sha256 {hashlib.sha256(data).hexdigest()[:12]}, fetched {today.isoformat()})"
    rows, _dropped = refresh_rows_from_litellm(litellm, current.rows, source_version=version, checked=today)
    return list(rows)  # rows whose key is gone are dropped; check_removals decides whether that many may go


def check_removals(*, removed: tuple[str, ...], rows_before: int, url: str, json_source: bool,
                   allow_removals: bool) -> None:
    """Refuse a refresh that would drop more than MAX_REMOVED_SHARE of the rows, unless removals are allowed.

    A download cut at a row boundary parses as a valid, shorter sheet; this is what stops it."""
    if allow_removals or len(removed) <= MAX_REMOVED_SHARE * rows_before:
        return
    hint = " (is this LiteLLM's model_prices_and_context_window.json?)" if json_source else " (a truncated download?)"
    shown = ", ".join(removed[:3]) + (", ..." if len(removed) > 3 else "")
    raise CostmodelError(
        f"{url} would remove {len(removed)} of the {rows_before} rows ({shown}), more than "
        f"{MAX_REMOVED_SHARE:.0%}{hint}; refusing to drop them: pass --allow-removals if they should go"
    )


def check_not_all_free(rows: list[BaseModel], *, url: str, json_source: bool) -> None:
    """Refuse a download that prices every API row it brings (all rows of a CSV, the LiteLLM-sourced rows of
    LiteLLM's JSON) at 0 in and out: those API options would all cost $0/month. A paid sheet read wrong (a
    column shifted, a unit lost) looks like this; a sheet that really is free needs the flag."""
    api_rows = [r for r in rows if isinstance(r, ApiPriceRow) and (not json_source or r.source == "litellm")]
    if api_rows and all(r.input_usd_per_mtok == 0 and r.output_usd_per_mtok == 0 for r in api_rows):
        raise CostmodelError(f"{url} prices every one of its {len(api_rows)} rows at 0 USD (input and output): "
                             "every API option would cost $0/month; if that is right, pass --allow-zero-prices")


def diff_rows(before: tuple[BaseModel, ...], after: list[BaseModel]) -> tuple[
    tuple[str, ...], tuple[str, ...], tuple[RowChange, ...]
]:
    """(added ids, removed ids, changed rows with their changed fields), ignoring checked/source_version."""
    old = {row.id: row.model_dump() for row in before}  # type: ignore[attr-defined]
    new = {row.id: row.model_dump() for row in after}  # type: ignore[attr-defined]
    added = tuple(i for i in new if i not in old)
    removed = tuple(i for i in old if i not in new)
    changed = []
    for row_id in new:
        if row_id in old:
            fields = tuple(k for k in new[row_id] if k not in _METADATA_FIELDS and new[row_id][k] != old[row_id][k])
            if fields:
                changed.append(RowChange(id=row_id, fields=fields))
    return added, removed, tuple(changed)


def refresh_sheet(
    kind: SheetKind,
    *,
    path: str | Path | None = None,
    url: str | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    max_bytes: int = MAX_DOWNLOAD_BYTES,
    today: dt.date | None = None,
    allow_removals: bool = False,
    allow_zero_prices: bool = False,
) -> RefreshResult:
    """Replace the sheet at `path` (default: the bundled one) with a validated download.

    `timeout_seconds` bounds the whole download; more than MAX_REMOVED_SHARE of the rows may go only
    with `allow_removals`; an API sheet whose every input and output price is 0 only with `allow_zero_prices`."""
    timeout_seconds = check_timeout_seconds(timeout_seconds)
    file_path = Path(path) if path is not None else default_sheet_path(kind)
    day = today or dt.date.today()
    problem = write_problem(file_path)  # before the download: a sheet we cannot write is not worth fetching
    if problem is not None:
        raise CostmodelError(f"--file {file_path}: cannot write there ({problem}); nothing downloaded")
    current = load_sheet(kind, file_path)
    kept = f"kept {file_path} unchanged ({current.age_text(today=day)})"
    if url is None:
        if kind == "gpu":
            raise CostmodelError(
                f"the GPU sheet has no default online source; pass --url with a CSV in the format of {file_path}; {kept}"
            )
        url = LITELLM_RAW_URL
    try:
        data = download(url, timeout_seconds=timeout_seconds, max_bytes=max_bytes)
        rows = _rows_from_download(data, kind=kind, current=current, url=url, today=day)
        text = sheet_to_csv_text(rows, kind=kind)
        parse_sheet_text(text, kind=kind, where=url)  # the file we are about to write must load back
        added, removed, changed = diff_rows(current.rows, rows)
        check_removals(removed=removed, rows_before=len(current.rows), url=url,
                       json_source=data.lstrip()[:1] == b"{", allow_removals=allow_removals)
        if not allow_zero_prices:
            check_not_all_free(rows, url=url, json_source=data.lstrip()[:1] == b"{")
    except CostmodelError as exc:
        raise CostmodelError(f"{exc}; {kept}") from None
    write_text_or_keep(file_path, text, flag="--file", what="refreshed sheet")  # the old sheet stays whole
    return RefreshResult(
        sheet=kind, path=str(file_path), url=url, rows_before=len(current.rows), rows_after=len(rows),
        added=added, removed=removed, changed=changed, checked=day,
    )
