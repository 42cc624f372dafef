"""`costmodel prices refresh`: download a newer sheet, validate it, replace the file atomically.

Sources: a CSV in the sheet's own format (any URL), or, for the API sheet, LiteLLM's raw
model_prices_and_context_window.json (the default: this repository's own raw URL is not known, and
LiteLLM is the sheet's primary source). LiteLLM JSON is converted with the keys already in the
sheet's `source_key` column; rows are not added from it (which models the sheet covers is decided
by scripts/import_api_prices.py). The GPU sheet has no machine-readable upstream, so it needs --url.

Any failure (offline, timeout, HTTP error, HTML, oversized, schema-broken) raises CostmodelError and
leaves the file byte-for-byte as it was; the message says how old the kept sheet is.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from costmodel.errors import CostmodelError
from costmodel.fileio import atomic_write_text
from costmodel.pricing.litellm import LITELLM_RAW_URL, refresh_rows_from_litellm
from costmodel.pricing.sheets import (
    PriceSheet,
    SheetKind,
    default_sheet_path,
    load_sheet,
    parse_sheet_text,
    sheet_to_csv_text,
)

DEFAULT_TIMEOUT_SECONDS = 20.0
# LiteLLM's JSON is ~3.5 MB (Nov 2026); 8 MiB leaves room to grow and stops runaway downloads.
MAX_DOWNLOAD_BYTES = 8 * 1024 * 1024
_CHUNK_BYTES = 64 * 1024
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


def download(url: str, *, timeout_seconds: float, max_bytes: int) -> bytes:
    """GET `url`, streamed, giving up after `timeout_seconds` in total or past `max_bytes`."""
    import requests  # only this function touches the network

    deadline = time.monotonic() + timeout_seconds
    try:
        with requests.get(url, timeout=timeout_seconds, stream=True,
                          headers={"User-Agent": "costmodel-prices-refresh"}) as response:
            if response.status_code != 200:
                raise CostmodelError(f"{url} answered HTTP {response.status_code}; check the URL")
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise CostmodelError(f"{url} is {int(declared):,} bytes, over the {max_bytes:,}-byte limit")
            chunks, total = [], 0
            for chunk in response.iter_content(_CHUNK_BYTES):
                total += len(chunk)
                if total > max_bytes:
                    raise CostmodelError(f"{url} sent more than {max_bytes:,} bytes; not a price sheet")
                if time.monotonic() > deadline:
                    raise CostmodelError(f"{url} took longer than {timeout_seconds:g} s; try again or raise --timeout")
                chunks.append(chunk)
            return b"".join(chunks)
    except requests.Timeout:
        raise CostmodelError(f"{url} timed out after {timeout_seconds:g} s; try again or raise --timeout") from None
    except requests.ConnectionError as exc:
        raise CostmodelError(f"could not reach {url} ({type(exc).__name__}); offline?") from None
    except requests.RequestException as exc:
        raise CostmodelError(f"download from {url} failed: {exc}") from None


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
    if not isinstance(litellm, dict):
        raise CostmodelError(f"{url}: expected LiteLLM's JSON object of model entries")
    version = f"litellm ({url}, sha256 {hashlib.sha256(data).hexdigest()[:12]}, fetched {today.isoformat()})"
    rows, dropped = refresh_rows_from_litellm(litellm, current.rows, source_version=version, checked=today)
    if len(dropped) * 2 > len(current.rows):
        raise CostmodelError(
            f"{url} lacks {len(dropped)} of the {len(current.rows)} LiteLLM keys the sheet uses; refusing to drop "
            "them (is this LiteLLM's model_prices_and_context_window.json?)"
        )
    return list(rows)


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
) -> RefreshResult:
    """Replace the sheet at `path` (default: the bundled one) with a validated download."""
    file_path = Path(path) if path is not None else default_sheet_path(kind)
    day = today or dt.date.today()
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
    except CostmodelError as exc:
        raise CostmodelError(f"{exc}; {kept}") from None
    added, removed, changed = diff_rows(current.rows, rows)
    atomic_write_text(file_path, text)
    return RefreshResult(
        sheet=kind, path=str(file_path), url=url, rows_before=len(current.rows), rows_after=len(rows),
        added=added, removed=removed, changed=changed, checked=day,
    )
