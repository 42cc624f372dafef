"""`costmodel search SCENARIO`: the cheapest SLO-feasible self-host configurations and the Pareto front."""

from __future__ import annotations

import argparse
from pathlib import Path

from costmodel.cli import progress
from costmodel.cli.output import bounded_float, bounded_int, emit, parse_date
from costmodel.cli.progress import add_quiet_flag
from costmodel.measurements.calibration import load_calibration
from costmodel.scenario import Scenario, load_scenario
from costmodel.scenario.search import SearchSettings
from costmodel.search import Configuration, SearchResult, make_executor, search
from costmodel.search.executors import RAY_INIT_TIMEOUT_SECONDS
from costmodel.search.mode_choice import SEARCH_MODES
from costmodel.search.rows import variants_summary
from costmodel.units import fmt_money

SEARCH_BAR_STEPS = 1000  # the bar's resolution: search() reports the share of its queue settled


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `search`."""
    parser = subparsers.add_parser("search", help="search models x GPUs x TP x precision for the cheapest "
                                   "configuration meeting the SLO, and the Pareto front")
    parser.add_argument("scenario", type=Path, help="scenario YAML/JSON file (its `search:` section limits the space)")
    parser.add_argument("--top", type=bounded_int(1, 100), default=5, help="cheapest configurations to report (1..100)")
    parser.add_argument("--workers", type=bounded_int(1, 4096), default=None,
                        help="processes (local) or Ray tasks running at once (default: 1 locally, the CPUs the Ray "
                             "cluster reports with --executor ray)")
    parser.add_argument("--executor", choices=("local", "ray"), default="local",
                        help="local process pool (default) or a Ray cluster (pip install 'costmodel[cluster]')")
    parser.add_argument("--address", default=None,
                        help="Ray head HOST:PORT (with --executor ray); default: $RAY_ADDRESS, else a new local Ray")
    parser.add_argument("--ray-init-timeout", type=bounded_float(1.0, 3600.0), default=RAY_INIT_TIMEOUT_SECONDS,
                        metavar="SECONDS", help=f"give up on ray.init after this long (default {RAY_INIT_TIMEOUT_SECONDS:g} s)")
    parser.add_argument("--calibration", type=Path, help="calibration JSON applied to matching hardware")
    parser.add_argument("--date", type=parse_date, default=None, help="evaluation date YYYY-MM-DD")
    parser.add_argument("--modes", type=modes_list, default=None,
                        help="serving modes to search beside aggregated TP replicas, where they apply: all, none or a "
                             "comma list of disaggregated, speculative, expert-parallel (default: the scenario's "
                             "search.modes, else none)")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    add_quiet_flag(parser)
    parser.set_defaults(handler=run_search)


def modes_list(text: str) -> tuple[str, ...]:
    """argparse type of --modes: 'all', 'none' or a comma list of the search modes."""
    if text == "all":
        return SEARCH_MODES
    if text == "none":
        return ()
    modes = tuple(part.strip() for part in text.split(","))
    unknown = [m for m in modes if m not in SEARCH_MODES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown mode(s) {', '.join(unknown)}: give all, none or a comma list of "
                                         f"{', '.join(SEARCH_MODES)}")
    return tuple(dict.fromkeys(modes))


def with_search_modes(scenario: Scenario, modes: tuple[str, ...] | None) -> Scenario:
    """The scenario with `search.modes` replaced by --modes (unchanged without the flag)."""
    if modes is None:
        return scenario
    settings = scenario.search or SearchSettings()
    return scenario.model_copy(update={"search": settings.model_copy(update={"modes": list(modes)})})


def _row_line(c: Configuration) -> str:
    ttft = f"{c.ttft_p90_seconds * 1e3:.0f}ms" if c.ttft_p90_seconds is not None else "n/a"
    line = (f"  {c.model[:20]:20s} {c.hardware[:10]:10s} {c.gpus_per_replica:>3d} "
            f"{c.weight_dtype + '/' + c.kv_dtype:10s} {c.offering[:30]:30s} {c.scaling[:9]:9s} {c.replicas:>4d} "
            f"{fmt_money(c.usd_per_month):>10s} {fmt_money(c.ops_usd_per_month):>9s} {c.usd_per_mtok:>8.3f} "
            f"{c.tokens_per_second_per_user:>10.1f} {ttft:>7s}")
    others = variants_summary(c)
    mode = f"\n      mode: {c.mode_label()}" if c.mode_choice is not None else ""
    return line + mode + (f"\n      same cost: {others}" if others else "")


def render_search(result: SearchResult) -> str:
    """Human-readable search summary."""
    lines = [f"{result.candidates_enumerated:,} configurations enumerated, {result.candidates_pruned:,} pruned, "
             f"{result.candidates_simulated:,} simulated in {result.seconds:.1f} s "
             "(the fronts are over the simulated configurations)"]
    if result.scope is not None:
        lines.append(result.scope.sentence())
    if result.candidates_without_host:
        lines.append(f"{result.candidates_without_host:,} owned configurations are left out (counted as pruned): "
                     "their host server has no sourced figures (set host_capex_usd_per_gpu and host_power_kw_per_gpu on a "
                     "self-host option of that accelerator)")
    lines.append("")
    header = f"  {'model':20s} {'hardware':10s} {'TP':>3s} {'w/kv':10s} {'offering':30s} {'scaling':9s} " \
             f"{'reps':>4s} {'$/month':>10s} {'ops':>9s} {'$/M tok':>8s} {'tok/s/user':>10s} {'TTFT90':>7s}"
    sections: tuple[tuple[str, tuple[Configuration, ...], str | None], ...] = (
        ("Cheapest meeting the SLO:", result.best, None),
                ("Pareto front, $/M tokens vs tokens/s per user:", result.frontier_tokens_per_second_per_user,
                 result.frontier_tokens_per_second_per_user_reason),
                ("Pareto front, $/M tokens vs TTFT p90:", result.frontier_ttft, result.frontier_ttft_reason))
    if result.best_by_mode:
        sections = (("Cheapest meeting the SLO per serving mode (families not listed were pruned unsimulated):",
                     result.best_by_mode, None), *sections)
    for title, rows, why in sections:
        lines += [title, header]
        lines += [_row_line(c) for c in rows]
        if not rows:
            lines.append("  (none meets the SLO)")
        elif why:
            lines.append(f"  One point: {why}.")
        lines.append("")
    return "\n".join(lines).rstrip()


def run_search(args: argparse.Namespace) -> int:
    scenario = with_search_modes(load_scenario(args.scenario), args.modes)
    calibration = load_calibration(args.calibration) if args.calibration else None
    executor = make_executor(args.executor, workers=args.workers, address=args.address,
                             init_timeout_seconds=args.ray_init_timeout)
    try:
        with progress.bar(args, total=SEARCH_BAR_STEPS, desc="search") as shown:
            result = search(scenario, top_k=args.top, calibration=calibration, today=args.date, executor=executor,
                            progress=shown.fraction)
    finally:
        executor.close()
    emit(result.contract(), as_json=args.json, text=render_search(result))
    return 0
