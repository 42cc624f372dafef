"""Measurement files attached to the options of a scenario (`calibration:` on an option, or
`--calibration [OPTION=]FILE` on the CLI), checked against what each option can use.

- API option: one `calibrate-endpoint` file or one `probe-endpoint` result -> its measured p90 latency.
- Self-host option: a `calibrate-endpoint` file (the fitted step-time model of the deployment replaces the
  roofline for capacity and latency), or a `costmodel calibrate` file (roofline efficiencies) and/or a
  `probe --collectives` result (the tensor-parallel all-reduce cost).
A file written with `--force` is kept, marked `forced`, and every face says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from costmodel.catalog import load_accelerator
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.decision.endpoint_latency import with_measured_latency, with_probe_latency
from costmodel.decision.measured_capacity import MEASURED_METHOD
from costmodel.decision.results import OptionResult
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration, apply_calibration
from costmodel.measurements.calibration_files import (
    CalibrationFile,
    describe,
    is_forced,
    load_calibration_file,
)
from costmodel.measurements.collectives_result import CollectivesResult, apply_collectives, tp_link
from costmodel.measurements.endpoint_calibration import EndpointCalibration
from costmodel.measurements.endpoint_result import EndpointProbeResult
from costmodel.roofline import Efficiency
from costmodel.scenario import ApiOption, Scenario, SelfHostOption


@dataclass(frozen=True, kw_only=True)
class Attached:
    """The measurement files one option uses, and one line per file for people (notes, memo)."""

    endpoint: EndpointCalibration | None = None
    probe: EndpointProbeResult | None = None
    roofline: Calibration | None = None
    collectives: CollectivesResult | None = None
    descriptions: tuple[str, ...] = ()
    forced: bool = False  # some file was written with --force past its held-out check


def _slot(file: CalibrationFile) -> str:
    if isinstance(file, EndpointCalibration):
        return "endpoint"
    if isinstance(file, EndpointProbeResult):
        return "probe"
    return "collectives" if isinstance(file, CollectivesResult) else "roofline"


_FIX = {
    "api": "an API option takes a `calibrate-endpoint` file or a `probe-endpoint` result",
    "self-host": "a self-host option takes a `calibrate-endpoint` file, or a `costmodel calibrate` file and/or a "
                 "`probe --collectives` result (a one-level `probe-endpoint` result cannot drive the simulator: "
                 "sweep with `probe-endpoint --concurrency 1,2,4,8` and run `calibrate-endpoint`)",
}


def attach(option_name: str, kind: str, files: Sequence[tuple[str, CalibrationFile]]) -> Attached:
    """Check that an option of `kind` ("api" | "self-host") can use `files` ((where, file) pairs)."""
    allowed = {"endpoint", "probe"} if kind == "api" else {"endpoint", "roofline", "collectives"}
    slots: dict[str, CalibrationFile] = {}
    for where, file in files:
        slot = _slot(file)
        if slot not in allowed:
            raise CostmodelError(f"option '{option_name}': calibration {where} is a {describe(file)}; {_FIX[kind]}")
        if slot in slots or (slot in {"endpoint", "probe"} and {"endpoint", "probe"} & slots.keys()):
            raise CostmodelError(f"option '{option_name}': calibration {where}: more than one {slot} file; keep one")
        slots[slot] = file
    if "endpoint" in slots and len(slots) > 1:
        raise CostmodelError(f"option '{option_name}': a calibrate-endpoint file replaces the roofline model, so it "
                             "cannot be combined with a roofline or collectives calibration; keep one")
    return Attached(
        endpoint=slots.get("endpoint"), probe=slots.get("probe"),  # type: ignore[arg-type]
        roofline=slots.get("roofline"), collectives=slots.get("collectives"),  # type: ignore[arg-type]
        descriptions=tuple(describe(f) for _, f in files), forced=any(is_forced(f) for _, f in files),
    )


def option_paths(option: object) -> tuple[str, ...]:
    """The `calibration:` paths of an option (none for hybrids)."""
    if isinstance(option, SelfHostOption):
        return option.calibration_paths()
    if isinstance(option, ApiOption) and option.calibration is not None:
        return (option.calibration,)
    return ()


def load_attached(scenario: Scenario, *, skip: Sequence[str] = ()) -> tuple[dict[str, Attached], dict[str, str]]:
    """Read and check every option's `calibration:` files (options named in `skip` are not read).

    Returns the attachments and, per option whose files cannot be read or used, why: one bad file (inline or
    a path) excludes that option only, as a bad price id does, and the rest are compared."""
    attached: dict[str, Attached] = {}
    problems: dict[str, str] = {}
    for option in scenario.options:
        paths = option_paths(option)
        if not paths or option.name in skip:
            continue
        try:
            files = [(path, load_calibration_file(path)) for path in paths]
            attached[option.name] = attach(option.name, option.kind, files)
        except CostmodelError as exc:
            problems[option.name] = f"option '{option.name}': calibration: {exc}"
    return attached, problems


def forced_warnings(attached: Mapping[str, Attached]) -> tuple[str, ...]:
    """One warning per option that uses a calibration written with --force."""
    return tuple(f"{name} uses a calibration written with --force past its held-out check ("
                 + "; ".join(a.descriptions) + "): its measured figures are not backed by the backtest; recalibrate"
                 for name, a in attached.items() if a.forced)


def measured_api_option(option: ApiOption, attached: Attached | None) -> ApiOption:
    """The API option with the attached file's p90 latency (a forced calibration is used, and marked)."""
    if attached is None:
        return option
    if attached.endpoint is not None:
        return with_measured_latency(option, attached.endpoint, allow_forced=True)
    if attached.probe is not None:
        return with_probe_latency(option, attached.probe)
    return option


def with_collectives(hardware: AcceleratorSpec, efficiency: Efficiency, attached: Attached | None, *,
                     gpus: int) -> tuple[AcceleratorSpec, Efficiency]:
    """The accelerator with the tensor-parallel link from an attached collectives fit (same rank count)."""
    if attached is None or attached.collectives is None:
        return hardware, efficiency
    link = tp_link(attached.collectives, gpus=gpus)
    probe = attached.collectives
    if link is None:
        note = f"collectives probe over {probe.processes} ranks not used for {gpus} GPUs per replica"
        return hardware, replace(efficiency, source=f"{efficiency.source}; {note}")
    bandwidth, latency = link
    note = (f"TP all-reduce from the collectives probe ({probe.processes} ranks, {probe.backend}): latency "
            f"{latency * 1e6:.1f} us, link {bandwidth / 1e9:.2f} GB/s" if bandwidth is not None else
            f"TP all-reduce latency {latency * 1e6:.1f} us from the collectives probe (no size dependence seen)")
    return apply_collectives(hardware, probe), replace(efficiency, source=f"{efficiency.source}; {note}")


def annotate(result: OptionResult, attached: Attached | None) -> OptionResult:
    """Mark a result with the files it used: notes, `calibrations`, `calibration_forced`, and latency_source
    `measured` for a self-host option sized by its measured step-time model."""
    if attached is None:
        return result
    marks = tuple(f"calibration: {text}" for text in attached.descriptions)
    source = "measured" if result.capacity_method == MEASURED_METHOD else result.latency_source
    reason = result.slo_reason + (" [calibration FORCED past its held-out check]" if attached.forced else "")
    return replace(result, notes=result.notes + marks, calibrations=attached.descriptions,
                             calibration_forced=attached.forced, latency_source=source, slo_reason=reason)


def option_efficiency(option: SelfHostOption, calibration: Calibration | None,
                      attached: Attached | None = None) -> tuple[AcceleratorSpec, Efficiency]:
    """The option's accelerator and efficiencies: its own attached calibration's, else a matching global
    calibration's, else datasheet defaults; an attached collectives fit sets the tensor-parallel link."""
    hardware = load_accelerator(option.hardware)
    own = attached.roofline if attached is not None else None
    if own is not None:
        hardware, eff = apply_calibration(hardware, own)
    elif calibration is not None and calibration.hardware_id == hardware.id:
        hardware, eff = apply_calibration(hardware, calibration)
    else:
        eff = Efficiency.from_accelerator(hardware)
    return with_collectives(hardware, eff, attached, gpus=option.gpus_per_replica)
