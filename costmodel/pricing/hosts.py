"""Host servers of owned GPUs (pricing_data/host_servers.csv): the server's capex and power beyond the GPUs.

An owned GPU row prices the GPU alone (its notes say: host server, network and storage excluded). A host
row gives one whole server: `gpus_per_server` GPUs, its purchase price `server_capex_usd` and its maximum
power `server_power_kw`. The host's share per GPU is what the server adds to its GPUs (docs/economics.md,
"Ops and hosts"):
- host capex per GPU = server_capex_usd / gpus_per_server - the GPU row's capex_usd_per_gpu;
- host power per GPU = server_power_kw / gpus_per_server - the GPU row's power_kw_per_gpu;
- host $/GPU-hour = capex / (life x 8,766 h) + kW x PUE x $/kWh + kW x (colocation $/kW-month) / 730.5 h,
  with the GPU row's life, PUE, $/kWh and its colocation rate per kW (colocation_usd_per_gpu_month /
  power_kw_per_gpu: the rows price colocation per kW of draw).
An option's own `host_capex_usd_per_gpu` / `host_power_kw_per_gpu` win over the sheet; an accelerator
without a host row and without those fields counts no host (the option's notes say so).
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import io
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, ValidationError

from costmodel.errors import CostmodelError
from costmodel.fileio import read_user_text
from costmodel.pricing.schema import GpuPriceRow
from costmodel.pricing.sheets import PRICING_DIR
from costmodel.strict import StrictModel
from costmodel.units import HOURS_PER_MONTH, HOURS_PER_YEAR

HOST_FILE = "host_servers.csv"


class HostServerRow(StrictModel):
    """One server model that holds `gpus_per_server` GPUs of one accelerator, with its source."""

    accelerator_id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", description="catalog accelerator id")
    gpus_per_server: int = Field(gt=0, le=64)
    server_capex_usd: float = Field(gt=0, le=1e8, description="purchase price of the whole server, GPUs included")
    server_power_kw: float = Field(gt=0, le=1_000, description="maximum power of the whole server, kW")
    source: str = Field(min_length=1)
    source_version: str | None = None
    checked: dt.date
    notes: str | None = None


@dataclass(frozen=True, kw_only=True)
class HostShare:
    """The host server's share of one owned GPU: capex, power, and their hourly cost."""

    capex_usd_per_gpu: float
    power_kw_per_gpu: float
    usd_per_gpu_hour: float
    source: str  # the host row's source, or "scenario override"


@functools.cache
def load_host_servers(path: str | None = None) -> tuple[HostServerRow, ...]:
    """The bundled host sheet (or `path`), validated; errors name the line and the field."""
    file_path = Path(path) if path is not None else PRICING_DIR / HOST_FILE
    text = read_user_text(file_path, what="host server sheet")
    rows = []
    for line, record in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        cells = {k: (v if v not in ("", None) else None) for k, v in record.items()}
        try:
            rows.append(HostServerRow.model_validate(cells))
        except ValidationError as err:
            fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in err.errors())
            raise CostmodelError(f"{file_path} line {line}: invalid {fields}: fix the cell") from None
    return tuple(rows)


def host_row(accelerator_id: str) -> HostServerRow | None:
    """The bundled host row of this accelerator, None when the sheet has none."""
    return next((r for r in load_host_servers() if r.accelerator_id == accelerator_id), None)


def host_share(gpu: GpuPriceRow, *, host: HostServerRow | None, capex_usd_per_gpu: float | None = None,
               power_kw_per_gpu: float | None = None) -> HostShare | None:
    """The host's share of one owned GPU (module docstring); overrides win; None when nothing is known."""
    if gpu.offering != "owned":
        return None
    assert gpu.capex_usd_per_gpu and gpu.life_years and gpu.power_kw_per_gpu and gpu.pue  # owned rows: validated
    assert gpu.usd_per_kwh is not None and gpu.colocation_usd_per_gpu_month is not None
    source = "scenario override"
    if host is not None and (capex_usd_per_gpu is None or power_kw_per_gpu is None):
        source = f"{host.source} ({host.gpus_per_server}-GPU server)"
    if capex_usd_per_gpu is None:
        capex_usd_per_gpu = host.server_capex_usd / host.gpus_per_server - gpu.capex_usd_per_gpu if host else None
    if power_kw_per_gpu is None:
        power_kw_per_gpu = host.server_power_kw / host.gpus_per_server - gpu.power_kw_per_gpu if host else None
    if capex_usd_per_gpu is None or power_kw_per_gpu is None:
        return None
    if capex_usd_per_gpu < 0 or power_kw_per_gpu < 0:
        raise CostmodelError(f"host server of {gpu.id}: the server costs or draws less than its GPUs "
                             f"(capex {capex_usd_per_gpu:.0f} $/GPU, power {power_kw_per_gpu:.3f} kW/GPU); fix the "
                             "host sheet row or set host_capex_usd_per_gpu / host_power_kw_per_gpu")
    colocation_usd_per_kw_month = gpu.colocation_usd_per_gpu_month / gpu.power_kw_per_gpu
    usd_per_hour = (capex_usd_per_gpu / (gpu.life_years * HOURS_PER_YEAR)
                    + power_kw_per_gpu * gpu.pue * gpu.usd_per_kwh
                    + power_kw_per_gpu * colocation_usd_per_kw_month / HOURS_PER_MONTH)
    return HostShare(capex_usd_per_gpu=capex_usd_per_gpu, power_kw_per_gpu=power_kw_per_gpu,
                     usd_per_gpu_hour=usd_per_hour, source=source)
