"""`--calibration [OPTION=]FILE` (repeatable) on compare and memo: which option each measurement file goes to.

Without `OPTION=`, the file's kind decides: a `costmodel calibrate` file applies to every self-host option on
its hardware (as before); a collectives probe to every self-host option; a calibrate-endpoint file to the
scenario's one self-host option (or its one API option when it has no self-host option); a probe-endpoint
result to its one API option. Anything ambiguous asks for `OPTION=FILE`. simulate and capacity take one
file, checked by `serving_calibration_file`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from costmodel.catalog import load_accelerator
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.errors import CostmodelError
from costmodel.measurements.calibration import Calibration
from costmodel.measurements.calibration_files import CalibrationFile, load_calibration_file
from costmodel.measurements.collectives_result import (
    CollectivesResult,
    apply_collectives,
    load_collectives,
    tp_link,
)
from costmodel.measurements.endpoint_calibration import EndpointCalibration
from costmodel.scenario import ApiOption, Scenario, SelfHostOption
from costmodel.scenario.options import Option

HELP = ("[OPTION=]FILE, repeatable: a `costmodel calibrate` file (roofline efficiencies, matching hardware), a "
        "`calibrate-endpoint` CAL.json (the measured step-time model of a self-host option, or an API option's "
        "measured latency), a `probe-endpoint` result (an API option's measured latency) or a `probe --collectives` "
        "result (tensor-parallel all-reduce)")


def add_calibration_flag(parser: argparse.ArgumentParser) -> None:
    """Add the repeatable `--calibration [OPTION=]FILE`."""
    parser.add_argument("--calibration", action="append", default=[], metavar="[OPTION=]FILE", help=HELP)


def _split(value: str, names: set[str]) -> tuple[str | None, Path]:
    name, sep, rest = value.partition("=")
    if sep and name in names:
        return name, Path(rest)
    return None, Path(value)


def _with_path(option: Option, path: str) -> Option:
    if isinstance(option, SelfHostOption):
        paths = [*option.calibration_paths(), path]
        return option.model_copy(update={"calibration": paths[0] if len(paths) == 1 else paths})
    if isinstance(option, ApiOption):
        return option.model_copy(update={"calibration": path})
    raise CostmodelError(f"--calibration {option.name}=...: '{option.name}' is a hybrid; attach the file to its "
                         "self-host or API option")


def _targets(scenario: Scenario, file: object, shown: str) -> list[str]:
    self_hosts = [o.name for o in scenario.options if isinstance(o, SelfHostOption)]
    apis = [o.name for o in scenario.options if isinstance(o, ApiOption)]
    if isinstance(file, CollectivesResult):
        return self_hosts
    candidates = (self_hosts or apis) if isinstance(file, EndpointCalibration) else apis
    if len(candidates) != 1:
        names = ", ".join(o.name for o in scenario.options)
        raise CostmodelError(f"--calibration {shown}: the scenario has {len(candidates)} options it could apply to; "
                             f"name one: --calibration OPTION={shown} (options: {names})")
    return candidates


def apply_calibration_args(scenario: Scenario, values: list[str]) -> tuple[Scenario, Calibration | None]:
    """The scenario with each file attached to its option's `calibration:`, and the one global roofline
    calibration (None without one)."""
    names = {o.name for o in scenario.options}
    global_roofline: Calibration | None = None
    attach: dict[str, list[str]] = {}
    for value in values:
        name, path = _split(value, names)
        file = load_calibration_file(path)
        if name is None and isinstance(file, Calibration):
            if global_roofline is not None:
                raise CostmodelError(f"--calibration {value}: a second roofline calibration; name its option: "
                                     f"--calibration OPTION={value}")
            global_roofline = file
            continue
        for target in [name] if name is not None else _targets(scenario, file, value):
            attach.setdefault(target, []).append(str(path.resolve()))
    options = list(scenario.options)
    for index, option in enumerate(options):
        for attached_path in attach.get(option.name, []):
            option = _with_path(option, attached_path)
        options[index] = option
    return scenario.model_copy(update={"options": options}), global_roofline


def serving_calibration_file(args: argparse.Namespace) -> CalibrationFile | None:
    """The --calibration file, by kind; a one-level probe-endpoint result cannot drive a simulation."""
    file = load_calibration_file(args.calibration) if args.calibration else None
    if file is not None and not isinstance(file, Calibration | CollectivesResult | EndpointCalibration):
        raise CostmodelError(f"--calibration {args.calibration} is a one-level probe-endpoint result; sweep "
                             "(probe-endpoint --concurrency 1,2,4,8) and fit it with calibrate-endpoint first")
    return file


def calibrated_hardware(args: argparse.Namespace, file: CalibrationFile | None) -> AcceleratorSpec:
    """The accelerator, with the tensor-parallel link of a collectives fit over --gpus ranks (given as
    --calibration or --collectives; `collectives_result.apply_collectives` makes the one update)."""
    hardware = load_accelerator(args.hardware)
    collectives = getattr(args, "collectives", None)
    if collectives is not None:
        hardware = apply_collectives(hardware, load_collectives(collectives))
    if not isinstance(file, CollectivesResult):
        return hardware
    if tp_link(file, gpus=args.gpus) is None:
        raise CostmodelError(f"--calibration {args.calibration}: the collectives probe ran over {file.processes} "
                             f"ranks, so it cannot set the all-reduce of --gpus {args.gpus}; probe with --processes "
                             f"{args.gpus}")
    return apply_collectives(hardware, file)
