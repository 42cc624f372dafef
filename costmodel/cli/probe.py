"""`costmodel probe` (time a model on this machine) and `costmodel calibrate` (fit efficiencies to it).

The probe needs torch, so `probes` is imported inside the handler only (costmodel stays torch-free).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from costmodel.catalog.loader import load_accelerator
from costmodel.cli.output import bounded_int, emit
from costmodel.errors import CostmodelError
from costmodel.fileio import check_output_path, write_text_or_keep
from costmodel.measurements.calibration import MAX_HOLDOUT_MEDIAN_ABS_ERROR
from costmodel.measurements.fit import (
    CalibrationFit,
    calibration_from_fit,
    check_probe_complete,
    fit_calibration,
)
from costmodel.measurements.probe_result import ProbeResult, batch1_decode_mbu, load_probe_result

INTERRUPTED_EXIT_CODE = 130
BUSY_WARNING = 0.2  # background CPU share above which the probe warns


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `probe` and `calibrate`."""
    probe = subparsers.add_parser("probe", help="time prefill/decode of a catalog model on this machine")
    probe.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    probe.add_argument("--collectives", action="store_true",
                       help="time all-reduce/all-gather over --processes ranks (gloo on CPU, NCCL on GPUs)")
    probe.add_argument("--processes", type=bounded_int(2, 1024), default=2, help="ranks for --collectives")
    probe.add_argument("--model", help="catalog model id (default: qwen2.5-0.5b on CPU, llama-3.1-8b on CUDA)")
    probe.add_argument("--quick", action="store_true", help="fewer points (CPU: 2 layers, ~1 minute)")
    probe.add_argument("--out", type=Path, required=True, help="probe result JSON to write")
    probe.add_argument("--dtype", choices=("fp32", "bf16", "fp16"),
                       help="default: bf16 on GPUs and CPUs with native bf16, else fp32")
    probe.add_argument("--threads", type=bounded_int(1, 1024), help="CPU threads (default: physical cores)")
    probe.add_argument("--layers", type=bounded_int(1, 1000), help="probe only the first N layers (plus embedding and lm_head)")
    probe.add_argument("--cuda-graphs", action=argparse.BooleanOptionalAction, default=None,
                       help="replay decode steps from CUDA graphs (default: on for dense models on CUDA)")
    probe.add_argument("--compile", action="store_true", help="torch.compile the model (recorded in the result)")
    probe.add_argument("--hardware", help="catalog accelerator id to record (default: 'cpu', or from the GPU name)")
    probe.add_argument("--seed", type=bounded_int(0, 2**32 - 1), default=0)
    probe.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    probe.add_argument("--json", action="store_true", help="print one JSON object")
    probe.set_defaults(handler=run_probe_command)

    cal = subparsers.add_parser("calibrate", help="fit eff_compute, eff_memory and overhead to a probe result")
    cal.add_argument("probe_file", type=Path, metavar="FILE", help="probe result JSON from `costmodel probe`")
    cal.add_argument("--out", type=Path, required=True, help="calibration JSON to write (--calibration FILE)")
    cal.add_argument("--hardware", help="catalog accelerator id, if the probe did not record one")
    cal.add_argument("--force", action="store_true",
                     help=f"write the calibration even when its held-out median error is above "
                          f"{MAX_HOLDOUT_MEDIAN_ABS_ERROR * 100:.0f}%% (it is marked forced)")
    cal.add_argument("--json", action="store_true", help="print one JSON object")
    cal.set_defaults(handler=run_calibrate_command)


def run_probe_command(args: argparse.Namespace) -> int:
    if args.collectives:
        return _run_collectives(args)
    for flag, value in (("--threads", args.threads), ("--layers", args.layers)):
        if value is not None and value < 1:
            raise CostmodelError(f"{flag} must be >= 1 (got {value})")
    if args.hardware is not None:  # before the run: `calibrate` refuses an id the catalog does not know
        try:
            load_accelerator(args.hardware)
        except CostmodelError as exc:
            raise CostmodelError(f"--hardware: {exc}") from None
    try:
        from probes.runner import ProbeRequest, run_probe
    except ImportError as exc:
        raise CostmodelError(
            f"the probe needs torch ({exc}); install it with: pip install -e '.[probes]'"
        ) from exc
    request = ProbeRequest(
        out=args.out, device=args.device, model_id=args.model, quick=args.quick, dtype=args.dtype,
        threads=args.threads, layers=args.layers, cuda_graphs=args.cuda_graphs, torch_compile=args.compile,
        hardware_id=args.hardware, seed=args.seed, show_progress=not args.no_progress,
    )
    result = run_probe(request)
    emit(probe_summary(result, out=args.out), as_json=args.json, text=probe_text(result, out=args.out))
    if not result.complete:
        sys.stderr.write(
            f"costmodel: interrupted: the {len(result.points)} point(s) measured so far are saved in {args.out}\n"
        )
        return INTERRUPTED_EXIT_CODE
    return 0


def probe_summary(result: ProbeResult, *, out: Path) -> dict[str, Any]:
    """The `costmodel probe --json` object."""
    env, settings = result.environment, result.settings
    return {
        "out": str(out),
        "complete": result.complete,
        "device": env.device,
        "device_name": env.device_name,
        "hardware_id": env.hardware_id,
        "dtype": env.dtype,
        "threads": env.threads,
        "model": settings.model_id,
        "layers_probed": settings.layers_probed,
        "layers_total": settings.layers_total,
        "slice_reason": settings.slice_reason,
        "copy_bytes_per_s": result.copy_bytes_per_s,
        "peak_flops_per_s_by_dtype": result.peak_flops_per_s_by_dtype,
        "points_ok": len(result.ok_points),
        "points_does_not_fit": sum(p.status == "does_not_fit" for p in result.points),
        "points_failed": sum(p.status == "failed" for p in result.points),
        "batch1_decode_mbu": batch1_decode_mbu(result),
        "wall_seconds": result.wall_seconds,
        "background_cpu_fraction": result.background_cpu_fraction,
    }


def probe_text(result: ProbeResult, *, out: Path) -> str:
    env, settings = result.environment, result.settings
    peaks = ", ".join(f"{k} {v / 1e9:.1f} GFLOP/s" for k, v in result.peak_flops_per_s_by_dtype.items())
    threads = f", {env.threads} threads" if env.threads else ""
    lines = [
        f"{settings.model_id}: {settings.layers_probed}/{settings.layers_total} layers on {env.device_name} "
        f"({env.device}, {env.dtype}{threads})",
        f"  copy {result.copy_bytes_per_s / 1e9:.1f} GB/s; matmul {peaks}",
    ]
    if settings.slice_reason:
        lines.append(f"  slice: {settings.slice_reason}; full_model_seconds scales by the roofline ratio")
    lines.append(f"  {'phase':8s} {'B':>4s} {'T':>5s} {'C':>6s} {'measured':>10s} {'spread':>7s} {'roofline':>10s}")
    for p in result.points:
        measured = f"{p.seconds_median * 1e3:8.1f}ms" if p.seconds_median else f"{p.status:>10s}"
        spread = f"{p.spread:6.0%}" if p.spread is not None else ""
        lines.append(f"  {p.phase:8s} {p.batch:4d} {p.new_tokens:5d} {p.context_tokens:6d} {measured:>10s} "
                     f"{spread:>7s} {p.predicted_seconds * 1e3:8.1f}ms")
    mbu = batch1_decode_mbu(result)
    if mbu is not None:
        lines.append(f"  batch-1 decode MBU {mbu:.0%} of the measured copy bandwidth")
    busy = result.background_cpu_fraction
    if busy is not None and busy > BUSY_WARNING:
        lines.append(f"  warning: other processes used {busy:.0%} of the CPUs during the probe; timings are "
                     "unreliable, rerun on a quiet machine")
    lines.append(f"  saved {out} ({result.wall_seconds:.0f} s); next: costmodel calibrate {out} --out calibration.json")
    return "\n".join(lines)


def run_calibrate_command(args: argparse.Namespace) -> int:
    check_output_path(args.out, example="calibration.json")  # before the fit: a bad path must not cost it
    result = load_probe_result(args.probe_file)
    check_probe_complete(result, source=args.probe_file.name, force=args.force)
    fit = fit_calibration(result)
    calibration = calibration_from_fit(result, fit, source=args.probe_file.name, hardware_id=args.hardware,
                                       force=args.force)
    write_text_or_keep(args.out, calibration.model_dump_json(indent=2) + "\n", what="calibration")
    eff = fit.efficiency
    payload = {
        "out": str(args.out),
        "hardware_id": calibration.hardware_id,
        "holdout_median_abs_error": fit.holdout_median_abs_error,
        "holdout_max_abs_error": fit.holdout_max_abs_error,
        "fit_median_abs_error": fit.fit_median_abs_error,
        "fit_max_abs_error": fit.fit_max_abs_error,
        "eff_compute": eff.eff_compute,
        "eff_memory": eff.eff_memory,
        "overhead_seconds_per_step": eff.overhead_seconds_per_step,
        "compute_half_saturation_tokens": eff.compute_half_saturation_tokens,
        "weight_reads_max_rows": eff.weight_reads_max_rows,
        "peak_flops_per_s": calibration.peak_flops_per_s,
        "hbm_bytes_per_s": calibration.hbm_bytes_per_s,
        "points_fit": fit.points_fit,
        "points_holdout": fit.points_holdout,
        "forced": calibration.forced,
        "probe_incomplete": calibration.probe_incomplete,
        "points": [
            {"phase": p.phase, "batch": p.batch, "new_tokens": p.new_tokens, "context_tokens": p.context_tokens,
             "measured_seconds": p.measured_seconds, "roofline_seconds": p.roofline_seconds,
             "calibrated_seconds": p.calibrated_seconds, "holdout": p.holdout}
            for p in fit.points
        ],
    }
    text = "\n".join([
        f"calibration for '{calibration.hardware_id}' ({calibration.device_name}) -> {args.out}",
        f"  eff_compute {eff.eff_compute:.3f}  eff_memory {eff.eff_memory:.3f}  overhead "
        f"{eff.overhead_seconds_per_step * 1e3:.2f} ms/step  half-saturation {eff.compute_half_saturation_tokens:.1f} rows  "
        f"weight reads up to {eff.weight_reads_max_rows:.2f} rows",
        f"  held-out error: median {fit.holdout_median_abs_error:.1%}, max {fit.holdout_max_abs_error:.1%} "
        f"({fit.points_holdout} points; fit on {fit.points_fit})"
        + (f"; FORCED past the {MAX_HOLDOUT_MEDIAN_ABS_ERROR:.0%} bound" if calibration.forced else "")
        + ("; FORCED on an interrupted probe (complete: false)" if calibration.probe_incomplete else ""),
        fit_table_markdown(fit),
    ])
    emit(payload, as_json=args.json, text=text)
    return 0


def fit_table_markdown(fit: CalibrationFit) -> str:
    """Measured vs predicted per point, as a Markdown table (docs/probes.md embeds the example's)."""
    rows = [
        "| phase | B | T | C | measured ms | roofline ms | calibrated ms | error | held out |",
        "|---|---:|---:|---:|---:|---:|---:|---:|:---:|",
    ]
    for p in fit.points:
        rows.append(
            f"| {p.phase} | {p.batch} | {p.new_tokens} | {p.context_tokens} | {p.measured_seconds * 1e3:.1f} | "
            f"{p.roofline_seconds * 1e3:.1f} | {p.calibrated_seconds * 1e3:.1f} | {p.abs_error:.1%} | "
            f"{'yes' if p.holdout else ''} |"
        )
    return "\n".join(rows)


def example_markdown(result: ProbeResult, fit: CalibrationFit) -> str:
    """The measured-example block of docs/probes.md (a test regenerates it from examples/probe-cpu.json)."""
    env, settings, eff = result.environment, result.settings, fit.efficiency
    flat = fit_calibration(result, half_saturation_grid=(0.0,), weight_reads_grid=(1.0,))
    half_only = fit_calibration(result, weight_reads_grid=(1.0,))
    peaks = ", ".join(f"{k} {v / 1e9:.1f} GFLOP/s" for k, v in result.peak_flops_per_s_by_dtype.items())
    mbu = batch1_decode_mbu(result)
    busy = result.background_cpu_fraction
    lines = [
        f"- Machine: {env.device_name}, {env.cpu_physical_cores} cores, {env.threads} torch threads, "
        f"flags {', '.join(env.cpu_flags)}; torch {env.torch_version}; {env.dtype_reason}.",
        f"- Model: {settings.model_id}, {settings.layers_probed} of {settings.layers_total} layers plus embedding and "
        f"lm_head ({settings.slice_reason}); {len(result.ok_points)} points, {settings.rounds} rounds each.",
        f"- Microbenchmarks: copy {result.copy_bytes_per_s / 1e9:.1f} GB/s; matmul {peaks}.",
        f"- Batch-1 decode at the longest context: {mbu:.0%} of the copy bandwidth (MBU)." if mbu is not None else "",
        f"- Probe wall time {result.wall_seconds:.0f} s"
        + (f"; other processes used {busy:.0%} of the CPUs meanwhile." if busy is not None else "."),
        f"- Fit: eff_compute {eff.eff_compute:.3f}, eff_memory {eff.eff_memory:.3f}, overhead "
        f"{eff.overhead_seconds_per_step * 1e3:.2f} ms/step, half-saturation h = {eff.compute_half_saturation_tokens:.1f} "
        f"rows, weight reads up to R = {eff.weight_reads_max_rows:.2f} rows.",
        f"- Held-out error ({fit.points_holdout} points): median {fit.holdout_median_abs_error:.1%}, max "
        f"{fit.holdout_max_abs_error:.1%}; on the {fit.points_fit} fitted points: median "
        f"{fit.fit_median_abs_error:.1%}, max {fit.fit_max_abs_error:.1%}.",
        f"- Without the small-GEMM terms (h = 0, R = 1) the held-out error is median "
        f"{flat.holdout_median_abs_error:.1%}, max {flat.holdout_max_abs_error:.1%}; with h but R = 1, median "
        f"{half_only.holdout_median_abs_error:.1%}, max {half_only.holdout_max_abs_error:.1%}.",
        "",
        fit_table_markdown(fit),
    ]
    return "\n".join(line for line in lines[:-2] if line) + "\n\n" + lines[-1]


def _run_collectives(args: argparse.Namespace) -> int:
    """`costmodel probe --collectives`: alpha-beta per op, written to --out."""
    try:
        from probes.collectives import probe_collectives
    except ImportError as exc:
        raise CostmodelError(f"the collectives probe needs torch ({exc}); install it with: pip install -e '.[probes]'"
                             ) from exc
    check_output_path(args.out, example="collectives.json")
    result = probe_collectives(processes=args.processes)
    write_text_or_keep(args.out, result.model_dump_json(indent=2) + "\n", what="collectives result")
    lines = [f"collectives probe: {result.processes} ranks, {result.backend}, written to {args.out}"]
    for op, fitted in result.ops.items():
        bandwidth = fitted.fit.bytes_per_second
        lines.append(f"  {op}: latency {fitted.fit.latency_seconds * 1e6:.1f} us, "
                     + (f"{bandwidth / 1e9:.2f} GB/s" if bandwidth else "no size dependence seen"))
    emit(result.model_dump(mode="json"), as_json=args.json, text="\n".join(lines))
    return 0
