"""`costmodel estimate`, `costmodel models list|show|import`, `costmodel hardware list`."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from costmodel.catalog import loader
from costmodel.catalog.engines import GENERIC_ENGINE_ID, engine_ids
from costmodel.catalog.params import derive_shape
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.cli.output import bounded_int, emit, parse_date
from costmodel.dtypes import KV_DTYPES, WEIGHT_DTYPES
from costmodel.errors import CostmodelError, UnwrittenOutputError
from costmodel.estimate import Estimate, estimate
from costmodel.fileio import atomic_create_text, check_output_path, write_text_or_keep
from costmodel.measurements.calibration import load_calibration
from costmodel.scenario.limits import MAX_GPUS_PER_REPLICA, MAX_TOKENS_PER_REQUEST
from costmodel.units import fmt_bytes, fmt_seconds

MAX_BATCH = 100_000  # concurrent sequences: far above any KV budget, bounds the memory plan's work


def add_config_flags(parser: argparse.ArgumentParser, *, with_batch: bool = True) -> None:
    """Flags shared by estimate and simulate (DESIGN.md CLI contract)."""
    parser.add_argument("--model", required=True, help="catalog model id, e.g. llama-3.1-8b")
    parser.add_argument("--hardware", required=True, help="catalog accelerator id, e.g. h100-sxm")
    parser.add_argument("--gpus", type=bounded_int(None, MAX_GPUS_PER_REPLICA), default=1, help="GPUs per replica (tensor parallel)")
    parser.add_argument("--weight-dtype", default="bf16", choices=WEIGHT_DTYPES)
    parser.add_argument("--kv-dtype", default="bf16", choices=KV_DTYPES)
    if with_batch:
        parser.add_argument("--batch", type=bounded_int(None, MAX_BATCH), default=1, help="concurrent sequences")
    parser.add_argument("--prompt-tokens", type=bounded_int(None, MAX_TOKENS_PER_REQUEST), default=1024,
                        help="prompt tokens per request (at most the model's context window)")
    parser.add_argument("--output-tokens", type=bounded_int(None, MAX_TOKENS_PER_REQUEST), default=256,
                        help="output tokens per request (prompt + output within the context window)")
    parser.add_argument("--calibration", type=Path,
                        help="calibration JSON from `costmodel calibrate`; simulate and capacity also take a "
                             "`calibrate-endpoint` CAL.json (the measured step-time model runs instead of the "
                             "roofline) or a `probe --collectives` result (the TP all-reduce over --gpus ranks)")
    parser.add_argument("--collectives", type=Path,
                        help="collectives probe JSON (`costmodel probe --collectives`): its all-reduce fit prices TP")
    parser.add_argument("--engine", choices=engine_ids(), default=GENERIC_ENGINE_ID,
                        help="serving engine profile (catalog/engines): scheduler defaults and CPU overheads")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the catalog and estimate subcommands."""
    est = subparsers.add_parser("estimate", help="prefill/decode latency and memory of one configuration")
    add_config_flags(est)
    est.set_defaults(handler=run_estimate)

    models = subparsers.add_parser("models", help="the model catalog")
    msub = models.add_subparsers(dest="models_command", required=True)
    mlist = msub.add_parser("list", help="list model ids")
    mlist.add_argument("--json", action="store_true")
    mlist.set_defaults(handler=run_models_list)
    mimport = msub.add_parser("import", help="import a Hugging Face config.json as a catalog entry")
    mimport.add_argument("config", type=Path)
    mimport.add_argument("--id", dest="model_id", help="catalog id (default: the config's folder name)")
    mimport.add_argument("--out", type=Path, help="YAML file to write (default: $COSTMODEL_HOME/models/<id>.yaml)")
    mimport.add_argument("--force", action="store_true", help="overwrite an existing file")
    mimport.add_argument("--date", type=parse_date, default=None, help="the `checked` date YYYY-MM-DD (default today)")
    mimport.add_argument("--json", action="store_true")
    mimport.set_defaults(handler=run_models_import)

    hardware = subparsers.add_parser("hardware", help="the accelerator catalog")
    hsub = hardware.add_subparsers(dest="hardware_command", required=True)
    hlist = hsub.add_parser("list", help="list accelerator ids")
    hlist.add_argument("--json", action="store_true")
    hlist.set_defaults(handler=run_hardware_list)


def hardware_from_args(args: argparse.Namespace) -> AcceleratorSpec | str:
    """--hardware, with the --collectives file's measured all-reduce in place of the datasheet link."""
    path = getattr(args, "collectives", None)
    if path is None:
        return str(args.hardware)
    from costmodel.measurements.collectives_result import (  # only with the flag
        apply_collectives,
        load_collectives,
    )

    return apply_collectives(loader.load_accelerator(args.hardware), load_collectives(path))


def estimate_from_args(args: argparse.Namespace) -> Estimate:
    """Run `estimate` from parsed flags (shared with other commands)."""
    calibration = load_calibration(args.calibration) if args.calibration else None
    return estimate(
        args.model, hardware_from_args(args), gpus=args.gpus, weight_dtype=args.weight_dtype, kv_dtype=args.kv_dtype,
        batch=args.batch, prompt_tokens=args.prompt_tokens, output_tokens=args.output_tokens,
        calibration=calibration, engine=getattr(args, "engine", GENERIC_ENGINE_ID),
    )


def run_estimate(args: argparse.Namespace) -> int:
    result = estimate_from_args(args)
    lines = [
        f"{result.model_id} on {result.gpus} x {result.hardware_id}  weights {result.weight_dtype}, KV {result.kv_dtype}, "
        f"batch {result.batch}, {result.prompt_tokens} -> {result.output_tokens} tokens",
        f"  prefill     {fmt_seconds(result.prefill_seconds):>10}  ({result.prefill.bound}-bound)"
        f"  + {fmt_seconds(result.request_overhead_seconds)} request overhead ({result.engine_id}) = TTFT",
        f"  decode step {fmt_seconds(result.decode_step_seconds):>10}  ({result.decode.bound}-bound)  = TPOT",
        f"  decode      {result.decode_tokens_per_second:10.1f} tokens/s per replica, {1 / result.tpot_seconds:.1f} per user",
        f"  weights     {fmt_bytes(result.memory.weights_bytes):>10}  ({fmt_bytes(result.memory.weights_bytes_per_gpu)}/GPU)",
        f"  KV          {result.memory.kv_bytes_per_token:10.0f} bytes/token; max batch {result.memory.max_batch}"
        f" at {result.prompt_tokens + result.output_tokens} tokens",
        f"  {result.memory.message}",
        f"  efficiencies: {result.efficiency.source}",
    ]
    if not result.fits and result.memory.fits:
        lines.append(f"  batch {result.batch} does NOT fit: at most {result.memory.max_batch} sequences at this context")
    emit(result.contract(), as_json=args.json, text="\n".join(lines))
    return 0


def run_models_list(args: argparse.Namespace) -> int:
    specs = list(loader.models().values())
    shapes = [derive_shape(spec) for spec in specs]
    rows = [
        {"id": spec.id, "name": spec.name, "total_params": shape.total_params, "active_params": shape.active_params,
         "moe": spec.is_moe, "mla": spec.is_mla}
        for spec, shape in zip(specs, shapes, strict=True)
    ]
    text = "\n".join(
        f"{spec.id:18s} {shape.total_params / 1e9:8.2f}B total {shape.active_params / 1e9:7.2f}B active  {spec.name}"
        for spec, shape in zip(specs, shapes, strict=True)
    )
    emit({"models": rows}, as_json=args.json, text=text)
    return 0


def run_hardware_list(args: argparse.Namespace) -> int:
    hws = list(loader.accelerators().values())
    rows = [
        {"id": hw.id, "name": hw.name, "memory_bytes": hw.memory_bytes, "hbm_bytes_per_s": hw.hbm_bytes_per_s,
         "bf16_flops_per_s": hw.peak_flops_per_s["bf16"], "checked": hw.checked.isoformat()}
        for hw in hws
    ]
    text = "\n".join(
        f"{hw.id:12s} {fmt_bytes(hw.memory_bytes):>9} {hw.hbm_bytes_per_s / 1e12:5.2f} TB/s "
        f"{hw.peak_flops_per_s['bf16'] / 1e12:7.1f} TFLOP/s bf16  {hw.name}" for hw in hws
    )
    emit({"hardware": rows}, as_json=args.json, text=text)
    return 0


def run_models_import(args: argparse.Namespace) -> int:
    from costmodel.catalog.hf_import import import_hf_config_file  # `models import` only

    model_id = args.model_id or args.config.resolve().parent.name.lower()
    spec = import_hf_config_file(args.config, model_id=model_id, as_of=args.date)
    if spec.id in loader.bundled_models():
        raise CostmodelError(f"--id '{spec.id}' is a bundled model; choose another id")
    out = args.out or loader.user_models_dir() / f"{spec.id}.yaml"
    if out.is_dir():
        raise CostmodelError(f"--out {out} is a directory; give a file path such as {spec.id}.yaml")
    check_output_path(out, example=f"{spec.id}.yaml")
    text = yaml.safe_dump(spec.model_dump(mode="json", exclude_none=True), sort_keys=False)
    if args.force:
        write_text_or_keep(out, text, what="model file")
    else:
        try:  # exclusive create: of two concurrent imports to one path, exactly one succeeds
            atomic_create_text(out, text)
        except FileExistsError:
            raise CostmodelError(f"{out} exists; pass --force to overwrite it or --out to write elsewhere") from None
        except OSError as exc:  # disk full, read-only: the model file is printed instead of lost
            raise UnwrittenOutputError(f"--out {out}: could not write the model file ({exc.strerror or exc}); "
                                       "it is printed on stdout instead", path=str(out), content=text) from None
    shape = derive_shape(spec)
    emit(
        {"id": spec.id, "path": str(out), "total_params": shape.total_params, "active_params": shape.active_params},
        as_json=args.json,
        text=f"imported {spec.id} ({shape.total_params / 1e9:.2f}B params) -> {out}",
    )
    return 0
